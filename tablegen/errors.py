"""Every error tablegen raises on purpose, and the exit code the command line gives each.

The errors subclass :class:`TablegenInputError` (a :class:`ValueError`), so ``except
TablegenInputError`` catches anything tablegen refuses; ``exit_code`` tells usage errors from runtime
refusals:

====  ================================  ===========================================================
code  error                             meaning
====  ================================  ===========================================================
0     —                                 success (also a test that finds a score not significant)
1     any other exception               a bug: a traceback, please report it
2     :class:`TablegenInputError`       bad input: the message names the argument, option or field
      :class:`StoreError`               a store path that does not exist, is not a tablegen store,
                                        of another schema or config, or cannot be written
3     :class:`StoreIntegrityError`      a damaged store (``tablegen verify --integrity`` names it)
4     :class:`RunStoppedError`          a run that stopped unfinished (no worker, no scheduler,
                                        no space left); resumable; or an output file (``-o``)
                                        the disk had no room for (nothing written)
      :class:`StoreUnreachableError`    a store URL whose host did not answer (refused, reset,
                                        timed out, unknown host): the same command may work later
5     :class:`ResourceLimitError`       over the memory or time limit (estimate and way out given)
6     :class:`StoreLockedError`         the store is locked by another run: retry when it is done
====  ================================  ===========================================================

Examples
--------
>>> StoreLockedError("store 'a.zarr' is locked").exit_code
6
>>> exit_code(KeyError("x"))
1
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Argument:
    """An argument that an error message names, kept apart from the text around it.

    A Python caller reads it as Python (``method='exact'``), the command line as its option
    (``--method exact``); see :meth:`TablegenInputError.naming`.

    Parameters
    ----------
    name : str
        The parameter's name in the Python API (``method``, ``confusion_a``).
    value : str, optional
        The value the message speaks of (``'exact'``), if any.
    python, option : str, optional
        The whole phrase for each reader where the default spelling does not fit (an element of an
        array: ``observed[1] (k = 2)`` in Python, ``the count at k = 2`` on the command line).

    Examples
    --------
    >>> Argument("method", "exact").python_text(), Argument("method", "exact").option_text()
    ("method='exact'", '--method exact')
    >>> Argument("confusion_a").option_text({"confusion_a": "a.csv"})
    'a.csv'
    """

    name: str
    value: str | None = None
    python: str | None = None
    option: str | None = None

    def python_text(self) -> str:
        """How a Python caller names it: ``name`` or ``name='value'``."""
        if self.python is not None:
            return self.python
        return self.name if self.value is None else f"{self.name}={self.value!r}"

    def option_text(self, names: Mapping[str, str] | None = None) -> str:
        """How the command line names it: ``names[name]`` (a file given by position, say), else
        ``--name`` (underscores as dashes), followed by `` value`` if the message has one."""
        if self.option is not None:
            return self.option
        option = (names or {}).get(self.name, "--" + self.name.replace("_", "-"))
        return option if self.value is None else f"{option} {self.value}"


class TablegenInputError(ValueError):
    """A bad argument to a tablegen entry point; the message names the argument (exit code 2).

    ``str(error)`` names arguments as the Python API spells them.  An error made with
    :meth:`naming` also knows which parts of its message are arguments, so the command line can say
    its options instead (:meth:`option_message`).

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
    #: The message as text and :class:`Argument` pieces (empty: the message names no argument apart).
    parts: tuple = ()

    @classmethod
    def naming(cls, *parts: str | Argument) -> TablegenInputError:
        """The error whose message is ``parts`` joined, each :class:`Argument` spelled as Python.

        Examples
        --------
        >>> error = TablegenInputError.naming(Argument("rope"), " must be > 0, got -1.0")
        >>> str(error), error.option_message()
        ('rope must be > 0, got -1.0', '--rope must be > 0, got -1.0')
        """
        error = cls("".join(part if isinstance(part, str) else part.python_text() for part in parts))
        error.parts = parts
        return error

    def option_message(self, names: Mapping[str, str] | None = None) -> str:
        """The message as the command line says it: each :class:`Argument` as its option, or as
        ``names[argument name]`` where the command names it otherwise (a file given by position)."""
        if not self.parts:
            return str(self)
        return "".join(part if isinstance(part, str) else part.option_text(names) for part in self.parts)


class StoreError(TablegenInputError):
    """A store that is missing, unreadable, of another schema or written by another config (exit code 2)."""


class StoreIntegrityError(StoreError):
    """A store whose chunks, done flags or metadata are not what was written (exit code 3)."""

    exit_code = 3


class StoreLockedError(StoreError):
    """A store locked by another run (exit code 6): not a usage error — the same command works later."""

    exit_code = 6


class StoreUnreachableError(StoreError):
    """A store URL whose server could not be reached (connection refused, reset or timed out; unknown host).

    Nothing was read or written; the same command may work once the server answers.  Exit code 4, as a run
    that stopped for want of a scheduler: not a usage error, not damage.
    """

    exit_code = 4


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
