"""``tablegen evaluate`` on a K-class file: each model against the best of C random classifiers, per metric.

A reduced report built from :func:`tablegen.multiclass_test`, one call per model and metric: each model's value,
its p-value against the best of C random classifiers sharing its predicted counts, the critical value and the
method (exact, or Monte Carlo with its interval).  The winner of a metric is the model with the smallest p-value
(the larger value where p-values tie, then the first listed): where the models' predicted counts differ, each
model's p is its own conditional one, and judging the smallest against the best of C keeps the level for
independent random classifiers (``docs/explanation/multiclass-accuracy.md``).  A file of class probabilities is
scored by each row's most probable class (the first in the classes' order where several tie).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tablegen.errors import Argument, TablegenInputError


@dataclass(frozen=True)
class MulticlassReport:
    """Per metric, each model's :class:`~tablegen.lookup.multiclass.MulticlassTest` and the winner.

    Attributes
    ----------
    results : dict
        Metric -> {model: MulticlassTest}.
    winners : dict
        Metric -> the model with the smallest p-value.
    classes : tuple of str
    n, C : int
    alpha : float
    layout : str
        The file's layout (``labels`` or ``probabilities``).
    """

    results: dict
    winners: dict
    classes: tuple
    n: int
    C: int
    alpha: float
    layout: str

    def rows(self) -> list[dict]:
        """One row per (metric, model): value, p against the best of C, critical value, method, winner."""
        return [{"metric": metric, "model": model, "value": r.value, "p (best of C)": r.p_value,
                 "critical value": r.critical_value, "method": r.method, "significant": r.significant,
                 "winner": model == self.winners[metric]}
                for metric, by_model in self.results.items() for model, r in by_model.items()]

    def sentences(self) -> list[str]:
        """Each metric's winner's verdict in words."""
        return [f"{metric}: {self.winners[metric]} wins (smallest p); "
                + by_model[self.winners[metric]].sentence() for metric, by_model in self.results.items()]

    def heading(self) -> str:
        return (f"{len(next(iter(self.results.values())))} models on {self.n:,} test items, {len(self.classes)} "
                f"classes; C = {self.C} models tried; alpha = {self.alpha:g}")

    def to_dict(self) -> dict:
        """Plain values for JSON: the question, and per metric the winner and each model's test."""
        return {"n": self.n, "classes": list(self.classes), "C": self.C, "alpha": self.alpha, "layout": self.layout,
                "metrics": {metric: {"winner": self.winners[metric],
                                     "models": {model: r.to_dict() for model, r in by_model.items()}}
                            for metric, by_model in self.results.items()}}

    def to_text(self) -> str:
        from tablegen.compare.report.tables import cell_text, p_text

        lines = [self.heading(), f"{'metric':<20}{'model':<20}{'value':>10}{'p (best of C)':>15}"
                                 f"{'critical value':>16}  {'method':<12}{'winner':<7}significant"]
        for row in self.rows():
            lines.append(f"{row['metric']:<20}{row['model'][:19]:<20}{cell_text(row['value']):>10}"
                         f"{p_text(row['p (best of C)']):>15}{cell_text(row['critical value']):>16}  "
                         f"{row['method']:<12}{'yes' if row['winner'] else '':<7}"
                         f"{'yes' if row['significant'] else ''}")
        return "\n".join([*lines, "", *self.sentences()])

    def to_markdown(self) -> str:
        from tablegen.compare.report.tables import markdown_table

        return "\n".join([markdown_table(self.rows(), p_columns=("p (best of C)",)), "",
                          *(f"- {s}" for s in self.sentences())])

    def to_latex(self) -> str:
        from tablegen.compare.report.tables import latex_table

        return latex_table(self.rows(), caption=self.heading(), p_columns=("p (best of C)",))


