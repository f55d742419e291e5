"""Shared part of the dask-jobqueue launchers ``jobs/slurm.py`` and ``jobs/pbs.py``.

A launcher runs where batch jobs can be submitted (a login node, or a small batch job of its own).
It starts the dask scheduler in its own process, submits ``--jobs`` batch jobs that each start
``--processes`` dask worker processes of one thread and one core, and runs
:func:`tablegen.batch.job.run` on that cluster.  The batch jobs are cancelled when the run ends, fails or
is interrupted; running the same command again resumes.  Nothing here computes statistics: this is
argument handling and wiring only.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shlex
import sys

import dask
from dask.utils import parse_bytes

from tablegen.cli.main import RunProgress
from tablegen.batch.config import JobConfig, load_config
from tablegen.batch.job import RunSummary, dry_run_plan, resolve_config, run, worker_environment
from tablegen.batch.plan import format_plan
from tablegen.errors import TablegenInputError

logger = logging.getLogger(__name__)

_WALLTIME = re.compile(r"\d+:[0-5]\d:[0-5]\d")
_MIN_MEMORY = 2**26  # 64 MiB: anything smaller is a size given without its unit


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def memory(text: str) -> str:
    """argparse type: a memory size with its unit (``4GB``, ``500MiB``), at least 64 MiB."""
    try:
        size = parse_bytes(text)
    except (ValueError, TypeError):
        size = 0
    if size < _MIN_MEMORY:
        raise argparse.ArgumentTypeError(f"must be a size of at least 64MiB with its unit, e.g. 4GB; got {text!r}")
    return text


def walltime(text: str) -> str:
    """argparse type: ``HH:MM:SS`` of at least a minute (hours may exceed 24), as SLURM and PBS accept it."""
    if not _WALLTIME.fullmatch(text) or _seconds(text) < 60:
        raise argparse.ArgumentTypeError(f"must be HH:MM:SS of at least 00:01:00, e.g. 04:00:00; got {text!r}")
    return text


def _seconds(hh_mm_ss: str) -> int:
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
    total = _seconds(walltime_text)
    margin = min(600, total // 10)
    return ["--lifetime", f"{total - margin}s", "--lifetime-stagger", f"{margin // 4}s"]


def venv(text: str) -> str:
    """argparse type: a virtual environment directory (it must hold ``bin/activate``); made absolute."""
    path = os.path.abspath(os.path.expanduser(text))
    if not os.path.isfile(os.path.join(path, "bin", "activate")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a virtual environment (no bin/activate in it)")
    return path


def build_parser(prog: str, system: str, queue_flags: tuple[str, ...]) -> argparse.ArgumentParser:
    """The arguments every launcher takes.

    Parameters
    ----------
    prog : str
        The launcher's name in messages (``slurm.py``).
    system : str
        The batch system's name in the help (``SLURM``).
    queue_flags : tuple of str
        Option strings of the queue argument (``("--partition", "--queue")`` for SLURM).

    Returns
    -------
    argparse.ArgumentParser

    Examples
    --------
    >>> args = build_parser("slurm.py", "SLURM", ("--partition", "--queue")).parse_args(
    ...     ["configs/paper.yaml", "--jobs", "4", "--queue", "compute"])
    >>> args.jobs, args.queue, args.processes
    (4, 'compute', 1)
    """
    parser = argparse.ArgumentParser(prog=prog, description=f"Run `tablegen run CONFIG` on {system} batch jobs "
                                     "(dask-jobqueue): one core and one thread per dask worker process.")
    add = parser.add_argument
    add("config", help="job config (YAML), e.g. configs/paper.yaml")
    add("--store", help="store path or fsspec URL that every worker can reach (default: the config's); "
                        "a local path is made absolute here")
    add("--jobs", type=positive_int, required=True, help="batch jobs to submit")
    add("--processes", type=positive_int, default=1,
        help="dask worker processes per job, one core and one thread each (default %(default)s)")
    add("--memory", type=memory, default="2GB",
        help="memory per worker process; each job asks for processes x this (default %(default)s)")
    add("--walltime", type=walltime, default="01:00:00", help="time limit per job, HH:MM:SS (default %(default)s)")
    add(*queue_flags, dest="queue", help=f"{system} queue to submit to (default: the site's)")
    add("--account", help="account or project to charge (default: the site's)")
    add("--venv", type=venv, help="virtual environment to activate in each job, on a filesystem the nodes share "
                                  f"(default: run workers with this launcher's Python, {sys.executable})")
    add("--interface", help="network interface of the scheduler and workers, e.g. ib0 (default: dask's choice)")
    add("--job-extra", action="append", default=[], metavar="DIRECTIVE",
        help=f"extra {system} directive for each job, repeatable (e.g. --job-extra=--qos=long)")
    add("--break-lock", action="store_true", help="remove another run's lock first (only if that run is dead)")
    add("--print-job-script", action="store_true", help="print the batch script of one job and exit; submit nothing")
    add("-v", "--verbose", action="store_true", help="log progress details")
    return parser


def job_script_prologue(venv_dir: str | None = None) -> list[str]:
    """Shell lines run in each job before the workers start.

    They export :func:`tablegen.batch.job.worker_environment` (one numba/OpenMP/BLAS thread; the numba
    cache in ``$TMPDIR`` of each node, evaluated there, unless ``NUMBA_CACHE_DIR`` is set here) and,
    if ``venv_dir`` is given, activate that virtual environment.

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


