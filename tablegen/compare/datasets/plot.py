"""The picture of :func:`tablegen.compare.across_datasets`: mean ranks beside the pairwise verdicts.

Left: the algorithms from the best mean rank down (a dot per algorithm on the rank axis).  Right: the
matrix of adjusted p-values in the same order; a cell is green where the row's algorithm beats the
column's, red where it loses, grey where the pair does not differ at alpha.  Needs matplotlib
(imported on first use; the caller's backend is left alone).
"""

from __future__ import annotations

import numpy as np

from tablegen.common.figures import pyplot, saved

_WIN, _LOSS, _NONE = "#1b7837", "#c51b7d", "#e0e0e0"


def _cell_colours(result, order):
    """(m, m, 3) RGB: who wins each significant pair, from the row's point of view."""
    from matplotlib.colors import to_rgb

    where = {a: i for i, a in enumerate(order)}
    colours = np.tile(np.array(to_rgb(_NONE)), (len(order), len(order), 1))
    colours[np.arange(len(order)), np.arange(len(order))] = 1.0
    for c in result.significant_pairs():
        winner, loser = (c.a, c.b) if c.better == c.a else (c.b, c.a)
        colours[where[winner], where[loser]] = to_rgb(_WIN)
        colours[where[loser], where[winner]] = to_rgb(_LOSS)
    return colours


def _matrix_panel(ax, result, order) -> None:
    p = result.adjusted_p_matrix(order)
    ax.imshow(_cell_colours(result, order))
    for i in range(len(order)):
        for j in range(len(order)):
            if i != j:
                text = "<0.001" if p[i, j] < 1e-3 else f"{p[i, j]:.3f}"
                ax.text(j, i, text, ha="center", va="center", fontsize=8,
                        color="white" if p[i, j] <= result.alpha else "black")
    ax.set_xticks(range(len(order)), order, rotation=45, ha="right")
    ax.set_yticks(range(len(order)), order)
    ax.set_title(f"{result.correction_name}-adjusted p, {result.test_name} test\n"
                 f"green: row beats column, red: row loses, grey: no difference at alpha = {result.alpha:g}",
                 fontsize=9)


def _ranks_panel(ax, result, order) -> None:
    ranks = [result.mean_ranks[a] for a in order]
    ax.plot(ranks, range(len(order)), "o", color="black")
    for y, r in enumerate(ranks):
        ax.text(r, y - 0.25, f"{r:.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_yticks(range(len(order)), order)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlim(0.5, result.m + 0.5)
    ax.set_xlabel("mean rank (1 = best)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("algorithms by mean rank", fontsize=9)


def plot_across_datasets(result, path=None):
    """Draw the mean ranks and the pairwise verdicts of ``result``; save to ``path`` if given.

    Parameters
    ----------
    result : AcrossDatasetsResult
    path : str or os.PathLike, optional
        Image file (PNG, PDF, SVG, …); the figure is closed after saving.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from tablegen.compare import across_datasets
    >>> result = across_datasets([[0.9, 0.8, 0.7], [0.85, 0.8, 0.75], [0.95, 0.7, 0.72]])
    >>> figure = plot_across_datasets(result)
    >>> len(figure.axes)
    2
    """
    plt = pyplot()
    order = result.ranking()
    size = 0.55 * result.m + 2.5
    figure, (left, right) = plt.subplots(1, 2, figsize=(size * 1.9, size),
                                         gridspec_kw={"width_ratios": [1, 1.4]})
    _ranks_panel(left, result, order)
    _matrix_panel(right, result, order)
    f = result.friedman
    figure.suptitle(f"{result.m} algorithms on {result.n} data sets — Friedman chi2 = {f.statistic:.3g}, "
                    f"p = {f.p_value:.3g}; {len(result.significant_pairs())} of {len(result.pairwise)} pairs differ",
                    fontsize=10)
    figure.tight_layout()
    return saved(figure, path, plt)
