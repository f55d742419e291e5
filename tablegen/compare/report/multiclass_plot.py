"""The K-class report's picture: each model's confusion matrix (each row as shares of its true class), titled with
the model's accuracy beside the critical value of the best of C random classifiers with its predicted counts (the
smallest significant accuracy: exact, or a Monte Carlo estimate, as its verdict says)."""

from __future__ import annotations

import math

import numpy as np


def plot_multiclass(evaluation, path=None):
    """Draw ``evaluation``'s confusion matrices in a grid; save to ``path`` if given."""
    from tablegen.common.figures import pyplot, saved

    plt = pyplot()
    models = list(evaluation.models)
    columns = min(4, len(models))
    rows = math.ceil(len(models) / columns)
    size = 3.2 + 0.12 * evaluation.K
    figure, axes = plt.subplots(rows, columns, figsize=(size * columns, size * rows), squeeze=False)
    accuracy = evaluation.reports.get("accuracy")
    labels = [str(c) for c in evaluation.classes]
    for axis, model in zip(axes.flat, models):
        matrix = evaluation.confusions[model].astype(float)
        totals = matrix.sum(axis=1, keepdims=True)
        shares = np.divide(matrix, totals, out=np.zeros_like(matrix), where=totals > 0)
        axis.imshow(shares, cmap="Blues", vmin=0.0, vmax=1.0)
        if evaluation.K <= 12:
            for (i, j), count in np.ndenumerate(evaluation.confusions[model]):
                axis.text(j, i, str(count), ha="center", va="center", fontsize=7,
                          color="white" if shares[i, j] > 0.6 else "black")
        ticks = range(evaluation.K)
        axis.set_xticks(ticks, labels, rotation=90 if evaluation.K > 6 else 0, fontsize=7)
        axis.set_yticks(ticks, labels, fontsize=7)
        axis.set_xlabel("predicted", fontsize=8)
        axis.set_ylabel("true", fontsize=8)
        axis.set_title(_title(model, accuracy), fontsize=8)
    for axis in list(axes.flat)[len(models):]:
        axis.axis("off")
    figure.suptitle(f"{len(models)} models, n = {evaluation.n:,}, K = {evaluation.K}, C = {evaluation.C}, "
                    f"alpha = {evaluation.alpha:g}: accuracy against the critical value of the best of C random "
                    "classifiers with the model's predicted counts (* significant)", fontsize=9)
    figure.tight_layout()
    return saved(figure, path, plt)


def _title(model: str, report) -> str:
    if report is None:
        return model
    test = report.versus_random.tests[model]
    critical = ("no significant value" if test.critical_value is None else
                f"critical {test.critical_value:.3f}" + (" (MC)" if test.method != "exact" else ""))
    mark = " *" if test.significant else ""
    return f"{model}: accuracy {test.value:.3f}{mark}\n{critical}, p = {test.p_value:.3g}"
