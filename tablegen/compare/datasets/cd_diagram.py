"""A critical-difference diagram that agrees with the pairwise tests.

The algorithms sit on the mean-rank axis (1 = best).  A bar joins a **group**: every algorithm whose mean rank
lies in an interval of the axis, no two of which the chosen pairwise test (Wilcoxon signed-rank or sign, with
the chosen correction) separates; only maximal intervals are drawn.  Algorithms of equal mean rank sit at one
point, so a bar covers all of them or none: what a bar joins, and so the picture, does not depend on the order
of the table's columns.  Unlike the usual diagram, nothing comes from
Nemenyi's critical distance, so a bar never says more than the tests do.  Two things a run of bars cannot
show are drawn and labelled rather than hidden:

* a pair the test does *not* separate although some pair ranked from one to the other *is* separated (so no
  run can join them without joining a separated pair): a dashed arc naming the separated pairs;
* a pair the test separates in the direction opposite to the mean ranks (the better-ranked one loses the
  test): a red note under the diagram.

``method="nemenyi"`` (or ``"bonferroni"``) draws the mean-ranks version instead (groups from the mean-ranks
test by that law, with its critical difference), on request only and labelled as pool-dependent, with the
number of pairs whose verdict flips in some sub-pool of the other algorithms
(:mod:`tablegen.compare.datasets.mean_ranks`).
"""

from __future__ import annotations

from dataclasses import dataclass

from tablegen.common.figures import pyplot, saved
from tablegen.errors import TablegenInputError

METHODS = ("tests", "nemenyi", "bonferroni")


@dataclass(frozen=True)
class CDLayout:
    """What the diagram shows, computed without drawing.

    Attributes
    ----------
    order : tuple of str
        Algorithms from the best mean rank to the worst.
    groups : tuple of tuple of str
        Maximal runs (in ``order``) of whole tie blocks (algorithms of equal mean rank) with no pair separated.
    skips : tuple of (str, str, tuple of (str, str))
        Pairs not separated that no run can join, with the separated pairs among them that break the run.
    reversals : tuple of (str, str, float)
        (better-ranked, winner of the test, adjusted p) for pairs separated against the rank order.
    """

    order: tuple
    groups: tuple
    skips: tuple
    reversals: tuple


def _separated(result, method):
    if method == "tests":
        return {frozenset((c.a, c.b)) for c in result.significant_pairs()}
    if result.mean_ranks_posthoc is None:
        raise TablegenInputError(f"method={method!r} needs the mean-ranks test: run across_datasets(..., "
                                 f"mean_ranks_posthoc=True, mean_ranks_law={method!r}) (tablegen compare datasets "
                                 f"--mean-ranks-posthoc --mean-ranks-law {method})")
    if result.mean_ranks_law != method:
        raise TablegenInputError(f"method={method!r} draws the mean-ranks test by that law, but the result holds "
                                 f"it by {result.mean_ranks_law!r}: run across_datasets(..., mean_ranks_posthoc=True, "
                                 f"mean_ranks_law={method!r}), or draw method={result.mean_ranks_law!r}")
    return {frozenset((c.a, c.b)) for c in result.mean_ranks_posthoc if c.significant}


def _separated_within(run, separated) -> tuple:
    """The separated pairs (as (x, y) in rank order) among ``run``: what breaks a bar over it."""
    return tuple((run[p], run[q]) for p in range(len(run)) for q in range(p + 1, len(run))
                 if frozenset((run[p], run[q])) in separated)


def _tie_blocks(order, mean_ranks) -> list[tuple[int, int]]:
    """(first, last) index in ``order`` of each run of equal mean ranks: the points of the axis."""
    blocks = []
    for k, a in enumerate(order):
        if blocks and mean_ranks[a] == mean_ranks[order[blocks[-1][0]]]:
            blocks[-1] = (blocks[-1][0], k)
        else:
            blocks.append((k, k))
    return blocks


