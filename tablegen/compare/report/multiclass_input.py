"""The K-class report's input (:func:`tablegen.evaluate` with more than two classes): labels and each model's
predictions, checked and coded once.

Each model's predictions are one of (every model alike):

- **predicted labels**: one class per item (any hashable values, as the labels).  A predicted class that no item
  has is allowed: it is a class with no items, never a hit (it counts against accuracy; balanced accuracy leaves it
  out, as scikit-learn does; macro-F1 counts it with F1 = 0 for the model that predicts it).
- **a probability matrix**: n x K floats, column k the probability of the k-th class of the labels in sorted order
  (first-seen order where the labels do not sort); each row non-negative, summing to 1 within 1e-6.  The model's
  predicted class is the row's largest probability (the first column of a tie).
- **a confusion matrix**: K x K integer counts, rows true classes, columns predicted, in the order of ``labels``,
  which then lists the K class names (or is None: classes 0..K-1).  Every model's rows must sum to the same class
  counts (one test set).  The report works on the item list the matrix implies; what needs each item's predictions
  across models (the max-T test, the paired tests) cannot be had from it and is refused with a note.

A 2-D array of integers is a confusion matrix, of floats a probability matrix.  Bad input raises
:class:`~tablegen.errors.TablegenInputError` naming the argument, before any work.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from tablegen.errors import Argument, TablegenInputError

#: How far a probability row's sum may be from 1.
ROW_SUM_TOLERANCE = 1e-6
#: Where the predictions came from.
SOURCES = ("labels", "probabilities", "confusion")


@dataclass(frozen=True)
class MulticlassData:
    """Labels and predictions as class codes.

    Attributes
    ----------
    classes : tuple
        Every class (of the labels, and any only predicted), sorted where the values sort, else as first seen;
        code k is ``classes[k]``.
    true_codes : ndarray
        int32, the true class code of each item.
    predicted : dict
        Model name -> int32 predicted class codes (for confusion matrices, of the implied items, which are not the
        same items across models).
    source : str
        ``"labels"``, ``"probabilities"`` or ``"confusion"``.

    Examples
    --------
    >>> data = multiclass_data(["b", "a", "c", "a"], {"m": ["b", "a", "a", "d"]})
    >>> data.classes, data.true_codes.tolist(), data.predicted["m"].tolist(), data.paired
    (('a', 'b', 'c', 'd'), [1, 0, 2, 0], [1, 0, 0, 3], True)
    """

    classes: tuple
    true_codes: np.ndarray
    predicted: dict
    source: str
    probabilities: dict = field(default_factory=dict)
    """Model name -> its n x K probability matrix (columns: the classes of the labels, sorted), for
    ``source == "probabilities"``."""

    @property
    def n(self) -> int:
        return int(self.true_codes.size)

    @property
    def K(self) -> int:
        return len(self.classes)

    @property
    def paired(self) -> bool:
        """Whether the models' predictions are of the same items (not so for confusion matrices)."""
        return self.source != "confusion"

    def true_counts(self) -> np.ndarray:
        return np.bincount(self.true_codes, minlength=self.K).astype(np.int64)

    def confusion(self, model: str) -> np.ndarray:
        """The K x K counts of ``model`` (rows true)."""
        cell = self.true_codes.astype(np.int64) * self.K + self.predicted[model]
        return np.bincount(cell, minlength=self.K * self.K).reshape(self.K, self.K)


