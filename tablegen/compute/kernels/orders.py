"""Each score vector sorted once per report: descending orders kept by content while a report runs.

A report on K models sorts each model's scores in many places: its threshold groups (the values and the verdict),
the bootstrap's fixed orders, the max-T test's, the paired tests' and DeLong's midranks.  At 10^6 items one stable
sort costs ~0.09 s; a 10-model report sorted the same ten vectors 80 times (7 s).  Inside :func:`sorting_once`
(what :func:`tablegen.evaluate` runs in) :func:`descending_order` keeps the order it computes, keyed by a SHA-256
digest of the scores' float64 bytes and their length (:func:`content_digest`; not by the array object: a vector
changed between two calls is sorted again, a copy of one is not), and hands out the same read-only array; outside
it, it sorts.
The memo lives as long as the ``with`` block and holds at most :data:`MEMO_BYTES` of orders (least recently used
dropped first).  Every caller gets what ``np.argsort(-scores, kind="stable")`` gives, bit for bit.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import threading
from collections import OrderedDict

import numpy as np

#: The orders a report keeps at most (8 bytes an item: 10 models x 10^6 items hold 80 MB).
MEMO_BYTES = 512 * 2**20

_MEMO: contextvars.ContextVar = contextvars.ContextVar("tablegen_sort_memo", default=None)


class _Memo:
    """Read-only orders by digest, least recently used first, at most ``limit`` bytes."""

    def __init__(self, limit: int):
        self.limit, self.held, self.orders, self.lock = limit, 0, OrderedDict(), threading.Lock()
        self.sorts = 0  # sorts run (for tests and benchmarks)

    def get(self, key: bytes):
        with self.lock:
            found = self.orders.get(key)
            if found is not None:
                self.orders.move_to_end(key)
            return found

    def put(self, key: bytes, order: np.ndarray) -> None:
        with self.lock:
            self.sorts += 1
            if order.nbytes > self.limit or key in self.orders:
                return
            self.orders[key] = order
            self.held += order.nbytes
            while self.held > self.limit:
                _, dropped = self.orders.popitem(last=False)
                self.held -= dropped.nbytes


@contextlib.contextmanager
def sorting_once(limit: int = MEMO_BYTES):
    """Within the block, :func:`descending_order` sorts each distinct score vector once (a nested block shares the
    outer one's memo).  Yields the memo (its ``sorts``: how many sorts ran).

    Examples
    --------
    >>> scores = np.array([0.2, 0.9, 0.9, 0.1])
    >>> with sorting_once() as memo:
    ...     first, again = descending_order(scores), descending_order(scores.copy())
    >>> first is again, memo.sorts, first.tolist()
    (True, 1, [1, 2, 0, 3])
    """
    outer = _MEMO.get()
    if outer is not None:
        yield outer
        return
    memo = _Memo(limit)
    token = _MEMO.set(memo)
    try:
        yield memo
    finally:
        _MEMO.reset(token)


def content_digest(values: np.ndarray) -> bytes:
    """A digest of a vector's float64 values and length (SHA-256 over the bytes in place, no copy: 4 ms at 10^6
    items, BLAKE2b 5.8 ms, with the SHA extensions of recent x86 CPUs): equal digests, equal vectors.

    Examples
    --------
    >>> content_digest(np.array([0.5, 1.0])) == content_digest(np.array([0.5, 1.0])), len(content_digest(np.zeros(3)))
    (True, 32)
    """
    values = np.ascontiguousarray(values, dtype=np.float64)
    digest = hashlib.sha256(values.size.to_bytes(8, "little"))
    digest.update(memoryview(values.reshape(-1)).cast("B"))
    return digest.digest()


def descending_order(scores: np.ndarray) -> np.ndarray:
    """``np.argsort(-scores, kind="stable")`` of a 1-D float64 vector (descending, ties in item order), as int64;
    read-only and shared by content inside :func:`sorting_once`.

    Examples
    --------
    >>> descending_order(np.array([0.2, 0.9, 0.9, 0.1])).tolist()
    [1, 2, 0, 3]
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    memo = _MEMO.get()
    if memo is None or scores.ndim != 1:
        return _stable_descending(scores)
    key = content_digest(scores)
    found = memo.get(key)
    if found is None:
        found = _stable_descending(scores)
        found.flags.writeable = False
        memo.put(key, found)
    return found


#: From this many items a descending order is numpy's vectorised sort with each run of ties put back in item order
#: (:func:`_stable_descending`); below it, numpy's stable sort (both cost little there).
FAST_SORT_ITEMS = 1 << 14
#: Runs of tied values up to which they are put in item order one by one; past it, numpy's stable sort.
FIXED_TIE_RUNS = 4096


