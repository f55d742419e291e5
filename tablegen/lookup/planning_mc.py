"""Plan a test set by Monte Carlo, with common random numbers: the smallest detectable AUC and the most models.

Where exact power has no programme — the binormal alternative always, the Lehmann alternative beyond its exact
programme (AUC beyond about 375 x 375, average precision beyond its enumeration) — :func:`tablegen.minimum_detectable`
and :func:`tablegen.max_models` answer here, with a rigorous 95% interval.

**Common random numbers.**  Every effect is drawn from one stream per (seed, P, N, model): replicate r draws the
same normals (binormal: a positive's score z + d, a negative's z) or the same uniforms (Lehmann: a positive's score
U**(1/k), a negative's U) whatever the effect.  A larger effect moves every positive's score up and leaves the
negatives', and no metric falls when a positive moves above a negative, so replicate r's metric is non-decreasing
in the effect, and the count of significant replicates, ``hits``, is a non-decreasing step function of the AUC
(and a non-increasing one of C, whose critical value m* rises with C).  The smallest detectable AUC is then a
quantile of the replicates' own crossing points, found by bisection on the AUC; the most models by bisection on C
over one set of replicates.

**The interval.**  Let t be the target power of one model, a* the true smallest AUC with power t (power is
continuous in the AUC), c_low the smallest count whose Clopper-Pearson upper end reaches t and c_high the smallest
whose lower end does.  The interval's high end is an AUC a_high at which ``hits >= c_high`` was seen.  If a_high < a*,
then ``hits(a*) >= c_high`` (monotone), so the interval of hits(a*) lies above the true power t — probability at
most 2.5%.  Its low end is an AUC a_low at which ``hits < c_low`` was seen; if a_low > a*, the interval of hits(a*)
lies below t — again at most 2.5%.  So [a_low, a_high] covers a* with probability at least 95%, whatever the
search's path (the events are about the fixed a*).  The same argument on C (at C* and C* + 1) gives the interval
of the most models.  The critical value m* is :func:`tablegen.critical_value`'s (exact where the metric has an
exact null at (P, N); otherwise an estimate, and the result names its method).
"""

from __future__ import annotations

import math

import numpy as np

from tablegen.lookup.planning_mc_results import DetectableMonteCarlo, MaxModelsMonteCarlo

#: The planners' stream stage (:func:`tablegen.compute.power_mc.binormal_key` with the effect's bits fixed at 0:
#: one stream for every effect, the common random numbers).
PLANNING_STAGE = 3
#: The sample-size search's stream stage: one key per (seed, model), shared by every size and effect (its spawn key
#: has P = N = 0, which no other stream has).
SIZE_STAGE = 4
#: The bisection brackets each AUC to this width.
AUC_STEP = 1e-4
#: The largest AUC searched.
AUC_TOP = 1.0 - 1e-9
#: Default half-width of the power's 95% interval at the target (it sets R).
DEFAULT_HALF_WIDTH = 0.005


def effect_of_auc(model: str, auc: float) -> float:
    """The alternative's parameter at ``auc``: binormal d = sqrt 2 Phi^-1(AUC), Lehmann k = AUC/(1 - AUC).

    Examples
    --------
    >>> round(effect_of_auc("binormal", 0.76), 4), round(effect_of_auc("lehmann", 0.75), 4)
    (0.9989, 3.0)
    """
    from tablegen.compute.exact.power import lehmann_k
    from tablegen.compute.power_mc import separation_of_auc

    return separation_of_auc(auc) if model == "binormal" else lehmann_k(auc)


def one_model_target(target: float, winners: int) -> float:
    """The power one model needs so that ``winners`` equally good ones reach ``target``: 1 - (1 - target)**(1/w).

    Examples
    --------
    >>> one_model_target(0.75, 2)
    0.5
    """
    return target if winners == 1 else float(-math.expm1(math.log1p(-target) / winners))


def count_thresholds(t: float, R: int) -> tuple[int, int, int | None]:
    """(c_low, c_estimate, c_high) for a target t with R replicates: the smallest counts whose Clopper-Pearson upper
    end, share c/R, and lower end reach t (c_high None when not even R does).

    Examples
    --------
    >>> count_thresholds(0.8, 1000)
    (775, 800, 825)
    """
    from tablegen.compute.stats import clopper_pearson

    def smallest(end: int) -> int | None:
        """The smallest count whose interval's ``end`` (0 low, 1 high; both rise with the count) reaches t."""
        if clopper_pearson(R, R, R)[end] < t:
            return None
        low, high = -1, R  # fails at low (or below 0), holds at high
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if clopper_pearson(middle, middle, R)[end] >= t else (middle, high)
        return high

    return smallest(1), min(R, math.ceil(t * R)), smallest(0)


