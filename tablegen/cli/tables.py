"""``tablegen info``, ``verify``, ``export`` and ``plot``: reports on a store and its tables.

The command-line side of :func:`tablegen.store.zarr_store.store_report`, ``check_integrity`` and
``verify_report``, and of :mod:`tablegen.lookup.export` and :mod:`tablegen.lookup.plot`.  Each parser
sets its run function with ``set_defaults(run=...)``; registered by :mod:`tablegen.cli.main`.
"""

from __future__ import annotations

import argparse
import sys

from tablegen.cli.options import metric_name, storage_options_argument, storage_options_from
from tablegen.common.outputs import json_text
from tablegen.compute.metrics import known_metrics_text
from tablegen.errors import TablegenInputError
from tablegen.lookup.export import FORMATS, VALUE_CHOICES


def add_table_parsers(sub) -> None:
    """Add ``export``, ``plot``, ``info`` and ``verify``, each with its ``run`` default."""
    _export_parser(sub)
    _plot_parser(sub)
    _info_parser(sub)
    _verify_parser(sub)


def _info_parser(sub) -> None:
    p = sub.add_parser("info", help="provenance and completeness of a store, binary or multi-class (missing cells "
                                    "listed)")
    _store_argument(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=_run_info)


def _format_axis(values) -> str:
    return ", ".join(str(v) for v in values) if len(values) <= 12 else \
        f"{values[0]}, {values[1]}, …, {values[-1]} ({len(values)} values)"


def _store_state_text(prov: dict, report: dict) -> str:
    if prov.get("complete") and report["cells_done"] < report["cells"]:
        return "DAMAGED (marked complete, but some cells lost their done flags; `tablegen verify` names them)"
    return "complete" if prov.get("complete") else "INCOMPLETE"


def _multiclass_store(args) -> bool:
    """Whether the command's store is a multi-class table (the store of a ``kind: multiclass`` job)."""
    from tablegen.store.multiclass_store import is_multiclass_store

    return args.store is not None and is_multiclass_store(args.store, storage_options_from(args))


def _run_multiclass_info(args) -> int:
    """``tablegen info`` of a multi-class table: what it holds, after every chunk is checked against the manifest
    (a damaged store is refused, exit 3, naming what is damaged)."""
    from tablegen.compute.limits import format_bytes
    from tablegen.lookup.multiclass_table import open_multiclass_table
    from tablegen.store.multiclass_store import multiclass_state, multiclass_store_report

    options = storage_options_from(args)
    if multiclass_state(args.store, options) == "unfinished":
        print(f"{args.store}: unfinished template (its creation was interrupted; no data was written); the next "
              "`tablegen run` of its config writes it again")
        return 0
    open_multiclass_table(args.store, options)  # the metadata against the manifest: damage is refused, named
    report = multiclass_store_report(args.store, options)
    if args.json:
        print(json_text(report))
        return 0
    prov, grid = report["provenance"], report["grid"]
    state = "complete" if prov.get("complete") else "INCOMPLETE"
    lines = [f"{args.store}: multi-class table (kind: multiclass), {state}, {report['cells_done']:,} of "
             f"{report['cells']:,} cells done",
             f"  K: {_format_axis(grid['K'])}", f"  n_per_class: {_format_axis(grid['n_per_class'])}",
             f"  metrics: {', '.join(grid['metric'])}",
             f"  C: {_format_axis(grid['C'])}; alpha: {_format_axis(grid['alpha'])}",
             f"  values: exact critical values ({prov.get('design') or 'balanced designs'}); nothing is simulated, "
             "so there is no R or seed",
             f"  written by tablegen {prov.get('tablegen_version')} (schema {report['schema']} version "
             f"{report['schema_version']}), created {prov.get('created')}"
             + (f", completed {prov['completed']}" if prov.get("completed") else ""),
             f"  command: {prov.get('command') or '-'}",
             f"  config hash: {prov.get('config_hash')}",
             f"  integrity: {report['chunks_checked']:,} chunks match the manifest",
             f"  size: {format_bytes(report['size_bytes'])} ({report['size_bytes']:,} bytes)"]
    if report["missing"]:
        shown = ", ".join(f"({K}, {n})" for K, n in report["missing"][:20])
        more = len(report["missing"]) - 20
        lines.append(f"  missing cells (K, n_per_class): {shown}" + (f" and {more:,} more" if more > 0 else ""))
    print("\n".join(lines))
    return 0


