"""One entry point for answers: critical values, p-values and significance tests.

``method="auto"`` (the default) never refuses a valid question.  For each answer it takes the first
source that applies:

1. **exact**, where the metric has an exact null at the cell whose estimated cost
   (:func:`tablegen.compute.exact.exact_cost`) is at most :data:`QUICK_EXACT_SECONDS` — quicker than
   opening a table;
2. the **table's exact value**, if the table stores one for the cell, C and alpha (read, not
   recomputed: critical values only; tables store no exact p-values);
3. **exact**, if its estimate is within :data:`LOOKUP_SECONDS` and its memory within half the machine;
4. the **table**'s Monte Carlo values, if it holds the cell (and, for a critical value, C and alpha);
   nothing is interpolated between cells;
5. **exact** anyway where it is estimated cheaper than simulating, or there a **bracket**: rigorous
   bounds from the metric's exact routine where it has no exact value (average precision beyond
   its enumeration budget: rounded lattice programmes, about 1e-4 wide, narrower than the 95%
   interval of a simulation at the default R); a bracket answer's ``ci_low``/``ci_high`` are the
   bounds, its value the conservative (high) end, its method ``"bracket"`` (``"exact"`` when the
   bracket is within :data:`~tablegen.compute.exact.nulls.SNAP_TOLERANCE` for a value, a relative
   :data:`P_PRECISION` for a p-value), and a verdict whose score falls inside it is not settled;
6. **simulate** now: R rankings (:func:`simulation_replicates`, or ``R=``) from the root seed
   :data:`tablegen.compute.cell.DEFAULT_SEED` (or ``seed=``), keyed on the cell, so the same question gets the same
   answer; progress through ``progress=``; R and the seed are reported in the answer.  A significance test that
   simulates both answers without ``R=`` stops at the first of the looks R_0, 2 R_0, ... (up to that R) where its
   verdict is decided (:mod:`tablegen.lookup.sequential`: the R it used in ``replicates``, why in a note, its
   intervals simultaneous 95% over the looks).

``critical_value``, ``p_value`` and ``significance_test`` decide each answer by the same rule, so
a significance test's critical value comes from where :func:`critical_value` would take it, and
its p-value from where :func:`p_value` would.  ``method="exact"``, ``"table"`` and ``"simulate"``
force one source.  ``precision_at_k`` is ``tp_at_k`` divided by min(k, P + N): tables and the
Monte Carlo engine answer it through the count.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import logging
import os
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from tablegen.compute.limits import check_memory, check_time, memory_limit_bytes
from tablegen.errors import Argument, ResourceLimitError, StoreError, StoreIntegrityError
from tablegen.lookup._call_order import score_by_keyword
from tablegen.lookup._iv import LookupArgs, validate_lookup_args
from tablegen.lookup.answer_sources import (  # the default R and the nulls: importable from here, as before
    MAX_SIMULATION_REPLICATES,  # noqa: F401
    MIN_SIMULATION_REPLICATES,  # noqa: F401
    P_PRECISION,  # noqa: F401
    SIMULATION_SECONDS,  # noqa: F401
    count_question,
    exact_critical,
    exact_p,
    lookup_null,  # noqa: F401
    resolved_device,
    simulate,
    simulate_sequentially,
    simulation_replicates,  # noqa: F401
    simulation_seconds,
)
from tablegen.lookup.answers import Answer, SignificanceResult, divided_answer, verdict

if TYPE_CHECKING:
    from tablegen.lookup.table import Table

logger = logging.getLogger(__name__)


#: An exact answer estimated below this many seconds is computed, even where a table stores it.
QUICK_EXACT_SECONDS = 0.5
#: method="auto" computes exactly when the estimate is below this (after the table's exact values).
LOOKUP_SECONDS = 10.0

_bundled = None
#: The bundled table's grid, the same values of P and of N (Forman & Cohen's appendix grid): a question off it is not
#: in that table, known without opening it (importing zarr and opening the store cost ~0.1-0.3 s of CPU, a tenth of
#: a report on 10^4 items).  ``tests/lookup/test_bundled_grid.py`` holds it equal to the bundled store's coordinates.
BUNDLED_GRID = frozenset((20, 30, 40, 50, 60, 70, 80, 90, 100, 150, 200, 300, 400, 500, 600, 700, 800, 900, 1000))
#: What the lookup under way found damaged in a store the caller named (:func:`_noting_damage` sets it per call).
_DAMAGE_NOTES: contextvars.ContextVar[tuple] = contextvars.ContextVar("tablegen_damage_notes", default=())


def _table(table):
    """The table to read: a Table, a store path, or None for the bundled table (opened once); a path that is
    not a usable store is refused naming ``table``."""
    from tablegen.lookup.table import Table, open_table

    global _bundled
    if isinstance(table, Table):
        return table
    if table is not None:
        try:
            opened = open_table(table)
        except StoreError as error:
            raise type(error).naming(Argument("table", os.fspath(table)), ": ", str(error)) from None
        if not isinstance(opened, Table):  # a multi-class table (tablegen.lookup.multiclass_table)
            raise StoreError.naming(Argument("table", os.fspath(table)), ": a multi-class table answers K-class "
                                    "questions (K and n_per_class), not P and N")
        return opened
    if _bundled is None:
        _bundled = open_table()
    return _bundled


# -- where an answer comes from -------------------------------------------------------------------
def _exact_fits(a: LookupArgs) -> tuple[bool, float]:
    """(whether exact is available and fits in memory, its estimated seconds)."""
    seconds, memory = a.spec.exact_cost(a.P, a.N)
    return memory <= memory_limit_bytes(), seconds


def _source(a: LookupArgs, table, what: str):
    """Where a "critical value" or "p-value" comes from (module docstring): "exact", "simulate", or a
    table :class:`Answer`.  Tables store exact critical values, never exact p-values."""
    if isinstance(table, (str, os.PathLike)):
        _table(table)  # a store the caller named is checked, even where the answer comes from elsewhere
    if a.method != "auto":
        return _forced(a, table, what)
    fits, seconds = _exact_fits(a)
    exact_here = a.spec.exact_at(a.P, a.N)  # else the route is a bracket: only where cheaper
    if exact_here and fits and seconds <= QUICK_EXACT_SECONDS:
        return "exact"
    stored = _from_table(a, table, what) if what == "critical value" else None  # opening a table costs ~1 s
    if stored is not None and np.all(stored.method == "exact"):
        return stored
    if exact_here and fits and seconds <= LOOKUP_SECONDS:
        return "exact"
    stored = stored if what == "critical value" else _from_table(a, table, what)
    if stored is not None:
        return stored
    # exact where it is estimated cheaper than simulating, but never beyond the time limit: where both routes are
    # beyond it, the simulation's own guards refuse the question with its estimate instead of exact running on
    from tablegen.compute.limits import time_limit_seconds

    return "exact" if fits and seconds <= min(simulation_seconds(a), time_limit_seconds()) else "simulate"


@contextlib.contextmanager
def naming_limit_errors(*before: str | Argument, way_out: tuple):
    """Let a :class:`ResourceLimitError` of :func:`~tablegen.compute.limits.check_memory` or ``check_time``
    (called with an empty way out) name the arguments it speaks of: the message becomes ``before``, the
    limit's own text, then ``way_out`` (text and :class:`~tablegen.errors.Argument` parts).

    Examples
    --------
    >>> from tablegen.compute.limits import check_time
    >>> try:
    ...     with naming_limit_errors(way_out=("use ", Argument("method", "auto"))):
    ...         check_time(1e300, "a long wait", "")
    ... except ResourceLimitError as error:
    ...     print(error.option_message().split("; ")[-1])
    use --method auto
    """
    try:
        yield
    except ResourceLimitError as error:
        raise ResourceLimitError.naming(*before, str(error), *way_out) from None


def _forced(a: LookupArgs, table, what: str):
    if a.method == "exact":
        seconds, memory = a.spec.exact_cost(a.P, a.N)
        what = f"exact {a.metric} at P = {a.P}, N = {a.N}"
        exact, simulate, auto = (Argument("method", value) for value in ("exact", "simulate", "auto"))
        with naming_limit_errors(exact, ": ", way_out=("use ", simulate, ", or ", auto)):
            check_memory(memory, what, "")
        with naming_limit_errors(exact, ": ", way_out=("use ", auto, " (the table or a simulation)")):
            check_time(seconds, what, "")
        return "exact"
    if a.method == "table":
        answer = _from_table(a, table, what, required=True)
        return answer
    return "simulate"


def _from_table(a: LookupArgs, table, what: str, required: bool = False):
    """The table's answer, or None where the table does not hold the question (an error if ``required``)."""
    metric, P, N, C, alpha, score, divisor = count_question(a)
    if table is None and not required and not (P in BUNDLED_GRID and N in BUNDLED_GRID):
        return None  # off the bundled table's grid: not in it
    try:
        if what == "critical value":
            answer = _table(table).answer_checked(metric.name, P, N, C, alpha=alpha, required=required)
            return None if answer is None else divided_answer(answer, divisor)
        return _table(table).answer_checked(metric.name, P, N, C, score=score, required=required)
    except StoreIntegrityError as error:
        if required:
            raise
        # the answer comes from another source and stays valid, but the caller hears that the store is damaged
        _DAMAGE_NOTES.set((*_DAMAGE_NOTES.get(), f"the table is damaged where this {what} lies, so it was "
                           f"answered from another source (see its method): {error}"))
        return None


