"""The batch job: plan -> store set-up -> one task per chunk -> region writes -> done flags -> finalize.

``run(config)`` is what ``tablegen run CONFIG`` calls.  Each task (:func:`tablegen.batch.tasks.run_chunk`)
computes the Monte Carlo and exact values of its chunk's cells and writes them straight into the store
from the worker, data first and done flags last; the client only plans, submits, shows progress and
finalizes.  Running the same config again resumes: chunks whose cells are all done are skipped, and a
store written by another config, schema or random stream is refused.

The store itself knows templates, URLs and regions; this module gives it the job's template
(:func:`store_template`) and provenance (:func:`store_attributes`), and decides what a resume may reuse
(:func:`check_resumable`).  The executors (:mod:`tablegen.batch.executors`) run the tasks in this process
or on a dask cluster; because seeds are keyed on the cell and replicate, both produce bit-identical
stores, whatever the chunking, the number of workers, retries or resumes.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from tablegen._version import __version__
from tablegen.batch.config import EXECUTORS, JobConfig, load_config
from tablegen.batch.executors import (
    DEFAULT_WORKER_GRACE,
    WorkCallback,
    check_scheduler,
    dask_results,
    serial_results,
    stopped_when_out_of_space,
)
from tablegen.batch.plan import Chunk, Plan, make_plan
from tablegen.compute.kernels.cuda.device import DEVICES, resolve_device
from tablegen.compute.limits import check_memory, grid_memory
from tablegen.compute.mc import RNG_NAME, kernel_tables_memory
from tablegen.compute.stats import CI_LEVEL
from tablegen.errors import StoreError, TablegenInputError
from tablegen.store.rebuild import refuse_lost_record
from tablegen.store.zarr_store import (
    StoreLock,
    StoreTemplate,
    append_history,
    clear_regions,
    create_store,
    mark_complete,
    read_writable_attributes,
    remove_creation_marker,
    remove_partial_files,
    remove_stray_files,
    repair_plan_mask,
    store_state,
)

if TYPE_CHECKING:
    from distributed import Client

logger = logging.getLogger(__name__)


def store_template(config: JobConfig) -> StoreTemplate:
    """The store a job writes: its grid's coordinates, chunking and shards (none where a shard is one chunk: a
    schema-3 store, as before shards)."""
    return StoreTemplate(config.metrics, config.alphas, config.Cs, config.P, config.N, config.tail_probabilities,
                         config.chunks, tuple(config.shard) if config.sharded else None, config.power_levels,
                         config.power_max_seconds)


def store_attributes(config: JobConfig) -> dict:
    """The job's provenance in the store's root attributes: its config (without storage options, which may
    hold credentials, and without any local path of this machine), the config's hash, root seed, random
    stream, R and the confidence level of its intervals."""
    return {"config": _config_record(config), "config_hash": config.result_hash, "root_seed": config.seed,
            "rng": RNG_NAME, "replicates": config.replicates, "ci_level": CI_LEVEL}


def _config_record(config: JobConfig) -> str:
    """The config as JSON, storage options left out, local paths recorded by their last component, and ``shard``
    only where it is not 1 x 1 (so an unsharded job records what it recorded before shards)."""
    record = asdict(config)
    record.pop("storage_options", None)
    if not config.sharded:
        del record["shard"]
    del record["power_levels"], record["power_max_seconds"]
    if config.power_levels:  # only where given: a job without it records what it recorded before
        record["power"] = config.power_record()
    record["store_url"] = _local_name(record["store_url"])
    if "scheduler_file" in record.get("cluster", {}):
        record["cluster"] = {**record["cluster"], "scheduler_file": _local_name(record["cluster"]["scheduler_file"])}
    return json.dumps(record, sort_keys=True)


def _local_name(location: str) -> str:
    """A local path's last component (``/home/me/t/paper.zarr`` -> ``paper.zarr``); URLs unchanged."""
    if "://" in location:
        return location
    return os.path.basename(os.path.normpath(location))


def create_job_store(config: JobConfig, command: str = "", state: str | None = None) -> None:
    """Create the job's store: its template and provenance (:func:`tablegen.store.zarr_store.create_store`)."""
    create_store(store_template(config), config.store_url, config.storage_options, store_attributes(config),
                 command=command, state=state)


