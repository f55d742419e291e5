"""The tail accumulator's merge is exact, associative and order-independent."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablegen.compute.accumulator import (
    TailStream,
    tail_add,
    tail_count_at_least,
    tail_empty,
    tail_merge,
    tail_upper_order,
)

# Few distinct values, so ties at the truncation boundary are the rule rather than the exception.
samples = st.lists(st.integers(0, 12).map(float), min_size=0, max_size=120)


def as_multiset(tail):
    return list(np.repeat(tail.values, tail.counts)), tail.seen


def top(values, capacity):
    return sorted(values)[len(values) - min(capacity, len(values)):]


@settings(max_examples=200, deadline=None)
@given(a=samples, b=samples, c=samples, capacity=st.integers(1, 40))
def test_merge_is_associative_and_commutative(a, b, c, capacity):
    ta, tb, tc = (tail_add(tail_empty(capacity), x) for x in (a, b, c))
    left = tail_merge(tail_merge(ta, tb), tc)
    right = tail_merge(ta, tail_merge(tb, tc))
    swapped = tail_merge(tc, tail_merge(tb, ta))
    assert as_multiset(left) == as_multiset(right) == as_multiset(swapped)
    assert as_multiset(left) == (top(a + b + c, capacity), len(a) + len(b) + len(c))


@settings(max_examples=200, deadline=None)
@given(values=samples, capacity=st.integers(1, 40), cuts=st.lists(st.integers(0, 120), max_size=6),
       order=st.randoms(use_true_random=False))
def test_any_batching_and_order_gives_the_same_tail(values, capacity, cuts, order):
    edges = sorted({0, len(values), *[min(c, len(values)) for c in cuts]})
    batches = [values[i:j] for i, j in zip(edges[:-1], edges[1:])]
    order.shuffle(batches)
    sequential = tail_empty(capacity)
    for batch in batches:
        sequential = tail_add(sequential, batch)
    assert as_multiset(sequential) == (top(values, capacity), len(values))
    assert as_multiset(sequential) == as_multiset(tail_add(tail_empty(capacity), values))


def test_order_statistics_and_counts():
    rng = np.random.default_rng(3)
    values = rng.integers(0, 1000, 10_000).astype(float)
    tail = tail_empty(500)
    for batch in np.array_split(values, 13):
        tail = tail_add(tail, batch)
    descending = np.sort(values)[::-1]
    for rank in (1, 2, 250, 500):
        assert tail_upper_order(tail, rank) == descending[rank - 1]
    floor = tail.values[0]
    assert tail_count_at_least(tail, floor + 1) == np.count_nonzero(values >= floor + 1)
    assert tail_count_at_least(tail, floor) is None  # the floor's copies may be incomplete


def test_rank_beyond_the_retained_tail_is_refused():
    tail = tail_add(tail_empty(3), [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="outside the retained tail"):
        tail_upper_order(tail, 4)


# --- the streaming accumulator (numba) gives the same tail as the reduction above -----------------


def _stream_tail(batches, capacity, threshold, buffer_size):
    stream = TailStream(capacity, threshold, buffer_size=buffer_size)
    for batch in batches:
        stream.add(np.asarray(batch, dtype=float))
    return stream.tail(), stream.at_least


@settings(max_examples=150, deadline=None)
@given(values=samples, capacity=st.integers(1, 40), cuts=st.lists(st.integers(0, 120), max_size=6),
       buffer_size=st.integers(1, 9), threshold=st.integers(0, 13).map(float))
def test_stream_gives_the_tail_and_count_of_the_reduction(values, capacity, cuts, buffer_size, threshold):
    edges = sorted({0, len(values), *[min(c, len(values)) for c in cuts]})
    batches = [values[i:j] for i, j in zip(edges[:-1], edges[1:])]
    tail, at_least = _stream_tail(batches, capacity, threshold, buffer_size)
    expected = tail_add(tail_empty(capacity), np.asarray(values, dtype=float))
    assert (tail.values.tobytes(), tail.counts.tolist(), tail.seen) == (
        expected.values.tobytes(), expected.counts.tolist(), expected.seen)
    assert at_least == sum(v >= threshold for v in values)


@pytest.mark.parametrize("distinct", [50, 1 << 20])  # counted in place / past the lookup limit, buffered
def test_stream_of_many_blocks_equals_the_reduction(distinct):
    rng = np.random.default_rng(distinct)
    values = rng.integers(0, distinct, 200_000) / distinct
    blocks = np.array_split(values.reshape(-1, 4), 7)  # strided columns, as the engine passes them
    tail, at_least = _stream_tail([block[:, 1] for block in blocks], 5_000, 0.9, 1 << 10)
    expected = tail_add(tail_empty(5_000), values.reshape(-1, 4)[:, 1])
    assert tail.values.tobytes() == expected.values.tobytes() and tail.counts.tolist() == expected.counts.tolist()
    assert at_least == np.count_nonzero(values.reshape(-1, 4)[:, 1] >= 0.9) and tail.seen == 50_000
