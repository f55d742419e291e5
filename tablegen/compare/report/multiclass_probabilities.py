"""The K-class report's metrics of the probability matrices (Hand–Till AUC, one-vs-rest macro AUC, top-k accuracy),
answered as the label metrics are (:mod:`.multiclass_tests`, :mod:`.multiclass_resampling`):

- **The null's pass** (:func:`score_null`): the true labels arranged at random, one arrangement applied to every
  model and scoring every probability metric
  (:func:`~tablegen.compute.kernels.multiclass_scores.model_score_permutations`, keyed as
  :func:`tablegen.multiclass_scores_test` keys its replicates: each model's column is that test's null bit for bit,
  so each model's verdict against random classifiers is its answer); every distinct arrangement once where there are
  at most :data:`tablegen.lookup.multiclass_scores.EXACT_ARRANGEMENTS` (exact).  The max-T test over
  the models given reads the same pass (:func:`~.multiclass_tests.selection`).
- **Bootstrap intervals** (:func:`score_bootstrap`): the label metrics' stratified resamples (the same items in
  resample r), each model's probability metrics scored from the resampled rows (weighted pair counts along each
  column's fixed order), BCa with the jackknife of every item left out.
- **Paired tests** (:func:`score_paired_tests`): the winner against each other model, one-sided, Holm-adjusted,
  by the swap permutation of the two models' probability rows item by item: exact over every pattern where at most
  :data:`~.multiclass_tests.EXACT_SWAP_ITEMS` items' rows differ; else McDiarmid's bound where it is below
  1/(R + 1), or Besag & Clifford's sequential Monte Carlo over keyed patterns with the bound's price added
  (:mod:`tablegen.compare.pairwise.sequential`, which proves the level); the confidence set of the best.

McDiarmid's constants (one item of class y moved to any probability row, the labels fixed; n_c the items of class
c, K classes): Hand–Till, 2 / (K n_y) (the K - 1 class pairs with y each move by at most 1 / n_y: A(y|j) in column
y and A(j|y) in column j each by at most 1 / n_y, their mean by as much, and M is the mean of K (K - 1) / 2 pair
terms); one-vs-rest macro, (1 / n_y + sum over c != y of 1 / (n - n_c)) / K (AUC_y by at most 1 / n_y, each other
AUC_c by at most 1 / (n - n_c)); top-k accuracy, 1 / n (an item's credit is in [0, 1]).  A swap moves one item in
each of the two models, so it changes the difference by at most twice the constant; an item whose two rows are
equal changes nothing.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tablegen.compare.report.multiclass_resampling import Bootstrap
from tablegen.compare.report.multiclass_tests import BLOCK, EXACT_SWAP_ITEMS, PermutationNull
from tablegen.compute.exact.nulls import SNAP_TOLERANCE

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScorePrepared:
    """Every model's tables (:func:`~tablegen.compute.multiclass_scores.score_tables`), built once.

    ``columns``: the kernels' columns, Hand–Till, one-vs-rest macro, then ``top_<k>_accuracy`` for each k of ``ks``.
    """

    names: tuple
    classes: tuple
    true_codes: np.ndarray  # (n,) int32
    true_counts: np.ndarray  # (K,) int64
    ks: tuple
    hand_till: bool
    matrices: tuple
    double_ranks: np.ndarray  # (M, n, K) int64
    orders: np.ndarray  # (M, K, n) int32
    group_last: np.ndarray  # (M, K, n) int32
    credit: np.ndarray  # (M, J, n, K)
    credit_true: np.ndarray  # (M, J, n)
    labels_along: np.ndarray  # (M, K, n) int32

    @property
    def n(self) -> int:
        return int(self.true_codes.size)

    @property
    def K(self) -> int:
        return int(self.true_counts.size)

    @property
    def columns(self) -> tuple:
        return ("hand_till_auc", "ovr_macro_auc", *(f"top_{k}_accuracy" for k in self.ks))

    def column(self, metric: str) -> int:
        return self.columns.index(metric)


def top_k_of(metric: str) -> int | None:
    """The k of ``top_<k>_accuracy`` (None for the AUCs).

    Examples
    --------
    >>> top_k_of("top_3_accuracy"), top_k_of("hand_till_auc")
    (3, None)
    """
    found = re.fullmatch(r"top_(\d+)_accuracy", metric)
    return None if found is None else int(found.group(1))


def prepare_scores(data, metrics: tuple) -> ScorePrepared:
    """The kernels' tables of every model's probability matrix, for the report's probability ``metrics``."""
    from tablegen.compute.multiclass_scores import check_codes, check_k, score_tables, top_k_credit

    names = tuple(data.probabilities)
    ks = tuple(dict.fromkeys(k for k in map(top_k_of, metrics) if k is not None))
    aucs = any(top_k_of(metric) is None for metric in metrics)
    codes, counts = check_codes(np.asarray(data.true_codes, dtype=np.int64), data.K, every_class=aucs)
    for k in ks:
        check_k(k, data.K)
    tables = [score_tables(np.asarray(data.probabilities[m], dtype=np.float64)) for m in names]
    matrices = tuple(np.asarray(data.probabilities[m], dtype=np.float64) for m in names)
    credit = np.zeros((len(names), len(ks), codes.size, data.K))
    for m, matrix in enumerate(matrices):
        for j, k in enumerate(ks):
            credit[m, j] = top_k_credit(matrix, k)
    orders = np.ascontiguousarray(np.stack([t[1] for t in tables]))
    return ScorePrepared(
        names, tuple(data.classes), codes, counts, ks, "hand_till_auc" in metrics, matrices,
        np.ascontiguousarray(np.stack([t[0] for t in tables])), orders,
        np.ascontiguousarray(np.stack([t[2] for t in tables])), credit,
        np.ascontiguousarray(credit[:, :, np.arange(codes.size), codes]),
        np.ascontiguousarray(codes[orders]))


