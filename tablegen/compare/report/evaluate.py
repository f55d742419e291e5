"""From labels and every model's scores to one report: the questions an evaluator asks, answered together.

Per metric: each model's value; the winner against the best of C random classifiers (Forman & Cohen: the
tables' answer, :func:`tablegen.significance_test_from_scores`); the winner against the models actually
tried, their dependence kept (Westfall–Young max-T, :func:`tablegen.compare.selection_test`); the smallest AUC
the test set detects with 80% power (:mod:`tablegen.compare.report.detectable`); and notes (ties, inverted
scores, few positives).  Every number keeps the method and interval its source gives it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from tablegen.compare.report.cost import ReportSteps, check_report_time, evaluation_cost
from tablegen.compare.report.tables import TableRenderings
from tablegen.errors import Argument

if TYPE_CHECKING:
    import matplotlib.figure

logger = logging.getLogger(__name__)

#: The columns of :meth:`Evaluation.rows` that hold p-values (printed to 3 significant digits, as the sentences
#: print them; the others to 4: :mod:`tablegen.compare.report.tables`).
P_COLUMNS = ("max-T p (adjusted)", "p vs winner (Holm)")

#: Below this many positives (or negatives) a note says the tests can detect only large effects.
FEW_ITEMS = 10


@dataclass(frozen=True)
class MetricReport:
    """One metric's answers.

    Attributes
    ----------
    metric : str
    values : dict
        Each applicable model's value.
    intervals : dict
        Each applicable model's 95% bootstrap interval of its value (positives and negatives resampled apart,
        seeded): ``(v, v)`` for a model whose scores do not vary within a class (every resample has the same
        scores, so the same value v; a note says so), None where the resamples' law is degenerate and BCa gives
        no interval (a note says why) — never NaN.
    winner : str or None
    versus_random : MetricVerdict
        The winner against the best of C independent random classifiers (critical value, p-value, method).
    versus_models : SelectionResult or None
        The winner against the label-permutation null of the models given (max-T; raw and adjusted p-values
        per model, effective C); None where the metric applies to no model.
    versus_others : PairwiseResult or None
        The winner against each other model (paired tests, one-sided, Holm-adjusted) and the confidence set of
        the best; None with fewer than two applicable models.
    notes : tuple of str
    detectable : DetectableAUC or None
        The smallest AUC this test set detects with 80% power on the metric, at the report's C and alpha (exact,
        Lehmann alternative: :mod:`tablegen.compare.report.detectable`), so that a verdict that is not significant
        says whether the test set could have seen anything; None where the exact search is beyond its domain or the
        report's budget at this size (a note says which).

    Examples
    --------
    >>> y = np.r_[np.ones(4), np.zeros(4)]
    >>> report = evaluate(y, {"a": np.arange(8.0)[::-1], "b": np.arange(8.0)}, metrics=["auc"])["auc"]
    >>> report.winner, report.values, report.versus_models.method
    ('a', {'a': 1.0, 'b': 0.0}, 'exact')
    """

    metric: str
    values: dict
    intervals: dict
    winner: str | None
    versus_random: object
    versus_models: object
    versus_others: object = None
    notes: tuple = ()
    detectable: object = None

    def sentence(self) -> str:
        """Both verdicts on the winner in words, then the notes."""
        if self.winner is None:
            return f"{self.metric} is not applicable to any model."
        parts = [self.versus_random.sentence().split(" Note: ")[0]]
        if self.detectable is not None:
            parts.append(self.detectable.sentence() + ".")
        if self.versus_models is not None:
            parts.append("Against the models given: " + self.versus_models.sentence() + ".")
        if self.versus_others is not None:
            others = self.versus_others
            beaten = [b for (a, b), p in others.adjusted_p_values.items() if p <= others.alpha]
            method = ", ".join(dict.fromkeys(t.method for t in others.tests.values()))  # a bound among them too
            early = [t for t in others.tests.values() if getattr(t, "stopped_early", False)]
            if early:
                method += (f"; {len(early)} stopped at the early look, none of the first {early[0].early_look:,} "
                           f"patterns reaching: p = {early[0].p_value:.3g}, a smaller one needs R given")
            parts.append(f"Against each other model ({method}, Holm): {self.winner} beats "
                         f"{', '.join(beaten) if beaten else 'none of them'} at alpha = {others.alpha:g}; "
                         f"the confidence set of the best (the models the winner does not beat at alpha / (K - 1)) "
                         f"is {{{', '.join(others.best_set)}}}: it holds the best model with probability at least "
                         f"{1 - others.alpha:g}.")
        parts += [f"Note: {note}." for note in self.notes]
        return " ".join(parts)

    def to_dict(self) -> dict:
        return {"metric": self.metric, "values": dict(self.values),
                "intervals": {m: None if v is None else list(v) for m, v in self.intervals.items()},
                "winner": self.winner,
                "versus_random": self.versus_random.to_dict(),
                "versus_models": None if self.versus_models is None else self.versus_models.to_dict(),
                "versus_others": None if self.versus_others is None else self.versus_others.to_dict(),
                "notes": list(self.notes),
                "detectable": None if self.detectable is None else self.detectable.to_dict()}


@dataclass(frozen=True)
class Evaluation(TableRenderings):
    """What :func:`evaluate` found: one :class:`MetricReport` per metric (index it by metric name).

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> y = np.r_[np.ones(15), np.zeros(25)]
    >>> report = evaluate(y, {"a": y + rng.normal(size=40), "b": rng.normal(size=40)}, metrics=["auc"])
    >>> report["auc"].winner, report.C, report.to_frame().shape
    ('a', 2, (2, 7))
    """

    P_COLUMNS = P_COLUMNS

    P: int
    N: int
    C: int
    alpha: float
    models: tuple
    reports: dict
    labels: np.ndarray = field(repr=False)
    scores: dict = field(repr=False)

    def __getitem__(self, metric: str) -> MetricReport:
        return self.reports[metric]

    def __iter__(self):
        return iter(self.reports.values())

    def sentence(self) -> str:
        """Every metric's verdicts in words (plain text a paper can quote, with the methods)."""
        head = (f"{len(self.models)} models on {self.P + self.N:,} test items ({self.P:,} positive); "
                f"C = {self.C} models tried; alpha = {self.alpha:g}.")
        return " ".join([head, *(report.sentence() for report in self)])

    def to_dict(self) -> dict:
        """Plain Python values (JSON-ready)."""
        return {"P": self.P, "N": self.N, "C": self.C, "alpha": self.alpha, "models": list(self.models),
                "metrics": [report.to_dict() for report in self]}

    def rows(self) -> list[dict]:
        """One row per (metric, model): value and its 95% bootstrap interval, winner, the max-T adjusted p-value,
        the Holm-adjusted p-value of the winner against it, and whether it is in the confidence set of the best."""
        rows = []
        for report in self:
            selection = report.versus_models
            for model in self.models:
                value = report.values.get(model)
                low, high = report.intervals.get(model, (float("nan"), float("nan"))) or (None, None)
                rows.append({"metric": report.metric, "model": model,
                             "value": float("nan") if value is None else value, "95% CI low": low,
                             "95% CI high": high,
                             "winner": model == report.winner,
                             "max-T p (adjusted)": _p_of(selection, model),
                             "p vs winner (Holm)": _p_vs_winner(report.versus_others, model),
                             "in best set": _in_best_set(report.versus_others, model)})
        return rows

    def caption(self) -> str:
        """The LaTeX table's caption."""
        return (f"{len(self.models)} models, P = {self.P}, N = {self.N}, C ="
                f" {self.C}, alpha = {self.alpha:g}")

    def plot(self, path: str | os.PathLike | None = None) -> matplotlib.figure.Figure:
        """ROC curves of the models over the pointwise band of the best of C random rankings (saved to ``path``
        if given); needs matplotlib."""
        from tablegen.compare.report.plot import plot_evaluation

        return plot_evaluation(self, path)