def _runs(order, blocks, separated) -> list[tuple[int, int]]:
    """Maximal (first, last) index ranges of whole tie blocks with no separated pair among them."""
    def clean(first, last):
        return not _separated_within(order[first:last + 1], separated)

    runs = []
    for s in range(len(blocks)):
        e = s - 1
        while e + 1 < len(blocks) and clean(blocks[s][0], blocks[e + 1][1]):
            e += 1
        if e >= s and (not runs or blocks[e][1] > runs[-1][1]):  # the longest from each start, kept if maximal
            runs.append((blocks[s][0], blocks[e][1]))
    return runs


def cd_layout(result, method: str = "tests") -> CDLayout:
    """The groups, skipped pairs and reversals of ``result`` (an :class:`AcrossDatasetsResult`).

    Examples
    --------
    >>> from tablegen.compare import across_datasets
    >>> X = [[0.90, 0.80, 0.78], [0.85, 0.80, 0.82], [0.95, 0.70, 0.72], [0.80, 0.78, 0.60], [0.91, 0.81, 0.79],
    ...      [0.88, 0.86, 0.87], [0.93, 0.75, 0.74], [0.87, 0.83, 0.85], [0.92, 0.79, 0.80], [0.89, 0.84, 0.81]]
    >>> cd_layout(across_datasets(X)).groups   # '1' stands alone: no bar for a group of one
    (('2', '3'),)
    """
    if method not in METHODS:
        raise TablegenInputError(f"method must be one of {', '.join(map(repr, METHODS))}, got {method!r}")
    separated = _separated(result, method)
    order = tuple(result.ranking())
    blocks = _tie_blocks(order, result.mean_ranks)
    block_of = {k: b for b, (first, last) in enumerate(blocks) for k in range(first, last + 1)}
    groups = tuple(order[i:j + 1] for i, j in _runs(order, blocks, separated))
    covered = {frozenset((a, b)) for g in groups for a in g for b in g}

    def span(i, j):  # every algorithm at a point of the axis from order[i]'s to order[j]'s
        return order[blocks[block_of[i]][0]:blocks[block_of[j]][1] + 1]

    skips = tuple((order[i], order[j], _separated_within(span(i, j), separated))
                  for i in range(len(order)) for j in range(i + 1, len(order))
                  if frozenset((order[i], order[j])) not in separated | covered)
    rank = {a: k for k, a in enumerate(order)}
    reversals = tuple((min(c.a, c.b, key=rank.get), c.better, c.adjusted_p_value)
                      for c in result.significant_pairs() if method == "tests" and c.better is not None
                      and c.better != min(c.a, c.b, key=rank.get))
    return CDLayout(order, tuple(g for g in groups if len(g) > 1), skips, reversals)


def _axis(ax, m) -> None:
    ax.plot([1, m], [0, 0], color="black", lw=1)
    for r in range(1, m + 1):
        ax.plot([r, r], [0, 0.12], color="black", lw=1)
        ax.text(r, 0.18, str(r), ha="center", va="bottom", fontsize=9)
    for r in range(1, m):
        ax.plot([r + 0.5, r + 0.5], [0, 0.06], color="black", lw=0.6)


def _labels(ax, result, order, m, start) -> float:
    """Elbow lines from each algorithm's rank down to its name (better half left, worse half right), from
    ``start`` down; returns the lowest y used.  The right side's names sit half a step below the left's, so two
    algorithms of equal mean rank on either side get two elbows and two names, never one line through both."""
    half = (len(order) + 1) // 2
    step = 0.3
    for k, a in enumerate(order):
        r = result.mean_ranks[a]
        left = k < half
        depth = start - step * (k if left else len(order) - 1 - k + 0.5)
        edge = 0.55 if left else m + 0.45
        ax.plot([r, r, edge], [0, depth, depth], color="black", lw=0.8)
        ax.text(edge + (-0.05 if left else 0.05), depth, f"{a} ({r:.2f})", ha="right" if left else "left",
                va="center", fontsize=9)
    return start - step * (half - 1 if len(order) % 2 else half - 0.5)


