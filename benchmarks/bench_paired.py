"""What the paired tests cost: DeLong by midranks at n = 10⁶, against the O(PN) pairwise definition, and the
swap permutation per pattern.

    .venv/bin/python benchmarks/bench_paired.py

One core, CPU time, best of 3.  DeLong: `tablegen.compare.pairwise.delong.delong_difference` at n = 10⁶
(target ≤ 1 s) and at n = 4,000 beside the pairwise definition (every positive-negative pair compared,
as the test suite's reference does), whose cost grows as P·N.  Permutation: the swap kernel
(`tablegen.compute.kernels.swaps.swap_differences` through `swap_nulls`: one walk of the merged 2n values lays out
both swapped vectors, then one walk of each per metric) at n = 1,000 and 10,000 on scores without ties, whose
swapped midranks tie at random: ns per (pattern, item) for each metric alone and for all six in one pass (as
`tablegen.evaluate` scores a pair), R = 2,000 keyed patterns.
"""

import os

for _variable in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import datetime  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from machine import cpu_model, recording, vector_width  # noqa: E402

from tablegen.compare.pairwise.delong import delong_difference  # noqa: E402
from tablegen.compare.pairwise.tests import swap_nulls  # noqa: E402
from tablegen.compute.kernels.ranking import BASE_COLUMNS  # noqa: E402

#: Keyed swap patterns per measurement.
PATTERNS = 2000


def best_of(repeats, function):
    best = np.inf
    for _ in range(repeats):
        start = time.process_time()
        function()
        best = min(best, time.process_time() - start)
    return best


def pairwise_definition(y, a, b):
    x, z = np.vstack([a, b])[:, y == 1], np.vstack([a, b])[:, y == 0]
    psi = (x[:, :, None] > z[:, None, :]) + 0.5 * (x[:, :, None] == z[:, None, :])
    v10, v01 = psi.mean(axis=2), psi.mean(axis=1)
    return np.cov(v10) / x.shape[1] + np.cov(v01) / z.shape[1]


def data(n, rng):
    y = (rng.random(n) < 0.4).astype(int)
    a = y + rng.normal(size=n)
    return y, a, 0.5 * a + rng.normal(size=n)


def swap_table(n, rng):
    """ns per (pattern, item) of the swap kernel for each metric alone and all six in one pass, as table rows."""
    y, a, b = data(n, rng)
    key = (np.uint64(1), np.uint64(2))
    rows = []
    for columns in [[c] for c in range(len(BASE_COLUMNS))] + [list(range(len(BASE_COLUMNS)))]:
        swap_nulls(y, a, b, columns, 0, R=100, key=key)  # compile
        seconds = best_of(3, lambda: swap_nulls(y, a, b, columns, 0, R=PATTERNS, key=key))
        name = BASE_COLUMNS[columns[0]] if len(columns) == 1 else "all six, one pass"
        rows.append(f"| {name} | {n:,} | {seconds / PATTERNS * 1e6:.1f} | {seconds / PATTERNS / n * 1e9:.1f} |")
    return rows


def main() -> None:
    rng = np.random.default_rng(20261125)
    print(f"# {datetime.date.today()}  {cpu_model()}  ({vector_width()}), one core, CPU time, best of 3")
    y, a, b = data(1_000_000, rng)
    seconds = best_of(3, lambda: delong_difference(y, a, b, 0.95))
    print(f"DeLong, midranks, n = 1,000,000: {seconds:.3f} s")
    y, a, b = data(4000, rng)
    fast = best_of(3, lambda: delong_difference(y, a, b, 0.95))
    slow = best_of(3, lambda: pairwise_definition(y, a, b))
    print(f"DeLong at n = 4,000: midranks {fast * 1e3:.2f} ms, pairwise definition {slow * 1e3:.1f} ms "
        f"(ratio {slow / fast:.0f})")
    print("swap permutation: the 2n midranks merged into one order once; per pattern one walk of it lays out both")
    print("swapped vectors, then one walk of each per metric, tie groups closed by selects (swaps.swap_differences);")
    print(f"{PATTERNS:,} keyed patterns, scores without ties (their swapped midranks tie at random):")
    print("")
    print("| metric | n | µs per pattern | ns per (pattern, item) |")
    print("|---|---:|---:|---:|")
    for n in (1000, 10_000):
        for row in swap_table(n, rng):
            print(row)


if __name__ == "__main__":
    with recording("paired"):
        main()
