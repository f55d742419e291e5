"""Pictures of a table: critical value over (P, N) as a contour chart or a surface (the paper's Figs. 2–7).

Needs matplotlib (``pip install 'tablegen[plots]'``); the error says so when it is missing.
"""

from __future__ import annotations

import numpy as np

from tablegen.common.figures import pyplot, saved
from tablegen.errors import TablegenInputError
from tablegen.lookup.export import appendix_grid
from tablegen.lookup.table import Table

KINDS = ("contour", "surface")


def _ticks(axis) -> list[int]:
    """1-2-5 ticks inside the axis's range, plus its ends."""
    nice = [m * 10 ** e for e in range(0, 7) for m in (1, 2, 5)]
    inside = [int(v) for v in nice if axis[0] < v < axis[-1]]
    return sorted({int(axis[0]), *inside, int(axis[-1])})


def plot_critical_values(table: Table, metric: str, C: int, alpha: float | None = None, kind: str = "contour",
                         path=None, values: str = "best"):
    """Draw the critical value of ``metric`` over the table's (P, N) grid.

    Parameters
    ----------
    table : Table
    metric : str
    C : int
    alpha : float, optional
        One of the table's (default: 0.01 if the table holds it, else its smallest;
        :func:`tablegen.lookup.export.table_alpha`).
    kind : {"contour", "surface"}
        Filled contours with labelled levels on log axes, or a 3-D surface over log10 P and N.
    path : str or os.PathLike, optional
        Write the figure there (format from the suffix, e.g. ``.png``) and close it.
    values : {"best", "monte-carlo", "exact"}
        As in :func:`tablegen.lookup.export.appendix_grid`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if kind not in KINDS:
        raise TablegenInputError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    grid = appendix_grid(table, metric, C, alpha, values)
    plt = pyplot()
    P, N, Z = grid.P.values.astype(float), grid.N.values.astype(float), grid.value.values
    if np.isfinite(Z).sum() < 4 or len(P) < 2 or len(N) < 2:
        raise TablegenInputError(f"{table.source} has too few finished cells to draw (needs a 2 x 2 grid)")
    title = f"{grid.attrs['metric']}: critical value, best of C = {C}, alpha = {grid.attrs['alpha']:g}"
    if kind == "contour":
        figure, axes = plt.subplots(figsize=(7, 5.5), layout="constrained")
        filled = axes.contourf(N, P, np.ma.masked_invalid(Z), levels=14, cmap="viridis")
        lines = axes.contour(N, P, np.ma.masked_invalid(Z), levels=filled.levels[::2], colors="black",
                             linewidths=0.6)
        axes.clabel(lines, fmt="%.3g", fontsize=8)
        figure.colorbar(filled, ax=axes, label="critical value")
        axes.set(xscale="log", yscale="log", xlabel="negatives N", ylabel="positives P", title=title)
        axes.set_xticks(_ticks(N), [str(n) for n in _ticks(N)], minor=False)
        axes.set_yticks(_ticks(P), [str(p) for p in _ticks(P)], minor=False)
        axes.tick_params(which="minor", labelleft=False, labelbottom=False)
    else:
        figure = plt.figure(figsize=(7.5, 6), layout="constrained")
        axes = figure.add_subplot(projection="3d")
        X, Y = np.meshgrid(np.log10(N), np.log10(P))
        axes.plot_surface(X, Y, np.ma.masked_invalid(Z), cmap="viridis", edgecolor="black", linewidth=0.2)
        axes.set_xticks(np.log10(_ticks(N)), [str(n) for n in _ticks(N)])
        axes.set_yticks(np.log10(_ticks(P)), [str(p) for p in _ticks(P)])
        axes.set(xlabel="negatives N", ylabel="positives P", zlabel="critical value", title=title)
        axes.view_init(elev=25, azim=-125)
    figure.text(0.01, 0.005, f"{grid.attrs['source']}, R = {grid.attrs['replicates']:,}", fontsize=7, color="grey")
    return saved(figure, path, plt)


def plot_topk(result, path=None):
    """The random-confidence band of positives in the top k, with the user's curve over it.

    Parameters
    ----------
    result : tablegen.lookup.topk.TopKTest or tablegen.lookup.topk.TopKBounds
        A test (the curve, its bound and crossover are drawn) or bounds alone.
    path : str or os.PathLike, optional
        Write the figure there (format from the suffix) and close it.

    Returns
    -------
    matplotlib.figure.Figure
    """
    bounds = getattr(result, "bounds", result)
    variant = getattr(result, "variant", "discrete")
    plt = pyplot()
    k = bounds.k
    figure, axes = plt.subplots(figsize=(7.5, 5), layout="constrained")
    one = "one random ranking" if bounds.C == 1 else f"best of C = {bounds.C} random rankings"
    one_short = "one ranking" if bounds.C == 1 else f"best of {bounds.C}"
    axes.fill_between(k, bounds.lower, bounds.bound(variant), step="post" if variant == "discrete" else None,
                      color="tab:grey", alpha=0.25,
                      label=f"random band (lower bound of one ranking to the bound, {one_short})")
    axes.plot(k, bounds.expected, color="tab:grey", linewidth=1, label="expected, k P / (P + N)")
    axes.plot(k, bounds.bound(variant), color="black", linewidth=1.2,
              drawstyle="steps-post" if variant == "discrete" else "default",
              label=f"{variant} bound, {one}, alpha = {bounds.alpha:g}")
    if hasattr(result, "observed"):
        axes.plot(k, result.observed, color="tab:red", linewidth=1.6, label="your curve")
        if result.crossover is not None:
            axes.axvline(result.crossover, color="tab:red", linestyle=":", linewidth=1)
            where = (result.crossover, result.observed[result.crossover - 1])
            axes.annotate(f"crossover k = {result.crossover}", where,
                          textcoords="offset points", xytext=(8, -14), color="tab:red", fontsize=9)
    axes.set(xlabel="k (top of the ranking)", ylabel="positives in the top k",
             title=f"Positives in the top k against random rankings (P = {bounds.P:,}, N = {bounds.N:,})",
             xlim=(1, k[-1]), ylim=(0, None))
    axes.legend(loc="upper left", fontsize=8)
    return saved(figure, path, plt)
