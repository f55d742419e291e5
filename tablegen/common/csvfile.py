"""Small delimited files the command line and the comparisons read: the one reader of them.

:func:`read_csv` reads a table with a header (results tables, predictions files) with the csv module:
blank lines and lines starting with ``#`` are comments, the first remaining line is the header, and
every row must have as many fields as the header.  Files whose layout the caller works out itself
(a confusion matrix with or without labels, a curve of counts) are read with :func:`read_lines` and
split with :func:`split_fields` or :func:`split_tokens`.  Errors name the file and line.
"""

from __future__ import annotations

import csv
import os

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
    try:
        with open(os.fspath(path), newline="", encoding="utf-8-sig") as handle:
            lines = list(enumerate(handle, start=1))
    except IsADirectoryError:
        raise TablegenInputError(f"{name}: is a directory, not a text CSV file") from None
    except UnicodeDecodeError as error:
        raise TablegenInputError(f"{name}: not a text CSV file (not UTF-8 text: byte {error.start} is "
                                 f"{error.object[error.start:error.start + 1]!r})") from None
    except OSError as error:
        raise TablegenInputError(f"{name}: cannot read it ({error.strerror or error})") from None
    for number, line in lines:
        if "\x00" in line:  # NUL bytes are valid UTF-8 but never part of a text table
            raise TablegenInputError(f"{name}: not a text CSV file (line {number} holds a NUL byte)")
    return [(number, line) for number, line in lines
            if line.strip() and not (comments and line.lstrip().startswith("#"))]


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
