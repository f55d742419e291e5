"""ns per (replicate, item) of the multi-class from-scores kernel beside the label-permutation kernel.

    .venv/bin/python benchmarks/bench_multiclass_scores.py            # about a minute on one core

The from-scores kernel (:func:`tablegen.compute.kernels.multiclass_scores.multiclass_score_permutations`: a
Fisher–Yates shuffle of the labels over the fixed probability rows, one-vs-rest macro AUC and top-k accuracy as
each position settles, and, when asked, Hand–Till AUC by a walk down each of the K columns) and the existing
label-permutation kernel (:func:`tablegen.compute.kernels.multiclass.multiclass_permutations`: the same shuffle of
the predicted labels, hits, balanced accuracy and macro-F1) run side by side on the same n items, K classes and R
replicates, best of three, so that the machine's load affects all alike.  Hand–Till is also given per
(replicate, item, class): its walk is K passes of n items, reading each item's label at random (a gather).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from tablegen.compute.kernels.multiclass import class_weights, multiclass_key, multiclass_permutations
from tablegen.compute.kernels.multiclass_scores import multiclass_score_permutations, multiclass_scores_key
from tablegen.compute.multiclass_scores import score_tables

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import recording  # noqa: E402

#: (items n, classes K, replicates R)
CASES = [(1_000, 3, 20_000), (10_000, 10, 1_000), (100_000, 10, 100), (10_000, 50, 200)]


def _data(n: int, K: int):
    rng = np.random.default_rng(1)
    labels = rng.permutation(np.arange(n) % K).astype(np.int32)
    probabilities = rng.dirichlet(np.ones(K), n)
    return labels, probabilities


def _scores(n: int, K: int, R: int, hand_till: bool) -> float:
    labels, probabilities = _data(n, K)
    tables = score_tables(probabilities, k=min(2, K - 1))
    counts = np.bincount(labels, minlength=K).astype(np.int64)
    key0, key1 = multiclass_scores_key(2005, n, K)
    out = np.empty((R, 3))
    start = time.perf_counter()
    multiclass_score_permutations(labels, *tables, counts, hand_till, key0, key1, 0, out)
    return time.perf_counter() - start


def _labels(n: int, K: int, R: int) -> float:
    labels, probabilities = _data(n, K)
    predicted = probabilities.argmax(axis=1).astype(np.int32)
    weights = class_weights(np.bincount(labels, minlength=K), np.bincount(predicted, minlength=K))
    key0, key1 = multiclass_key(2005, n, K)
    out = np.empty((R, 3))
    start = time.perf_counter()
    multiclass_permutations(labels, predicted, *weights, key0, key1, 0, out)
    return time.perf_counter() - start


def main() -> None:
    _scores(20, 3, 2, True), _scores(20, 3, 2, False), _labels(20, 3, 2)  # compile (or load from the cache)
    print("| n | K | R | label kernel ns/(replicate, item) | scores kernel, no Hand–Till | ratio | "
          "scores kernel with Hand–Till | ratio | Hand–Till ns/(replicate, item, class) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, K, R in CASES:
        label = min(_labels(n, K, R) for _ in range(3))
        plain = min(_scores(n, K, R, False) for _ in range(3))
        full = min(_scores(n, K, R, True) for _ in range(3))
        steps = n * R
        print(f"| {n:,} | {K} | {R:,} | {label / steps * 1e9:.2f} | {plain / steps * 1e9:.2f} | "
              f"{plain / label:.2f} | {full / steps * 1e9:.2f} | {full / label:.2f} | "
              f"{(full - plain) / (steps * K) * 1e9:.2f} |")


if __name__ == "__main__":
    with recording("multiclass_scores"):
        main()
