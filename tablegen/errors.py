"""Every error tablegen raises on purpose, and the exit code the command line gives each.

The errors subclass :class:`TablegenInputError` (a :class:`ValueError`), so ``except
TablegenInputError`` catches anything tablegen refuses; ``exit_code`` tells usage errors from runtime
refusals:

====  ==========================  ===========================================================
code  error                       meaning
====  ==========================  ===========================================================
0     —                           success (also a test that finds a score not significant)
1     any other exception         a bug: a traceback, please report it
2     :class:`TablegenInputError` bad input: the message names the argument, option or field
      :class:`StoreError`         a store path that does not exist, is not a tablegen store,
                                  of another schema or config, or cannot be written
3     :class:`StoreIntegrityError` a damaged store (``tablegen verify --integrity`` names it)
4     :class:`RunStoppedError`    a run that stopped unfinished (no worker, no scheduler);
                                  resumable
5     :class:`ResourceLimitError` over the memory or time limit (estimate and way out given)
6     :class:`StoreLockedError`   the store is locked by another run: retry when it is done
====  ==========================  ===========================================================

Examples
--------
>>> StoreLockedError("store 'a.zarr' is locked").exit_code
6
>>> exit_code(KeyError("x"))
1
"""

from __future__ import annotations


class TablegenInputError(ValueError):
    """A bad argument to a tablegen entry point; the message names the argument (exit code 2).

    Examples
    --------
    >>> from tablegen import critical_value
    >>> try:
    ...     critical_value("auc", 100, 300, C=0)
    ... except TablegenInputError as error:
    ...     print(error, error.exit_code)
    C must be an integer >= 1, got 0 2
    """

    exit_code = 2


class StoreError(TablegenInputError):
    """A store that is missing, unreadable, of another schema or written by another config (exit code 2)."""


class StoreIntegrityError(StoreError):
    """A store whose chunks, done flags or metadata are not what was written (exit code 3)."""

    exit_code = 3


class StoreLockedError(StoreError):
    """A store locked by another run (exit code 6): not a usage error — the same command works later."""

    exit_code = 6


class RunStoppedError(TablegenInputError):
    """A run that stopped without finishing: no workers for too long, or a scheduler out of reach.

    The lock is released and every finished chunk kept; the same command resumes.  Exit code 4.
    """

    exit_code = 4


class ResourceLimitError(TablegenInputError):
    """A request whose estimated memory or time is beyond the limit (exit code 5)."""

    exit_code = 5


def exit_code(error: BaseException) -> int:
    """The command line's exit code for ``error``: its ``exit_code``, or 1 for anything unexpected."""
    return getattr(error, "exit_code", 1) if isinstance(error, TablegenInputError) else 1