def is_multiclass(labels, scores) -> bool:
    """Whether :func:`tablegen.evaluate` should answer with the K-class report: more than two distinct labels, or
    a mapping of models each given as a 2-D array (confusion or probability matrices; binary scores are vectors).

    Examples
    --------
    >>> is_multiclass([0, 1, 2, 1], {"m": [0, 1, 1, 1]}), is_multiclass([0, 1, 1, 0], {"m": [0.2, 0.9, 0.5, 0.1]})
    (True, False)
    >>> is_multiclass([0, 1, 1, 0], np.array([[0.1, 0.2], [0.9, 0.8], [0.6, 0.7], [0.3, 0.1]]))  # columns: models
    False
    """
    values = list(scores.values()) if isinstance(scores, Mapping) else [scores] if labels is None else []
    if values and all(isinstance(v, np.ndarray) and v.ndim == 2 for v in values):
        return True  # a matrix per model: confusion or probability matrices, never binary scores
    if labels is None:
        return False
    try:
        array = _labels_array(labels)
        if array.ndim != 1 or array.size == 0:
            return False
        if array.dtype.kind in "biuf":
            return np.unique(array[~np.isnan(array)] if array.dtype.kind == "f" else array).size > 2
        return len(set(array.tolist())) > 2
    except (TypeError, ValueError):
        return False


def multiclass_data(labels, scores) -> MulticlassData:
    """Check and code the labels and every model's predictions (see the module's description).

    Examples
    --------
    >>> data = multiclass_data(["x", "y", "z"], {"m": np.array([[2, 1, 0], [0, 3, 0], [1, 0, 1]])})
    >>> data.source, data.n, data.true_counts().tolist(), data.confusion("m").tolist()
    ('confusion', 8, [3, 3, 2], [[2, 1, 0], [0, 3, 0], [1, 0, 1]])
    """
    models = _models(scores)
    arrays = {name: _array(name, value) for name, value in models.items()}
    kinds = {name: _kind(name, array) for name, array in arrays.items()}
    if len(set(kinds.values())) > 1:
        raise TablegenInputError.naming(
            Argument("scores"), " must give every model's predictions alike (all predicted labels, all probability "
            f"matrices or all confusion matrices), got {', '.join(f'{m}: {k}' for m, k in kinds.items())}")
    source = next(iter(kinds.values()))
    if source == "confusion":
        return _from_confusion(labels, arrays)
    true_values = _items(Argument("labels"), labels)
    if source == "probabilities":
        classes = _ordered(dict.fromkeys(true_values))
        predicted_values = {name: _argmax(name, array, classes, len(true_values)) for name, array in arrays.items()}
    else:
        predicted_values = {name: _items(_model(name), array) for name, array in arrays.items()}
    label_set = set(true_values)
    for name, values in predicted_values.items():
        _not_scores(name, arrays[name], label_set)
        if len(values) != len(true_values):
            raise TablegenInputError.naming(
                Argument("labels"), " and ", _model(name), f" must have the same length (one entry per item), got "
                f"{len(true_values):,} and {len(values):,}")
    seen = dict.fromkeys(true_values)
    for values in predicted_values.values():
        seen.update(dict.fromkeys(values))
    classes = _ordered(seen)
    code = {value: k for k, value in enumerate(classes)}
    true_codes = np.fromiter((code[v] for v in true_values), np.int32, len(true_values))
    predicted = {name: np.fromiter((code[v] for v in values), np.int32, len(values))
                 for name, values in predicted_values.items()}
    probabilities = ({name: np.asarray(array, dtype=np.float64) for name, array in arrays.items()}
                     if source == "probabilities" else {})
    data = MulticlassData(classes, true_codes, predicted, source, probabilities)
    _check_classes(data)
    return data


def _check_classes(data: MulticlassData) -> None:
    with_items = int(np.count_nonzero(data.true_counts()))
    if with_items < 2:
        raise TablegenInputError.naming(
            Argument("labels"), f" has one class only ({data.classes[int(data.true_codes[0])]!r}): a random "
            "classifier then scores 100% accuracy; at least two true classes are needed")
    if data.K > data.n:
        raise TablegenInputError.naming(
            Argument("scores"), f" name {data.K} classes with the labels for {data.n} items: more classes than "
            "items (K > n) leaves classes without items or predictions; pass the items of a test set with fewer "
            "classes")


