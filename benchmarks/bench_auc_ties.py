"""Seconds to one exact AUC p-value and one critical value given tie groups, n = 10^2 .. 10^5 items.

For each n, tie pattern and P: group sizes drawn once (seed 2026): "10 values" and "100 values" put
each item on one of that many equally likely score values (heavy ties), "90% singletons" makes 90%
of the groups single items and the rest groups of 2..5 (light ties).  P = n/2 (balanced) and n/20.
Each answer comes from a fresh :func:`tablegen.compute.exact.auc_ties.tied_auc_null` (nothing cached
between them): one critical value at C = 10, alpha = 0.05, then one p-value at that value.  The route
the cost model picks is printed with its estimate (``tied_auc_cost``); ``--both`` also times the other
route where its estimate is within ``--budget`` seconds.  Best of ``--repeat`` runs, one core, warm
process (kernels compiled before timing).

Usage::

    python benchmarks/bench_auc_ties.py
    python benchmarks/bench_auc_ties.py --n 1000 10000 --both --repeat 1
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from machine import cpu_model, recording, vector_width  # noqa: E402

from tablegen.compute.exact.auc_ties import (  # noqa: E402
    TiltedTiedAucNull,
    inversion_cost,
    programme_cost,
    programme_null,
    programme_seconds_per_madd,
    tied_auc_cost,
    tied_auc_null,
)
from tablegen.compute.stats import upper_tail_probability  # noqa: E402

TIES = ("10 values", "100 values", "90% singletons")
C, ALPHA = 10, 0.05


def group_sizes(n: int, ties: str, rng: np.random.Generator) -> np.ndarray:
    """Tie-group sizes (ascending score order) of n items under one of :data:`TIES`."""
    if ties.endswith("values"):
        counts = np.bincount(rng.integers(0, int(ties.split()[0]), n))
        return counts[counts > 0]
    sizes = np.where(rng.random(n) < 0.9, 1, rng.integers(2, 6, n))
    sizes = sizes[:np.searchsorted(np.cumsum(sizes), n) + 1]
    sizes[-1] -= int(sizes.sum()) - n
    return sizes[sizes > 0]


def best_of(repeat: int, function):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def timed(make_null, repeat: int, tail: float):
    """(seconds to a critical value, seconds to a p-value at it, the value, the p-value, error bound)."""
    critical_seconds, value = best_of(repeat, lambda: make_null().critical_value(tail))
    holder = {}

    def p_value():
        holder["null"] = make_null()
        return holder["null"].tail_ge_score(value)

    p_seconds, p = best_of(repeat, p_value)
    return critical_seconds, p_seconds, value, p, getattr(holder["null"], "error_bound", 0.0)


def warm() -> None:
    """Load (or compile) every kernel once, so no timing includes it."""
    programme_null(np.array([2, 1, 3]), 2).critical_value(0.1)
    null = TiltedTiedAucNull(np.array([2, 1, 3, 1, 2]), 4)
    null.critical_value(0.1)
    from tablegen.compute.exact import auc_ties_band

    auc_ties_band.s_values(np.array([[0, 3]]), 16, np.ones(2), np.array([1, 2]))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[100, 1000, 10_000, 100_000])
    parser.add_argument("--ties", nargs="+", default=list(TIES), choices=TIES)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", type=float, default=120.0, help="skip routes estimated above this (s)")
    parser.add_argument("--both", action="store_true", help="also time the route not chosen")
    args = parser.parse_args(argv)
    print(f"# {cpu_model()} ({vector_width()}), {datetime.date.today()}, load {os.getloadavg()[0]:.2f}")
    print(f"# python {' '.join(sys.argv)}")
    print(f"# critical value at C = {C}, alpha = {ALPHA}; p-value at that value; best of {args.repeat}")
    warm()
    tail = float(upper_tail_probability(C, ALPHA))
    print("| n | ties | groups | P | route | estimate s | critical s | p-value s | AUC* | p | bound |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in args.n:
        for ties in args.ties:
            sizes = group_sizes(n, ties, np.random.default_rng(2026))
            for P in (n // 2, n // 20):
                estimate = tied_auc_cost(sizes, P)[0]
                chosen = type(tied_auc_null(sizes, P)).__name__ if estimate <= args.budget else None
                routes = {"TiedProgrammeNull": (lambda: programme_null(sizes, P),
                                                programme_cost(sizes, P)[0]
                                                * programme_seconds_per_madd(programme_cost(sizes, P)[1])),
                          "TiltedTiedAucNull": (lambda: TiltedTiedAucNull(sizes, P), inversion_cost(sizes, P)[0])}
                for name, (make, estimated) in routes.items():
                    if name != chosen and not (args.both and estimated <= args.budget):
                        continue
                    label = "programme" if name == "TiedProgrammeNull" else "inversion"
                    label += "" if name == chosen else " (not chosen)"
                    critical_s, p_s, value, p, bound = timed(make, args.repeat, tail)
                    print(f"| {n:,} | {ties} | {sizes.size:,} | {P:,} | {label} | {estimated:.3g} | {critical_s:.3g} "
                          f"| {p_s:.3g} | {value:.6f} | {p:.4g} | {bound:.1e} |", flush=True)
                if chosen is None:
                    print(f"| {n:,} | {ties} | {sizes.size:,} | {P:,} | skipped | {estimate:.3g} | | | | | |")


if __name__ == "__main__":
    with recording("auc_ties"):
        main()