def _stable_descending(scores: np.ndarray) -> np.ndarray:
    """``np.argsort(-scores, kind="stable")`` as int64, bit for bit: from :data:`FAST_SORT_ITEMS` items, numpy's
    vectorised sort (not stable: 15 against 95 ms at 10^6 float64 on AVX-512), then each run of equal values (at
    most :data:`FIXED_TIE_RUNS` of them) sorted by item, which is the stable order; NaN or more runs: the stable
    sort.  -0.0 and 0.0 are equal in both, so they tie.

    Examples
    --------
    >>> x = np.tile(np.array([0.5, 0.25, 0.5, 0.75]), 5000)
    >>> np.array_equal(_stable_descending(x), np.argsort(-x, kind="stable"))
    True
    """
    negated = -scores
    if scores.size < FAST_SORT_ITEMS:
        return np.argsort(negated, kind="stable").astype(np.int64, copy=False)
    order = np.argsort(negated, kind="quicksort").astype(np.int64, copy=False)
    ranked = negated[order]
    if np.isnan(ranked[-1]):  # NaN sorts last, in no set order among themselves
        return np.argsort(negated, kind="stable").astype(np.int64, copy=False)
    tied = np.flatnonzero(ranked[1:] == ranked[:-1])  # position p ties with p + 1
    if tied.size == 0:
        return order
    starts = tied[np.r_[True, tied[1:] != tied[:-1] + 1]]
    ends = tied[np.r_[tied[1:] != tied[:-1] + 1, True]] + 2  # one past each run's last position
    if starts.size > FIXED_TIE_RUNS:
        return np.argsort(negated, kind="stable").astype(np.int64, copy=False)
    for start, end in zip(starts.tolist(), ends.tolist()):
        order[start:end].sort()
    return order


def descending_orders(scores: np.ndarray) -> np.ndarray:
    """:func:`descending_order` of each row of a (models, n) array, as one C-contiguous int64 array.

    Examples
    --------
    >>> descending_orders(np.array([[0.2, 0.9, 0.9, 0.1], [1.0, 0.0, 0.5, 0.5]])).tolist()
    [[1, 2, 0, 3], [0, 2, 3, 1]]
    """
    scores = np.atleast_2d(scores)
    return np.array([descending_order(row) for row in scores], np.int64).reshape(scores.shape)


def ascending_midranks(scores: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
    """Each value's ascending midrank (1-based, ties averaged: ``scipy.stats.rankdata(method="average")``, bit for
    bit, as the ranks are half-integers) of a 1-D vector without NaN, from its :func:`descending_order` (``order``,
    computed if not given): a tied group at descending positions s..e holds ascending ranks n - e .. n - s.

    Examples
    --------
    >>> ascending_midranks(np.array([0.3, 0.1, 0.3])).tolist()
    [2.5, 1.0, 2.5]
    """
    scores = np.asarray(scores, dtype=np.float64)
    order = descending_order(scores) if order is None else order
    first, last = tie_spans(scores[order])
    ranks = np.empty(scores.size)
    ranks[order] = (2 * scores.size - first - last) / 2
    return ranks


def tie_spans(ranked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For values sorted along the last axis (either way), each position's first and last position (from 0) in its
    run of equal values: a midrank is (first + last + 2) / 2 counted from the start of the order.

    Examples
    --------
    >>> [span.tolist() for span in tie_spans(np.array([0.9, 0.5, 0.5, 0.1]))]
    [[0, 1, 1, 3], [0, 2, 2, 3]]
    """
    n = ranked.shape[-1]
    starts = np.ones(ranked.shape, bool)
    starts[..., 1:] = ranked[..., 1:] != ranked[..., :-1]
    ends = np.ones(ranked.shape, bool)
    ends[..., :-1] = starts[..., 1:]
    position = np.broadcast_to(np.arange(n, dtype=np.int64), ranked.shape)
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=-1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, position, n), -1), axis=-1), -1)
    return first, last


def subset_order(order: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The descending order of ``scores[keep]`` (``keep`` boolean) from the whole vector's ``order``: the kept items
    in the same order (so ties stay in item order), numbered within the subset.

    Examples
    --------
    >>> scores, keep = np.array([0.2, 0.9, 0.9, 0.1]), np.array([True, False, True, True])
    >>> subset_order(descending_order(scores), keep).tolist(), descending_order(scores[keep]).tolist()
    ([1, 0, 2], [1, 0, 2])
    """
    number = np.cumsum(keep) - 1
    kept = order[keep[order]]
    return number[kept]
