"""``tablegen run`` (a batch job into a store) and ``tablegen simulate`` (one cell, printed).

The command-line side of :func:`tablegen.batch.job.run` and :func:`tablegen.compute.cell.simulate_cell`.
With ``--json`` each prints what its function returned as JSON on stdout and nothing else (the plan,
the dashboard link and progress go to stderr).  Registered by :mod:`tablegen.cli.main`.
"""

from __future__ import annotations

import math
import sys
import time

from tablegen.batch.config import EXECUTORS
from tablegen.cli.options import metric_name, storage_options_argument, storage_options_from
from tablegen.cli.progress import ProgressLine, RunProgress
from tablegen.common.outputs import json_text
from tablegen.compute.metrics import known_metrics_text
from tablegen.errors import TablegenInputError


def add_run_parsers(sub) -> None:
    """Add ``run`` and ``simulate``, each with its ``run`` default."""
    _run_parser(sub)
    _simulate_parser(sub)


def _simulate_parser(sub) -> None:
    p = sub.add_parser("simulate", help="Monte Carlo critical values of one (P, N) cell, beside exact values")
    p.add_argument("--P", type=int, required=True, help="positives in the test set")
    p.add_argument("--N", type=int, required=True, help="negatives in the test set")
    p.add_argument("--R", type=int, default=None,
                   help="random rankings (default: about 5 s of simulation on one core, at least 4x the minimum "
                        "of every C and alpha, as for a simulated lookup: tablegen.lookup.api.simulation_replicates)")
    p.add_argument("--seed", type=int, default=None,
                   help="root seed (default 2005, as for a simulated lookup: the same cell, the same answer)")
    p.add_argument("--metrics", nargs="+", default=None, type=metric_name,
                   help=f"metrics (default all): {known_metrics_text()}")
    p.add_argument("--C", type=int, nargs="+", default=[10, 100, 1000], help="numbers of competitors")
    p.add_argument("--alpha", type=float, nargs="+", default=[0.01], help="significance levels")
    p.add_argument("--no-exact", action="store_true", help="skip the exact values")
    p.add_argument("--json", action="store_true", help="print the cell's values as JSON")
    p.set_defaults(run=_run_simulate)


def _format_cell(ds) -> str:
    lines = [f"P = {int(ds.P)}, N = {int(ds.N)}, R = {int(ds.replicates):,}, seed = {ds.attrs['root_seed']}",
             f"{'metric':<24}{'alpha':>7}{'C':>6}  {'critical value':>15}  {'95% CI':>21}  {'exact':>10}"]
    for metric in ds.metric.values:
        for alpha in ds.alpha.values:
            for C in ds.C.values:
                cell = ds.sel(metric=metric, alpha=alpha, C=C)
                exact = float(cell.exact_critical_value)
                lines.append(f"{metric:<24}{alpha:>7g}{C:>6}  {float(cell.critical_value):>15.6g}  "
                             f"[{float(cell.ci_low):>9.6g}, {float(cell.ci_high):>9.6g}]  "
                             f"{'-' if math.isnan(exact) else format(exact, '.6g'):>10}")
    return "\n".join(lines)


def _number(value) -> float | None:
    """A float for JSON: NaN (no value) as null."""
    value = float(value)
    return None if math.isnan(value) else value


def cell_to_dict(ds) -> dict:
    """One simulated cell as JSON-ready values: P, N, R, seed, then per (metric, alpha, C) the Monte Carlo
    critical value, its 95% interval and the exact value (null where there is none), and the tail quantiles."""
    values = [{"metric": str(metric), "alpha": float(alpha), "C": int(C),
               "critical_value": _number(cell.critical_value), "ci_low": _number(cell.ci_low),
               "ci_high": _number(cell.ci_high), "exact_critical_value": _number(cell.exact_critical_value)}
              for metric in ds.metric.values for alpha in ds.alpha.values for C in ds.C.values
              for cell in [ds.sel(metric=metric, alpha=alpha, C=C)]]
    tails = {str(metric): [_number(v) for v in ds.tail_quantile.sel(metric=metric).values]
             for metric in ds.metric.values}
    return {"P": int(ds.P), "N": int(ds.N), "R": int(ds.replicates), "seed": ds.attrs["root_seed"],
            "values": values, "tail_probability": [float(t) for t in ds.tail_probability.values],
            "tail_quantile": tails}


def _run_simulate(args) -> int:
    from tablegen import simulate_cell  # the public facade: the cell engine's labelled front
    from tablegen.compute.cell import DEFAULT_SEED
    from tablegen.lookup.api import simulation_replicates

    start = time.perf_counter()
    R = args.R if args.R is not None else max(simulation_replicates(args.P, args.N, C, alpha)
                                              for C in args.C for alpha in args.alpha)
    ds = simulate_cell(args.P, args.N, R, DEFAULT_SEED if args.seed is None else args.seed, args.metrics, args.C,
                       args.alpha, exact=not args.no_exact, progress=ProgressLine())
    if args.json:
        print(json_text(cell_to_dict(ds)))
        return 0
    print(_format_cell(ds))
    seconds = time.perf_counter() - start
    print(f"{seconds:.1f} s wall, {R * (args.P + args.N) / seconds / 1e6:,.0f} M element-steps/s "
          "(simulation and exact values together)")
    return 0


