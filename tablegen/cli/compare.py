"""``tablegen compare``: comparisons between real classifiers.

Each comparison is one sub-subcommand with its own module, named in :data:`SUBCOMMANDS`: its
``add_parser(subparsers)`` adds the sub-subcommand and its arguments and sets
``run=<function(args) -> exit code>`` with ``set_defaults``, as every command does.  Registered by
:mod:`tablegen.cli.main`.
"""

from __future__ import annotations

import importlib

#: Modules that each define ``add_parser(subparsers)``; imported when the parser is built.
SUBCOMMANDS: tuple[str, ...] = ("tablegen.cli.compare_datasets", "tablegen.cli.compare_f1", "tablegen.cli.compare_cv")


def add_compare_parser(sub) -> None:
    """The ``compare`` subcommand and its sub-subcommands (each sets its own ``run``)."""
    p = sub.add_parser("compare", help="compare real classifiers: across data sets, or two on one test set")
    compare = p.add_subparsers(dest="compare_command", required=True)
    for name in SUBCOMMANDS:
        module = importlib.import_module(name)
        module.add_parser(compare)
