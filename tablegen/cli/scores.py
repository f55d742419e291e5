"""``tablegen test --scores-file preds.csv``: from a predictions file to a verdict per metric.

The file has a label column (``--label-column``, default ``label``) and one numeric column per model
(its scores, higher = more likely positive); lines starting with ``#`` are comments.  Every metric is
computed from the scores, the winner picked per metric, and tested against the best of C random
classifiers by :func:`tablegen.lookup.from_scores.significance_test_from_scores`.  C defaults to the
number of model columns; it must count every model tried, discarded ones too.

With ``--scores-file`` the ``metric`` and ``score`` positionals and ``--P``/``--N`` are not used
(P and N come from the labels); :func:`add_scores_arguments` makes them optional for that form.
"""

from __future__ import annotations

import json

import numpy as np

from tablegen.cli.options import check_simulation_options, table_for
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


def scores_file_given(args) -> bool:
    """True for the ``--scores-file`` form; for the single-score form, check that it is complete."""
    if args.scores_file is not None:
        extra = [f"--{name}" if name in ("P", "N") else name.upper() for name in ("metric", "score", "P", "N")
                 if getattr(args, name) is not None]
        if extra:
            raise TablegenInputError(f"{', '.join(extra)}: not used with --scores-file (the metrics come from "
                                     "--metrics, P and N from the labels)")
        return True
    unused = [option for option, given in (("--metrics", args.metrics is not None),
                                           ("--positive-label", args.positive_label is not None),
                                           ("--label-column", args.label_column != "label")) if given]
    if unused:
        raise TablegenInputError(f"{unused[0]} applies only with --scores-file (the single-score form is METRIC "
                                 "SCORE --P --N --C)")
    missing = [f"--{name}" if name in ("P", "N", "C") else name.upper() for name in _SINGLE_FORM
               if getattr(args, name) is None]
    if missing:
        raise TablegenInputError(f"test needs METRIC SCORE --P --N --C (missing: {', '.join(missing)}), or "
                                 "--scores-file PREDS.csv")
    return False


def read_predictions(path, label_column: str, option: str = "--scores-file") -> tuple[list[str], dict[str, np.ndarray]]:
    """Labels (as text) and {model: scores} from a predictions CSV (errors name it as ``option``)."""
    from tablegen.common.csvfile import parse_number, read_csv

    header, rows = read_csv(path, option)
    if label_column not in header:
        raise TablegenInputError(f"{option} {path}: no label column {label_column!r} (columns: "
                                 f"{', '.join(header)}); name it with --label-column")
    at = header.index(label_column)
    models = [name for name in header if name != label_column]
    if not models:
        raise TablegenInputError(f"{option} {path}: only the label column; add one score column per model")
    labels = [row[at] for row in rows]
    scores = {name: np.array([parse_number(row[j], f"{option} {path}, row {i + 1}, column {name!r}")
                              for i, row in enumerate(rows)])
              for j, name in enumerate(header) if name != label_column}
    return labels, scores


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
    labels, scores = read_predictions(args.scores_file, args.label_column)
    table = args.table if args.storage_options is None else table_for(args)
    result = significance_test_from_scores(labels, scores, metrics=args.metrics, C=args.C, alpha=args.alpha,
                                           positive_label=args.positive_label, method=args.method, R=args.R,
                                           seed=args.seed, table=table)
    print(json.dumps(result.to_dict(), indent=2) if args.json else format_scores_result(result))
    return 0