def _bars(ax, result, layout) -> float:
    """The groups' bars, then the skipped pairs' arcs, from just under the axis down; returns the next free y."""
    y = -0.25
    for group in layout.groups:
        low, high = result.mean_ranks[group[0]], result.mean_ranks[group[-1]]
        ax.plot([low - 0.04, high + 0.04], [y, y], color="#1f4e9c", lw=4, solid_capstyle="round")
        y -= 0.13
    for a, b, between in layout.skips:
        low, high = result.mean_ranks[a], result.mean_ranks[b]
        ax.plot([low, low, high, high], [y + 0.05, y, y, y + 0.05], color="#d95f02", lw=1.5, ls="--")
        inside = ", ".join(f"{x}–{z}" for x, z in between)
        ax.text((low + high) / 2, y - 0.03, f"{a}–{b} not separated, though {inside} (in this range) "
                f"{'is' if len(between) == 1 else 'are'}", ha="center", va="top", fontsize=7.5, color="#d95f02",
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
        y -= 0.3
    return y - 0.15


def _wrapped(text: str, width_inches: float, fontsize: float) -> str:
    """``text`` broken into lines that fit ``width_inches`` at ``fontsize`` points (an average glyph is taken as
    0.6 of the font size wide, generous for DejaVu Sans)."""
    import textwrap

    return textwrap.fill(text, max(20, int(0.9 * width_inches * 72 / (0.6 * fontsize))))


def plot_cd(result, path=None, method: str = "tests"):
    """Draw the critical-difference diagram of ``result`` (module docstring); save to ``path`` if given.

    Examples
    --------
    >>> from tablegen.compare import across_datasets
    >>> figure = plot_cd(across_datasets([[0.9, 0.8, 0.7], [0.85, 0.8, 0.75], [0.95, 0.7, 0.72]]))
    >>> len(figure.axes)
    1
    """
    layout = cd_layout(result, method)
    plt = pyplot()
    m = result.m
    height = 1.3 + 0.17 * m + 0.15 * len(layout.groups) + 0.3 * len(layout.skips) + 0.25 * len(layout.reversals)
    margin = 0.3 + 0.085 * max(len(f"{a} (0.00)") for a in layout.order)  # room for the names, in rank units
    figure, ax = plt.subplots(figsize=(max(6.0, 0.95 * (m + 2 * margin)), height))
    _axis(ax, m)
    bottom = _labels(ax, result, layout.order, m, _bars(ax, result, layout))
    notes = [f"{best} has the better mean rank, but the test finds {winner} better (adjusted p = {p:.3g})"
             for best, winner, p in layout.reversals]
    if method != "tests":
        from tablegen.compare.datasets.mean_ranks import LAWS

        cd = result.critical_difference()
        ax.plot([1, 1 + cd], [0.55, 0.55], color="black", lw=2)
        ax.text(1 + cd / 2, 0.6, f"CD = {cd:.3f}", ha="center", va="bottom", fontsize=8.5)
        flips = sum(1 for c in result.mean_ranks_posthoc if c.flips)
        title = (f"Mean-ranks test, {LAWS[method]}, alpha = {result.alpha:g}: POOL-DEPENDENT — the verdict on "
                 f"{flips} of {len(result.mean_ranks_posthoc)} pairs flips in some sub-pool of the other algorithms")
    else:
        title = (f"Bars: no pair separated by the {result.test_name} test, {result.correction_name}-adjusted, "
                 f"alpha = {result.alpha:g} ({m} algorithms, {result.n} data sets)")
    for k, note in enumerate(notes):
        ax.text((1 + m) / 2, bottom - 0.3 - 0.22 * k, note, ha="center", va="top", fontsize=8, color="#b2182b")
    ax.set_title(_wrapped(title, figure.get_figwidth(), 8.5), fontsize=8.5)
    ax.set_xlim(0.5 - margin, m + 0.5 + margin)
    ax.set_ylim(bottom - 0.3 - 0.22 * len(notes), 0.85)
    ax.axis("off")
    figure.tight_layout()
    return saved(figure, path, plt)