def _in_best_set(others, model: str) -> bool:
    return others is not None and model in others.best_set


def _p_vs_winner(others, model: str) -> float:
    if others is None:
        return float("nan")
    return next((p for (a, b), p in others.adjusted_p_values.items() if b == model), float("nan"))


def _p_of(selection, model: str) -> float:
    if selection is None or model not in selection.adjusted_p_values:
        return float("nan")
    return selection.adjusted_p_values[model]


def evaluate(labels: ArrayLike, scores: ArrayLike | Mapping[str, ArrayLike], *, C: int | None = None,
             metrics: list[str] | None = None, alpha: float = 0.05, positive_label: object = None,
             method: str = "auto", R: int | None = None, seed: int | None = None,
             progress: Callable[[float, float], None] | None = None,
             max_seconds: float | None = None, device: str = "cpu") -> Evaluation:
    """Is the best of your models better than chance, and than the others? Every answer from one call.

    Parameters
    ----------
    labels : array_like
        The test items' true classes (two values; see ``positive_label``).  With more than two classes (any
        hashable values) the report is the K-class one: :func:`~tablegen.compare.report.multiclass.evaluate_multiclass`
        answers, and returns a :class:`~tablegen.compare.report.multiclass.MulticlassEvaluation`.
    scores : mapping, pandas.DataFrame or 2-D array
        Model name -> score vector (higher = more likely positive), or one column per model.  With more than two
        classes: model name -> predicted labels, n x K probability matrix or K x K confusion matrix.
    C : int, optional
        Every model tried, discarded ones too (default: the number given).
    metrics : list of str, optional
        Default ``auc``, ``best_accuracy``, ``best_f1``, ``best_balanced_accuracy``, ``average_precision``.
    alpha : float
        Level of every verdict (default 0.05, the convention for comparing classifiers; the verdict
        against random classifiers takes it too, so the report has one level, where
        :func:`tablegen.significance_test_from_scores` alone defaults to Forman & Cohen's 0.01).
    positive_label : optional
        The positive class (default 1 for {0, 1} or {-1, 1}, True for booleans).
    method, R, seed :
        The answer policy against random classifiers (:func:`tablegen.significance_test_from_scores`); R and
        seed also serve the permutation test when its exact null is over budget.
    progress : callable, optional
        ``progress(done, total)``: told, as each step ends, of the estimated single-core seconds of work done and
        in all (:func:`evaluation_cost`); ``done`` never falls and ends equal to ``total``.
    max_seconds : float, optional
        Refuse (:class:`~tablegen.errors.ResourceLimitError`, before any work, with the estimate) a report whose
        estimated single-core seconds exceed this (default ``TABLEGEN_TIME_LIMIT``, else one hour), as the
        lookups refuse theirs.  With ``device="cuda"`` the estimate is of the CPU's part alone: the steps on the GPU
        are named in the message as not estimated (no GPU cost model has been measured on hardware), and do not
        count against the limit.
    device : {"cpu", "cuda", "auto"}
        Where the Monte Carlo work is scored: the bootstrap resamples, the paired tests' swap patterns, the max-T
        label permutations, a simulated verdict against random classifiers (and, with more than two classes, the
        null's label permutations).  ``"cuda"`` runs the kernels' CUDA twins on a GPU with the same keyed streams, so
        the report is the same, bit for bit (an error naming ``device`` where there is no GPU or no numba-cuda);
        ``"auto"`` a GPU if one is visible, else the CPU.  Exact answers and BCa's jackknife run on the CPU.

    Returns
    -------
    Evaluation
        ``report["auc"].winner``, ``.versus_random``, ``.versus_models``; ``sentence()``, ``to_frame()``,
        ``to_markdown()``, ``to_latex()``, ``to_dict()``, ``plot()``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.r_[np.ones(20), np.zeros(30)]
    >>> report = evaluate(y, {"good": 2 * y + rng.normal(size=50), "noise": rng.normal(size=50)}, metrics=["auc"])
    >>> report["auc"].winner, report["auc"].versus_random.significant, report["auc"].versus_models.significant
    ('good', True, True)
    """
    from tablegen.compare.report.multiclass import evaluate_multiclass
    from tablegen.compare.report.multiclass_input import is_multiclass
    from tablegen.compare.selection.maxt import selection_tests_noting
    from tablegen.compute.kernels.cuda.device import resolve_device
    from tablegen.compute.kernels.orders import sorting_once
    from tablegen.compute.metrics_from_scores import check_binary_labels, check_model_scores
    from tablegen.lookup.from_scores import question_nulls, significance_test_from_scores

    device = resolve_device(device)  # first: a GPU asked for and missing is refused before any work
    if is_multiclass(labels, scores):  # more than two labels (a bare 2-D array with two stays binary): K-class
        return evaluate_multiclass(labels, scores, C=C, metrics=metrics, alpha=alpha, R=R, seed=seed,
                                   progress=progress, max_seconds=max_seconds, positive_label=positive_label,
                                   method=method, device=device)
    y = check_binary_labels(labels, positive_label)
    models = check_model_scores(scores, y.size)
    cost = evaluation_cost(y, models, C=C, metrics=metrics, method=method, R=R, device=device, alpha=alpha)
    check_report_time(cost, f"evaluating {len(models):,} models on {y.size:,} items ({', '.join(cost.metrics)})",
                      ("pass fewer models or ", Argument("metrics"), ", or a larger ", Argument("max_seconds")),
                      max_seconds)
    logger.info("evaluate: %s (%s)", cost.summary(), cost.describe())
    with sorting_once():  # each model's scores sorted once, whichever step asks first
        step = ReportSteps(cost, progress)
        nulls = question_nulls()  # each exact null built once, shared by the verdicts and the selection tests
        versus_random = significance_test_from_scores(y, models, metrics=metrics, C=C, alpha=alpha, method=method, R=R,
                                                      seed=seed, nulls=nulls, device=device)
        step.done("verdicts")
        P, N = versus_random.P, versus_random.N
        resamples = _report_resamples(y, versus_random, seed, device)  # every metric's intervals from one pass
        swaps = _swap_nulls(models, versus_random)  # each pair's swap patterns scored once for all its metrics
        # the max-T test of every metric with a winner from one set of label arrangements, each scored for all of them;
        # a metric whose models not given need a law tablegen cannot give here is refused (a note), the others answered
        tested = [verdict.metric for verdict in versus_random if verdict.winner is not None]
        arrangement_steps = _MaxTSteps(step, tested)
        selections, refused = {}, {}
        if tested:
            selections, refused = selection_tests_noting(
                y, models, metrics=tested, C=versus_random.C, alpha=alpha, seed=seed, nulls=nulls, device=device,
                R=R if R is not None and not _exact(y, models) else None, progress=arrangement_steps.within,
                law_progress=arrangement_steps.law)
        arrangement_steps.finish([verdict.metric for verdict in versus_random])
        reports = {}
        for verdict in versus_random:
            selection = selections.get(verdict.metric)
            why_not = ((f"no max-T answer against the models given: {refused[verdict.metric]}",)
                       if verdict.metric in refused else ())
            notes = tuple(verdict.notes) + why_not + _few_items_note(P, N)
            detectable, detectable_notes = _detectable(verdict, P, N, versus_random.C, alpha)
            step.done(verdict.metric, "detectable")
            notes += detectable_notes
            applicable = {m: models[m] for m in verdict.scores}
            others, pair_notes = _paired_tests(y, applicable, verdict.metric, alpha, seed, swaps, device)
            step.done(verdict.metric, "paired")
            notes += pair_notes
            intervals, interval_notes = _intervals(y, models, verdict, resamples)
            step.done(verdict.metric, "intervals")
            notes += interval_notes
            reports[verdict.metric] = MetricReport(verdict.metric, dict(verdict.scores), intervals, verdict.winner,
                                                   verdict, selection, others, notes, detectable)
            logger.info("evaluate: %s done", verdict.metric)
        step.finish()
        return Evaluation(P, N, versus_random.C, alpha, tuple(models), reports, y, models)