def _models(scores) -> dict:
    """Model name -> predictions: a mapping, a pandas DataFrame (a column per model), or one model's array."""
    if scores is None or isinstance(scores, (str, bytes)):
        raise TablegenInputError.naming(Argument("scores"), f" must map model names to predictions, got {scores!r}")
    if hasattr(scores, "columns") and hasattr(scores, "items") and not isinstance(scores, Mapping):
        scores = {str(name): column.to_numpy() for name, column in scores.items()}
    if not isinstance(scores, Mapping):
        scores = {"model": scores}
    if not scores:
        raise TablegenInputError.naming(Argument("scores"), " is empty: give at least one model's predictions")
    return {str(name): value for name, value in scores.items()}


def _model(name: str) -> Argument:
    return Argument("scores", python=f"scores[{name!r}]", option=f"the predictions of model {name!r}")


def _array(name: str, value) -> np.ndarray:
    if value is None or isinstance(value, (str, bytes)):
        raise TablegenInputError.naming(_model(name), f" must be predicted labels or a matrix, got {value!r}")
    try:
        array = _labels_array(value)
    except (TypeError, ValueError) as error:
        raise TablegenInputError.naming(_model(name), f" is not an array of predictions ({error})") from None
    if array.ndim not in (1, 2) or array.size == 0:
        raise TablegenInputError.naming(_model(name), f" must be one- or two-dimensional and not empty, got shape "
                                        f"{array.shape}")
    return array


def _kind(name: str, array: np.ndarray) -> str:
    if array.ndim == 1:
        return "labels"
    if array.dtype.kind in "iu":
        return "confusion"
    if array.dtype.kind == "f":
        return "probabilities"
    raise TablegenInputError.naming(_model(name), f" is a 2-D array of {array.dtype}: a confusion matrix holds "
                                    "integers, a probability matrix floats")


def _items(argument: Argument, values) -> list:
    """``values`` as a list of hashable, non-missing Python values."""
    if values is None or isinstance(values, (str, bytes)):
        raise TablegenInputError.naming(argument, f" must be a sequence of class labels, got {values!r}")
    try:
        array = _labels_array(values)
    except TypeError:
        raise TablegenInputError.naming(argument, " must be a sequence of class labels, got "
                                        f"{type(values).__name__}") from None
    if array.ndim != 1:
        raise TablegenInputError.naming(argument, f" must be one-dimensional, got shape {array.shape}")
    if array.size == 0:
        raise TablegenInputError.naming(argument, " is empty: there are no items to test")
    if array.dtype.kind == "f" and np.isnan(array).any():
        position = int(np.flatnonzero(np.isnan(array))[0])
        raise TablegenInputError.naming(argument, f" has a missing value (NaN) at item {position}: every item "
                                        "needs a class")
    items = array.tolist()
    if array.dtype.kind == "O":
        for position, value in enumerate(items):
            try:
                hash(value)
            except TypeError:
                raise TablegenInputError.naming(argument, f" has an unhashable value at item {position} "
                                                f"({type(value).__name__}): not a class label") from None
            if _missing(value):
                raise TablegenInputError.naming(argument, f" has a missing value ({value!r}) at item {position}: "
                                                "every item needs a class")
    return items


def _labels_array(values) -> np.ndarray:
    """``values`` as an array that keeps each value's type: numbers stay numbers, a list mixing numbers and
    strings (or holding tuples) becomes an object array (numpy alone would turn 1 and "a" into strings).

    Examples
    --------
    >>> _labels_array([1, "a"]).tolist(), _labels_array([1, 2]).dtype.kind, _labels_array([(1, 2), (3, 4)]).shape
    ([1, 'a'], 'i', (2,))
    """
    if isinstance(values, np.ndarray):
        return values
    if hasattr(values, "to_numpy"):  # pandas: its values as they are
        return values.to_numpy()
    values = list(values)
    kinds = {type(v) for v in values}
    if kinds <= {int, float, bool, np.int64, np.float64, np.int32, np.bool_} or any(
            isinstance(v, (list, np.ndarray)) for v in values):
        return np.asarray(values)  # numbers, or rows of a matrix
    array = np.empty(len(values), dtype=object)
    for position, value in enumerate(values):
        array[position] = value
    return array


