"""CPU seconds of exact Lehmann power, sample size and minimum detectable AUC, and of Lehmann Monte Carlo power.

Exact power (``tablegen.compute.exact.power``): the critical value m* (the exact null's search, once per
cell, C and alpha) and then one programme per alternative k (the boundary walk of the best-threshold metrics and
TP@k, the law of U for AUC).  Beyond the exact programme (AUC beyond about 375 x 375) ``tablegen.power`` answers
by Monte Carlo (``tablegen.compute.power_mc.lehmann_power``: m* exact from ``tablegen.critical_value``, then a
pilot of 1,000 replicates and R chosen for a 95% interval of +-0.005; both stages timed, R printed).  Targets:
best F1 at (1000, 1000) <= 1 s, AUC at (10^4, 10^4) <= 1 s, a sample size <= 5 s.  Each figure is the best of
``--repeat`` runs in a warm process (kernels loaded first), CPU (process) seconds on one core, at C = 10,
alpha = 0.05, AUC = 0.7 (k = 7/3) unless the table says otherwise.  The planners start from empty caches each run.

Usage::

    python benchmarks/bench_power.py
    python benchmarks/bench_power.py --repeat 3
"""

from __future__ import annotations

import argparse
import datetime
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from machine import cpu_model, recording, vector_width  # noqa: E402

import tablegen  # noqa: E402
from tablegen.compute.exact.power import auc_exact_at  # noqa: E402
from tablegen.compute.metrics import get_metric  # noqa: E402
from tablegen.compute.power_mc import lehmann_power  # noqa: E402
from tablegen.compute.stats import upper_tail_probability  # noqa: E402
from tablegen.lookup import power as planner  # noqa: E402

C, ALPHA, AUC = 10, 0.05, 0.7
K = AUC / (1 - AUC)
POWER_CELLS = {
    "best_f1": ["100x100", "1000x1000", "3000x3000", "10000x10000", "100x10000"],
    "best_balanced_accuracy": ["1000x1000", "10000x10000"],
    "best_accuracy": ["1000x1000", "10000x10000"],
    "best_mcc": ["1000x1000", "3000x3000"],
    "tp_at_100": ["1000x1000", "10000x10000"],
    "auc": ["50x50", "100x100", "200x200", "370x370", "10000x10000"],
}
#: Lehmann Monte Carlo: (metric, cell, AUC), at C = 10, alpha = 0.05.
MONTE_CARLO = [("auc", "10000x10000", 0.7), ("auc", "10000x10000", 0.515), ("auc", "1000x1000", 0.55)]
PLANS = [
    ("sample_size", dict(metric="auc", auc=0.7, C=10, alpha=0.05, prevalence=0.5)),
    ("sample_size", dict(metric="best_f1", auc=0.7, C=100, alpha=0.05, N=200)),
    ("sample_size", dict(metric="best_accuracy", auc=0.8, C=1, alpha=0.05, prevalence=0.5)),
    ("sample_size", dict(metric="best_mcc", auc=0.65, C=1000, alpha=0.01, prevalence=0.2)),
    ("sample_size", dict(metric="best_f1", auc=0.6, C=10, alpha=0.05, prevalence=0.1)),
    ("sample_size", dict(metric="auc", auc=0.6, C=10, alpha=0.05, prevalence=0.5)),
    ("minimum_detectable", dict(metric="best_f1", P=1000, N=1000, C=100, alpha=0.05)),
    ("minimum_detectable", dict(metric="auc", P=100, N=100, C=100, alpha=0.05)),
    ("max_models", dict(metric="best_balanced_accuracy", P=500, N=500, auc=0.6, alpha=0.05)),
]


