"""``tablegen test --scores-file preds.csv``: from a predictions file to a verdict per metric.

The file has a label column (``--label-column``, default ``label``) and one numeric column per model
(its scores, higher = more likely positive); lines starting with ``#`` are comments.  Every metric is
computed from the scores, the winner picked per metric, and tested against the best of C random
classifiers by :func:`tablegen.lookup.from_scores.significance_test_from_scores`.  C defaults to the
number of model columns; it must count every model tried, discarded ones too.

With ``--scores-file`` the ``metric`` and ``score`` positionals and ``--P``/``--N`` are not used
(P and N come from the labels); :func:`add_scores_arguments` makes them optional for that form.

Which columns are models (:func:`model_columns`, here and in ``tablegen evaluate``): those named by ``--models``;
else every column but the label and those named by ``--ignore``.  By default a column named like a row
identifier (``id``, ``index``, ``row``, ``*_id``, pandas' ``Unnamed: 0`` ...) is left out, with a printed line
saying so; any other column of distinct integers (an identifier, or ranks) is refused, asking for ``--models``
or ``--ignore``: scored as a model, an identifier in a file sorted by label has an AUC near 0 or 1, and raises
the default C.  Every run prints which columns it scored and why, and which it left out.
"""

from __future__ import annotations

import sys

import numpy as np

from tablegen.cli.options import check_simulation_options, table_for
from tablegen.common.outputs import json_text
from tablegen.errors import TablegenInputError

_SINGLE_FORM = ("metric", "score", "P", "N", "C")


def add_scores_arguments(p) -> None:
    """Add the ``--scores-file`` form to the ``test`` parser ``p`` (its single-score arguments become optional)."""
    for action in p._actions:  # argparse has no public way to relax an existing argument
        if action.dest in ("metric", "score"):
            action.nargs, action.required, action.default = "?", False, None
        elif action.dest in ("P", "N", "C"):
            action.required = False
    g = p.add_argument_group("from a predictions file (instead of METRIC SCORE --P --N)")
    g.add_argument("--scores-file", default=None, metavar="PREDS.csv",
                   help="CSV with a label column and one score column per model")
    g.add_argument("--label-column", default="label", help="name of the label column (default %(default)s)")
    g.add_argument("--positive-label", default=None,
                   help="the positive class (default 1 for labels 0/1 or -1/1, true for true/false)")
    g.add_argument("--metrics", nargs="+", default=None,
                   help="default: auc best_accuracy best_f1 best_balanced_accuracy average_precision; "
                        "also tp_at_<k>, precision_at_<k>")
    add_column_arguments(g)


def add_column_arguments(p) -> None:
    """``--models`` and ``--ignore``: which columns of a predictions file are models (:func:`model_columns`)."""
    p.add_argument("--models", default=None, metavar="A,B,...",
                   help="the model columns, comma-separated (default: every column but the label, the --ignore "
                        "ones and those named like a row identifier: id, index, row, *_id)")
    p.add_argument("--ignore", default=None, metavar="ID,...",
                   help="columns that are not models, comma-separated (with the default choice of --models)")


def scores_file_given(args) -> bool:
    """True for the ``--scores-file`` form; for the single-score form, check that it is complete."""
    options = {"P": "--P", "N": "--N", "K": "--K", "n_per_class": "--n-per-class"}
    if args.scores_file is not None:
        extra = [options.get(name, name.upper()) for name in ("metric", "score", "P", "N", "K", "n_per_class")
                 if getattr(args, name, None) is not None]
        if extra:
            raise TablegenInputError(f"{', '.join(extra)}: not used with --scores-file (the metrics come from "
                                     "--metrics, P and N from the labels)")
        return True
    unused = [option for option, given in (("--metrics", args.metrics is not None),
                                           ("--models", args.models is not None),
                                           ("--ignore", args.ignore is not None),
                                           ("--positive-label", args.positive_label is not None),
                                           ("--label-column", args.label_column != "label")) if given]
    if unused:
        raise TablegenInputError(f"{unused[0]} applies only with --scores-file (the single-score form is METRIC "
                                 "SCORE --P --N --C)")
    design = getattr(args, "K", None) is not None or getattr(args, "n_per_class", None) is not None
    missing = [f"--{name}" if name in ("P", "N", "C") else name.upper() for name in _SINGLE_FORM
               if getattr(args, name) is None and not (design and name in ("P", "N"))]  # K-class: its own checks
    if missing:
        raise TablegenInputError(f"test needs METRIC SCORE --P --N --C (missing: {', '.join(missing)}), or "
                                 "METRIC SCORE --K --n-per-class --C, or --scores-file PREDS.csv")
    return False


