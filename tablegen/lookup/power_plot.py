"""The power curve: exact power of the best-of-C test against test-set size, one line per C.

Power under the Lehmann alternative (:func:`tablegen.power`, exact) at every size of a line of test sets of one
prevalence (P the nearest integer to prevalence x n, at least 1 and at most n - 1: the line
:func:`tablegen.sample_size` searches), for C = 1, 10, 100, 1000 models tried.  The curve shows what a planner's
single number hides: how much each tenfold C costs in test items, and the saw-tooth of exact power.

Needs matplotlib (``pip install 'tablegen[plots]'``); the error says so when it is missing.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from tablegen.errors import Argument, TablegenInputError

if TYPE_CHECKING:
    import matplotlib.figure

#: The Cs drawn by default: the paper's tables' decades.
DEFAULT_CS = (1, 10, 100, 1000)
#: Without ``sizes``, the line is drawn up to the first size (doubling from 16) where the largest C's power
#: reaches this, or :data:`MAX_DEFAULT_SIZE`, or the last size inside the exact programme's domain.
DEFAULT_UPPER_POWER = 0.95
#: The largest total size the default range reaches.
MAX_DEFAULT_SIZE = 4096
#: The default range has about this many sizes (every size when the range is shorter: the saw-tooth shows).
DEFAULT_POINTS = 150
#: The default sizes are thinned so that the whole figure's estimated single-core seconds stay within this.
DEFAULT_SECONDS = 30.0
#: The most sizes drawn.
MAX_SIZES = 2000


def _check_cs(Cs) -> tuple[int, ...]:
    from tablegen.compute.validation import check_competitors

    if isinstance(Cs, (str, bytes)) or not isinstance(Cs, Iterable):
        raise TablegenInputError.naming(Argument("Cs"), f" must be a sequence of integers >= 1, got {Cs!r}")
    values = list(Cs)
    if not 1 <= len(values) <= 12:
        raise TablegenInputError.naming(Argument("Cs"), f" must hold 1 to 12 values of C, got {len(values)}")
    try:
        return tuple(sorted({check_competitors(C) for C in values}))
    except TablegenInputError as error:
        raise TablegenInputError.naming(Argument("Cs"), f": {error}") from None


def _check_sizes(sizes, smallest: int) -> np.ndarray:
    from tablegen.compute.validation import check_integer_array

    if isinstance(sizes, (str, bytes)):
        raise TablegenInputError.naming(Argument("sizes"), f" must be integers >= {smallest}, got {sizes!r}")
    array = check_integer_array("sizes", list(sizes) if isinstance(sizes, Iterable) else sizes, smallest)
    array = np.unique(array.ravel())
    if array.size > MAX_SIZES:
        raise TablegenInputError.naming(Argument("sizes"), f" holds {array.size:,} sizes; at most {MAX_SIZES:,}")
    return array


def _check_path(path) -> None:
    """``path`` None, an image file name whose directory exists, or a file object open for writing."""
    from tablegen.common.figures import image_file

    if isinstance(path, (str, os.PathLike)):
        image_file(path)
    elif path is not None and not callable(getattr(path, "write", None)):
        raise TablegenInputError.naming(Argument("path"), " must be None, an image file name or a file object open "
                                        f"for writing, got {path!r}")


def _power_at(metric, cell, n, C, alpha, auc, winners) -> float:
    """The exact power at total size ``n``; beyond the exact programme (where :func:`tablegen.power` would answer by
    Monte Carlo) an error naming P and N: the curve holds exact values only."""
    from tablegen.compute.metrics import get_metric
    from tablegen.lookup.power import power

    P, N = cell(n)
    if not get_metric(metric).power_exact_at(P, N):
        raise TablegenInputError.naming(Argument("sizes"), f": no exact Lehmann power of {metric} at P = {P:,}, "
                                        f"N = {N:,} (n = {n:,}); the curve draws exact power only: give smaller sizes")
    result = power(metric, P, N, C, alpha, auc=auc, winners=winners)
    if result.method != "exact":  # never a Monte Carlo value drawn as exact
        raise TablegenInputError.naming(Argument("sizes"), f": no exact power of {metric} at P = {P:,}, N = {N:,}")
    return result.power


def default_sizes(metric: str, auc: float, prevalence: float, C: int, alpha: float = 0.01,
                  winners: int | str = 1, curves: int = 1) -> np.ndarray:
    """The sizes :func:`plot_power_curve` draws when none are given: from the smallest size of the prevalence line
    up to the first size (doubling from 16) where the power at ``C`` reaches :data:`DEFAULT_UPPER_POWER`, or
    :data:`MAX_DEFAULT_SIZE`, or the last doubling inside the exact programme's domain; every size up to
    :data:`DEFAULT_POINTS` of them, else evenly spaced, and fewer where ``curves`` lines of them would take more
    than :data:`DEFAULT_SECONDS` by the registry's estimates (AUC's exact programme grows as n**4).  ``alpha``:
    default 0.01, the level of Forman & Cohen's tables.

    Examples
    --------
    >>> sizes = default_sizes("best_f1", 0.8, 0.5, 100, alpha=0.05)
    >>> int(sizes[0]), int(sizes[-1]), bool(np.all(np.diff(sizes) == 1))
    (2, 128, True)
    """
    from tablegen.compute.validation import check_alpha
    from tablegen.lookup.power import size_line

    _, smallest, cell = size_line(check_alpha("prevalence", prevalence), None, None)
    upper, n = None, 16
    while True:
        try:
            reached = _power_at(metric, cell, n, C, alpha, auc, winners) >= DEFAULT_UPPER_POWER
        except TablegenInputError:  # beyond the exact programme's domain (AUC, average precision)
            if upper is None:
                raise
            break
        upper = n
        if reached or n >= MAX_DEFAULT_SIZE:
            break
        n *= 2
    step = max(1, math.ceil((upper - smallest) / DEFAULT_POINTS))
    every = sum(_estimated_seconds(metric, *cell(size)) for size in range(smallest, upper + 1))
    step = max(step, math.ceil(curves * every / DEFAULT_SECONDS))
    return np.unique(np.r_[np.arange(smallest, upper, step), upper])


def _estimated_seconds(metric: str, P: int, N: int) -> float:
    """Estimated seconds of one point of one line: the critical value and one exact power."""
    from tablegen.compute.metrics import get_metric

    entry = get_metric(metric)
    return entry.exact_cost(P, N)[0] + entry.power_cost(P, N)[0]


def plot_power_curve(metric: str, auc: float, prevalence: float, Cs: Iterable[int] = DEFAULT_CS,
                     alpha: float = 0.01, sizes: Iterable[int] | None = None, winners: int | str = 1,
                     path: str | os.PathLike | None = None) -> matplotlib.figure.Figure:
    """Draw the exact power of the best-of-C test against the test-set size, one line per C.

    Parameters
    ----------
    metric : str
        Any metric with exact Lehmann power at the sizes drawn (:func:`tablegen.power`).
    auc : float
        The alternative's AUC, in [0.5, 1) (Lehmann alternative: positives' scores have CDF F**k,
        k = AUC/(1 - AUC)).
    prevalence : float
        P/(P + N), in (0, 1): at total size n, P is the nearest integer to prevalence x n (at least 1, at most
        n - 1), as :func:`tablegen.sample_size` searches.
    Cs : sequence of int
        The numbers of models tried, one line each (default 1, 10, 100, 1000).
    alpha : float
        Level of the test (default 0.01, the level of Forman & Cohen's tables, as for :func:`tablegen.power`).
    sizes : sequence of int, optional
        The total sizes P + N drawn (default :func:`default_sizes` at the largest C).
    winners : int or "all"
        As for :func:`tablegen.power` (1: one informative model among the C).
    path : str or os.PathLike, optional
        Write the figure there (format from the suffix, e.g. ``.png``) and close it.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TablegenInputError
        Bad input, naming the argument; a size beyond the exact programme's domain (AUC beyond about
        375 x 375, average precision beyond its enumeration), naming P and N.

    Examples
    --------
    >>> figure = plot_power_curve("best_f1", 0.8, 0.5, Cs=(1, 100), alpha=0.05, sizes=range(10, 60, 10))
    >>> [line.get_label() for line in figure.axes[0].get_lines()][:2]
    ['C = 1', 'C = 100']
    """
    from tablegen.common.figures import pyplot, saved
    from tablegen.compute.exact.power import lehmann_k
    from tablegen.compute.validation import check_alpha, check_metric
    from tablegen.lookup.power import check_auc, size_line

    _check_path(path)  # before any work: a figure that cannot be written is refused first
    metric = check_metric("metric", metric)
    auc, alpha = check_auc(auc), check_alpha("alpha", alpha)
    Cs = _check_cs(Cs)
    prevalence = check_alpha("prevalence", prevalence)
    _, smallest, cell = size_line(prevalence, None, None)
    n = default_sizes(metric, auc, prevalence, Cs[-1], alpha, winners, curves=len(Cs)) if sizes is None \
        else _check_sizes(sizes, smallest)
    powers = {C: np.array([_power_at(metric, cell, int(size), C, alpha, auc, winners) for size in n]) for C in Cs}
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(7.5, 5), layout="constrained")
    colours = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(Cs)))
    dense = n.size > 1 and np.all(np.diff(n) == 1)
    for C, colour in zip(Cs, colours):
        axes.plot(n, powers[C], color=colour, linewidth=1.4, drawstyle="steps-mid" if dense else "default",
                  marker=None if dense else "o", markersize=3, label=f"C = {C:,}")
    axes.axhline(0.8, color="grey", linestyle=":", linewidth=1, label="power 0.8")
    who = "" if winners == 1 else f", at least one of {winners} such models"
    axes.set(xlabel="test-set size P + N", ylabel="exact power", ylim=(0, 1.02), xlim=(n[0], n[-1]),
             title=f"Power of {metric} against the best of C random classifiers\n"
                   f"AUC {auc:g} (Lehmann, k = {lehmann_k(auc):.3g}){who}, prevalence {prevalence:g}, "
                   f"alpha = {alpha:g}")
    axes.legend(loc="lower right", title="models tried")
    return saved(figure, path, plt)