class _Replicates:
    """R replicates of one model's metric at any AUC of the alternative (common random numbers); ``key``: the
    stream's key, if not the one of (seed, P, N, model) (:func:`sample_size_mc` shares one across sizes)."""

    def __init__(self, metric: str, P: int, N: int, model: str, R: int, seed: int, key=None):
        from tablegen.compute.mc import KernelLayout
        from tablegen.compute.metrics import get_metric
        from tablegen.compute.power_mc import binormal_key, stream_tag

        entry = get_metric(metric)
        counted = entry.counted_entry()
        self.layout = KernelLayout.for_metrics([counted], P, N)
        self.column = self.layout.columns[counted.name]
        self.divisor = float(entry.count_divisor(P, N))
        self.P, self.N, self.model, self.R = P, N, model, R
        self.key = binormal_key(seed, P, N, 0.0, PLANNING_STAGE, stream_tag(model)) if key is None else key
        self.seen: dict[float, int] = {}

    def values(self, auc: float) -> np.ndarray:
        """Every replicate's metric at ``auc``."""
        from tablegen.compute.power_mc import CPU_BLOCK, binormal_values

        effect = effect_of_auc(self.model, auc)
        blocks = [binormal_values(self.P, self.N, effect, self.key, first, min(CPU_BLOCK, self.R - first),
                                  self.layout, model=self.model)[:, self.column]
                  for first in range(0, self.R, CPU_BLOCK)]
        return np.concatenate(blocks) / self.divisor

    def hits(self, auc: float, threshold: float) -> int:
        """Replicates significant at ``auc`` (value above ``threshold``)."""
        if auc not in self.seen:
            self.seen[auc] = int(np.count_nonzero(self.values(auc) > threshold))
        return self.seen[auc]


def _bracket(hits, needed: int, seen: dict) -> tuple[float, float] | None:
    """(a, b), b - a <= :data:`AUC_STEP`, with hits(a) < needed <= hits(b) (a = b = 0.5 when the null already has
    ``needed``), or None when not even :data:`AUC_TOP` has; starts from the tightest bracket ``seen``."""
    if hits(0.5) >= needed:
        return 0.5, 0.5
    if hits(AUC_TOP) < needed:
        return None
    low = max(a for a, h in seen.items() if h < needed)
    high = min(a for a, h in seen.items() if h >= needed)
    while high - low > AUC_STEP:
        middle = 0.5 * (low + high)
        low, high = (low, middle) if hits(middle) >= needed else (middle, high)
    return low, high


def passes_estimate() -> int:
    """Kernel passes of one smallest-AUC search: three bisections of :data:`AUC_STEP`, plus the ends."""
    return 3 * math.ceil(math.log2(0.5 / AUC_STEP)) + 2


def minimum_detectable_mc(metric: str, P: int, N: int, C: int, alpha: float, target: float, model: str,
                          winners: int, R: int | None, seed: int | None) -> DetectableMonteCarlo:
    """:func:`tablegen.minimum_detectable` by Monte Carlo (module docstring); arguments checked by the caller."""
    from tablegen.compute.cell import DEFAULT_SEED
    from tablegen.compute.exact.nulls import SNAP_TOLERANCE
    from tablegen.compute.stats import clopper_pearson
    from tablegen.lookup.power import of_winners, power_critical_value

    t = one_model_target(target, winners)
    R = _replicates(R, t)
    seed = DEFAULT_SEED if seed is None else seed
    _check_time(R * passes_estimate(), P, N, model)
    cv = power_critical_value(metric, P, N, C, alpha)
    draws = _Replicates(metric, P, N, model, R, seed)
    threshold = float(cv) + SNAP_TOLERANCE

    def hits(auc: float) -> int:
        return draws.hits(auc, threshold)

    c_low, c_estimate, c_high = count_thresholds(t, R)
    estimate = _bracket(hits, c_estimate, draws.seen)
    if estimate is None:
        from tablegen.errors import Argument, TablegenInputError

        raise TablegenInputError.naming(f"no model of AUC below 1 reaches power {target:g} with {metric} at P = {P:,},"
                                        f" N = {N:,}, C = {C:,} ({hits(AUC_TOP):,} of {R:,} replicates significant "
                                        f"at AUC = 1 - 1e-9); lower ", Argument("power", target), " or C")
    lower = _bracket(hits, c_low, draws.seen)
    upper = None if c_high is None else _bracket(hits, c_high, draws.seen)
    auc = estimate[1]
    found = hits(auc)
    low, high = clopper_pearson(found, found, R)
    return DetectableMonteCarlo(metric, P, N, C, alpha, target, winners, model, auc, lower[0],
                                None if upper is None else upper[1], effect_of_auc(model, auc),
                                of_winners(found / R, winners), of_winners(float(low), winners),
                                of_winners(float(high), winners), R, seed, float(cv), cv.method)


