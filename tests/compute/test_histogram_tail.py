"""The CPU's tails: counts per listed value and bucketed streams give the reduction's tail, bit for bit.

References: exact fractions (every listed value of a kernel column is the correctly rounded ratio of
its integers), :func:`tablegen.compute.accumulator.tail_add` of the same samples, and the streaming
tail (:class:`~tablegen.compute.accumulator.TailStream`) fed the same kernel output.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablegen.compute.accumulator import BucketStream, CountedTails, TailStream, tail_add, tail_empty, value_table
from tablegen.compute.kernels.histogram_tail import column_values, value_count
from tablegen.compute.kernels.ranking import BASE_COLUMNS, TP_COLUMN
from tablegen.compute.mc import KernelLayout, cell_key, score_replicates, simulate_tails_and_counts, tail_sinks
from tablegen.compute.metrics import DEFAULT_METRICS, metric_entries


def _exact(column, P, N, k=0):
    """Every value of a listed kernel column at (P, N) from exact fractions, as correctly rounded floats."""
    if column >= TP_COLUMN:
        return {float(tp) for tp in range(min(k, P) + 1)}
    name = BASE_COLUMNS[column]
    if name == "auc":
        return {float(Fraction(u, P * N)) for u in range(P * N + 1)}
    if name == "best_accuracy":
        return {float(Fraction(d + N, P + N)) for d in range(P + 1)}
    if name == "best_balanced_accuracy":
        return {float(Fraction(g + P * N, 2 * P * N)) for g in range(P * N + 1)}
    return {0.0} | {float(Fraction(2 * tp, P + j))
                    for j in range(P + N + 1) for tp in range(max(0, j - N), min(j, P) + 1)}


def _same(tail, expected):
    return (tail.values.tobytes(), tail.counts.tolist(), tail.counts.dtype, tail.seen, tail.capacity) == (
        expected.values.tobytes(), expected.counts.tolist(), expected.counts.dtype, expected.seen, expected.capacity)


@pytest.mark.parametrize("P, N", [(3, 4), (1, 6), (7, 2), (20, 20)])
def test_listed_values_are_the_exact_fractions(P, N):
    for column in range(len(BASE_COLUMNS)):
        size = value_count(column, P, N)
        if size == 0:
            continue
        listed = column_values(column, P, N, 0, size)
        assert {float(v) for v in listed} == _exact(column, P, N), BASE_COLUMNS[column]
    assert set(column_values(TP_COLUMN, P, N, 5, value_count(TP_COLUMN, P, N, 5))) == _exact(TP_COLUMN, P, N, 5)


@pytest.mark.parametrize("P, N", [(3, 4), (9, 11), (20, 20), (20, 400)])
def test_every_kernel_value_is_counted_and_the_tail_is_the_reduction(P, N):
    """No kernel output misses its table (lane and minority kernels), and the counted tail is tail_add's."""
    metrics = metric_entries(list(DEFAULT_METRICS) + ["tp_at_3"])
    layout = KernelLayout.for_metrics(metrics, P, N)
    counted, _ = tail_sinks(P, N, layout, 500, {})
    out = score_replicates(P, N, cell_key(5, P, N), 0, 20_000, layout)
    counted.add_rows(out[:7_001])  # blocks of odd length: count_rows' last rows, one way
    counted.add_rows(out[7_001:])
    for name in counted.names:
        assert counted._missed[name].seen == 0, name
        assert _same(counted.tail(name), tail_add(tail_empty(500), out[:, layout.columns[name]])), name


def test_samples_off_the_table_are_kept_exactly():
    table = value_table(np.array([0.0, 0.25, 0.5, 1.0]), 64)
    rows = np.array([0.5, 0.3, 1.0, np.nextafter(0.5, 1.0), -0.0, 0.25, 7.0, 0.5, 1.0, -1.0])[:, None]
    counted = CountedTails({"x": (0, table)}, capacity=6, thresholds={"x": 0.5})
    counted.add_rows(rows[:4])
    counted.add_rows(rows[4:])
    assert counted._missed["x"].seen == 5  # 0.3, the next float above 0.5, -0.0 (other bits than 0.0), 7, -1
    assert _same(counted.tail("x"), tail_add(tail_empty(6), rows[:, 0]))
    assert counted.at_least("x") == 6


