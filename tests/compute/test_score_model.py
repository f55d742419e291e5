"""The label-permutation kernel's per-model walk (:func:`tablegen.compute.kernels.permutation.score_model`), which
closes tie groups by selects (but where closes are sparse), against the walk it replaced, which branched at each
group end (kept here as the oracle, unchanged but for its name): every kernel column (0-5 and tp_at_k at cut-offs
on a group end, inside a tied group (NaN), at n and beyond) gives the same float, bit for bit, on random labels and
orders with no ties, some ties, heavy ties and random ties (group ends placed at random, as swapped ranks give,
many or few: both sides of ``SPARSE_CLOSES``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.permutation import SCORED_COLUMNS, SPARSE_CLOSES, score_model
from tablegen.compute.kernels.ranking import mcc_weights


@jit_cached()
def branching_score_model(labels, order, group_end, n_pos, column, k_cut, weights):
    """``score_model`` before its closes became selects (tablegen 2026-11-28)."""
    n = order.size
    n_neg = n - n_pos
    tp = 0
    tp_before = 0
    fp_before = 0
    u2 = 0
    best_d = 0
    best_f1 = 0.0
    best_g = 0
    ap = 0.0
    best_m = 0.0
    tpk = n_pos if k_cut >= n else -1  # -1 until a group ends at k: NaN if none does (ties straddle k)
    for j in range(n):
        tp += labels[order[j]]
        if group_end[j]:
            k = j + 1
            fp = k - tp
            if column == 0:
                gp = tp - tp_before
                u2 += 2 * gp * (n_neg - fp) + gp * (fp - fp_before)
            elif column == 1:
                best_d = max(best_d, tp - fp)
            elif column == 2:
                best_f1 = max(best_f1, (2 * tp) / (n_pos + k))
            elif column == 3:
                best_g = max(best_g, tp * n_neg - fp * n_pos)
            elif column == 4:
                ap += (tp - tp_before) * (tp / k)
            elif column == 5:
                best_m = max(best_m, (tp * n_neg - fp * n_pos) * weights[k])
            elif k == k_cut:
                tpk = tp
            tp_before = tp
            fp_before = fp
    if column == 0:
        return (u2 * 0.5) / (n_pos * n_neg)
    if column == 1:
        return (best_d + n_neg) / (n_pos + n_neg)
    if column == 2:
        return best_f1
    if column == 3:
        return (best_g + n_pos * n_neg) / (2 * n_pos * n_neg)
    if column == 4:
        return ap / n_pos
    if column == 5:
        return min(best_m, 1.0)
    return math.nan if tpk < 0 else float(tpk)


def _case(rng, n, ties):
    """Labels (both classes), a model's order by descending score (ties in item order) and its group ends."""
    labels = (rng.random(n) < rng.uniform(0.05, 0.95)).astype(np.uint8)
    first = rng.integers(n)
    labels[first], labels[(first + 1) % n] = 1, 0
    if ties in ("random", "few"):  # group ends anywhere, as a swapped vector's ranks give them
        order = rng.permutation(n)
        group_end = (rng.random(n) < (rng.uniform(0.2, 0.9) if ties == "random" else 0.01)).astype(np.uint8)
        group_end[-1] = 1
        return labels, order, group_end
    levels = {"none": 1e9, "some": 3.0, "heavy": 0.4}[ties]
    scores = np.round((labels + rng.normal(size=n)) * levels)
    order = np.lexsort((np.arange(n), -scores))
    sorted_scores = scores[order]
    group_end = np.ones(n, np.uint8)
    group_end[:-1] = sorted_scores[:-1] != sorted_scores[1:]
    return labels, order, group_end


def _bits(value: float) -> int:
    return int(np.float64(value).view(np.int64))


TIES = ["none", "some", "heavy", "random", "few"]


@pytest.mark.parametrize("ties", TIES)
def test_every_column_is_the_branching_walks_float_bit_for_bit(ties):
    rng = np.random.default_rng(TIES.index(ties))
    compared = nan_seen = 0
    sparse = set()  # whether closes were sparse (AUC, best F1 and average precision branch there), per case
    for n in [2, 3, 5, 8, 13, 40, 97, 300, 2000] * 6:
        labels, order, group_end = _case(rng, n, ties)
        sparse.add(bool(np.count_nonzero(group_end) * SPARSE_CLOSES < n))
        P = int(labels.sum())
        weights = mcc_weights(P, n - P, n + 1)
        cuts = sorted({0, 1, n - 1, n, n + 3, *rng.integers(1, n + 1, size=4).tolist()})
        for column in range(SCORED_COLUMNS):
            for k_cut in cuts if column == SCORED_COLUMNS - 1 else [0]:
                new = score_model(labels, order, group_end, P, column, k_cut, weights)
                old = branching_score_model(labels, order, group_end, P, column, k_cut, weights)
                assert _bits(new) == _bits(old), (ties, n, column, k_cut, new, old)
                compared += 1
                nan_seen += math.isnan(old)
    assert compared > 500
    if ties != "none":
        assert nan_seen > 0  # tied groups straddled some cut-offs: the NaN case was compared too
    if ties in ("heavy", "few"):
        assert sparse == {True, False}  # both walks compared
    elif ties in ("none", "random"):
        assert sparse == {False}


def test_degenerate_walks_keep_the_branching_walks_floats():
    """Every positive last (each maximum stays at the empty cut-off's 0), one positive, one negative, one group."""
    for labels in ([0, 0, 0, 1, 1], [1, 0, 0, 0, 0], [1, 1, 1, 1, 0], [0, 1]):
        labels = np.array(labels, np.uint8)
        n, P = labels.size, int(labels.sum())
        weights = mcc_weights(P, n - P, n + 1)
        for group_end in (np.ones(n, np.uint8), np.r_[np.zeros(n - 1), 1].astype(np.uint8)):
            for column in range(SCORED_COLUMNS):
                for k_cut in range(n + 2):
                    new = score_model(labels, np.arange(n), group_end, P, column, k_cut, weights)
                    old = branching_score_model(labels, np.arange(n), group_end, P, column, k_cut, weights)
                    assert _bits(new) == _bits(old), (labels, group_end, column, k_cut, new, old)
