"""Seconds per exact critical value and per p-value, per metric and cell, one core, warm process.

Every exact metric at 100², 1000², 3000², 10⁴², (1000, 10⁵) and (20, 10⁶) through the public route
(:func:`tablegen.compute.metric_nulls.null_distribution`, then one critical value at (C, alpha) = (1000, 0.01) and
one p-value at that value — a fresh null object each time, so nothing is cached between them).
Beside it, the previous routine where it still runs within ``--old-budget`` seconds (estimated):
for AUC the Mann–Whitney recursion (``tablegen.compute.exact.auc.auc_pmf_sweep``); for the lattice metrics
see ``benchmarks/bench_lattice.py``, which keeps the old programme.  Each figure is the best of
``--repeat`` runs; MB is the peak traced by tracemalloc for one critical value.  Prints the CPU's
vector width (AVX-512 or AVX2) and the load average (a shared machine inflates every figure).

Usage::

    python benchmarks/bench_exact.py
    python benchmarks/bench_exact.py --metrics auc --cells 1000x1000 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from machine import recording, vector_width  # noqa: E402

from tablegen.compute.exact import null_critical_value, null_tail_ge  # noqa: E402
from tablegen.compute.exact.auc import auc_null_from_pmf, auc_pmf_sweep, recursion_seconds  # noqa: E402
from tablegen.compute.metric_nulls import exact_cost, null_distribution  # noqa: E402
from tablegen.compute.stats import upper_tail_probability  # noqa: E402

CELLS = ["100x100", "1000x1000", "3000x3000", "10000x10000", "1000x100000", "20x1000000"]
METRICS = ["auc", "best_f1", "best_balanced_accuracy", "best_accuracy", "tp_at_10", "precision_at_10"]
C, ALPHA = 1000, 0.01


def best_of(repeat: int, function):
    """(best seconds, last result) of ``repeat`` calls."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def critical(metric: str, P: int, N: int) -> float:
    return null_critical_value(null_distribution(metric, P, N), float(upper_tail_probability(C, ALPHA)))


def p_value_at(metric: str, P: int, N: int, score: float) -> float:
    return null_tail_ge(null_distribution(metric, P, N), score)


def recursion_critical(P: int, N: int) -> float:
    ((_, pmf),) = auc_pmf_sweep([(P, N)])
    return null_critical_value(auc_null_from_pmf(P, N, pmf), float(upper_tail_probability(C, ALPHA)))


def peak_megabytes(function) -> float:
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=CELLS)
    parser.add_argument("--metrics", nargs="+", default=METRICS)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--old-budget", type=float, default=60.0, help="run the recursion if estimated below this")
    args = parser.parse_args(argv)
    print(f"one core ({vector_width()}), load average {os.getloadavg()[0]:.1f}; C = {C}, alpha = {ALPHA}\n")
    print("| metric | cell | estimate s | critical value s | p-value s | MB | recursion s | same value |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for metric in args.metrics:
        critical(metric, 20, 20)  # warm: compile or load every kernel first
        for text in args.cells:
            P, N = (int(x) for x in text.split("x"))
            seconds_cv, value = best_of(args.repeat, lambda: critical(metric, P, N))
            seconds_p, _ = best_of(args.repeat, lambda: p_value_at(metric, P, N, value))
            megabytes = peak_megabytes(lambda: critical(metric, P, N))
            old, same = "-", "-"
            if metric == "auc" and recursion_seconds(P, N) <= args.old_budget:
                seconds_old, old_value = best_of(1, lambda: recursion_critical(P, N))
                old, same = f"{seconds_old:.3f}", "yes" if old_value == value else f"NO ({old_value})"
            estimate = exact_cost(metric, P, N)[0]
            print(f"| {metric} | ({P}, {N}) | {estimate:.3g} | {seconds_cv:.3g} | {seconds_p:.3g} | {megabytes:.3g} "
                  f"| {old} | {same} |", flush=True)


if __name__ == "__main__":
    with recording("exact"):
        main()
