"""``tablegen evaluate PREDS.csv``: every answer from a predictions file in one report.

Two classes: the layout below.  More than two (or ``--layout labels`` / ``probabilities``): the model columns
hold each model's predicted class, or its probabilities in columns ``MODEL:CLASS``
(:mod:`tablegen.cli.multiclass_csv` says the layout and how it is told apart), and the report is
:func:`tablegen.evaluate`'s K-class one (:class:`~tablegen.compare.report.multiclass.MulticlassEvaluation`), printed
in the same forms.

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
import threading
import time

from tablegen.cli.images import image_errors
from tablegen.cli.multiclass_csv import LAYOUTS
from tablegen.cli.options import check_simulation_options
from tablegen.cli.scores import add_column_arguments, read_predictions
from tablegen.common.outputs import json_text
from tablegen.errors import TablegenInputError

OUTPUTS = ("text", "json", "markdown", "latex")


def add_evaluate_parser(sub) -> None:
    """The ``evaluate`` subcommand."""
    p = sub.add_parser("evaluate", help="from labels and every model's scores: each model's values, the winner "
                                        "against C random classifiers and against the models given, in one report")
    p.add_argument("predictions", metavar="PREDS.csv",
                   help="CSV with a header, a label column and model columns: for two classes one score column per "
                        "model (higher = more likely positive); for K > 2 classes one column per model holding its "
                        "predicted class, or one column MODEL:CLASS per model and class holding probabilities (each "
                        "model a column for every class, each row summing to 1 within 1e-6); classes are text "
                        "('1' and 1.0 are one class)")
    p.add_argument("--label-column", default="label", help="name of the label column (default %(default)s)")
    add_column_arguments(p)
    p.add_argument("--layout", choices=LAYOUTS, default="auto",
                   help="the model columns: scores (two classes), labels (predicted classes) or probabilities "
                        "(MODEL:CLASS); auto (default): K > 2 where the label column has more than two classes or "
                        "a model column holds classes of the label column as text, then probabilities if every "
                        "model column is named MODEL:CLASS, "
                        "labels if none has a colon (some: refused as ambiguous)")
    p.add_argument("--positive-label", default=None,
                   help="the positive class (default 1 for labels 0/1 or -1/1, true for true/false; two classes "
                        "only)")
    p.add_argument("--C", type=int, default=None,
                   help="every model tried, discarded ones too (default: the model columns)")
    p.add_argument("--metrics", nargs="+", default=None,
                   help="default: auc best_accuracy best_f1 best_balanced_accuracy average_precision; also "
                        "best_mcc, tp_at_<k>, precision_at_<k>; with K > 2 classes: accuracy kappa "
                        "balanced_accuracy macro_f1 (default all four)")
    p.add_argument("--alpha", type=float, default=0.05, help="level of every verdict (default %(default)s)")
    p.add_argument("--method", choices=("auto", "exact", "table", "simulate"), default="auto",
                   help="the answer policy against random classifiers (default %(default)s; two classes only)")
    p.add_argument("--R", type=int, default=None, help="random rankings or label arrangements where simulated")
    p.add_argument("--seed", type=int, default=None, help="root seed of what is simulated (default 2005)")
    p.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu",
                   help="score the bootstrap resamples, swap patterns and label permutations on the CPU (default) or "
                        "a GPU (cuda; auto: a GPU if one is visible); the same report bit for bit")
    form = p.add_mutually_exclusive_group()
    for output in OUTPUTS[1:]:
        form.add_argument(f"--{output}", dest="output", action="store_const", const=output,
                          help=f"print the report as {output.capitalize() if output != 'json' else 'JSON'}")
    p.add_argument("--plot", default=None, metavar="OUT.png",
                   help="draw the ROC curves over the random band (K > 2 classes: each model's confusion matrix)")
    p.add_argument("--max-seconds", type=float, default=None,
                   help="refuse (exit 5, with the estimate) a report estimated to take longer on one core "
                        "(default: TABLEGEN_TIME_LIMIT, else 3600); with --device cuda the estimate of the CPU's part "
                        "(the GPU's steps are not estimated)")
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


def format_multiclass_report(report) -> str:
    """The K-class text report: a table of (metric, model) rows (value, p against the best of C random classifiers,
    winner, max-T adjusted p, the winner's Holm-adjusted paired p against it, in the best set), then each metric's
    verdicts in words."""
    from tablegen.compare.report.tables import cell_text, p_text

    head = (f"{len(report.models)} models on {report.n:,} test items in {report.K} classes; C = {report.C} models "
            f"tried; alpha = {report.alpha:g}")
    lines = [head, f"{'metric':<20}{'model':<20}{'value':>10}{'p vs random':>13}  {'winner':<7}"
                   f"{'max-T p (adjusted)':>20}{'p vs winner (Holm)':>20}  in best set"]
    for row in report.rows():
        lines.append(f"{row['metric']:<20}{row['model'][:19]:<20}{cell_text(row['value']):>10}"
                     f"{p_text(row['p vs random']):>13}  {'yes' if row['winner'] else '':<7}"
                     f"{p_text(row['max-T p (adjusted)']):>20}{p_text(row['p vs winner (Holm)']):>20}  "
                     f"{'yes' if row['in best set'] else ''}")
    return "\n".join([*lines, "", *(f"Note: {note}." for note in report.notes), *(r.sentence() for r in report)])


class EvaluationProgress:
    """The report's progress on stderr: the estimate first where the work is long (:attr:`long_seconds` or more),
    then, once :attr:`after_seconds` of work have passed, the share of the estimated work done, the time elapsed
    and the ETA (the work left at the pace so far).  On a terminal one line is redrawn in place (also between
    steps, every :attr:`redraw_seconds`); elsewhere one line per step.  With ``device="cuda"`` the estimate says what
    it is: the work's seconds if it all ran on one CPU core, part of it running on the GPU, whose time is not estimated.

    Examples
    --------
    >>> import io
    >>> clock = iter([0.0, 0.0, 1.0, 3.0, 6.0]).__next__
    >>> stream = io.StringIO()
    >>> with EvaluationProgress(stream, clock=clock) as progress:
    ...     progress(0.0, 30.0)
    ...     progress(5.0, 30.0)   # at 1 s: nothing drawn yet
    ...     progress(10.0, 30.0)  # at 3 s: a third done, 6 s to go at this pace
    ...     progress(30.0, 30.0)
    >>> print(stream.getvalue().strip())
    tablegen evaluate: about 30 s of work on one core (estimated)
     33.3% of the estimated work      3.0 s elapsed  ETA     6.0 s
    100.0% of the estimated work      6.0 s elapsed  ETA     0.0 s
    """

    after_seconds = 2.0
    long_seconds = 10.0
    redraw_seconds = 0.5

    def __init__(self, stream=None, clock=time.perf_counter, device: str = "cpu"):
        self.stream, self.clock, self.device = sys.stderr if stream is None else stream, clock, device
        self.start = clock()
        self.interactive = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.state, self.drawn = (0.0, 1.0, self.start), False
        self._lock, self._stop = threading.Lock(), threading.Event()
        self._ticker = None

    def __enter__(self) -> EvaluationProgress:
        if self.interactive:
            self._ticker = threading.Thread(target=self._tick, name="tablegen-evaluate-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self.drawn and self.interactive:
            self.stream.write("\n")
            self.stream.flush()

    def __call__(self, done: float, total: float) -> None:
        now = self.clock()
        with self._lock:
            if done == 0.0 and total >= self.long_seconds:
                self.stream.write(self._estimate(total))
                self.stream.flush()
            self.state = (done, total, now)
            if now - self.start >= self.after_seconds:
                self._draw(now)

    def _estimate(self, total: float) -> str:
        """The estimate's line: single-core seconds; with a GPU, labelled as the CPU's figure for all the work.

        Examples
        --------
        >>> print(EvaluationProgress(device="cuda")._estimate(40.0), end="")  # doctest: +NORMALIZE_WHITESPACE
        tablegen evaluate: about 40 s of work if it all ran on one CPU core (estimated); part of it runs on the GPU
        (--device cuda), whose time is not estimated
        """
        if self.device == "cuda":
            return (f"tablegen evaluate: about {total:,.0f} s of work if it all ran on one CPU core (estimated); part "
                    "of it runs on the GPU (--device cuda), whose time is not estimated\n")
        return f"tablegen evaluate: about {total:,.0f} s of work on one core (estimated)\n"

    def _tick(self) -> None:
        while not self._stop.wait(self.redraw_seconds):
            now = self.clock()
            with self._lock:
                if now - self.start >= self.after_seconds:
                    self._draw(now)

    def _draw(self, now: float) -> None:
        done, total, _ = self.state
        elapsed = now - self.start
        eta = f"{elapsed * (total - done) / done:7.1f} s" if done > 0 else "      -  "
        line = f"{100 * done / total:5.1f}% of the estimated work  {elapsed:7.1f} s elapsed  ETA {eta}"
        self.stream.write(("\r" + line) if self.interactive else line + "\n")
        self.stream.flush()
        self.drawn = True


def run(args) -> int:
    """Run ``tablegen evaluate``."""
    from tablegen.compare.report.evaluate import evaluate

    check_simulation_options(args)
    if args.R is not None and args.R < 1:
        raise TablegenInputError(f"--R must be a positive integer, got {args.R}")
    if args.R is not None:
        from tablegen.compute.validation import check_replicates

        check_replicates(args.R, (), ())  # at most 2**53, whether or not anything is simulated
    read = _read(args)
    if not isinstance(read, tuple):
        return _run_multiclass(args, read)
    labels, scores, columns = read
    print(columns, file=sys.stdout if args.output == "text" else sys.stderr)  # JSON, Markdown, LaTeX stay clean
    with EvaluationProgress(device=_device(args)) as progress:
        report = evaluate(labels, scores, C=args.C, metrics=args.metrics, alpha=args.alpha,
                          positive_label=args.positive_label, method=args.method, R=args.R, seed=args.seed,
                          progress=progress, max_seconds=args.max_seconds, device=args.device)
    printed = {"text": format_report, "json": lambda r: json_text(r.to_dict()),
               "markdown": lambda r: r.to_markdown(), "latex": lambda r: r.to_latex()}[args.output](report)
    print(printed)
    if args.plot is not None:
        with image_errors("--plot", args.plot):
            report.plot(args.plot)
        print(f"wrote {args.plot}")
    return 0


def _device(args) -> str:
    """``--device`` resolved (``auto``: ``cuda`` where a GPU is visible), for the estimate's words."""
    from tablegen.compute.kernels.cuda.device import resolve_device

    return resolve_device(args.device)


def _read(args):
    """The file as the two-class report reads it, (labels, {model: scores}, the columns line); or, for K > 2
    classes (or ``--layout labels`` / ``probabilities``), as a
    :class:`~tablegen.cli.multiclass_csv.MulticlassPredictions`.  Auto: the file's first lines decide
    (:func:`~tablegen.cli.multiclass_csv.looks_multiclass`), and a file read as two-class whose labels hold more
    classes is read again as K-class."""
    from tablegen.cli.multiclass_csv import count_classes, read_multiclass_predictions

    def multiclass(layout: str):
        return read_multiclass_predictions(args.predictions, args.label_column, option="PREDS.csv",
                                           models=args.models, ignore=args.ignore, layout=layout)

    if args.layout in ("labels", "probabilities") or (args.layout == "auto" and _looks_multiclass(args)):
        return multiclass(args.layout)
    labels, scores, columns = read_predictions(args.predictions, args.label_column, option="PREDS.csv",
                                               models=args.models, ignore=args.ignore)
    if args.layout == "auto" and count_classes(labels) > 2:
        return multiclass("auto")
    return labels, scores, columns


def _looks_multiclass(args) -> bool:
    """Whether the file's first lines show more than two classes, or text in a model column (False where the
    header does not say which columns are models: the two-class reader then names what is wrong)."""
    from tablegen.cli.multiclass_csv import looks_multiclass
    from tablegen.cli.scores import model_columns
    from tablegen.common.csvfile import read_head

    header, rows = read_head(args.predictions, "PREDS.csv")
    try:
        names = model_columns(header, args.label_column, args.models, args.ignore)[0]
    except TablegenInputError:
        return False
    return args.label_column in header and looks_multiclass(header, rows, args.label_column, names)


def _run_multiclass(args, read) -> int:
    """The K-class report (:func:`tablegen.evaluate` with more than two classes), printed as the two-class one."""
    from tablegen.compare.report.multiclass import evaluate_multiclass

    predictions, line = read.predictions, read.line
    if read.layout == "probabilities" and len(read.classes) > read.true_classes:  # columns for classes no item has
        predictions = read.predicted_labels()
        line += (" Probabilities of classes no item has: each item's predicted class is its most probable one, "
                 "among every class the columns name.")
    print(line, file=sys.stdout if args.output == "text" else sys.stderr)
    with EvaluationProgress(device=_device(args)) as progress:
        report = evaluate_multiclass(read.labels, predictions, C=args.C, metrics=args.metrics, alpha=args.alpha,
                                     R=args.R, seed=args.seed, progress=progress, max_seconds=args.max_seconds,
                                     positive_label=args.positive_label, method=args.method, device=args.device)
    printed = {"text": format_multiclass_report, "json": lambda r: json_text(r.to_dict()),
               "markdown": lambda r: r.to_markdown(), "latex": lambda r: r.to_latex()}[args.output](report)
    print(printed)
    if args.plot is not None:
        with image_errors("--plot", args.plot):
            report.plot(args.plot)
        print(f"wrote {args.plot}")
    return 0
