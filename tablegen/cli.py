"""Command line: ``tablegen simulate`` (one cell), ``tablegen run`` (the batch job), ``info``, ``verify``.

The lookups (``lookup``, ``test``, ``export``, ``plot``, ``info``,
``verify``) arrive with their issues; this module stays a thin layer over the library.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time

import dask

from tablegen import __version__
from tablegen.cell import simulate_cell
from tablegen.config import load_config
from tablegen.job import EXECUTORS, dry_run_plan, resolve_config, run
from tablegen.plan import chunk_seconds, format_plan
from tablegen.store import open_store, store_report, verify_report
from tablegen.metrics import known_metrics_text
from tablegen.validation import TablegenInputError


class ProgressLine:
    """A one-line progress display with rate and ETA, on stderr."""

    def __init__(self, stream=None, label="replicates"):
        self.stream = sys.stderr if stream is None else stream
        self.label, self.start = label, time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        elapsed = time.perf_counter() - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else float("nan")
        self.stream.write(f"\r{done:>12,}/{total:,} {self.label}  {100 * done / total:5.1f}%  "
                          f"{rate:,.0f}/s  ETA {eta:5.1f}s ")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def _simulate_parser(sub) -> None:
    p = sub.add_parser("simulate", help="Monte Carlo critical values of one (P, N) cell, beside exact values")
    p.add_argument("--P", type=int, required=True, help="positives in the test set")
    p.add_argument("--N", type=int, required=True, help="negatives in the test set")
    p.add_argument("--R", type=int, default=1_000_000, help="random rankings (default %(default)s)")
    p.add_argument("--seed", type=int, default=2005, help="root seed (default %(default)s)")
    p.add_argument("--metrics", nargs="+", default=None, help=f"metrics (default all): {known_metrics_text()}")
    p.add_argument("--C", type=int, nargs="+", default=[10, 100, 1000], help="numbers of competitors")
    p.add_argument("--alpha", type=float, nargs="+", default=[0.01], help="significance levels")
    p.add_argument("--no-exact", action="store_true", help="skip the exact values")


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


def _run_simulate(args) -> int:
    start = time.perf_counter()
    ds = simulate_cell(args.P, args.N, args.R, args.seed, args.metrics, args.C, args.alpha,
                       exact=not args.no_exact, progress=ProgressLine())
    print(_format_cell(ds))
    seconds = time.perf_counter() - start
    print(f"{seconds:.1f} s wall, {args.R * (args.P + args.N) / seconds / 1e6:,.0f} M element-steps/s "
          "(simulation and exact values together)")
    return 0


def _run_parser(sub) -> None:
    p = sub.add_parser("run", help="run or resume a batch job (config in YAML) into a Zarr store")
    p.add_argument("config", help="job config (YAML), e.g. configs/laptop.yaml")
    p.add_argument("--store", default=None, help="store path or fsspec URL (default: the config's)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, help="LocalCluster worker processes (1 thread each)")
    where.add_argument("--scheduler-address", default=None, help="attach to a running dask scheduler")
    where.add_argument("--scheduler-file", default=None, help="attach via a dask scheduler file")
    p.add_argument("--executor", choices=EXECUTORS, default="dask",
                   help="dask (default) or serial (all tasks in this process, no cluster)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and its estimated cost; write nothing")
    p.add_argument("--break-lock", action="store_true",
                   help="remove another run's lock first (only if that run is dead)")


class RunProgress:
    """Progress of a batch job on stderr: cells, share of the estimated work, elapsed time and ETA.

    The share is weighted by the cost model (a task at P = 1000 counts for more than one at
    P = 20), so the ETA does not race ahead on cheap tasks.  On a terminal the line is redrawn in
    place; elsewhere (logs, CI) one line is written per finished task.
    """

    def __init__(self, config, plan, stream=None):
        self.config, self.stream = config, sys.stderr if stream is None else stream
        self.total_seconds = max(plan.core_seconds_remaining, 1e-9)
        self.done_seconds, self.start = 0.0, time.perf_counter()
        self.interactive = self.stream.isatty()

    def __call__(self, done: int, total: int, chunk) -> None:
        if chunk is not None:
            self.done_seconds += chunk_seconds(self.config, chunk)
        share = min(self.done_seconds / self.total_seconds, 1.0) if done < total else 1.0
        elapsed = time.perf_counter() - self.start
        eta = f"{elapsed * (1 - share) / share:7.1f} s" if share > 0 else "      -  "
        line = (f"{done:>7,}/{total:,} cells  {100 * share:5.1f}% of the work  {elapsed:7.1f} s elapsed  "
                f"ETA {eta}" + (f"  [{chunk.label(self.config)}]" if chunk is not None else ""))
        if self.interactive:
            self.stream.write("\r" + line + ("\n" if done == total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _run_run(args) -> int:
    config = resolve_config(load_config(args.config), store_url=args.store, workers=args.workers,
                            scheduler_address=args.scheduler_address, scheduler_file=args.scheduler_file)
    plan = dry_run_plan(config)
    print(format_plan(config, plan))
    if args.dry_run:
        return 0
    summary = run(config, executor=args.executor, command=" ".join(["tablegen", *args.argv]),
                  break_lock=args.break_lock, progress=RunProgress(config, plan),
                  on_client=lambda client: print(f"dask dashboard: {client.dashboard_link}", flush=True))
    print(summary)
    return 0


def _info_parser(sub) -> None:
    p = sub.add_parser("info", help="provenance and completeness of a store (missing cells listed)")
    p.add_argument("store", help="store path or fsspec URL")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _format_axis(values) -> str:
    return ", ".join(str(v) for v in values) if len(values) <= 12 else \
        f"{values[0]}, {values[1]}, …, {values[-1]} ({len(values)} values)"


def _run_info(args) -> int:
    report = store_report(open_store(args.store))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    prov, grid = report["provenance"], report["grid"]
    state = "complete" if prov.get("complete") else "INCOMPLETE"
    lines = [f"{args.store}: {state}, {report['cells_done']:,} of {report['cells']:,} cells done",
             f"  P: {_format_axis(grid['P'])}", f"  N: {_format_axis(grid['N'])}",
             f"  metrics: {', '.join(grid['metric'])}",
             f"  C: {_format_axis(grid['C'])}; alpha: {_format_axis(grid['alpha'])}",
             f"  R = {prov.get('replicates'):,} per cell, root seed {prov.get('root_seed')}, rng {prov.get('rng')}",
             f"  written by tablegen {prov.get('tablegen_version')} (schema {prov.get('schema_version')}), "
             f"created {prov.get('created')}" + (f", completed {prov['completed']}" if prov.get("completed") else ""),
             f"  command: {prov.get('command') or '-'}",
             f"  config hash: {prov.get('config_hash')}",
             "  exact values: " + ", ".join(f"{m} {100 * share:.0f}%" for m, share in report["exact_available"].items())]
    if report["missing"]:
        shown = ", ".join(f"({P}, {N})" for P, N in report["missing"][:20])
        more = len(report["missing"]) - 20
        lines.append(f"  missing cells (P, N): {shown}" + (f" and {more:,} more" if more > 0 else ""))
    print("\n".join(lines))
    return 0


def _verify_parser(sub) -> None:
    p = sub.add_parser("verify", help="Monte Carlo against exact: CI coverage and the worst cells")
    p.add_argument("store", help="store path or fsspec URL")
    p.add_argument("--worst", type=int, default=10, help="how many worst entries to list (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _run_verify(args) -> int:
    if args.worst < 0:
        raise TablegenInputError(f"--worst must be >= 0, got {args.worst}")
    report = verify_report(open_store(args.store).load(), worst=args.worst)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    if not report["checked"]:
        print(f"{args.store}: no cell has both a Monte Carlo and an exact value; nothing to verify")
        return 0
    lines = [f"{args.store}: the exact critical value lies inside the 95% interval in {report['inside']:,} of "
             f"{report['checked']:,} checks ({100 * report['coverage']:.1f}%; expected about 95% or more)"]
    lines += [f"  {metric:<24}{v['inside']:>7,}/{v['checked']:<7,} {100 * v['inside'] / v['checked']:5.1f}%"
              for metric, v in report["by_metric"].items()]
    if report["worst"]:
        lines.append("  worst (|Monte Carlo - exact| / CI half-width):")
        lines += [f"    {w['metric']:<24} alpha {w['alpha']:<5g} C {w['C']:<5} P {w['P']:<5} N {w['N']:<5} "
                  f"MC {w['critical_value']:.6g} [{w['ci_low']:.6g}, {w['ci_high']:.6g}]  exact {w['exact']:.6g}"
                  f"{'' if w['inside'] else '  OUTSIDE'}" for w in report["worst"]]
    print("\n".join(lines))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``tablegen`` argument parser."""
    parser = argparse.ArgumentParser(prog="tablegen", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"tablegen {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", required=True)
    _simulate_parser(sub)
    _run_parser(sub)
    _info_parser(sub)
    _verify_parser(sub)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``tablegen`` command; returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not args.verbose:  # distributed logs every worker start and stop at INFO, on its own handler
        dask.config.set({"logging.distributed": "warning"})  # read when distributed is imported
        logging.getLogger("distributed").setLevel(logging.WARNING)
    try:
        return {"simulate": _run_simulate, "run": _run_run, "info": _run_info, "verify": _run_verify}[args.command](args)
    except TablegenInputError as error:
        print(f"tablegen: error: {error}", file=sys.stderr)
        return 2