def _run_info(args) -> int:
    from tablegen.store.zarr_store import store_report, store_state

    if _multiclass_store(args):  # a kind: multiclass job's table
        return _run_multiclass_info(args)
    if args.store is not None and store_state(args.store, storage_options_from(args)) == "unfinished":
        print(f"{args.store}: unfinished template (its creation was interrupted; no data was written); the next "
              "`tablegen run` of its config writes it again")
        return 0
    table = _open(args)
    report = store_report(table.ds)
    if args.json:
        print(json_text(report))
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
                   help="first check the store against its manifest: metadata, coordinates, root attributes, every "
                        "chunk's checksum and hash, done flags, and files the manifest does not know (default "
                        "on); damage exits with code 3, a store being written with code 6")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=_run_verify)


def _integrity_lines(source: str, report) -> list[str]:
    if report.unchecked:
        return [f"{source}: integrity not checked: {report.unchecked}"]
    shown = ", ".join(report.foreign[:10]) + (f" and {len(report.foreign) - 10:,} more" if len(report.foreign) > 10
                                               else "")
    foreign = [f"  files the manifest does not know, not tablegen's (left as they are): {shown}"] if shown else []
    if report.ok:
        return [f"{source}: integrity: {report.chunks_checked:,} chunks match the manifest", *foreign]
    lines = [f"{source}: DAMAGED: {len(report.problems):,} problems"]
    lines += [f"  {problem}" for problem in report.problems[:50]]
    lines += foreign
    if len(report.problems) > 50:
        lines.append(f"  and {len(report.problems) - 50:,} more (--json lists all)")
    if report.fatal and _record_lost(source):
        from tablegen.store.rebuild import lost_record_message

        lines.append(f"  {lost_record_message(source)}")
    elif report.fatal:
        lines.append("  re-create the store: its metadata is damaged (a resume refuses it)")
    elif report.regions:
        lines.append(f"  `tablegen run CONFIG --store {source}` recomputes the {len(report.regions):,} damaged chunks"
                     + (" and removes the stray files" if report.stray else ""))
    elif report.stray:
        lines.append(f"  `tablegen run CONFIG --store {source}` removes the stray chunk and half-written files")
    return lines


def _record_lost(source: str) -> bool:
    """Whether the store verify named by ``source`` (a path) lost its manifest record: the one fatal damage a
    command rebuilds (``tablegen repair``)."""
    from tablegen.store.rebuild import record_lost

    return source != "bundled table" and record_lost(source)


def _run_verify(args) -> int:
    from tablegen.store.schema import bundled_table_path
    from tablegen.store.zarr_store import check_integrity, verify_report

    if args.worst < 0:
        raise TablegenInputError(f"--worst must be >= 0, got {args.worst}")
    options = storage_options_from(args)
    from tablegen.store.multiclass_store import is_multiclass_store

    if args.store is not None and is_multiclass_store(args.store, options):  # a kind: multiclass job's table
        from tablegen.cli.run_multiclass import run_multiclass_verify

        return run_multiclass_verify(args, options)
    integrity = check_integrity(args.store or bundled_table_path(), options) if args.integrity else None
    if integrity is not None and integrity.being_written:  # a live run holds the lock: no false damage
        if args.json:
            print(json_text({"integrity": integrity.to_dict()}))
        else:
            print(f"{args.store or 'bundled table'}: the store is being written ({integrity.being_written}); "
                  "nothing was checked: verify it when that run has finished")
        return 6
    if integrity is not None and not integrity.ok:
        if args.json:
            print(json_text({"integrity": integrity.to_dict()}))
        else:
            print("\n".join(_integrity_lines(args.store or "bundled table", integrity)))
        return 3
    table = _open(args)
    report = verify_report(table.ds, worst=args.worst)
    detectable = report.get("minimum_detectable")  # a schema-5 store: its minimum detectable AUC recomputed
    wrong = bool(detectable) and detectable["agree"] != detectable["checked"]
    if args.json:
        print(json_text({**report, "integrity": integrity.to_dict() if integrity else None}))
        return 3 if wrong else 0
    if integrity is not None:
        print("\n".join(_integrity_lines(table.source, integrity)))
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
    if detectable:
        cells = ", ".join(f"({p}, {n})" for p, n in detectable["cells"])
        lines.append(f"  minimum detectable AUC recomputed exactly at {cells}: {detectable['agree']:,} of "
                     f"{detectable['checked']:,} values agree within {detectable['tolerance']:g}")
    print("\n".join(lines))
    return 3 if wrong else 0


