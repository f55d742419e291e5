"""Executors of the batch job's tasks: ``"serial"`` (in this process) and ``"dask"`` (a LocalCluster of
single-threaded worker processes by default, a GPU cluster, or any running scheduler given by address or
scheduler file), and the environment their worker processes start with.

Both run the same task (:func:`tablegen.batch.tasks.run_chunk`) and yield each chunk as it is written;
seeds are keyed on the cell and replicate, so both give bit-identical stores.  While a task runs, its
progress (the cost model's seconds done, as each cell and each metric's exact values start, and within a cell after
its blocks of replicates, at most every :data:`WORKER_REPORT_SECONDS` from a dask worker) reaches an
``on_work`` callback on the calling thread: directly in the serial executor, from dask workers as
events of a topic of the run (``Worker.log_event``, ``Client.subscribe_topic``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import queue
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator

from tablegen.batch.config import JobConfig
from tablegen.batch.plan import Chunk
from tablegen.batch.tasks import run_chunk
from tablegen.common.outputs import OUT_OF_SPACE
from tablegen.compute.kernels.cuda.device import resolve_device
from tablegen.errors import Argument, RunStoppedError, TablegenInputError

logger = logging.getLogger(__name__)

#: Seconds a dask run may go without a single worker before it stops (config ``cluster.worker_grace``).
DEFAULT_WORKER_GRACE = 300.0
#: Seconds to reach a scheduler given by address or file (config ``cluster.connect_timeout``).
DEFAULT_CONNECT_TIMEOUT = 30.0
#: A chunk task that fails (a transient write error, a lost worker) is run again this many times.
TASK_RETRIES = 2

#: glibc allocator thresholds for worker processes (read when a process starts; docs/explanation/performance.md).
#: With dask's ``MALLOC_TRIM_THRESHOLD_=65536`` (which also pins the mmap threshold) every block buffer is mapped and
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


#: ``on_work(chunk, done, left)``: a running task's estimated single-core seconds done so far and those left of the
#: step under way (:data:`tablegen.batch.tasks.WorkReport`), on the calling thread; the dask executor also
#: calls ``on_work(None, 0.0, 0.0)`` when a look at the cluster brought no report (every :data:`POLL_SECONDS`).
WorkCallback = Callable[[Chunk, float, float], None]

#: Seconds between looks at the cluster while tasks run: how late a worker's progress report is shown at most.
POLL_SECONDS = 0.5
#: Seconds between a dask worker's reports within a cell (each is an event through the scheduler; a step's start is
#: always reported).  The serial executor reports after every block of replicates.
WORKER_REPORT_SECONDS = 0.5


def serial_results(config: JobConfig, chunks: list[Chunk], on_work: WorkCallback | None = None) -> Iterator[Chunk]:
    for chunk in chunks:
        with stopped_when_out_of_space(config):
            run_chunk(config, chunk, None if on_work is None else functools.partial(on_work, chunk))
        yield chunk


@contextlib.contextmanager
def stopped_when_out_of_space(config: JobConfig):
    """Turn a chunk's write failing for want of space (``No space left on device``, quota exceeded) into
    :class:`RunStoppedError`: every chunk written before is kept and a resume rewrites the one that failed."""
    try:
        yield
    except OSError as error:
        if error.errno not in OUT_OF_SPACE:
            raise
        raise RunStoppedError(
            f"store {config.store_url}: no space left ({error.strerror}); the run stopped. Every finished chunk is "
            "kept and the lock released: free space (or move the store with --store), then run the same command "
            "again to resume") from None


def run_chunk_reporting(config: JobConfig, chunk: Chunk, topic: str) -> int:
    """:func:`~tablegen.batch.tasks.run_chunk` on a dask worker, its work reports sent to the client as
    events of ``topic`` (``Worker.log_event``: fire and forget, through the scheduler)."""
    from distributed import get_worker

    worker, where = get_worker(), [chunk.p_start, chunk.p_stop, chunk.n_start, chunk.n_stop]
    return run_chunk(config, chunk, lambda done, left: worker.log_event(topic, {"chunk": where, "done": done,
                                                                                 "step": left}),
                     WORKER_REPORT_SECONDS)


def dask_results(config: JobConfig, chunks: list[Chunk], client, on_client, grace: float,
                 on_work: WorkCallback | None = None, task: Callable[..., int] | None = None) -> Iterator[Chunk]:
    """Run each chunk's task on the config's cluster (or ``client``) and yield each chunk as it is written; ``task``
    (default :func:`run_chunk_reporting`) is called as ``task(config, chunk, topic)`` on a worker (a multi-class
    job's task, :mod:`tablegen.batch.multiclass_job`)."""
    from distributed import wait

    task = run_chunk_reporting if task is None else task

    with _connected_client(config, client, grace) as connected:
        if on_client is not None:
            on_client(connected)
        # Keys unique to this run: two runs of one config (two stores, or a rerun) on one client must
        # not share tasks — dask would hand the second run the first one's finished futures, and the
        # second store would never be written.
        run_token = uuid.uuid4().hex[:8]
        topic, reports = f"tablegen-work-{run_token}", queue.SimpleQueue()
        connected.subscribe_topic(topic, reports.put)  # called on the client's event-loop thread
        try:
            futures = {connected.submit(task, config, chunk, topic,
                                        key=f"tablegen-chunk-{config.result_hash[:8]}-{run_token}-"
                                            f"{chunk.p_start}-{chunk.n_start}", pure=False,
                                        retries=TASK_RETRIES): chunk
                       for chunk in chunks}
            idle_since, poll, written = None, min(max(grace / 4, 0.05), POLL_SECONDS), []
            while futures:
                try:
                    finished = wait(list(futures), timeout=poll, return_when="FIRST_COMPLETED").done
                except TimeoutError:
                    finished = ()
                _drain(reports, on_work, set(futures.values()))
                for future in finished:
                    with stopped_when_out_of_space(config):
                        future.result()  # re-raises a task's error here (after its retries), with its traceback
                    written.append(future)
                    yield futures.pop(future)
                idle_since = _watch_workers(connected, futures, idle_since, grace)
            # The scheduler forgets the finished tasks now, not when the last reference to their futures goes:
            # a worker closed while it holds a result is "lost" with a warning.
            connected.cancel(written)
        finally:
            connected.unsubscribe_topic(topic)


def _drain(reports: queue.SimpleQueue, on_work: WorkCallback | None, running: set[Chunk]) -> None:
    """Hand the workers' reports received so far to ``on_work`` (those of tasks still running)."""
    if on_work is not None and reports.empty():
        on_work(None, 0.0, 0.0)
    while True:
        try:
            _, message = reports.get_nowait()
        except queue.Empty:
            return
        chunk = Chunk(*message["chunk"])
        if on_work is not None and chunk in running:
            on_work(chunk, float(message["done"]), float(message["step"]))


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

    For a LocalCluster, checks its number of workers instead (:func:`check_local_workers`).

    Raises
    ------
    TablegenInputError
        If the scheduler file does not exist or names no scheduler address, an address is not one
        (``tcp://host:port``), or a LocalCluster would have more workers than the cap.
    RunStoppedError
        If the scheduler cannot be reached in time.
    """
    spec = config.cluster or {}
    timeout = spec.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT)
    if "scheduler_file" in spec:
        address = _scheduler_file_address(spec["scheduler_file"])
        _check_address(address, Argument("scheduler_file", spec["scheduler_file"]), ": its address ")
    elif "scheduler_address" in spec:
        address = spec["scheduler_address"]
        _check_address(address, Argument("scheduler_address"), " ")
    else:
        check_local_workers(spec.get("workers", 2))
        return
    try:
        _connect_within(address, timeout)
    except (OSError, TimeoutError, ValueError) as error:
        raise RunStoppedError(f"cannot reach the dask scheduler at {address} within {timeout:g} s ({error}); "
                              "nothing was written: start the scheduler or fix the address, then rerun") from None


def _connect_within(address: str, timeout: float) -> None:
    """Connect a client to ``address`` and close it, all within ``timeout`` seconds (plus a little).

    distributed's own timeout covers opening the connection, not the handshake after it: a port that accepts the
    connection and then says nothing a dask scheduler would (a dashboard's HTTP port, any other server) held the
    client for as long as that server kept the connection open.  Here the whole attempt runs in a daemon thread
    that is abandoned at the deadline.
    """
    from distributed import Client

    outcome: dict = {}

    def attempt() -> None:
        try:
            Client(address, timeout=timeout, set_as_default=False).close()  # never dask's default if abandoned
            outcome["done"] = True
        except BaseException as error:  # handed to the caller below
            outcome["error"] = error

    thread = threading.Thread(target=attempt, name="tablegen-scheduler-check", daemon=True)
    thread.start()
    thread.join(timeout + 5.0)
    if "error" in outcome:
        raise outcome["error"]
    if "done" not in outcome:
        raise TimeoutError(f"no dask handshake within {timeout + 5.0:g} s{_speaks_http(address)}")


def _speaks_http(address: str) -> str:
    """A hint when ``host:port`` answers HTTP (e.g. the dashboard's port instead of the scheduler's)."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=2.0) as probe:
            probe.sendall(b"GET / HTTP/1.0\r\n\r\n")
            reply = probe.recv(5)
    except (OSError, ValueError, TypeError):
        return ""
    return "; that port answers HTTP: is it the dashboard's port rather than the scheduler's?" \
        if reply.startswith(b"HTTP") else ""


#: A LocalCluster may have at most this many worker processes per core (os.cpu_count()): each has one thread,
#: so more only share the cores, and starting hundreds of processes on a small machine takes minutes.
MAX_WORKERS_PER_CORE = 4


def check_local_workers(workers: int, cores: int | None = None) -> None:
    """Refuse a LocalCluster of more than :data:`MAX_WORKERS_PER_CORE` worker processes per core of this machine.

    Examples
    --------
    >>> check_local_workers(8, cores=2)
    >>> try:
    ...     check_local_workers(1000, cores=2)
    ... except TablegenInputError as error:
    ...     print(str(error)[:71])
    workers = 1000 is more than this machine's cap of 8 worker processes (4
    """
    cores = cores or os.cpu_count() or 1
    cap = MAX_WORKERS_PER_CORE * cores
    if workers > cap:
        raise TablegenInputError(
            f"workers = {workers} is more than this machine's cap of {cap} worker processes ({MAX_WORKERS_PER_CORE} "
            f"per core, {cores} cores): each worker has one thread, so more only share the cores; give --workers "
            f"{cores} (or cluster.workers in the config), or a scheduler of a larger cluster")


def _check_address(address: str, *what: str | Argument) -> None:
    from tablegen.batch.config import scheduler_address_problem

    problem = scheduler_address_problem(address)
    if problem:
        raise TablegenInputError.naming(*what, problem, "; nothing was written")


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
def _connected_client(config: JobConfig, client, grace: float = DEFAULT_WORKER_GRACE):
    """The given client, or one connected to the config's cluster (a LocalCluster by default, whose scheduler
    drops a worker that has not been heard from for :func:`worker_ttl_seconds` of ``grace``)."""
    if client is not None:
        yield client
        return
    from distributed import Client

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
        with allocator_environment(), _local_cluster(cluster_spec["workers"], grace) as cluster, \
                Client(cluster) as connected:
            try:
                yield connected
            finally:
                _close_workers(cluster, connected)


def worker_ttl_seconds(grace: float) -> float:
    """How long the LocalCluster's scheduler waits for a silent worker (stopped, hung, its host gone) before it
    drops it and hands its tasks to the others: half the run's worker grace, at least 15 s (dask's default is 5
    minutes, which let one SIGSTOPped worker stall a run whatever the grace).  Workers keep sending heartbeats
    while they compute: every kernel releases the GIL.

    Examples
    --------
    >>> worker_ttl_seconds(30.0), worker_ttl_seconds(300.0)
    (15.0, 150.0)
    """
    return max(grace / 2.0, 15.0)


def worker_start_seconds(grace: float) -> float:
    """How long each LocalCluster worker may take to start (its nanny's ``death_timeout``): the run's worker grace,
    at least 20 s (a worker process imports dask and distributed as it starts: a few seconds on a loaded machine).
    A worker that has not started by then (stopped by SIGSTOP or a debugger, or starved) stops the run; without the
    bound it held the cluster's constructor for ever.

    Examples
    --------
    >>> worker_start_seconds(10.0), worker_start_seconds(300.0)
    (20.0, 300.0)
    """
    return max(grace, 20.0)


@contextlib.contextmanager
def _local_cluster(workers: int, grace: float = DEFAULT_WORKER_GRACE):
    """A LocalCluster of ``workers`` single-threaded processes; one that fails to start (a worker dying as it starts:
    "Nanny failed to start", no ports, a worker that does not start within :func:`worker_start_seconds`) stops the
    run with :class:`RunStoppedError`, the worker processes it started killed."""
    import multiprocessing

    import dask
    from distributed import LocalCluster

    timeout, before, start = worker_start_seconds(grace), set(multiprocessing.active_children()), time.monotonic()
    try:
        with dask.config.set({"distributed.scheduler.worker-ttl": f"{worker_ttl_seconds(grace):g}s"}):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   env=worker_environment(), dashboard_address=":0", death_timeout=timeout)
    except Exception as error:  # noqa: BLE001 - RuntimeError, OSError, TimeoutError, and for a worker that never
        # started an AssertionError of distributed's (its nanny cannot kill a process still starting)
        _kill_started(before)
        cause = (f"a worker process did not start within {timeout:g} s (stopped, by SIGSTOP or a debugger, or the "
                 "machine too loaded to start it; cluster.worker_grace sets the bound)"
                 if time.monotonic() - start >= timeout else f"{type(error).__name__}: {error}")
        raise RunStoppedError(
            f"the local dask cluster of {workers} worker(s) did not start ({cause}); nothing was computed. The lock "
            "is released and every finished chunk kept: run the same command again, with fewer --workers if memory "
            "is short, or --executor serial") from None
    with cluster:
        yield cluster


def _kill_started(before: set) -> None:
    """Kill the processes this process started since ``before`` (``multiprocessing.active_children()``) that are
    still there: workers a failed cluster start left behind (a stopped one ignores its nanny's request to stop)."""
    import multiprocessing

    for process in set(multiprocessing.active_children()) - before:
        logger.warning("killing worker process %s, left by the cluster's failed start", process.pid)
        process.kill()
        process.join(5.0)


#: Seconds a LocalCluster's worker is given to stop at the end of a run before its nanny kills it.
WORKER_CLOSE_SECONDS = 30.0


def _close_workers(cluster, client, timeout: float = WORKER_CLOSE_SECONDS) -> None:
    """Stop the cluster's workers, each given ``timeout`` seconds (0.8 of it to exit by itself), once the
    scheduler holds no result on them (the run's futures are released as the run lets them go).

    The cluster's own close gives a worker 4 s and then kills it with a "Worker process still alive"
    warning: on a loaded 2-core machine a worker that has just finished its last task can take longer.
    """
    import asyncio

    deadline = time.monotonic() + 5.0
    with contextlib.suppress(OSError, TimeoutError):
        while any(client.has_what().values()) and time.monotonic() < deadline:
            time.sleep(0.05)

    async def close() -> None:
        await asyncio.gather(*(worker.close(timeout=timeout, reason="tablegen-run-done")
                               for worker in list(cluster.workers.values())), return_exceptions=True)

    try:
        cluster.sync(close)
    except (OSError, TimeoutError, RuntimeError) as error:  # the cluster's own close still follows
        logger.debug("closing the workers: %s", error)