class _MaxTSteps:
    """The progress of the report's one max-T pass told as the metrics' "max-T arrangements" steps, in turn: each
    metric's share of the arrangements scored ends its step (the pass scores every metric on each arrangement, and
    their estimates are equal); :meth:`finish` ends the steps not ended and every metric's "max-T critical value"."""

    def __init__(self, step, metrics: list[str]):
        self.step, self.metrics, self.ended = step, metrics, 0

    def within(self, done: int, total: int) -> None:
        reached = len(self.metrics) * done / max(total, 1)
        while self.ended < len(self.metrics) and self.ended + 1 <= reached:
            self.step.done(self.metrics[self.ended], "max-T arrangements")
            self.ended += 1
        if self.ended < len(self.metrics):
            told = self.step.within(self.metrics[self.ended], "max-T arrangements")
            if told is not None:
                told(reached - self.ended, 1)

    def law(self, metric: str):
        """``progress(done, total)`` of ``metric``'s law's programmes for the competitors not given (minutes at a few
        thousand items with average precision), told as a share of its "max-T critical value" step after the
        arrangements and the critical values of the metrics before it."""
        if self.step.progress is None:
            return None
        self.within(1, 1)  # every metric's arrangements are scored by now
        before = self.metrics[:self.metrics.index(metric)] if metric in self.metrics else []
        start = self.step.ended + sum(self.step.cost.steps.get((m, "max-T critical value"), 0.0) for m in before)
        seconds = self.step.cost.steps.get((metric, "max-T critical value"), 0.0)
        return lambda done, total: self.step.tell(start + seconds * done / max(total, 1))

    def finish(self, metrics: list[str]) -> None:
        for metric in metrics:
            if metric not in self.metrics[:self.ended]:
                self.step.done(metric, "max-T arrangements")
            self.step.done(metric, "max-T critical value")


