"""Metric registry: everything about each metric lives in its one entry here.

An entry (:class:`Metric`) holds the metric's definition, range, slow numpy reference scorer, its
scorer of real classifier scores (labels and scores, ties kept together), the
kernel output column that scores it, its exact routine and cost (dotted paths into
:mod:`tablegen.compute.exact`, imported only when asked, so ``import tablegen.compute.metrics`` stays
cheap and a closed-form lookup loads no numba), and, for AUC, the whole-grid routine that serves many
cells at once.  Nothing outside this module branches on a metric's name (``tests/contracts/test_registry.py``):
callers ask the entry, e.g. ``get_metric(name).exact_null(P, N)`` or ``.exact_cost(P, N)``.  The
registry sits above the routines it names (``tests/contracts/test_layers.py``): they never import it.

Definitions: ``docs/explanation/index.md`` (conventions) and each entry below.  A ranking is a 0/1
label vector read from the top; prefix k holds TP_k positives and FP_k = k - TP_k negatives,
k = 0 .. P+N.  All metrics are "higher is better".  The scorers the entries hold live in
:mod:`tablegen.compute.metric_scorers`
(the reference scorers are plain numpy: the independent check of the numba kernels, not the
production path).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

import tablegen.compute.metric_scorers as _scorers
from tablegen.compute.metric_routines import CLOSED_FORM_SECONDS, MetricRoutines  # noqa: F401  (importable here)

_AT_K = re.compile(r"^(tp|precision)_at_([1-9][0-9]*)$")


def _tp_at_range(k, P, N):
    return float(max(0, min(k, P + N) - N)), float(min(k, P))


def _min_average_precision(P, N):
    """All positives at the bottom: mean over i = 1..P of i / (N + i) = 1 - (N / P) sum_i 1 / (N + i).

    Summed directly up to P = 10^6 (in blocks); beyond, the harmonic gap H(N + P) - H(N) comes from
    the digamma difference, exact to double precision there, so any P answers in constant memory.
    """
    if P <= 10**6:
        i = np.arange(1, P + 1)
        return float(np.mean(i / (N + i)))
    return 1.0 - N / P * _harmonic_gap(N, P)


def _harmonic_gap(N: int, P: int) -> float:
    """sum_{i=1..P} 1/(N + i) = psi(N + P + 1) - psi(N + 1) (scipy's digamma, taken as a difference of
    logs plus its asymptotic corrections where both arguments are large)."""
    from scipy.special import digamma

    a, b = float(N + 1), float(N + P + 1)
    if a < 1e6:
        return float(digamma(b) - digamma(a))
    correction = lambda x: -1 / (2 * x) - 1 / (12 * x * x)  # noqa: E731  psi(x) = log x + this + O(x^-4)
    return math.log1p((b - a) / a) + correction(b) - correction(a)


_EXACT = "tablegen.compute.exact"


@dataclass(frozen=True)
class Metric(MetricRoutines):
    """One metric: its name, definition and range, reference scorer, kernel column and exact routines.

    Attributes
    ----------
    name : str
        Registry name, e.g. ``"auc"`` or ``"tp_at_10"``.
    definition : str
        The definition, in words.
    reference : callable
        ``reference(labels, P, N)``: the definition on each row of a (R, P+N) ranking matrix.
    from_scores : callable
        ``from_scores(groups)``: the value on one classifier's labels and real scores, grouped by
        :func:`tablegen.compute.metric_scorers.threshold_groups` (tied scores form one threshold
        group); equals ``reference`` without ties.
    ties_conservative : bool
        Whether tied scores tested against the no-ties null are conservative whatever the ties: true
        by construction for a maximum over cut-offs (breaking ties adds cut-offs) and for TP_k (a tie
        straddling k makes it undefined), in every case measured for average precision; not for AUC,
        whose half-credit values bring the level to about alpha when ties are few (so AUC has a
        :attr:`tied_null_routine`, and the no-ties null serves it only as a fallback).
    k : int or None
        The cut-off of a ``tp_at_k`` or ``precision_at_k`` metric, else None.
    count_of : str or None
        For ``precision_at_k``: the count metric ``tp_at_k`` it divides by :meth:`count_divisor`
        (the same event, so the Monte Carlo engine and the tables store only the count).
    integer_valued : bool
        Whether every value is an integer (a count): a fractional score cannot occur.
    kernel_column : str or None
        The column of the Monte Carlo kernels' output that scores it
        (:data:`tablegen.compute.kernels.ranking.BASE_COLUMNS`); None for the cut-off metrics, which
        the kernels count at each requested k after those columns.
    exact_routine : str or None
        ``"module:function"`` of its exact null, ``function(P, N)`` (``function(P, N, k)`` for a
        cut-off metric); None: Monte Carlo only.
    cost_routine : str or None
        ``"module:function(P, N) -> (seconds, bytes)"`` of one exact answer; None for a closed form
        (:data:`CLOSED_FORM_SECONDS`).
    cells_routine, cells_cost_routine : str or None
        A whole-grid routine, ``function(cells) -> {cell: null}``, that serves many cells in one
        pass (AUC's recursion sweep), and its cost ``function(cells, critical_pairs) -> seconds``.
    tabulated_routine : str or None
        ``function(P, N)`` giving the whole null with every value listed, where :attr:`exact_routine`
        may answer without one (AUC's tilted inversion).
    symmetric_null : bool
        Whether X and low + high - X have the same null law (AUC: a ranking read bottom-up scores
        1 - AUC), so a winner far below the middle is a sign of inverted scores or labels.
    kernel_variant : str or None
        Extra kernel work the metric's column needs beyond the shared pass, compiled in only when a
        requested metric names it (``"mcc"``: best MCC's weights and products); None: none.
    lane_cost_factor, minority_cost_factor : float
        That work's cost, as a factor on the lane kernel's and the minority-class kernel's sampling
        time (``benchmarks/bench_mcc.py``); 1 without extra work.
    table_bytes_per_rank : float
        Bytes per rank of the extra table that work reads (best MCC's weights: 8); 0 without.
    alone_variant : str or None
        The lane kernel's variant that steps this metric's state alone, for a simulation that asks it alone (a
        simulated verdict): ``"ap"`` (:func:`~tablegen.compute.kernels.lanes.simulate_rows`'s ``ap_only``: its
        column the same, bit for bit); None: the shared pass.
    tied_null_routine, tied_cost_routine : str or None
        ``function(group_sizes, P)``: the exact null given the tie groups of a classifier's scores
        (group sizes in ascending score order; the labels permuted, the groups kept), used to test a
        tied winner from scores, and its cost ``(seconds, bytes)``; None where the metric is tested
        against the no-ties null (see :attr:`ties_conservative`).
    paired_test : str
        How ``tablegen.compare.paired_test`` compares two models' values of it on one test set by default:
        ``"delong"`` (AUC: DeLong's asymptotic test) or ``"permutation"`` (swapping the models item by item).
    exact_domain_routine : str or None
        ``function(P, N) -> bool``: the cells where :attr:`exact_routine` is exact (AP: the cells
        whose arrangements fit the enumeration budget; elsewhere it gives a bracketed null, which
        only lookups use); None: every cell.  A run stores exact values only there (:meth:`exact_at`).
    power_routine : str or None
        ``function(P, N, tail, k)`` giving the event "metric > m*" (m* the exact critical value for the
        per-competitor tail) with its exact probability under the Lehmann alternative
        (:mod:`tablegen.compute.exact.power`); None: no exact power model.
    power_domain_routine : str or None
        ``function(P, N) -> bool``: the cells where :attr:`power_routine` is exact; None: every cell.
    power_batch_routine : str or None
        ``function(k, cells, critical_values, memory) -> probabilities or None``: the events of
        :attr:`power_routine` at many cells for one k in one pass (None: one cell at a time; the routine's None:
        over ``memory`` bytes).
    power_cost_routine : str or None
        ``function(P, N) -> (seconds, bytes)``: the estimated cost of one exact power probability (one k); None:
        the boundary walk's (:func:`tablegen.compute.exact.power.boundary_cost`).
    search_cost_routine : str or None
        ``function(P, N) -> seconds``: the estimated cost of a search's questions of the exact null (a max-T
        critical value with competitors not given: ~30 critical values close together, and the models' tails)
        where the null answers them from work done once for the search (average precision's bracket programmes, the
        lattice programmes' bounds, AUC's kept laws); None:
        :data:`~tablegen.compute.metric_routines.SEARCH_QUERIES` answers of :attr:`cost_routine`'s.
    swap_constant_routine : str or None
        ``function(labels) -> array``: c_i, the most the metric can change when item i's score moves (labels
        fixed), the bounded differences of McDiarmid's bound on the swap-permutation p-value
        (:mod:`tablegen.compute.swap_bounds`, where each is proved); None: no constant proved.
    """

    name: str
    definition: str
    reference: Callable[[np.ndarray, int, int], np.ndarray]
    from_scores: Callable[[_scorers.ThresholdGroups], float]
    value_range: Callable[[int, int], tuple[float, float]]
    k: int | None = None
    count_of: str | None = None
    integer_valued: bool = False
    kernel_column: str | None = None
    exact_routine: str | None = None
    cost_routine: str | None = None
    cells_routine: str | None = None
    cells_cost_routine: str | None = None
    tabulated_routine: str | None = None
    ties_conservative: bool = True
    symmetric_null: bool = False
    tied_null_routine: str | None = None
    tied_cost_routine: str | None = None
    kernel_variant: str | None = None
    lane_cost_factor: float = 1.0
    minority_cost_factor: float = 1.0
    table_bytes_per_rank: float = 0.0
    alone_variant: str | None = None
    exact_domain_routine: str | None = None
    paired_test: str = "permutation"
    power_routine: str | None = None
    power_domain_routine: str | None = None
    power_cost_routine: str | None = None
    power_batch_routine: str | None = None
    swap_constant_routine: str | None = None
    search_cost_routine: str | None = None

    def count_divisor(self, P: int, N: int) -> int:
        """min(k, P + N) for ``precision_at_k`` (value = count / divisor), 1 for every other metric."""
        return min(self.k, P + N) if self.count_of is not None else 1

    def counted_entry(self) -> Metric:
        """The entry the engine simulates and tables store for this metric: ``tp_at_k`` for
        ``precision_at_k`` (a count over :meth:`count_divisor`), the entry itself for every other metric."""
        return self if self.count_of is None else get_metric(self.count_of)

    def reference_scores(self, labels: np.ndarray, P: int, N: int) -> np.ndarray:
        """Score each row of a (R, P+N) 0/1 label matrix (top first) by the definition."""
        return self.reference(np.atleast_2d(labels), P, N)

    def score_groups(self, groups: _scorers.ThresholdGroups) -> float:
        """The value on one classifier's scores, grouped by ``threshold_groups(labels, scores)``.

        Raises
        ------
        TablegenInputError
            For ``tp_at_k`` / ``precision_at_k`` when tied scores straddle the cut-off k.

        Examples
        --------
        >>> from tablegen.compute.metric_scorers import threshold_groups
        >>> get_metric("auc").score_groups(threshold_groups([1, 0, 1, 0], [0.9, 0.5, 0.5, 0.1]))
        0.875
        """
        return self.from_scores(groups)

    def range(self, P: int, N: int) -> tuple[float, float]:
        """Smallest and largest value the metric can take on a ranking of P positives, N negatives."""
        return self.value_range(P, N)


_BASE = {
    "auc": Metric(
        "auc",
        "U/(P*N), U = number of (positive, negative) pairs with the positive ranked above",
        _scorers.reference_auc,
        _scorers.auc_from_groups,
        lambda P, N: (0.0, 1.0),
        kernel_column="auc",
        exact_routine=f"{_EXACT}.auc:auc_null",
        cost_routine=f"{_EXACT}.auc:auc_exact_cost",
        search_cost_routine=f"{_EXACT}.auc:auc_search_seconds",
        cells_routine=f"{_EXACT}.auc:auc_nulls_for_cells",
        cells_cost_routine=f"{_EXACT}.auc:auc_sweep_seconds",
        tabulated_routine=f"{_EXACT}.auc:auc_tabulated_null",
        ties_conservative=False,
        symmetric_null=True,
        tied_null_routine=f"{_EXACT}.auc_ties:tied_auc_null",
        tied_cost_routine=f"{_EXACT}.auc_ties:tied_auc_cost",
        paired_test="delong",
        power_routine=f"{_EXACT}.power:auc_event",
        power_domain_routine=f"{_EXACT}.power:auc_exact_at",
        power_batch_routine=f"{_EXACT}.power:auc_events_tails",
        power_cost_routine=f"{_EXACT}.power_cost:auc_power_seconds",
        swap_constant_routine="tablegen.compute.swap_bounds:auc_constants",
    ),
    "best_accuracy": Metric(
        "best_accuracy",
        "max over the P+N+1 thresholds of (TP_k + N - FP_k)/(P+N)",
        _scorers.reference_best_accuracy,
        _scorers.best_accuracy_from_groups,
        lambda P, N: (max(P, N) / (P + N), 1.0),
        kernel_column="best_accuracy",
        exact_routine=f"{_EXACT}.closed_form:best_accuracy_null",
        power_routine=f"{_EXACT}.power:best_accuracy_event",
        swap_constant_routine="tablegen.compute.swap_bounds:best_accuracy_constants",
    ),
    "best_f1": Metric(
        "best_f1",
        "max over thresholds of 2*TP_k/(P+k) (0 at k = 0)",
        _scorers.reference_best_f1,
        _scorers.best_f1_from_groups,
        lambda P, N: (2 * P / (2 * P + N), 1.0),
        kernel_column="best_f1",
        exact_routine=f"{_EXACT}.lattice:best_f1_null",
        cost_routine=f"{_EXACT}.lattice:best_f1_cost",
        search_cost_routine=f"{_EXACT}.lattice:best_f1_search_seconds",
        power_routine=f"{_EXACT}.power:best_f1_event",
        swap_constant_routine="tablegen.compute.swap_bounds:best_f1_constants",
    ),
    "best_balanced_accuracy": Metric(
        "best_balanced_accuracy",
        "max over thresholds of (TP_k/P + 1 - FP_k/N)/2",
        _scorers.reference_best_balanced_accuracy,
        _scorers.best_balanced_accuracy_from_groups,
        lambda P, N: (0.5, 1.0),
        kernel_column="best_balanced_accuracy",
        exact_routine=f"{_EXACT}.lattice:best_balanced_accuracy_null",
        cost_routine=f"{_EXACT}.lattice:best_balanced_accuracy_cost",
        search_cost_routine=f"{_EXACT}.lattice:best_balanced_accuracy_search_seconds",
        power_routine=f"{_EXACT}.power:best_balanced_accuracy_event",
        swap_constant_routine="tablegen.compute.swap_bounds:best_balanced_accuracy_constants",
    ),
    "average_precision": Metric(
        "average_precision",
        "mean over the positives of the precision TP_k/k at that positive's rank k",
        _scorers.reference_average_precision,
        _scorers.average_precision_from_groups,
        lambda P, N: (_min_average_precision(P, N), 1.0),
        kernel_column="average_precision",
        alone_variant="ap",
        exact_routine=f"{_EXACT}.average_precision:average_precision_exact_null",
        cost_routine=f"{_EXACT}.average_precision:average_precision_exact_cost",
        search_cost_routine=f"{_EXACT}.average_precision:average_precision_search_seconds",
        exact_domain_routine=f"{_EXACT}.average_precision:enumerable",
        power_routine=f"{_EXACT}.power:average_precision_event",
        power_domain_routine=f"{_EXACT}.average_precision:enumerable",
        power_cost_routine=f"{_EXACT}.power_cost:average_precision_power_seconds",
    ),
    "best_mcc": Metric(
        "best_mcc",
        "max over thresholds of the Matthews correlation ((P+N)*TP_k - k*P)/sqrt(P*N*k*(P+N-k)) "
        "(0 at k = 0 and k = P+N, where it is undefined)",
        _scorers.reference_best_mcc,
        _scorers.best_mcc_from_groups,
        lambda P, N: (0.0, 1.0),
        kernel_column="best_mcc",
        kernel_variant="mcc",
        lane_cost_factor=1.19,       # benchmarks/bench_mcc.py: x1.18-1.19 at (1000, 1000), the upper end
        minority_cost_factor=1.07,   # x1.05-1.07 at (20, 2000)
        table_bytes_per_rank=8.0,    # the weights w_k, one float64 per rank
        exact_routine=f"{_EXACT}.best_mcc:best_mcc_null",
        cost_routine=f"{_EXACT}.best_mcc:best_mcc_cost",
        power_routine=f"{_EXACT}.power:best_mcc_event",
    ),
}

#: Names of the metrics with no parameter; ``tp_at_<k>`` and ``precision_at_<k>`` for any k >= 1 are also known.
BASE_METRICS = tuple(_BASE)
#: Metrics a run scores when none are named (fixed: the bundled table's run names none).
DEFAULT_METRICS = ("auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision", "tp_at_10")


def known_metrics_text() -> str:
    """The list of known metric names, for error messages."""
    return (", ".join(BASE_METRICS) + ", tp_at_<k> (a count) and precision_at_<k> (a fraction) for any integer "
            "k >= 1 (e.g. tp_at_10, precision_at_10)")


def unknown_metric_text(name, known: str | None = None) -> str:
    """Why ``name`` names no metric, for error messages: the closest known name (in any case) when one is
    close, then ``known`` (default: every known name).

    Examples
    --------
    >>> unknown_metric_text("Best_F")[:48]
    "unknown metric 'Best_F'; did you mean 'best_f1'?"
    """
    known = f"known metrics: {known_metrics_text()}" if known is None else known
    if isinstance(name, str):
        close = difflib.get_close_matches(name.lower(), (*BASE_METRICS, "tp_at_10", "precision_at_10"), n=1)
        if close:
            return f"unknown metric {name!r}; did you mean {close[0]!r}? {known[0].upper()}{known[1:]}"
    return f"unknown metric {name!r}; {known}"


def get_metric(name: str) -> Metric:
    """Return the :class:`Metric` called ``name``, in any case (``"AUC"`` is ``"auc"``); the entry's
    ``name`` is the canonical, lower-case one.

    Raises
    ------
    KeyError
        If the name is unknown (the message suggests the closest known name and lists them all).

    Examples
    --------
    >>> get_metric("Best_F1").name
    'best_f1'
    """
    given, name = name, name.lower() if isinstance(name, str) else name
    if name in _BASE:
        return _BASE[name]
    match = _AT_K.match(name) if isinstance(name, str) else None
    if match is None:
        raise KeyError(unknown_metric_text(given))
    kind, k = match.group(1), int(match.group(2))
    if kind == "tp":
        return Metric(
            name,
            f"TP_{k}: the count of positives among the top {k} (all P when {k} >= P+N)",
            _scorers.reference_tp_at(k),
            _scorers.tp_at_from_groups(k),
            lambda P, N, k=k: _tp_at_range(k, P, N),
            k=k,
            integer_valued=True,
            exact_routine=f"{_EXACT}.closed_form:tp_at_k_null",
            power_routine=f"{_EXACT}.power:tp_at_k_event",
        )
    return Metric(
        name,
        f"TP_{k} / min({k}, P+N): the fraction of positives among the top {k}",
        _scorers.reference_precision_at(k),
        _scorers.precision_at_from_groups(k),
        lambda P, N, k=k: tuple(v / min(k, P + N) for v in _tp_at_range(k, P, N)),
        k=k,
        count_of=f"tp_at_{k}",
        exact_routine=f"{_EXACT}.closed_form:tp_at_k_null",
        power_routine=f"{_EXACT}.power:tp_at_k_event",
    )


# -- exact answers by metric name (the routines themselves live in tablegen.compute.exact) ----------
def metric_entries(names: Sequence[str]) -> tuple[Metric, ...]:
    """The registry entries of ``names``, in order: the one look-up an entry point makes, so that the
    engine below it (:mod:`tablegen.compute.mc`, :mod:`tablegen.compute.cell`, :mod:`tablegen.compute.cost`)
    is handed :class:`Metric` objects and asks them, never the registry again.

    Examples
    --------
    >>> [entry.kernel_column for entry in metric_entries(["auc", "best_f1"])]
    ['auc', 'best_f1']
    """
    return tuple(get_metric(name) for name in names)