def max_models_mc(metric: str, P: int, N: int, auc: float, alpha: float, target: float, model: str, bound: int,
                  R: int | None, seed: int | None) -> MaxModelsMonteCarlo:
    """:func:`tablegen.max_models` by Monte Carlo: one set of replicates at ``auc``, bisection on C (module
    docstring); arguments checked by the caller."""
    from tablegen.compute.cell import DEFAULT_SEED
    from tablegen.compute.exact.nulls import SNAP_TOLERANCE
    from tablegen.compute.stats import clopper_pearson
    from tablegen.lookup.power import power_critical_value

    R = _replicates(R, target)
    seed = DEFAULT_SEED if seed is None else seed
    _check_time(R, P, N, model)
    values = np.sort(_Replicates(metric, P, N, model, R, seed).values(auc))
    criticals: dict[int, object] = {}

    def hits(C: int) -> int:
        if C not in criticals:
            criticals[C] = power_critical_value(metric, P, N, C, alpha)
        threshold = float(criticals[C]) + SNAP_TOLERANCE
        return int(values.size - np.searchsorted(values, threshold, side="right"))

    c_low, c_estimate, c_high = count_thresholds(target, R)
    C = _largest_C(hits, c_estimate, bound)
    C_low = 0 if c_high is None else _largest_C(hits, c_high, bound)
    C_high = _largest_C(hits, c_low, bound)
    at = max(C, 1)
    found = hits(at)
    low, high = clopper_pearson(found, found, R)
    return MaxModelsMonteCarlo(metric, P, N, auc, alpha, target, model, C, C_low, C_high, found / R, float(low),
                               float(high), bound, R, seed, criticals[at].method)


def _largest_C(hits, needed: int, bound: int) -> int:
    """The largest C <= bound with hits(C) >= needed (hits non-increasing in C), 0 if not even C = 1: doubling, then
    bisection over the integers."""
    if hits(1) < needed:
        return 0
    low, high = 1, 2
    while high <= bound and hits(high) >= needed:
        low, high = high, 2 * high
    if high > bound:
        if hits(bound) >= needed:
            return bound
        high = bound
    while high - low > 1:  # hits(low) >= needed > hits(high)
        middle = (low + high) // 2
        low, high = (middle, high) if hits(middle) >= needed else (low, middle)
    return low


def _replicates(R: int | None, t: float) -> int:
    """R as given, or the smallest R whose 95% interval at power t has half-width :data:`DEFAULT_HALF_WIDTH`."""
    from tablegen.compute.power_mc import replicates_for_half_width

    return replicates_for_half_width(DEFAULT_HALF_WIDTH, t, t) if R is None else R


def _check_time(replicate_passes: float, P: int, N: int, model: str) -> None:
    """Refuse, before drawing, a search whose estimated time exceeds the limit (``TABLEGEN_TIME_LIMIT``)."""
    from tablegen.compute.limits import check_time
    from tablegen.compute.power_mc import SECONDS_PER_ITEM
    from tablegen.errors import Argument

    check_time(SECONDS_PER_ITEM * replicate_passes * (P + N), f"a Monte Carlo search under the {model} alternative "
               f"at P = {P:,}, N = {N:,}", ("give a smaller ", Argument("R"), " (a wider interval) or a smaller "
                                             "test set"))


# -- the sample size -------------------------------------------------------------------------------------------
class _SizeDraws:
    """Significant replicates of one model at each size of a line (:func:`tablegen.lookup.power.size_line`), all
    sizes drawn from one key: replicate r reads the same stream at every size (common random numbers)."""

    def __init__(self, metric: str, cell, C: int, alpha: float, auc: float, model: str, R: int, seed: int):
        from tablegen.compute.power_mc import binormal_key, stream_tag

        self.metric, self.cell, self.C, self.alpha, self.auc = metric, cell, C, alpha, auc
        self.model, self.R, self.seed = model, R, seed
        self.key = binormal_key(seed, 0, 0, 0.0, SIZE_STAGE, stream_tag(model))
        self.counts: dict[int, int] = {}
        self.criticals: dict[int, object] = {}
        self.items = 0

    def count(self, n: int) -> int:
        """Replicates significant at size n (m* from :func:`tablegen.lookup.power.power_critical_value`); refused,
        before it draws, where the search's sizes so far and this one exceed the time limit together."""
        if n not in self.counts:
            from tablegen.compute.exact.nulls import SNAP_TOLERANCE
            from tablegen.compute.limits import check_time
            from tablegen.compute.power_mc import SECONDS_PER_ITEM
            from tablegen.errors import Argument
            from tablegen.lookup.power import power_critical_value

            P, N = self.cell(n)
            check_time(SECONDS_PER_ITEM * self.R * (self.items + P + N), f"a Monte Carlo sample-size search under the "
                       f"{self.model} alternative ({len(self.counts) + 1:,} sizes, through P = {P:,}, N = {N:,})",
                       ("give a smaller ", Argument("R"), " (wider intervals), a smaller ", Argument("max_size"),
                        " or a larger AUC"))
            self.items += P + N
            cv = power_critical_value(self.metric, P, N, self.C, self.alpha)
            draws = _Replicates(self.metric, P, N, self.model, self.R, self.seed, key=self.key)
            self.counts[n] = draws.hits(self.auc, float(cv) + SNAP_TOLERANCE)
            self.criticals[n] = cv
        return self.counts[n]

    def reaching(self, needed: int):
        """The predicate "at least ``needed`` replicates significant at size n"."""
        return lambda n: self.count(n) >= needed

    def smallest(self, needed: int) -> int:
        """The smallest size simulated with at least ``needed`` significant replicates."""
        return min(n for n, hits in self.counts.items() if hits >= needed)