def check_resumable(config: JobConfig) -> None:
    """Refuse to resume a store written by another config (result hash), schema or random stream."""
    attrs = read_writable_attributes(config.store_url, config.storage_options)
    if attrs.get("rng") != RNG_NAME:
        raise StoreError(
            f"store {config.store_url!r} was sampled with another random stream (rng = {attrs.get('rng')!r}); "
            f"this tablegen {__version__} samples with {RNG_NAME!r}, so resuming would mix the two; "
            "use a new store"
        )
    if attrs.get("config_hash") != config.result_hash:
        try:
            stored = json.loads(attrs.get("config", "{}"))
        except (TypeError, json.JSONDecodeError):
            stored = {}
        differing = sorted(k for k, v in config.result_fields().items()
                           if json.loads(json.dumps(v)) != stored.get(k))
        raise StoreError(
            f"store {config.store_url!r} was written by a different config (hash "
            f"{str(attrs.get('config_hash'))[:12]}…, this config {config.result_hash[:12]}…; "
            f"differing fields: {', '.join(differing) or 'unknown'}); use another store or the same config"
        )


@dataclass(frozen=True)
class RunSummary:
    """What a run did (returned by :func:`run`; the CLI prints it)."""

    cells: int
    cells_computed: int
    replicates: int
    wall_seconds: float
    store_url: str
    complete: bool

    @property
    def cell_replicates_per_second(self) -> float:
        return self.cells_computed * self.replicates / self.wall_seconds if self.wall_seconds > 0 else 0.0

    @property
    def cells_skipped(self) -> int:
        """Cells already done when the run started (left as they were)."""
        return self.cells - self.cells_computed

    def to_dict(self) -> dict:
        """The summary as JSON-ready values (``tablegen run --json`` prints it).

        Examples
        --------
        >>> RunSummary(4, 3, 1000, 2.0, "t.zarr", True).to_dict()["cells_skipped"]
        1
        """
        return {"store": self.store_url, "complete": self.complete, "cells": self.cells,
                "cells_computed": self.cells_computed, "cells_skipped": self.cells_skipped,
                "replicates": self.replicates, "wall_seconds": self.wall_seconds,
                "cell_replicates_per_second": self.cell_replicates_per_second}

    def __str__(self) -> str:
        if self.cells_computed == 0:
            return f"nothing to do: all {self.cells:,} cells of {self.store_url} were already done"
        return (f"{self.cells_computed:,} of {self.cells:,} cells computed at R = {self.replicates:,} in "
                f"{self.wall_seconds:,.1f} s wall: {self.cell_replicates_per_second:,.0f} cell-replicates/s; "
                f"store {self.store_url} {'complete' if self.complete else 'INCOMPLETE'}")


def resolve_config(config: JobConfig, store_url=None, workers=None, scheduler_address=None,
                   scheduler_file=None, device=None, storage_options=None) -> JobConfig:
    """Apply command-line overrides of the store, its fsspec options, the cluster and the device to ``config``.

    A local store path is made absolute here, so that workers started elsewhere find it.
    """
    given = [k for k, v in (("workers", workers), ("scheduler_address", scheduler_address),
                            ("scheduler_file", scheduler_file)) if v is not None]
    if len(given) > 1:
        raise TablegenInputError(f"give at most one of --workers, --scheduler-address, --scheduler-file "
                                 f"(got {', '.join(given)})")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise TablegenInputError(f"workers must be an integer >= 1, got {workers!r}")
    if given:
        options = {k: v for k, v in (config.cluster or {}).items() if k in ("worker_grace", "connect_timeout")}
        config = replace(config, cluster={given[0]: {"workers": workers, "scheduler_address": scheduler_address,
                                                     "scheduler_file": scheduler_file}[given[0]], **options})
    if store_url is not None:
        if not isinstance(store_url, str) or not store_url:
            raise TablegenInputError(f"store must be a non-empty path or URL, got {store_url!r}")
        config = replace(config, store_url=store_url)
    if storage_options is not None:
        if not isinstance(storage_options, dict):
            raise TablegenInputError(f"storage_options must be a dict, got {type(storage_options).__name__}")
        if storage_options and "://" not in (store_url or config.store_url):
            raise TablegenInputError(f"storage_options only apply to an fsspec URL (s3://..., memory://...); "
                                     f"{store_url or config.store_url!r} is a local path")
        config = replace(config, storage_options=storage_options)
    if device is not None:
        if device not in DEVICES:
            raise TablegenInputError(f"device must be one of {', '.join(DEVICES)}, got {device!r}")
        config = replace(config, device=device)
    if "://" not in config.store_url:  # workers may start in another directory (PBS starts in $HOME)
        config = replace(config, store_url=os.path.abspath(os.path.expanduser(config.store_url)))
    return config


