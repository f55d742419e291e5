"""Pictures of the Bayesian comparisons: one pair's posterior in the probability simplex, and every pair's
probabilities as a matrix.  Needs matplotlib (imported on first use; the caller's backend is left alone).

The simplex: each posterior draw (θ_A, θ_ROPE, θ_B) is a point of the triangle whose corners are
"A better" (bottom left), "B better" (bottom right) and "equivalent" (top).  The three segments from the
centre to the edges' midpoints split it into the regions where θ_A, θ_ROPE or θ_B is the largest; the
share of draws in each region is the reported probability.
"""

from __future__ import annotations

import numpy as np

from tablegen.common.figures import pyplot, saved
from tablegen.compare.datasets.dirichlet import format_probability

_CORNERS = np.array([[0.0, 0.0], [0.5, np.sqrt(3) / 2], [1.0, 0.0]])  # A better, ROPE, B better
_A, _ROPE, _B = "#1b7837", "#7f7f7f", "#c51b7d"
#: Most draws drawn in the simplex (a random subset beyond; the probabilities use them all).
MAX_POINTS = 50_000


def project(theta: np.ndarray) -> np.ndarray:
    """(k, 3) barycentric (θ_A, θ_ROPE, θ_B) -> (k, 2) points of the triangle.

    Examples
    --------
    >>> project(np.array([[1.0, 0, 0], [0, 0, 1.0]])).tolist()
    [[0.0, 0.0], [1.0, 0.0]]
    """
    return np.asarray(theta) @ _CORNERS


def _triangle(ax) -> None:
    ax.plot(*np.vstack([_CORNERS, _CORNERS[:1]]).T, color="black", lw=1)
    centre = project(np.full((1, 3), 1 / 3))[0]
    for k in range(3):
        middle = (_CORNERS[k] + _CORNERS[(k + 1) % 3]) / 2
        ax.plot([centre[0], middle[0]], [centre[1], middle[1]], color="black", lw=0.8, ls="--")


def plot_simplex(pair, path=None):
    """Draw ``pair``'s posterior draws in the simplex; save to ``path`` if given.

    Examples
    --------
    >>> from tablegen.compare import bayesian_pair
    >>> pair = bayesian_pair([0.9, 0.8, 0.85, 0.7], [0.8, 0.82, 0.84, 0.6], samples=500)
    >>> len(plot_simplex(pair).axes)
    2
    """
    plt = pyplot()
    figure, ax = plt.subplots(figsize=(6.4, 5.8))
    draws = pair.draws
    if draws.shape[0] > MAX_POINTS:
        draws = draws[np.random.default_rng(0).choice(draws.shape[0], MAX_POINTS, replace=False)]
    points = project(draws)
    hexes = ax.hexbin(points[:, 0], points[:, 1], gridsize=60, mincnt=1, cmap="viridis", bins="log",
                      extent=(0, 1, 0, np.sqrt(3) / 2))
    figure.colorbar(hexes, ax=ax, shrink=0.6, label="draws per cell (log)")
    _triangle(ax)
    shown = [format_probability(p, e, pair.samples) for p, e in zip(pair.probabilities, pair.mc_error)]
    labels = (f"{pair.a} better\np = {shown[0]}", f"equivalent (|d| ≤ {pair.rope:g})\np = {shown[1]}",
              f"{pair.b} better\np = {shown[2]}")
    for (x, y), text, colour, (ha, va, dy) in zip(_CORNERS, labels, (_A, _ROPE, _B),
                                                  (("center", "top", -0.04), ("center", "bottom", 0.03),
                                                   ("center", "top", -0.04))):
        ax.text(x, y + dy, text, ha=ha, va=va, fontsize=9, color=colour, fontweight="bold")
    ax.set_xlim(-0.2, 1.2)
    ax.set_ylim(-0.2, 1.08)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(f"Bayesian {pair.test.replace('_', '-')} test, {pair.n} data sets, prior {pair.prior:g} at 0\n"
                 f"decision at {pair.probability:g}: {pair.verdict}"
                 + ("" if pair.settled else " (not settled)") + f"  —  {pair.samples} draws, seed {pair.seed}",
                 fontsize=9)
    figure.tight_layout()
    return saved(figure, path, plt)


def _cell(ax, i, j, p, decision) -> None:
    text = f"{p[0]:.2f}\n({p[1]:.2f})"
    ax.text(j, i, text, ha="center", va="center", fontsize=7.5,
            color="white" if decision in ("a better", "b better") else "black")


def plot_pairs(result, path=None, order=None):
    """Every pair: cell [row, column] shows P(row better) and, in brackets, P(equivalent); green where the
    row is decided better, pink where worse, grey where equivalent, white where undecided.

    Examples
    --------
    >>> from tablegen.compare import bayesian_pairs
    >>> result = bayesian_pairs([[0.9, 0.8, 0.7], [0.85, 0.8, 0.75], [0.95, 0.7, 0.72]], samples=500)
    >>> len(plot_pairs(result).axes)
    1
    """
    from matplotlib.colors import to_rgb

    plt = pyplot()
    order = list(order or result.algorithms)
    m = len(order)
    where = {a: k for k, a in enumerate(order)}
    colours = np.ones((m, m, 3))
    size = 0.7 * m + 2.2
    figure, ax = plt.subplots(figsize=(size * 1.15, size))
    for pair in result.pairs:
        i, j = where[pair.a], where[pair.b]
        fill = {"a better": (_A, _B), "b better": (_B, _A), "equivalent (ROPE)": ("#c8c8c8", "#c8c8c8")}
        if pair.decision in fill:
            colours[i, j], colours[j, i] = map(to_rgb, fill[pair.decision])
        _cell(ax, i, j, pair.probabilities, pair.decision)
        flipped = {"a better": "b better", "b better": "a better"}.get(pair.decision, pair.decision)
        _cell(ax, j, i, pair.probabilities[::-1], flipped)
    colours[np.arange(m), np.arange(m)] = to_rgb("#404040")
    ax.imshow(colours)
    ax.set_xticks(range(m), order, rotation=45, ha="right")
    ax.set_yticks(range(m), order)
    first = result.pairs[0]
    ax.set_title(f"Bayesian {first.test.replace('_', '-')} tests, ROPE ±{first.rope:g}, decision at "
                 f"{first.probability:g}\ncell: P(row better) (P(equivalent)); green: row better, pink: row worse, "
                 "grey: equivalent, white: no decision", fontsize=8.5)
    figure.tight_layout()
    return saved(figure, path, plt)