def sample_size_mc(metric: str, auc: float, C: int, alpha: float, target: float, model: str, winners: int,
                   what: str, smallest: int, cell, max_size: int, R: int | None, seed: int | None):
    """:func:`tablegen.sample_size` by Monte Carlo; arguments checked by the caller.

    Three count thresholds of the one-model target t (:func:`count_thresholds`): c_high (the interval's lower end
    reaches t), the estimate's ceil(t R), c_low (its upper end does).  For each, the exact search's doubling and
    bisection on the size (:func:`tablegen.lookup.size_search.bisect_line`) find a boundary; then the final scan
    simulates every size down from the highest boundary until W sizes in a row below the lowest have fewer than
    c_low (W = max(16, n/16)).  Each answer is the smallest size simulated with its count: ``first`` (certified),
    ``estimate`` and ``possible``.
    """
    from tablegen.compute.cell import DEFAULT_SEED
    from tablegen.compute.stats import clopper_pearson
    from tablegen.errors import Argument, TablegenInputError
    from tablegen.lookup.power import of_winners
    from tablegen.lookup.power_results import SampleSizeResult
    from tablegen.lookup.size_search import below_bound, bisect_line, scan_window

    t = one_model_target(target, winners)
    R = _replicates(R, t)
    seed = DEFAULT_SEED if seed is None else seed
    c_low, c_estimate, c_high = count_thresholds(t, R)
    if c_high is None:
        raise TablegenInputError.naming(f"{R:,} replicates cannot certify power {target:g} (even {R:,} of {R:,} "
                                        "significant gives a 95% interval reaching below it); raise ",
                                        Argument("R", R))
    line = _SizeDraws(metric, cell, C, alpha, auc, model, R, seed)
    boundaries = []
    for needed in (c_high, c_estimate, c_low):
        reaches = line.reaching(needed)
        lo, hi = bisect_line(reaches, smallest, max_size)
        if hi is None:
            floor = max(max_size - scan_window(max_size), smallest if lo is None else lo)
            hi = below_bound(reaches, floor, max_size)
            if hi is None:
                raise TablegenInputError.naming(
                    f"the power of {metric} is not certified to reach {target:g} ({model} alternative, Monte Carlo, "
                    f"R = {R:,}) at the {what} simulated up to ", Argument("max_size", max_size),
                    f" (doubling from {smallest}, then every one from {floor} to the bound; {line.count(max_size):,} "
                    f"of {R:,} replicates significant at the bound); raise it, or ", Argument("R"))
        boundaries.append(hi)
    top, bottom = max(boundaries), min(boundaries)
    window, reaches, n, below_run = scan_window(top), line.reaching(c_low), top, 0
    while n >= smallest and (n >= bottom or below_run < window):
        below_run = 0 if reaches(n) else below_run + 1
        n -= 1
    first, estimate, possible = (line.smallest(needed) for needed in (c_high, c_estimate, c_low))

    def power_at(size: int) -> tuple[float, float, float]:
        hits = line.counts[size]
        low, high = clopper_pearson(hits, hits, R)
        return of_winners(hits / R, winners), of_winners(float(low), winners), of_winners(float(high), winners)

    first_power, first_low, first_high = power_at(first)
    estimate_power, estimate_low, estimate_high = power_at(estimate)
    return SampleSizeResult(metric, auc, C, alpha, target, winners, *cell(first), first_power, None, None, None,
                            *cell(top), len(line.counts), "monte carlo", model, first_low, first_high,
                            *cell(estimate), estimate_power, estimate_low, estimate_high, *cell(possible),
                            *cell(n + 1), R, seed, line.criticals[first].method)