ties = st.lists(st.integers(-2, 12).map(lambda v: v / 8), max_size=150)
# -0.0 + 0.0 is 0.0: no kernel writes -0.0 (ratios of non-negative integers, sums of positive terms, maxima from
# +0.0), and which of two equal zeros a tail keeps is not the reduction's to say either
spread = st.lists(st.floats(-1.0, 3.0, allow_nan=False).map(lambda v: v + 0.0), max_size=150)


@settings(max_examples=80, deadline=None)
@given(values=st.one_of(ties, spread), capacity=st.integers(1, 40), cuts=st.lists(st.integers(0, 150), max_size=5),
       slack=st.integers(1, 9), threshold=st.floats(-1.0, 2.0))
def test_bucket_stream_gives_the_tail_and_count_of_the_reduction(values, capacity, cuts, slack, threshold):
    """Samples outside [low, high] (clamped buckets), heavy ties (hand-over to the streaming tail), compactions."""
    edges = sorted({0, len(values), *[min(c, len(values)) for c in cuts]})
    stream = BucketStream(capacity, 0.0, 1.0, threshold, slack=slack)
    for i, j in zip(edges[:-1], edges[1:]):
        stream.add(np.asarray(values[i:j], dtype=float))
    assert _same(stream.tail(), tail_add(tail_empty(capacity), np.asarray(values, dtype=float)))
    assert stream.at_least == sum(v >= threshold for v in values)


def test_bucket_stream_hands_heavy_ties_to_the_streaming_tail():
    values = np.repeat([0.5, 0.75], 5_000)
    np.random.default_rng(1).shuffle(values)
    stream = BucketStream(3_000, 0.0, 1.0, slack=10)
    stream.add(values[:, None][:, 0])
    assert isinstance(stream._stream, TailStream)
    assert _same(stream.tail(), tail_add(tail_empty(3_000), values))


@pytest.mark.parametrize("P, N, R", [(20, 20, 60_000), (2, 3, 5_000), (20, 1000, 3_000), (300, 200, 2_000)])
def test_simulate_tails_equals_the_streaming_tail(P, N, R):
    """The engine's CPU route (counts, buckets) gives the streaming tail's tails and counts, bit for bit."""
    metrics = metric_entries(list(DEFAULT_METRICS) + ["best_mcc", "tp_at_3"])
    thresholds = {spec.name: 0.7 for spec in metrics}
    tails, counts = simulate_tails_and_counts(P, N, R, 9, metrics, R // 10 + 1, thresholds, block_size=7_000)
    layout = KernelLayout.for_metrics(metrics, P, N)
    streams = {spec.name: TailStream(R // 10 + 1, 0.7) for spec in metrics}
    for first in range(0, R, 7_000):
        out = score_replicates(P, N, cell_key(9, P, N), first, min(7_000, R - first), layout)
        for name, stream in streams.items():
            stream.add(out[:, layout.columns[name]])
    for name, stream in streams.items():
        assert _same(tails[name], stream.tail()), name
        assert counts[name] == stream.at_least, name


def test_the_size_rule_counts_small_cells_and_streams_large_ones():
    metrics = metric_entries(DEFAULT_METRICS)
    small, streams = tail_sinks(20, 20, KernelLayout.for_metrics(metrics, 20, 20), 400_000, {})
    assert sorted(small.names) == sorted(set(DEFAULT_METRICS) - {"average_precision"})
    assert isinstance(streams["average_precision"], BucketStream)
    large, streams = tail_sinks(1000, 1000, KernelLayout.for_metrics(metrics, 1000, 1000), 50_000, {})
    assert sorted(large.names) == ["best_accuracy", "tp_at_10"]  # AUC, F1, balanced accuracy: too many values
    assert all(isinstance(stream, BucketStream) for stream in streams.values())
