"""Validation of an (n data sets × m algorithms) results table: array, DataFrame or CSV file (STYLE 7)."""

from __future__ import annotations

import os

import numpy as np

from tablegen.common.csvfile import parse_number, read_csv
from tablegen.errors import TablegenInputError

_NAME_HEADERS = {"dataset", "data set", "data_set", "datasets", "name"}


def results_table(scores) -> tuple[np.ndarray, list[str], list[str]]:
    """``scores`` as a float (n, m) array with algorithm and data-set names, checked.

    Examples
    --------
    >>> X, algorithms, datasets = results_table([[0.9, 0.8], [0.7, 0.75]])
    >>> X.shape, algorithms, datasets
    ((2, 2), ['1', '2'], ['1', '2'])
    """
    if isinstance(scores, (str, os.PathLike)):
        X, algorithms, datasets = _from_csv(scores)
    elif hasattr(scores, "columns") and hasattr(scores, "to_numpy"):
        X, algorithms, datasets = _from_frame(scores)
    else:
        X, algorithms, datasets = _from_array(scores)
    _check_shape(X, algorithms, datasets)
    return X, algorithms, datasets


def _from_array(scores):
    try:
        X = np.asarray(scores, dtype=float)
    except (TypeError, ValueError, OverflowError):  # ragged nested lists, text, or not numbers at all
        rows = scores if isinstance(scores, (list, tuple)) else []
        lengths = sorted({len(row) for row in rows}) if all(hasattr(r, "__len__") for r in rows) else []
        if len(lengths) > 1:
            raise TablegenInputError(f"scores is a ragged table: its rows have {lengths} values; every data set "
                                     "needs one score per algorithm") from None
        raise TablegenInputError("scores must be a 2-D table of numbers (data sets x algorithms)") from None
    if X.ndim != 2:
        raise TablegenInputError(f"scores must be a 2-D table (data sets x algorithms), got {X.ndim} dimension(s)")
    return X, [str(j + 1) for j in range(X.shape[1])], [str(i + 1) for i in range(X.shape[0])]


def _from_frame(frame):
    columns = [str(c) for c in frame.columns]
    numeric = [frame[c].dtype.kind in "iuf" for c in frame.columns]
    datasets = [str(i) for i in frame.index] if not _is_range_index(frame.index) else None
    if numeric and not numeric[0] and all(numeric[1:]):
        datasets, frame, columns = [str(v) for v in frame.iloc[:, 0]], frame.iloc[:, 1:], columns[1:]
    elif not all(numeric):
        bad = columns[numeric.index(False)]
        raise TablegenInputError(f"scores: column {bad!r} is not numeric (only a first column may name the data sets)")
    X = frame.to_numpy(dtype=float)
    return X, columns, datasets or [str(i + 1) for i in range(X.shape[0])]


def _is_range_index(index) -> bool:
    return type(index).__name__ == "RangeIndex"


def _from_csv(path):
    header, rows = read_csv(path, "results table")
    first = [row[0] for row in rows]
    named = header[0].strip().lower() in _NAME_HEADERS or not all(_is_number(v) for v in first)
    start = 1 if named else 0
    algorithms = header[start:]
    X = np.array([[parse_number(row[j], f"results table {path}, data set {row[0] if named else i + 1}, column "
                                        f"{header[j]!r}") for j in range(start, len(header))]
                  for i, row in enumerate(rows)]).reshape(len(rows), len(algorithms))
    datasets = first if named else [str(i + 1) for i in range(len(rows))]
    return X, algorithms, datasets


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_shape(X, algorithms, datasets) -> None:
    n, m = X.shape
    if m < 2:
        raise TablegenInputError(f"scores has {m} algorithm(s): comparing needs at least 2 (one column per algorithm)")
    if n < 2:
        raise TablegenInputError(f"scores has {n} data set(s): comparing across data sets needs at least 2 rows "
                                 "(one per data set); for one test set see significance_test_from_scores")
    if len(set(algorithms)) != m:
        repeated = sorted({a for a in algorithms if algorithms.count(a) > 1})
        raise TablegenInputError(f"scores: algorithm names repeat: {repeated}")
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise TablegenInputError(f"scores has a missing or non-finite value (NaN/inf) at data set {datasets[i]!r}, "
                                 f"algorithm {algorithms[j]!r}; drop that data set or fill it in")