def _caller_stacklevel() -> int:
    """The ``stacklevel`` of a warning issued by the function calling this one that points at the first frame
    outside tablegen (the user's call, whatever wrappers lie between)."""
    import sys

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def _noting_damage(function):
    """Run a public lookup with its own damage notes: each becomes a warning (at the caller) and a note on the
    answer (:attr:`Answer.notes`, :attr:`SignificanceResult.notes`)."""
    @functools.wraps(function)
    def called(*args, **kwargs):
        token = _DAMAGE_NOTES.set(())
        try:
            result = function(*args, **kwargs)
            notes = tuple(dict.fromkeys(_DAMAGE_NOTES.get()))
        finally:
            _DAMAGE_NOTES.reset(token)
        for note in notes:
            warnings.warn(note, UserWarning, stacklevel=_caller_stacklevel())
        return dataclasses.replace(result, notes=(*result.notes, *notes)) if notes else result
    return called


def _resolve(source, exact, a: LookupArgs) -> Answer | None:
    """The answer for a source that needs no simulation (None for "simulate")."""
    if isinstance(source, Answer):
        return source
    return exact(a) if source == "exact" else None


# -- public ------------------------------------------------------------------------------------------
@_noting_damage
def critical_value(metric: str, P: int | None = None, N: int | None = None, C: int | None = None,
                   alpha: float = 0.01, method: str = "auto", R: int | None = None, seed: int | None = None,
                   table: Table | str | os.PathLike | None = None, progress: Callable[[int, int], None] | None = None,
                   *, K: int | None = None, n_per_class: int | None = None) -> Answer:
    """Critical value m* of ``metric`` for the best of C random classifiers at level alpha.

    A winner's score m is significant at level alpha iff m > m*.

    Parameters
    ----------
    metric : str
        Metric name (see :mod:`tablegen.compute.metrics`), e.g. ``"auc"``, ``"best_f1"``, ``"precision_at_10"``.
    P, N : int
        Positives and negatives in the test set (a binary question).
    C : int
        Number of classifiers compared: every model tried on this test set, discarded ones too
        (the winner is the best of C).  Required.
    alpha : float
        Significance level in (0, 1) (default 0.01, the level of Forman & Cohen's tables and of the
        bundled table, so the default question is answered from them; the comparisons of real
        classifiers in :mod:`tablegen.compare` default to 0.05).
    method : {"auto", "exact", "table", "simulate"}
        Where the answer comes from (module docstring); ``"auto"`` never refuses a valid question.
    R : int, optional
        Rankings to simulate, if the answer is simulated (default :func:`simulation_replicates`).
    seed : int, optional
        Root seed of a simulated answer (default :data:`tablegen.compute.cell.DEFAULT_SEED`; the stream is
        keyed on the cell).
    table : Table, MulticlassTable or str, optional
        Table for ``"auto"``/``"table"`` (default: the bundled one); for a K-class question a
        :class:`~tablegen.lookup.multiclass_table.MulticlassTable` or the path of its store.
    progress : callable(done, total), optional
        Called as a simulation advances.
    K, n_per_class : int, optional
        A K-class question instead of (P, N): K classes of ``n_per_class`` items each, the random classifiers
        sharing the balanced predicted counts; ``metric`` one of accuracy, kappa, balanced_accuracy, macro_f1
        (the first, third and fourth coincide on this design), answered exactly or from a multi-class table
        (:mod:`tablegen.lookup.multiclass_lookup`).

    Returns
    -------
    Answer
        ``.value``, its 95% interval, ``.method`` (the source), ``.replicates`` and ``.seed``.

    Examples
    --------
    >>> critical_value("accuracy", K=5, n_per_class=40, C=100, alpha=0.05).value
    0.3
    >>> answer = critical_value("auc", 100, 300, C=1000, alpha=0.01)
    >>> round(float(answer), 4), answer.method
    (0.6411, 'exact')
    >>> round(float(critical_value("auc", 10_000, 10_000, C=10)), 6)      # exact at any size
    0.51261
    """
    if K is not None or n_per_class is not None:
        from tablegen.lookup.multiclass_lookup import multiclass_critical_value

        return multiclass_critical_value(metric, K, n_per_class, C=C, alpha=alpha, method=method, R=R, seed=seed,
                                         table=table, P=P, N=N)
    a = validate_lookup_args(metric, P, N, C=C, alpha=alpha, method=method, R=R, seed=seed, table=table,
                             needs_alpha=True)
    source = _source(a, a.table, "critical value")
    answer = _resolve(source, exact_critical, a)
    return answer if answer is not None else simulate(a, True, False, progress)[0]