def _store_argument(p, required=False) -> None:
    if required:
        p.add_argument("store", help="store path or fsspec URL")
    else:
        p.add_argument("store", nargs="?", default=None, help="store path or fsspec URL (default: the bundled table)")
    storage_options_argument(p)


def _open(args, allow_incomplete=True):
    """The command's store (its --storage-options applied), opened afresh: a report on the store as it is now."""
    from tablegen.lookup.table import open_table

    options = storage_options_from(args)
    if options is not None and args.store is None:
        raise TablegenInputError("--storage-options applies to a store given by path or URL; give the store too")
    return open_table(args.store, storage_options=options, allow_incomplete=allow_incomplete, reuse=False)


def _finished_table(args):
    """The store for export and plot; unfinished cells are shown empty, with a warning."""
    import numpy as np

    table = _open(args)
    if not table.attrs.get("complete"):
        done = table.done() if _multiclass_store(args) else table.read("done")
        missing = int((~np.asarray(done, dtype=bool)).sum())
        print(f"tablegen: warning: {table.source} is unfinished; {missing:,} cells are left empty", file=sys.stderr)
    return table


def _table_parser(sub, name, help_text) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help_text)
    _store_argument(p)
    p.add_argument("--metric", required=True, type=metric_name,
                   help=f"metric: {known_metrics_text()}; of a multi-class table: accuracy, kappa, balanced_accuracy, "
                        "macro_f1")
    p.add_argument("--C", type=int, required=True, help="number of competing classifiers")
    p.add_argument("--alpha", type=float, default=None,
                   help="significance level (default: 0.01 if the store holds it, else its smallest)")
    p.add_argument("--values", choices=VALUE_CHOICES, default="best",
                   help="best (default: exact where stored, else Monte Carlo), monte-carlo or exact")
    return p


def _export_parser(sub) -> None:
    p = _table_parser(sub, "export", "a metric's critical values in the paper's appendix layout (Pos \\ Neg; a "
                                     "multi-class table: K \\ n_per_class)")
    p.add_argument("--format", choices=FORMATS, default="markdown", help="output format (default %(default)s)")
    p.add_argument("--digits", type=int, default=None, help="decimals (default 3; 0 for counts)")
    p.add_argument("-o", "--output", default=None, help="write to this file instead of standard output")
    p.add_argument("--json", action="store_true",
                   help="the grid as JSON (P, N, value with null where empty, exact flags; a multi-class table: K, "
                        "n_per_class, value, exact, critical_hits, method) instead of --format")
    p.set_defaults(run=_run_export)


def _run_export(args) -> int:
    from tablegen.lookup.export import appendix_grid, format_appendix, grid_to_dict

    if args.digits is not None and not 0 <= args.digits <= 15:
        raise TablegenInputError(f"--digits must be in 0..15, got {args.digits}")
    grid = appendix_grid(_finished_table(args), args.metric, args.C, args.alpha, args.values)
    text = json_text(grid_to_dict(grid)) + "\n" if args.json else \
        format_appendix(grid, args.format, args.digits)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    from tablegen.common.outputs import write_text

    write_text(args.output, text, "-o", "the table")  # whole or not at all: a full disk leaves no partial file
    if not args.json:  # with --json, stdout holds JSON or nothing
        print(f"wrote {args.output}")
    return 0


def _plot_parser(sub) -> None:
    p = _table_parser(sub, "plot", "critical value over (P, N) as a contour chart or surface (PNG, PDF, SVG)")
    p.add_argument("--kind", choices=("contour", "surface"), default="contour", help="default %(default)s")
    p.add_argument("-o", "--output", required=True, help="image file, e.g. auc_C1000.png")
    p.set_defaults(run=_run_plot)


def _run_plot(args) -> int:
    from tablegen.cli.images import image_errors

    if _multiclass_store(args):
        raise TablegenInputError(f"{args.store} is a multi-class table: `tablegen plot` draws a binary table's (P, N) "
                                 "grid; `tablegen export` writes the multi-class table's (K, n_per_class) grid")
    from tablegen.lookup.plot import plot_critical_values  # matplotlib is optional

    with image_errors("-o", args.output):
        plot_critical_values(_finished_table(args), args.metric, args.C, args.alpha, args.kind, args.output,
                             args.values)
    print(f"wrote {args.output}")
    return 0
