"""Arguments and entry point of the dask-jobqueue launchers ``jobs/slurm.py`` and ``jobs/pbs.py``.

Argument handling only: the argparse types, :func:`build_parser` and :func:`main`.  The cluster
wiring (job script prologue, worker lifetime, adaptive scaling, the run on the cluster) is
:mod:`tablegen.batch.launch`.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shlex
import sys

from tablegen.batch import launch as cluster_launch
from tablegen.cli.options import storage_options_argument, storage_options_from
from tablegen.cli.progress import RunProgress
from tablegen.errors import TablegenInputError

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
    from dask.utils import parse_bytes

    try:
        size = parse_bytes(text)
    except (ValueError, TypeError):
        size = 0
    if size < _MIN_MEMORY:
        raise argparse.ArgumentTypeError(f"must be a size of at least 64MiB with its unit, e.g. 4GB; got {text!r}")
    return text


def walltime(text: str) -> str:
    """argparse type: ``HH:MM:SS`` of at least a minute (hours may exceed 24), as SLURM and PBS accept it."""
    if not _WALLTIME.fullmatch(text) or cluster_launch.walltime_seconds(text) < 60:
        raise argparse.ArgumentTypeError(f"must be HH:MM:SS of at least 00:01:00, e.g. 04:00:00; got {text!r}")
    return text


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
    storage_options_argument(parser)
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


def main(argv, parser: argparse.ArgumentParser, make_cluster) -> int:
    """Parse ``argv``, then print the job script or run the job; returns the exit code.

    ``make_cluster(args)`` builds the (unscaled) dask-jobqueue cluster from the parsed arguments.
    Bad arguments and bad configs exit with status 2 and a message naming the argument or field,
    before any cluster exists; a refusal at run time exits with its code (README "Exit codes").
    """
    import dask

    from tablegen.batch.plan import format_plan

    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not args.verbose:
        dask.config.set({"logging.distributed": "warning"})
        logging.getLogger("distributed").setLevel(logging.WARNING)
    try:
        config = cluster_launch.job_config(args.config, args.store, args.jobs * args.processes,
                                           storage_options_from(args))
        if args.print_job_script:
            with make_cluster(args) as cluster:
                print(cluster.job_script())
            return 0
        progress = {}

        def show_plan(plan) -> None:  # once the store is locked and inspected: one plan per run
            print(format_plan(config, plan), flush=True)
            progress["line"] = RunProgress(config, plan)

        with make_cluster(args) as cluster:
            print(f"dask dashboard: {cluster.dashboard_link}", flush=True)
            summary = cluster_launch.run_on_cluster(
                cluster, config, args.jobs, command=shlex.join([parser.prog, *argv]), break_lock=args.break_lock,
                progress=lambda *a: progress["line"](*a), on_plan=show_plan,
                on_work=lambda *a: progress["line"].work(*a))
    except TablegenInputError as error:  # exit codes: tablegen.errors (2 for bad input, 6 for a locked store, ...)
        parser.exit(error.exit_code, f"{parser.prog}: error: {error}\n")
    print(summary)
    return 0
