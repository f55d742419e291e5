"""Command line: lookups (``lookup``, ``test``, ``p-value``, ``topk``), planning (``power``, ``sample-size``,
``minimum-detectable``, ``max-models``), comparisons (``compare``), tables (``export``, ``plot``, ``info``,
``verify``, ``repair``), jobs (``run``, ``simulate``).

A thin layer over the library: every command maps onto one public function, bad input exits with
code 2 and a message naming the argument, and ``--json`` prints what the function returned.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from tablegen._version import __version__
from tablegen.errors import TablegenInputError

# Everything else is imported by the command that needs it: `tablegen --help` and a lookup load no
# dask, zarr or xarray (docs/explanation/performance.md, benchmarks/bench_startup.py).

#: (module, function adding the parsers, the commands it adds), in the order ``--help`` lists them.  A command
#: line naming one of these commands builds that group's parsers only: a lookup imports nothing of ``run``,
#: ``compare`` or ``topk`` (tests/cli/test_parser_groups.py checks that each group adds exactly these).
PARSER_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("tablegen.cli.lookup", "add_lookup_parsers", ("lookup", "test", "p-value")),
    ("tablegen.cli.power", "add_power_parsers", ("power", "sample-size", "minimum-detectable", "max-models")),
    ("tablegen.cli.evaluate", "add_evaluate_parser", ("evaluate",)),
    ("tablegen.cli.topk", "add_topk_parser", ("topk",)),
    ("tablegen.cli.compare", "add_compare_parser", ("compare",)),
    ("tablegen.cli.tables", "add_table_parsers", ("export", "plot", "info", "verify")),
    ("tablegen.cli.repair", "add_repair_parser", ("repair",)),
    ("tablegen.cli.run", "add_run_parsers", ("run", "simulate")),
)


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default, unless it is None/False or the help text already says it."""

    def _get_help_string(self, action):
        if action.default in (None, False) or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


class _NumberText:
    """What argparse takes for a negative number (a value, not an option): every text ``float`` reads that starts
    with a minus sign, ``-inf``, ``-nan`` and ``-1e400`` too.  argparse's own pattern (``-5``, ``-0.5``) sends
    ``-inf`` and ``-1e-3`` to its option parser ("unrecognized arguments"), where the command's check, which names
    the argument (``score``, ``--alpha``), never sees them."""

    @staticmethod
    def match(text: str) -> bool:
        if not text.startswith("-") or text.startswith("--"):
            return False
        try:
            float(text)
        except ValueError:
            return False
        return True


class _Parser(argparse.ArgumentParser):
    """An argument parser whose ``--help`` shows every option's default (subcommands inherit it), and that reads
    every number with a minus sign as a value (:class:`_NumberText`)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NumberText()  # argparse's hook (no public one); no option is a number


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``tablegen`` argument parser: every command's, or only the parsers of ``command``'s group (what
    :func:`main` builds for a command line naming a command it knows: start-up imports only what that
    command needs).  A ``command`` no group names builds every parser."""
    parser = _Parser(prog="tablegen", description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--version", action="version", version=f"tablegen {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    groups = [group for group in PARSER_GROUPS if command in group[2]] or PARSER_GROUPS
    for module, function, _ in groups:
        getattr(importlib.import_module(module), function)(sub)
    _verbose_everywhere(sub)
    return parser


def _command_word(argv: list[str]) -> str | None:
    """The first word of ``argv`` that is not an option (the command), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def command_parsers(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()):
    """(command words, parser) of every command that runs, sub-subcommands included (the CLI reference page
    and the convention tests walk the commands with it).

    Examples
    --------
    >>> ("compare", "f1") in [words for words, _ in command_parsers(build_parser())]
    True
    """
    groups = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if not groups:
        yield words, parser
    for group in groups:
        for name, child in group.choices.items():
            yield from command_parsers(child, (*words, name))


def _verbose_everywhere(subparsers) -> None:
    """Accept -v after a subcommand too (``tablegen run cfg.yaml -v``), at every level."""
    for parser in subparsers.choices.values():
        parser.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                            help="log progress details")
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _verbose_everywhere(action)


def main(argv=None) -> int:
    """Entry point of the ``tablegen`` command; returns the exit code (:data:`EXIT_BROKEN_PIPE`, quietly, when
    the reader of standard output went away: ``tablegen verify STORE | head``)."""
    try:
        return _main(argv)
    except BrokenPipeError:
        return _reader_gone()


def _main(argv) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(_command_word(argv)).parse_args(argv)
    args.argv = argv
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not args.verbose and args.command == "run":  # distributed logs every worker start and stop at INFO
        import dask

        dask.config.set({"logging.distributed": "warning"})  # read when distributed is imported
        logging.getLogger("distributed").setLevel(logging.WARNING)
    try:
        from tablegen.cli.images import check_output_files

        check_output_files(args)  # before any work: an output that cannot be written is refused first
        code = args.run(args)  # every command's parser sets run=<function(args) -> exit code>
        sys.stdout.flush()  # here, so that a reader gone early (| head) is met in main(), not at exit
        return code
    except TablegenInputError as error:
        print(f"tablegen: error: {_option_message(error, args)}", file=sys.stderr)
        return error.exit_code  # exit codes: tablegen.errors, README "Exit codes"


#: Exit status when the reader of standard output went away (``tablegen verify STORE | head``): 128 + SIGPIPE,
#: what a shell reports for a program that a closed pipe stopped.
EXIT_BROKEN_PIPE = 141


def _reader_gone() -> int:
    """Leave quietly when standard output's reader has closed the pipe: not an error of the command, so no
    traceback.  Python ignores SIGPIPE, so a write raises ``BrokenPipeError`` instead; standard output is
    pointed at the null device so that the flush at exit raises nothing more (as Python's documentation of
    the ``signal`` module advises)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file behind sys.stdout
        pass
    return EXIT_BROKEN_PIPE


def _option_message(error: TablegenInputError, args: argparse.Namespace) -> str:
    """The error as the command line says it: the arguments it names as options (``--method exact``), or as
    the command's ``option_names(args)`` default names them (a file given by position, by its path)."""
    option_names = getattr(args, "option_names", None)
    return error.option_message(option_names(args) if option_names is not None else None)
