"""The max-T kernel with 64 arrangements per walk (:mod:`tablegen.compute.kernels.permutation_lanes`) against the
scalar kernel (:func:`~tablegen.compute.kernels.permutation.permutation_metrics_counts`, itself checked against the
registry's scorers and recorded counts in ``tests/compare/test_selection_fused.py``): every maximum and every raw
and step-down count bit for bit, with and without tied scores, blocks of whole groups of 64 and with remainders,
every subset of the lanes' columns; the selection engine takes the lanes exactly where they apply."""

import numpy as np
import pytest
from kerneltools import recorded_calls

from tablegen.compare.selection.engine import models_sorted
from tablegen.compute.kernels.permutation import F1_ARGMAX_ITEMS, permutation_metrics_counts
from tablegen.compute.kernels.permutation_lanes import LANES, lane_metrics_counts, lanes_apply
from tablegen.compute.kernels.ranking import mcc_weights


def _arguments(n, models, columns, seed, decimals):
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.3).astype(np.int64)
    labels[:2] = (1, 0)
    P = int(labels.sum())
    scores = np.stack([(0.1 + 0.3 * j) * labels + rng.normal(size=n) for j in range(models)])
    if decimals is not None:
        scores = np.round(scores, decimals)  # tied scores: groups that close together
    s = models_sorted(scores)
    columns = np.asarray(columns, np.int64)
    T = columns.size
    members = np.tile(np.arange(models), (T, 1))
    thresholds = np.sort(rng.uniform(0.3, 0.9, (T, models)), axis=1)[:, ::-1].copy()  # some reached, some not
    ranked = np.tile(np.arange(models), (T, 1))
    return (s.orders, s.group_ends, s.double_ranks, s.untied, P, columns, np.zeros(T, np.int64),
            mcc_weights(P, n - P, n + 1), members, np.full(T, models), thresholds, ranked, np.uint64(seed),
            np.uint64(99), 5)


def _counts(kernel, arguments, rows):
    T, models = arguments[8].shape
    maxima, raw, step = np.empty((T, rows)), np.zeros((T, models), np.int64), np.zeros((T, models), np.int64)
    kernel(*arguments, maxima, raw, step)
    return maxima, raw, step


@pytest.mark.parametrize("seed", range(12))
def test_lanes_count_as_the_scalar_kernel_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n, models = int(rng.integers(3, 200)), int(rng.integers(1, 6))
    columns = sorted(set(rng.choice(5, int(rng.integers(1, 6))).tolist()))
    rows = [LANES, 2 * LANES + int(rng.integers(1, LANES)), int(rng.integers(1, LANES))][seed % 3]
    arguments = _arguments(n, models, columns, seed, [None, 1, 0][seed % 3])
    expected, found = _counts(permutation_metrics_counts, arguments, rows), _counts(lane_metrics_counts, arguments,
                                                                                     rows)
    for scalar, lanes in zip(expected, found):
        assert np.array_equal(scalar, lanes), (seed, n, models, columns, rows)


def test_every_metric_at_once_at_ten_thousand_items():
    arguments = _arguments(10_000, 3, [0, 1, 2, 3, 4], 3, 2)
    for scalar, lanes in zip(_counts(permutation_metrics_counts, arguments, LANES + 3),
                             _counts(lane_metrics_counts, arguments, LANES + 3)):
        assert np.array_equal(scalar, lanes)


def test_lanes_apply_to_their_columns_and_sizes_only():
    assert lanes_apply([0, 1, 2, 3, 4], 1000) and lanes_apply([4], F1_ARGMAX_ITEMS)
    assert not lanes_apply([1, 5], 1000)  # best MCC: the scalar kernel
    assert not lanes_apply([6], 1000)  # TP at k
    assert not lanes_apply([1], F1_ARGMAX_ITEMS + 1)


def test_the_selection_engine_walks_lanes_where_they_apply(monkeypatch):
    from tablegen.compare.selection.maxt import selection_tests
    from tablegen.compute.kernels import permutation_lanes

    calls = recorded_calls(monkeypatch, permutation_lanes, "lane_metrics_counts", 5)
    rng = np.random.default_rng(4)
    y = np.r_[np.ones(40, int), np.zeros(60, int)]
    scores = {f"m{i}": y * (0.2 * i) + rng.normal(size=100) for i in range(3)}
    selection_tests(y, scores, metrics=["auc", "best_f1"], R=500, seed=1)
    assert calls and all(set(columns) <= {0, 2} for columns in calls)


@pytest.mark.parametrize("n, n_pos", [(7, 3), (1000, 300), (300_000, 90_000)])
def test_the_lockstep_draws_are_each_replicates_own_arrangement(n, n_pos):
    """The 64 arrangements drawn in lockstep are sample_labels' arrangements, bit for bit; at 3 * 10^5 items each
    replicate meets Lemire's rejection about ten times (n^2 / 2^33), every one redrawn from its own stream."""
    from tablegen.compute.kernels.permutation import sample_labels
    from tablegen.compute.kernels.permutation_lanes import DRAW_SLOTS, _pack

    key0, key1, first = np.uint64(2024), np.uint64(77), 130
    packed, work = np.empty(n, np.int64), np.empty(DRAW_SLOTS * LANES, np.int64)
    _pack(key0, key1, first, n_pos, work, packed)
    labels = np.empty(n, np.uint8)
    for lane in range(LANES):
        sample_labels(key0, key1, first + lane, n_pos, labels)
        assert np.array_equal((packed >> lane) & 1, labels), lane
