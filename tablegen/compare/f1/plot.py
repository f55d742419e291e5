"""Picture of a Bayesian F1 comparison: δ's posterior, its HDI, the ROPE, the ROPE Bayes factor and the decision.

Needs matplotlib (``pip install 'tablegen[plots]'``); the error says so when it is missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tablegen.common.figures import pyplot, saved
from tablegen.compare.f1.summary import decision_text

if TYPE_CHECKING:
    import os

    from matplotlib.figure import Figure

    from tablegen.compare.f1.results import F1Comparison  # for the annotation only: no import at run time


def _shares_text(result) -> str:
    s = result.summary
    return (f"δ < 0          {s.below_zero:7.2%}\nδ > 0          {s.above_zero:7.2%}\n"
            f"left of ROPE   {s.left_of_rope:7.2%}\ninside ROPE    {s.in_rope:7.2%}\n"
            f"right of ROPE  {s.right_of_rope:7.2%}\n{_bayes_factor_text(result.bayes_factor)}")


def _bayes_factor_text(bf) -> str:
    if bf.bound is not None:
        return bf.short_text()
    return f"{bf.short_text()}\n  95% {bf.low:.3g} to {bf.high:.3g}"


def plot_f1_comparison(result: F1Comparison, path: str | os.PathLike[str] | None = None,
                       labels: tuple[str, str] = ("A", "B")) -> Figure:
    """Draw δ's posterior density with its HDI, the ROPE, 0 and the decision in the title.

    A box gives the shares of δ left of / inside / right of the ROPE and on each side of 0, and the ROPE
    Bayes factor BF₀₁ (:class:`tablegen.compare.f1.bayes_factor.IntervalBayesFactor`).

    Parameters
    ----------
    result : tablegen.compare.F1Comparison
    path : str or os.PathLike, optional
        Write the figure there (format from the suffix, e.g. ``.png``) and close it.
    labels : (str, str)
        Names of classifiers A and B in the title and axis label (two strings).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from tablegen.compare import f1_posterior
    >>> result = f1_posterior([[45, 3, 2], [4, 40, 6], [1, 2, 47]], [[40, 6, 4], [8, 33, 9], [3, 5, 42]],
    ...                       samples=5_000, seed=1)
    >>> figure = plot_f1_comparison(result)
    >>> figure.axes[0].get_title(loc="left")[:5]
    'A ≫ B'
    >>> figure.axes[0].texts[0].get_text().splitlines()[-2][:17]
    'ROPE BF01 = 0.194'
    """
    from tablegen.compare.f1.validation import check_plot_args

    labels = check_plot_args(result, path, labels)
    plt = pyplot()
    s, rope, delta = result.summary, result.rope, result.delta
    figure, axes = plt.subplots(figsize=(8, 4.5), layout="constrained")
    low, high = np.quantile(delta, [0.0005, 0.9995])
    span = max(high - low, rope[1] - rope[0])
    edges = np.linspace(min(low, rope[0]) - 0.05 * span, max(high, rope[1]) + 0.05 * span, 121)
    heights, _, _ = axes.hist(delta, bins=edges, density=True, color="#4C72B0", alpha=0.6,
                              label=f"posterior of δ ({result.samples:,} draws)")
    top = heights.max()
    axes.axvspan(*rope, color="#DD8452", alpha=0.3, label=f"ROPE ({rope[0]:+g}, {rope[1]:+g})")
    axes.axvline(0.0, color="black", linewidth=0.8, linestyle=":")
    axes.plot([s.hdi_low, s.hdi_high], [0.04 * top] * 2, color="black", linewidth=5, solid_capstyle="butt",
              label=f"{s.hdi_mass:.0%} HDI [{s.hdi_low:+.4f}, {s.hdi_high:+.4f}]")
    axes.plot([result.observed_delta], [0.04 * top], marker="v", color="#C44E52", markersize=9, linestyle="none",
              label=f"observed δ = {result.observed_delta:+.4f}")
    axes.text(0.015, 0.96, _shares_text(result), transform=axes.transAxes, va="top", ha="left", family="monospace",
              fontsize=8.5, bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "0.8"})
    axes.legend(loc="upper right", fontsize=8.5, framealpha=0.9)
    axes.set_ylim(0, top * 1.45)
    axes.set(xlabel=f"δ = {result.average} F1 of {labels[0]} − {result.average} F1 of {labels[1]}",
             ylabel="posterior density")
    axes.set_title(f"{labels[0]} {result.decision} {labels[1]}: {decision_text(result.decision, *labels)}",
                   loc="left", fontsize=13, fontweight="bold")
    return saved(figure, path, plt)
