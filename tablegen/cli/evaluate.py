"""``tablegen evaluate PREDS.csv``: every answer from a predictions file in one report.

A thin layer over :func:`tablegen.evaluate`: the file has a label column (``--label-column``, default
``label``) and one numeric column per model (``--models``, ``--ignore``; by default a column named like a row
identifier is left out and one of distinct integers refused: :func:`tablegen.cli.scores.model_columns`).  Prints
which columns it scored and why (on standard error with ``--json``, ``--markdown``, ``--latex``), a table
(metric x model: value, winner, max-T adjusted p-value, the winner's Holm-adjusted paired p-value against it,
the confidence set of the best) and one paragraph per metric; ``--json``, ``--markdown`` or ``--latex`` print
the report in that form instead; ``--plot OUT.png`` draws the models' ROC curves over the band of the best of
C random rankings.
"""

from __future__ import annotations

import sys

from tablegen.cli.images import image_errors
from tablegen.cli.options import check_simulation_options
from tablegen.cli.scores import add_column_arguments, read_predictions
from tablegen.common.outputs import json_text
from tablegen.errors import TablegenInputError

OUTPUTS = ("text", "json", "markdown", "latex")


def add_evaluate_parser(sub) -> None:
    """The ``evaluate`` subcommand."""
    p = sub.add_parser("evaluate", help="from labels and every model's scores: each model's values, the winner "
                                        "against C random classifiers and against the models given, in one report")
    p.add_argument("predictions", metavar="PREDS.csv", help="CSV with a label column and one score column per model")
    p.add_argument("--label-column", default="label", help="name of the label column (default %(default)s)")
    add_column_arguments(p)
    p.add_argument("--positive-label", default=None,
                   help="the positive class (default 1 for labels 0/1 or -1/1, true for true/false)")
    p.add_argument("--C", type=int, default=None,
                   help="every model tried, discarded ones too (default: the model columns)")
    p.add_argument("--metrics", nargs="+", default=None,
                   help="default: auc best_accuracy best_f1 best_balanced_accuracy average_precision; also "
                        "best_mcc, tp_at_<k>, precision_at_<k>")
    p.add_argument("--alpha", type=float, default=0.05, help="level of every verdict (default %(default)s)")
    p.add_argument("--method", choices=("auto", "exact", "table", "simulate"), default="auto",
                   help="the answer policy against random classifiers (default %(default)s)")
    p.add_argument("--R", type=int, default=None, help="random rankings or label arrangements where simulated")
    p.add_argument("--seed", type=int, default=None, help="root seed of what is simulated (default 2005)")
    form = p.add_mutually_exclusive_group()
    for output in OUTPUTS[1:]:
        form.add_argument(f"--{output}", dest="output", action="store_const", const=output,
                          help=f"print the report as {output.capitalize() if output != 'json' else 'JSON'}")
    p.add_argument("--plot", default=None, metavar="OUT.png", help="draw the ROC curves over the random band")
    p.set_defaults(run=run, output="text")


def format_report(report) -> str:
    """The text report: a table of (metric, model) rows, then each metric's verdicts in words."""
    lines = [f"{len(report.models)} models on {report.P + report.N:,} test items (P = {report.P:,}, "
             f"N = {report.N:,}); C = {report.C} models tried; alpha = {report.alpha:g}",
             f"{'metric':<24}{'model':<20}{'value':>10}  {'winner':<7}{'max-T p (adjusted)':>20}"
             f"{'p vs winner (Holm)':>20}  in best set"]
    from tablegen.compare.report.tables import cell_text, p_text

    for row in report.rows():  # the numbers as the sentences, Markdown and LaTeX print them
        value, p, q = cell_text(row["value"]), p_text(row["max-T p (adjusted)"]), p_text(row["p vs winner (Holm)"])
        lines.append(f"{row['metric']:<24}{row['model'][:19]:<20}{value:>10}  {'yes' if row['winner'] else '':<7}"
                     f"{p:>20}{q:>20}  {'yes' if row['in best set'] else ''}")
    return "\n".join([*lines, "", *(r.sentence() for r in report)])


def run(args) -> int:
    """Run ``tablegen evaluate``."""
    from tablegen.compare.report.evaluate import evaluate

    check_simulation_options(args)
    if args.R is not None and args.R < 1:
        raise TablegenInputError(f"--R must be a positive integer, got {args.R}")
    if args.R is not None:
        from tablegen.compute.validation import check_replicates

        check_replicates(args.R, (), ())  # at most 2**53, whether or not anything is simulated
    labels, scores, columns = read_predictions(args.predictions, args.label_column, option="PREDS.csv",
                                               models=args.models, ignore=args.ignore)
    print(columns, file=sys.stdout if args.output == "text" else sys.stderr)  # JSON, Markdown, LaTeX stay clean
    report = evaluate(labels, scores, C=args.C, metrics=args.metrics, alpha=args.alpha,
                      positive_label=args.positive_label, method=args.method, R=args.R, seed=args.seed)
    printed = {"text": format_report, "json": lambda r: json_text(r.to_dict()),
               "markdown": lambda r: r.to_markdown(), "latex": lambda r: r.to_latex()}[args.output](report)
    print(printed)
    if args.plot is not None:
        with image_errors("--plot", args.plot):
            report.plot(args.plot)
        print(f"wrote {args.plot}")
    return 0
