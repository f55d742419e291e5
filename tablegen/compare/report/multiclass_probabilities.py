"""The K-class report's metrics of the probability matrices (Hand–Till AUC, one-vs-rest macro AUC, top-k accuracy),
answered as the label metrics are (:mod:`.multiclass_tests`, :mod:`.multiclass_resampling`):

- **The null's pass** (:func:`score_null`): the true labels arranged at random, one arrangement applied to every
  model and scoring every probability metric
  (:func:`~tablegen.compute.kernels.multiclass_scores.model_score_permutations`, keyed as
  :func:`tablegen.multiclass_scores_test` keys its replicates: each model's column is that test's null bit for bit,
  so each model's verdict against random classifiers is its answer); every distinct arrangement once where there are
  at most :data:`tablegen.lookup.multiclass_scores.EXACT_ARRANGEMENTS` (exact).  The max-T test over
  the models given reads the same pass (:func:`~.multiclass_selection.selection`).
- **Bootstrap intervals** (:func:`score_bootstrap`): the label metrics' stratified resamples (the same items in
  resample r), each model's probability metrics scored from the resampled rows (weighted pair counts along each
  column's fixed order), BCa with the jackknife of every item left out.
- **Paired tests** (:func:`score_paired_tests`): the winner against each other model, one-sided, Holm-adjusted,
  by the swap permutation of the two models' probability rows item by item: exact over every pattern where at most
  :data:`~.multiclass_tests.EXACT_SWAP_ITEMS` items' rows differ; else Hoeffding's bound where it is below
  1/(R + 1), or Besag & Clifford's sequential Monte Carlo over keyed patterns with the bound's price added
  (:mod:`tablegen.compare.pairwise.sequential`, which proves the level); the confidence set of the best.

Why the swap difference is a Rademacher sum.  Swapping item i's rows exchanges its score in A' and B'.  Every term
of Hand–Till's M and of the one-vs-rest AUCs compares two items p, q in one column, and in D = metric(A') -
metric(B') the term is f(s_p, s_q) = cmp(A'_p, A'_q) - cmp(B'_p, B'_q) (weighted by its class pair's constant),
s the swap flags.  Swapping both items exchanges A' and B' in that term, so f(1 - s_p, 1 - s_q) = -f(s_p, s_q):
an odd function on {0, 1}^2, hence linear in sigma = 1 - 2 s (a function c0 + c1 sigma_p + c2 sigma_q + c3 sigma_p
sigma_q that is odd has c0 = c3 = 0).  Top-k accuracy is a sum of per-item credits.  So D = sum_i sigma_i L_i with
each item's influence L_i computed once (:func:`swap_influences`), and a pattern costs O(items) for every metric;
Hoeffding's inequality bounds the exact p-value by exp(-t^2 / (2 sum L_i^2)) (:func:`swap_bound`; McDiarmid's
with the exact differences 2 |L_i|).  ``tests/compare/test_report_multiclass_probabilities.py`` checks every
pattern's D against the metrics recomputed from the swapped matrices.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

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
    double_ranks: np.ndarray  # (M, n, K) int32 (twice a midrank: < 2 n <= 2**26)
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
        np.ascontiguousarray(np.stack([t[0] for t in tables]), dtype=np.int32), orders,
        np.ascontiguousarray(np.stack([t[2] for t in tables])), credit,
        np.ascontiguousarray(credit[:, :, np.arange(codes.size), codes]),
        np.ascontiguousarray(codes[orders]))


def scores_memory(true_counts, K: int, models: int, metrics: tuple, R: int, resamples: int) -> float:
    """Peak bytes of the probability metrics' answers (:func:`score_null`, :func:`score_bootstrap` and the readers of
    both), an upper bound: the null's pass where it is enumerated holds every arrangement of the labels, up to
    :data:`tablegen.lookup.multiclass_scores.EXACT_ARRANGEMENTS` rows whatever R
    (:func:`~.multiclass_tests.pass_memory`: 160 MB of values at 20 models and five columns); the bootstrap's
    resamples and every model's values with each item left out; every model's tables as :func:`prepare_scores`
    builds them, per item and class: 24 bytes kept until the stacking ends (:func:`~tablegen.compute.multiclass_scores.
    score_tables`' int64 ranks, two int32 tables, a float64 credit), 24 stacked (ranks, orders, tie groups and labels
    along each column as int32s, the int64 ranks' 8 while converted), its matrix and top-k credits (8 (1 + ks)), and
    64 besides for one model's sorting scratch (tracemalloc: 66 bytes per model, item and class at 4 x 10^4 items).

    Examples
    --------
    >>> enumerated = scores_memory([6, 5, 3], 3, 20, ("hand_till_auc", "ovr_macro_auc", "top_1_accuracy"), 100, 2000)
    >>> round(enumerated / 1e6)  # 168,168 arrangements enumerated, though R = 100
    143
    """
    from tablegen.compare.report.multiclass_tests import pass_memory, pass_rows
    from tablegen.lookup.multiclass_scores import EXACT_ARRANGEMENTS

    n = int(np.sum(true_counts))
    ks = len({k for k in map(top_k_of, metrics) if k is not None})
    columns = 2 + ks
    tables = models * n * K * (56.0 + 8.0 * ks) + 64.0 * n * K
    return (pass_memory(pass_rows(true_counts, R, EXACT_ARRANGEMENTS), models, columns)
            + pass_memory(resamples, models, columns) + 8.0 * models * n * columns + tables)


def observed_scores(sp: ScorePrepared) -> np.ndarray:
    """(M, columns): every model's values as the labels stand (those of :func:`tablegen.multiclass_scores_test`, bit
    for bit)."""
    from tablegen.compute.kernels.multiclass_scores import COLUMNS, TOP_K, arrangement_values

    M = len(sp.names)
    out = np.empty((M, len(sp.columns)))
    row = np.empty((1, len(COLUMNS)))
    for m in range(M):
        # int64 ranks, as score_tables gives them (the lookup's call): one compiled arrangement_values, not two
        tables = (sp.double_ranks[m].astype(np.int64), sp.orders[m], sp.group_last[m])
        for j in range(max(1, len(sp.ks))):
            credit = sp.credit[m, j] if sp.ks else np.zeros((sp.n, sp.K))
            arrangement_values(sp.true_codes, *tables, credit, sp.true_counts, sp.hand_till, row, 0)
            out[m, :2] = row[0, :2]
            if sp.ks:
                out[m, 2 + j] = row[0, TOP_K]
    return out


def score_null(sp: ScorePrepared, R: int, seed: int, progress: Callable | None = None,
               device: str = "cpu") -> PermutationNull:
    """Every model's probability metrics on each distinct arrangement of the labels (exact, at most
    :data:`tablegen.lookup.multiclass_scores.EXACT_ARRANGEMENTS`) or on R keyed shuffles shared by the models
    (scored on ``device``, ``"cpu"`` or ``"cuda"``: the kernel or its CUDA twin, the same values)."""
    from tablegen.compare.report.multiclass_tests import enumerated_arrangements
    from tablegen.compute.kernels import multiclass_scores as kernels
    from tablegen.compute.kernels.cuda.device import twin
    from tablegen.lookup.multiclass_scores import EXACT_ARRANGEMENTS

    M, width = len(sp.names), len(sp.columns)
    tables = (sp.double_ranks, sp.orders, sp.group_last, sp.credit, sp.true_counts, sp.hand_till)
    arrangements = enumerated_arrangements(sp.true_counts, EXACT_ARRANGEMENTS)
    if arrangements is not None:
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
def swap_influences(sp: ScorePrepared, a: int, b: int) -> np.ndarray:
    """(n, columns): each item's influence L_i on the swap difference of models ``a`` and ``b``, per kernel column:
    D(sigma) = metric(A') - metric(B') = sum_i sigma_i L_i exactly, sigma_i = +1 where item i keeps its rows and -1
    where they are swapped (the module docstring proves it); L_i = 0 where the two rows are equal.

    A pair term of an AUC compares item p's score with item q's in one column: with A' and B' exchanging every
    row, f(s_p, s_q) = cmp(A'_p, A'_q) - cmp(B'_p, B'_q) is odd (f(1 - s) = -f(s)), so it is a_pq sigma_p +
    b_pq sigma_q with a_pq = (G_q(A_p) - G_q(B_p)) / 2, G_q(v) = cmp(v, A_q) + cmp(v, B_q), and b_pq = (H_p(A_q) -
    H_p(B_q)) / 2, H_p(v) = cmp(A_p, v) + cmp(B_p, v) (cmp 1, 1/2 on a tie, 0).  Summed over a class, G and H are
    counts of the class's 2 n_c scores below and above v (ties 1/2): two binary searches.  Top-k: L_i = (credit
    under A - credit under B) / n.

    Examples
    --------
    >>> P = np.array([[0.9, 0.1], [0.2, 0.8]])  # ranks both items right
    >>> data = type("Data", (), {"probabilities": {"a": P, "b": P[:, ::-1]}, "true_codes": np.array([0, 1]),
    ...                          "K": 2, "classes": (0, 1)})()
    >>> sp = prepare_scores(data, ("hand_till_auc", "top_1_accuracy"))
    >>> swap_influences(sp, 0, 1).tolist()  # AUC 1 - 0 = L_0 + L_1; item 0 swapped alone: 0 - 1 = -L_0 + L_1
    [[1.0, 1.0, 0.5], [0.0, 0.0, 0.5]]
    """
    n, K = sp.n, sp.K
    A, B = sp.matrices[a], sp.matrices[b]
    y = sp.true_codes
    counts = sp.true_counts.astype(float)
    members = [np.flatnonzero(y == c) for c in range(K)]
    out = np.zeros((n, len(sp.columns)))

    def block(column: int, positives: np.ndarray, negatives: np.ndarray, weight: float, into: int) -> None:
        """Add the pair terms (positive above negative in ``column``) times ``weight`` to ``out[:, into]``."""
        below = np.sort(np.concatenate([A[negatives, column], B[negatives, column]]))
        above = np.sort(np.concatenate([A[positives, column], B[positives, column]]))

        def twice_below(sorted_values, v):  # 2 (values below v) + (values equal to v)
            return np.searchsorted(sorted_values, v, "left") + np.searchsorted(sorted_values, v, "right")

        g = twice_below(below, A[positives, column]) - twice_below(below, B[positives, column])
        h = twice_below(above, B[negatives, column]) - twice_below(above, A[negatives, column])
        out[positives, into] += weight * g / 4.0
        out[negatives, into] += weight * h / 4.0

    pairs = K * (K - 1) / 2
    for i in range(K if np.all(counts > 0) else 0):  # the AUCs need every class (top-k alone does not)
        others = np.flatnonzero(y != i)
        block(i, members[i], others, 1.0 / (K * counts[i] * (n - counts[i])), 1)
        for j in range(K):
            if j != i:
                block(i, members[i], members[j], 1.0 / (2.0 * counts[i] * counts[j] * pairs), 0)
    for jk in range(len(sp.ks)):
        out[:, 2 + jk] = (sp.credit_true[a, jk] - sp.credit_true[b, jk]) / n
    return out


def swap_bound(influences: np.ndarray, observed: float) -> float:
    """Hoeffding's bound on Pr(D >= observed) over the swap patterns, D = sum_i sigma_i L_i a Rademacher sum:
    exp(-t^2 / (2 sum L_i^2)), t the observed difference less the snap tolerance and rounding (1 where it says
    nothing).

    Examples
    --------
    >>> round(swap_bound(np.full(100, 0.01), 0.2), 6)  # exp(-0.04 / (2 * 100 * 1e-4)) = e^-2
    0.135335
    """
    from tablegen.compute.swap_bounds import ROUNDING

    spread = float(np.sum(np.square(influences))) * (1.0 + 1e-9)  # the doubles' rounding, generously
    t = observed - SNAP_TOLERANCE - ROUNDING
    if t <= 0 or spread == 0.0:
        return 1.0
    return float(min(1.0, math.exp(-t * t / (2.0 * spread))))


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

        swap = twin(kernels.linear_swap_differences, self.device)
        moving = np.any(self.sp.matrices[a] != self.sp.matrices[b], axis=1)
        influences = np.ascontiguousarray(swap_influences(self.sp, a, b)[moving])
        d, width = influences.shape
        key = resample_key(self.seed, self.sp.n, d, kernels.SCORES_SWAP_TAG)
        observed = np.empty((1, width))
        kernels.linear_swap_differences(influences, *key, 0, True, observed)  # pattern 0: no item swapped
        observed = observed[0]
        answers = {}
        if d <= EXACT_SWAP_ITEMS:
            out = np.empty((1 << d, width))
            swap(influences, *key, 0, True, out)
            for column in self.columns:
                hits = int(np.count_nonzero(out[:, column] >= observed[column] - SNAP_TOLERANCE))
                p = hits / out.shape[0]
                answers[column] = _PairAnswer("permutation", p, (p, p))
            return answers
        tau = 1.0 / (self.R + 1)
        active = []
        for column in self.columns:
            bound = swap_bound(influences[:, column], float(observed[column]))
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
            swap(influences, *key, drawn, False, out)
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
    from tablegen.compare.pairwise.paired import PairedTestResult, PairwiseResult, PValueBound

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
    beaten = {b for (_, b), t in tests.items() if (len(names) - 1) * t.p_value <= alpha}
    result = PairwiseResult(metric, names[w], tests, adjusted, tuple(m for m in names if m not in beaten), alpha)
    bounds = result.adjusted_is_bound()
    return replace(result, adjusted_p_values={pair: PValueBound(p) if bounds[pair] else p
                                                          for pair, p in adjusted.items()})
