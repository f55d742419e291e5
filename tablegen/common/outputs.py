"""Output files written whole or not at all: a temporary file beside the target, renamed over it on success.

A command's ``-o FILE`` (a table, a picture) is written to ``.FILE.<random>.partial`` in the same folder, flushed
to disk, then renamed onto ``FILE`` (a rename within one folder replaces the target at once).  Any failure, a full
disk included, removes the temporary file and leaves an existing ``FILE`` as it was.  :func:`output_error` says a
failure in the command line's terms: a full disk (or spent quota) as a stop the same command can finish once
there is room (exit code 4, as a run that runs out of space), anything else as a file that cannot be written
(exit code 2).
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from collections.abc import Iterator

from tablegen.errors import RunStoppedError, TablegenInputError

#: errno values of a disk with no room left: the device is full, or the user's quota is spent.
OUT_OF_SPACE = (errno.ENOSPC, errno.EDQUOT)


@contextlib.contextmanager
def replaced_on_success(path: str | os.PathLike[str]) -> Iterator[str]:
    """A new temporary file beside ``path`` to write, renamed onto ``path`` when the block ends without an error
    and removed when it raises (``path`` is then left as it was, or absent).

    The temporary file is created new (never through a link), with the permissions any new file gets (0666 less
    the umask); what was written is flushed to disk before the rename.

    Examples
    --------
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> target = os.path.join(folder, "table.md")
    >>> with replaced_on_success(target) as temporary:
    ...     with open(temporary, "w") as handle:
    ...         _ = handle.write("| P |")
    >>> open(target).read(), os.listdir(folder)
    ('| P |', ['table.md'])
    >>> try:
    ...     with replaced_on_success(target) as temporary:
    ...         raise OSError(errno.ENOSPC, "No space left on device")
    ... except OSError:
    ...     pass
    >>> open(target).read(), os.listdir(folder)  # untouched, nothing left beside it
    ('| P |', ['table.md'])
    """
    target = os.fspath(path)
    folder, name = os.path.split(os.path.abspath(target))
    temporary = os.path.join(folder, f".{name}.{uuid.uuid4().hex}.partial")
    os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))  # a new file: never through a link
    try:
        yield temporary
        descriptor = os.open(temporary, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def output_error(option: str, path, error: OSError, what: str) -> TablegenInputError:
    """The error a command gives when writing ``what`` to ``path`` (named by ``option``) failed with ``error``.

    Examples
    --------
    >>> full = output_error("-o", "t.md", OSError(errno.ENOSPC, "No space left on device"), "the table")
    >>> type(full).__name__, full.exit_code
    ('RunStoppedError', 4)
    >>> print(str(full)[:61])
    -o t.md: no space left on the disk (No space left on device);
    >>> print(output_error("-o", "t.md", PermissionError(errno.EACCES, "Permission denied"), "the table"))
    -o t.md: cannot write the table (Permission denied)
    """
    reason = getattr(error, "strerror", None) or error
    if getattr(error, "errno", None) in OUT_OF_SPACE:
        return RunStoppedError(f"{option} {path}: no space left on the disk ({reason}); nothing was written and "
                               f"{path} is as it was: free space, then run the same command again")
    return TablegenInputError(f"{option} {path}: cannot write {what} ({reason})")


def write_text(path, text: str, option: str, what: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all; a failure is :func:`output_error`'s error.

    Examples
    --------
    >>> import tempfile
    >>> target = os.path.join(tempfile.mkdtemp(), "t.md")
    >>> write_text(target, "| P |\\n", "-o", "the table"); open(target).read()
    '| P |\\n'
    """
    try:
        with replaced_on_success(path) as temporary, open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise output_error(option, path, error, what) from None


def json_ready(value):
    """``value`` with every float that JSON cannot hold (NaN, ±inf) as None, numpy scalars and arrays as Python
    numbers and lists, tuples as lists, mapping keys as strings: what a strict JSON parser reads back.

    A number that does not exist (DeLong's Monte Carlo interval, a degenerate bootstrap's ends) is ``null``,
    never ``NaN``, which is not JSON.

    Examples
    --------
    >>> import numpy as np
    >>> json_ready({"p_interval": (float("nan"), float("nan")), "n": np.int64(3), "x": [np.float64(0.5), np.inf]})
    {'p_interval': [None, None], 'n': 3, 'x': [0.5, None]}
    """
    import math

    import numpy as np

    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_ready(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def json_text(value, indent: int | None = 2) -> str:
    """``value`` as strict JSON text (:func:`json_ready`, then ``json.dumps(..., allow_nan=False)``): what every
    ``--json`` prints.

    Examples
    --------
    >>> print(json_text({"p": float("nan"), "ok": True}, indent=None))
    {"p": null, "ok": true}
    """
    import json

    return json.dumps(json_ready(value), indent=indent, allow_nan=False)
