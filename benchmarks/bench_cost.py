"""Measure the cost model of :mod:`tablegen.compute.cost` on this machine (CPU time) and fit its coefficients.

    .venv/bin/python benchmarks/bench_cost.py            # about five minutes of CPU
    .venv/bin/python benchmarks/bench_cost.py --quick    # a check that it runs (no useful fit)

The machine may be shared: every figure is CPU time (``time.process_time``, and the children's rusage for
a run's processes) beside wall time, with the load average.  Parts, in one process:

* simulation: ``simulate_cell(..., exact=False)`` with the default metrics (and with AUC alone on a few
  cells, which separates the per-ranking costs of sampling and of tail bookkeeping) on small cells
  ((20, 20) to (100, 100)), lane-kernel cells to (2000, 2000), large cells ((5e4, 5e4), (1e5, 1e5)) and
  skewed cells (minority-class kernel, to (20, 1e5)), R chosen for about a second each, best of 3 by CPU.
  Fitted by least squares on the relative error (every row divided by its measured seconds) as
  ``setup + R (lane_ranking + per_element_step (P + N)) + R per_replicate metrics`` (lane kernel) and
  ``setup + R (minority_ranking + minority_position min(P, N) + minority_rank (P + N)) + R per_replicate
  metrics`` (minority kernel);
* start-up: ``tablegen run`` of a one-cell job (AUC alone, no exact values) and of ``configs/smoke.yaml``
  with ``--executor serial`` and with a LocalCluster of 1 and 2 workers (a fresh process each time,
  kernels already in numba's cache): the CPU of the command and all its processes less the model's
  seconds of the cells, fitted as ``startup + cluster + workers (per_worker + per_worker_exact)``
  (``cluster`` only with a LocalCluster, ``per_worker_exact`` only for a job with exact values);
* the model (the coefficients in ``tablegen/compute/cost.py``) against every measured figure: the ratio
  model / measured, which should lie within 1/1.5 .. 1.5;
* the half-plane lattice exact values and the exact AUC recursion beside their own models (fitted in
  ``benchmarks/bench_lattice.py`` and ``tablegen/compute/exact/auc.py``).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from machine import load_average, recording

from tablegen import simulate_cell
from tablegen.compute import cost
from tablegen.compute.cell import exact_critical_values
from tablegen.compute.exact import auc as exact_auc
from tablegen.compute.exact.auc import auc_pmf_sweep
from tablegen.compute.kernels.minority import uses_minority_sampling
from tablegen.compute.metrics import DEFAULT_METRICS, metric_entries

#: (P, N, regime label) of the simulation cells
SIM_CELLS = [(20, 20, "small"), (50, 50, "small"), (100, 100, "small"), (300, 300, "lane"), (1000, 1000, "lane"),
             (2000, 2000, "lane"), (50_000, 50_000, "large"), (100_000, 100_000, "large"), (20, 1000, "skewed"),
             (60, 2000, "skewed"), (10, 10_000, "skewed"), (20, 100_000, "skewed")]
#: cells also timed with AUC alone (one tail instead of six)
ONE_METRIC_CELLS = [(20, 20), (1000, 1000), (20, 1000)]
LATTICE_CELLS = [(100, 100), (300, 300), (1000, 1000)]
AUC_CELLS = [(100, 100), (200, 200), (300, 300)]
CRITICAL = dict(Cs=(10, 100, 1000), alphas=(0.01, 0.05))
ROOT = Path(__file__).resolve().parents[1]


def best_of(repeats, fn) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of the run with the least CPU time."""
    runs = []
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        fn()
        runs.append((time.process_time() - cpu, time.perf_counter() - wall))
    return min(runs)


