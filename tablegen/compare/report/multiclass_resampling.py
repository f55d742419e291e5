"""The K-class report's resampling answers: the paired tests between models (exact McNemar on accuracy, the swap
permutation of two models' predictions on the other metrics) and the stratified bootstrap intervals, every model and
metric from one pass (:mod:`.multiclass_tests` holds the null's pass, the verdicts and max-T)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tablegen.compare.report.multiclass_tests import BLOCK, EXACT_SWAP_ITEMS, METRICS, Prepared, confusions
from tablegen.compute.exact.nulls import SNAP_TOLERANCE


# -- paired tests -----------------------------------------------------------------------------------------
class SwapCache:
    """Each pair's swap differences (every metric's column from one pass), computed when first asked."""

    def __init__(self, prep: Prepared, R: int, seed: int, device: str = "cpu"):
        self.prep, self.R, self.seed, self.device = prep, R, seed, device
        self._rows: dict = {}

    def differences(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """((patterns, 4) differences A - B, the observed (4,) differences, exact) of models ``a`` and ``b`` (column
        indices); the observed scored as the patterns are (macro-F1 over the classes of the labels and of either
        model)."""
        if (a, b) not in self._rows:
            self._rows[a, b] = self._compute(a, b)
        return self._rows[a, b]

    def _compute(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray, bool]:
        from tablegen.compute.kernels import multiclass_resample as kernels
        from tablegen.compute.kernels.cuda.device import twin

        prep = self.prep
        pa, pb = prep.predicted[:, a], prep.predicted[:, b]
        differ = pa != pb
        same = ~differ
        K = prep.K
        base_tp = np.bincount(prep.true_codes[same & (pa == prep.true_codes)], minlength=K).astype(np.int64)
        base_pc = np.bincount(pa[same], minlength=K).astype(np.int64)
        d = int(np.count_nonzero(differ))
        exact = d <= EXACT_SWAP_ITEMS
        patterns = 1 << d if exact else self.R
        key = kernels.resample_key(self.seed, prep.n, d, kernels.SWAP_TAG)
        f1 = int(np.count_nonzero((prep.true_counts + prep.predicted_counts[a] + prep.predicted_counts[b]) > 0))
        items = (np.ascontiguousarray(prep.true_codes[differ]), np.ascontiguousarray(pa[differ]),
                 np.ascontiguousarray(pb[differ]), base_tp, base_pc, prep.true_counts, prep.weights,
                 prep.recall_classes, f1, prep.n, *key, 0)
        out = np.empty((patterns, len(METRICS)))
        twin(kernels.swap_differences, self.device)(*items, exact, out)
        observed = np.empty((1, len(METRICS)))
        kernels.swap_differences(*items, True, observed)  # pattern 0: no item swapped
        return out, observed[0], exact


def paired_tests(prep: Prepared, observed: np.ndarray, metric: str, alpha: float, swaps: SwapCache,
                 boot) -> object:
    """The winner (largest value) against each other model on ``metric``, one-sided, Holm-adjusted, with the
    confidence set of the best (:class:`~tablegen.compare.pairwise.paired.PairwiseResult`)."""
    from tablegen.compare.datasets.analysis import adjust_p_values
    from tablegen.compare.pairwise.paired import PairwiseResult

    column = METRICS.index(metric)
    names = prep.names
    x = observed[:, column]
    w = int(np.argsort(-x, kind="stable")[0])
    tests = {}
    for m in range(len(names)):
        if m != w:
            tests[names[w], names[m]] = _pair(prep, observed, metric, column, w, m, swaps, boot)
    adjusted = dict(zip(tests, adjust_p_values([t.p_value for t in tests.values()], "holm").tolist()))
    beaten = {b for (_, b), t in tests.items() if (len(names) - 1) * t.p_value <= alpha}
    best_set = tuple(m for m in names if m not in beaten)
    return PairwiseResult(metric, names[w], tests, adjusted, best_set, alpha)


def _pair(prep, observed, metric, column, a, b, swaps, boot):
    from tablegen.compare.pairwise.paired import PairedTestResult
    from tablegen.compare.pairwise.tests import mcnemar_p
    from tablegen.compute.stats import CI_LEVEL, clopper_pearson

    va, vb = float(observed[a, column]), float(observed[b, column])
    interval = functools.partial(boot.difference_interval, a, b, column)
    if metric == "accuracy":
        right_a = prep.predicted[:, a] == prep.true_codes
        right_b = prep.predicted[:, b] == prep.true_codes
        only_a, only_b = int(np.count_nonzero(right_a & ~right_b)), int(np.count_nonzero(right_b & ~right_a))
        return PairedTestResult(metric, va, vb, va - vb, float(only_a), mcnemar_p(only_a, only_b, "greater"),
                                "mcnemar", "greater", _interval=interval)
    differences, observed, exact = swaps.differences(a, b)
    column_values = differences[:, column]
    hits = int(np.count_nonzero(column_values >= observed[column] - SNAP_TOLERANCE))
    observed_difference = va - vb
    M = column_values.size
    if exact:
        p, p_interval = hits / M, (hits / M, hits / M)
    else:
        low, high = clopper_pearson(hits, hits, M, CI_LEVEL)
        p, p_interval = (hits + 1) / (M + 1), (float(low), float(high))
    return PairedTestResult(metric, va, vb, observed_difference, observed_difference, float(p), "permutation",
                            "greater", None if exact else M, None if exact else swaps.seed, p_interval,
                            _interval=interval)


# -- bootstrap intervals ----------------------------------------------------------------------------------
@dataclass
class Bootstrap:
    """The stratified resamples of every model (``values`` (B, M, 4)) and each model's leave-one-out values per
    confusion cell (``left_out`` (M, K, K, 4)), for BCa intervals of a value or of a difference."""

    prep: Prepared
    observed: np.ndarray
    values: np.ndarray
    left_out: np.ndarray
    level: float = 0.95

    def _jackknife(self, per_item: Callable) -> tuple:
        """The leave-one-out values of each class's items (scipy's multi-sample jackknife), from per-item values."""
        prep = self.prep
        return tuple(per_item(np.flatnonzero(prep.true_codes == k), k) for k in range(prep.K)
                     if prep.true_counts[k] > 0)

    def _item_values(self, m: int, column: int):
        return lambda items, k: self.left_out[m, k, self.prep.predicted[items, m], column]

    def interval(self, m: int, column: int) -> tuple[float, float] | None:
        """Model m's BCa interval of metric ``column``; (v, v) where every resample has the same value; None
        where the law is degenerate."""
        from tablegen.compare.pairwise.bootstrap import interval_from_resamples

        values = self.values[:, m, column]
        observed = float(self.observed[m, column])
        if np.ptp(values) == 0:
            return (observed, observed)
        low, high = interval_from_resamples(observed, values, self._jackknife(self._item_values(m, column)),
                                            self.level, "BCa")
        return None if math.isnan(low) or math.isnan(high) else (low, high)

    def difference_interval(self, a: int, b: int, column: int) -> tuple[float, float]:
        """The BCa interval of value(a) - value(b) over the shared resamples (NaN ends where degenerate)."""
        from tablegen.compare.pairwise.bootstrap import interval_from_resamples

        values = self.values[:, a, column] - self.values[:, b, column]
        observed = float(self.observed[a, column] - self.observed[b, column])
        if np.ptp(values) == 0:
            return (observed, observed)
        fa, fb = self._item_values(a, column), self._item_values(b, column)
        return interval_from_resamples(observed, values, self._jackknife(lambda i, k: fa(i, k) - fb(i, k)),
                                       self.level, "BCa")


def bootstrap(prep: Prepared, observed: np.ndarray, resamples: int, seed: int,
              progress: Callable | None = None, device: str = "cpu") -> Bootstrap:
    """``resamples`` stratified resamples of every model (scored on ``device``, ``"cpu"`` or ``"cuda"``: the kernel or
    its CUDA twin, the same values), and the leave-one-out values."""
    from tablegen.compute.kernels import multiclass_resample as kernels
    from tablegen.compute.kernels.cuda.device import twin

    order = np.argsort(prep.true_codes, kind="stable")
    starts = np.r_[0, np.cumsum(prep.true_counts)].astype(np.int64)
    key = kernels.resample_key(seed, prep.n, prep.K, kernels.BOOTSTRAP_TAG)
    M = len(prep.names)
    out = np.empty((resamples, M, len(METRICS)))
    for first in range(0, resamples, BLOCK):
        twin(kernels.stratified_resamples, device)(order, starts, prep.predicted, prep.true_counts, prep.weights,
                                                   prep.recall_classes, prep.f1_classes, *key, first,
                                                   out[first:first + BLOCK])
        if progress is not None:
            progress(min(first + BLOCK, resamples), resamples)
    return Bootstrap(prep, observed, out, _left_out(prep))


def _left_out(prep: Prepared) -> np.ndarray:
    """(M, K, K, 4): each model's metrics with one item of true class k predicted j left out (NaN where there is no
    such item)."""
    from tablegen.compute.kernels.multiclass_resample import confusion_scores

    matrices = confusions(prep)
    M, K = matrices.shape[0], prep.K
    out = np.full((M, K, K, len(METRICS)), np.nan)
    for m in range(M):
        cells = np.argwhere(matrices[m] > 0)
        left = np.repeat(matrices[m][None], len(cells), axis=0)
        left[np.arange(len(cells)), cells[:, 0], cells[:, 1]] -= 1
        scored = np.empty((len(cells), len(METRICS)))
        confusion_scores(left, np.full(len(cells), prep.f1_classes[m]), scored)
        out[m, cells[:, 0], cells[:, 1]] = scored
    return out
