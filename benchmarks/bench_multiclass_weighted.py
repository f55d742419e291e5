"""CPU time of the exact null of multi-class balanced accuracy and macro-F1 (the weighted rook programme).

    .venv/bin/python benchmarks/bench_multiclass_weighted.py        # about half a minute on one core

Each row builds the whole law of W = sum_k w_k T_kk (:func:`tablegen.compute.exact.multiclass_weighted.weighted_null`)
for the margins, beside the estimate :func:`~tablegen.compute.exact.multiclass_weighted.weighted_cost` that the time
and memory limits use (an upper estimate: it bounds the entries by the range of W), the number of attainable values,
and the critical value at C = 10, alpha = 0.05.  CPU seconds by ``time.process_time`` (one process, one core).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tablegen.compute.exact.multiclass_weighted import diagonal_weights, weighted_cost, weighted_null

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import recording  # noqa: E402

#: (metric, true counts, predicted counts)
CASES = [
    ("balanced_accuracy", [10, 20, 30], [20, 20, 20]),
    ("macro_f1", [10, 20, 30], [20, 20, 20]),
    ("balanced_accuracy", [10, 12, 15, 20, 30], [17, 17, 17, 18, 18]),
    ("balanced_accuracy", [30, 40, 50], [40, 40, 40]),
    ("macro_f1", [30, 40, 50], [40, 40, 40]),
    ("balanced_accuracy", [60, 80, 100], [80, 80, 80]),
]


def main() -> int:
    print("CPU seconds (time.process_time, one core) of the exact law of balanced accuracy / macro-F1 (the weighted\n"
          "rook programme); estimate: weighted_cost (the limits'); critical value at C = 10, alpha = 0.05.\n")
    print("| metric | true counts | predicted counts | weights | attainable values | seconds | estimate s "
          "| estimate bytes | critical value |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    for metric, true_counts, predicted_counts in CASES:
        weights = diagonal_weights(metric, true_counts, predicted_counts)
        seconds, memory = weighted_cost(true_counts, predicted_counts, weights)
        start = time.process_time()
        null = weighted_null(metric, true_counts, predicted_counts)
        used = time.process_time() - start
        critical = null.critical_key(10, 0.05)
        value = "none" if critical is None else f"{float(weights.value(critical)):.4f}"
        print(f"| {metric} | {true_counts} | {predicted_counts} | {weights.weights} | {len(null.keys):,} | {used:.3f} "
              f"| {seconds:.3g} | {memory:.3g} | {value} |", flush=True)
    return 0


if __name__ == "__main__":
    with recording("multiclass_weighted"):
        status = main()
    raise SystemExit(status)
