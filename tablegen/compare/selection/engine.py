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

logger = logging.getLogger(__name__)

#: Arrangements enumerated at most for an exact answer, and at most this many (model, item, arrangement)
#: steps (about 2 s on one core), else a permutation test with R random arrangements.
EXACT_ARRANGEMENTS = 1_000_000
EXACT_STEPS = 5e9
#: Random arrangements when the exact null is over budget and no R is given.
DEFAULT_PERMUTATIONS = 10_000
#: Replicates per kernel call (memory: one maximum per replicate).
BLOCK = 1 << 15


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
    orders = np.argsort(-scores, axis=1, kind="stable").astype(np.int64)
    ranked = np.take_along_axis(scores, orders, axis=1)
    ends = np.ones(scores.shape, np.uint8)
    ends[:, :-1] = ranked[:, 1:] != ranked[:, :-1]
    return SortedModels(np.ascontiguousarray(orders), ends, _double_midranks(orders, ends))


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
    raw_at_look: np.ndarray | None = None
    step_at_look: np.ndarray | None = None

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


def designed_p_value(look, at_look: int, hits: int, total: int):
    """The p-value of one count under the max-T test's early ``look`` (an
    :class:`~tablegen.compare.pairwise.sequential.EarlyLook` with e and H), as an exact Fraction: ``at_look`` of the
    first l_e arrangements reached (and ``hits`` of all ``total``, read only where the look did not settle it).

    - at most e, or at least H, at the look: (at_look + 1)/(l_e + 1) (settled there);
    - else min(H/(l_e + 1), (hits + 1)/(total + 1) + tau_e), tau_e = (e + 1)/(l_e + 1).

    Each count's p-value depends on its own arrangements alone, and is a valid p-value: for a < H/(l_e + 1),
    Pr(p <= a) <= Pr(at_look <= e, p <= a) + Pr(p_R <= a - tau_e) <= min(a, tau_e) + max(0, a - tau_e) = a (no
    count of H or more can be at most a); for a >= H/(l_e + 1) every count up to m = floor(a (l_e + 1)) - 1 >= H - 1
    at the look can report at most a, and no other, so Pr(p <= a) <= Pr(at_look <= m) <= (m + 1)/(l_e + 1) <= a
    (the look's count is a valid Monte Carlo p-value at the fixed l_e).  The cap makes it monotone: more
    arrangements reaching, at the look or after, never lowers it, which the single-step and step-down
    adjustments need (a maximum over more models reaches at least as often).

    Examples
    --------
    >>> from tablegen.compare.pairwise.sequential import EarlyLook
    >>> look = EarlyLook(199, 0, 20)
    >>> [str(designed_p_value(look, x, b, 9_999)) for x, b in [(0, 0), (25, 1300), (3, 119), (19, 5000)]]
    ['1/200', '13/100', '17/1000', '1/10']
    """
    from fractions import Fraction

    if look.settles(at_look):
        return Fraction(int(at_look) + 1, look.drawn + 1)
    priced = Fraction(int(hits) + 1, total + 1) + look.price
    return min(priced, Fraction(look.settled_from, look.drawn + 1), Fraction(1))


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
    e and H, random arrangements only), a plan each of whose models' counts (raw, step-down and single-step) the
    first l_e arrangements settle — at most e or at least H reaching — stops there (its counts are those of a run
    of l_e); the other plans go on to R on the same replicates, their counts at the look kept beside
    (``raw_at_look``, ``step_at_look``; the single-step ones are read from the first l_e maxima).

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
        return _split(plans, maxima, raw_hits, step_hits, [total] * len(plans), exact, None, [False] * len(plans))
    _run(sorted_models, P, plans, weights, False, key, device, 0, look.drawn, total, maxima, raw_hits, step_hits,
         progress)
    raw_at_look, step_at_look = raw_hits.copy(), step_hits.copy()
    early = [_settled(maxima[t, :look.drawn], raw_hits[t], step_hits[t], plan, look) for t, plan in enumerate(plans)]
    going = np.flatnonzero(~np.array(early))
    if going.size:
        logger.info("max-T: %d of %d metrics past the early look at %d arrangements", going.size, len(plans),
                    look.drawn)
        rest = [plans[t] for t in going]
        wide = max(plan.members.size for plan in rest)  # the kernels' width for these plans alone
        rest_maxima = np.empty((going.size, total - look.drawn))
        rest_raw, rest_step = raw_hits[going, :wide].copy(), step_hits[going, :wide].copy()
        _run(sorted_models, P, rest, weights, False, key, device, look.drawn, total, total, rest_maxima, rest_raw,
             rest_step, progress)
        maxima[going, look.drawn:] = rest_maxima
        raw_hits[going, :wide], step_hits[going, :wide] = rest_raw, rest_step
    elif progress is not None:
        progress(total, total)
    drawn = [look.drawn if stop else total for stop in early]
    return _split(plans, maxima, raw_hits, step_hits, drawn, False, look, early, raw_at_look, step_at_look)


def _settled(maxima: np.ndarray, raw: np.ndarray, step: np.ndarray, plan: MetricPlan, look) -> bool:
    """Whether a plan stops at the look: every model's raw, step-down and single-step count among the first l_e
    arrangements settles (at most e or at least H reaching).  A model at its metric's floor is reached by every
    arrangement (l_e >= H): it does not hold the run back."""
    size = plan.members.size
    counts = (raw[:size], step[:size], reaching(maxima, plan.thresholds))
    return all(bool(np.all(look.settles(c))) for c in counts)


def _run(sorted_models: SortedModels, P: int, plans: list[MetricPlan], weights: np.ndarray, exact: bool, key: tuple,
         device: str, start: int, stop: int, total: int, maxima: np.ndarray, raw_hits: np.ndarray,
         step_hits: np.ndarray, progress) -> None:
    """Arrangements ``start`` .. ``stop`` - 1 of the plans' pass (of ``total``) into ``maxima``'s columns: the same
    indices when ``maxima`` is ``total`` wide, else from column 0 (it holds the arrangements from ``start`` on);
    adding to the hit counts."""
    from tablegen.compute.kernels.permutation import enumeration_metrics_counts, permutation_metrics_counts

    n = sorted_models.orders.shape[1]
    packed = _packed(plans)
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
            permutation_metrics_counts(*common, key[0], key[1], first, block, raw_hits, step_hits)
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


def _split(plans, maxima, raw_hits, step_hits, drawn: list, exact: bool, look, early: list, raw_at_look=None,
           step_at_look=None) -> list[NullCounts]:
    def at_look(counts, t, size):
        return None if counts is None else counts[t, :size].copy()

    return [NullCounts(maxima[t, :drawn[t]], raw_hits[t, :plan.members.size].copy(),
                       step_hits[t, :plan.members.size].copy(), drawn[t], exact, look, early[t],
                       at_look(raw_at_look, t, plan.members.size), at_look(step_at_look, t, plan.members.size))
            for t, plan in enumerate(plans)]


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
