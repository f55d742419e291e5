"""CPU seconds per exact critical value and per p-value of best F1 and best balanced accuracy, one core.

New: the wavefront programme and the bracketed search (``tablegen.compute.exact.lattice``).  Old: the
row-by-row programme with a bisection over all P (N + 1) candidates (git 52b0d60, copied below),
run where its candidate array stays under ``--old-limit`` candidates.  Each figure is the best of
``--repeat`` runs in a warm process (kernels compiled first), at (C, alpha) = (10, 0.01) and
(1000, 0.05); the p-value is asked at the critical value.  Times are CPU (process) seconds; MB is
the measured peak of one critical value, beside :func:`tablegen.compute.exact.lattice.lattice_cost`'s
estimates.  Prints the CPU's vector width (AVX-512 or AVX2) and the load average, which inflates
every figure on a shared machine (hyper-threads share a core's units).

Usage::

    python benchmarks/bench_lattice.py                 # the cells of issue 14
    python benchmarks/bench_lattice.py --cells 1000x1000 100x1000000 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numba as nb  # noqa: E402
import numpy as np  # noqa: E402
from machine import recording, vector_width  # noqa: E402

from tablegen.compute.exact.lattice import (  # noqa: E402
    BalancedAccuracyKeys,
    BestF1Keys,
    best_balanced_accuracy_null,
    best_f1_null,
    lattice_cost,
)
from tablegen.compute.exact.nulls import critical_index, score_index  # noqa: E402
from tablegen.compute.stats import upper_tail_probability  # noqa: E402

CELLS = ["100x100", "1000x1000", "3000x3000", "10000x10000", "1000x100000", "100x1000000", "20x1000000", "1000000x100"]
SETTINGS = [(10, 0.01), (1000, 0.05)]
NEW = {"best_f1": best_f1_null, "best_balanced_accuracy": best_balanced_accuracy_null}
#: each metric's candidate family, which the cost estimate takes
FAMILY = {"best_f1": BestF1Keys, "best_balanced_accuracy": BalancedAccuracyKeys}


@nb.njit(nogil=True)
def old_programme(n_pos, n_neg, a, b, c):
    """The row-by-row programme of git 52b0d60 (serial carry, a division per lattice point)."""
    if c <= 0:
        return 1.0
    mass = np.zeros(n_neg + 1)
    mass[0] = 1.0
    hit = 0.0
    for t in range(n_pos + 1):
        carry = 0.0
        enters = a * (t + 1)
        for f in range(n_neg + 1):
            here = mass[f] + carry
            remaining = n_pos + n_neg - t - f
            if remaining == 0:
                mass[f] = here
                break
            share = here / remaining
            carry = share * (n_neg - f)
            up = share * (n_pos - t)
            if t < n_pos and enters - b * f >= c:
                hit += up
                up = 0.0
            mass[f] = up
    return hit


class OldNull:
    """The old candidate array and index interface, as ``tablegen.compute.exact.lattice`` had it."""

    def __init__(self, metric: str, P: int, N: int):
        self.P, self.N, self.metric = P, N, metric
        if metric == "best_f1":
            t = np.arange(1, P + 1, dtype=np.int64)[:, None]
            f = np.arange(0, N + 1, dtype=np.int64)[None, :]
            numerators = np.broadcast_to(2 * t, (P, N + 1)).ravel()
            denominators = (P + t + f).ravel()
            self.values, first = np.unique(numerators / denominators, return_index=True)
            self.num, self.den = numerators[first], denominators[first]
        else:
            t = np.arange(0, P + 1, dtype=np.int64)[:, None]
            f = np.arange(0, N + 1, dtype=np.int64)[None, :]
            keys = np.unique(t * N - f * P)
            self.keys = keys[keys >= 0]
            self.values = (self.keys + P * N) / (2 * P * N)

    def tail_ge_at(self, index: int) -> float:
        if index >= len(self.values):
            return 0.0
        if self.metric == "best_f1":
            num, den = int(self.num[index]), int(self.den[index])
            return old_programme(self.P, self.N, 2 * den - num, num, num * self.P)
        return old_programme(self.P, self.N, self.N, self.P, int(self.keys[index]))

    def first_index_at_or_below(self, tail: float) -> int:
        low, high = 0, len(self.values)
        while low < high:
            middle = (low + high) // 2
            if self.tail_ge_at(middle) <= tail:
                high = middle
            else:
                low = middle + 1
        return low


def best_of(function, repeat: int) -> tuple[float, object]:
    """Smallest CPU time of ``repeat`` runs (process time: on a loaded machine, wall time also
    counts the waits for a core) and the result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = function()
        best = min(best, time.process_time() - start)
    return best, result


