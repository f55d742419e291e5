"""``tablegen run`` of a ``kind: multiclass`` config: the multi-class table job (:mod:`tablegen.batch.multiclass_job`).

Called by :mod:`tablegen.cli.run` once the config is read; the same options, the same conventions: the plan on
stdout (stderr with ``--json``), a progress line on stderr, the summary (or its JSON) last.
"""

from __future__ import annotations

import sys

from tablegen.common.outputs import json_text


def run_multiclass_command(args, config) -> int:
    """Plan (``--dry-run``) or run a multi-class job from ``tablegen run``'s parsed arguments."""
    from tablegen.batch.multiclass_job import (
        format_multiclass_plan,
        make_multiclass_plan,
        multiclass_done_mask,
        run_multiclass,
    )
    from tablegen.store.multiclass_store import multiclass_state, read_multiclass_attributes

    text = sys.stderr if args.json else sys.stdout
    if args.dry_run:
        done = None
        if multiclass_state(config.store_url, config.storage_options) == "ready":
            read_multiclass_attributes(config.store_url, config.storage_options)  # another kind of store: refused
            done = multiclass_done_mask(config.store_url, config.storage_options)
        plan = make_multiclass_plan(config, done)
        print(format_multiclass_plan(config, plan), file=text)
        if args.json:
            print(json_text({"kind": "multiclass", "cells": plan.cells, "cells_done": plan.cells_done,
                             "cells_remaining": plan.cells_remaining, "chunks": len(plan.chunks),
                             "chunks_remaining": len(plan.remaining), "core_seconds": plan.core_seconds,
                             "core_seconds_remaining": plan.core_seconds_remaining}))
        return 0

    def show_plan(plan) -> None:
        print(format_multiclass_plan(config, plan), file=text, flush=True)

    def show_progress(done: int, cells: int, chunk) -> None:
        print(f"\r{done:,} of {cells:,} cells done", end="" if done < cells else "\n", file=sys.stderr, flush=True)

    summary = run_multiclass(config, executor=args.executor, command=" ".join(["tablegen", *args.argv]),
                             break_lock=args.break_lock, progress=show_progress, worker_grace=args.worker_grace,
                             on_plan=show_plan)
    print(json_text(summary.to_dict()) if args.json else summary)
    return 0


def run_multiclass_verify(args, storage_options) -> int:
    """``tablegen verify STORE`` of a multi-class table: every chunk against the manifest, and a sample of cells
    recomputed exactly (:func:`~tablegen.batch.multiclass_job.verify_multiclass_store`); exit code 3 on damage."""
    from tablegen.batch.multiclass_job import verify_multiclass_store

    result = verify_multiclass_store(args.store, storage_options)
    if args.json:
        print(json_text(result.to_dict()))
        return 0 if result.ok else 3
    report = result.report
    lines = [f"{args.store}: integrity: {report.chunks_checked:,} chunks match the manifest" if report.ok else
             f"{args.store}: DAMAGED: {len(report.problems):,} problems"]
    lines += [f"  {problem}" for problem in report.problems[:50]]
    if report.fatal:
        lines.append("  re-create the store: its metadata is damaged (a resume refuses it)")
    elif report.regions:
        lines.append(f"  `tablegen run CONFIG --store {args.store}` recomputes the {len(report.regions):,} damaged "
                     "chunks")
    for K, n, agrees in result.recomputed:
        lines.append(f"  K = {K}, n_per_class = {n:,}: recomputed exactly, "
                     + ("the same values" if agrees else "DIFFERENT from the stored values"))
    print("\n".join(lines))
    return 0 if result.ok else 3
