"""What the paired tests cost: DeLong by midranks at n = 10⁶, against the O(PN) pairwise definition, and the
swap permutation per pattern.

    .venv/bin/python benchmarks/bench_paired.py

One core, CPU time, best of 3.  DeLong: `tablegen.compare.pairwise.delong.delong_difference` at n = 10⁶
(target ≤ 1 s) and at n = 4,000 beside the pairwise definition (every positive-negative pair compared,
as the test suite's reference does), whose cost grows as P·N.  Permutation: the kernel's differences per
swap pattern (one walk of the merged 2n values, then a walk of each swapped vector) at n = 1,000 and 10,000.
"""

import os

for _variable in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import datetime  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from machine import cpu_model, record, vector_width  # noqa: E402

from tablegen.compare.pairwise.delong import delong_difference  # noqa: E402
from tablegen.compare.pairwise.tests import swap_null  # noqa: E402


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


def main() -> None:
    printed = []

    def out(line):
        print(line)
        printed.append(line)

    rng = np.random.default_rng(20261125)
    out(f"# {datetime.date.today()}  {cpu_model()}  ({vector_width()}), one core, CPU time, best of 3")
    y, a, b = data(1_000_000, rng)
    seconds = best_of(3, lambda: delong_difference(y, a, b, 0.95))
    out(f"DeLong, midranks, n = 1,000,000: {seconds:.3f} s")
    y, a, b = data(4000, rng)
    fast = best_of(3, lambda: delong_difference(y, a, b, 0.95))
    slow = best_of(3, lambda: pairwise_definition(y, a, b))
    out(f"DeLong at n = 4,000: midranks {fast * 1e3:.2f} ms, pairwise definition {slow * 1e3:.1f} ms "
        f"(ratio {slow / fast:.0f})")
    for n in (1000, 10_000):
        y, a, b = data(n, rng)
        swap_null(y, a, b, 2, 0, R=100, key=(np.uint64(1), np.uint64(2)))  # compile
        seconds = best_of(3, lambda: swap_null(y, a, b, 2, 0, R=2000, key=(np.uint64(1), np.uint64(2))))
        out(f"swap permutation (best_f1), n = {n:,}: {seconds / 2000 * 1e6:.1f} µs per pattern "
            f"({seconds / 2000 / n * 1e9:.1f} ns per item)")
    record("paired", ".venv/bin/python benchmarks/bench_paired.py", printed)


if __name__ == "__main__":
    main()
