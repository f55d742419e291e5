"""CPU seconds per exact critical value and p-value of best MCC, beside best F1's at the same cells.

Best MCC: the lattice programme with a per-diagonal boundary and the bracketed search over its exactly
ordered candidates (``tablegen.compute.exact.best_mcc``); best F1: the half-plane programme
(``tablegen.compute.exact.lattice``).  Each figure is the best of ``--repeat`` runs in a warm process
(kernels loaded first), at (C, alpha) = (10, 0.01) and (1000, 0.05); the p-value is asked at the
critical value.  Times are CPU (process) seconds on one core; "est s" is the registry's cost estimate
(``best_mcc_cost`` / ``best_f1_cost``), which the lookup policy and the batch planner use.

Usage::

    python benchmarks/bench_best_mcc_exact.py
    python benchmarks/bench_best_mcc_exact.py --cells 1000x1000 20x10000 --repeat 3
"""

from __future__ import annotations

import argparse
import datetime
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from machine import cpu_model, recording, vector_width  # noqa: E402

from tablegen.compute.exact.best_mcc import best_mcc_cost, best_mcc_null  # noqa: E402
from tablegen.compute.exact.lattice import best_f1_cost, best_f1_null  # noqa: E402
from tablegen.compute.stats import upper_tail_probability  # noqa: E402

CELLS = ["20x20", "100x100", "300x300", "1000x1000", "3000x3000", "10000x10000", "20x10000", "200x10000",
         "1000x100000", "20x1000000"]
SETTINGS = [(10, 0.01), (1000, 0.05)]
METRICS = {"best_mcc": (best_mcc_null, best_mcc_cost), "best_f1": (best_f1_null, best_f1_cost)}


def best_of(function, repeat: int):
    """Smallest CPU time of ``repeat`` runs and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = function()
        best = min(best, time.process_time() - start)
    return best, result


def answers(builder, P, N, C, alpha, repeat):
    tail = float(upper_tail_probability(C, alpha))
    null = builder(P, N)
    seconds, value = best_of(lambda: null.critical_value(tail), repeat)
    programmes = null.programmes // repeat
    p_seconds, p = best_of(lambda: null.tail_ge_score(value), repeat)
    return value, programmes, seconds, p, p_seconds


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=CELLS, help="cells as PxN")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, best kept (default 3)")
    args = parser.parse_args(argv)
    print(f"{datetime.date.today()}  CPU: {cpu_model()} ({vector_width()}), load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; best of {args.repeat} runs, one core")
    for builder, _ in METRICS.values():
        builder(5, 5).critical_value(0.01)  # load the cached kernels
    print(f"{'metric':9s} {'cell':>12s} {'C':>5s} {'alpha':>5s} {'m*':>13s} {'Pr(X>=m*)':>10s} {'progs':>5s} "
          f"{'crit s':>7s} {'p s':>7s} {'est s':>7s}")
    for cell in args.cells:
        P, N = (int(x) for x in cell.split("x"))
        for metric, (builder, cost) in METRICS.items():
            estimate = cost(P, N)[0]
            for C, alpha in SETTINGS:
                value, programmes, seconds, p, p_seconds = answers(builder, P, N, C, alpha, args.repeat)
                print(f"{metric:9s} {cell:>12s} {C:5d} {alpha:5.2f} {value:13.10f} {p:10.3e} {programmes:5d} "
                      f"{seconds:7.3f} {p_seconds:7.4f} {estimate:7.3f}", flush=True)


if __name__ == "__main__":
    with recording("best_mcc_exact"):
        main()
