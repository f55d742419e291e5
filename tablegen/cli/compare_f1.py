"""``tablegen compare f1 A.csv B.csv``: two classifiers' average F1 on one test set, Bayesian (Zhang et al. 2015).

A thin layer over :func:`tablegen.compare.f1_posterior` and :func:`tablegen.compare.f1.frequentist_tests`:
reads the two confusion matrices, prints the paper's Table IV (ψ_A, ψ_B, δ; the ROPE Bayes factor, where
the paper had a point-null one; the decision) and its Table III (the frequentist tests); ``--json`` prints
both results' ``to_dict()``; ``--plot`` draws δ's posterior with its HDI, the ROPE and the decision;
``--point-null-bf`` adds window estimates of the point-null ratio side by side, to show that under these
priors it depends on the window (:mod:`tablegen.compare.f1.bayes_factor`); ``--predictions PREDS.csv`` (per-item
true class and both predictions) runs the micro sign test, which counts one-vs-rest decisions (item, class).
"""

from __future__ import annotations

import numpy as np

from tablegen.common.csvfile import read_lines, split_fields
from tablegen.common.outputs import json_text
from tablegen.compare.f1.validation import AVERAGES, MU_MODES
from tablegen.errors import TablegenInputError


def add_parser(subparsers) -> None:
    """The ``f1`` sub-subcommand of ``tablegen compare``."""
    p = subparsers.add_parser("f1", help="two classifiers' macro or micro F1 on one test set, Bayesian "
                                         "(Zhang et al. 2015), beside the sign, proportions and t tests")
    for name in ("A", "B"):
        p.add_argument(f"confusion_{name.lower()}", metavar=f"{name}.csv",
                       help=f"confusion matrix of classifier {name}: M rows (true class) of M counts (predicted "
                            "class), comma- or whitespace-separated; a header line and a first column of class "
                            "names are allowed; '#' lines are comments")
    p.add_argument("--average", choices=AVERAGES, default="macro", help="F1 average (default %(default)s)")
    p.add_argument("--rope", default="0.005", metavar="R|LOW,HIGH",
                   help="region of practical equivalence: half-width R in (0, 1) or an interval LOW,HIGH with "
                        "-1 < LOW < 0 < HIGH < 1, e.g. --rope=-0.01,0.02 (default %(default)s)")
    p.add_argument("--samples", type=int, default=50_000, help="posterior draws (default %(default)s)")
    p.add_argument("--seed", type=int, default=2005,
                   help="root seed (default %(default)s: the same matrices, the same numbers)")
    p.add_argument("--mu", choices=MU_MODES, default="joint",
                   help="one class-proportion posterior for both (one test set; default) or one each (the paper)")
    p.add_argument("--names", nargs=2, default=("A", "B"), metavar=("NAME_A", "NAME_B"),
                   help="names of the two classifiers in the report and the plot")
    p.add_argument("--plot", default=None, metavar="OUT.png",
                   help="draw δ's posterior, its HDI, the ROPE and the decision")
    p.add_argument("--point-null-bf", action="store_true",
                   help="also show window estimates of the point-null (Savage-Dickey) ratio at several windows: "
                        "the prior density of the difference at 0 is infinite under these priors, so they grow "
                        "as the window shrinks and none is a Bayes factor (the ROPE Bayes factor is always shown)")
    p.add_argument("--predictions", default=None, metavar="PREDS.csv",
                   help="per-item classes, for the micro sign test: a CSV with a header and three columns, the true "
                        "class, A's prediction and B's, each a class index 0..M-1 in the matrices' order (they must "
                        "reproduce A.csv and B.csv).  The micro sign test counts one-vs-rest decisions (item, class): "
                        "those exactly one classifier gets right")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(run=run, option_names=option_names)


def option_names(args) -> dict[str, str]:
    """How errors of this command name the library's arguments that are not options: the two matrices,
    by their files (the others are options, ``--rope``, ``--samples``, ...)."""
    return {"confusion_a": args.confusion_a, "confusion_b": args.confusion_b}


def _numeric(fields: list[str]) -> bool:
    try:
        [float(f) for f in fields]
    except ValueError:
        return False
    return True


