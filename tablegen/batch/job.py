"""The batch job: template -> store set-up -> one task per chunk -> region writes -> done flags -> finalize.

``run(config)`` is what ``tablegen run CONFIG`` calls.  Each task (:func:`run_chunk`) computes the
Monte Carlo and exact values of its chunk's cells and writes them straight into the store from the
worker, data first and done flags last; the client only plans, submits, shows progress and
finalizes.  Running the same config again resumes: chunks whose cells are all done are skipped.

Two executors run the same tasks: ``"serial"`` (in this process, one after another) and ``"dask"``
(a LocalCluster of single-threaded worker processes by default, or any running scheduler given by
address or scheduler file).  Because seeds are keyed on the cell and replicate, both produce
bit-identical stores, whatever the chunking, the number of workers, retries or resumes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

from tablegen.compute.cell import exact_critical_values_for_cells, simulate_cell_values
from tablegen.compute.mc import DEFAULT_BLOCK_SIZE, kernel_tables_memory
from tablegen.compute.validation import SimulateCellArgs
from tablegen.batch.config import EXECUTORS, JobConfig, load_config
from tablegen.compute.kernels.cuda.device import DEVICES, resolve_device
from tablegen.compute.limits import check_memory, grid_memory
from tablegen.batch.plan import Chunk, Plan, make_plan
from tablegen.store.zarr_store import (
    DATA_VARIABLES,
    StoreLock,
    append_history,
    check_resumable,
    clear_regions,
    create_store,
    mark_complete,
    repair_plan_mask,
    store_state,
    write_chunk,
)
from tablegen.errors import TablegenInputError
from tablegen.errors import RunStoppedError

if TYPE_CHECKING:
    from distributed import Client

logger = logging.getLogger(__name__)

#: Seconds a dask run may go without a single worker before it stops (config ``cluster.worker_grace``).
DEFAULT_WORKER_GRACE = 300.0
#: Seconds to reach a scheduler given by address or file (config ``cluster.connect_timeout``).
DEFAULT_CONNECT_TIMEOUT = 30.0
#: A chunk task that fails (a transient write error, a lost worker) is run again this many times.
TASK_RETRIES = 2

#: glibc allocator thresholds for worker processes (read when a process starts; README §12).  With dask's
#: ``MALLOC_TRIM_THRESHOLD_=65536`` (which also pins the mmap threshold) every block buffer is mapped and
#: unmapped afresh: a chunk took 3.79 s in a worker, 2.75 s in a plain process, 2.58 s with these values
#: (measured with the former ``mallopt`` calls); up to 256 MiB of freed heap then stays with the worker.
ALLOCATOR_ENVIRONMENT = {"MALLOC_TRIM_THRESHOLD_": str(256 << 20), "MALLOC_MMAP_THRESHOLD_": str(32 << 20)}


def worker_environment() -> dict[str, str]:
    """Environment for worker processes: one numba/OpenMP/BLAS thread, glibc allocator thresholds
    (:data:`ALLOCATOR_ENVIRONMENT`) and a node-local numba cache.

    The numba cache goes to a per-user folder under the node's temporary directory unless
    ``NUMBA_CACHE_DIR`` is already set, so that workers on many nodes never race on a shared
    filesystem's ``__pycache__`` (and read-only installs still cache).  glibc reads the ``MALLOC_*_``
    variables once, when a process starts, so they act only in processes started with this
    environment: the LocalCluster's and GPU cluster's workers (given it by the nanny, after dask's own
    ``MALLOC_TRIM_THRESHOLD_``, which it overrides), the cluster launchers' job scripts and the
    Kubernetes manifests.  The serial executor runs in the calling process with its allocator as it
    started; export the variables before ``tablegen run --executor serial`` to have them there too.

    Examples
    --------
    >>> worker_environment()["MALLOC_MMAP_THRESHOLD_"]
    '33554432'
    """
    cache = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), f"tablegen-numba-cache-{os.getuid() if hasattr(os, 'getuid') else 'user'}")
    return {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1", "NUMBA_CACHE_DIR": cache, **ALLOCATOR_ENVIRONMENT,
            "DASK_LOGGING__DISTRIBUTED": os.environ.get("DASK_LOGGING__DISTRIBUTED", "warning")}


@contextlib.contextmanager
def allocator_environment():
    """Dask config (and environment) under which nannies started here spawn workers with
    :data:`ALLOCATOR_ENVIRONMENT`: a nanny's ``env`` reaches the worker after its start, too late for
    glibc, but ``distributed.nanny.pre-spawn-environ`` is in the environment it starts with.  Dask lets
    a variable in this process's environment win over that config, and each nanny writes its values
    there (so an earlier cluster's 65536 would win): inside this block they are set here too, then restored.
    """
    import dask

    saved = {name: os.environ.get(name) for name in ALLOCATOR_ENVIRONMENT}
    os.environ.update(ALLOCATOR_ENVIRONMENT)
    try:
        with dask.config.set({f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in ALLOCATOR_ENVIRONMENT.items()}):
            yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def compute_chunk(config: JobConfig, chunk: Chunk) -> dict[str, np.ndarray]:
    """Every data variable of the chunk's cells, shaped as in the store over the chunk's region."""
    p_values, n_values = config.P[chunk.p_slice], config.N[chunk.n_slice]
    cells = chunk.cells(config)
    exact = exact_critical_values_for_cells(cells, config.metrics, config.Cs, config.alphas) if config.exact else {}
    shape = (len(p_values), len(n_values))
    per_cell = {name: [] for name in DATA_VARIABLES}
    for P, N in cells:
        args = SimulateCellArgs(P, N, config.replicates, config.seed, config.metrics, config.Cs, config.alphas,
                                config.tail_probabilities, DEFAULT_BLOCK_SIZE)  # the config was checked on load
        arrays = simulate_cell_values(args, exact=False, device=config.device).arrays()  # NaN exact values
        if config.exact:
            arrays["exact_critical_value"] = exact[P, N]
        for name in DATA_VARIABLES:
            per_cell[name].append(arrays[name])
    return {name: _stack_cells(values, shape) for name, values in per_cell.items()}


def _stack_cells(values: list, shape: tuple[int, int]) -> np.ndarray:
    """Stack per-cell arrays (P-major) into one array with trailing (P, N) axes."""
    stacked = np.stack([np.asarray(v) for v in values], axis=-1)
    return stacked.reshape(stacked.shape[:-1] + shape)


def run_chunk(config: JobConfig, chunk: Chunk) -> int:
    """The task: compute a chunk and write it into the store (data, then done flags).

    Idempotent: a retry after a lost worker rewrites the same bytes.  Returns the number of cells.
    """
    start = time.perf_counter()
    arrays = compute_chunk(config, chunk)
    write_chunk(config, chunk.p_slice, chunk.n_slice, arrays)
    logger.info("chunk %s: %d cells in %.1f s", chunk.label(config), chunk.size, time.perf_counter() - start)
    return chunk.size


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


def inspect_store(config: JobConfig) -> StoreInspection:
    """Read the store of ``config`` without writing: absent, unfinished or ready (then checked as resumable
    with ``config``, and every chunk that fails the integrity check counted not done), and the plan."""
    state = store_state(config.store_url, config.storage_options)
    if state != "ready":
        return StoreInspection(state, make_plan(config))
    check_resumable(config)
    mask, report = repair_plan_mask(config)
    return StoreInspection(state, make_plan(config, mask), tuple(report.regions), tuple(report.problems))


def prepare_store(config: JobConfig, command: str = "") -> Plan:
    """Create the store (again, if its template was never finished) or check it can be resumed with
    ``config``, un-doing every chunk that fails the integrity check; return the plan of what is left.
    Call it holding the store's lock."""
    inspection = inspect_store(config)
    if inspection.state != "ready":
        create_store(config, command=command, state=inspection.state)
    elif inspection.plan.remaining:  # a resume with work to do: in the store's history
        append_history(config, f"{command or 'tablegen.run'}: resumed, {inspection.plan.cells_remaining:,} of "
                               f"{inspection.plan.cells:,} cells to compute")
        for problem in inspection.problems:
            logger.warning("store %s: %s; recomputing its cells", config.store_url, problem)
        if inspection.damaged_regions:
            clear_regions(config.store_url, config.storage_options, list(inspection.damaged_regions))
    return inspection.plan


def check_grid_memory(config: JobConfig) -> None:
    """Refuse a grid whose flags, plan and tasks on the client, or largest cell's kernel tables, exceed the limit."""
    chunks = -(-len(config.P) // config.chunks[0]) * -(-len(config.N) // config.chunks[1])
    check_memory(grid_memory(config.cells, chunks), f"a grid of {config.cells:,} cells in {chunks:,} chunks",
                 "split it into several jobs (configs with part of P or N), or use larger chunks")
    P, N = max(config.P), max(config.N)
    check_memory(kernel_tables_memory(config.metrics, P, N), f"simulating the grid's largest cell ({P:,}, {N:,})",
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
        on_plan: Callable[[Plan], None] | None = None) -> RunSummary:
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
    start = time.perf_counter()
    with StoreLock(config.store_url, config.storage_options, break_lock=break_lock):
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
            results = _serial_results(config, chunks)
        else:
            results = _dask_results(config, chunks, client, on_client, grace)
        for chunk in results:
            done += chunk.size
            if progress is not None:
                progress(done, plan.cells, chunk)
        mark_complete(config)
    return RunSummary(plan.cells, plan.cells_remaining, config.replicates, time.perf_counter() - start,
                      config.store_url, True)


def _serial_results(config: JobConfig, chunks: list[Chunk]) -> Iterator[Chunk]:
    for chunk in chunks:
        run_chunk(config, chunk)
        yield chunk


def _dask_results(config: JobConfig, chunks: list[Chunk], client, on_client, grace: float) -> Iterator[Chunk]:
    from distributed import wait

    with _connected_client(config, client) as connected:
        if on_client is not None:
            on_client(connected)
        # Keys unique to this run: two runs of one config (two stores, or a rerun) on one client must
        # not share tasks — dask would hand the second run the first one's finished futures, and the
        # second store would never be written.
        run_token = uuid.uuid4().hex[:8]
        futures = {connected.submit(run_chunk, config, chunk, key=f"tablegen-chunk-{config.result_hash[:8]}-"
                                    f"{run_token}-{chunk.p_start}-{chunk.n_start}", pure=False,
                                    retries=TASK_RETRIES): chunk
                   for chunk in chunks}
        idle_since, poll = None, min(max(grace / 4, 0.05), 5.0)
        while futures:
            try:
                finished = wait(list(futures), timeout=poll, return_when="FIRST_COMPLETED").done
            except TimeoutError:
                finished = ()
            for future in finished:
                future.result()  # re-raises a task's error here (after its retries), with its traceback
                yield futures.pop(future)
            idle_since = _watch_workers(connected, futures, idle_since, grace)


def _watch_workers(connected, futures: dict, idle_since: float | None, grace: float) -> float | None:
    """Stop the run (cancelling what is left) once the cluster has had no worker for ``grace`` seconds."""
    if not futures:
        return None
    try:
        workers = len(connected.nthreads())
    except (OSError, TimeoutError):
        workers = 0
    if workers:
        return None
    now = time.monotonic()
    if idle_since is None:
        logger.warning("the dask cluster has no worker; the run stops if none joins within %.0f s", grace)
        return now
    if now - idle_since < grace:
        return idle_since
    connected.cancel(list(futures))
    raise RunStoppedError(
        f"no dask worker for {grace:.0f} s (cluster.worker_grace in the config, --worker-grace on the command "
        f"line): the run stopped with {len(futures):,} chunks left. The lock is released and every finished chunk "
        "is kept; run the same command again to resume once workers are available")


def check_scheduler(config: JobConfig) -> None:
    """Reach the config's scheduler (file or address) within its connect timeout, before anything is written.

    Raises
    ------
    TablegenInputError
        If the scheduler file does not exist or names no scheduler address.
    RunStoppedError
        If the scheduler cannot be reached in time.
    """
    spec = config.cluster or {}
    timeout = spec.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT)
    if "scheduler_file" in spec:
        address = _scheduler_file_address(spec["scheduler_file"])
    elif "scheduler_address" in spec:
        address = spec["scheduler_address"]
    else:
        return
    from distributed import Client

    try:
        Client(address, timeout=timeout).close()
    except (OSError, TimeoutError, ValueError) as error:
        raise RunStoppedError(f"cannot reach the dask scheduler at {address} within {timeout:g} s ({error}); "
                              "nothing was written: start the scheduler or fix the address, then rerun") from None


def _scheduler_file_address(path: str) -> str:
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            address = json.load(handle).get("address")
    except FileNotFoundError:
        raise TablegenInputError(f"--scheduler-file {path}: no such file (start the scheduler with "
                                 "--scheduler-file first); nothing was written") from None
    except (OSError, UnicodeDecodeError, ValueError, AttributeError) as error:
        raise TablegenInputError(f"--scheduler-file {path}: not a dask scheduler file ({error})") from None
    if not isinstance(address, str) or not address:
        raise TablegenInputError(f"--scheduler-file {path}: names no scheduler address")
    return address


@contextlib.contextmanager
def _connected_client(config: JobConfig, client):
    """The given client, or one connected to the config's cluster (a LocalCluster by default)."""
    if client is not None:
        yield client
        return
    from distributed import Client, LocalCluster

    cluster_spec = config.cluster or {"workers": 2}
    if "scheduler_address" in cluster_spec:
        with Client(cluster_spec["scheduler_address"],
                    timeout=cluster_spec.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT)) as connected:
            yield connected
    elif "scheduler_file" in cluster_spec:
        with Client(scheduler_file=cluster_spec["scheduler_file"],
                    timeout=cluster_spec.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT)) as connected:
            yield connected
    elif resolve_device(config.device) == "cuda":  # one worker per GPU (tablegen.batch.gpu_cluster)
        from tablegen.batch.gpu_cluster import gpu_cluster

        with allocator_environment(), gpu_cluster(worker_environment()) as cluster, Client(cluster) as connected:
            yield connected
    else:
        with allocator_environment(), \
                LocalCluster(n_workers=cluster_spec["workers"], threads_per_worker=1, processes=True,
                             env=worker_environment(), dashboard_address=":0") as cluster, \
                Client(cluster) as connected:
            yield connected
