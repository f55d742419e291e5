"""The report's picture: the models' ROC curves over the band of the best of C random rankings, and beside
them the paired verdicts of each metric's winner against every other model.

At false-positive rate j / N a random ranking's true-positive count is the number of positives drawn
before the j-th negative, a negative hypergeometric law (scipy's ``nhypergeom(P + N, P, j)``); the best of
C independent random rankings stays below its (1 - alpha)^(1/C) quantile with probability 1 - alpha
there.  The band is that quantile at every j: exact, and pointwise (not simultaneous over j), as the
legend says.
"""

from __future__ import annotations

import numpy as np


def random_roc_band(P: int, N: int, C: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, TPR bound) as steps: on [j / N, (j + 1) / N) a random ranking's ROC curve rises to the positives
    before the (j + 1)-th negative; the bound is that count's (1 - alpha)^(1/C) quantile over P, j = 0..N
    (1 after the last negative).

    Examples
    --------
    >>> fpr, tpr = random_roc_band(2, 2, 1, 0.5)  # the 6 rankings of 2 + 2: positives before the 1st negative
    >>> fpr.tolist(), tpr.tolist()                # are 0, 1, 2 with probability 1/2, 1/3, 1/6: median 0
    ([0.0, 0.5, 1.0], [0.0, 0.5, 1.0])
    """
    from scipy.stats import nhypergeom

    from tablegen.compute.exact.nulls import TIE_RTOL
    from tablegen.compute.stats import upper_tail_probability

    q = (1.0 - float(upper_tail_probability(C, alpha))) * (1.0 - TIE_RTOL)  # F(x) = q exactly counts as reaching
    counts = nhypergeom.ppf(q, P + N, P, np.arange(1, N + 1))
    return np.arange(N + 1) / N, np.r_[counts, P] / P


def roc_curve(labels: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, TPR) at every cut-off between groups of tied scores (ties kept together)."""
    from tablegen.compute.metrics_from_scores import threshold_groups

    g = threshold_groups(labels, scores)
    return g.fp / g.N, g.tp / g.P


def plot_evaluation(evaluation, path=None):
    """Draw the ROC curves of ``evaluation``'s models over the random band; save to ``path`` if given."""
    from tablegen.common.figures import pyplot, saved

    plt = pyplot()
    figure, (axis, grid) = plt.subplots(1, 2, figsize=(12.8, 7.2), gridspec_kw={"width_ratios": [1.15, 1]})
    fpr, bound = random_roc_band(evaluation.P, evaluation.N, evaluation.C, evaluation.alpha)
    axis.fill_between(fpr, 0.0, bound, step="post", color="0.85",
                      label=f"best of C = {evaluation.C} random rankings: below this with probability "
                            f"{1 - evaluation.alpha:g} (pointwise)")
    axis.plot([0, 1], [0, 1], color="0.5", linewidth=0.8, linestyle=":")
    auc = evaluation.reports.get("auc")
    for name, scores in evaluation.scores.items():
        x, y = roc_curve(evaluation.labels, scores)
        label = name if auc is None else f"{name} (AUC {auc.values.get(name, float('nan')):.3f}" + _p_text(auc, name)
        axis.plot(x, y, drawstyle="default", linewidth=1.6, label=label)
    axis.set(xlabel="false-positive rate", ylabel="true-positive rate", xlim=(0, 1), ylim=(0, 1.01),
             title=f"{len(evaluation.models)} models, P = {evaluation.P:,}, N = {evaluation.N:,}")
    axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.11), fontsize=7.5, frameon=False, ncol=1)
    _verdict_matrix(grid, evaluation)
    figure.tight_layout()
    return saved(figure, path, plt)


def _verdict_matrix(axis, evaluation) -> None:
    """Metric x model: each metric's winner, the Holm-adjusted p-value of the winner against every other model
    (green where the winner beats it at alpha, grey where it does not), a dot on the models in the confidence
    set of the best."""
    import matplotlib.colors as colors

    metrics, models = list(evaluation.reports), list(evaluation.models)
    state = np.full((len(metrics), len(models)), np.nan)
    texts = {}
    for i, report in enumerate(evaluation):
        others = report.versus_others
        for j, model in enumerate(models):
            if model == report.winner:
                state[i, j], texts[i, j] = 2, "winner"
            elif others is not None:
                p = next((q for (_, b), q in others.adjusted_p_values.items() if b == model), None)
                if p is not None:
                    state[i, j] = 1 if p <= others.alpha else 0
                    texts[i, j] = f"{p:.2g}" + (" •" if model in others.best_set else "")
    palette = colors.ListedColormap(["0.82", "#7fbf7f", "#3a6ea5"])
    axis.imshow(np.ma.masked_invalid(state), cmap=palette, vmin=0, vmax=2, aspect="auto")
    for (i, j), text in texts.items():
        axis.text(j, i, text, ha="center", va="center", fontsize=7.5, color="white" if state[i, j] == 2 else "black")
    axis.set_xticks(range(len(models)), models, rotation=45, ha="right", fontsize=8)
    axis.set_yticks(range(len(metrics)), metrics, fontsize=8)
    axis.set_title(f"winner against each model: Holm-adjusted p (green: beaten at alpha = {evaluation.alpha:g})\n"
                   "• in the confidence set of the best (not beaten at alpha / (K - 1))", fontsize=9)


def _p_text(report, name: str) -> str:
    selection = report.versus_models
    if selection is None or name not in selection.adjusted_p_values:
        return ")"
    return f", max-T p {selection.adjusted_p_values[name]:.2g})"