def _not_scores(name: str, array: np.ndarray, label_set: set) -> None:
    """Refuse a float vector of predictions holding fractions that are not labels: scores, not predicted classes."""
    if array.ndim != 1 or array.dtype.kind != "f":
        return
    fractional = array[(array != np.round(array))]
    strange = [v for v in fractional.tolist() if v not in label_set]
    if strange:
        raise TablegenInputError.naming(
            _model(name), f" holds values that are neither classes of the labels nor whole numbers ({strange[0]!r}"
            "...): with more than two classes each model gives predicted labels, an n x K probability matrix or a "
            "K x K confusion matrix, not one score per item")


def _missing(value) -> bool:
    if value is None:
        return True
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return value != value
    try:
        return bool(value != value)
    except (TypeError, ValueError):
        return True


def _ordered(seen: dict) -> tuple:
    try:
        return tuple(sorted(seen))
    except TypeError:  # values that do not compare: first seen
        return tuple(seen)


def _argmax(name: str, array: np.ndarray, classes: tuple, n: int) -> list:
    """The predicted class of each row of a probability matrix (checked)."""
    if array.shape != (n, len(classes)):
        raise TablegenInputError.naming(
            _model(name), f" must be an n x K probability matrix, n = {n:,} items by K = {len(classes)} classes "
            f"(columns in the order {list(classes)!r}), got shape {array.shape}")
    if not np.isfinite(array).all():
        row = int(np.flatnonzero(~np.isfinite(array).all(axis=1))[0])
        raise TablegenInputError.naming(_model(name), f" has a missing or infinite probability in row {row}")
    if (array < 0).any():
        row = int(np.flatnonzero((array < 0).any(axis=1))[0])
        raise TablegenInputError.naming(_model(name), f" has a negative probability in row {row}")
    error = np.abs(array.sum(axis=1) - 1.0)
    if (error > ROW_SUM_TOLERANCE).any():
        row = int(np.argmax(error > ROW_SUM_TOLERANCE))
        raise TablegenInputError.naming(
            _model(name), f" row {row} sums to {array[row].sum():.9g}, not 1 (within {ROW_SUM_TOLERANCE:g}): each "
            "row must be one item's probabilities over the classes")
    picks = np.argmax(array, axis=1)
    return [classes[k] for k in picks.tolist()]


def _from_confusion(labels, arrays: dict) -> MulticlassData:
    """The implied items of each model's confusion matrix: cm[k, j] items of true class k predicted j."""
    first = next(iter(arrays.values()))
    K = first.shape[0]
    for name, matrix in arrays.items():
        if matrix.shape != (K, K):
            raise TablegenInputError.naming(_model(name), f" must be a K x K confusion matrix like the first model's "
                                            f"({K} x {K}), got shape {matrix.shape}")
        if (matrix < 0).any():
            k, j = (int(v) for v in np.argwhere(matrix < 0)[0])
            raise TablegenInputError.naming(_model(name), f" has a negative count ({int(matrix[k, j])}) at row {k}, "
                                            f"column {j}: counts are >= 0")
    classes = tuple(range(K)) if labels is None else tuple(_items(Argument("labels"), labels))
    if len(classes) != K or len(set(classes)) != K:
        raise TablegenInputError.naming(
            Argument("labels"), f" must list the {K} distinct class names of the confusion matrices' rows (or be "
            f"None), got {list(classes)!r}")
    rows = first.sum(axis=1)
    for name, matrix in arrays.items():
        if not np.array_equal(matrix.sum(axis=1), rows):
            raise TablegenInputError.naming(
                _model(name), f"'s rows sum to the class counts {matrix.sum(axis=1).tolist()}, the first model's to "
                f"{rows.tolist()}: the matrices must count one test set (rows: true classes)")
    true_codes = np.repeat(np.arange(K, dtype=np.int32), rows)
    predicted = {name: np.concatenate([np.repeat(np.arange(K, dtype=np.int32), matrix[k]) for k in range(K)])
                 for name, matrix in arrays.items()}
    data = MulticlassData(classes, true_codes, predicted, "confusion")
    _check_classes(data)
    return data
