"""The binormal alternative kernel against the null kernels: CPU ns per element-step, side by side.

An element-step is one item of one replicate (P + N per replicate).  Timed on one core, in one process, each
kernel compiled first, the kernels taken in turn in every round (best of ``--repeats`` kept, so machine noise
hits all alike):

* ``alternative``: :func:`tablegen.compute.kernels.alternative.binormal_block` (draw P + N normals, sort each
  class, merge and score every base metric and TP at 10; best MCC off, as a run that does not ask for it);
* ``alternative + mcc``: the same with best MCC;
* ``  of which draw`` / ``draw + sort``: the kernel's first steps alone (where its time goes; the sort is the
  kernel's bucket sort, 3-4x faster than numba's quicksort, which took 35-52 ns per element-step here);
* ``null scalar``: :func:`tablegen.compute.kernels.ranking.simulate_block` (sequential sampling, the same
  metrics: the alternative kernel's like-for-like null);
* ``null engine``: :func:`tablegen.compute.mc.score_replicates` (the lane or minority-class kernel the tables use).

CPU time (``time.process_time``), not wall time: the machine may be shared.

    .venv/bin/python benchmarks/bench_power_mc.py
"""

import os

for _variable in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numba as nb  # noqa: E402
import numpy as np  # noqa: E402
from machine import recording  # noqa: E402

from tablegen.compute.kernels.alternative import binormal_block, bucket_sort, draw_binormal  # noqa: E402
from tablegen.compute.kernels.ranking import TP_COLUMN, mcc_weights, simulate_block  # noqa: E402
from tablegen.compute.mc import KernelLayout, cell_key, score_replicates  # noqa: E402
from tablegen.compute.metrics import DEFAULT_METRICS, metric_entries  # noqa: E402

CELLS = ((100, 100), (1000, 1000), (20, 2000))
KEY = (np.uint64(20050707), np.uint64(40))


@nb.njit(nogil=True)
def _draw_only(n_pos, n_neg, d, key0, key1, rows, sort):
    scores = np.empty(n_pos + n_neg)
    size = max(n_pos, n_neg)
    counts, spare, bins = np.empty(size + 1, np.int64), np.empty(size), np.empty(size, np.int64)
    total = 0.0
    for row in range(rows):
        draw_binormal(key0, key1, row, n_pos, d, scores)
        if sort:
            bucket_sort(scores[:n_pos], d, counts, spare, bins)
            bucket_sort(scores[n_pos:], 0.0, counts, spare, bins)
        total += scores[0]
    return total


def _runners(P, N, rows):
    ks = np.array([min(10, P + N)], np.int64)
    out = np.empty((rows, TP_COLUMN + 1))
    empty_scores, empty_labels = np.empty((0, 0)), np.empty((0, 0), np.uint8)
    weights = mcc_weights(P, N, P + N + 1)
    layout = KernelLayout.for_metrics(metric_entries(DEFAULT_METRICS), P, N)
    key = cell_key(20050707, P, N)
    return {
        "alternative": lambda: binormal_block(P, N, 1.0, *KEY, 0, ks, weights, False, out, empty_scores),
        "alternative + mcc": lambda: binormal_block(P, N, 1.0, *KEY, 0, ks, weights, True, out, empty_scores),
        "  of which draw": lambda: _draw_only(P, N, 1.0, *KEY, rows, False),
        "  of which draw + sort": lambda: _draw_only(P, N, 1.0, *KEY, rows, True),
        "null scalar": lambda: simulate_block(P, N, *KEY, 0, ks, out, empty_labels, False),
        "null engine": lambda: score_replicates(P, N, key, 0, rows, layout),
    }


def main(rows: int, repeats: int) -> None:
    print(f"Replicates per timed run: {rows:,}; best of {repeats} rounds; one core; CPU ns per element-step")
    results = {}
    for P, N in CELLS:
        runners = _runners(P, N, rows)
        for run in runners.values():  # compile
            run()
        best = dict.fromkeys(runners, float("inf"))
        for round_ in range(repeats):
            names = list(runners)
            names = names[round_ % len(names):] + names[:round_ % len(names)]
            for name in names:
                start = time.process_time()
                runners[name]()
                best[name] = min(best[name], time.process_time() - start)
        results[(P, N)] = {name: seconds / (rows * (P + N)) * 1e9 for name, seconds in best.items()}
    names = list(next(iter(results.values())))
    print()
    print("| kernel | " + " | ".join(f"({P}, {N})" for P, N in CELLS) + " |")
    print("|---|" + "---:|" * len(CELLS))
    for name in names:
        print(f"| {name.strip()}{' (part)' if name.startswith('  ') else ''} | "
              + " | ".join(f"{results[cell][name]:.1f}" for cell in CELLS) + " |")
    print("| alternative / null scalar | " + " | ".join(
        f"{results[cell]['alternative'] / results[cell]['null scalar']:.1f}x" for cell in CELLS) + " |")
    print("| alternative / null engine | " + " | ".join(
        f"{results[cell]['alternative'] / results[cell]['null engine']:.1f}x" for cell in CELLS) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    with recording("power_mc"):
        main(arguments.replicates, arguments.repeats)