def _run_parser(sub) -> None:
    p = sub.add_parser("run", help="run or resume a batch job (config in YAML) into a Zarr store")
    p.add_argument("config", help="job config (YAML), e.g. configs/laptop.yaml")
    p.add_argument("--store", default=None, help="store path or fsspec URL (default: the config's)")
    storage_options_argument(p)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, help="LocalCluster worker processes (1 thread each)")
    where.add_argument("--scheduler-address", default=None, help="attach to a running dask scheduler")
    where.add_argument("--scheduler-file", default=None, help="attach via a dask scheduler file")
    p.add_argument("--executor", choices=EXECUTORS, default="dask",
                   help="dask (default) or serial (all tasks in this process, no cluster)")
    p.add_argument("--device", choices=("cpu", "cuda", "auto"), default=None,
                   help="score rankings on CPUs or GPUs (one dask worker per GPU); same store bit for bit "
                        "(default: the config's device field, else cpu)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and its estimated cost; write nothing")
    p.add_argument("--break-lock", action="store_true",
                   help="take over a lock left by a run on another host (after checking it is dead); a live "
                        "run's lock is never broken")
    p.add_argument("--worker-grace", type=float, default=None, metavar="SECONDS",
                   help="stop (exit code 4, lock released, resumable) after this long without any dask worker "
                        "(default: the config's cluster.worker_grace, else 300)")
    p.add_argument("--json", action="store_true",
                   help="print the run's summary (with --dry-run: the plan's totals) as JSON on stdout; the plan "
                        "and progress go to stderr")
    p.set_defaults(run=_run_run)


def plan_to_dict(plan) -> dict:
    """A plan's totals as JSON-ready values (``tablegen run --dry-run --json``): cells and chunks, the cost
    model's CPU seconds (cells, exact values within them, start-up) and each regime's cells and seconds."""
    return {"cells": plan.cells, "cells_done": plan.cells_done, "cells_remaining": plan.cells_remaining,
            "chunks": len(plan.chunks), "chunks_remaining": len(plan.remaining),
            "core_seconds": plan.core_seconds, "core_seconds_remaining": plan.core_seconds_remaining,
            "startup_seconds": plan.startup_seconds, "exact_seconds": plan.exact_seconds,
            "regimes": {name: {"cells": cells, "core_seconds": seconds}
                        for name, (cells, seconds) in plan.regimes.items()}}


def _check_cluster_options(args) -> None:
    """Refuse cluster options that ``--executor serial`` would ignore, and a scheduler address that is not one
    (before the config is read: a usage error, exit code 2)."""
    from tablegen.batch.config import scheduler_address_problem

    if args.executor == "serial":
        given = [option for option, value in (("--workers", args.workers), ("--scheduler-address",
                                              args.scheduler_address), ("--scheduler-file", args.scheduler_file),
                                              ("--worker-grace", args.worker_grace)) if value is not None]
        if given:
            raise TablegenInputError(f"{given[0]} applies to --executor dask (the default), not to --executor "
                                     "serial, which runs every task in this process")
    problem = scheduler_address_problem(args.scheduler_address) if args.scheduler_address is not None else None
    if problem:
        raise TablegenInputError(f"--scheduler-address {problem}")


def _run_run(args) -> int:
    from tablegen.batch.config import load_config
    from tablegen.batch.job import dry_run_plan, resolve_config, run
    from tablegen.batch.plan import format_plan

    _check_cluster_options(args)
    config = resolve_config(load_config(args.config), store_url=args.store, workers=args.workers,
                            scheduler_address=args.scheduler_address, scheduler_file=args.scheduler_file,
                            device=args.device, storage_options=storage_options_from(args))
    if getattr(config, "kind", None) == "multiclass":  # a kind: multiclass job (tablegen.batch.multiclass_job)
        from tablegen.cli.run_multiclass import run_multiclass_command

        return run_multiclass_command(args, config)
    text = sys.stderr if args.json else sys.stdout  # with --json, stdout holds the JSON only
    if args.dry_run:
        plan = dry_run_plan(config)
        print(format_plan(config, plan), file=text)
        if args.json:
            print(json_text(plan_to_dict(plan)))
        return 0
    progress = {}

    def show_plan(plan) -> None:  # called once the store is locked and inspected: one plan per run
        print(format_plan(config, plan), file=text, flush=True)
        progress["line"] = RunProgress(config, plan)

    def show_client(client) -> None:  # the cluster is up: the tasks are submitted next
        progress["line"].tasks_started()
        print(f"dask dashboard: {client.dashboard_link}", file=text, flush=True)

    summary = run(config, executor=args.executor, command=" ".join(["tablegen", *args.argv]),
                  break_lock=args.break_lock, progress=lambda *a: progress["line"](*a),
                  worker_grace=args.worker_grace, on_plan=show_plan, on_client=show_client,
                  on_work=lambda *a: progress["line"].work(*a))
    print(json_text(summary.to_dict()) if args.json else summary)
    return 0
