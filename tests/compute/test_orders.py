"""Each score vector sorted once per report (``tablegen.compute.kernels.orders``): the same orders and midranks as
numpy's stable argsort and scipy's rankdata, one sort per distinct vector inside ``sorting_once``, none kept after."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from tablegen.compute.kernels import orders
from tablegen.compute.kernels.orders import ascending_midranks, descending_order, sorting_once, subset_order


def _vectors():
    rng = np.random.default_rng(20261129)
    yield np.zeros(0)
    yield np.array([0.5])
    yield np.array([0.0, -0.0, 0.0, 1.0])  # signed zeros compare equal: one tie group
    yield rng.normal(size=1000)
    yield rng.integers(0, 4, size=1000).astype(float)  # heavy ties
    yield np.array([np.inf, -np.inf, 1e308, -1e308, 5e-324, 0.0])
    # from FAST_SORT_ITEMS on: the vectorised sort, each tie run put back in item order (or the stable sort)
    big = orders.FAST_SORT_ITEMS + 3_000
    yield rng.normal(size=big)  # no ties
    yield np.round(rng.normal(size=big), 5)  # ~500 tie runs, put in item order one by one
    yield np.round(rng.normal(size=big), 3)  # ~3,500 runs, still one by one
    yield rng.permutation(np.repeat(np.arange(5_000.0), 4))  # 5,000 runs: past FIXED_TIE_RUNS, the stable sort
    yield rng.integers(0, 4, size=big).astype(float)  # four long runs
    yield np.where(rng.random(big) < 0.5, 0.0, -0.0) * rng.integers(0, 2, big)  # signed zeros and ones: two runs
    yield np.r_[rng.normal(size=big), np.inf, -np.inf, np.inf]


@pytest.mark.parametrize("scores", list(_vectors()), ids=lambda s: f"n{s.size}")
def test_order_and_midranks_are_numpy_and_scipy(scores):
    expected = np.argsort(-scores, kind="stable")
    assert np.array_equal(descending_order(scores), expected)
    with sorting_once():
        assert np.array_equal(descending_order(scores), expected)
        assert np.array_equal(ascending_midranks(scores), scipy.stats.rankdata(scores))
    keep = np.arange(scores.size) % 3 != 1
    assert np.array_equal(subset_order(expected, keep), np.argsort(-scores[keep], kind="stable"))


def test_one_sort_per_distinct_vector_by_content():
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=500), rng.normal(size=500)
    with sorting_once() as memo:
        first = descending_order(a)
        assert descending_order(a.copy()) is first  # a copy is the same content
        assert not first.flags.writeable  # callers can not spoil the memo
        descending_order(b)
        changed = a.copy()
        changed[17] += 1.0
        assert np.array_equal(descending_order(changed), np.argsort(-changed, kind="stable"))  # sorted again
        with sorting_once() as inner:  # a nested block shares the memo
            assert inner is memo and descending_order(b) is not None
        assert memo.sorts == 3
    assert orders._MEMO.get() is None  # nothing kept after the block
    assert descending_order(a) is not first


def test_memo_drops_least_recently_used_past_its_bytes():
    vectors = [np.random.default_rng(s).normal(size=100) for s in range(4)]  # 800 bytes of order each
    with sorting_once(limit=2000) as memo:
        for v in vectors:
            descending_order(v)
        assert memo.held <= 2000 and len(memo.orders) == 2
        descending_order(vectors[0])  # dropped: sorted again, still right
        assert memo.sorts == 5
        assert np.array_equal(descending_order(vectors[0]), np.argsort(-vectors[0], kind="stable"))


def test_a_report_sorts_each_model_once(monkeypatch):
    import tablegen

    rng = np.random.default_rng(3)
    y = (rng.random(150) < 0.3).astype(int)
    scores = {f"m{j}": (0.3 + 0.2 * j) * y + rng.normal(size=150) for j in range(3)}
    seen = []
    original = orders._Memo.put
    monkeypatch.setattr(orders._Memo, "put", lambda self, key, order: (seen.append(key), original(self, key, order)))
    tablegen.evaluate(y, scores, C=10, metrics=["auc", "best_accuracy"])  # DeLong's and the swap tests' ranks
    assert len(seen) == len(set(seen)) == 3  # the three models' scores, each sorted once


def test_nan_takes_the_stable_sort():
    """NaN sorts last in no set order among themselves: a vector holding one is sorted stably (item order)."""
    x = np.random.default_rng(4).normal(size=orders.FAST_SORT_ITEMS + 10)
    x[[5, 100, 7000]] = np.nan
    assert np.array_equal(descending_order(x), np.argsort(-x, kind="stable"))
