"""The call order of the lookups that take a winner's score: (metric, P, N, C, ..., *, score), as
:func:`tablegen.critical_value` takes (metric, P, N, C, ...), with the old order (metric, score, P, N, ...) kept
working, with a DeprecationWarning.  :func:`tablegen.p_value`, :func:`tablegen.significance_test` and the
:class:`~tablegen.lookup.table.Table` methods of the same names share this one decorator.
"""

from __future__ import annotations

import functools
import inspect
import warnings

__all__ = ["score_by_keyword"]


def score_by_keyword(function):
    """Give ``function`` (metric, P, N, C, ..., *, score, ...) in :func:`tablegen.critical_value`'s order, and keep
    its old call form (metric, score, P, N, C, ...) working with a DeprecationWarning.

    The two cannot be confused: the new form takes ``score`` by keyword only, so a call that binds to it is
    new, and one that does not (``score`` second, positionally) is read in the old order, as it always was.
    Parameters before ``metric`` (``self`` of a method) stay first.  A call that fits neither form is refused
    with the new form's error (a missing score names ``score``).

    Examples
    --------
    >>> import warnings
    >>> @score_by_keyword
    ... def answer(metric, P, N, C, *, score):
    ...     return metric, P, N, C, score
    >>> answer("auc", 100, 300, 10, score=0.7)
    ('auc', 100, 300, 10, 0.7)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     old = answer("auc", 0.7, 100, 300, 10)
    >>> old, caught[0].category.__name__
    (('auc', 100, 300, 10, 0.7), 'DeprecationWarning')
    """
    new = inspect.signature(function)
    names = list(new.parameters)
    lead = names[:names.index("metric")]
    moved = (*lead, "metric", "score", "P", "N", *(n for n in names if n not in (*lead, "metric", "score", "P", "N")))
    ordinary, required = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty
    # the old form always took P and N (the new one leaves them out for a K-class question)
    old = new.replace(parameters=[new.parameters[n].replace(kind=ordinary, **({"default": required} if n in ("P", "N")
                                                                               else {})) for n in moved])
    name = function.__qualname__

    @functools.wraps(function)
    def called(*args, **kwargs):
        try:
            new.bind(*args, **kwargs)
        except TypeError as error:
            try:
                bound = old.bind(*args, **kwargs)
            except TypeError:
                raise error from None
            warnings.warn(f"{name}(metric, score, P, N, ...) is deprecated: the order is now {name}(metric, P, N, C, "
                          "..., score=...), as critical_value(metric, P, N, C, ...)", DeprecationWarning, stacklevel=2)
            return function(**bound.arguments)
        return function(*args, **kwargs)

    return called