def observed_scores(sp: ScorePrepared) -> np.ndarray:
    """(M, columns): every model's values as the labels stand (those of :func:`tablegen.multiclass_scores_test`, bit
    for bit)."""
    from tablegen.compute.kernels.multiclass_scores import COLUMNS, TOP_K, arrangement_values

    M = len(sp.names)
    out = np.empty((M, len(sp.columns)))
    row = np.empty((1, len(COLUMNS)))
    for m in range(M):
        tables = (sp.double_ranks[m], sp.orders[m], sp.group_last[m])
        for j in range(max(1, len(sp.ks))):
            credit = sp.credit[m, j] if sp.ks else np.zeros((sp.n, sp.K))
            arrangement_values(sp.true_codes, *tables, credit, sp.true_counts, True, row, 0)
            out[m, :2] = row[0, :2]
            if sp.ks:
                out[m, 2 + j] = row[0, TOP_K]
    return out


def score_null(sp: ScorePrepared, R: int, seed: int, progress: Callable | None = None,
               device: str = "cpu") -> PermutationNull:
    """Every model's probability metrics on each distinct arrangement of the labels (exact, at most
    :data:`tablegen.lookup.multiclass_scores.EXACT_ARRANGEMENTS`) or on R keyed shuffles shared by the models
    (scored on ``device``, ``"cpu"`` or ``"cuda"``: the kernel or its CUDA twin, the same values)."""
    from tablegen.compute.kernels import multiclass_scores as kernels
    from tablegen.compute.kernels.cuda.device import twin
    from tablegen.lookup.multiclass_scores import EXACT_ARRANGEMENTS, _arrangements

    M, width = len(sp.names), len(sp.columns)
    tables = (sp.double_ranks, sp.orders, sp.group_last, sp.credit, sp.true_counts, sp.hand_till)
    arrangements = _arrangements(sp.true_counts)
    if arrangements <= EXACT_ARRANGEMENTS:
        out = np.empty((arrangements, M, width))
        kernels.model_score_enumeration(sp.true_codes, *tables, out)
        return PermutationNull(out, True, None, None)
    key = kernels.multiclass_scores_key(seed, sp.n, sp.K)
    out = np.empty((R, M, width))
    for first in range(0, R, BLOCK):
        twin(kernels.model_score_permutations, device)(sp.true_codes, *tables, *key, first, out[first:first + BLOCK])
        if progress is not None:
            progress(min(first + BLOCK, R), R)
    return PermutationNull(out, False, R, seed)


