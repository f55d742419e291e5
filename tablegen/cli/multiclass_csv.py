"""K-class predictions files (``tablegen evaluate PREDS.csv`` with more than two classes): the layout and its reader.

The file has a label column (``--label-column``, default ``label``: any values, read as text) and, per model,
either

* **labels**: one column holding the model's predicted class of each item (``MODEL``), or
* **probabilities**: one column per class holding the model's probability of that class (``MODEL:CLASS``,
  split at the last colon; every model has a column for every class of the label column, and each row of a
  model's columns sums to 1 within :data:`ROW_SUM_TOLERANCE`).

Which columns are models is :func:`tablegen.cli.scores.model_columns`'s choice (``--models``, ``--ignore``, row
identifiers left out), as for two classes.  Which layout (:func:`choose_layout`): ``--layout`` where given; else a
file is multi-class where its label column has more than two classes (:func:`looks_multiclass` decides from the
file's first lines; a file whose first lines show two classes is read as the two-class report's, and re-read here
if its labels have more), or a model column holds text, not numbers, that names classes of the label column
(predicted labels); its model columns
are then probabilities if every one is named ``MODEL:CLASS``, predicted labels if none has a colon, and the file
is refused as ambiguous if some have, naming ``--layout``.

Classes are text: a field is stripped, and ``1``, ``1.0`` and ``"1"`` (quoted) are one class, as in Python
(texts that read as the same finite number are one class, named by the label column's shortest text).  An empty
field or NaN, a model without a column for some class, a probability outside [0, 1] or a row not summing to 1,
one class only, more classes than items: refused, naming the row (counting data rows from 1) and the column.

The columns are read by :func:`tablegen.common.csvfile.read_csv_columns` (numpy's reader in C, the memory
check before the whole file is read); classes are matched through ``numpy.unique`` (one Python step per
distinct value, never per row).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tablegen.errors import TablegenInputError

#: How far a row of one model's probabilities may sum from 1 (and a probability stray below 0 or above 1).
ROW_SUM_TOLERANCE = 1e-6
#: ``--layout`` values: ``auto`` (:func:`choose_layout`), ``scores`` (two classes, one score column per model),
#: ``labels`` and ``probabilities`` (the K-class layouts).
LAYOUTS = ("auto", "scores", "labels", "probabilities")


@dataclass(frozen=True)
class MulticlassPredictions:
    """A K-class predictions file, read and checked.

    Attributes
    ----------
    labels : numpy.ndarray
        Each item's true class (text: the class's name in :attr:`classes`).
    classes : tuple of str
        Every class, sorted by name as Python sorts text (the order :func:`tablegen.evaluate` gives a probability
        matrix's columns): those of the label column and any that only a model predicts or only probability
        columns name.
    predictions : dict
        Model name -> its predicted class of each item (text array, the classes' names) in the labels layout; an
        (items, K) float array of probabilities (columns in the order of :attr:`classes`) in the probabilities
        layout.
    layout : str
        ``"labels"`` or ``"probabilities"``.
    line : str
        Which columns were read as which models, and why; which were left out.
    """

    labels: np.ndarray
    classes: tuple[str, ...]
    predictions: dict[str, np.ndarray]
    layout: str
    line: str

    @property
    def true_classes(self) -> int:
        """The number of classes some item has."""
        return int(np.unique(self.labels).size)

    def predicted_labels(self) -> dict[str, np.ndarray]:
        """Each model's predicted classes: as given, or each row's most probable class (the first in the order of
        :attr:`classes` where several tie)."""
        names = np.asarray(self.classes)
        return {model: values if values.ndim == 1 else names[np.argmax(values, axis=1)]
                for model, values in self.predictions.items()}


def _missing_text(text: str) -> bool:
    """An empty field, or one that reads as NaN."""
    if not text:
        return True
    try:
        return math.isnan(float(text))
    except ValueError:
        return False


def _class_key(text: str) -> tuple:
    """What identifies a class: its value where the text reads as a finite number (``1`` = ``1.0``), else the text."""
    try:
        value = float(text)
    except ValueError:
        return (1, text)
    return (0, value) if math.isfinite(value) else (1, text)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def looks_multiclass(header: list[str], rows: list[list[str]], label_column: str, models: list[str]) -> bool:
    """Whether a file's first rows show a K-class file: more than two classes in the label column, or a model
    column holding text that is not a number and is a class of the label column (predicted labels; other text,
    a name column say, is left for the two-class reader to refuse, naming it).

    Examples
    --------
    >>> looks_multiclass(["y", "m"], [["a", "0.3"], ["b", "0.9"]], "y", ["m"])
    False
    >>> looks_multiclass(["y", "m"], [["a", "b"], ["b", "b"]], "y", ["m"])
    True
    >>> looks_multiclass(["y", "m"], [["a", "s0"], ["b", "s1"]], "y", ["m"])
    False
    >>> looks_multiclass(["y", "m"], [["0", "2"], ["1", "0"], ["2", "1"]], "y", ["m"])
    True
    """
    at = header.index(label_column)
    seen = {_class_key(row[at]) for row in rows if not _missing_text(row[at])}
    if len(seen) > 2:
        return True
    where = [header.index(name) for name in models]
    return any(not _is_number(row[j]) and _class_key(row[j]) in seen for row in rows for j in where)


def count_classes(values: np.ndarray) -> int:
    """The classes of a column of text: distinct values, those that read as the same number counted once, empty
    fields and NaN not counted.

    Examples
    --------
    >>> count_classes(np.array(["1", "1.0", "0", "", "2"]))
    3
    """
    return len({_class_key(text) for text in np.unique(values).tolist() if not _missing_text(text)})


def probability_column(name: str) -> tuple[str, str] | None:
    """(model, class) of a column named ``MODEL:CLASS`` (split at the last colon, both parts non-empty), else None.

    Examples
    --------
    >>> probability_column("forest:cat"), probability_column("bert:base:2"), probability_column("forest")
    (('forest', 'cat'), ('bert:base', '2'), None)
    """
    model, colon, klass = name.rpartition(":")
    model, klass = model.strip(), klass.strip()
    return (model, klass) if colon and model and klass else None


def choose_layout(models: list[str], layout: str, where: str) -> str:
    """``labels`` or ``probabilities`` for a K-class file's model columns: ``layout`` where it names one, else
    by the names (all ``MODEL:CLASS``: probabilities; none with a colon: labels; some: refused as ambiguous).

    Examples
    --------
    >>> choose_layout(["a:x", "a:y", "b:x", "b:y"], "auto", "PREDS.csv"), choose_layout(["a", "b"], "auto", "f")
    ('probabilities', 'labels')
    """
    if layout in ("labels", "probabilities"):
        if layout == "probabilities":
            plain = [name for name in models if probability_column(name) is None]
            if plain:
                raise TablegenInputError(
                    f"--layout probabilities: {where}: column {plain[0]!r} is not named MODEL:CLASS (a model's "
                    "probability of a class); leave it out with --ignore, or name the models' columns with --models")
        return layout
    named = [name for name in models if probability_column(name) is not None]
    if not named:
        return "labels"
    if len(named) == len(models):
        return "probabilities"
    plain = [name for name in models if name not in named]
    raise TablegenInputError(
        f"{where}: ambiguous layout: column(s) {', '.join(named[:3])} are named MODEL:CLASS (a model's probability "
        f"of a class) but {', '.join(plain[:3])} not; give --layout probabilities (and --ignore the columns that are "
        "not probabilities) or --layout labels (every model column holds predicted classes)")


def read_multiclass_predictions(path, label_column: str, option: str = "PREDS.csv", models: str | None = None,
                                ignore: str | None = None, layout: str = "auto") -> MulticlassPredictions:
    """Read and check a K-class predictions file (the module's layout).

    Parameters
    ----------
    path : str or path-like
    label_column : str
        The label column's name.
    option : str
        How errors name the file (``PREDS.csv``).
    models, ignore : str, optional
        ``--models`` and ``--ignore`` (:func:`tablegen.cli.scores.model_columns`).
    layout : {"auto", "labels", "probabilities"}
        The model columns' layout (:func:`choose_layout`).

    Returns
    -------
    MulticlassPredictions

    Raises
    ------
    TablegenInputError
        Naming the file, the row and the column: see the module's text.
    ResourceLimitError
        Where reading the file would take more memory than the limit (before it is read whole).

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    ...     _ = f.write("label,tree\\ncat,cat\\ndog,bird\\nbird,bird\\n1,1.0\\n")
    >>> read = read_multiclass_predictions(f.name, "label")
    >>> read.classes, read.labels.tolist(), read.predictions["tree"].tolist()
    (('1', 'bird', 'cat', 'dog'), ['cat', 'dog', 'bird', '1'], ['cat', 'bird', 'bird', '1'])
    >>> os.remove(f.name)
    """
    from tablegen.cli.scores import model_columns, reading_memory_check
    from tablegen.common.csvfile import read_csv_columns

    where = f"{option} {path}"
    chosen = {}

    def numbers(header: list[str]) -> list[str]:
        if label_column not in header:
            raise TablegenInputError(f"{where}: no label column {label_column!r} (columns: {', '.join(header)}); "
                                     "name it with --label-column")
        names, ignored, why = model_columns(header, label_column, models, ignore, where)
        chosen.update(names=names, ignored=ignored, why=why, layout=choose_layout(names, layout, where))
        return names if chosen["layout"] == "probabilities" else []

    def hint(name: str) -> str:
        return " (every probability column holds a number in [0, 1]; not a probability? leave it out with --ignore)"

    _, columns = read_csv_columns(path, option, numbers, before_reading=reading_memory_check(path, option), hint=hint)
    names, chosen_layout = chosen["names"], chosen["layout"]
    keys, codes, texts = _classes_of(columns[label_column], f"{where}, column {label_column!r}")
    names_of = {key: _name_of(key, texts[key]) for key in keys}
    if len(keys) < 2:
        raise TablegenInputError(f"{where}: the label column {label_column!r} has one class only "
                                 f"({names_of[keys[0]]!r}); a random classifier then scores 100%: at least two "
                                 "classes are needed")
    if chosen_layout == "labels":
        predictions = {name: _predicted(columns[name], keys, names_of, f"{where}, column {name!r}") for name in names}
    else:
        predictions = _probabilities(columns, names, keys, names_of, where)
    ordered = sorted(names_of, key=names_of.get)  # by name, as Python sorts the classes (tablegen.evaluate)
    n = codes.size
    if len(ordered) > n:
        raise TablegenInputError(f"{where}: {len(ordered):,} classes but {n:,} item(s): every class needs items "
                                 "to test (K > n)")
    classes = tuple(names_of[key] for key in ordered)
    position = {key: j for j, key in enumerate(ordered)}
    labels = np.asarray(classes)[np.array([position[key] for key in keys])[codes]]
    if chosen_layout == "probabilities":
        predictions = {name: matrix[:, [position[key] for key in ordered_keys]]
                       for name, (ordered_keys, matrix) in predictions.items()}
    return MulticlassPredictions(labels, classes, predictions, chosen_layout,
                                 _line(predictions, chosen, chosen_layout, len(keys), len(classes)))


def _line(predictions: dict, chosen: dict, layout: str, K: int, classes: int) -> str:
    what = "predicted classes" if layout == "labels" else "class probabilities"
    line = (f"read {len(predictions)} model(s) as {what}, {K} true class(es)"
            + (f" ({classes} with those no item has)" if classes > K else "")
            + f": {', '.join(predictions)} ({chosen['why']})")
    if chosen["ignored"]:
        line += "; left out: " + ", ".join(f"{name} ({reason})" for name, reason in chosen["ignored"].items())
    return line + "."


def _classes_of(values: np.ndarray, where: str) -> tuple[list[tuple], np.ndarray, dict[tuple, list[str]]]:
    """The class keys of a column of text (:func:`_class_key`, in order of first sorted text), each item's index
    among them, and each key's texts; an empty or NaN field refused, naming its first row."""
    texts, inverse = np.unique(values, return_inverse=True)
    inverse = inverse.reshape(-1)
    missing = [j for j, text in enumerate(texts.tolist()) if _missing_text(text)]
    if missing:
        row = int(np.argmax(np.isin(inverse, missing)))
        raise TablegenInputError(f"{where}, row {row + 1}: missing class ({str(values[row])!r}): every item needs "
                                 "a class")
    keys, index, spelled = [], {}, {}
    mapping = np.empty(texts.size, dtype=np.int64)
    for j, text in enumerate(texts.tolist()):
        key = _class_key(text)
        if key not in index:
            index[key] = len(keys)
            keys.append(key)
        spelled.setdefault(key, []).append(text)
        mapping[j] = index[key]
    return keys, mapping[inverse], spelled


def _name_of(key: tuple, texts: list[str] | None) -> str:
    """A class's name: its text; for a number, the shortest of its ``texts`` (``1`` before ``1.0``), or without
    texts its value (an integer without a decimal point)."""
    if key[0] == 1:
        return key[1]
    if not texts:
        value = key[1]
        return str(int(value)) if value.is_integer() and abs(value) < 2 ** 53 else repr(value)
    return min(texts, key=lambda text: (len(text), text))


def _predicted(values: np.ndarray, keys: list[tuple], names_of: dict, where: str) -> np.ndarray:
    """A model's predicted classes as the classes' names; classes no item has are added to ``names_of`` (allowed:
    they are never hits), more of them than true classes refused (scores, not predicted classes)."""
    predicted_keys, codes, texts = _classes_of(values, where)
    unseen = [key for key in predicted_keys if key not in names_of]
    if len(unseen) > len(keys):
        examples = ", ".join(repr(_name_of(key, None)) for key in unseen[:3])
        raise TablegenInputError(
            f"{where}: {len(unseen):,} predicted values that no item has (e.g. {examples}), more than the "
            f"{len(keys)} true classes: these look like scores, not predicted classes; give a model's class "
            "probabilities in columns MODEL:CLASS, one per class")
    for key in unseen:
        names_of[key] = _name_of(key, texts[key])
    return np.asarray([names_of[key] for key in predicted_keys])[codes]


def _probabilities(columns: dict, names: list[str], keys: list[tuple], names_of: dict,
                   where: str) -> dict[str, tuple[list[tuple], np.ndarray]]:
    """Each model's (class keys, probability matrix) from its MODEL:CLASS columns, checked: every model names every
    class of the labels and the same classes; values in [0, 1]; each row sums to 1."""
    grouped: dict[str, dict[tuple, str]] = {}
    for name in names:
        model, klass = probability_column(name)
        key = _class_key(klass)
        if key in grouped.setdefault(model, {}):
            raise TablegenInputError(f"{where}: columns {grouped[model][key]!r} and {name!r} name the same class of "
                                     f"model {model!r}")
        grouped[model][key] = name
    first_model, first = next(iter(grouped.items()))
    for model, classes in grouped.items():
        missing = [key for key in keys if key not in classes]
        if missing:
            named = ", ".join(repr(f"{model}:{names_of[key]}") for key in missing[:3])
            raise TablegenInputError(
                f"{where}: model {model!r} has no probability column for class(es) "
                f"{', '.join(repr(names_of[key]) for key in missing[:3])} of the labels (expected {named}); every "
                "model needs a column MODEL:CLASS for every class (or, if these columns hold predicted classes, "
                "give --layout labels)")
        if set(classes) != set(first):
            extra = [key for key in set(classes) ^ set(first)]
            raise TablegenInputError(f"{where}: models {first_model!r} and {model!r} name different classes "
                                     f"({', '.join(repr(_name_of(key, None)) for key in extra[:3])} in one only); "
                                     "every model needs the same MODEL:CLASS columns")
    for key, name in first.items():
        names_of.setdefault(key, _name_of(key, [probability_column(name)[1]]))
    return {model: _matrix(columns, classes, model, where) for model, classes in grouped.items()}


def _matrix(columns: dict, classes: dict[tuple, str], model: str, where: str) -> tuple[list[tuple], np.ndarray]:
    """A model's (class keys, items x classes probabilities), refused where a probability is outside [0, 1] or a
    row does not sum to 1 (within :data:`ROW_SUM_TOLERANCE`), naming the first such row."""
    ordered = sorted(classes)
    matrix = np.column_stack([columns[classes[key]] for key in ordered])
    outside = (matrix < -ROW_SUM_TOLERANCE) | (matrix > 1 + ROW_SUM_TOLERANCE)
    if outside.any():
        row, j = divmod(int(np.argmax(outside)), matrix.shape[1])
        raise TablegenInputError(f"{where}, row {row + 1}, column {classes[ordered[j]]!r}: "
                                 f"{float(matrix[row, j]):.10g} is not a probability (outside [0, 1])")
    sums = matrix.sum(axis=1)
    off = np.abs(sums - 1.0) > ROW_SUM_TOLERANCE
    if off.any():
        row = int(np.argmax(off))
        named = ", ".join(classes[key] for key in ordered)
        raise TablegenInputError(f"{where}, row {row + 1}: model {model!r}'s probabilities sum to "
                                 f"{float(sums[row]):.10g}, not 1 (within {ROW_SUM_TOLERANCE:g}; columns {named})")
    return ordered, matrix