def best_of(function, repeat: int):
    """Smallest CPU time of ``repeat`` runs and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = function()
        best = min(best, time.process_time() - start)
    return best, result


def exact_power(repeat: int) -> None:
    tail = float(upper_tail_probability(C, ALPHA))
    print(f"exact power at C = {C}, alpha = {ALPHA}, AUC = {AUC} (k = {K:.4f})")
    print(f"{'metric':24s} {'cell':>12s} {'m*':>12s} {'power':>12s} {'m* s':>8s} {'power s':>8s} {'total s':>8s}")
    for metric, cells in POWER_CELLS.items():
        entry = get_metric(metric)
        for cell in cells:
            P, N = (int(x) for x in cell.split("x"))
            if not entry.power_exact_at(P, N):
                print(f"{metric:24s} {cell:>12s}   no exact power (the law of U: {auc_exact_at(P, N)=}): "
                      "Monte Carlo below")
                continue
            m_seconds, event = best_of(lambda: entry.lehmann_event(P, N, tail), repeat)
            p_seconds, value = best_of(lambda: event.probability(K), repeat)
            print(f"{metric:24s} {cell:>12s} {event.critical_value:12.8f} {value:12.10f} {m_seconds:8.3f} "
                  f"{p_seconds:8.4f} {m_seconds + p_seconds:8.3f}", flush=True)


def monte_carlo(repeat: int) -> None:
    print(f"\nLehmann Monte Carlo beyond the exact programme, C = {C}, alpha = {ALPHA} (one core; m* exact)")
    print(f"{'metric':8s} {'cell':>12s} {'AUC':>6s} {'m*':>11s} {'power':>7s} {'95% interval':>17s} {'R':>7s} "
          f"{'m* s':>7s} {'power s':>8s} {'total s':>8s} {'ns/item':>8s}")
    for metric, cell, auc in MONTE_CARLO:
        P, N = (int(x) for x in cell.split("x"))
        k = auc / (1 - auc)
        m_seconds, answer = best_of(lambda: tablegen.critical_value(metric, P, N, C=C, alpha=ALPHA, method="exact"),
                                    repeat)
        p_seconds, found = best_of(lambda: lehmann_power(metric, P, N, float(answer), k), repeat)
        items = (found.R + found.pilot_replicates) * (P + N)
        print(f"{metric:8s} {cell:>12s} {auc:6.3f} {float(answer):11.8f} {found.power:7.4f} "
              f"[{found.ci_low:.4f}, {found.ci_high:.4f}] {found.R:7,d} {m_seconds:7.3f} {p_seconds:8.3f} "
              f"{m_seconds + p_seconds:8.3f} {1e9 * p_seconds / items:8.1f}", flush=True)


def plans(repeat: int) -> None:
    print("\nplanners (empty caches each run)")
    print(f"{'function':19s} {'question':72s} {'s':>7s}  answer")
    for name, kwargs in PLANS:
        def run():
            planner.exceed_event.cache_clear()
            return getattr(tablegen, name)(**kwargs)

        seconds, result = best_of(run, repeat)
        question = ", ".join(f"{key}={value}" for key, value in kwargs.items())
        if name == "sample_size":
            answer = (f"first ({result.first_P}, {result.first_N}) power {result.first_power:.4f}; stable "
                      f"({result.stable_P}, {result.stable_N}); {result.evaluations} sizes")
        elif name == "minimum_detectable":
            answer = f"AUC {result.auc:.6f} (k {result.k:.4f}), m* {result.critical_value:.6f}"
        else:
            answer = f"C = {result.C:,} (power {result.power:.4f}, then {result.power_beyond:.4f})"
        print(f"{name:19s} {question:72s} {seconds:7.3f}  {answer}", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, best kept (default 3)")
    args = parser.parse_args(argv)
    print(f"{datetime.date.today()}  CPU: {cpu_model()} ({vector_width()}), load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; best of {args.repeat} runs, one core")
    tablegen.power("auc", 5, 5, auc=0.7)  # load the cached kernels
    tablegen.power("best_f1", 5, 5, auc=0.7)
    exact_power(args.repeat)
    monte_carlo(args.repeat)
    plans(args.repeat)


if __name__ == "__main__":
    with recording("power"):
        main()