def score_verdicts(sp: ScorePrepared, observed: np.ndarray, null: PermutationNull, metric: str, C: int,
                   alpha: float) -> object:
    """Every model against the best of C random classifiers on ``metric``
    (:func:`~tablegen.lookup.multiclass_scores.verdict_from_null` of its column of the pass), the judged model the one
    with the smallest p-value (ties: the larger value, then the first given)."""
    from tablegen.compare.report.multiclass_tests import MulticlassVerdict
    from tablegen.lookup.multiclass_scores import verdict_from_null

    column = sp.column(metric)
    k = top_k_of(metric)
    name = metric if k is None else "top_k_accuracy"
    tests = {}
    for m, model in enumerate(sp.names):
        credit = None if k is None else sp.credit[m, sp.ks.index(k)]
        tests[model] = verdict_from_null(name, float(observed[m, column]), k, null.values[:, m, column], sp.classes,
                                         sp.true_counts, credit, C, alpha, null.exact, null.seed)
    order = list(sp.names)
    judged = min(order, key=lambda m: (tests[m].p_value, -tests[m].value, order.index(m)))
    return MulticlassVerdict(metric, judged, tests, C, alpha)


# -- bootstrap ----------------------------------------------------------------------------------------------
@dataclass
class ScoreBootstrap(Bootstrap):
    """The stratified resamples of every model's probability metrics (``values`` (B, M, columns)) and each model's
    values with each item left out (``left_out`` (M, n, columns)), for BCa intervals of a value or a difference."""

    def _item_values(self, m: int, column: int):
        return lambda items, k: self.left_out[m, items, column]


def score_bootstrap(sp: ScorePrepared, observed: np.ndarray, resamples: int, seed: int,
                    progress: Callable | None = None, device: str = "cpu") -> ScoreBootstrap:
    """``resamples`` stratified resamples (the label metrics' draws under the same seed) of every model (on
    ``device``), and the values with each item left out."""
    from tablegen.compute.kernels import multiclass_scores as kernels
    from tablegen.compute.kernels.cuda.device import twin
    from tablegen.compute.kernels.multiclass_resample import BOOTSTRAP_TAG, resample_key

    order = np.argsort(sp.true_codes, kind="stable")
    starts = np.r_[0, np.cumsum(sp.true_counts)].astype(np.int64)
    key = resample_key(seed, sp.n, sp.K, BOOTSTRAP_TAG)
    out = np.empty((resamples, len(sp.names), len(sp.columns)))
    args = (order, starts, sp.true_codes, sp.labels_along, sp.orders, sp.group_last, sp.credit_true, sp.true_counts)
    for first in range(0, resamples, BLOCK):
        twin(kernels.stratified_score_resamples, device)(*args, *key, first, out[first:first + BLOCK])
        if progress is not None:
            progress(min(first + BLOCK, resamples), resamples)
    left_out = np.empty((len(sp.names), sp.n, len(sp.columns)))
    kernels.score_left_out(sp.true_codes, sp.labels_along, sp.orders, sp.group_last, sp.credit_true, sp.true_counts,
                           left_out)
    return ScoreBootstrap(sp, observed, out, left_out)


# -- paired tests -------------------------------------------------------------------------------------------
def swap_constants(sp: ScorePrepared, column: int) -> np.ndarray:
    """(n,): McDiarmid's constant of each item for the kernels' ``column`` (the module docstring proves them).

    Examples
    --------
    >>> sp = ScorePrepared(("a",), (0, 1, 2), np.array([0, 1, 1, 2], np.int32), np.array([1, 2, 1]), (1,), True,
    ...                    (), *[None] * 6)
    >>> swap_constants(sp, 0).tolist(), swap_constants(sp, 2).tolist()
    ([0.6666666666666666, 0.3333333333333333, 0.3333333333333333, 0.6666666666666666], [0.25, 0.25, 0.25, 0.25])
    """
    counts = sp.true_counts.astype(float)
    n, K = float(sp.n), sp.K
    if column == 0:
        per_class = 2.0 / (K * counts)
    elif column == 1:
        others = np.array([np.sum(1.0 / (n - np.delete(counts, c))) for c in range(K)])
        per_class = (1.0 / counts + others) / K
    else:
        return np.full(sp.n, 1.0 / n)
    return per_class[sp.true_codes]


