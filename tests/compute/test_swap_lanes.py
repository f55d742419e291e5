"""The paired swap kernel with 64 patterns per walk (:mod:`tablegen.compute.kernels.swap_lanes`) against the swap
kernel (:func:`~tablegen.compute.kernels.swaps.swap_differences`, itself checked against sorting each pattern and
the registry's scorers in ``test_swaps.py`` and ``tests/compare/test_pairwise.py``): every difference bit for bit,
with and without tied scores (ties within a model and across the two), whole groups of 64 and remainders, every
subset of the lanes' columns; the paired tests take the lanes exactly where they apply."""

import numpy as np
import pytest
from kerneltools import recorded_calls

from tablegen.compute.kernels.ranking import mcc_weights
from tablegen.compute.kernels.swap_lanes import lane_swap_differences, swap_lanes_apply
from tablegen.compute.kernels.swaps import swap_differences, swap_order
from tablegen.compute.stats import midranks


def _arguments(n, seed, decimals):
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.3).astype(np.uint8)
    labels[:2] = (1, 0)
    P = int(labels.sum())
    a, b = 0.5 * labels + rng.normal(size=n), 0.7 * labels + rng.normal(size=n)
    if decimals is not None:
        a, b = np.round(a, decimals), np.round(b, decimals)
    items, sources, values = swap_order(midranks(a) / n, midranks(b) / n)
    return items, sources, values, labels, P, mcc_weights(P, n - P, n + 1)


def _differences(kernel, arguments, columns, rows, seed):
    items, sources, values, labels, P, weights = arguments
    out = np.empty((len(columns), rows))
    kernel(items, sources, values, labels, P, np.asarray(columns, np.int64), 0, weights, False, np.uint64(seed),
           np.uint64(17), 3, out)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_lanes_give_the_swap_kernels_differences_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(63, 300))
    columns = sorted(set(rng.choice(5, int(rng.integers(1, 6))).tolist()))
    rows = [64, 2 * 64 + int(rng.integers(1, 64)), int(rng.integers(1, 64))][seed % 3]
    arguments = _arguments(n, seed, [None, 1, 0][seed % 3])
    expected = _differences(swap_differences, arguments, columns, rows, seed)
    assert np.array_equal(_differences(lane_swap_differences, arguments, columns, rows, seed), expected), (
        seed, n, columns, rows)


def test_every_lane_column_at_ten_thousand_items():
    arguments = _arguments(10_000, 4, 2)
    columns = [0, 1, 2, 3, 4]
    assert np.array_equal(_differences(lane_swap_differences, arguments, columns, 64 + 5, 4),
                          _differences(swap_differences, arguments, columns, 64 + 5, 4))


def test_lanes_apply_to_random_patterns_of_their_columns_only():
    assert swap_lanes_apply([0, 1, 2, 3, 4], exact=False)
    assert not swap_lanes_apply([1], exact=True)  # an enumeration: the swap kernel
    assert not swap_lanes_apply([1, 5], exact=False) and not swap_lanes_apply([6], exact=False)


def test_the_paired_tests_walk_lanes_where_they_apply(monkeypatch):
    from tablegen.compare.pairwise.tests import swap_nulls
    from tablegen.compute.kernels import swap_lanes

    calls = recorded_calls(monkeypatch, swap_lanes, "lane_swap_differences", 5)
    rng = np.random.default_rng(2)
    y = np.r_[np.ones(40), np.zeros(60)].astype(int)
    a, b = y + rng.normal(size=100), 0.5 * y + rng.normal(size=100)
    key = (np.uint64(1), np.uint64(2))
    lanes, _ = swap_nulls(y, a, b, [1, 4], 0, R=200, key=key)
    assert calls == [[1, 4]]
    scalar, _ = swap_nulls(y, a, b, [1, 4, 5], 0, R=200, key=key)  # best MCC: the swap kernel, the same patterns
    assert calls == [[1, 4]] and np.array_equal(scalar[:2], lanes)
