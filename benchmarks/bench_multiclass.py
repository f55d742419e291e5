"""CPU time of the exact multi-class accuracy null (``tablegen.multiclass_test``), by size.

    .venv/bin/python benchmarks/bench_multiclass.py                 # about a minute on one core
    .venv/bin/python benchmarks/bench_multiclass.py --largest 2000  # skip the larger rows

Two routes side by side, the same integers: python-flint's products where it is installed ("flint"), and
Python's own (Kronecker substitution, Karatsuba: "pure Python", run up to ``--largest-python`` items).  Each row
finds, from the exact law (:func:`tablegen.compute.exact.multiclass.accuracy_null`: the rook polynomial
in Python integers), the critical value for C = 10, alpha = 0.05 (search on exact tails) and the p-value of a
model with accuracy at that critical value; then the whole ``multiclass_test`` from labels (encoding included).
CPU seconds by ``time.process_time`` (one process, one core), beside the estimate
:func:`~tablegen.compute.exact.multiclass.accuracy_seconds` that the time limit uses.  The issue's target (exact
p at n = 10^5, K = 10 in 0.5 s) is printed with the estimate: this route does not reach it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import tablegen.compute.exact.multiclass as exact
from tablegen.compute.exact.multiclass import accuracy_bytes, accuracy_null, accuracy_seconds
from tablegen.lookup.multiclass import multiclass_test

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import recording  # noqa: E402

#: (label, true counts, predicted counts)
CASES = [
    ("K = 10 balanced", [30] * 10, [30] * 10),
    ("K = 3 unequal", [150, 100, 50], [60, 120, 120]),
    ("K = 10 balanced", [100] * 10, [100] * 10),
    ("K = 2 balanced", [500, 500], [500, 500]),
    ("K = 20 balanced", [50] * 20, [50] * 20),
    ("K = 10 unequal", [10 * (k + 1) for k in range(10)][::-1], [55] * 10),
    ("K = 10 balanced", [200] * 10, [200] * 10),
    ("K = 10 balanced", [300] * 10, [300] * 10),
    ("K = 10 balanced", [1000] * 10, [1000] * 10),
]


def row(label, true_counts, predicted_counts, route, C=10, alpha=0.05) -> str:
    exact.USE_FLINT = route == "flint"
    n = sum(true_counts)
    start = time.process_time()
    null = accuracy_null(true_counts, predicted_counts)  # lazy: the tails compute what they need
    critical = null.critical_hits(C, alpha)
    p, _ = null.p_value(critical if critical is not None else null.most_hits, C)
    answered = time.process_time()
    labels = np.repeat(np.arange(len(true_counts)), true_counts)
    predicted = np.repeat(np.arange(len(predicted_counts)), predicted_counts)
    rng = np.random.default_rng(1)
    predicted = rng.permutation(predicted)
    before = time.process_time()
    result = multiclass_test(labels, predicted, C=C, alpha=alpha)
    whole = time.process_time() - before
    assert result.critical_hits == critical
    estimate = accuracy_seconds(true_counts, predicted_counts)
    used = len(null._weighted[0]) - 1
    return (f"| {label} | {route} | {n:,} | {null.most_hits:,} | {used:,} | {answered - start:.3f} | {whole:.3f} "
            f"| {estimate:.3g} | {critical / n:.4f} | {p:.3g} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--largest", type=int, default=10_000, help="skip cases with more items (default 10000)")
    parser.add_argument("--largest-python", type=int, default=3000,
                        help="skip the pure-Python route with more items (default 3000)")
    args = parser.parse_args()
    flint = exact._flint_polynomials() is not None
    print("CPU seconds (time.process_time, one core) of the exact multi-class accuracy null; C = 10, alpha = 0.05.\n"
          "rook numbers used: how far the Bonferroni early stop needed them (of D = most hits); critical + p: the\n"
          "search for the critical value and the p-value at it, rook numbers included; multiclass_test: the whole\n"
          "test from labels; estimate: accuracy_seconds (the time limit's; it assumes all D rook numbers).\n")
    print("| margins | route | n | most hits | rook numbers used | critical + p s | multiclass_test s | estimate s "
          "| critical accuracy | p at it |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, true_counts, predicted_counts in CASES:
        n = sum(true_counts)
        routes = (["flint"] if flint else []) + (["pure Python"] if n <= args.largest_python else [])
        for route in routes if n <= args.largest else []:
            print(row(label, true_counts, predicted_counts, route), flush=True)
    for n in (10_000, 100_000):
        margins = [n // 10] * 10, [n // 10] * 10
        for route in (["flint"] if flint else []) + ["pure Python"]:
            exact.USE_FLINT = route == "flint"
            print(f"\nestimate at n = {n:,}, K = 10 balanced, {route}: {accuracy_seconds(*margins):.3g} s, "
                  f"{accuracy_bytes(*margins) / 1e9:.3g} GB (the issue's target at n = 10^5 is 0.5 s)")
    exact.USE_FLINT = True
    return 0


if __name__ == "__main__":
    with recording("multiclass"):
        status = main()
    raise SystemExit(status)