#: Column names (lower case) taken for row identifiers, not models, unless ``--models`` names them.
ID_NAMES = frozenset({"", "id", "ids", "index", "idx", "row", "rows", "row_id", "item", "item_id", "sample",
                      "sample_id", "example", "example_id", "instance", "instance_id", "key", "uid", "uuid"})


def looks_like_an_id(name: str) -> bool:
    """Whether a column's name says it identifies rows (:data:`ID_NAMES`, ``*_id``, pandas' ``Unnamed: 0``).

    Examples
    --------
    >>> [looks_like_an_id(name) for name in ("id", "Patient_ID", "Unnamed: 0", "logreg", "idf")]
    [True, True, True, False, False]
    """
    lower = name.strip().lower()
    return lower in ID_NAMES or lower.endswith("_id") or lower.startswith("unnamed:")


def _names(text: str | None, option: str) -> list[str] | None:
    if text is None:
        return None
    names = [name.strip() for name in text.split(",")]
    if not all(names) or len(set(names)) != len(names):
        raise TablegenInputError(f"{option} must name columns, comma-separated, each once; got {text!r}")
    return names


def model_columns(header: list[str], label_column: str, models: str | None = None, ignore: str | None = None,
                  where: str = "PREDS.csv") -> tuple[list[str], dict[str, str], str]:
    """(the model columns, {column left out: why}, why these are the models) of a predictions file's header.

    ``models`` and ``ignore`` are the ``--models`` and ``--ignore`` texts (comma-separated names).  Without
    ``--models``, a column named like a row identifier (:func:`looks_like_an_id`) is left out; the check of
    the others' values (distinct integers are refused) is :func:`check_not_an_id`'s.

    Examples
    --------
    >>> model_columns(["id", "label", "a", "b"], "label")
    (['a', 'b'], {'id': 'named like a row identifier'}, 'every column but the label and those left out')
    >>> model_columns(["id", "label", "a", "b"], "label", models="b")[0]
    ['b']
    """
    chosen, left_out = _names(models, "--models"), _names(ignore, "--ignore")
    if chosen is not None and left_out is not None:
        raise TablegenInputError("--models and --ignore: give one of them (--models names every model column, "
                                 "--ignore the columns that are not models)")
    for option, names in (("--models", chosen), ("--ignore", left_out)):
        for name in names or ():
            if name == label_column:
                raise TablegenInputError(f"{option} names the label column {name!r}")
            if name not in header:
                raise TablegenInputError(f"{option}: {where} has no column {name!r} (columns: {', '.join(header)})")
    others = [name for name in header if name != label_column]
    if chosen is not None:
        return chosen, {name: "not in --models" for name in others if name not in chosen}, "named by --models"
    ignored = {name: "named by --ignore" for name in left_out or ()}
    ignored.update({name: "named like a row identifier" for name in others
                    if name not in ignored and looks_like_an_id(name)})
    models_ = [name for name in others if name not in ignored]
    if not models_:
        raise TablegenInputError(f"{where}: no model column (columns: {', '.join(header)}; left out: "
                                 f"{', '.join(ignored) or 'none'}); name them with --models")
    return models_, ignored, "every column but the label" + (" and those left out" if ignored else "")


def check_not_an_id(name: str, values: np.ndarray, where: str) -> None:
    """Refuse a default-chosen model column of distinct integers: a row identifier (or ranks), which
    ``--models`` or ``--ignore`` must settle (:func:`model_columns`)."""
    if values.size > 2 and np.all(values == np.round(values)) and np.unique(values).size == values.size:
        raise TablegenInputError(
            f"{where}: column {name!r} holds {values.size:,} distinct integers, as a row identifier does; if it is a "
            f"model's scores (ranks, say), name the model columns with --models; if not, leave it out with "
            f"--ignore {name}")


