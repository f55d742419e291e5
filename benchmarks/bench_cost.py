"""Measure the per-cell cost model of :mod:`tablegen.batch.cost` on this machine and fit its coefficients.

    .venv/bin/python benchmarks/bench_cost.py            # about two minutes on one core

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

It prints the fitted coefficients beside those in ``tablegen/batch/cost.py`` and the relative error of
the model on every timed cell.
"""

from __future__ import annotations

import time

import numpy as np

from tablegen.batch import cost
from tablegen.compute.cell import exact_critical_values, simulate_cell
from tablegen.compute.exact.auc import auc_null
from tablegen.compute.kernels.minority import uses_minority_sampling

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


def main() -> None:
    simulate_cell(20, 20, 200_000, 1, exact=False, **CRITICAL)  # compile
    rows, seconds = [], []
    for P, N in SIM_CELLS:
        for R in SIM_R:
            t = best_of(3, lambda: simulate_cell(P, N, R, 1, exact=False, **CRITICAL))
            minority = uses_minority_sampling(P, N)
            rows.append((1.0, 0 if minority else R * (P + N), R * minority, R * min(P, N) * minority, R))
            seconds.append(t)
            print(f"simulate ({P:4d}, {N:4d}) R = {R:>9,}: {t:7.3f} s")
    fit, *_ = np.linalg.lstsq(np.array(rows, float), np.array(seconds), rcond=None)
    print(f"fit: setup {fit[0]:.3g} s, per element-step {fit[1]:.3g} s, per minority ranking {fit[2]:.3g} s, "
          f"per minority position {fit[3]:.3g} s, per replicate {fit[4]:.3g} s")
    pairs = len(CRITICAL["Cs"]) * len(CRITICAL["alphas"])
    for P, N in LATTICE_CELLS:
        t = best_of(3, lambda: exact_critical_values(P, N, ["best_f1", "best_balanced_accuracy"], **CRITICAL))
        model = cost.cell_seconds(P, N, 0, ["best_f1", "best_balanced_accuracy"], exact=True,
                                  critical_pairs=pairs) - cost.SETUP_SECONDS
        print(f"lattice ({P:4d}, {N:4d}): {t:7.3f} s measured, {model:7.3f} s modelled (lattice_cost)")
    madd = []
    for P, N in AUC_CELLS:
        t = best_of(3, lambda: auc_null(P, N))
        madd.append(t / (P * P * N * N / 4))
        print(f"auc recursion ({P:4d}, {N:4d}): {t:7.3f} s = {madd[-1]:.3g} s per multiply-add")
    print("\ncoefficient            fitted      in tablegen/batch/cost.py")
    for name, fitted in [("SETUP_SECONDS", fit[0]), ("SECONDS_PER_ELEMENT_STEP", fit[1]),
                         ("SECONDS_PER_MINORITY_RANKING", fit[2]), ("SECONDS_PER_MINORITY_POSITION", fit[3]),
                         ("SECONDS_PER_REPLICATE", fit[4]), ("SECONDS_PER_AUC_MADD", max(madd))]:
        print(f"{name:<30}{fitted:10.3g}  {getattr(cost, name):10.3g}")
    print("\nmodel error on the timed simulation cells (tablegen/batch/cost.py coefficients):")
    cells = [(P, N, R) for P, N in SIM_CELLS for R in SIM_R]
    for (P, N, R), t in zip(cells, seconds):
        model = cost.cell_seconds(P, N, R, [], exact=False, critical_pairs=0)
        print(f"  ({P:5d}, {N:5d}) R = {R:>9,}: measured {t:7.3f} s, model {model:7.3f} s "
              f"({100 * (model / t - 1):+5.1f}%)")


if __name__ == "__main__":
    main()
