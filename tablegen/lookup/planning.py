"""Plan a test set: the smallest test set (:func:`sample_size`), the smallest detectable AUC
(:func:`minimum_detectable`) and how many models a test set can take (:func:`max_models`).

Each searches exact Lehmann power (:func:`tablegen.lookup.power.power`'s exact programme, its events cached).
All three also answer under the binormal alternative, and under the Lehmann one beyond its exact programme, by
Monte Carlo with common random numbers and 95% intervals (:mod:`tablegen.lookup.planning_mc`).  Exact power is
saw-toothed in the test-set size: :func:`sample_size` reports both the first size that reaches the target and the
size from which it stays there; by Monte Carlo, the first size certified to reach it, the point estimate's first
size, and no stable size (``docs/explanation/power.md``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from tablegen.compute.exact.detectable import AUC_TOLERANCE  # the bracket's width, the tables' too
from tablegen.compute.validation import check_alpha, check_class_size, check_competitors
from tablegen.errors import Argument, TablegenInputError
from tablegen.lookup.power import (
    check_auc,
    check_model,
    check_power,
    check_power_metric,
    check_winners,
    exceed_event,
    lehmann_power_at,
    of_winners,
    size_line,
)
from tablegen.lookup.power_results import DetectableResult, MaxModelsResult, SampleSizeResult
from tablegen.lookup.size_search import below_bound, bisect_line, scan_down, scan_window

if TYPE_CHECKING:
    import os

    from tablegen.lookup.planning_mc_results import DetectableMonteCarlo, MaxModelsMonteCarlo
    from tablegen.lookup.table import Table

logger = logging.getLogger(__name__)

#: :func:`sample_size`'s default bound on the size it searches (total P + N, or the free class's size).
DEFAULT_MAX_SIZE = 100_000
#: :func:`max_models`' default bound on C.
DEFAULT_MAX_C = 10**12
#: The quantile ranking (:func:`typical_value`) has about this many items for metrics of rates.
TYPICAL_ITEMS = 100_000
#: AUC: the scans of :func:`sample_size` decide "power >= target" for this many sizes or more at once by one backward
#: programme (:mod:`tablegen.compute.kernels.lehmann_batch`), within :data:`BATCH_MEMORY` bytes ...
BATCH_SIZES = 8
BATCH_MEMORY = 2.5e8
#: ... and leave a size whose batch power lies this close to the target to the per-size programme (the two agree to
#: ~1e-13), so every decision, and every power reported, is the per-size programme's.
DECISION_MARGIN = 1e-9


class _BeyondExact(Exception):
    """The exact search reached a size beyond the exact programme (:func:`sample_size` then simulates)."""


class _PowerLine:
    """Exact power along :func:`sample_size`'s line of sizes, each size computed once; :meth:`prefetch` decides a
    run of AUC sizes at once (:data:`BATCH_SIZES`)."""

    def __init__(self, metric: str, cell, C: int, alpha: float, k: float, winners: int, target: float):
        self.metric, self.cell, self.C, self.alpha, self.k = metric, cell, C, alpha, k
        self.winners, self.target = winners, target
        self.seen: dict[int, float] = {}
        self.decided: dict[int, bool] = {}
        self.used: set[int] = set()

    def __call__(self, n: int) -> float:
        """The exact power at size n (the per-size programme); :class:`_BeyondExact` where it does not run."""
        if n not in self.seen:
            from tablegen.compute.metrics import get_metric

            if not get_metric(self.metric).power_exact_at(*self.cell(n)):
                raise _BeyondExact(n)
            try:
                self.seen[n] = lehmann_power_at(self.metric, *self.cell(n), self.C, self.alpha, self.k,
                                                self.winners)[0]
            except TablegenInputError as error:
                raise TablegenInputError.naming(f"the search for the sample size reached P, N = {self.cell(n)} before "
                                                f"the target power, beyond the exact programme ({error}); lower ",
                                                Argument("max_size"), f" below {n:,}") from None
        return self.seen[n]

    def reaches(self, n: int) -> bool:
        """Whether the exact power at size n reaches the target."""
        if n in self.seen:
            return self.seen[n] >= self.target
        if n in self.decided:
            self.used.add(n)
            return self.decided[n]
        return self(n) >= self.target

    @property
    def evaluations(self) -> int:
        """Sizes whose exact power was computed and consulted."""
        return len(self.seen.keys() | self.used)

    def prefetch(self, sizes) -> None:
        """Decide the sizes not yet computed (within the exact programme) by one pass over them all, for a metric
        with a batch routine (AUC: one backward programme, :meth:`~tablegen.compute.metrics.Metric.lehmann_batch`)."""
        from tablegen.compute.metrics import get_metric

        spec = get_metric(self.metric)
        if spec.power_batch_routine is None:
            return
        todo = [n for n in sizes if n not in self.seen and n not in self.decided and spec.power_exact_at(*self.cell(n))]
        if len(todo) < BATCH_SIZES:
            return
        cells = [self.cell(n) for n in todo]
        critical = [exceed_event(self.metric, P, N, self.C, self.alpha).critical_value for P, N in cells]
        tails = spec.lehmann_batch(self.k, cells, critical, BATCH_MEMORY)
        if tails is None:
            return
        for n, single in zip(todo, tails):
            value = of_winners(float(single), self.winners)
            if abs(value - self.target) > DECISION_MARGIN:
                self.decided[n] = value >= self.target


def _simulation_options(R, seed) -> tuple[int | None, int | None]:
    """``R`` (a positive integer) and ``seed`` checked, whether or not the answer is simulated."""
    from tablegen.compute.validation import check_integer, check_seed

    return (None if R is None else check_integer("R", R, 1)), check_seed("seed", seed, True)


def sample_size(metric: str, *, auc: float, C: int = 1, alpha: float = 0.01, power: float = 0.8,
                prevalence: float | None = None, P: int | None = None, N: int | None = None,
                model: str = "lehmann", winners: int | str = 1, max_size: int = DEFAULT_MAX_SIZE,
                R: int | None = None, seed: int | None = None) -> SampleSizeResult:
    """The smallest test set whose power against a model of AUC ``auc`` reaches ``power``.

    The size grows along one line: the total n = P + N at a ``prevalence`` (P = the nearest integer to
    prevalence n, at least 1 and at most n - 1), or the free class with ``P`` or ``N`` fixed.  Exact power is
    saw-toothed in the size, so two sizes are reported: the first that reaches the target and the one from
    which every size does (through the last size scanned).  Search: doubling from the smallest size until the
    target is reached, bisection to a size n_b that reaches it while n_b - 1 does not, then scans (the last
    step): down from n_b while any of the last W sizes reaches the target (W = max(16, n_b/16)), and up from
    n_b until W sizes in a row reach it.  Where the doubling reaches ``max_size`` below the target, the W sizes below
    the bound are scanned for one that reaches it.

    Under the binormal alternative, and under the Lehmann one where the search reaches a size beyond the exact
    programme (AUC beyond about 375 x 375, average precision beyond its enumeration), the power at each size is a
    Monte Carlo estimate with its 95% interval (common random numbers across sizes,
    :func:`tablegen.lookup.planning_mc.sample_size_mc`), and ``method`` is ``"monte carlo"``: ``first`` is then the
    smallest size simulated whose interval lies at or above the target (certified to reach it *at that size*), the
    point estimate's first size and the interval's other end are reported too, and no stable size is claimed (a
    simulation cannot show that the power never drops below the target at larger sizes).

    Parameters
    ----------
    metric : str
    auc : float
        The alternative's AUC, in [0.5, 1).
    C, alpha, winners, model :
        As for :func:`power` (``alpha``: default 0.01, the level of Forman & Cohen's tables; ``model="lehmann"``:
        exact where its programme runs).
    power : float
        The target, in (0, 1) (default 0.8).
    prevalence, P, N :
        Exactly one: the prevalence P/(P + N) in (0, 1), or the fixed number of positives or negatives.
    max_size : int
        The largest size searched (default 100,000).
    R, seed : int, optional
        Replicates per size and root seed of a Monte Carlo answer (default: R for a 95% interval of +-0.005 of the
        power at the target; seed 2005); unused by an exact one.

    Returns
    -------
    SampleSizeResult
        ``method`` ``"exact"``, or ``"monte carlo"`` with the Monte Carlo fields.

    Raises
    ------
    TablegenInputError
        Bad input, naming the argument; a target not reached at the sizes searched up to ``max_size`` (or within
        the exact programme's domain), or reached but missed again at ``max_size``, naming ``max_size``; by Monte
        Carlo, a target that ``R`` replicates cannot certify, naming ``R``.

    Examples
    --------
    >>> result = sample_size("best_f1", auc=0.7, C=100, alpha=0.05, N=200)
    >>> result.first_P, round(result.first_power, 4)
    (52, 0.8087)
    >>> simulated = sample_size("auc", auc=0.75, C=10, alpha=0.05, prevalence=0.5, model="binormal", R=2000)
    >>> simulated.method, simulated.possible_P <= simulated.estimate_P <= simulated.first_P
    ('monte carlo', True)
    """
    from tablegen.compute.exact.power import lehmann_k
    from tablegen.compute.validation import check_integer
    from tablegen.lookup.planning_mc import sample_size_mc

    metric = check_power_metric(metric)
    auc, target = check_auc(auc), check_power(power)
    C, alpha = check_competitors(C), check_alpha("alpha", alpha)
    model = check_model(model)
    winners = check_winners(winners, C)
    what, smallest, cell = size_line(prevalence, P, N)
    max_size = check_integer("max_size", max_size, smallest)
    R, seed = _simulation_options(R, seed)
    if model == "lehmann":
        try:
            return _exact_sample_size(metric, auc, C, alpha, target, winners, what, smallest, cell, max_size,
                                      _PowerLine(metric, cell, C, alpha, lehmann_k(auc), winners, target))
        except _BeyondExact as beyond:
            logger.info("sample_size: %s at P, N = %s is beyond the exact programme; simulating", metric,
                        cell(beyond.args[0]))
    return sample_size_mc(metric, auc, C, alpha, target, model, winners, what, smallest, cell, max_size, R, seed)


def _exact_sample_size(metric: str, auc: float, C: int, alpha: float, target: float, winners: int, what: str,
                       smallest: int, cell, max_size: int, g: _PowerLine) -> SampleSizeResult:
    """:func:`sample_size` on exact Lehmann power (its docstring's search); :class:`_BeyondExact` beyond it."""
    lo, hi = bisect_line(g.reaches, smallest, max_size)
    if hi is None:
        floor = max(max_size - max(16, max_size // 16), smallest if lo is None else lo)
        hi = below_bound(g.reaches, floor, max_size)
        if hi is None:
            raise TablegenInputError.naming(
                f"the power of {metric} does not reach {target:g} at the {what} searched up to ",
                Argument("max_size", max_size), f" (doubling from {smallest}, then every one from {floor} to the "
                f"bound; {g(max_size):.4f} at the bound); raise it")
    first, stable, checked = _scan(g, hi, smallest, max_size)
    if stable > max_size:  # the last size scanned, at the bound, misses the target again
        raise TablegenInputError.naming(f"the power of {metric} reaches {target:g} at P, N = {cell(first)} but falls "
                                        f"back below it at the bound, ", Argument("max_size", max_size),
                                        "; raise it to find where it stays above")
    return SampleSizeResult(metric, auc, C, alpha, target, winners, *cell(first), g(first), *cell(stable), g(stable),
                            *cell(checked), g.evaluations)


def _scan(g: _PowerLine, hi: int, smallest: int, max_size: int) -> tuple[int, int, int]:
    """(first, stable, checked): the scans of :func:`sample_size` about n_b = ``hi`` (its docstring), the sizes
    around n_b decided at once where :meth:`_PowerLine.prefetch` can."""
    window = scan_window(hi)
    g.prefetch(range(max(smallest, hi - window), min(max_size, hi + window) + 1))
    first = scan_down(g.reaches, hi, smallest, window)
    stable, above_run, n = hi, 0, hi
    while above_run < window and n <= max_size:
        if g.reaches(n):
            above_run += 1
        else:
            stable, above_run = n + 1, 0
        n += 1
    return first, stable, n - 1


def minimum_detectable(metric: str, P: int, N: int, C: int = 1, alpha: float = 0.01, power: float = 0.8,
                       model: str = "lehmann", winners: int | str = 1, R: int | None = None,
                       seed: int | None = None, table: bool | str | os.PathLike | Table | None = None
                       ) -> DetectableResult | DetectableMonteCarlo:
    """The smallest AUC that the best-of-C test at (P, N) detects with the target power.

    Exact power rises with k (a larger k moves positives up the ranking, and every metric rises when a
    positive moves above a negative), so under the Lehmann alternative the AUC is found by bisection of exact power
    to :data:`AUC_TOLERANCE`.  Under the binormal alternative, and under the Lehmann one beyond its exact programme
    (AUC beyond about 375 x 375, average precision beyond its enumeration), it is a Monte Carlo estimate with a
    rigorous 95% interval, drawn with common random numbers (:mod:`tablegen.lookup.planning_mc`).

    Parameters
    ----------
    metric, P, N, C, alpha, winners :
        As for :func:`power` (``alpha``: default 0.01, the level of Forman & Cohen's tables).
    power : float
        The target, in (0, 1) (default 0.8).
    model : {"lehmann", "binormal"}
        The alternative (as for :func:`power`): ``"lehmann"`` exact where its programme runs.
    R, seed : int, optional
        Replicates and root seed of a Monte Carlo answer (default: R for a 95% interval of +-0.005 of the power at
        the target; seed 2005); unused by an exact one.
    table : True, str, path or Table, optional
        Read the answer from a table instead of searching: ``True`` for the bundled table, a store's path, or a
        :class:`~tablegen.lookup.table.Table`; it must hold the minimum detectable AUC (a store of schema version
        5: a job with a ``power:`` section, or :func:`tablegen.store.add_minimum_detectable`) at the cell, C, alpha
        and power asked (Lehmann alternative, ``winners=1``), else it is refused naming ``table``.  The stored AUC
        brackets the same root as the search, to the same tolerance; ``method`` is ``"table"``, and ``power`` the
        exact power at the stored AUC.

    Returns
    -------
    DetectableResult or DetectableMonteCarlo
        ``method`` says which: ``"exact"``, or ``"monte carlo"`` with the interval ``auc_low``, ``auc_high``.

    Raises
    ------
    TablegenInputError
        Bad input, naming the argument; a test that detects nothing with that power (m* at the metric's
        maximum, or a power that stays below the target as AUC -> 1), naming ``power``.

    Examples
    --------
    >>> result = minimum_detectable("best_f1", 100, 100, C=100, alpha=0.05)
    >>> round(result.auc, 4), round(result.metric_value, 4)
    (0.6695, 0.699)
    >>> wide = minimum_detectable("auc", 400, 400, C=10, alpha=0.05, R=2000)  # beyond the exact AUC programme
    >>> wide.method, wide.auc_low <= wide.auc <= wide.auc_high
    ('monte carlo', True)
    >>> stored = minimum_detectable("best_f1", 100, 100, C=100, alpha=0.05, table=True)  # the bundled table
    >>> round(stored.auc, 4), stored.method
    (0.6695, 'table')
    """
    from tablegen.compute.exact.power import lehmann_k
    from tablegen.compute.metrics import get_metric
    from tablegen.lookup.planning_mc import minimum_detectable_mc

    metric = check_power_metric(metric)
    P, N = check_class_size("P", P), check_class_size("N", N)
    C, alpha, target = check_competitors(C), check_alpha("alpha", alpha), check_power(power)
    model, winners = check_model(model), check_winners(winners, C)
    R, seed = _simulation_options(R, seed)
    if table is not None and table is not False:
        return _from_table(metric, P, N, C, alpha, target, model, winners, table)
    if model == "binormal" or not get_metric(metric).power_exact_at(P, N):
        return minimum_detectable_mc(metric, P, N, C, alpha, target, model, winners, R, seed)

    def g(auc: float) -> float:
        return lehmann_power_at(metric, P, N, C, alpha, lehmann_k(auc), winners)[0]

    low, high = 0.5, 1.0 - 1e-9
    if g(high) < target:
        raise TablegenInputError.naming(f"no model of AUC below 1 reaches power {target:g} with {metric} at P = {P:,}, "
                                        f"N = {N:,}, C = {C:,} (at AUC = 1 - 1e-9 the power is {g(high):.4g}); lower ",
                                        Argument("power", target), " or C")
    if g(low) >= target:
        high = low
    while high - low > AUC_TOLERANCE:
        middle = 0.5 * (low + high)
        low, high = (low, middle) if g(middle) >= target else (middle, high)
    k = lehmann_k(high)
    event = exceed_event(metric, P, N, C, alpha)
    return DetectableResult(metric, P, N, C, alpha, target, winners, high, low, k, g(high),
                            typical_value(metric, P, N, k), event.critical_value, "exact")


def _from_table(metric: str, P: int, N: int, C: int, alpha: float, target: float, model: str, winners: int,
                table) -> DetectableResult:
    """:func:`minimum_detectable`'s answer with the AUC read from ``table`` (its bracket's), the power at it exact."""
    from tablegen.compute.exact.power import lehmann_k
    from tablegen.lookup.detectable_table import stored_detectable

    if model != "lehmann":
        raise TablegenInputError.naming(Argument("table"), f": a table holds the minimum detectable AUC under the "
                                        f"Lehmann alternative, not model={model!r}; leave table out")
    auc, below = stored_detectable(metric, P, N, C, alpha, target, winners, table)
    k = lehmann_k(auc)
    power, critical = lehmann_power_at(metric, P, N, C, alpha, k, 1)
    return DetectableResult(metric, P, N, C, alpha, target, 1, auc, below, k, power, typical_value(metric, P, N, k),
                            critical, "table")


def max_models(metric: str, P: int, N: int, *, auc: float, alpha: float = 0.01, power: float = 0.8,
               model: str = "lehmann", bound: int = DEFAULT_MAX_C, R: int | None = None,
               seed: int | None = None) -> MaxModelsResult | MaxModelsMonteCarlo:
    """How many models can be tried on (P, N) while one of AUC ``auc`` is still detected with the target power.

    The power of one informative model (``winners=1``) falls as C grows (m* rises with C), so the answer is
    the largest C whose exact power reaches the target: doubling, then bisection over the integers.  The
    number to budget a hyper-parameter search on one test set.  Under the binormal alternative, and the Lehmann one
    beyond its exact programme, the same search runs over one set of Monte Carlo replicates, and the answer
    carries a rigorous 95% interval (:mod:`tablegen.lookup.planning_mc`).

    Parameters
    ----------
    metric, P, N, alpha :
        As for :func:`power` (``alpha``: default 0.01, the level of Forman & Cohen's tables).
    auc : float
        The AUC of the model to detect, in [0.5, 1).
    power : float
        The target, in (0, 1) (default 0.8).
    model : {"lehmann", "binormal"}
        The alternative (as for :func:`power`): ``"lehmann"`` exact where its programme runs.
    bound : int
        The largest C searched (default 10**12).
    R, seed : int, optional
        Replicates and root seed of a Monte Carlo answer (as for :func:`minimum_detectable`).

    Returns
    -------
    MaxModelsResult or MaxModelsMonteCarlo
        ``method`` says which.

    Examples
    --------
    >>> max_models("best_balanced_accuracy", 200, 200, auc=0.65, alpha=0.05).C
    866
    """
    from tablegen.compute.exact.power import lehmann_k
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.validation import check_integer
    from tablegen.lookup.planning_mc import max_models_mc

    metric = check_power_metric(metric)
    P, N = check_class_size("P", P), check_class_size("N", N)
    alpha, auc, target = check_alpha("alpha", alpha), check_auc(auc), check_power(power)
    model = check_model(model)
    bound = check_competitors(check_integer("bound", bound, 1))
    R, seed = _simulation_options(R, seed)
    if model == "binormal" or not get_metric(metric).power_exact_at(P, N):
        return max_models_mc(metric, P, N, auc, alpha, target, model, bound, R, seed)
    k = lehmann_k(auc)

    def g(C: int) -> float:
        return lehmann_power_at(metric, P, N, C, alpha, k, 1)[0]

    if g(1) < target:
        return MaxModelsResult(metric, P, N, auc, alpha, target, 0, g(1), None, bound)
    lo, hi = 1, 2
    while hi <= bound and g(hi) >= target:
        lo, hi = hi, 2 * hi
    if hi > bound:
        if g(bound) >= target:
            return MaxModelsResult(metric, P, N, auc, alpha, target, bound, g(bound), None, bound)
        hi = bound
    while hi - lo > 1:  # g(lo) >= target > g(hi)
        middle = (lo + hi) // 2
        lo, hi = (middle, hi) if g(middle) >= target else (lo, middle)
    return MaxModelsResult(metric, P, N, auc, alpha, target, lo, g(lo), g(hi), bound)


def typical_value(metric: str, P: int, N: int, k: float) -> float:
    """The metric on the Lehmann alternative's *quantile ranking*: negatives' scores at the uniform quantiles
    (j - 1/2)/N', positives' at ((i - 1/2)/P')**(1/k), ranked.  For the metrics of rates the cell is scaled
    to about :data:`TYPICAL_ITEMS` items at its prevalence (P' = s P, N' = s N), where this is the metric of
    the alternative's ROC curve to about 1/(P' + N'); for TP@k and precision@k (a fixed cut-off) it is the
    cell itself.  A description of the alternative, not a probability.

    Examples
    --------
    >>> round(typical_value("auc", 50, 50, 3.0), 4)
    0.75
    """
    from tablegen.compute.metrics import get_metric

    entry = get_metric(metric)
    scale = 1 if entry.k is not None else max(1, TYPICAL_ITEMS // (P + N))
    positives, negatives = P * scale, N * scale
    scores = np.concatenate([((np.arange(positives) + 0.5) / positives) ** (1.0 / k),
                             (np.arange(negatives) + 0.5) / negatives])
    labels = np.zeros(positives + negatives, dtype=np.uint8)
    labels[:positives] = 1
    ranked = labels[np.argsort(-scores, kind="stable")]
    return float(entry.reference_scores(ranked[None, :], positives, negatives)[0])
