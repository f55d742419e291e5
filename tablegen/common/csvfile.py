"""Small CSV files the comparisons read (results tables, predictions files), with the csv module.

Blank lines and lines starting with ``#`` are comments.  The first remaining line is the header.
Every row must have as many fields as the header; the error names the file and line.
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
    try:
        with open(os.fspath(path), newline="", encoding="utf-8-sig") as handle:
            lines = [(number, line) for number, line in enumerate(handle, start=1)
                     if line.strip() and not line.lstrip().startswith("#")]
    except (OSError, UnicodeDecodeError) as error:
        raise TablegenInputError(f"{what} {path}: cannot read it ({error})") from None
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