def peak_bytes(metric, P, N, tail) -> float:
    """Peak bytes of one critical value: numpy's allocations (tracemalloc) plus the programme's
    four rows of P + 3 doubles, which numba allocates outside tracemalloc's view."""
    tracemalloc.start()
    NEW[metric](P, N).critical_value(tail)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak + 32.0 * (P + 3)


def new_answers(metric, P, N, C, alpha, repeat):
    tail = float(upper_tail_probability(C, alpha))
    null = NEW[metric](P, N)
    seconds, value = best_of(lambda: null.critical_value(tail), repeat)
    programmes = null.programmes // repeat
    p_seconds, _ = best_of(lambda: null.tail_ge_score(value), repeat)
    return value, seconds, programmes, p_seconds


def old_answers(metric, P, N, C, alpha, repeat):
    tail = float(upper_tail_probability(C, alpha))
    seconds, (null, value) = best_of(lambda: _old_critical(metric, P, N, tail), repeat)
    p_seconds, _ = best_of(lambda: OldNull(metric, P, N).tail_ge_at(score_index(null, value)), repeat)
    return value, seconds, p_seconds


def _old_critical(metric, P, N, tail):
    null = OldNull(metric, P, N)
    return null, float(null.values[critical_index(null, tail)])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=CELLS, help="cells as PxN (default: issue 14's)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, best kept (default 3)")
    parser.add_argument("--old-limit", type=float, default=1e7, help="largest P (N+1) the old routine runs at")
    args = parser.parse_args(argv)
    print(f"CPU: {vector_width()}, numba target {nb.config.CPU_NAME or 'host'}, load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; best of {args.repeat} runs, one core")
    NEW["best_f1"](5, 5).critical_value(0.01)  # compile / load the cached kernels
    old_programme(3, 3, 1, 1, 1)
    print(f"{'metric':24s} {'cell':>14s} {'C':>5s} {'alpha':>5s} {'m*':>14s} {'progs':>5s} {'crit s':>8s} "
          f"{'p s':>8s} {'old crit s':>10s} {'old p s':>8s} {'est s':>7s} {'MB':>7s} {'est MB':>7s}")
    for cell in args.cells:
        P, N = (int(x) for x in cell.split("x"))
        for metric in NEW:
            estimate_seconds, estimate_bytes = lattice_cost(P, N, FAMILY[metric])
            for C, alpha in SETTINGS:
                value, seconds, programmes, p_seconds = new_answers(metric, P, N, C, alpha, args.repeat)
                peak = peak_bytes(metric, P, N, float(upper_tail_probability(C, alpha)))
                old = "not run", "not run"
                if P * (N + 1) <= args.old_limit:
                    old_value, old_seconds, old_p = old_answers(metric, P, N, C, alpha, 1)
                    assert old_value == value, (metric, P, N, C, alpha, old_value, value)
                    old = f"{old_seconds:.3f}", f"{old_p:.3f}"
                print(f"{metric:24s} {cell:>14s} {C:5d} {alpha:5.2f} {value:14.10f} {programmes:5d} {seconds:8.3f} "
                      f"{p_seconds:8.3f} {old[0]:>10s} {old[1]:>8s} {estimate_seconds:7.3f} {peak / 1e6:7.1f} "
                      f"{estimate_bytes / 1e6:7.1f}",
                      flush=True)


if __name__ == "__main__":
    with recording("lattice"):
        main()