@dataclass(frozen=True)
class StoreInspection:
    """What a run found in its store before writing: its state, the plan and the chunks to repair.

    Made once per run by :func:`inspect_store`, under the store's lock: the store's existence checked
    once, its integrity checked once, the plan made once.
    """

    state: str
    plan: Plan
    damaged_regions: tuple = ()
    problems: tuple = ()
    stray: tuple = ()


def inspect_store(config: JobConfig) -> StoreInspection:
    """Read the store of ``config`` without writing: absent, unfinished or ready (then checked as resumable
    with ``config``, and every chunk that fails the integrity check counted not done), and the plan."""
    state = store_state(config.store_url, config.storage_options)
    if state != "ready":
        return StoreInspection(state, make_plan(config))
    refuse_lost_record(config.store_url, config.storage_options)  # never taken for an unfinished template
    check_resumable(config)
    mask, report = repair_plan_mask(config.store_url, config.storage_options)
    return StoreInspection(state, make_plan(config, mask), tuple(report.regions), tuple(report.problems),
                           tuple(report.stray))


def prepare_store(config: JobConfig, command: str = "") -> Plan:
    """Create the store (again, if its template was never finished) or check it can be resumed with
    ``config``, un-doing every chunk that fails the integrity check; return the plan of what is left.
    Call it holding the store's lock."""
    inspection = inspect_store(config)
    if inspection.state == "ready":
        remove_creation_marker(config.store_url, config.storage_options)  # a creation killed after its last write
        remove_partial_files(config.store_url, config.storage_options)  # a killed run's half-written files
        remove_stray_files(config.store_url, config.storage_options, inspection.stray)  # and stray chunks
    if inspection.state != "ready":
        create_job_store(config, command, inspection.state)
    elif inspection.plan.remaining:  # a resume with work to do: in the store's history
        append_history(config.store_url, f"{command or 'tablegen.run'}: resumed, {inspection.plan.cells_remaining:,} "
                       f"of {inspection.plan.cells:,} cells to compute", config.storage_options)
        for problem in inspection.problems:
            logger.warning("store %s: %s; recomputing its cells", config.store_url, problem)
        if inspection.damaged_regions:
            clear_regions(config.store_url, config.storage_options, list(inspection.damaged_regions))
    return inspection.plan