@score_by_keyword
@_noting_damage
def p_value(metric: str, P: int | None = None, N: int | None = None, C: int | None = None, *, score: float,
            method: str = "auto", R: int | None = None, seed: int | None = None,
            table: Table | str | os.PathLike | None = None, progress: Callable[[int, int], None] | None = None,
            K: int | None = None, n_per_class: int | None = None) -> Answer:
    """p-value 1 - F(score-)**C of a winner's score against the best of C random classifiers.

    Parameters are as for :func:`critical_value`, in the same order (metric, P, N, C); ``score``, given by
    keyword, must be a value the metric can take at (P, N) (a count for ``tp_at_k``; scores within 1e-9 of a
    value count as that value).  The old order ``p_value(metric, score, P, N, ...)`` still works, with a
    DeprecationWarning.  A p-value
    lies in [0, 1]; below what the source resolves it is a bound (``bound="<"``), never 0: with a
    simulation in which no ranking reaches the score, the upper end of the 95% Clopper–Pearson
    interval; from a table, the bound its stored tail quantiles give
    (:meth:`tablegen.lookup.table.Table.p_value`).  With ``K`` and ``n_per_class`` instead of (P, N), a K-class
    question on a balanced design, answered exactly (:func:`critical_value`).

    Examples
    --------
    >>> round(float(p_value("auc", 100, 300, C=1000, score=0.65)), 4)
    0.0028
    >>> round(float(p_value("kappa", K=3, n_per_class=5, C=1, score=0.4)), 6)
    0.036242
    """
    if K is not None or n_per_class is not None:
        from tablegen.lookup.multiclass_lookup import multiclass_p_value

        return multiclass_p_value(metric, K, n_per_class, C=C, score=score, method=method, R=R, seed=seed,
                                  table=table, P=P, N=N)
    a = validate_lookup_args(metric, P, N, C=C, score=score, needs_score=True, method=method, R=R, seed=seed,
                             table=table)
    answer = _resolve(_source(a, a.table, "p-value"), exact_p, a)
    return answer if answer is not None else simulate(a, False, True, progress)[1]


