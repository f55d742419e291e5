"""Command line: lookups (``lookup``, ``test``, ``p-value``, ``topk``), comparisons (``compare``), tables
(``export``, ``plot``, ``info``, ``verify``), jobs (``run``, ``simulate``).

A thin layer over the library: every command maps onto one public function, bad input exits with
code 2 and a message naming the argument, and ``--json`` prints what the function returned.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
import sys
import time

from tablegen._version import __version__
from tablegen.cli.compare import add_compare_parser, run_compare
from tablegen.cli.lookup import RUNNERS as LOOKUP_RUNNERS, add_lookup_parsers
from tablegen.cli.progress import ProgressLine
from tablegen.cli.topk import add_topk_parser, run_topk
from tablegen.batch.config import EXECUTORS
from tablegen.lookup.export import FORMATS, VALUE_CHOICES
from tablegen.compute.metrics import known_metrics_text
from tablegen.errors import TablegenInputError

# Everything else is imported by the command that needs it: `tablegen --help` and a lookup load no
# dask, zarr or xarray (README §12, benchmarks/bench_startup.py).


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
    from tablegen.compute.cell import simulate_cell

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
            from tablegen.batch.plan import chunk_seconds

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
    from tablegen.batch.config import load_config
    from tablegen.batch.job import dry_run_plan, resolve_config, run
    from tablegen.batch.plan import format_plan

    config = resolve_config(load_config(args.config), store_url=args.store, workers=args.workers,
                            scheduler_address=args.scheduler_address, scheduler_file=args.scheduler_file,
                            device=args.device)
    plan = dry_run_plan(config)
    print(format_plan(config, plan))
    if args.dry_run:
        return 0
    summary = run(config, executor=args.executor, command=" ".join(["tablegen", *args.argv]),
                  break_lock=args.break_lock, progress=RunProgress(config, plan), worker_grace=args.worker_grace,
                  on_client=lambda client: print(f"dask dashboard: {client.dashboard_link}", flush=True))
    print(summary)
    return 0


def _info_parser(sub) -> None:
    p = sub.add_parser("info", help="provenance and completeness of a store (missing cells listed)")
    _store_argument(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _format_axis(values) -> str:
    return ", ".join(str(v) for v in values) if len(values) <= 12 else \
        f"{values[0]}, {values[1]}, …, {values[-1]} ({len(values)} values)"


def _store_state_text(prov: dict, report: dict) -> str:
    if prov.get("complete") and report["cells_done"] < report["cells"]:
        return "DAMAGED (marked complete, but some cells lost their done flags; `tablegen verify` names them)"
    return "complete" if prov.get("complete") else "INCOMPLETE"


def _run_info(args) -> int:
    from tablegen.store.zarr_store import store_report, store_state
    from tablegen.lookup.table import open_table

    if args.store is not None and store_state(args.store) == "unfinished":
        print(f"{args.store}: unfinished template (its creation was interrupted; no data was written); the next "
              "`tablegen run` of its config writes it again")
        return 0
    table = open_table(args.store, allow_incomplete=True)
    report = store_report(table.ds)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    prov, grid = report["provenance"], report["grid"]
    state = _store_state_text(prov, report)
    lines = [f"{table.source}: {state}, {report['cells_done']:,} of {report['cells']:,} cells done",
             f"  P: {_format_axis(grid['P'])}", f"  N: {_format_axis(grid['N'])}",
             f"  metrics: {', '.join(grid['metric'])}",
             f"  C: {_format_axis(grid['C'])}; alpha: {_format_axis(grid['alpha'])}",
             f"  R = {prov.get('replicates'):,} per cell, root seed {prov.get('root_seed')}, rng {prov.get('rng')}",
             f"  written by tablegen {prov.get('tablegen_version')} (schema {prov.get('schema_version')}), "
             f"created {prov.get('created')}" + (f", completed {prov['completed']}" if prov.get("completed") else ""),
             f"  command: {prov.get('command') or '-'}",
             f"  config hash: {prov.get('config_hash')}",
             "  exact values: " + ", ".join(f"{m} {100 * share:.0f}%"
                                            for m, share in report["exact_available"].items())]
    if report["missing"]:
        shown = ", ".join(f"({P}, {N})" for P, N in report["missing"][:20])
        more = len(report["missing"]) - 20
        lines.append(f"  missing cells (P, N): {shown}" + (f" and {more:,} more" if more > 0 else ""))
    print("\n".join(lines))
    return 0


def _verify_parser(sub) -> None:
    p = sub.add_parser("verify", help="Monte Carlo against exact: CI coverage and the worst cells")
    _store_argument(p)
    p.add_argument("--worst", type=int, default=10, help="how many worst entries to list (default %(default)s)")
    p.add_argument("--integrity", action=argparse.BooleanOptionalAction, default=True,
                   help="first check every chunk's checksum and hash against the store's manifest and every done "
                        "cell for missing data (default on); damage exits with code 3")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _integrity_lines(source: str, report) -> list[str]:
    if report.unchecked:
        return [f"{source}: integrity not checked: {report.unchecked}"]
    if report.ok:
        return [f"{source}: integrity: {report.chunks_checked:,} chunks match the manifest"]
    lines = [f"{source}: DAMAGED: {len(report.problems):,} problems"]
    lines += [f"  {problem}" for problem in report.problems[:50]]
    if len(report.problems) > 50:
        lines.append(f"  and {len(report.problems) - 50:,} more (--json lists all)")
    lines.append("  re-create the store: its metadata is damaged" if report.fatal else
                 f"  `tablegen run CONFIG --store {source}` recomputes the {len(report.regions):,} damaged chunks")
    return lines


def _run_verify(args) -> int:
    from tablegen.store.zarr_store import verify_report
    from tablegen.lookup.table import open_table

    from tablegen.store.zarr_store import check_integrity
    from tablegen.store.schema import bundled_table_path

    if args.worst < 0:
        raise TablegenInputError(f"--worst must be >= 0, got {args.worst}")
    integrity = check_integrity(args.store or bundled_table_path()) if args.integrity else None
    if integrity is not None and not integrity.ok:
        if args.json:
            print(json.dumps({"integrity": integrity.to_dict()}, indent=2))
        else:
            print("\n".join(_integrity_lines(args.store or "bundled table", integrity)))
        return 3
    table = open_table(args.store, allow_incomplete=True)
    report = verify_report(table.ds.load(), worst=args.worst)
    if args.json:
        print(json.dumps({**report, "integrity": integrity.to_dict() if integrity else None}, indent=2))
        return 0
    if integrity is not None:
        print(_integrity_lines(table.source, integrity)[0])
    if not report["checked"]:
        print(f"{table.source}: no cell has both a Monte Carlo and an exact value; nothing to verify")
        return 0
    lines = [f"{table.source}: the exact critical value lies inside the 95% interval in {report['inside']:,} of "
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


def _store_argument(p, required=False) -> None:
    if required:
        p.add_argument("store", help="store path or fsspec URL")
    else:
        p.add_argument("store", nargs="?", default=None, help="store path or fsspec URL (default: the bundled table)")


def _finished_table(store):
    """The store for export and plot; unfinished cells are shown empty, with a warning."""
    import numpy as np

    from tablegen.lookup.table import open_table

    table = open_table(store, allow_incomplete=True)
    if not table.ds.attrs.get("complete"):
        missing = int((~np.asarray(table.ds.done.values, dtype=bool)).sum())
        print(f"tablegen: warning: {table.source} is unfinished; {missing:,} cells are left empty", file=sys.stderr)
    return table


def _table_parser(sub, name, help_text) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help_text)
    _store_argument(p)
    p.add_argument("--metric", required=True, help=f"metric: {known_metrics_text()}")
    p.add_argument("--C", type=int, required=True, help="number of competing classifiers")
    p.add_argument("--alpha", type=float, default=0.01, help="significance level (default %(default)s)")
    p.add_argument("--values", choices=VALUE_CHOICES, default="best",
                   help="best (default: exact where stored, else Monte Carlo), monte-carlo or exact")
    return p


def _export_parser(sub) -> None:
    p = _table_parser(sub, "export", "a metric's critical values in the paper's appendix layout (Pos \\ Neg)")
    p.add_argument("--format", choices=FORMATS, default="markdown", help="output format (default %(default)s)")
    p.add_argument("--digits", type=int, default=None, help="decimals (default 3; 0 for counts)")
    p.add_argument("-o", "--output", default=None, help="write to this file instead of standard output")


def _run_export(args) -> int:
    from tablegen.lookup.export import appendix_grid, format_appendix

    if args.digits is not None and not 0 <= args.digits <= 15:
        raise TablegenInputError(f"--digits must be in 0..15, got {args.digits}")
    grid = appendix_grid(_finished_table(args.store), args.metric, args.C, args.alpha, args.values)
    text = format_appendix(grid, args.format, args.digits)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise TablegenInputError(f"-o {args.output}: cannot write the table ({error})") from None
    print(f"wrote {args.output}")
    return 0


def _plot_parser(sub) -> None:
    p = _table_parser(sub, "plot", "critical value over (P, N) as a contour chart or surface (PNG, PDF, SVG)")
    p.add_argument("--kind", choices=("contour", "surface"), default="contour", help="default %(default)s")
    p.add_argument("-o", "--output", required=True, help="image file, e.g. auc_C1000.png")


def _run_plot(args) -> int:
    from tablegen.cli.images import image_errors
    from tablegen.lookup.plot import plot_critical_values  # matplotlib is optional

    with image_errors("-o", args.output):
        plot_critical_values(_finished_table(args.store), args.metric, args.C, args.alpha, args.kind, args.output,
                             args.values)
    print(f"wrote {args.output}")
    return 0


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, unless it is None/False or the help text already says it."""

    def _get_help_string(self, action):
        if action.default in (None, False) or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose ``--help`` shows every option's default (subcommands inherit it)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The ``tablegen`` argument parser."""
    parser = _Parser(prog="tablegen", description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--version", action="version", version=f"tablegen {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    add_lookup_parsers(sub)
    add_topk_parser(sub)
    add_compare_parser(sub)
    _export_parser(sub)
    _plot_parser(sub)
    _info_parser(sub)
    _verify_parser(sub)
    _run_parser(sub)
    _simulate_parser(sub)
    _verbose_everywhere(sub)
    return parser


def _verbose_everywhere(subparsers) -> None:
    """Accept -v after a subcommand too (``tablegen run cfg.yaml -v``), at every level."""
    for parser in subparsers.choices.values():
        parser.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                            help="log progress details")
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _verbose_everywhere(action)


def main(argv=None) -> int:
    """Entry point of the ``tablegen`` command; returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not args.verbose and args.command == "run":  # distributed logs every worker start and stop at INFO
        import dask

        dask.config.set({"logging.distributed": "warning"})  # read when distributed is imported
        logging.getLogger("distributed").setLevel(logging.WARNING)
    try:
        commands = {**LOOKUP_RUNNERS, "topk": run_topk,
                    "compare": run_compare, "export": _run_export, "plot": _run_plot, "info": _run_info,
                    "verify": _run_verify, "run": _run_run, "simulate": _run_simulate}
        return commands[args.command](args)
    except TablegenInputError as error:  # the library names Python arguments; say the options here
        message = re.sub(r"method='(\w+)'", r"--method \1", str(error))
        message = re.sub(r"observed\[\d+\] \(k = (\d+)\)", r"the count at k = \1", message)
        print(f"tablegen: error: {message}", file=sys.stderr)
        return error.exit_code  # exit codes: tablegen.errors, README "Exit codes"
