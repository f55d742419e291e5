"""The label-permutation null of the best of K given models, block by block (numpy around the kernels).

:func:`models_sorted` prepares each model once (its items by descending score and the ends of its tied
groups); :func:`null_counts_all` runs every label arrangement (exact) or R random ones (replicate r keyed on
the question and r alone, so any split into blocks gives the same counts) through
:mod:`tablegen.compute.kernels.permutation`, each arrangement scored for every metric asked at once
(:class:`MetricPlan`: one per metric); :func:`null_counts` is one metric over every model.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np

from tablegen.compute.kernels.orders import descending_orders

logger = logging.getLogger(__name__)

#: Arrangements enumerated at most for an exact answer, and at most this many (model, item, arrangement)
#: steps (about 2 s on one core), else a permutation test with R random arrangements.
EXACT_ARRANGEMENTS = 1_000_000
EXACT_STEPS = 5e9
#: With R left unset, a count the early look leaves between e and H follows Besag & Clifford's sequential rule
#: (stops at its H-th reaching arrangement) where R arrangements would cost more than this many (model, item,
#: arrangement) steps (about 0.1 s on one core), else it goes on to R (:mod:`.early`).
SEQUENTIAL_STEPS = 1e8
#: Random arrangements when the exact null is over budget and no R is given.
DEFAULT_PERMUTATIONS = 10_000
#: Replicates per kernel call (memory: one maximum per replicate).
BLOCK = 1 << 15
#: The sorted models' item numbers (:func:`models_sorted`): up to 2^32 items.
ORDER_DTYPE = np.uint32


@dataclass(frozen=True)
class SortedModels:
    """Each model's items by descending score (``orders``), 1 at the last item of each tied group
    (``group_ends``), and each item's doubled midrank, ascending, in item order (``double_ranks``, for AUC)."""

    orders: np.ndarray
    group_ends: np.ndarray
    double_ranks: np.ndarray

    @property
    def untied(self) -> np.ndarray:
        """1 for each model without tied scores (every item ends its group), else 0 (uint8)."""
        return np.all(self.group_ends != 0, axis=1).astype(np.uint8)

    def rows(self, models) -> SortedModels:
        """The same of the models ``models`` (row indices) alone: what sorting those rows alone gives."""
        index = np.asarray(models, np.int64)
        return SortedModels(self.orders[index], self.group_ends[index], self.double_ranks[index])


def models_sorted(scores: np.ndarray) -> SortedModels:
    """Sort each row of ``scores`` (models, n) once, descending, ties in item order (as
    :func:`tablegen.compute.metrics_from_scores.threshold_groups` does).

    Examples
    --------
    >>> s = models_sorted(np.array([[0.2, 0.9, 0.9, 0.1]]))
    >>> s.orders.tolist(), s.group_ends.tolist(), s.double_ranks.tolist()
    ([[1, 2, 0, 3]], [[0, 1, 1, 1]], [[4, 7, 7, 2]])
    """
    orders = descending_orders(scores)
    ranked = np.take_along_axis(scores, orders, axis=1)
    ends = np.ones(scores.shape, np.uint8)
    ends[:, :-1] = ranked[:, 1:] != ranked[:, :-1]
    double_ranks = _double_midranks(orders, ends)
    # 32-bit unsigned item numbers: half the bytes the kernels' walks stream, and no wrap-around test where they
    # read a label through them (2.2 -> 1.8 ns per arrangement-model-item at 10^6 items, 1.34 -> 1.25 at 10^4)
    return SortedModels(np.ascontiguousarray(orders, dtype=ORDER_DTYPE), ends, double_ranks)


