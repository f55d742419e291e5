"""The minority-class kernel: its stream against pure Python, its scores against the numpy
reference scorers, its uniformity, and the rule that sends a cell to it."""

import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats
from test_kernel import METRICS, assert_scores_equal_reference
from test_rng import py_replicate_state, py_xoshiro

from tablegen.compute.kernels.minority import (
    MINORITY_FIXED,
    MINORITY_PER_POSITION,
    _bounded,
    simulate_minority_block,
    uses_minority_sampling,
)
from tablegen.compute.kernels.ranking import BASE_COLUMNS
from tablegen.compute.mc import KernelLayout, cell_key, score_replicates
from tablegen.compute.metrics import get_metric, metric_entries

NO_LABELS = np.empty((0, 0), np.uint8)


class PyHalves:
    """The 32-bit halves of a replicate's xoshiro256** stream, high half first (pure Python)."""

    def __init__(self, state):
        self.state, self.pending = list(state), None

    def next(self):
        if self.pending is not None:
            half, self.pending = self.pending, None
            return half
        value, self.state = py_xoshiro(self.state)
        self.pending = value & 0xFFFFFFFF
        return value >> 32


def py_bounded(halves, bound):
    """Lemire's multiply-shift with rejection, written from the paper (Lemire 2019, algorithm 5)."""
    threshold = (2**32 - bound) % bound
    while True:
        product = halves.next() * bound
        if product % 2**32 >= threshold:
            return product >> 32


def py_minority_ranking(P, N, key0, key1, replicate):
    """Labels (1 = positive, top first) of one replicate, by Floyd's algorithm in pure Python."""
    n, m = P + N, min(P, N)
    halves = PyHalves(py_replicate_state(int(key0), int(key1), replicate))
    chosen = set()
    for j in range(n - m, n):
        t = py_bounded(halves, j + 1)
        chosen.add(j if t in chosen else t)
    minority = 1 if P <= N else 0
    return np.array([minority if i in chosen else 1 - minority for i in range(n)], dtype=np.uint8)


def run_kernel(P, N, R, seed=7, first=0, metrics=METRICS):
    layout = KernelLayout.for_metrics(metric_entries(metrics), P, N)
    key0, key1 = cell_key(seed, P, N)
    out = np.empty((R, len(BASE_COLUMNS) + layout.ks.size))
    labels = np.zeros((R, P + N), np.uint8)
    simulate_minority_block(P, N, key0, key1, first, layout.ks, out, labels, layout.with_mcc)
    return layout, labels, out


@pytest.mark.parametrize("P,N", [(1, 1), (2, 9), (9, 2), (3, 40), (40, 3), (17, 17), (5, 700), (700, 5)])
def test_stream_matches_pure_python_floyd(P, N):
    _, labels, _ = run_kernel(P, N, R=12, first=1000)
    key0, key1 = cell_key(7, P, N)
    for row in range(12):
        np.testing.assert_array_equal(labels[row], py_minority_ranking(P, N, key0, key1, 1000 + row))


def test_bounded_draw_rejects_like_the_reference():
    # bound 3: threshold (2**32 - 3) % 3 = 1, so a half equal to 0 must be rejected.  Start the
    # numba draw with a pending low half of 0 and the Python one with the same half queued.
    state = py_replicate_state(11, 12, 0)
    halves = PyHalves(state)
    halves.pending = 0
    expected = py_bounded(halves, 3)
    got, *_ = _bounded(np.uint64(3), np.uint64(0), True, *(np.uint64(s) for s in state))
    assert got == expected
    # and a bound with a large rejection zone, over many draws of one stream
    halves = PyHalves(state)
    buffer, have_half, s = np.uint64(0), False, [np.uint64(x) for x in state]
    bound = 2**31 + 12345  # threshold = 2**31 - 12345: about half of all halves are rejected
    for _ in range(200):
        got, buffer, have_half, *s = _bounded(np.uint64(bound), np.uint64(buffer), have_half,
                                              *(np.uint64(x) for x in s))  # keep numba's uint64 typing
        assert got == py_bounded(halves, bound)


@pytest.mark.parametrize("P,N", [(1, 1), (1, 9), (9, 1), (2, 300), (300, 5), (37, 211), (211, 37),
                                 (5, 5), (20, 1000), (3000, 40)])
def test_scores_equal_reference_scorers(P, N):
    assert_scores_equal_reference(*run_kernel(P, N, R=300), P, N)


def test_average_precision_from_negative_positions_stays_close_at_scale():
    # Positives the majority: runs of positives are summed with harmonic numbers, not term by term.
    layout, labels, out = run_kernel(10_000, 60, R=20, metrics=("average_precision",))
    reference = get_metric("average_precision").reference_scores(labels, 10_000, 60)
    np.testing.assert_allclose(out[:, 4], reference, rtol=1e-13, atol=0)


@pytest.mark.parametrize("P,N", [(3, 9), (9, 3)])
def test_sampler_is_uniform_over_all_arrangements(P, N):
    R = 110_000
    _, labels, _ = run_kernel(P, N, R, seed=2005)
    counts = Counter(map(bytes, labels))
    assert len(counts) == math.comb(P + N, P)
    assert stats.chisquare(np.array(list(counts.values()))).pvalue > 1e-4


def test_rule_depends_on_the_cell_alone_and_is_symmetric():
    for P, N in [(20, 500), (70, 1000), (2, 300), (10, 10_000)]:
        assert uses_minority_sampling(P, N) and uses_minority_sampling(N, P)
    for P, N in [(20, 400), (100, 100), (1000, 1000), (1, 1), (7, 180)]:
        assert not uses_minority_sampling(P, N) and not uses_minority_sampling(N, P)
    m = 50  # the boundary itself
    assert uses_minority_sampling(m, MINORITY_FIXED + MINORITY_PER_POSITION * m - m)
    assert not uses_minority_sampling(m, MINORITY_FIXED + MINORITY_PER_POSITION * m - m - 1)


@pytest.mark.parametrize("P,N", [(20, 1000), (1000, 20)])
def test_engine_uses_this_kernel_for_skewed_cells(P, N):
    layout = KernelLayout.for_metrics(metric_entries(METRICS), P, N)
    key = cell_key(3, P, N)
    direct = np.empty((50, len(BASE_COLUMNS) + layout.ks.size))
    simulate_minority_block(P, N, key[0], key[1], 0, layout.ks, direct, NO_LABELS, layout.with_mcc)
    np.testing.assert_array_equal(score_replicates(P, N, key, 0, 50, layout), direct)