@score_by_keyword
@_noting_damage
def significance_test(metric: str, P: int | None = None, N: int | None = None, C: int | None = None,
                      alpha: float = 0.01, *, score: float, method: str = "auto", R: int | None = None,
                      seed: int | None = None, table: Table | str | os.PathLike | None = None,
                      progress: Callable[[int, int], None] | None = None, K: int | None = None,
                      n_per_class: int | None = None, device: str = "cpu") -> SignificanceResult:
    """Is a winner's ``score`` significant against the best of C classifiers that learned nothing?

    The verdict is score > critical value; the result also carries the p-value, both
    answers' intervals, their sources and R.  The critical value comes from where
    :func:`critical_value` would take it and the p-value from where :func:`p_value` would; one
    exact null, or one pass of R simulated rankings, serves both where they share the source.  Where both are
    simulated and ``R`` is not given, the pass stops as soon as the verdict is decided
    (:mod:`tablegen.lookup.sequential`: ``replicates`` then says how many rankings it took, a note why).

    Parameters are as for :func:`critical_value` and :func:`p_value`, in their order (metric, P, N, C, alpha;
    ``score`` by keyword; the old order ``significance_test(metric, score, P, N, ...)`` still works, with a
    DeprecationWarning) (``alpha``: default 0.01, the level of
    Forman & Cohen's tables and of the bundled table).  With ``K`` and ``n_per_class`` instead of (P, N), a K-class
    question on a balanced design (as for :func:`critical_value`; giving P or N too, or half a design, is refused):
    the critical value and the p-value come from one exact law
    (:func:`tablegen.lookup.multiclass_lookup.multiclass_significance_test`); a multi-class ``table`` is checked,
    not read, and ``method="table"`` is refused (tables hold no p-values).  ``device`` ("cpu", "cuda" or "auto"):
    where a simulation scores its rankings (:func:`tablegen.compute.mc.simulate_tails_and_counts`; the same answer
    bit for bit); binary questions only.

    Returns
    -------
    SignificanceResult
        ``.significant``, ``.settled``, ``.critical_value``, ``.p_value``, ``.method``,
        ``.replicates``, ``.sentence()``, ``.to_dict()`` (``.K`` and ``.n_per_class`` set, P and N None, for a
        K-class question).

    Examples
    --------
    >>> result = significance_test("auc", 100, 300, C=1000, score=0.70)
    >>> bool(result.significant), result.method
    (True, 'exact')
    >>> result = significance_test("accuracy", K=5, n_per_class=40, C=100, alpha=0.05, score=0.32)
    >>> result.significant, result.critical_value.value, result.p_value.value < 0.05
    (True, 0.3, True)
    """
    device = resolved_device(device)  # checked on both paths (the K-class answer is exact: no device work)
    if K is not None or n_per_class is not None:
        from tablegen.lookup.multiclass_lookup import multiclass_significance_test

        return multiclass_significance_test(metric, K, n_per_class, C=C, alpha=alpha, score=score, method=method,
                                            R=R, seed=seed, table=table, P=P, N=N)
    a = validate_lookup_args(metric, P, N, C=C, alpha=alpha, score=score, needs_score=True, method=method, R=R,
                             seed=seed, table=table, needs_alpha=True)
    cv = _resolve(_source(a, a.table, "critical value"), exact_critical, a)
    pv = _resolve(_source(a, a.table, "p-value"), exact_p, a)
    notes = ()
    if cv is None and pv is None and a.R is None:  # both simulated at the default R: sequentially
        cv, pv, note = simulate_sequentially(a, progress, device)
        notes = (note,) if note else ()
    elif cv is None or pv is None:
        simulated_cv, simulated_pv = simulate(a, cv is None, pv is None, progress, device)
        cv, pv = cv or simulated_cv, pv or simulated_pv
    return verdict(a.metric, a.score, a.P, a.N, a.C, a.alpha, cv, pv, notes)