def read_predictions(path, label_column: str, option: str = "--scores-file", models: str | None = None,
                     ignore: str | None = None) -> tuple[np.ndarray, dict[str, np.ndarray], str]:
    """Labels (as text), {model: scores} and a line saying which columns were scored and why, and which were
    left out, from a predictions CSV (errors name it as ``option``; ``models``, ``ignore``: :func:`model_columns`).

    A file whose reading would take more memory than the limit (:func:`tablegen.compute.limits.check_memory`)
    is refused with its estimate before it is read whole; a model column's missing or non-finite value is
    refused naming its first bad row (:func:`tablegen.common.csvfile.read_csv_columns`).
    """
    from tablegen.common.csvfile import read_csv_columns

    chosen = {}

    def numbers(header: list[str]) -> list[str]:
        if label_column not in header:
            raise TablegenInputError(f"{option} {path}: no label column {label_column!r} (columns: "
                                     f"{', '.join(header)}); name it with --label-column")
        if len(header) == 1:
            raise TablegenInputError(f"{option} {path}: only the label column; add one score column per model")
        chosen["names"], chosen["ignored"], chosen["why"] = model_columns(header, label_column, models, ignore,
                                                                          f"{option} {path}")
        return chosen["names"]

    def hint(name: str) -> str:
        return f" (not a model column? leave it out with --ignore {name}, or name the models with --models)"

    _, columns = read_csv_columns(path, option, numbers, before_reading=reading_memory_check(path, option),
                                  hint=hint)
    names, ignored, why = chosen["names"], chosen["ignored"], chosen["why"]
    scores = {name: columns[name] for name in names}
    if models is None:
        for name in names:
            check_not_an_id(name, scores[name], f"{option} {path}")
    line = f"scored {len(names)} model column(s): {', '.join(names)} ({why})"
    if ignored:
        line += "; left out: " + ", ".join(f"{name} ({reason})" for name, reason in ignored.items())
    return columns[label_column], scores, line + "."


def reading_memory_check(path, option: str):
    """The check a predictions file's reader makes before reading it whole (:func:`read_predictions`, the K-class
    reader :func:`tablegen.cli.multiclass_csv.read_multiclass_predictions`): its estimate within the limit."""
    def check(size) -> None:
        from tablegen.compute.limits import check_memory, format_bytes

        check_memory(size.memory, f"reading {option} {path} ({format_bytes(size.bytes)}: about {size.rows:,} rows "
                                  f"x {size.columns} columns, estimated from its size and first lines)",
                     "split the file, or raise TABLEGEN_MEMORY_LIMIT on a machine with more memory")
    return check


def format_scores_result(result) -> str:
    """The table metrics x (winner, score, critical value, p, verdict), then each verdict's notes."""
    lines = [f"P = {result.P:,}, N = {result.N:,}; {len(result.models)} model(s); winner per metric tested against "
             f"the best of C = {result.C:,} random classifiers at alpha = {result.alpha:g}",
             f"{'metric':<24}{'winner':<16}{'score':>10}{'critical value':>16}{'p':>12}  {'source':<9}verdict"]
    for v in result:
        r = v.result
        if r is None:
            lines.append(f"{v.metric:<24}{'-':<16}{'-':>10}{'-':>16}{'-':>12}  {'-':<9}not applicable to any model *")
            continue
        verdict = "significant" if r.significant else "not significant"
        lines.append(f"{v.metric:<24}{v.winner[:15]:<16}{v.score:>10.6g}{r.critical_value.value:>16.6g}"
                     f"{r.p_value.formatted(3):>12}  {r.method:<9}{verdict}" + ("" if r.settled else " (not settled)")
                     + (" *" if v.notes else ""))
    for v in result:
        lines += [f"* {v.metric}: {note}" for note in v.notes]
    lines.append("C must count every model tried, discarded ones too (--C; default: the model columns).")
    return "\n".join(lines)


def run_scores(args) -> int:
    """Run ``tablegen test --scores-file``."""
    from tablegen.lookup.from_scores import significance_test_from_scores

    check_simulation_options(args)
    labels, scores, columns = read_predictions(args.scores_file, args.label_column, models=args.models,
                                               ignore=args.ignore)
    print(columns, file=sys.stderr if args.json else sys.stdout)
    table = args.table if args.storage_options is None else table_for(args)
    result = significance_test_from_scores(labels, scores, metrics=args.metrics, C=args.C, alpha=args.alpha,
                                           positive_label=args.positive_label, method=args.method, R=args.R,
                                           seed=args.seed, table=table)
    print(json_text(result.to_dict()) if args.json else format_scores_result(result))
    return 0
