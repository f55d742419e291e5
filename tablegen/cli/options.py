"""Options shared by several commands: ``--storage-options`` of a store, metric names, and the check of
``--R`` and ``--seed`` against ``--method``.

``--storage-options '{"anon": true}'`` is a JSON object handed to fsspec (through
:func:`tablegen.lookup.table.open_table`, :func:`tablegen.store.open_store` or :func:`tablegen.batch.job.run`)
when the store is opened: credentials, anonymous access, endpoints of an object store.
"""

from __future__ import annotations

import argparse
import json

from tablegen.errors import TablegenInputError


def metric_name(text: str) -> str:
    """A metric named on the command line (argparse ``type``), in any case: its canonical (lower-case) name
    when it names one, so that what is printed names it so; otherwise the text as given, for the command's
    check to refuse with a suggestion.

    Examples
    --------
    >>> metric_name("Best_F1"), metric_name("best_f")
    ('best_f1', 'best_f')
    """
    from tablegen.compute.metrics import get_metric

    try:
        return get_metric(text).name
    except KeyError:
        return text


def storage_options_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--storage-options JSON`` to ``parser`` (parsed by :func:`storage_options_from`)."""
    parser.add_argument("--storage-options", default=None, metavar="JSON",
                        help="fsspec options of the store as a JSON object, e.g. '{\"anon\": true}' "
                             "(default: none)")


def parse_storage_options(text: str | None) -> dict | None:
    """The ``--storage-options`` text as a dict (None if not given).

    Raises
    ------
    TablegenInputError
        If the text is not JSON, or not a JSON object; the message names ``--storage-options``.

    Examples
    --------
    >>> parse_storage_options('{"anon": true}')
    {'anon': True}
    >>> parse_storage_options("[1]")
    Traceback (most recent call last):
    ...
    tablegen.errors.TablegenInputError: --storage-options must be a JSON object such as '{"anon": true}', got a list
    """
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise TablegenInputError(f"--storage-options is not valid JSON ({error}): {text!r}") from None
    if not isinstance(value, dict):
        raise TablegenInputError("--storage-options must be a JSON object such as '{\"anon\": true}', "
                                 f"got a {type(value).__name__}")
    return value


def storage_options_from(args: argparse.Namespace) -> dict | None:
    """The parsed ``--storage-options`` of ``args`` (None if the command has no such option or it is not given)."""
    return parse_storage_options(getattr(args, "storage_options", None))


def check_simulation_options(args: argparse.Namespace) -> None:
    """Refuse ``--R`` or ``--seed`` with a ``--method`` that never simulates (exact, table).

    The library refuses these too, naming its Python arguments (``method='exact'``); the command line
    checks first and names its options.

    Examples
    --------
    >>> try:
    ...     check_simulation_options(argparse.Namespace(method="table", R=None, seed=3))
    ... except TablegenInputError as error:
    ...     print(error)
    --seed applies only to simulated answers (--method simulate or auto), not to --method table
    """
    if args.method in ("exact", "table") and (args.R is not None or args.seed is not None):
        raise TablegenInputError(f"{'--R' if args.R is not None else '--seed'} applies only to simulated answers "
                                 f"(--method simulate or auto), not to --method {args.method}")


def table_for(args: argparse.Namespace):
    """The ``--table`` store of a lookup command, opened with its ``--storage-options`` (None: the bundled
    table).  Unfinished stores open too: a lookup in an unfinished cell names the cell."""
    if args.table is None:
        if getattr(args, "storage_options", None) is not None:
            raise TablegenInputError("--storage-options applies to a --table store; give --table too")
        return None
    from tablegen.lookup.table import open_table

    return open_table(args.table, storage_options=storage_options_from(args), allow_incomplete=True)