def read_confusion(path: str) -> np.ndarray:
    """The M × M matrix in the CSV file ``path``; errors name the file and line.

    Read by :func:`tablegen.common.csvfile.read_lines` and ``split_fields``: fields are separated by
    commas (or semicolons), else by whitespace; blank and ``#`` lines are skipped.  The first line is
    a header if it holds a field that is not a number (e.g. the empty corner of a pandas ``to_csv``)
    or if the other lines are one fewer than its width; rows one field wider than there are rows
    start with a class label, which is dropped.
    """
    lines = read_lines(path, path)
    if not lines:
        raise TablegenInputError(f"{path}: no counts in it")
    rows = [(i, split_fields(line)) for i, line in lines]
    if not _numeric(rows[0][1]) or len(rows) == len(rows[-1][1]) + 1:
        rows = rows[1:]
    if rows and all(len(fields) == len(rows) + 1 for _, fields in rows):
        rows = [(i, fields[1:]) for i, fields in rows]
    for number, fields in rows:
        if len(fields) != len(rows) or not _numeric(fields):
            raise TablegenInputError(f"{path}, line {number}: expected {len(rows)} counts (the matrix is "
                                     f"{len(rows)} × {len(rows)}), got {', '.join(fields)!r}")
    return np.array([[float(f) for f in fields] for _, fields in rows])


def read_predictions(path: str) -> dict[str, np.ndarray]:
    """``y_true``, ``y_pred_a`` and ``y_pred_b`` (class indices) from the ``--predictions`` CSV ``path``: a header,
    then one line per item of three integers; errors name ``--predictions`` and the line."""
    from tablegen.common.csvfile import read_csv

    header, rows = read_csv(path, "--predictions")
    if len(header) != 3:
        raise TablegenInputError(f"--predictions {path}: {len(header)} columns ({', '.join(header)}); it needs three: "
                                 "the true class, A's prediction, B's (class indices 0..M-1)")
    columns = []
    for j, name in enumerate(header):
        try:
            columns.append(np.array([int(row[j]) for row in rows], dtype=np.int64))
        except ValueError:
            bad = next(i for i, row in enumerate(rows) if not row[j].lstrip("-").isdigit())
            raise TablegenInputError(f"--predictions {path}, row {bad + 1}, column {name!r}: {rows[bad][j]!r} is not a "
                                     "class index (an integer 0..M-1 in the matrices' order)") from None
    return dict(zip(("y_true", "y_pred_a", "y_pred_b"), columns))


def _rope(text: str):
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise TablegenInputError(f"--rope must be a half-width R or LOW,HIGH, got {text!r}") from None
    return values[0] if len(values) == 1 else tuple(values)


def run(args) -> int:
    """Run ``tablegen compare f1``; bad input raises :class:`TablegenInputError` (exit status 2 in ``main``,
    which names the matrices by their files: :func:`option_names`)."""
    from tablegen.compare.f1.frequentist import f1_frequentist_tests
    from tablegen.compare.f1.posterior import f1_posterior  # numba kernels: imported when the command runs

    a, b = read_confusion(args.confusion_a), read_confusion(args.confusion_b)
    result = f1_posterior(a, b, average=args.average, rope=_rope(args.rope), samples=args.samples,
                          seed=args.seed, mu=args.mu, point_null=args.point_null_bf)
    predictions = {} if args.predictions is None else read_predictions(args.predictions)
    try:
        tests = f1_frequentist_tests(a, b, **predictions)
    except TablegenInputError as error:
        if not predictions:
            raise
        raise TablegenInputError(f"--predictions {args.predictions}: {error}") from None
    if args.plot is not None:
        from tablegen.cli.images import image_errors

        with image_errors("--plot", args.plot):
            result.plot(args.plot, labels=tuple(args.names))
    if args.json:
        print(json_text({"names": list(args.names), "bayesian": result.to_dict(), "frequentist": tests.to_dict()}))
        return 0
    print(f"A = {args.names[0]} ({args.confusion_a}), B = {args.names[1]} ({args.confusion_b}): "
          f"{a.shape[0]} classes, {a.sum():,.0f} test items; {args.average} F1")
    names = tuple(args.names)
    print(result.table(names))
    print(result.sentence(names))
    print("\nFrequentist tests (Yang & Liu 1999; ≫/≪ p ≤ 0.01, >/< p ≤ 0.05, ~ otherwise):")
    print(tests.table())
    if args.plot is not None:
        print(f"wrote {args.plot}")
    return 0
