"""The multi-class table job (``kind: multiclass``): plan -> store -> one task per chunk -> done flags -> complete.

What :func:`tablegen.batch.job.run` (and so ``tablegen run CONFIG``) does with a
:class:`~tablegen.batch.multiclass_config.MulticlassConfig`.  Each task computes the exact critical hits of its
chunk's (K, n_per_class) cells for every (C, alpha) (:func:`compute_multiclass_chunk`) and writes them straight
into the store (:func:`~tablegen.store.multiclass_store.write_multiclass_region`: data, manifest entry, done
flags).  Running the same config again resumes: chunks whose cells are all done are skipped, a damaged region is
recomputed, and a store of another schema or config is refused.  The values are exact integers computed from the
cell alone, so a store is the same byte for byte whatever the chunking of the work, the executor, the workers,
kills and resumes (the chunking of the store itself is part of its config).

:func:`verify_multiclass_store` checks a store against its manifest and recomputes a sample of cells exactly.
"""

from __future__ import annotations

import json
import logging
import os
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass

import numpy as np

from tablegen._version import __version__
from tablegen.batch.multiclass_config import KIND, MulticlassConfig
from tablegen.batch.plan import Chunk
from tablegen.compute.exact.balanced_multiclass import balanced_critical_hits, balanced_seconds, value_from_hits
from tablegen.errors import StoreError, StoreIntegrityError, TablegenInputError
from tablegen.store.lock import StoreLock
from tablegen.store.multiclass_store import (
    MulticlassTemplate,
    append_multiclass_history,
    check_multiclass_store,
    clear_multiclass_regions,
    create_multiclass_store,
    mark_multiclass_complete,
    multiclass_done_mask,
    multiclass_state,
    read_multiclass_attributes,
    remove_local_partials,
    write_multiclass_region,
)

__all__ = ["MulticlassPlan", "MulticlassRunSummary", "compute_multiclass_chunk", "format_multiclass_plan",
           "is_multiclass_job", "make_multiclass_plan", "run_multiclass", "verify_multiclass_store"]

logger = logging.getLogger(__name__)

#: Cells :func:`verify_multiclass_store` recomputes by default (the cheapest first: the sample is drawn among the
#: cells whose estimate is within the time it is given).
VERIFY_SAMPLE = 3