def _double_midranks(orders: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Each item's doubled ascending midrank (integers), in item order, from the descending ``orders`` and the
    ``group_ends`` of its tied groups: a group at descending positions s..e (from 0) holds ascending ranks n - e
    .. n - s, so twice their mean is 2 n - s - e (what ``2 * scipy.stats.rankdata(method="average")`` gives,
    without importing scipy.stats).

    Examples
    --------
    >>> _double_midranks(np.array([[1, 2, 0, 3]]), np.array([[0, 1, 1, 1]], np.uint8)).tolist()
    [[4, 7, 7, 2]]
    """
    n = orders.shape[1]
    position = np.broadcast_to(np.arange(n, dtype=np.int64), orders.shape)
    starts = np.ones(orders.shape, bool)
    starts[:, 1:] = ends[:, :-1] != 0
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends != 0, position, n)[:, ::-1], axis=1)[:, ::-1]
    double_ranks = np.empty(orders.shape, np.int64)
    np.put_along_axis(double_ranks, orders, 2 * n - first - last, axis=1)
    return double_ranks


@dataclass(frozen=True)
class NullCounts:
    """What the arrangements said: each arrangement's maximum over models (``maxima``), and per model how
    many reached its observed value alone (``raw_hits``) and as the step-down maximum (``step_hits``, by
    observed rank); ``arrangements`` is how many were run, all of them when ``exact``; ``look`` the early look of
    the run's design (a :class:`~tablegen.compare.pairwise.sequential.EarlyLook`, or None) and ``stopped_early``
    whether the run stopped there (:func:`null_counts_all`)."""

    maxima: np.ndarray
    raw_hits: np.ndarray
    step_hits: np.ndarray
    arrangements: int
    exact: bool
    look: object = None
    stopped_early: bool = False
    looked: tuple | None = None
    """With a look: the raw, step-down and single-step counts as :class:`~.early.LookedCounts` (each count's own
    arrangements: l_e, its H-th reaching one, or R)."""

    def single_hits(self, thresholds: np.ndarray, drawn: int | None = None) -> np.ndarray:
        """Per model, how many of the first ``drawn`` (default: all) arrangements' maxima reach its threshold (its
        single-step count)."""
        maxima = self.maxima if drawn is None else self.maxima[:drawn]
        return reaching(maxima, thresholds)


def reaching(maxima: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """How many of ``maxima`` are at least each of ``thresholds``.

    Examples
    --------
    >>> reaching(np.array([0.5, 0.9, 0.7]), np.array([0.7, 1.0])).tolist()
    [2, 0]
    """
    return maxima.size - np.searchsorted(np.sort(maxima), thresholds, side="left")


def arrangements(n: int, P: int) -> int:
    """C(n, P), the number of label arrangements."""
    return math.comb(n, P)


def exact_fits(n: int, P: int, models: int) -> bool:
    """Whether every arrangement can be enumerated within the budget (:data:`EXACT_ARRANGEMENTS`, :data:`EXACT_STEPS`).

    Examples
    --------
    >>> exact_fits(20, 10, 5), exact_fits(60, 30, 5), exact_fits(10**6, 3 * 10**5, 10)  # the last: no C(n, P)
    (True, False, False)
    """
    smaller = min(P, n - P)
    if smaller >= EXACT_ARRANGEMENTS.bit_length():  # C(n, k) >= (n/k)^k >= 2^k > the budget: no big integer needed
        return False
    count = math.comb(n, smaller)
    return count <= EXACT_ARRANGEMENTS and count * n * models <= EXACT_STEPS


@dataclass(frozen=True)
class MetricPlan:
    """One metric of a pass over the arrangements: its kernel ``column`` (``k_cut`` its k for TP at k), the rows
    of its models among the sorted ones (``members``: the models it is defined for), each one's observed value less
    the snap tolerance (``thresholds``), and the members by descending observed value (``ranked``, indices into
    ``members``)."""

    column: int
    k_cut: int
    members: np.ndarray
    thresholds: np.ndarray
    ranked: np.ndarray


def null_counts(sorted_models: SortedModels, P: int, column: int, k_cut: int, weights: np.ndarray,
                thresholds: np.ndarray, ranked: np.ndarray, *, exact: bool, R: int = 0,
                key: tuple = (np.uint64(0), np.uint64(0)), device: str = "cpu", progress=None) -> NullCounts:
    """:func:`null_counts_all` of one metric over every model (``thresholds``, ``ranked``: as :class:`MetricPlan`)."""
    plan = MetricPlan(column, k_cut, np.arange(sorted_models.orders.shape[0]), thresholds, ranked)
    return null_counts_all(sorted_models, P, [plan], weights, exact=exact, R=R, key=key, device=device,
                           progress=progress)[0]


def null_counts_all(sorted_models: SortedModels, P: int, plans: list[MetricPlan], weights: np.ndarray, *,
                    exact: bool, R: int = 0, key: tuple = (np.uint64(0), np.uint64(0)), device: str = "cpu",
                    progress=None, look=None) -> list[NullCounts]:
    """Run the arrangements block by block, each scored for every metric of ``plans`` at once (each model walked
    once per arrangement): all C(n, P) of them if ``exact``, else replicates 0 .. R - 1 of ``key`` (on a GPU with
    ``device="cuda"``: the same counts and maxima, bit for bit).  One :class:`NullCounts` per plan, each what a
    pass of that metric alone gives; ``progress(done, total)``, if given, is told of the arrangements scored after
    each block.

    With an early ``look`` (an :class:`~tablegen.compare.pairwise.sequential.EarlyLook` at l_e < R arrangements with
    e and H, random arrangements only; :mod:`.early`), every plan runs the first l_e arrangements; each count (raw,
    step-down, single-step) that at most e or at least H of them reached settles there, and a plan with a count in
    between goes on, block by block on the same replicates, until each such count has H reaching arrangements (the
    arrangement where it got them found exactly) or R are drawn (:attr:`NullCounts.looked`).

    Examples
    --------
    >>> s = models_sorted(np.array([[0.9, 0.8, 0.3, 0.1], [0.2, 0.9, 0.4, 0.3]]))
    >>> plans = [MetricPlan(0, 0, np.arange(2), np.array([0.9, 0.7]), np.array([0, 1])),
    ...          MetricPlan(1, 0, np.arange(2), np.array([0.99, 0.7]), np.array([0, 1]))]
    >>> auc, accuracy = null_counts_all(s, 2, plans, np.zeros(5), exact=True)
    >>> auc.arrangements, auc.maxima.tolist(), accuracy.raw_hits.tolist()
    (6, [1.0, 0.75, 0.5, 1.0, 0.75, 0.5], [1, 4])
    """
    n = sorted_models.orders.shape[1]
    total = arrangements(n, P) if exact else R
    width = max(plan.members.size for plan in plans)
    maxima = np.empty((len(plans), total))
    raw_hits = np.zeros((len(plans), width), np.int64)
    step_hits = np.zeros((len(plans), width), np.int64)
    if exact or look is None or look.drawn >= R:
        _run(sorted_models, P, plans, weights, exact, key, device, 0, total, total, maxima, raw_hits, step_hits,
             progress)
        return _split(plans, maxima, raw_hits, step_hits, total, exact)
    return _looked_run(sorted_models, P, plans, weights, key, device, total, look, maxima, raw_hits, step_hits,
                       progress)


def _looked_run(sorted_models, P, plans, weights, key, device, total, look, maxima, raw_hits, step_hits,
                progress) -> list[NullCounts]:
    """:func:`null_counts_all` with an early look (see there)."""
    from tablegen.compare.selection.early import FOLLOW_BLOCK

    _run(sorted_models, P, plans, weights, False, key, device, 0, look.drawn, total, maxima, raw_hits, step_hits,
         progress)
    state = [_CountState(look, plan.members.size, raw_hits[t], step_hits[t],
                         reaching(maxima[t, :look.drawn], plan.thresholds)) for t, plan in enumerate(plans)]
    ends = [look.drawn] * len(plans)
    going = [t for t in range(len(plans)) if state[t].open]
    if going:
        logger.info("max-T: %d of %d metrics past the early look at %d arrangements", len(going), len(plans),
                    look.drawn)
    position = look.drawn
    while going and position < total:
        stop = min(position + FOLLOW_BLOCK, total) if look.follow_hits is not None else total
        rest = [plans[t] for t in going]
        wide = max(plan.members.size for plan in rest)
        block = np.empty((len(going), stop - position))
        before_raw, before_step = raw_hits[going, :wide].copy(), step_hits[going, :wide].copy()
        rest_raw, rest_step = before_raw.copy(), before_step.copy()
        _run(sorted_models, P, rest, weights, False, key, device, position, stop, total, block, rest_raw, rest_step,
             progress)
        for i, t in enumerate(going):
            size = plans[t].members.size
            maxima[t, position:stop] = block[i]
            raw_hits[t, :wide], step_hits[t, :wide] = rest_raw[i], rest_step[i]
            ends[t] = stop
            if look.follow_hits is None:  # to R: nothing to follow
                continue
            state[t].follow_single(block[i][:, None] >= plans[t].thresholds[None, :], position)
            after = (rest_raw[i, :size], rest_step[i, :size])
            if state[t].crossed(*after):
                found = _crossings(sorted_models, P, plans[t], weights, key, position, stop, total,
                                   (before_raw[i, :size], before_step[i, :size]), after, state[t].waiting(),
                                   look.follow_hits)
                state[t].record(found)
        position = stop
        going = [t for t in going if state[t].open]
    if progress is not None:
        progress(total, total)
    for t, plan in enumerate(plans):
        state[t].close(raw_hits[t, :plan.members.size], step_hits[t, :plan.members.size], maxima[t, :ends[t]],
                       plan.thresholds, total)
    return [NullCounts(maxima[t, :ends[t]], raw_hits[t, :plan.members.size].copy(),
                       step_hits[t, :plan.members.size].copy(), ends[t], False, look, ends[t] == look.drawn,
                       state[t].counts()) for t, plan in enumerate(plans)]


def _crossings(sorted_models, P, plan, weights, key, start, stop, total, before, after, waiting, needed):
    """Where each waiting count of one plan got its ``needed``-th reaching arrangement within arrangements ``start``
    .. ``stop`` - 1: the raw and step-down counts (``before``, ``after``: each a pair of arrays, at ``start`` and at
    ``stop``; ``waiting``: a pair of masks) found by bisection, scoring the first half of a segment that holds a
    crossing again (the same keyed arrangements; on the CPU, which gives what the GPU does, bit for bit): about
    log2(block) short runs per crossing, not one per arrangement.  Returns a pair of arrays: L (1-based), or 0."""
    from tablegen.compute.kernels.permutation_lanes import LANES, lanes_apply

    if stop - start == LANES and lanes_apply([plan.column], sorted_models.orders.shape[1]):
        return _lane_crossings(sorted_models, P, plan, key, start, before, waiting, needed)
    found = [np.zeros(plan.members.size, np.int64) for _ in range(2)]

    def crossing(at_start, at_stop):
        return [w & (a < needed) & (b >= needed) for w, a, b in zip(waiting, at_start, at_stop)]

    segments = [(start, stop, before, after)]
    while segments:
        first, last, at_first, at_last = segments.pop()
        inside = crossing(at_first, at_last)
        if not any(bool(c.any()) for c in inside):
            continue
        if last - first == 1:
            for kind in range(2):
                found[kind][inside[kind]] = last
            continue
        middle = (first + last) // 2
        raw, step = at_first[0].reshape(1, -1).copy(), at_first[1].reshape(1, -1).copy()
        _run(sorted_models, P, [plan], weights, False, key, "cpu", first, middle, total, np.empty((1, middle - first)),
             raw, step, None)
        at_middle = (raw[0], step[0])
        segments += [(first, middle, at_first, at_middle), (middle, last, at_middle, at_last)]
    return found


def _lane_crossings(sorted_models, P, plan, key, start, before, waiting, needed):
    """:func:`_crossings` of a block of 64 arrangements from their values (one lane walk,
    :func:`~tablegen.compute.kernels.permutation_lanes.lane_arrangement_values`), each arrangement tallied in order
    as the kernels' ``tally`` counts it: the same L, where the bisection scored ~63 arrangements again one by one
    (at 10^6 items 0.6 s of the scalar kernel against one lane walk, 0.1 s)."""
    from tablegen.compare.selection.early import first_reaching
    from tablegen.compute.kernels.permutation_lanes import LANES, lane_arrangement_values

    s = sorted_models
    values = np.empty((1, s.orders.shape[0], LANES))
    lane_arrangement_values(s.orders, s.group_ends, s.double_ranks, P, np.array([plan.column], np.int64), key[0],
                            key[1], start, values)
    member_values = values[0][plan.members].T  # (arrangement, member)
    raw = member_values >= plan.thresholds[None, :]
    by_rank = member_values[:, plan.ranked]
    running = np.maximum.accumulate(by_rank[:, ::-1], axis=1)[:, ::-1]  # the largest value ranked r or below
    step = running >= plan.thresholds[plan.ranked][None, :]
    found = []
    for indicators, at_start, going in zip((raw, step), before, waiting):
        reached = first_reaching(indicators.astype(np.int64), np.asarray(at_start, np.int64), needed, start)
        found.append(np.where(going & (np.asarray(at_start) < needed), reached, 0))
    return found


class _CountState:
    """A plan's counts under an early look: at the look, and for each count still going (e < X < H) the arrangement
    where it got its H-th reaching one (0 while none)."""

    def __init__(self, look, size, raw, step, single):
        self.look = look
        self.at_look = [np.asarray(c[:size], np.int64).copy() for c in (raw, step, single)]
        self.going = [~look.settles(c) for c in self.at_look]
        self.stops = [np.zeros(size, np.int64) for _ in range(3)]
        self.single_now = self.at_look[2].copy()

    @property
    def open(self) -> bool:
        """Whether a count is still going (between e and H at the look, and without its h-th reaching arrangement)."""
        return any(bool(np.any(g & (s == 0))) for g, s in zip(self.going, self.stops))

    def follow_single(self, indicators, first) -> None:
        from tablegen.compare.selection.early import first_reaching

        found = first_reaching(indicators, self.single_now, self.look.follow_hits, first)
        waiting = self.going[2] & (self.stops[2] == 0)
        self.stops[2] = np.where(waiting & (found > 0), found, self.stops[2])
        self.single_now = self.single_now + indicators.sum(axis=0)

    def crossed(self, raw, step) -> bool:
        """Whether a raw or step-down count still going has H reaching arrangements now."""
        return any(bool(np.any(g & (s == 0) & (c >= self.look.follow_hits)))
                   for g, s, c in zip(self.going[:2], self.stops[:2], (raw, step)))

    def waiting(self) -> tuple:
        """The raw and step-down counts still going (masks)."""
        return tuple(self.going[kind] & (self.stops[kind] == 0) for kind in range(2))

    def record(self, found) -> None:
        """Record where raw and step-down counts got their h-th reaching arrangement (L, or 0: not yet)."""
        for kind in range(2):
            self.stops[kind] = np.where((self.stops[kind] == 0) & (found[kind] > 0), found[kind], self.stops[kind])

    def close(self, raw, step, maxima, thresholds, total) -> None:
        """Keep the counts at the end of the run (read for a count still going when R was reached)."""
        self.final = [np.asarray(raw, np.int64), np.asarray(step, np.int64), reaching(maxima, thresholds)]
        self.total = total

    def counts(self) -> tuple:
        """The raw, step-down and single-step :class:`~.early.LookedCounts`."""
        from tablegen.compare.selection.early import LookedCounts

        out = []
        for kind in range(3):
            settled = ~self.going[kind]
            stopped = self.stops[kind] > 0
            hits = np.where(settled, self.at_look[kind],
                            np.where(stopped, self.look.follow_hits or 0, self.final[kind]))
            drawn = np.where(settled, self.look.drawn, np.where(stopped, self.stops[kind], self.total))
            out.append(LookedCounts(self.at_look[kind], hits, drawn))
        return tuple(out)


def _run(sorted_models: SortedModels, P: int, plans: list[MetricPlan], weights: np.ndarray, exact: bool, key: tuple,
         device: str, start: int, stop: int, total: int, maxima: np.ndarray, raw_hits: np.ndarray,
         step_hits: np.ndarray, progress) -> None:
    """Arrangements ``start`` .. ``stop`` - 1 of the plans' pass (of ``total``) into ``maxima``'s columns: the same
    indices when ``maxima`` is ``total`` wide, else from column 0 (it holds the arrangements from ``start`` on);
    adding to the hit counts."""
    from tablegen.compute.kernels.enumeration import enumeration_metrics_counts
    from tablegen.compute.kernels.permutation import permutation_metrics_counts
    from tablegen.compute.kernels.permutation_lanes import lane_metrics_counts, lanes_apply

    n = sorted_models.orders.shape[1]
    packed = _packed(plans)
    # 64 arrangements per walk where the lanes score every column asked: the same values, bit for bit
    random_counts = lane_metrics_counts if lanes_apply(packed[0], n) else permutation_metrics_counts
    offset = start if maxima.shape[1] < total else 0  # where column 0 of ``maxima`` lies among the arrangements
    if device == "cuda" and not exact:
        from tablegen.compute.kernels.cuda.permutation import permutation_counts_cuda

        block = np.empty((len(plans), stop - start))
        permutation_counts_cuda(sorted_models.orders, sorted_models.group_ends, sorted_models.double_ranks, P,
                                *packed[:2], weights, *packed[2:], key[0], key[1], start, block, raw_hits, step_hits)
        maxima[:, start - offset:stop - offset] = block
        return
    minority = min(P, n - P)  # enumerate the positions of the smaller class
    binomial = _binomial_table(n, minority) if exact else None
    common = (sorted_models.orders, sorted_models.group_ends, sorted_models.double_ranks, sorted_models.untied, P,
              *packed[:2], weights, *packed[2:])
    for first in range(start, stop, BLOCK):
        block = np.empty((len(plans), min(BLOCK, stop - first)))
        if exact:
            enumeration_metrics_counts(*common, binomial, minority, first, block, raw_hits, step_hits)
        else:
            random_counts(*common, key[0], key[1], first, block, raw_hits, step_hits)
        maxima[:, first - offset:first - offset + block.shape[1]] = block
        logger.debug("label arrangements: %d of %d", first + block.shape[1], total)
        if progress is not None:
            progress(first + block.shape[1], total)


def _packed(plans: list[MetricPlan]) -> tuple:
    """The kernels' arrays of ``plans``: columns, k cuts, members, sizes, thresholds and ranks (a row per metric,
    padded to the largest member count)."""
    width = max(plan.members.size for plan in plans)
    members = np.zeros((len(plans), width), np.int64)
    thresholds = np.full((len(plans), width), np.inf)
    ranked = np.zeros((len(plans), width), np.int64)
    for t, plan in enumerate(plans):
        size = plan.members.size
        members[t, :size], thresholds[t, :size], ranked[t, :size] = plan.members, plan.thresholds, plan.ranked
    columns = np.array([plan.column for plan in plans], np.int64)
    k_cuts = np.array([plan.k_cut for plan in plans], np.int64)
    sizes = np.array([plan.members.size for plan in plans], np.int64)
    return columns, k_cuts, members, sizes, thresholds, ranked


def _split(plans, maxima, raw_hits, step_hits, total: int, exact: bool) -> list[NullCounts]:
    return [NullCounts(maxima[t], raw_hits[t, :plan.members.size].copy(), step_hits[t, :plan.members.size].copy(),
                       total, exact) for t, plan in enumerate(plans)]


def _binomial_table(n: int, k: int) -> np.ndarray:
    """C(a, b) for a < n, b <= k as int64, column by column: C(a, b) = C(a, b - 1) (a - b + 1) / b, exact.

    With k = min(P, n - P) <= n / 2 every entry is at most C(n, k) (the exact budget), far from overflow.
    """
    a = np.arange(n, dtype=np.int64)
    table = np.zeros((n, k + 1), np.int64)
    table[:, 0] = 1
    for b in range(1, k + 1):
        table[:, b] = np.where(a >= b, table[:, b - 1] * np.maximum(a - b + 1, 0) // b, 0)
    return table
