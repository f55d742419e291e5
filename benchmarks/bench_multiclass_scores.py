"""ns per (replicate, item) of the multi-class from-scores kernel beside the label-permutation kernel.

    NUMBA_NUM_THREADS=1 .venv/bin/python benchmarks/bench_multiclass_scores.py      # about a minute on one core

The from-scores kernel (:func:`tablegen.compute.kernels.multiclass_scores.multiclass_score_permutations`: a
Fisher–Yates shuffle of the labels over the fixed probability rows, one-vs-rest macro AUC and top-k accuracy as
each position settles, and, when asked, Hand–Till AUC by a walk down each of the K columns) and the existing
label-permutation kernel (:func:`tablegen.compute.kernels.multiclass.multiclass_permutations`: the same shuffle of
the predicted labels, hits, balanced accuracy and macro-F1) run side by side on the same n items, K classes and R
replicates, best of three by CPU time (``time.process_time``, one numba thread: the figure a loaded machine inflates
least), so that the machine's load affects all alike.  Hand–Till is also given per (replicate, item, class): its
walk is K passes of n items, reading each item's label at random (a gather).  The last columns set the cost model
of :func:`tablegen.multiclass_scores_test`'s time guard (``SECONDS_PER_ELEMENT_STEP``, ``SECONDS_PER_CLASS_STEP``,
``SECONDS_PER_WALK_STEP`` in ``tablegen/lookup/multiclass_scores.py``) beside the CPU measured: model / CPU, which
should be at least 1 (an upper bound) and not far above it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

from tablegen.compute.kernels.multiclass import class_weights, multiclass_key, multiclass_permutations
from tablegen.compute.kernels.multiclass_scores import multiclass_score_permutations, multiclass_scores_key
from tablegen.compute.multiclass_scores import score_tables
from tablegen.lookup import multiclass_scores as model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import load_average, recording  # noqa: E402

#: (items n, classes K, replicates R): about a second of CPU each with Hand–Till
CASES = [(1_000, 3, 100_000), (10_000, 10, 5_000), (100_000, 10, 500), (10_000, 50, 1_000)]


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
    start = time.process_time()
    multiclass_score_permutations(labels, *tables, counts, hand_till, key0, key1, 0, out)
    return time.process_time() - start


def _labels(n: int, K: int, R: int) -> float:
    labels, probabilities = _data(n, K)
    predicted = probabilities.argmax(axis=1).astype(np.int32)
    weights = class_weights(np.bincount(labels, minlength=K), np.bincount(predicted, minlength=K))
    key0, key1 = multiclass_key(2005, n, K)
    out = np.empty((R, 3))
    start = time.process_time()
    multiclass_permutations(labels, predicted, *weights, key0, key1, 0, out)
    return time.process_time() - start


def main() -> None:
    print(f"load average {load_average()} at the start; CPU time, numba threads: {os.environ.get('NUMBA_NUM_THREADS')}")
    _scores(20, 3, 2, True), _scores(20, 3, 2, False), _labels(20, 3, 2)  # compile (or load from the cache)
    print("| n | K | R | label kernel CPU ns/(replicate, item) | scores kernel, no Hand–Till | ratio | "
          "scores kernel with Hand–Till | ratio | Hand–Till CPU ns/(replicate, item, class) | model / CPU, "
          "no Hand–Till | model / CPU, with Hand–Till | walk-step model / CPU |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, K, R in CASES:
        label = min(_labels(n, K, R) for _ in range(3))
        plain = min(_scores(n, K, R, False) for _ in range(3))
        full = min(_scores(n, K, R, True) for _ in range(3))
        steps = n * R
        walk = (full - plain) / (steps * K)
        plain_model = model.SECONDS_PER_ELEMENT_STEP + K * model.SECONDS_PER_CLASS_STEP
        full_model = plain_model + K * model.SECONDS_PER_WALK_STEP
        print(f"| {n:,} | {K} | {R:,} | {label / steps * 1e9:.2f} | {plain / steps * 1e9:.2f} | "
              f"{plain / label:.2f} | {full / steps * 1e9:.2f} | {full / label:.2f} | {walk * 1e9:.2f} | "
              f"{plain_model * steps / plain:.2f} | {full_model * steps / full:.2f} | "
              f"{model.SECONDS_PER_WALK_STEP / walk:.2f} |")
    print(f"load average {load_average()} at the end")


if __name__ == "__main__":
    with recording("multiclass_scores"):
        main()