def _paired_tests(y: np.ndarray, models: dict, metric: str, alpha: float, seed, swaps=None,
                  device: str = "cpu") -> tuple[object, tuple]:
    """The winner of ``metric`` against each other model by the metric's own paired test, and the notes.

    The report's paired tests test the metric its verdict names, whatever the scores look like: DeLong for
    AUC, the swap permutation for the best-threshold metrics and average precision (0/1 predictions too,
    where ``method="auto"`` would test accuracy at 0.5 by McNemar's test instead, a winner of another
    metric).  A count at a cut-off k has no paired test here: the swap permutation is not defined across
    the cut-off, so the report says so and gives none.  ``swaps`` (:func:`_swap_nulls`) shares each pair's swap
    patterns between the metrics.
    """
    from tablegen.compare.pairwise.paired import pairwise_tests
    from tablegen.compute.metrics import get_metric

    if len(models) < 2:
        return None, ()
    spec = get_metric(metric)
    if spec.k is not None:
        return None, (f"no paired test between the models on {metric}: swapping two models' scores item by item "
                      f"ties items across the cut-off k = {spec.k}, where the metric is not defined (compare "
                      "their top-k predictions with tablegen.compare.paired_test(..., method='mcnemar', "
                      "threshold=...))",)
    return pairwise_tests(y, models, metric=metric, method=spec.paired_test, against="winner", alpha=alpha,
                          seed=seed, swap_nulls=swaps, device=device), ()


