"""Argument checks of the comparisons across data sets and from cross-validation folds (STYLE 7).

One check per argument kind, shared by :func:`tablegen.compare.across_datasets`, :func:`adjust_p_values`,
:func:`bayesian_pair`, :func:`bayesian_pairs`, :func:`cross_validated` and :func:`comparison_table`; every
check runs before any work and raises :class:`~tablegen.errors.TablegenInputError` naming the argument.

The region of practical equivalence (ROPE) is a half-width r >= 0 in the scores' own units: any finite
r >= 0 for scores in arbitrary units (losses, errors in seconds), but r < 1 where every score lies in [0, 1]
(accuracies, AUCs, F1): a difference of two such scores never exceeds 1 in size, so a ROPE of 1 or more
would make "equivalent" certain whatever the scores.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from tablegen.errors import Argument, TablegenInputError

#: Bytes per posterior draw and data set of the Bayesian tests: the Dirichlet weights, their sorted copy and
#: their cumulative sums (float64 each).
BYTES_PER_WEIGHT = 24


def _bad(name: str, text: str) -> TablegenInputError:
    """The error "``name`` ``text``", the argument named apart (the command line says it as its option)."""
    return TablegenInputError.naming(Argument(name), text)


def check_correction(correction, corrections) -> str:
    """``correction`` if it names one of ``corrections`` (the adjustments), else an input error naming the
    argument.

    Examples
    --------
    >>> check_correction("bh", ("holm", "bh"))
    'bh'
    """
    if not isinstance(correction, str) or correction not in corrections:
        raise _bad("correction", f" must be one of {', '.join(map(repr, corrections))}, got {correction!r}")
    return correction


def check_flag(name: str, value) -> bool:
    """``value`` as a bool if it is one (``True``/``False``, numpy's included), else an input error naming
    ``name``: a string such as ``"no"`` is truthy, and a flag read as its truth would silently turn a
    comparison round.

    Examples
    --------
    >>> check_flag("higher_is_better", False)
    False
    """
    if not isinstance(value, (bool, np.bool_)):
        raise _bad(name, f" must be True or False, got {value!r}")
    return bool(value)


def check_choice(name: str, value, choices) -> str:
    """``value`` if it is one of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise _bad(name, f" must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_p_values(p_values) -> np.ndarray:
    """``p_values`` as a flat float array, if every element is a number in [0, 1].

    Examples
    --------
    >>> check_p_values([0.5, 1]).tolist()
    [0.5, 1.0]
    """
    try:
        p = np.asarray(p_values, dtype=float).ravel()
    except (TypeError, ValueError):
        raise TablegenInputError(f"p_values must be a sequence of numbers in [0, 1], got {p_values!r}") from None
    if p.size and not np.all((p >= 0) & (p <= 1)):
        raise TablegenInputError("p_values must lie in [0, 1] (no NaN)")
    return p


def check_scores_vector(name: str, value) -> np.ndarray:
    """``value`` as a 1-D float array of finite numbers (one score per data set or fold)."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise TablegenInputError(f"{name} must be a 1-D sequence of numbers (one score per data set or fold), "
                                 f"got {value!r}") from None
    if array.ndim != 1:
        raise TablegenInputError(f"{name} must be a 1-D sequence of scores, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise TablegenInputError(f"{name} must hold finite numbers (no NaN or inf)")
    return array


def check_pair_scores(x, y, minimum: int) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``y``: two 1-D finite score sequences of one length >= ``minimum``."""
    a, b = check_scores_vector("x", x), check_scores_vector("y", y)
    if a.shape != b.shape or a.size < minimum:
        raise TablegenInputError(f"x and y must be 1-D sequences of the same length >= {minimum}, got shapes "
                                 f"{a.shape} and {b.shape}")
    return a, b


def check_names(value, name: str = "names") -> tuple[str, str]:
    """A pair of two names (strings) as a tuple.

    Examples
    --------
    >>> check_names(["svm", "knn"])
    ('svm', 'knn')
    """
    if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(isinstance(v, str) for v in value):
        raise TablegenInputError(f"{name} must be a pair of two names (strings), e.g. ('A', 'B'), got {value!r}")
    return str(value[0]), str(value[1])


def check_rope(rope, *scores: np.ndarray) -> float:
    """A ROPE half-width: a finite number >= 0, and < 1 where every score lies in [0, 1] (module docstring).

    Examples
    --------
    >>> check_rope(0.01, np.array([0.8, 0.9]))
    0.01
    """
    if isinstance(rope, (bool, np.bool_)) or not isinstance(rope, numbers.Real) or not math.isfinite(rope) \
            or rope < 0:
        raise _bad("rope", f" must be a finite number >= 0 (a half-width in the scores' units), "
                                 f"got {rope!r}")
    if rope >= 1 and scores and all(s.size and s.min() >= 0 and s.max() <= 1 for s in scores):
        raise _bad("rope", f" must be < 1 for scores in [0, 1] (a difference of two such scores is at "
                                 f"most 1 in size, so every difference would be 'equivalent'), got {rope!r}")
    return float(rope)


def check_probability(value) -> float:
    """The posterior probability a decision needs: a number in [0.5, 1) (at most one of the three regions can
    then exceed it)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not 0.5 <= value < 1:
        raise _bad("probability", f" must be in [0.5, 1) (the posterior probability a "
                                 f"decision needs), got {value!r}")
    return float(value)


def check_draws(samples, data_sets: int) -> int:
    """Posterior draws: an integer >= 100 whose Dirichlet weights (``samples`` x (``data_sets`` + 1)) fit in
    memory (else :class:`~tablegen.errors.ResourceLimitError`, exit 5, with the estimate)."""
    from tablegen.compute.limits import check_memory
    from tablegen.errors import Argument

    if isinstance(samples, (bool, np.bool_)) or not isinstance(samples, numbers.Integral) or samples < 100:
        raise _bad("samples", f" must be an integer >= 100, got {samples!r}")
    samples = int(samples)
    check_memory(float(samples) * (data_sets + 1) * BYTES_PER_WEIGHT,
                 f"{samples:,} posterior draws over {data_sets:,} data sets", ("use fewer ", Argument("samples")))
    return samples


def check_result(result, cls: type, name: str, *, optional: bool = False):
    """``result`` if it is an instance of ``cls`` (or None where ``optional``)."""
    if optional and result is None:
        return None
    if not isinstance(result, cls):
        what = f"a {cls.__name__}" + (" or None" if optional else "")
        raise TablegenInputError(f"{name} must be {what}, got {type(result).__name__} {result!r:.60}")
    return result
