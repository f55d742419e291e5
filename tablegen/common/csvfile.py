"""Small delimited files the command line and the comparisons read: the one reader of them.

:func:`read_csv` reads a table with a header (results tables, predictions files) with the csv module:
blank lines and lines starting with ``#`` are comments, the first remaining line is the header, and
every row must have as many fields as the header.  Files whose layout the caller works out itself
(a confusion matrix with or without labels, a curve of counts) are read with :func:`read_lines` and
split with :func:`split_fields` or :func:`split_tokens`.  Errors name the file and line.

:func:`read_csv_columns` reads a large table (a predictions file: a label and a million rows of scores) by
columns: its size is estimated from the file's size and first lines before it is read whole (the caller may
refuse it), and its numeric columns are parsed by numpy's reader in C (0.8 s CPU for 10^6 rows x 10 columns,
where the csv module and ``float`` per field took 12 s); a file numpy's reader does not take as it is (comments
between rows, a ragged row, an empty or damaged field) is read row by row, and its first bad row named.
"""

from __future__ import annotations

import csv
import io
import itertools
import os
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from tablegen.errors import TablegenInputError


def read_csv(path, what: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows (fields stripped) of the CSV file ``path``; ``what`` names it in errors.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    ...     _ = f.write("# a comment\\nlabel,m1\\n1,0.9\\n0,0.2\\n")
    >>> read_csv(f.name, "scores file")
    (['label', 'm1'], [['1', '0.9'], ['0', '0.2']])
    >>> os.remove(f.name)
    """
    lines = read_lines(path, f"{what} {path}")
    if not lines:
        raise TablegenInputError(f"{what} {path}: no header line and no rows")
    parsed = list(csv.reader(line for _, line in lines))
    header = [field.strip() for field in parsed[0]]
    if len(set(header)) != len(header):
        duplicated = sorted({h for h in header if header.count(h) > 1})
        raise TablegenInputError(f"{what} {path}: the header repeats the column name(s) {duplicated}")
    rows = []
    for (number, _), fields in zip(lines[1:], parsed[1:]):
        if len(fields) != len(header):
            raise TablegenInputError(f"{what} {path}, line {number}: {len(fields)} fields where the header has "
                                     f"{len(header)} (a ragged table)")
        rows.append([field.strip() for field in fields])
    if not rows:
        raise TablegenInputError(f"{what} {path}: a header but no rows")
    return header, rows


def parse_number(text: str, where: str) -> float:
    """``text`` as a float; an empty field or "NaN" is a missing value, named by ``where``."""
    try:
        value = float(text)
    except ValueError:
        raise TablegenInputError(f"{where}: {text!r} is not a number" if text else f"{where}: missing value")
    if value != value or value in (float("inf"), float("-inf")):
        raise TablegenInputError(f"{where}: missing or non-finite value {text!r}")
    return value


def read_lines(path, name: str, comments: bool = True) -> list[tuple[int, str]]:
    r"""(line number, line) of every line of the text file ``path`` that is not blank, nor a comment.

    Parameters
    ----------
    path : str or path-like
        The file (UTF-8; a byte-order mark is dropped).
    name : str
        How errors name the file (``"--scores-file s.csv"``).
    comments : bool, default True
        Whether lines starting with ``#`` are comments (skipped).

    Returns
    -------
    list of (int, str)
        The 1-based line number and the line as read (its line end kept).

    Raises
    ------
    TablegenInputError
        If the file cannot be read ("``name``: cannot read it (why)"), or is not text ("``name``: not a
        text CSV file": not UTF-8, or holding NUL bytes).

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("# counts\n\n1 2\n")
    >>> read_lines(f.name, "counts")
    [(3, '1 2\n')]
    >>> os.remove(f.name)
    """
    return _kept_lines(_read_text(path, name), comments)


def _kept_lines(text: str, comments: bool = True) -> list[tuple[int, str]]:
    """(line number, line) of the lines of ``text`` that are neither blank nor (with ``comments``) comments."""
    lines = enumerate(io.StringIO(text, newline=""), start=1)  # lines end as a file's do: \n, \r\n or \r
    return [(number, line) for number, line in lines
            if line.strip() and not (comments and line.lstrip().startswith("#"))]


def _read_bytes(path, name: str, size: int = -1) -> bytes:
    """The first ``size`` bytes of the file (all of it by default); errors name it as ``name``."""
    try:
        with open(os.fspath(path), "rb") as handle:
            return handle.read(size)
    except IsADirectoryError:
        raise TablegenInputError(f"{name}: is a directory, not a text CSV file") from None
    except OSError as error:
        raise TablegenInputError(f"{name}: cannot read it ({error.strerror or error})") from None


def _decoded(raw: bytes, name: str) -> str:
    """``raw`` as UTF-8 text (a byte-order mark dropped), refused if it is not text (not UTF-8, or NUL bytes)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise TablegenInputError(f"{name}: not a text CSV file (not UTF-8 text: byte {error.start} is "
                                 f"{error.object[error.start:error.start + 1]!r})") from None
    at = text.find("\x00")
    if at >= 0:  # NUL bytes are valid UTF-8 but never part of a text table
        line = len(io.StringIO(text[:at], newline="").readlines()) or 1
        line += text[:at].endswith(("\n", "\r"))
        raise TablegenInputError(f"{name}: not a text CSV file (line {line} holds a NUL byte)")
    return text


def _read_text(path, name: str) -> str:
    """The whole file as text (:func:`_decoded`)."""
    return _decoded(_read_bytes(path, name), name)


def split_fields(line: str) -> list[str]:
    r"""The fields of a delimited line, stripped: split at commas or semicolons where it has any, else at
    whitespace.  An empty field between two delimiters is kept (a missing value).

    Examples
    --------
    >>> split_fields("a, 1;2"), split_fields(" 1  2\t3 "), split_fields("1,,3")
    (['a', '1', '2'], ['1', '2', '3'], ['1', '', '3'])
    """
    if "," in line or ";" in line:
        return [field.strip() for field in line.replace(";", ",").split(",")]
    return line.split()


def split_tokens(line: str, separators: str = ",;") -> list[str]:
    """The non-empty pieces of ``line`` between whitespace and ``separators`` (runs of them count as one).

    Examples
    --------
    >>> split_tokens("0.9, 1"), split_tokens("1,,2 ;3"), split_tokens("1;2", separators=",")
    (['0.9', '1'], ['1', '2', '3'], ['1;2'])
    """
    for separator in separators:
        line = line.replace(separator, " ")
    return line.split()


class CsvSize(NamedTuple):
    """What a CSV file will take, estimated before it is read whole (:func:`read_csv_columns`)."""

    bytes: int  #: the file's size
    rows: int  #: the rows, estimated from the size and the first lines' mean length
    columns: int  #: the header's fields
    numbers: int  #: the columns read as numbers (the others are read as text)
    memory: float  #: bytes of memory reading it may take at its peak, an estimate on the high side


#: Bytes read first, for the header and the mean length of a row.
_HEAD_BYTES = 1 << 16


def read_csv_columns(path, what: str, numbers: Callable[[list[str]], list[str]],
                     before_reading: Callable[[CsvSize], None] | None = None,
                     hint: Callable[[str], str] = lambda name: "") -> tuple[list[str], dict[str, np.ndarray]]:
    r"""Header and columns of the CSV file ``path``: float arrays for the columns ``numbers(header)`` names,
    arrays of text (fields stripped) for the others.

    The layout is :func:`read_csv`'s (comments, blank lines, a header, every row as long).  Before the file is
    read whole, ``before_reading`` is given its :class:`CsvSize` (from the file's size and its first lines), to
    refuse a file over a memory budget.  A field of a numeric column that is not a finite number is refused,
    naming the file, its first bad row (1-based, counting data rows only), the column, and ``hint(column)``.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    ...     _ = f.write("label,m1\nyes,0.9\nno,0.2\n")
    >>> header, columns = read_csv_columns(f.name, "PREDS.csv", lambda header: ["m1"])
    >>> header, columns["label"].tolist(), columns["m1"].tolist()
    (['label', 'm1'], ['yes', 'no'], [0.9, 0.2])
    >>> os.remove(f.name)
    """
    name = f"{what} {path}"
    head = _head(path, name)
    header = _header(_kept_lines(head), name)
    numeric = numbers(header)
    if before_reading is not None:
        before_reading(_size(os.path.getsize(os.fspath(path)), head, header, numeric))
    try:
        columns = _columns_by_numpy(path, head, header, numeric)
    except ValueError:  # a file numpy's reader does not take as it is: row by row, naming the first bad row
        columns = _columns_by_rows(_read_text(path, name), header, numeric, name, hint)
    _check_finite(columns, numeric, path, name, hint)
    return header, columns


def read_head(path, what: str) -> tuple[list[str], list[list[str]]]:
    r"""Header and first rows (fields stripped) of the CSV file ``path``: the rows in its first complete lines
    (64 KiB, or more until they hold a row), never the whole file; for a caller that decides from a sample how to
    read it (:func:`read_csv_columns`).  A ragged row among them is left for the whole read to name.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    ...     _ = f.write("# a comment\nlabel,m1\ncat, dog\n")
    >>> read_head(f.name, "PREDS.csv")
    (['label', 'm1'], [['cat', 'dog']])
    >>> os.remove(f.name)
    """
    name = f"{what} {path}"
    lines = _kept_lines(_head(path, name))
    header = _header(lines, name)
    rows = csv.reader(line for _, line in lines[1:])
    return header, [[field.strip() for field in fields] for fields in rows if len(fields) == len(header)]


def _head(path, name: str) -> str:
    """The first complete lines of a file as text: at least the header and a row where the file has them (the
    first 64 KiB, or four times more until they hold both)."""
    size = _HEAD_BYTES
    while True:
        raw = _read_bytes(path, name, size)
        if len(raw) < size:  # the whole file
            return _decoded(raw, name)
        head = _decoded(raw[:max(raw.rfind(b"\n"), raw.rfind(b"\r")) + 1], name)  # complete lines only
        if len(_kept_lines(head)) >= 2:
            return head
        size *= 4


def _header(lines: list[tuple[int, str]], name: str) -> list[str]:
    """The fields of the first line kept, stripped, each name once."""
    if not lines:
        raise TablegenInputError(f"{name}: no header line and no rows")
    header = [field.strip() for field in next(csv.reader([lines[0][1]]))]
    if len(set(header)) != len(header):
        duplicated = sorted({h for h in header if header.count(h) > 1})
        raise TablegenInputError(f"{name}: the header repeats the column name(s) {duplicated}")
    return header


def _size(size: int, head: str, header: list[str], numeric: list[str]) -> CsvSize:
    """The rows from the size after the header and the mean length of the first rows; the memory, that of the
    row-by-row reader (numpy's takes less): the file as text and as lines, 64 bytes a line, a Python float and its
    place in a list (32 bytes) and the array returned (8) per number, a text object (about 64 bytes and 8 for its
    place) and its place in the array returned per text field."""
    lines = _kept_lines(head)[1:]
    mean = max(1.0, sum(len(line.encode()) for _, line in lines) / len(lines)) if lines else 1.0
    before = len(head[:_data_start(head)[0]].encode())  # comments and the header
    rows = max(len(lines), round((size - before) / mean))
    texts = len(header) - len(numeric)
    memory = 2.0 * size + rows * (64.0 + 40.0 * len(numeric) + 80.0 * texts)
    return CsvSize(size, rows, len(header), len(numeric), memory)


def _data_start(text: str) -> tuple[int, int]:
    """Where the rows begin: (the characters, the lines) up to the end of the header line."""
    at = 0
    for number, line in enumerate(io.StringIO(text, newline=""), start=1):
        at += len(line)
        if line.strip() and not line.lstrip().startswith("#"):
            return at, number
    return at, 0


#: Bytes read at a time when the rows are scanned for what numpy's reader would take otherwise than the csv module.
_SCAN_BYTES = 1 << 23


def _columns_by_numpy(path, head: str, header: list[str], numeric: list[str]) -> dict[str, np.ndarray]:
    """The columns by numpy's reader, from the file (never held whole as text); ValueError where the rows are not a
    plain table: comments or NUL bytes among them (found by a scan of the bytes), whitespace-only lines, a ragged
    row, a field numpy cannot parse, text that is not UTF-8, no rows."""
    if len(_kept_lines(head)) < 2:  # the head holds the whole file then (:func:`_head`): no rows
        raise ValueError("no rows")
    start, lines = _data_start(head)
    _scan(path, len(head[:start].encode("utf-8")))
    kinds = set(numeric)
    dtype = [(f"f{j}", "f8" if column in kinds else "O") for j, column in enumerate(header)]
    table = np.loadtxt(os.fspath(path), delimiter=",", quotechar='"', comments=None, dtype=dtype, skiprows=lines,
                       encoding="utf-8-sig", ndmin=1)
    columns = {}
    for j, column in enumerate(header):
        values = table[f"f{j}"]
        columns[column] = (np.ascontiguousarray(values) if column in kinds
                           else np.strings.strip(values.astype(str)))
    return columns


def _scan(path, offset: int) -> None:
    """ValueError if the file holds ``#`` (a comment, for :func:`read_csv`) or a NUL byte after ``offset`` bytes
    of its text (a byte-order mark not counted)."""
    with open(os.fspath(path), "rb") as handle:
        handle.seek(offset + 3 * (handle.read(3) == b"\xef\xbb\xbf"))
        while chunk := handle.read(_SCAN_BYTES):
            if b"#" in chunk or b"\x00" in chunk:
                raise ValueError("a comment or a NUL byte among the rows: read row by row")


def _columns_by_rows(text: str, header: list[str], numeric: list[str], name: str,
                     hint: Callable[[str], str]) -> dict[str, np.ndarray]:
    """The columns, row by row with the csv module: the first ragged row or bad number is named."""
    lines = _kept_lines(text)[1:]
    kinds = set(numeric)
    values: dict[str, list] = {column: [] for column in header}
    for row, (number, fields) in enumerate(zip((n for n, _ in lines), csv.reader(line for _, line in lines)), 1):
        if len(fields) != len(header):
            raise TablegenInputError(f"{name}, line {number}: {len(fields)} fields where the header has "
                                     f"{len(header)} (a ragged table)")
        for column, field in zip(header, fields):
            field = field.strip()
            if column in kinds:
                try:
                    field = parse_number(field, f"{name}, row {row}, column {column!r}")
                except TablegenInputError as error:
                    raise TablegenInputError(f"{error}{hint(column)}") from None
            values[column].append(field)
    if not lines:
        raise TablegenInputError(f"{name}: a header but no rows")
    return {column: np.array(values[column], dtype=float if column in kinds else str) for column in header}


def _check_finite(columns: dict[str, np.ndarray], numeric: list[str], path, name: str,
                  hint: Callable[[str], str]) -> None:
    """Refuse NaN or infinite values, naming the first bad row (the earliest of any column's) and its column."""
    first = None
    for column in numeric:
        bad = ~np.isfinite(columns[column])
        if bad.any():
            row = int(np.argmax(bad))
            if first is None or row < first[0]:
                first = (row, column)
    if first is None:
        return
    row, column = first
    raise TablegenInputError(f"{name}, row {row + 1}, column {column!r}: missing or non-finite value "
                             f"{_field(path, row, column)!r}{hint(column)}")


def _field(path, row: int, column: str) -> str:
    """The field of ``column`` in data row ``row`` (0-based; blank lines and comments not counted), stripped: the
    file read line by line up to that row, never whole (a NaN deep in a large file costs its lines, not the file)."""
    with open(os.fspath(path), encoding="utf-8-sig", newline="") as handle:
        kept = (line for line in handle if line.strip() and not line.lstrip().startswith("#"))
        header = [field.strip() for field in next(csv.reader([next(kept)]))]
        line = next(itertools.islice(kept, row, None))
    return next(csv.reader([line]))[header.index(column)].strip()
