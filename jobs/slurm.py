"""Run ``tablegen run CONFIG`` on SLURM batch jobs through dask-jobqueue.

    python jobs/slurm.py configs/paper.yaml --store /shared/tables/paper.zarr \\
        --jobs 20 --processes 8 --memory 16GB --walltime 12:00:00 --partition compute --account myproj

Add ``--print-job-script`` to see the ``sbatch`` script of one job without submitting anything.
Arguments: :mod:`tablegen.cli.launch`; cluster wiring: :mod:`tablegen.batch.launch`.  See jobs/README.md.
"""

from __future__ import annotations

import argparse

from tablegen.batch.launch import cluster_options
from tablegen.cli import launch


def build_parser() -> argparse.ArgumentParser:
    """The launcher's arguments (see :func:`tablegen.cli.launch.build_parser`)."""
    return launch.build_parser("slurm.py", "SLURM", ("--partition", "--queue"))


def make_cluster(args: argparse.Namespace):
    """An unscaled ``SLURMCluster``: one ``sbatch`` job per ``--jobs``, one core per worker process.

    Examples
    --------
    >>> args = build_parser().parse_args(["configs/smoke.yaml", "--jobs", "1", "--walltime", "02:00:00"])
    >>> with make_cluster(args) as cluster:
    ...     "#SBATCH -t 02:00:00" in cluster.job_script()
    True
    """
    from dask_jobqueue import SLURMCluster

    return SLURMCluster(**cluster_options(args))


def main(argv=None) -> int:
    """Entry point; returns the exit code."""
    return launch.main(argv, build_parser(), make_cluster)


if __name__ == "__main__":
    raise SystemExit(main())
