"""Measure the per-cell cost model of :mod:`tablegen.compute.cost` on this machine and fit its coefficients.

    .venv/bin/python benchmarks/bench_cost.py            # about two minutes on one core
    .venv/bin/python benchmarks/bench_cost.py --quick    # seconds: a check that it runs (no useful fit)

Three parts are timed separately, in one process, each cell best of 3:

* simulation (``simulate_cell(..., exact=False)``, default metrics) over lane-kernel cells with
  P + N from 40 to 2000 and minority-kernel cells with min(P, N) from 10 to 60, R from 2e5 to 2e6,
  fitted by least squares as ``seconds = setup + R * sampling + per_replicate * R``, where
  sampling is ``per_element_step * (P + N)`` (lane kernel) or ``per_minority_ranking +
  per_minority_position * min(P, N)`` (minority kernel);
* the half-plane lattice exact values (best_f1 and best_balanced_accuracy), measured beside the
  model (:func:`tablegen.compute.exact.lattice.lattice_cost` per (C, alpha) pair; fitted in
  ``benchmarks/bench_lattice.py``), which should sit above them;
* the exact AUC recursion, fitted as ``seconds = per_madd * P^2 N^2 / 4``.

It prints the fitted coefficients beside those in ``tablegen/compute/cost.py`` and the relative error of
the model on every timed cell.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from machine import recording

from tablegen import simulate_cell
from tablegen.compute import cost
from tablegen.compute.cell import exact_critical_values
from tablegen.compute.exact import auc as exact_auc
from tablegen.compute.exact.auc import auc_null
from tablegen.compute.kernels.minority import uses_minority_sampling
from tablegen.compute.metrics import metric_entries

SIM_CELLS = [(20, 20), (100, 100), (500, 500), (1000, 1000), (20, 1000), (60, 2000), (10, 10000)]
SIM_R = [200_000, 2_000_000]
LATTICE_CELLS = [(100, 100), (300, 300), (1000, 1000)]
AUC_CELLS = [(100, 100), (200, 200), (300, 300)]
CRITICAL = dict(Cs=(10, 100, 1000), alphas=(0.01, 0.05))


def best_of(repeats, fn):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="a check that the script runs: three cells, R = 1e5 and 2e5, one run each (no useful fit)")
    args = parser.parse_args(argv)
    repeats, sim_cells, sim_r, lattice_cells, auc_cells = 3, SIM_CELLS, SIM_R, LATTICE_CELLS, AUC_CELLS
    if args.quick:
        repeats, sim_cells, sim_r = 1, [(20, 20), (100, 100), (10, 10000)], [100_000, 200_000]
        lattice_cells, auc_cells = [(50, 50)], [(50, 50)]
    simulate_cell(20, 20, 200_000, 1, exact=False, **CRITICAL)  # compile
    rows, seconds = [], []
    for P, N in sim_cells:
        for R in sim_r:
            t = best_of(repeats, lambda: simulate_cell(P, N, R, 1, exact=False, **CRITICAL))
            minority = uses_minority_sampling(P, N)
            rows.append((1.0, 0 if minority else R * (P + N), R * minority, R * min(P, N) * minority, R))
            seconds.append(t)
            print(f"simulate ({P:4d}, {N:4d}) R = {R:>9,}: {t:7.3f} s")
    fit, *_ = np.linalg.lstsq(np.array(rows, float), np.array(seconds), rcond=None)
    print(f"fit: setup {fit[0]:.3g} s, per element-step {fit[1]:.3g} s, per minority ranking {fit[2]:.3g} s, "
          f"per minority position {fit[3]:.3g} s, per replicate {fit[4]:.3g} s")
    pairs = len(CRITICAL["Cs"]) * len(CRITICAL["alphas"])
    for P, N in lattice_cells:
        entries = metric_entries(["best_f1", "best_balanced_accuracy"])
        t = best_of(repeats, lambda: exact_critical_values(P, N, entries, **CRITICAL))
        model = cost.cell_seconds(P, N, 0, entries, exact=True,
                                  critical_pairs=pairs) - cost.SETUP_SECONDS
        print(f"lattice ({P:4d}, {N:4d}): {t:7.3f} s measured, {model:7.3f} s modelled (lattice_cost)")
    madd = []
    for P, N in auc_cells:
        t = best_of(repeats, lambda: auc_null(P, N))
        madd.append(t / (P * P * N * N / 4))
        print(f"auc recursion ({P:4d}, {N:4d}): {t:7.3f} s = {madd[-1]:.3g} s per multiply-add")
    print("\ncoefficient            fitted      in tablegen (compute/cost.py; the AUC one in compute/exact/auc.py)")
    for name, fitted in [("SETUP_SECONDS", fit[0]), ("SECONDS_PER_ELEMENT_STEP", fit[1]),
                         ("SECONDS_PER_MINORITY_RANKING", fit[2]), ("SECONDS_PER_MINORITY_POSITION", fit[3]),
                         ("SECONDS_PER_REPLICATE", fit[4]), ("SECONDS_PER_AUC_MADD", max(madd))]:
        print(f"{name:<30}{fitted:10.3g}  {getattr(exact_auc if 'AUC' in name else cost, name):10.3g}")
    print("\nmodel error on the timed simulation cells (tablegen/compute/cost.py coefficients):")
    cells = [(P, N, R) for P, N in sim_cells for R in sim_r]
    for (P, N, R), t in zip(cells, seconds):
        model = cost.cell_seconds(P, N, R, (), exact=False, critical_pairs=0)
        print(f"  ({P:5d}, {N:5d}) R = {R:>9,}: measured {t:7.3f} s, model {model:7.3f} s "
              f"({100 * (model / t - 1):+5.1f}%)")


if __name__ == "__main__":
    with recording("cost"):
        main()