def multiclass_cost(labels: np.ndarray, predicted: dict[str, np.ndarray], metrics: list[str], C: int, alpha: float,
                    R: int | None) -> list[float]:
    """Estimated single-core seconds of each (metric, model) test, in the report's order: the exact law's where
    :func:`tablegen.multiclass_test` answers exactly, else R replicates of the permutation kernel."""
    from tablegen.compute.exact.multiclass import accuracy_seconds
    from tablegen.compute.limits import time_limit_seconds
    from tablegen.lookup.multiclass import EXACT_METRICS, SECONDS_PER_ELEMENT_STEP, default_replicates

    true = dict(zip(*(array.tolist() for array in np.unique(labels, return_counts=True))))
    replicates = default_replicates(C, alpha) if R is None else R
    carlo = replicates * labels.size * SECONDS_PER_ELEMENT_STEP
    exact = {}
    for model, values in predicted.items():
        counts = dict(zip(*(array.tolist() for array in np.unique(values, return_counts=True))))
        classes = sorted(set(true) | set(counts))
        seconds = accuracy_seconds([true.get(c, 0) for c in classes], [counts.get(c, 0) for c in classes])
        exact[model] = seconds if seconds <= time_limit_seconds() else carlo
    return [exact[model] if metric in EXACT_METRICS else carlo for metric in metrics for model in predicted]


def evaluate_multiclass(read, *, C: int | None, metrics: list[str] | None, alpha: float, R: int | None,
                        seed: int | None, progress: Callable[[float, float], None] | None = None,
                        max_seconds: float | None = None) -> MulticlassReport:
    """The reduced K-class report of a file read by
    :func:`tablegen.cli.multiclass_csv.read_multiclass_predictions`.

    Refuses (before any work) a report whose estimated single-core seconds exceed ``max_seconds`` (default
    ``TABLEGEN_TIME_LIMIT``); tells ``progress(done, total)`` the estimated seconds done after each test.
    """
    from tablegen.compute.limits import check_time
    from tablegen.lookup.multiclass import multiclass_test

    metrics = check_multiclass_metrics(metrics)
    predicted = read.predicted_labels()
    C = len(predicted) if C is None else C
    if C < len(predicted):
        raise TablegenInputError(f"--C: C = {C} is less than the {len(predicted)} models given; C counts every "
                                 "model tried, discarded ones too")
    costs = multiclass_cost(read.labels, predicted, metrics, C, alpha, R)
    check_time(sum(costs), f"evaluating {len(predicted):,} models on {read.labels.size:,} items "
                           f"({', '.join(metrics)})", ("pass fewer models or ", Argument("metrics"), ", fewer ",
                                                        Argument("R"), ", or a larger ", Argument("max_seconds")),
               limit=max_seconds)
    done, total = 0.0, max(sum(costs), 1e-9)
    if progress is not None:
        progress(0.0, total)
    results, winners, step = {}, {}, iter(costs)
    for metric in metrics:
        results[metric] = {}
        for model, values in predicted.items():
            results[metric][model] = multiclass_test(read.labels, values, metric=metric, C=C, alpha=alpha, R=R,
                                                     seed=seed)
            done += next(step)
            if progress is not None:
                progress(min(done, total), total)
        order = sorted(results[metric].items(), key=lambda item: (item[1].p_value, -item[1].value))
        winners[metric] = order[0][0]
    return MulticlassReport(results, winners, read.classes, int(read.labels.size), C, alpha, read.layout)


def check_multiclass_metrics(metrics: list[str] | None) -> list[str]:
    """The metrics asked for a K-class file (default every one :func:`tablegen.multiclass_test` answers), each
    known; an unknown one refused naming ``--metrics`` and what is known.

    Examples
    --------
    >>> check_multiclass_metrics(None)
    ['accuracy', 'kappa', 'balanced_accuracy', 'macro_f1']
    """
    from tablegen.lookup.multiclass import METRICS

    if metrics is None:
        return list(METRICS)
    unknown = [metric for metric in metrics if metric not in METRICS]
    if unknown:
        raise TablegenInputError(f"--metrics: unknown metric {unknown[0]!r} for a file of more than two classes "
                                 f"(known: {', '.join(METRICS)})")
    if len(set(metrics)) != len(metrics):
        raise TablegenInputError(f"--metrics names a metric twice: {' '.join(metrics)}")
    return list(metrics)