def pair_constants(sp: ScorePrepared, a: int, b: int, column: int) -> np.ndarray:
    """(n,): McDiarmid's constants of the swap test of models ``a`` and ``b`` on the kernels' ``column``, from the
    two models' scores: at most :func:`swap_constants` and often far below (close models).

    Flipping item i's flag moves its score in column c between A's and B's (the interval I = [low, high] of the
    two); a pair (i, j) can change its order only if j's score, A's or B's whatever j's own flag, lies in I.  So in
    column c at most N_c,b(i) pairs of i with items of class b change, N_c,b(i) the items j of class b with A's or
    B's score in I (the smaller of (j with A's score in I) + (j with B's score in I) and (j whose own interval
    meets I)), each by at most 1.  Hand–Till: the sum over b != y of (N_y,b(i) + N_b,b(i)) / (2 n_y n_b), over
    K (K - 1) / 2; one-vs-rest: (sum over b != y of N_y,b(i) / (n_y (n - n_y)) + sum over b != y of
    N_b,b(i) / (n_b (n - n_b))) / K; top-k: |credit under A - credit under B| / n, exactly what the flip moves.

    Examples
    --------
    >>> P = np.array([[0.6, 0.4], [0.4, 0.6], [0.7, 0.3], [0.2, 0.8]])
    >>> close = np.array([[0.65, 0.35], [0.45, 0.55], [0.7, 0.3], [0.2, 0.8]])
    >>> data = type("Data", (), {"probabilities": {"a": P, "reversed": P[:, ::-1], "close": close},
    ...                          "true_codes": np.array([0, 1, 0, 1]), "K": 2, "classes": (0, 1)})()
    >>> sp = prepare_scores(data, ("hand_till_auc", "top_1_accuracy"))
    >>> swap_constants(sp, 0).tolist(), pair_constants(sp, 0, 1, 0).tolist()
    ([0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5])
    >>> pair_constants(sp, 0, 2, 0).tolist()  # no flip can reorder a pair
    [0.0, 0.0, 0.0, 0.0]
    >>> pair_constants(sp, 0, 1, 2).tolist()  # each item's top-1 credit moves between 1 and 0
    [0.25, 0.25, 0.25, 0.25]
    """
    worst = swap_constants(sp, column)
    n = sp.n
    if column >= 2:
        j = column - 2
        return np.minimum(worst, np.abs(sp.credit_true[a, j] - sp.credit_true[b, j]) / n)
    A, B = sp.matrices[a], sp.matrices[b]
    K, y = sp.K, sp.true_codes
    counts = sp.true_counts.astype(float)
    low, high = np.minimum(A, B), np.maximum(A, B)
    reach = np.empty((K, K, n))  # reach[c, b, i]: N_c,b(i)
    for c in range(K):
        for b in range(K):
            members = y == b
            a_sorted, b_sorted = np.sort(A[members, c]), np.sort(B[members, c])
            lows, highs = np.sort(low[members, c]), np.sort(high[members, c])
            lo, hi = low[:, c], high[:, c]
            either = (np.searchsorted(a_sorted, hi, "right") - np.searchsorted(a_sorted, lo, "left")
                      + np.searchsorted(b_sorted, hi, "right") - np.searchsorted(b_sorted, lo, "left"))
            below, above = np.searchsorted(highs, lo, "left"), lows.size - np.searchsorted(lows, hi, "right")
            meets = lows.size - below - above
            reach[c, b] = np.minimum(either, meets)
    items = np.arange(n)
    constants = np.zeros(n)
    for b in range(K):
        other = y != b
        own = reach[y, b, items]  # N_y,b(i): column y, class b
        theirs = reach[b, b, items]  # N_b,b(i): column b, class b
        if column == 0:
            constants += np.where(other, (own + theirs) / (2.0 * counts[y] * counts[b]), 0.0)
        else:
            constants += np.where(other, own / (counts[y] * (n - counts[y])) + theirs / (counts[b] * (n - counts[b])),
                                  0.0)
    constants /= K * (K - 1) / 2 if column == 0 else K
    return np.minimum(worst, constants)


