"""The answer of the K-class report (:func:`tablegen.compare.report.multiclass.evaluate_multiclass`): one
:class:`MulticlassMetricReport` per metric, gathered in a :class:`MulticlassEvaluation` (sentences, rows, JSON, the
F1 posterior of two models, the confusion-matrix plot).  Importable from :mod:`tablegen.compare.report.multiclass`
as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tablegen.compare.report.multiclass_tests import METRICS
from tablegen.compare.report.tables import TableRenderings
from tablegen.errors import Argument, TablegenInputError

if TYPE_CHECKING:
    import matplotlib.figure

#: The columns of :meth:`MulticlassEvaluation.rows` that hold p-values.
P_COLUMNS = ("p vs random", "max-T p (adjusted)", "p vs winner (Holm)")


@dataclass(frozen=True)
class MulticlassMetricReport:
    """One metric's answers in the K-class report.

    Attributes
    ----------
    metric : str
    values : dict
        Each model's value.
    intervals : dict
        Each model's 95% bootstrap interval (BCa, items resampled within each true class); ``(v, v)`` where every
        resample has the same value, None where the resamples' law is degenerate (a note says so).
    winner : str
        The model with the largest value (ties: the first given).
    versus_random : MulticlassVerdict
        Every model against the best of C random classifiers with its own predicted counts; the judged model is
        the one with the smallest p-value.
    versus_models : ~tablegen.compare.report.multiclass_selection.MulticlassSelection or None
        The max-T test over the models given; None for confusion matrices (a note says why).
    versus_others : PairwiseResult or None
        The winner against each other model; None with one model or confusion matrices.
    notes : tuple of str
    """

    metric: str
    values: dict
    intervals: dict
    winner: str
    versus_random: object
    versus_models: object = None
    versus_others: object = None
    notes: tuple = ()

    def sentence(self) -> str:
        """The verdicts on the winner in words, then the notes."""
        parts = [f"{self.metric}: against random classifiers, {self.versus_random.sentence()}"]
        if self.versus_models is not None:
            parts.append("Against the models given: " + self.versus_models.sentence() + ".")
        others = self.versus_others
        if others is not None:
            beaten = [b for (_, b), p in others.adjusted_p_values.items() if p <= others.alpha]
            method = ("exact McNemar" if self.metric == "accuracy" else
                      "swap permutation of the two models' predictions" if self.metric in METRICS else
                      "swap permutation of the two models' probability rows")
            parts.append(f"Against each other model ({method}, one-sided, Holm): {self.winner} beats "
                         f"{', '.join(beaten) if beaten else 'none of them'} at alpha = {others.alpha:g}; the "
                         f"confidence set of the best is {{{', '.join(others.best_set)}}}: it holds the best model "
                         f"with probability at least {1 - others.alpha:g}.")
        parts += [f"Note: {note}." for note in self.notes]
        return " ".join(parts)

    def to_dict(self) -> dict:
        from tablegen.common.outputs import json_ready

        return json_ready({"metric": self.metric, "values": self.values,
                           "intervals": {m: None if v is None else list(v) for m, v in self.intervals.items()},
                           "winner": self.winner, "versus_random": self.versus_random.to_dict(),
                           "versus_models": None if self.versus_models is None else self.versus_models.to_dict(),
                           "versus_others": None if self.versus_others is None else self.versus_others.to_dict(),
                           "notes": list(self.notes)})


@dataclass(frozen=True)
class MulticlassEvaluation(TableRenderings):
    """What :func:`tablegen.evaluate` found with more than two classes: one :class:`MulticlassMetricReport` per
    metric (index it by metric name).

    Examples
    --------
    >>> from tablegen.compare.report.multiclass import evaluate_multiclass
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 3, size=60)
    >>> report = evaluate_multiclass(y, {"good": np.where(rng.random(60) < 0.8, y, (y + 1) % 3),
    ...                                  "noise": rng.integers(0, 3, size=60)}, metrics=["accuracy"])
    >>> report["accuracy"].winner, report["accuracy"].versus_random.significant, report.to_frame().shape
    ('good', True, (2, 8))
    """

    P_COLUMNS = P_COLUMNS

    n: int
    classes: tuple
    true_counts: tuple
    C: int
    alpha: float
    models: tuple
    source: str
    reports: dict
    confusions: dict = field(repr=False)
    notes: tuple = ()

    @property
    def K(self) -> int:
        return len(self.classes)

    def __getitem__(self, metric: str) -> MulticlassMetricReport:
        return self.reports[metric]

    def __iter__(self):
        return iter(self.reports.values())

    def sentence(self) -> str:
        """Every metric's verdicts in words (plain text a paper can quote, with the methods)."""
        head = (f"{len(self.models)} models on {self.n:,} test items in {self.K} classes; C = {self.C} models "
                f"tried; alpha = {self.alpha:g}.")
        return " ".join([head, *(f"Note: {note}." for note in self.notes), *(report.sentence() for report in self)])

    def to_dict(self) -> dict:
        """Plain Python values, strict JSON (None where a number does not exist)."""
        from tablegen.common.outputs import json_ready

        return json_ready({"n": self.n, "K": self.K, "classes": [str(c) for c in self.classes],
                           "true_counts": list(self.true_counts), "C": self.C, "alpha": self.alpha,
                           "models": list(self.models), "source": self.source, "notes": list(self.notes),
                           "confusion_matrices": {m: c.tolist() for m, c in self.confusions.items()},
                           "metrics": [report.to_dict() for report in self]})

    def rows(self) -> list[dict]:
        """One row per (metric, model): value, 95% bootstrap interval, its p against the best of C random
        classifiers, winner, the max-T adjusted p, the Holm-adjusted p of the winner against it, in the best set."""
        rows = []
        for report in self:
            for model in self.models:
                interval = report.intervals.get(model)
                low, high = (None, None) if interval is None else interval
                selection, others = report.versus_models, report.versus_others
                rows.append({"metric": report.metric, "model": model, "value": report.values[model],
                             "95% CI low": low, "95% CI high": high,
                             "p vs random": report.versus_random.tests[model].p_value,
                             "winner": model == report.winner,
                             "max-T p (adjusted)": None if selection is None else
                             selection.adjusted_p_values[model],
                             "p vs winner (Holm)": None if others is None else next(
                                 (p for (_, b), p in others.adjusted_p_values.items() if b == model), None),
                             "in best set": others is not None and model in others.best_set})
        return rows

    def caption(self) -> str:
        """The LaTeX table's caption."""
        return (f"{len(self.models)} models, n = {self.n}, K = {self.K}, C ="
                f" {self.C}, alpha = {self.alpha:g}")

    def f1_posterior(self, a: str | None = None, b: str | None = None, average: str = "macro",
                     **options: object) -> object:
        """Zhang et al.'s Bayesian comparison of two models' F1 (:func:`tablegen.compare.f1_posterior` on their
        confusion matrices; ``options`` are its keywords): by default the macro-F1 winner against the runner-up.

        Examples
        --------
        >>> from tablegen.compare.report.multiclass import evaluate_multiclass
        >>> y = [0, 1, 2] * 10
        >>> report = evaluate_multiclass(y, {"a": y, "b": [0, 1, 1] * 10}, metrics=["accuracy"])
        >>> round(report.f1_posterior(samples=2000).observed_delta, 3)  # a's macro-F1 1, b's (1 + 2/3 + 0) / 3
        0.444
        """
        from tablegen.compare.f1.posterior import f1_posterior

        if a is None or b is None:
            values = {m: float(v) for m, v in zip(self.models, _macro_f1(self))}
            ranked = sorted(self.models, key=lambda m: -values[m])
            if len(ranked) < 2:
                raise TablegenInputError.naming(Argument("a"), " and ", Argument("b"),
                                                ": the report has one model; the comparison needs two")
            a = ranked[0] if a is None else a
            b = next(m for m in ranked if m != a) if b is None else b
        for name, model in (("a", a), ("b", b)):
            if model not in self.confusions:
                raise TablegenInputError.naming(Argument(name), f" must name a model of the report "
                                                f"({', '.join(self.models)}), got {model!r}")
        empty = [c for c, count in zip(self.classes, self.true_counts) if count == 0]
        if empty:
            raise TablegenInputError(
                f"the report's classes {', '.join(map(repr, empty))} have no items (only predicted): Zhang's F1 "
                "comparison needs items in every class; call tablegen.compare.f1_posterior on the confusion "
                "matrices without them")
        return f1_posterior(self.confusions[a], self.confusions[b], average=average, **options)

    def plot(self, path: str | os.PathLike | None = None) -> matplotlib.figure.Figure:
        """Each model's confusion matrix (row shares), titled with its accuracy beside the null's critical value
        (saved to ``path`` if given); needs matplotlib."""
        from tablegen.compare.report.multiclass_plot import plot_multiclass

        return plot_multiclass(self, path)


def _macro_f1(evaluation: MulticlassEvaluation) -> list[float]:
    """Each model's macro-F1 from its confusion matrix (the report's arithmetic)."""
    from tablegen.compute.kernels.multiclass_resample import confusion_scores

    matrices = np.stack([evaluation.confusions[m] for m in evaluation.models]).astype(np.int64)
    f1_classes = np.count_nonzero((matrices.sum(axis=2) + matrices.sum(axis=1)) > 0, axis=1).astype(np.int64)
    out = np.empty((len(evaluation.models), len(METRICS)))
    confusion_scores(matrices, f1_classes, out)
    return out[:, METRICS.index("macro_f1")].tolist()
