"""Cluster wiring of the dask-jobqueue launchers (``jobs/slurm.py``, ``jobs/pbs.py``).

A launcher runs where batch jobs can be submitted (a login node, or a small batch job of its own).
It starts the dask scheduler in its own process, submits ``--jobs`` batch jobs that each start
``--processes`` dask worker processes of one thread and one core, and runs
:func:`tablegen.batch.job.run` on that cluster.  The batch jobs are cancelled when the run ends, fails or
is interrupted; running the same command again resumes.  The launchers' arguments are parsed by
:mod:`tablegen.cli.launch`; this module turns them into a cluster and a run.
"""

from __future__ import annotations

import logging
import os
import shlex

from tablegen.batch.config import JobConfig, load_config
from tablegen.batch.executors import worker_environment
from tablegen.batch.job import RunSummary, resolve_config, run

logger = logging.getLogger(__name__)


def walltime_seconds(hh_mm_ss: str) -> int:
    """Seconds of an ``HH:MM:SS`` walltime (hours may exceed 24).

    Examples
    --------
    >>> walltime_seconds("25:00:30")
    90030
    """
    hours, minutes, seconds = map(int, hh_mm_ss.split(":"))
    return 3600 * hours + 60 * minutes + seconds


def worker_lifetime(walltime_text: str) -> list[str]:
    """dask-worker arguments that retire each worker shortly before its job's walltime.

    A worker that retires hands its work back to the scheduler, which does not count that as a
    failure (a job killed at its walltime does, and a chunk so killed three times fails the run);
    the launcher's adaptive cluster then submits a replacement job.  The margin is a tenth of the
    walltime, at most 10 minutes; workers are staggered by a quarter of it so they do not all leave
    together.

    Examples
    --------
    >>> worker_lifetime("01:00:00")
    ['--lifetime', '3240s', '--lifetime-stagger', '90s']
    """
    total = walltime_seconds(walltime_text)
    margin = min(600, total // 10)
    return ["--lifetime", f"{total - margin}s", "--lifetime-stagger", f"{margin // 4}s"]


def job_script_prologue(venv_dir: str | None = None) -> list[str]:
    """Shell lines run in each job before the workers start.

    They export :func:`tablegen.batch.executors.worker_environment` (one numba/OpenMP/BLAS thread, the glibc
    allocator thresholds, the numba cache in ``$TMPDIR`` of each node, evaluated there, unless
    ``NUMBA_CACHE_DIR`` is set here) and, if ``venv_dir`` is given, activate that virtual environment.

    Examples
    --------
    >>> "export NUMBA_NUM_THREADS=1" in job_script_prologue()
    True
    """
    environment = worker_environment()
    lines = [f"export {name}={shlex.quote(value)}" for name, value in sorted(environment.items())
             if name != "NUMBA_CACHE_DIR" or "NUMBA_CACHE_DIR" in os.environ]
    if "NUMBA_CACHE_DIR" not in os.environ:  # node-local, evaluated on the node, not on this machine
        lines.append('export NUMBA_CACHE_DIR="${TMPDIR:-/tmp}/tablegen-numba-cache-$(id -u)"')
    return lines + ([f"source {shlex.quote(os.path.join(venv_dir, 'bin', 'activate'))}"] if venv_dir else [])


def cluster_options(args) -> dict:
    """Keyword arguments common to ``SLURMCluster`` and ``PBSCluster`` from the parsed launcher arguments.

    ``cores`` equals ``processes``, so that every worker process has one thread, and a job's
    memory is ``processes`` times ``--memory``, so that every worker process has ``--memory``
    (dask-jobqueue splits a job's cores and memory evenly between its processes).

    Parameters
    ----------
    args : argparse.Namespace
        As parsed by :func:`tablegen.cli.launch.build_parser`.
    """
    from dask.utils import parse_bytes

    job_memory = args.processes * parse_bytes(args.memory)
    options = dict(cores=args.processes, processes=args.processes, memory=job_memory, walltime=args.walltime,
                   queue=args.queue, account=args.account, job_name="tablegen", interface=args.interface,
                   job_script_prologue=job_script_prologue(args.venv), job_extra_directives=list(args.job_extra),
                   worker_extra_args=worker_lifetime(args.walltime))
    if args.venv:
        options["python"] = os.path.join(args.venv, "bin", "python")
    return options


def job_config(path: str, store: str | None, workers: int, storage_options: dict | None = None) -> JobConfig:
    """Load ``path`` with the store override; a local store path is made absolute (by
    :func:`tablegen.batch.job.resolve_config`: workers resolve a relative path against their own working
    directory, which is not the launcher's under PBS, where jobs start in ``$HOME``).  ``workers``
    (the number of worker processes) replaces the config's cluster so that the plan's time estimate
    counts the right workers; the cluster itself is the launcher's, whatever the config says.
    """
    return resolve_config(load_config(path), store_url=store, workers=workers, storage_options=storage_options)


def run_on_cluster(cluster, config: JobConfig, jobs: int, *, command: str = "", break_lock: bool = False,
                   progress=None, on_plan=None, on_work=None) -> RunSummary:
    """Keep ``jobs`` batch jobs submitted to ``cluster`` while ``config`` runs on it through a client.

    Jobs are submitted only once the store is locked and work remains.  The cluster is adaptive
    with ``jobs`` as both its minimum and its maximum, so a job that ends (walltime, node failure)
    is replaced; a plain ``cluster.scale`` would let the cluster shrink to nothing.

    Parameters
    ----------
    cluster : dask_jobqueue.JobQueueCluster
        The cluster, not yet scaled; the caller closes it (which cancels its jobs).
    config : JobConfig
        The job, with a store every worker can reach.
    jobs : int
        Batch jobs to keep submitted while there is work.
    command, break_lock, progress, on_plan, on_work
        As for :func:`tablegen.batch.job.run`.

    Returns
    -------
    RunSummary
    """
    from distributed import Client

    with Client(cluster) as client:
        return run(config, executor="dask", client=client, command=command, break_lock=break_lock,
                   progress=progress, on_client=lambda _: _scale(cluster, jobs), on_plan=on_plan, on_work=on_work)


def _scale(cluster, jobs: int) -> None:
    """Submit the jobs (called by :func:`tablegen.batch.job.run` once the store is locked and work remains)."""
    cluster.adapt(minimum_jobs=jobs, maximum_jobs=jobs)
    logger.info("submitted %d batch jobs; dashboard %s", jobs, cluster.dashboard_link)