def _swap_nulls(models: dict, versus_random) -> object:
    """The report's :class:`~tablegen.compare.pairwise.tests.SwapNulls`: each metric tested by the swap permutation
    planned with its winner, so that a pair's patterns (the same for every metric) are scored once for all the
    metrics that test it."""
    from tablegen.compare.pairwise.tests import SwapNulls
    from tablegen.compare.pairwise.validation import kernel_column
    from tablegen.compute.metrics import get_metric

    nulls = SwapNulls()
    for verdict in versus_random:
        spec = get_metric(verdict.metric)
        if verdict.winner is not None and spec.k is None and spec.paired_test == "permutation":
            nulls.plan(kernel_column(spec)[0], models[verdict.winner])
    return nulls


def _report_resamples(y: np.ndarray, versus_random, seed, device: str = "cpu"):
    """The bootstrap values the report's intervals share (:class:`~.bootstrap.ReportResamples`): every metric of the
    report scored in one pass per (model, resample) when the first metric asks."""
    from tablegen.compare.pairwise.bootstrap import ReportResamples
    from tablegen.compute.cell import DEFAULT_SEED

    return ReportResamples(y, [verdict.metric for verdict in versus_random], DEFAULT_SEED if seed is None else seed,
                           device)


def _intervals(y: np.ndarray, models: dict, verdict, resamples) -> tuple[dict, tuple]:
    """Each applicable model's 95% bootstrap interval of the verdict's metric, and the notes on those that are a
    single value or none (:attr:`MetricReport.intervals`).  The models share their resamples, and so do the
    report's metrics: ``resamples`` (:func:`_report_resamples`) scores every metric of the models whose scores vary
    on the first call, one pass per (model, resample), and keeps the values for the next metrics; each interval is
    the one :func:`~tablegen.compare.pairwise.bootstrap.bootstrap_interval` gives the model alone."""
    from tablegen.compute.metrics import get_metric

    intervals, notes = {}, {}
    varying = [m for m in models if np.ptp(models[m][y == 1]) > 0 or np.ptp(models[m][y == 0]) > 0]
    spec = get_metric(verdict.metric)
    found = resamples.intervals({m: models[m] for m in varying}, verdict.metric)
    for m, value in verdict.scores.items():
        if m not in found:  # each class is resampled apart: the same scores in every resample
            intervals[m] = (float(value), float(value))
            notes[m] = (f"the scores of {m!r} do not vary within a class, so every bootstrap resample (positives "
                        f"and negatives resampled apart) has the same scores and the same {verdict.metric}: its "
                        f"interval is the single value [{value:.4g}, {value:.4g}]")
        elif np.isnan(found[m]).any() and spec.k is not None:
            intervals[m] = None
            notes[m] = (f"no bootstrap interval for the {verdict.metric} of {m!r}: in some resamples copies of one "
                        f"item (tied scores) straddle the cut-off k = {spec.k}, where the count is not defined")
        elif np.isnan(found[m]).any():
            intervals[m] = None
            notes[m] = (f"no bootstrap interval for the {verdict.metric} of {m!r}: the resamples' law is "
                        "degenerate (as when the observed value is the smallest or largest the resamples reach, or "
                        "every leave-one-out value is the same), where the BCa interval is undefined")
        else:
            intervals[m] = found[m]
    return intervals, tuple(notes.values())


def _detectable(verdict, P: int, N: int, C: int, alpha: float) -> tuple[object, tuple]:
    """The metric's minimum detectable AUC at 80% power, or None and the note saying why there is none
    (:func:`tablegen.compare.report.detectable.detectable_line`); nothing for a metric no model has."""
    from tablegen.compare.report.detectable import detectable_line

    if verdict.winner is None:
        return None, ()
    return detectable_line(verdict.metric, P, N, C, alpha)


def _exact(y: np.ndarray, models: dict) -> bool:
    from tablegen.compare.selection.engine import exact_fits

    return exact_fits(y.size, int(y.sum()), len(models))


def _few_items_note(P: int, N: int) -> tuple:
    fewer = min(P, N)
    if fewer >= FEW_ITEMS:
        return ()
    which = "positives" if P <= N else "negatives"
    return (f"only {fewer} {which}: every test here keeps its level, but only a large difference can be "
            "detected; the values are uncertain",)
