"""Run ``tablegen run CONFIG`` on PBS (PBS Pro, OpenPBS, Torque) batch jobs through dask-jobqueue.

    python jobs/pbs.py configs/paper.yaml --store /shared/tables/paper.zarr \\
        --jobs 20 --processes 8 --memory 16GB --walltime 12:00:00 --queue workq --account myproj

Add ``--print-job-script`` to see the ``qsub`` script of one job without submitting anything.
Torque sites give ``--resource-spec nodes=1:ppn=8`` (the default is PBS Pro's ``select=`` form).
Arguments: :mod:`tablegen.cli.launch`; cluster wiring: :mod:`tablegen.batch.launch`.  See jobs/README.md.
"""

from __future__ import annotations

import argparse

from tablegen.batch.launch import cluster_options
from tablegen.cli import launch


def build_parser() -> argparse.ArgumentParser:
    """The launcher's arguments (see :func:`tablegen.cli.launch.build_parser`) and ``--resource-spec``."""
    parser = launch.build_parser("pbs.py", "PBS", ("--queue",))
    parser.add_argument("--resource-spec", help="the -l resource request (default: select=1:ncpus=<processes>:"
                                                "mem=<memory>; Torque: nodes=1:ppn=<processes>)")
    return parser


def make_cluster(args: argparse.Namespace):
    """An unscaled ``PBSCluster``: one ``qsub`` job per ``--jobs``, one core per worker process.

    Examples
    --------
    >>> args = build_parser().parse_args(["configs/smoke.yaml", "--jobs", "1", "--queue", "workq"])
    >>> with make_cluster(args) as cluster:
    ...     "#PBS -q workq" in cluster.job_script()
    True
    """
    from dask_jobqueue import PBSCluster

    return PBSCluster(**cluster_options(args), resource_spec=args.resource_spec)


def main(argv=None) -> int:
    """Entry point; returns the exit code."""
    return launch.main(argv, build_parser(), make_cluster)


if __name__ == "__main__":
    raise SystemExit(main())