def check_grid_memory(config: JobConfig) -> None:
    """Refuse a grid whose flags, plan and tasks on the client, or largest cell's kernel tables, exceed the limit."""
    chunks = -(-len(config.P) // config.task_cells[0]) * -(-len(config.N) // config.task_cells[1])
    check_memory(grid_memory(config.cells, chunks), f"a grid of {config.cells:,} cells in {chunks:,} chunks",
                 "split it into several jobs (configs with part of P or N), or use larger chunks")
    P, N = max(config.P), max(config.N)
    check_memory(kernel_tables_memory(config.metric_entries, P, N),
                 f"simulating the grid's largest cell ({P:,}, {N:,})",
                 "leave the largest P or N out of the grid, or raise TABLEGEN_MEMORY_LIMIT on larger machines")


def dry_run_plan(config: JobConfig) -> Plan:
    """The plan without writing anything (an existing store is read for its done flags and checked:
    a chunk that fails the integrity check counts as not done); :func:`inspect_store` ``.plan``."""
    check_grid_memory(config)
    return inspect_store(config).plan


ProgressCallback = Callable[[int, int, Chunk], None]


def run(config: JobConfig | str | os.PathLike, *, executor: str = "dask", client: Client | None = None,
        command: str = "", break_lock: bool = False, progress: ProgressCallback | None = None,
        on_client: Callable[[object], None] | None = None, worker_grace: float | None = None,
        on_plan: Callable[[Plan], None] | None = None, on_work: WorkCallback | None = None) -> RunSummary:
    """Run (or resume) a job to completion; returns what it did.

    Parameters
    ----------
    config : JobConfig or path
        The job, or its YAML file (:func:`load_config`); dask runs on its ``cluster`` unless ``client`` is given.
    executor : {"dask", "serial"}
        ``"serial"`` runs every task in this process; ``"dask"`` on the cluster.
    client : distributed.Client, optional
        An existing client to run on (its cluster is left running).
    command : str
        The command line, recorded in the store's attributes.
    break_lock : bool
        Remove another run's lock first (only when that run is known to be dead).
    progress : callable, optional
        ``progress(cells_done, cells_total, chunk)`` after each chunk is written (chunk None before the first).
    on_client : callable, optional
        Called with the dask client once it is connected, only when the lock is held and work remains
        (the CLI prints the dashboard link; the cluster launchers submit their jobs here).
    worker_grace : float, optional
        Seconds without any dask worker before the run stops (default ``cluster.worker_grace``, else 300).
    on_plan : callable, optional
        Called with the plan (:func:`inspect_store`) once the lock is held, before any task (the CLI prints it).
    on_work : callable, optional
        ``on_work(chunk, done, step)`` as a running task advances (before each cell, and each metric's exact
        values), with the cost model's estimated seconds of the chunk done so far (:func:`~.plan.chunk_seconds`
        in all) and of the step it starts, on this thread; with dask, from the workers within about 0.5 s.

    Raises
    ------
    StoreError
        If the store is locked by another run or was written by a different config.
    RunStoppedError
        If the scheduler cannot be reached (checked before the store is created or locked), or the
        run had no worker for ``worker_grace`` seconds (the lock is then released; rerun to resume).

    Examples
    --------
    >>> config = replace(load_config("configs/smoke.yaml"), P=(5,), N=(10,), store_url="memory://run-example.zarr")
    >>> [run(config, executor="serial").cells_computed for _ in "12"]  # the second run resumes: nothing left
    [1, 0]
    """
    if not isinstance(command, str):
        raise TablegenInputError(f"command must be a string (the command line the store records), got {command!r}")
    from tablegen.batch.multiclass_job import is_multiclass_job, run_multiclass

    if is_multiclass_job(config):  # kind: multiclass (a config object, or the path of its YAML)
        config = config if not isinstance(config, (str, os.PathLike)) else resolve_config(load_config(config))
        return run_multiclass(config, executor=executor, client=client, command=command, break_lock=break_lock,
                              progress=progress, on_client=on_client, worker_grace=worker_grace, on_plan=on_plan,
                              on_work=on_work)
    config, grace = _run_iv(config, executor, client, worker_grace)
    start = time.perf_counter()
    with stopped_when_out_of_space(config), StoreLock(config.store_url, config.storage_options,
                                                      break_lock=break_lock):
        plan = prepare_store(config, command)
        if on_plan is not None:
            on_plan(plan)
        done = plan.cells_done
        if progress is not None:
            progress(done, plan.cells, None)
        chunks = list(plan.remaining)
        if not chunks:
            results = iter(())
        elif executor == "serial":
            results = serial_results(config, chunks, on_work)
        else:
            results = dask_results(config, chunks, client, on_client, grace, on_work)
        for chunk in results:
            done += chunk.size
            if progress is not None:
                progress(done, plan.cells, chunk)
        mark_complete(config.store_url, config.storage_options)
    return RunSummary(plan.cells, plan.cells_remaining, config.replicates, time.perf_counter() - start,
                      config.store_url, True)




def _run_iv(config, executor: str, client, worker_grace) -> tuple[JobConfig, float]:
    """Every check of :func:`run`'s arguments, before anything is written or locked: the config (loaded and
    resolved from a path), the executor, the device, the grid's memory, a dask run's store and scheduler,
    and the worker grace; returns the config and the grace in seconds."""
    if not isinstance(config, JobConfig):
        config = resolve_config(load_config(config))
    if executor not in EXECUTORS:
        raise TablegenInputError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if client is None and (executor == "serial" or "workers" in (config.cluster or {"workers": 2})):
        resolve_device(config.device)  # runs here: no GPU (or numba-cuda) fails before anything is written
    check_grid_memory(config)
    if executor == "dask" and client is None:
        if config.store_url.startswith("memory://"):
            raise TablegenInputError(f"store {config.store_url}: a memory:// store lives in this process only and "
                                     "dask workers are other processes; use --executor serial, or a path or object "
                                     "store every worker can reach")
        check_scheduler(config)
    grace = worker_grace if worker_grace is not None else (config.cluster or {}).get("worker_grace",
                                                                                      DEFAULT_WORKER_GRACE)
    if not (isinstance(grace, (int, float)) and 0 < grace < float("inf")):
        raise TablegenInputError(f"worker_grace must be a number of seconds > 0, got {grace!r}")
    return config, grace