def replicates_for(P, N, metrics, seconds) -> int:
    """R for about ``seconds`` of CPU by the current model, at least 10^5 (the deepest C and alpha need it)."""
    per_ranking = cost.sampling_seconds(P, N, metrics) + cost.SECONDS_PER_REPLICATE * len(metrics)
    return int(max(100_000, min(20_000_000, seconds / per_ranking)) // 1000 * 1000)


def simulation_rows(quick: bool):
    """[(P, N, R, metric count, regime, cpu, wall)] of the timed simulations."""
    repeats, seconds = (1, 0.1) if quick else (3, 1.0)
    cells = [(P, N, regime, DEFAULT_METRICS) for P, N, regime in SIM_CELLS]
    cells += [(P, N, "one metric", ("auc",)) for P, N in ONE_METRIC_CELLS]
    if quick:
        cells = [cell for cell in cells if cell[0] + cell[1] <= 2000]
    rows = []
    for P, N, regime, metrics in cells:
        R = replicates_for(P, N, metric_entries(metrics), seconds)
        simulate_cell(P, N, 100_000, 1, list(metrics), exact=False, **CRITICAL)  # compile / load the kernels
        cpu, wall = best_of(repeats, lambda: simulate_cell(P, N, R, 1, list(metrics), exact=False, **CRITICAL))
        if regime != "one metric":  # the model's regime (small: its tail bookkeeping costs at least the sampling)
            regime = cost.REGIMES[int(cost.regimes(np.array([P]), np.array([N]), metric_entries(metrics))[0])]
        rows.append((P, N, R, len(metrics), regime, cpu, wall))
    return rows


def fit_simulation(rows) -> dict:
    """Non-negative least squares on the relative error of the simulation model's six per-ranking coefficients
    (SETUP_SECONDS, a few ms, is kept as it is: at these R it is below the noise)."""
    from scipy.optimize import nnls

    design, target = [], []
    for P, N, R, metrics, _, cpu, _ in rows:
        minority = uses_minority_sampling(P, N)
        lane = not minority
        design.append([R * lane, R * (P + N) * lane, R * minority, R * min(P, N) * minority,
                       R * (P + N) * minority, R * metrics])
        target.append(cpu - cost.SETUP_SECONDS)
    design, target = np.array(design, float), np.array(target)
    weights = 1.0 / target
    fit, _ = nnls(design * weights[:, None], target * weights)
    names = ("SECONDS_PER_LANE_RANKING", "SECONDS_PER_ELEMENT_STEP", "SECONDS_PER_MINORITY_RANKING",
             "SECONDS_PER_MINORITY_POSITION", "SECONDS_PER_MINORITY_RANK", "SECONDS_PER_REPLICATE")
    return dict(zip(names, fit))


def run_cpu(arguments: list[str]) -> tuple[float, float]:
    """(CPU seconds of the command and every process it waited for, wall seconds)."""
    before, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([sys.executable, "-m", "tablegen", *arguments], check=True, capture_output=True, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), time.perf_counter() - wall


#: The start-up jobs: one cell with AUC alone and no exact values, and configs/smoke.yaml (nine cells, default
#: metrics, exact values: the workers' first tasks load the exact routines too)
TINY_JOB = ("name: tiny\ngrid: {P: [20], N: [20]}\nreplicates: 2000\nseed: 1\nmetrics: [auc]\nCs: [10]\n"
            "alphas: [0.05]\nexact: false\nchunks: {P: 1, N: 1}\nstore: {url: unused.zarr}\n")


def startup_rows(quick: bool):
    """[(job, workers, cpu, wall, cells' model seconds)] of ``tablegen run``: serial (0 workers) and LocalClusters
    of 1 and 2 workers, each after a warm-up run (files cached, kernels compiled)."""
    from tablegen.batch.config import load_config
    from tablegen.batch.plan import make_plan

    rows = []
    with tempfile.TemporaryDirectory() as place:
        tiny = Path(place) / "tiny.yaml"
        tiny.write_text(TINY_JOB)
        for name, config in (("one cell, AUC", tiny), ("configs/smoke.yaml", ROOT / "configs" / "smoke.yaml")):
            cells = make_plan(load_config(config)).core_seconds
            for workers in (0, 1, 2) if not quick else (0,):
                where = ["--executor", "serial"] if workers == 0 else ["--workers", str(workers)]
                for attempt in ("warm-up", "timed"):
                    store = Path(place) / f"{config.stem}-{workers}-{attempt}.zarr"
                    cpu, wall = run_cpu(["run", str(config), "--store", str(store), *where])
                rows.append((name, workers, cpu, wall, cells))
    return rows


def fit_startup(rows) -> dict:
    """Least squares of the start-up's four coefficients on (measured CPU - the cells' model seconds)."""
    design = [[1.0, float(w > 0), w, w * (name != "one cell, AUC")] for name, w, _, _, _ in rows]
    target = [cpu - cells for _, _, cpu, _, cells in rows]
    fit, *_ = np.linalg.lstsq(np.array(design), np.array(target), rcond=None)
    return dict(zip(("STARTUP_SECONDS", "STARTUP_SECONDS_CLUSTER", "STARTUP_SECONDS_PER_WORKER",
                     "STARTUP_SECONDS_PER_WORKER_EXACT"), fit))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a check that the script runs (no useful fit)")
    args = parser.parse_args(argv)
    print(f"load average at the start: {load_average()}; {os.cpu_count()} logical CPUs; CPU seconds "
          "(process_time; a run's processes by rusage) beside wall seconds")
    rows = simulation_rows(args.quick)
    fitted = fit_simulation(rows)
    starts = startup_rows(args.quick)
    fitted.update(fit_startup(starts))

    print("\n| cell (P, N) | regime | metrics | R | CPU s | wall s | ns per ranking (CPU) | ns per element-step "
          "| model CPU s | model / CPU |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios = []
    for P, N, R, metrics, regime, cpu, wall in rows:
        entries = metric_entries(DEFAULT_METRICS if metrics > 1 else ["auc"])
        model = cost.cell_seconds(P, N, R, entries, exact=False, critical_pairs=0)
        ratios.append(model / cpu)
        print(f"| ({P:,}, {N:,}) | {regime} | {metrics} | {R:,} | {cpu:.3f} | {wall:.3f} | {cpu / R * 1e9:.1f} | "
              f"{cpu / R / (P + N) * 1e9:.3f} | {model:.3f} | {model / cpu:.2f} |")
    print("\n| `tablegen run` (start-up included) | executor | CPU s, all processes | wall s | model CPU s "
          "(start-up + cells) | model / CPU |")
    print("|---|---|---:|---:|---:|---:|")
    for name, w, cpu, wall, cells in starts:
        model = cost.startup_seconds(w, exact=name != "one cell, AUC") + cells
        ratios.append(model / cpu)
        print(f"| {name} | {'serial' if w == 0 else f'LocalCluster, {w} worker(s)'} | {cpu:.2f} | {wall:.2f} | "
              f"{model:.2f} | {model / cpu:.2f} |")
    by_cell = {(P, N): cpu / R / (P + N) for P, N, R, m, _, cpu, _ in rows if m > 1}
    if (1000, 1000) in by_cell:
        print("\nCPU per element-step against (1000, 1000), default metrics, same process: "
              + ", ".join(f"({P:,}, {N:,}) {v / by_cell[1000, 1000]:.2f}x" for (P, N), v in by_cell.items()
                          if not uses_minority_sampling(P, N)))
    print(f"model / CPU over every row above: {min(ratios):.2f} .. {max(ratios):.2f}")

    pairs = len(CRITICAL["Cs"]) * len(CRITICAL["alphas"])
    lattice_cells, auc_cells = ([(50, 50)], [(50, 50)]) if args.quick else (LATTICE_CELLS, AUC_CELLS)
    print()
    for P, N in lattice_cells:
        entries = metric_entries(["best_f1", "best_balanced_accuracy"])
        cpu, _ = best_of(1 if args.quick else 3, lambda: exact_critical_values(P, N, entries, **CRITICAL))
        model = cost.cell_seconds(P, N, 0, entries, exact=True, critical_pairs=pairs) - cost.SETUP_SECONDS
        print(f"lattice ({P:4d}, {N:4d}): {cpu:7.3f} CPU s measured, {model:7.3f} s modelled (lattice_cost)")
    madd = []
    for P, N in auc_cells:  # the recursion itself (auc_null may take the tilted inversion, and caches)
        cpu, _ = best_of(1 if args.quick else 3, lambda: list(auc_pmf_sweep([(P, N)])))
        madd.append(cpu / (P * P * N * N / 4))
        print(f"auc recursion ({P:4d}, {N:4d}): {cpu:7.3f} CPU s = {madd[-1]:.3g} s per multiply-add")

    print("\ncoefficient                       fitted  in tablegen (compute/cost.py; AUC's in compute/exact/auc.py)")
    for name, value in [*fitted.items(), ("SECONDS_PER_AUC_MADD", max(madd))]:
        print(f"{name:<30}{value:10.3g}  {getattr(exact_auc if 'AUC' in name else cost, name):10.3g}")
    print(f"load average at the end: {load_average()}")


if __name__ == "__main__":
    with recording("cost"):
        main()
