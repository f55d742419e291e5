"""ns per element-step of the multi-class permutation kernel beside the binary label-permutation kernel.

    .venv/bin/python benchmarks/bench_multiclass_kernel.py            # a few seconds on one core

The multi-class kernel (:func:`tablegen.compute.kernels.multiclass.multiclass_permutations`: Fisher–Yates shuffle
of the predicted labels, hits, balanced accuracy and macro-F1 in one pass) and the binary kernel
(:func:`tablegen.compute.kernels.permutation.permutation_counts`: sequential sampling of the labels, one model's
best accuracy by its sorted walk, untied scores) run side by side on the same n items and R replicates, best of
three, so that the machine's load affects both alike.  An element-step is one item of one replicate.  The issue's
target: the multi-class kernel within 2x of the binary one.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from tablegen.compute.kernels.multiclass import class_weights, multiclass_key, multiclass_permutations
from tablegen.compute.kernels.permutation import permutation_counts

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import recording  # noqa: E402

#: (items n, classes K, replicates R)
CASES = [(1_000, 3, 20_000), (10_000, 10, 2_000), (100_000, 10, 200), (100_000, 100, 200)]


def _multiclass(n: int, K: int, R: int) -> float:
    rng = np.random.default_rng(1)
    true = rng.integers(0, K, n).astype(np.int32)
    predicted = rng.integers(0, K, n).astype(np.int32)
    weights = class_weights(np.bincount(true, minlength=K), np.bincount(predicted, minlength=K))
    key0, key1 = multiclass_key(2005, n, K)
    out = np.empty((R, 3))
    start = time.perf_counter()
    multiclass_permutations(true, predicted, *weights, key0, key1, 0, out)
    return time.perf_counter() - start


def _binary(n: int, R: int) -> float:
    rng = np.random.default_rng(1)
    orders = np.argsort(-rng.random(n))[None, :].astype(np.int64)
    ends, ranks = np.ones((1, n), np.uint8), np.zeros((1, n), np.int64)
    key0, key1 = multiclass_key(2005, n, 2)
    maxima, raw, step = np.empty(R), np.zeros(1, np.int64), np.zeros(1, np.int64)
    start = time.perf_counter()
    permutation_counts(orders, ends, ranks, n // 2, 1, 0, np.zeros(n + 1), np.array([np.inf]), np.array([0]), key0,
                       key1, 0, maxima, raw, step)
    return time.perf_counter() - start


def main() -> None:
    _multiclass(10, 2, 2), _binary(10, 2)  # compile (or load from the cache)
    print("| n | K | R | multi-class ns/element-step | binary ns/element-step | ratio |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n, K, R in CASES:
        multi = min(_multiclass(n, K, R) for _ in range(3))
        binary = min(_binary(n, R) for _ in range(3))
        steps = n * R
        print(f"| {n:,} | {K} | {R:,} | {multi / steps * 1e9:.2f} | {binary / steps * 1e9:.2f} | "
              f"{multi / binary:.2f} |")


if __name__ == "__main__":
    with recording("multiclass_kernel"):
        main()
