"""The bootstrap kernel with 32 resamples per walk (:mod:`tablegen.compute.kernels.resample_lanes`) against the
one-resample kernel (:func:`~tablegen.compute.kernels.resample.resample_metrics`, itself checked against the
registry's scorers on explicit resamples in ``test_resample.py``): every value bit for bit (NaN where a column is not
asked), with and without tied scores, whole groups of 32 and remainders, every subset of the lanes' columns, and
resamples whose counts pass the byte's limit (a small limit, as the scalar kernel's tests use); a report's intervals
take the lanes exactly where they apply."""

import numpy as np
import pytest
from kerneltools import recorded_calls

from tablegen.compute.kernels.resample import (
    bootstrap_key,
    metric_choice,
    pass_codes,
    resample_metrics,
    sorted_models,
)
from tablegen.compute.kernels.resample_lanes import LANES, lane_resample_metrics, resample_lanes_apply


def _codes(n, models, seed, decimals):
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.3).astype(np.int64)
    labels[:2] = (1, 0)
    scores = np.stack([(0.1 + 0.3 * j) * labels + rng.normal(size=n) for j in range(models)])
    if decimals is not None:
        scores = np.round(scores, decimals)
    orders, ends = sorted_models(scores)
    P = int(labels.sum())
    return pass_codes(orders, ends, labels), P, n - P


def _values(kernel, codes, P, N, columns, rows, seed, limit):
    want, cuts = metric_choice(columns)
    out = np.empty((rows, codes.shape[0], 6))
    kernel(codes, P, N, want, cuts, *bootstrap_key(seed, P, N), 7, out, np.int64(limit))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_lanes_give_the_one_resample_kernels_values_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n, models = int(rng.integers(4, 300)), int(rng.integers(1, 4))
    columns = sorted(set(rng.choice(5, int(rng.integers(1, 6))).tolist()))
    rows = [LANES, 2 * LANES + int(rng.integers(1, LANES)), int(rng.integers(1, LANES))][seed % 3]
    limit = [255, 3, 2][seed % 3]  # small limits: resamples past the byte's limit, drawn again into eight bytes
    codes, P, N = _codes(n, models, seed, [None, 1, 0][(seed // 3) % 3])
    expected = _values(resample_metrics, codes, P, N, columns, rows, seed, limit)
    found = _values(lane_resample_metrics, codes, P, N, columns, rows, seed, limit)
    assert np.array_equal(found, expected, equal_nan=True), (seed, n, models, columns, rows, limit)


def test_every_lane_column_at_ten_thousand_items_with_ties():
    codes, P, N = _codes(10_000, 2, 5, 2)
    columns = [0, 1, 2, 3, 4]
    assert np.array_equal(_values(lane_resample_metrics, codes, P, N, columns, LANES + 3, 5, 255),
                          _values(resample_metrics, codes, P, N, columns, LANES + 3, 5, 255), equal_nan=True)


@pytest.mark.parametrize("seed", range(4))
def test_every_lane_column_without_ties_counts_and_closes_in_one_loop(seed):
    """A report's five columns on models without tied scores: each positive's count and closes in one loop over the
    lanes (the default report's path): the one-resample kernel's values, bit for bit."""
    codes, P, N = _codes(3_000 + 500 * seed, 3, seed, None)
    columns = [0, 1, 2, 3, 4]
    assert np.array_equal(_values(lane_resample_metrics, codes, P, N, columns, 2 * LANES, seed, 255),
                          _values(resample_metrics, codes, P, N, columns, 2 * LANES, seed, 255), equal_nan=True)


def test_lanes_apply_without_best_mcc_and_tp_at_k_only():
    assert resample_lanes_apply(*metric_choice([0, 1, 2, 3, 4]))
    assert not resample_lanes_apply(*metric_choice([1, 5]))
    assert not resample_lanes_apply(*metric_choice([1], [5]))


def test_a_reports_intervals_walk_lanes_where_they_apply(monkeypatch):
    from tablegen.compare.pairwise.bootstrap import BootstrapValues
    from tablegen.compute.kernels import resample_lanes
    from tablegen.compute.metrics import get_metric

    calls = recorded_calls(monkeypatch, resample_lanes, "lane_resample_metrics", 3)
    rng = np.random.default_rng(3)
    y = np.r_[np.ones(30), np.zeros(50)].astype(np.int64)
    scores = y + rng.normal(size=(2, 80))
    BootstrapValues(y, scores, [get_metric("auc"), get_metric("best_f1")], 5, resamples=100)
    assert calls == [[1, 0, 1, 0, 0, 0]]
    BootstrapValues(y, scores, [get_metric("best_mcc")], 5, resamples=100)  # best MCC: the one-resample kernel
    assert len(calls) == 1