def swap_bound(constants: np.ndarray, moving: np.ndarray, observed: float) -> float:
    """McDiarmid's bound on Pr(D >= observed) over the swap patterns (1 where it says nothing).

    Examples
    --------
    >>> round(swap_bound(np.full(100, 0.01), np.ones(100, bool), 0.2), 6)  # exp(-2 t^2 / (100 * 0.02^2)) = e^-2
    0.135335
    """
    from tablegen.compute.swap_bounds import ROUNDING

    spread = float(np.sum((2.0 * constants[moving]) ** 2))
    t = observed - SNAP_TOLERANCE - ROUNDING
    if t <= 0 or spread == 0.0:
        return 1.0
    return float(min(1.0, math.exp(-2.0 * t * t / spread)))


@dataclass(frozen=True)
class _PairAnswer:
    """One pair's answer on one column: how, the p-value, its interval, the patterns drawn and reaching."""

    method: str
    p_value: float
    p_interval: tuple
    drawn: int | None = None
    hits: int | None = None


class ScoreSwaps:
    """Each pair's swap tests on every requested column, computed when the pair is first asked."""

    def __init__(self, sp: ScorePrepared, columns: tuple, R: int, seed: int, device: str = "cpu"):
        self.sp, self.columns, self.R, self.seed, self.device = sp, tuple(columns), R, seed, device
        self._answers: dict = {}

    def answer(self, a: int, b: int, column: int) -> _PairAnswer:
        if (a, b) not in self._answers:
            self._answers[a, b] = self._compute(a, b)
        return self._answers[a, b][column]

    def _inputs(self, a: int, b: int) -> tuple:
        sp = self.sp
        A, B = sp.matrices[a], sp.matrices[b]
        moving = np.any(A != B, axis=1)
        bit_of = np.full(sp.n, -1, np.int32)
        bit_of[moving] = np.arange(int(np.count_nonzero(moving)), dtype=np.int32)
        both = np.concatenate([A, B], axis=0)  # (2n, K): A's rows, then B's
        ascending = np.argsort(both, axis=0, kind="stable")
        descending = ascending[::-1].T  # (K, 2n)
        values = np.take_along_axis(both.T, descending, axis=1)
        change = np.ones_like(values, dtype=bool)
        change[:, :-1] = values[:, 1:] != values[:, :-1]  # position p ends its tie
        positions = np.broadcast_to(np.arange(values.shape[1]), values.shape)
        last = np.minimum.accumulate(np.where(change, positions, values.shape[1])[:, ::-1], axis=1)[:, ::-1]
        items = np.ascontiguousarray(descending % sp.n, dtype=np.int32)
        sources = np.ascontiguousarray(descending // sp.n, dtype=np.uint8)
        labels = np.ascontiguousarray(sp.true_codes[items])
        return moving, (sp.true_codes, items, labels, sources, np.ascontiguousarray(last, dtype=np.int32), bit_of,
                        np.ascontiguousarray(sp.credit_true[a]), np.ascontiguousarray(sp.credit_true[b]),
                        sp.true_counts)

    def _compute(self, a: int, b: int) -> dict:
        from fractions import Fraction

        from tablegen.compare.pairwise.sequential import (
            FIRST_BLOCK,
            LARGEST_BLOCK,
            SEQUENTIAL_HITS,
            rounded_up,
            sequential_p,
        )
        from tablegen.compute.kernels import multiclass_scores as kernels
        from tablegen.compute.kernels.cuda.device import twin
        from tablegen.compute.kernels.multiclass_resample import resample_key

        swap = twin(kernels.score_swap_differences, self.device)
        moving, inputs = self._inputs(a, b)
        d = int(np.count_nonzero(moving))
        width = len(self.sp.columns)
        key = resample_key(self.seed, self.sp.n, d, kernels.SCORES_SWAP_TAG)
        observed = np.empty((1, width))
        kernels.score_swap_differences(*inputs, *key, 0, True, observed)  # pattern 0: no item swapped
        observed = observed[0]
        answers = {}
        if d <= EXACT_SWAP_ITEMS:
            out = np.empty((1 << d, width))
            swap(*inputs, *key, 0, True, out)
            for column in self.columns:
                hits = int(np.count_nonzero(out[:, column] >= observed[column] - SNAP_TOLERANCE))
                p = hits / out.shape[0]
                answers[column] = _PairAnswer("permutation", p, (p, p))
            return answers
        tau = 1.0 / (self.R + 1)
        active = []
        for column in self.columns:
            bound = swap_bound(pair_constants(self.sp, a, b, column), moving, float(observed[column]))
            if bound < tau:  # below any Monte Carlo p-value: no pattern drawn
                answers[column] = _PairAnswer("bound", bound, (0.0, bound))
            else:
                active.append(column)
        hits = dict.fromkeys(active, 0)
        stopped: dict = {}
        drawn, block = 0, FIRST_BLOCK
        while drawn < self.R and len(stopped) < len(active):
            rows = min(block, self.R - drawn)
            out = np.empty((rows, width))
            swap(*inputs, *key, drawn, False, out)
            for column in active:
                if column in stopped:
                    continue
                where = np.flatnonzero(out[:, column] >= observed[column] - SNAP_TOLERANCE)
                need = SEQUENTIAL_HITS - hits[column]
                if where.size >= need:
                    hits[column], stopped[column] = SEQUENTIAL_HITS, drawn + int(where[need - 1]) + 1
                else:
                    hits[column] += where.size
            drawn += rows
            block = min(2 * block, LARGEST_BLOCK)
        for column in active:
            used = stopped.get(column, drawn)
            p, interval = sequential_p(hits[column], used, self.R)
            p = min(1.0, rounded_up(Fraction(p) + Fraction(1, self.R + 1)))  # the price of the bound's answers
            answers[column] = _PairAnswer("sequential permutation", float(p), interval, used,
                                          min(hits[column], SEQUENTIAL_HITS))
        return answers


def score_paired_tests(sp: ScorePrepared, observed: np.ndarray, metric: str, alpha: float, swaps: ScoreSwaps,
                       boot: ScoreBootstrap) -> object:
    """The winner (largest value) against each other model on ``metric``, one-sided, Holm-adjusted (a bound where
    this pair's and every smaller p-value are bounds), with the confidence set of the best."""
    from tablegen.compare.datasets.analysis import adjust_p_values
    from tablegen.compare.pairwise.paired import PairedTestResult, PairwiseResult, PValueBound, _adjusted_is_bound

    column = sp.column(metric)
    names = sp.names
    x = observed[:, column]
    w = int(np.argsort(-x, kind="stable")[0])
    tests = {}
    for m in range(len(names)):
        if m == w:
            continue
        found = swaps.answer(w, m, column)
        va, vb = float(x[w]), float(x[m])
        sequential = found.method == "sequential permutation"
        tests[names[w], names[m]] = PairedTestResult(
            metric, va, vb, va - vb, va - vb, found.p_value, found.method, "greater",
            found.drawn if sequential else None, swaps.seed if sequential else None, found.p_interval,
            _interval=functools.partial(boot.difference_interval, w, m, column),
            max_replicates=swaps.R if sequential else None, hits=found.hits)
    adjusted = dict(zip(tests, adjust_p_values([t.p_value for t in tests.values()], "holm").tolist()))
    bounds = _adjusted_is_bound(tests)
    adjusted = {pair: PValueBound(p) if bounds[pair] else p for pair, p in adjusted.items()}
    beaten = {b for (_, b), t in tests.items() if (len(names) - 1) * t.p_value <= alpha}
    return PairwiseResult(metric, names[w], tests, adjusted, tuple(m for m in names if m not in beaten), alpha)
