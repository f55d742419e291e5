"""Exact AUC critical values: the tilted inversion against the recursion on the whole appendix grid.

One recursion sweep (``tablegen.compute.exact.auc.auc_pmf_sweep``) up to the grid's largest cell yields the
pmf of U in every cell — 236 s and 4 GB at (1000, 1000) on one core, too much for CI, which checks
the 318 cells the bundled table's recursion values cover (``tests/compute/test_exact_auc.py``).  This script
covers all 361 cells, C = 10/100/1000 and alpha = 0.01/0.05, and also compares the tail probability
at each critical value (relative difference).  Prints the counts and the worst difference; exits 1
on any mismatch.

Usage::

    python benchmarks/verify_auc_grid.py                       # the grid of configs/paper.yaml
    python benchmarks/verify_auc_grid.py --values 20 50 100    # a smaller grid
"""

from __future__ import annotations

import argparse
import sys
import time

from tablegen.compute.exact import null_critical_value
from tablegen.compute.exact.auc import auc_null_from_pmf, auc_pmf_sweep
from tablegen.compute.exact.auc_fft import TiltedAucNull
from tablegen.compute.stats import upper_tail_probability

GRID = [20, 30, 40, 50, 60, 70, 80, 90, 100, 150, 200, 300, 400, 500, 600, 700, 800, 900, 1000]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, nargs="+", default=GRID, help="P and N values of the grid")
    args = parser.parse_args(argv)
    cells = [(P, N) for P in args.values for N in args.values]
    start, same, compared, worst = time.perf_counter(), 0, 0, 0.0
    for (P, N), pmf in auc_pmf_sweep(cells):
        reference, inversion = auc_null_from_pmf(P, N, pmf), TiltedAucNull(P, N)
        for alpha in (0.01, 0.05):
            for C in (10, 100, 1000):
                t = float(upper_tail_probability(C, alpha))
                expected, got = null_critical_value(reference, t), inversion.critical_value(t)
                compared += 1
                same += expected == got
                if expected != got:
                    print(f"MISMATCH at ({P}, {N}), C = {C}, alpha = {alpha}: recursion {expected}, inversion {got}")
                u = round(expected * P * N)
                tail = reference.tail_ge[u]
                worst = max(worst, abs(inversion.cell.upper_tail(u) / tail - 1))
    print(f"{same} of {compared} critical values identical over {len(cells)} cells; worst relative difference of "
          f"the tail at the critical value {worst:.2e}; {time.perf_counter() - start:.0f} s")
    return 0 if same == compared else 1


if __name__ == "__main__":
    sys.exit(main())