def cluster_options(args: argparse.Namespace) -> dict:
    """Keyword arguments common to ``SLURMCluster`` and ``PBSCluster`` from the parsed arguments.

    ``cores`` equals ``processes``, so that every worker process has one thread, and a job's
    memory is ``processes`` times ``--memory``, so that every worker process has ``--memory``
    (dask-jobqueue splits a job's cores and memory evenly between its processes).
    """
    job_memory = args.processes * parse_bytes(args.memory)
    options = dict(cores=args.processes, processes=args.processes, memory=job_memory, walltime=args.walltime,
                   queue=args.queue, account=args.account, job_name="tablegen", interface=args.interface,
                   job_script_prologue=job_script_prologue(args.venv), job_extra_directives=list(args.job_extra),
                   worker_extra_args=worker_lifetime(args.walltime))
    if args.venv:
        options["python"] = os.path.join(args.venv, "bin", "python")
    return options


def job_config(path: str, store: str | None, workers: int) -> JobConfig:
    """Load ``path`` with the store override; a local store path is made absolute (by
    :func:`tablegen.batch.job.resolve_config`: workers resolve a relative path against their own working
    directory, which is not the launcher's under PBS, where jobs start in ``$HOME``).  ``workers``
    (the number of worker processes) replaces the config's cluster so that the plan's time estimate
    counts the right workers; the cluster itself is the launcher's, whatever the config says.
    """
    return resolve_config(load_config(path), store_url=store, workers=workers)


def run_on_cluster(cluster, config: JobConfig, jobs: int, *, command: str = "", break_lock: bool = False,
                   progress=None) -> RunSummary:
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
    command, break_lock, progress
        As for :func:`tablegen.batch.job.run`.

    Returns
    -------
    RunSummary
    """
    from distributed import Client

    with Client(cluster) as client:
        return run(config, executor="dask", client=client, command=command, break_lock=break_lock,
                   progress=progress, on_client=lambda _: _scale(cluster, jobs))


def _scale(cluster, jobs: int) -> None:
    """Submit the jobs (called by :func:`tablegen.batch.job.run` once the store is locked and work remains)."""
    cluster.adapt(minimum_jobs=jobs, maximum_jobs=jobs)
    logger.info("submitted %d batch jobs; dashboard %s", jobs, cluster.dashboard_link)


def main(argv, parser: argparse.ArgumentParser, make_cluster) -> int:
    """Parse ``argv``, then print the job script or run the job; returns the exit code.

    ``make_cluster(args)`` builds the (unscaled) dask-jobqueue cluster from the parsed arguments.
    Bad arguments and bad configs exit with status 2 and a message naming the argument or field,
    before any cluster exists.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not args.verbose:
        dask.config.set({"logging.distributed": "warning"})
        logging.getLogger("distributed").setLevel(logging.WARNING)
    try:
        config = job_config(args.config, args.store, args.jobs * args.processes)
        if args.print_job_script:
            with make_cluster(args) as cluster:
                print(cluster.job_script())
            return 0
        plan = dry_run_plan(config)
        print(format_plan(config, plan), flush=True)
        with make_cluster(args) as cluster:
            print(f"dask dashboard: {cluster.dashboard_link}", flush=True)
            summary = run_on_cluster(cluster, config, args.jobs, command=shlex.join([parser.prog, *argv]),
                                     break_lock=args.break_lock, progress=RunProgress(config, plan))
    except TablegenInputError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    print(summary)
    return 0