def is_multiclass_job(config) -> bool:
    """Whether ``config`` (a config object, or the path of a YAML config) is a ``kind: multiclass`` job; a file
    that cannot be read says False here (the binary loader then names what is wrong with it).

    Examples
    --------
    >>> is_multiclass_job("configs/multiclass_smoke.yaml"), is_multiclass_job("configs/smoke.yaml")
    (True, False)
    """
    if isinstance(config, MulticlassConfig):
        return True
    if not isinstance(config, (str, os.PathLike)):
        return False
    import yaml

    try:
        with open(config, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and data.get("kind") == KIND


def multiclass_template(config: MulticlassConfig) -> MulticlassTemplate:
    """The store a multi-class job writes."""
    return MulticlassTemplate(config.metrics, config.alphas, config.Cs, config.K, config.n_per_class, config.chunks)


def multiclass_attributes(config: MulticlassConfig) -> dict:
    """The job's provenance in the store's root attributes: its config (without storage options or local paths),
    the config's hash, and what the values are."""
    record = asdict(config)
    record.pop("storage_options", None)
    record["store_url"] = config.store_url if "://" in config.store_url else os.path.basename(
        os.path.normpath(config.store_url))
    record["cluster"] = {k: v for k, v in record["cluster"].items() if k != "scheduler_file"}
    return {"kind": KIND, "config": json.dumps(record, sort_keys=True, allow_nan=False),
            "config_hash": config.result_hash, "method": "exact",
            "design": "balanced: K classes of n_per_class items, predicted counts balanced too"}


# -- the plan -------------------------------------------------------------------------------------------------
def chunk_grid(config: MulticlassConfig) -> list[Chunk]:
    """Every task's region: index ranges along K (``p_start:p_stop``) and n_per_class (``n_start:n_stop``)."""
    step_k, step_n = config.chunks
    return [Chunk(k, min(k + step_k, len(config.K)), n, min(n + step_n, len(config.n_per_class)))
            for k in range(0, len(config.K), step_k) for n in range(0, len(config.n_per_class), step_n)]


def chunk_cells(config: MulticlassConfig, chunk: Chunk) -> list[tuple[int, int]]:
    """The (K, n_per_class) values of a chunk's cells, K-major."""
    return [(K, n) for K in config.K[chunk.p_slice] for n in config.n_per_class[chunk.n_slice]]


def cell_seconds(K: int, n_per_class: int) -> float:
    """Estimated single-core seconds of one cell (every C and alpha share its exact law)."""
    return balanced_seconds(K, n_per_class)


@dataclass(frozen=True)
class MulticlassPlan:
    """What a run will do: every chunk, those left, and the estimated single-core seconds."""

    chunks: tuple
    remaining: tuple
    cells: int
    cells_done: int
    core_seconds: float
    core_seconds_remaining: float
    largest_cell: tuple = (0, 0, 0.0)

    @property
    def cells_remaining(self) -> int:
        return self.cells - self.cells_done


def make_multiclass_plan(config: MulticlassConfig, done: np.ndarray | None = None) -> MulticlassPlan:
    """Plan ``config`` given the store's done mask (None: nothing done); the most expensive chunks first.

    Examples
    --------
    >>> from tablegen.batch.config import load_config
    >>> plan = make_multiclass_plan(load_config("configs/multiclass_smoke.yaml"))
    >>> len(plan.chunks), plan.cells, plan.core_seconds < 60
    (4, 9, True)
    """
    done = np.zeros((len(config.K), len(config.n_per_class)), bool) if done is None else np.asarray(done, bool)
    chunks = chunk_grid(config)
    costs = {cell: cell_seconds(*cell) for cell in ((K, n) for K in config.K for n in config.n_per_class)}
    seconds = {chunk: sum(costs[cell] for cell in chunk_cells(config, chunk)) for chunk in chunks}
    remaining = sorted((c for c in chunks if not done[c.p_slice, c.n_slice].all()), key=lambda c: -seconds[c])
    largest = max(costs.items(), key=lambda item: item[1])
    return MulticlassPlan(tuple(chunks), tuple(remaining), config.cells, int(done.sum()),
                          float(sum(seconds.values())), float(sum(seconds[c] for c in remaining)),
                          (*largest[0], largest[1]))


def format_multiclass_plan(config: MulticlassConfig, plan: MulticlassPlan) -> str:
    """The ``--dry-run`` report: cells, tasks, done/remaining and the estimated single-core time."""
    K, n, seconds = plan.largest_cell
    workers = int((config.cluster or {}).get("workers", 0))
    return "\n".join([
        f"job {config.name!r} (kind: multiclass, every value exact): {len(config.K)} x {len(config.n_per_class)} = "
        f"{plan.cells:,} cells (K = {config.K[0]}..{config.K[-1]}, n_per_class = {config.n_per_class[0]}.."
        f"{config.n_per_class[-1]}), {len(config.metrics)} metrics, C = {list(config.Cs)}, alpha = "
        f"{list(config.alphas)}",
        f"store {config.store_url}  (config hash {config.result_hash[:12]})",
        f"tasks: {len(plan.chunks):,} chunks of up to {config.chunks[0]} x {config.chunks[1]} cells; "
        f"{len(plan.chunks) - len(plan.remaining):,} done, {len(plan.remaining):,} remaining",
        f"cells: {plan.cells_done:,} done, {plan.cells_remaining:,} remaining",
        f"estimated cost (accuracy_seconds, without the tails' early stop): {_core_time(plan.core_seconds)}"
        f" in all, {_core_time(plan.core_seconds_remaining)} remaining"
        + (f"; about {_wall_time(max(seconds, plan.core_seconds_remaining / workers))} wall on {workers} workers "
           f"(at least {_wall_time(seconds)}: the largest cell, K = {K}, n_per_class = {n:,}, runs on one core)"
           if workers else ""),
    ])


def _wall_time(seconds: float) -> str:
    return f"{seconds:,.3g} s" if seconds < 120 else f"{seconds / 60:,.0f} min" if seconds < 7200 \
        else f"{seconds / 3600:,.1f} h"


def _core_time(seconds: float) -> str:
    return f"{seconds:,.3g} core-seconds" if seconds < 360 else f"{seconds / 3600:,.2f} core-hours"


# -- the task -------------------------------------------------------------------------------------------------
def compute_multiclass_chunk(config: MulticlassConfig, chunk: Chunk,
                             report: Callable[[float, float], None] | None = None) -> dict[str, np.ndarray]:
    """Every data variable of a chunk's cells, shaped as in the store over the chunk's region: the exact critical
    hits of each (alpha, C) and each metric's value there.  ``report(done, step)`` is told the estimated seconds
    done and those of the next cell before each."""
    cells = chunk_cells(config, chunk)
    shape = (chunk.p_stop - chunk.p_start, chunk.n_stop - chunk.n_start)
    hits = np.empty((len(config.alphas), len(config.Cs), len(cells)), np.int64)
    values = np.empty((len(config.metrics), *hits.shape))
    done = 0.0
    for c, (K, n) in enumerate(cells):
        seconds = cell_seconds(K, n)
        if report is not None:
            report(done, seconds)
        for a, alpha in enumerate(config.alphas):
            for j, C in enumerate(config.Cs):
                hits[a, j, c] = balanced_critical_hits(K, n, C, alpha)
                for m, metric in enumerate(config.metrics):
                    values[m, a, j, c] = value_from_hits(metric, int(hits[a, j, c]), K, n)
        done += seconds
    if report is not None:
        report(done, 0.0)
    return {"critical_hits": hits.reshape(*hits.shape[:-1], *shape),
            "critical_value": values.reshape(*values.shape[:-1], *shape)}


def run_multiclass_chunk(config: MulticlassConfig, chunk: Chunk,
                         report: Callable[[float, float], None] | None = None) -> int:
    """The task: compute a chunk and write it into the store (idempotent); returns its number of cells."""
    start = time.perf_counter()
    arrays = compute_multiclass_chunk(config, chunk, report)
    write_multiclass_region(config.store_url, (chunk.p_slice, chunk.n_slice), arrays, config.storage_options)
    logger.info("multi-class chunk K=%s n_per_class=%s: %d cells in %.1f s", config.K[chunk.p_slice],
                config.n_per_class[chunk.n_slice], chunk.size, time.perf_counter() - start)
    return chunk.size


def run_multiclass_chunk_reporting(config: MulticlassConfig, chunk: Chunk, topic: str) -> int:
    """:func:`run_multiclass_chunk` on a dask worker, its work reports sent as events of ``topic``."""
    from distributed import get_worker

    worker, where = get_worker(), [chunk.p_start, chunk.p_stop, chunk.n_start, chunk.n_stop]
    return run_multiclass_chunk(config, chunk, lambda done, left: worker.log_event(
        topic, {"chunk": where, "done": done, "step": left}))


# -- the run --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MulticlassRunSummary:
    """What a multi-class run did (``tablegen run`` prints it)."""

    cells: int
    cells_computed: int
    wall_seconds: float
    store_url: str
    complete: bool

    def to_dict(self) -> dict:
        """JSON-ready values (``tablegen run --json``).

        Examples
        --------
        >>> MulticlassRunSummary(4, 3, 2.0, "t.zarr", True).to_dict()["cells_skipped"]
        1
        """
        return {"store": self.store_url, "kind": KIND, "complete": self.complete, "cells": self.cells,
                "cells_computed": self.cells_computed, "cells_skipped": self.cells - self.cells_computed,
                "wall_seconds": self.wall_seconds}

    def __str__(self) -> str:
        if self.cells_computed == 0:
            return f"nothing to do: all {self.cells:,} cells of {self.store_url} were already done"
        return (f"{self.cells_computed:,} of {self.cells:,} multi-class cells computed (exact) in "
                f"{self.wall_seconds:,.1f} s wall; store {self.store_url} "
                f"{'complete' if self.complete else 'INCOMPLETE'}")


def check_multiclass_resumable(config: MulticlassConfig) -> None:
    """Refuse to resume a store of another schema, version or config (naming the differing fields)."""
    attrs = read_multiclass_attributes(config.store_url, config.storage_options)
    if attrs.get("config_hash") != config.result_hash:
        try:
            stored = json.loads(attrs.get("config", "{}"))
        except (TypeError, json.JSONDecodeError):
            stored = {}
        differing = sorted(k for k, v in config.result_fields().items()
                           if k != "kind" and json.loads(json.dumps(v, allow_nan=False)) != stored.get(k))
        raise StoreError(f"store {config.store_url!r} was written by a different config (hash "
                         f"{str(attrs.get('config_hash'))[:12]}…, this config {config.result_hash[:12]}…; differing "
                         f"fields: {', '.join(differing) or 'unknown'}); use another store or the same config")


def prepare_multiclass_store(config: MulticlassConfig, command: str = "") -> MulticlassPlan:
    """Create the store, or check it may be resumed with ``config`` (un-doing every damaged region); the plan of
    what is left.  Hold the store's lock."""
    url, options = config.store_url, config.storage_options
    if multiclass_state(url, options) != "ready":
        create_multiclass_store(multiclass_template(config), url, options, multiclass_attributes(config),
                                command=command)
        return make_multiclass_plan(config)
    check_multiclass_resumable(config)
    remove_local_partials(url, options)
    report = check_multiclass_store(url, options)
    if report.fatal:
        raise StoreIntegrityError(f"store {url!r} is damaged beyond a resume: {'; '.join(report.problems[:10])}; "
                                  "re-create it")
    for problem in report.problems:
        logger.warning("store %s: %s; recomputing its cells", url, problem)
    clear_multiclass_regions(url, options, report.regions)
    plan = make_multiclass_plan(config, multiclass_done_mask(url, options))
    if plan.remaining:
        append_multiclass_history(url, f"{command or 'tablegen.run'}: resumed, {plan.cells_remaining:,} of "
                                  f"{plan.cells:,} cells to compute", options)
    return plan


def run_multiclass(config: MulticlassConfig, *, executor: str = "dask", client=None, command: str = "",
                   break_lock: bool = False, progress=None, on_client=None, worker_grace: float | None = None,
                   on_plan=None, on_work=None) -> MulticlassRunSummary:
    """Run (or resume) a multi-class job to completion: what :func:`tablegen.batch.job.run` does with a
    ``kind: multiclass`` config (same arguments; ``progress(cells_done, cells, chunk)`` after each chunk).

    Examples
    --------
    >>> from dataclasses import replace
    >>> from tablegen.batch.config import load_config
    >>> config = replace(load_config("configs/multiclass_smoke.yaml"), K=(3,), n_per_class=(5,),
    ...                  store_url="memory://multiclass-run-example.zarr")
    >>> [run_multiclass(config, executor="serial").cells_computed for _ in "12"]  # the second run resumes
    [1, 0]
    """
    from tablegen.batch.config import EXECUTORS
    from tablegen.batch.executors import DEFAULT_WORKER_GRACE, check_scheduler, stopped_when_out_of_space

    if executor not in EXECUTORS:
        raise TablegenInputError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if config.device == "cuda":
        raise TablegenInputError("device cuda: the exact multi-class routine runs on CPUs (Python integers); use "
                                 "--device cpu")
    if executor == "dask" and client is None:
        if config.store_url.startswith("memory://"):
            raise TablegenInputError(f"store {config.store_url}: a memory:// store lives in this process only and "
                                     "dask workers are other processes; use --executor serial, or a path")
        check_scheduler(config)
    grace = worker_grace if worker_grace is not None else (config.cluster or {}).get("worker_grace",
                                                                                      DEFAULT_WORKER_GRACE)
    start = time.perf_counter()
    with stopped_when_out_of_space(config), StoreLock(config.store_url, config.storage_options,
                                                      break_lock=break_lock):
        plan = prepare_multiclass_store(config, command)
        if on_plan is not None:
            on_plan(plan)
        done = plan.cells_done
        if progress is not None:
            progress(done, plan.cells, None)
        chunks = list(plan.remaining)
        results = (iter(()) if not chunks else _serial(config, chunks, on_work) if executor == "serial"
                   else _dask(config, chunks, client, on_client, grace, on_work))
        for chunk in results:
            done += chunk.size
            if progress is not None:
                progress(done, plan.cells, chunk)
        mark_multiclass_complete(config.store_url, config.storage_options)
    return MulticlassRunSummary(plan.cells, plan.cells_remaining, time.perf_counter() - start, config.store_url, True)


def _serial(config: MulticlassConfig, chunks: list, on_work) -> Iterator[Chunk]:
    for chunk in chunks:
        run_multiclass_chunk(config, chunk, None if on_work is None else lambda d, s, c=chunk: on_work(c, d, s))
        yield chunk


def _dask(config: MulticlassConfig, chunks: list, client, on_client, grace: float, on_work) -> Iterator[Chunk]:
    from tablegen.batch.executors import dask_results

    return dask_results(config, chunks, client, on_client, grace, on_work, task=run_multiclass_chunk_reporting)


# -- verify ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MulticlassVerification:
    """The integrity report and the cells recomputed (``(K, n_per_class, agrees)`` each)."""

    report: object
    recomputed: tuple

    @property
    def ok(self) -> bool:
        return self.report.ok and all(agrees for *_, agrees in self.recomputed)

    def to_dict(self) -> dict:
        return {**self.report.to_dict(), "ok": self.ok,
                "recomputed": [{"K": K, "n_per_class": n, "agrees": agrees} for K, n, agrees in self.recomputed]}


def verify_multiclass_store(url: str, storage_options: dict | None = None, sample: int = VERIFY_SAMPLE,
                            seed: int = 0, max_seconds: float = 60.0) -> MulticlassVerification:
    """Check a multi-class store against its manifest (:func:`~tablegen.store.multiclass_store.check_multiclass_store`)
    and recompute ``sample`` of its done cells exactly (drawn with ``seed`` among those estimated within
    ``max_seconds`` each), comparing every stored critical hits and value with the recomputed ones bit for bit.

    Examples
    --------
    >>> from dataclasses import replace
    >>> from tablegen.batch.config import load_config
    >>> config = replace(load_config("configs/multiclass_smoke.yaml"), K=(3,), n_per_class=(5, 10),
    ...                  store_url="memory://multiclass-verify-example.zarr")
    >>> _ = run_multiclass(config, executor="serial")
    >>> result = verify_multiclass_store(config.store_url)
    >>> result.ok, len(result.recomputed)
    (True, 2)
    """
    from tablegen.store.multiclass_store import read_multiclass_region
    from tablegen.store.schema import open_group

    report = check_multiclass_store(url, storage_options)
    if report.fatal:
        return MulticlassVerification(report, ())
    attrs = read_multiclass_attributes(url, storage_options)
    stored = json.loads(attrs["config"])
    config = MulticlassConfig(name=stored["name"], K=tuple(stored["K"]), n_per_class=tuple(stored["n_per_class"]),
                              metrics=tuple(stored["metrics"]), Cs=tuple(stored["Cs"]),
                              alphas=tuple(stored["alphas"]), chunks=tuple(stored["chunks"]), store_url=url,
                              storage_options=storage_options or {})
    group = open_group(url, storage_options, "r")
    done = multiclass_done_mask(url, storage_options)
    candidates = [(k, j) for k, j in zip(*np.nonzero(done)) if cell_seconds(config.K[k], config.n_per_class[j])
                  <= max_seconds and (int(k) // config.chunks[0], int(j) // config.chunks[1]) not in report.regions]
    picked = sorted(random.Random(seed).sample(candidates, min(sample, len(candidates))))
    recomputed = []
    for k, j in picked:
        k, j = int(k), int(j)
        arrays = compute_multiclass_chunk(config, Chunk(k, k + 1, j, j + 1))
        i0, j0 = k // config.chunks[0], j // config.chunks[1]
        region = read_multiclass_region(group, i0, j0)
        local = (k - i0 * config.chunks[0], j - j0 * config.chunks[1])
        agrees = all(np.array_equal(region[name][..., local[0], local[1]], arrays[name][..., 0, 0])
                     for name in arrays)
        if not agrees:
            logger.error("store %s: cell K = %d, n_per_class = %d differs from its exact recomputation", url,
                         config.K[k], config.n_per_class[j])
        recomputed.append((config.K[k], config.n_per_class[j], agrees))
    logger.info("verified %s with tablegen %s: %d chunks checked, %d cells recomputed", url, __version__,
                report.chunks_checked, len(recomputed))
    return MulticlassVerification(report, tuple(recomputed))
