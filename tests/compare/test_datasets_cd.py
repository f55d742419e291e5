"""The critical-difference diagram that agrees with the pairwise tests (tablegen.compare.datasets.cd_diagram).

Reference: the groups, skipped pairs and reversals recomputed by brute force over every interval of the
rank order, on random patterns of separated pairs.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablegen.compare import across_datasets
from tablegen.compare.datasets.analysis import AcrossDatasetsResult, FriedmanResult, PairwiseComparison
from tablegen.compare.datasets.cd_diagram import cd_layout
from tablegen.errors import TablegenInputError
from tests.conftest import DATA


def fake_result(m, separated, better=None):
    """m algorithms ranked A, B, C, ... in that order; ``separated``: set of index pairs the test separates."""
    names = [chr(65 + k) for k in range(m)]
    better = better or {}
    pairs = tuple(PairwiseComparison(names[i], names[j], 0.0, 0.001 if (i, j) in separated else 0.5,
                                     0.01 if (i, j) in separated else 0.9, (i, j) in separated,
                                     names[better.get((i, j), i)], 5, 1, 0)
                  for i, j in itertools.combinations(range(m), 2))
    return AcrossDatasetsResult(tuple(names), ("1",), "wilcoxon", "holm", 0.05, True, FriedmanResult(0, m - 1, 1),
                                {a: 1.0 + k * 0.5 for k, a in enumerate(names)}, pairs)


def brute_force(m, separated):
    ok = [(i, j) for i in range(m) for j in range(i + 1, m)
          if not any((a, b) in separated for a, b in itertools.combinations(range(i, j + 1), 2))]
    maximal = [(i, j) for i, j in ok if not any(a <= i and j <= b and (a, b) != (i, j) for a, b in ok)]
    covered = {(a, b) for i, j in maximal for a, b in itertools.combinations(range(i, j + 1), 2)}
    skips = [(i, j) for i, j in itertools.combinations(range(m), 2) if (i, j) not in separated | covered]
    return sorted(maximal), skips


def test_groups_and_skips_equal_brute_force_on_random_patterns():
    rng = np.random.default_rng(9)
    for _ in range(200):
        m = int(rng.integers(2, 8))
        separated = {p for p in itertools.combinations(range(m), 2) if rng.random() < 0.4}
        layout = cd_layout(fake_result(m, separated))
        groups, skips = brute_force(m, separated)
        where = {a: k for k, a in enumerate(layout.order)}
        assert sorted((where[g[0]], where[g[-1]]) for g in layout.groups) == groups
        assert [(where[a], where[b]) for a, b, _ in layout.skips] == skips
        for a, b, inside in layout.skips:  # exactly the separated pairs within the range are named
            assert [(where[x], where[z]) for x, z in inside] == sorted(
                p for p in separated if where[a] <= p[0] and p[1] <= where[b])


def test_a_reversal_is_reported_and_written_on_the_picture(tmp_path):
    result = fake_result(3, {(0, 2)}, better={(0, 2): 2})  # A ranks best, yet the test finds C better than A
    layout = cd_layout(result)
    assert layout.reversals == (("A", "C", 0.01),)
    figure = result.plot_cd(None)
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert any("A has the better mean rank, but the test finds C better" in t for t in texts)


def test_the_paper_table_with_the_sign_test_shows_a_skipped_pair(tmp_path):
    result = across_datasets(DATA / "benavoli2016_table2_accuracies.csv", test="sign")
    layout = cd_layout(result)
    assert layout.order[0] == "C3" and layout.groups and all(len(g) > 1 for g in layout.groups)
    assert [(a, b) for a, b, _ in layout.skips] == [("C2", "C4")]
    result.plot_cd(tmp_path / "cd.png")
    assert (tmp_path / "cd.png").stat().st_size > 5_000


def test_the_mean_ranks_version_needs_the_mean_ranks_test_and_says_it_is_pool_dependent():
    X = np.round(np.random.default_rng(1).normal(size=(30, 5)) + np.linspace(0, 1, 5), 2)
    with pytest.raises(TablegenInputError, match="mean_ranks_posthoc=True"):
        across_datasets(X).plot_cd(None, method="nemenyi")
    with pytest.raises(TablegenInputError, match="mean_ranks_law='bonferroni'"):
        across_datasets(X, mean_ranks_posthoc=True).plot_cd(None, method="bonferroni")
    result = across_datasets(X, mean_ranks_posthoc=True)
    separated = {frozenset((c.a, c.b)) for c in result.mean_ranks_posthoc if c.significant}
    for group in cd_layout(result, "nemenyi").groups:
        assert not any(frozenset(p) in separated for p in itertools.combinations(group, 2))
    title = result.plot_cd(None, method="nemenyi").axes[0].get_title()
    assert "POOL-DEPENDENT" in title and "Nemenyi (studentized range)" in title


def test_unknown_method_is_refused():
    with pytest.raises(TablegenInputError, match="method must be one of 'tests', 'nemenyi'"):
        cd_layout(fake_result(3, set()), "bonferroni-dunn")


# -- tied mean ranks: the picture does not depend on the order of the columns ---------------------------------
def tied_result(names, ranks, separated):
    """A result whose algorithms ``names`` (in this column order) have mean ranks ``ranks`` (by name) and whose
    test separates the pairs ``separated`` (frozensets of names)."""
    pairs = tuple(PairwiseComparison(a, b, 0.0, 0.001 if frozenset((a, b)) in separated else 0.5,
                                     0.01 if frozenset((a, b)) in separated else 0.9, frozenset((a, b)) in separated,
                                     min(a, b, key=ranks.get), 5, 1, 0)
                  for a, b in itertools.combinations(names, 2))
    return AcrossDatasetsResult(tuple(names), ("1",), "wilcoxon", "holm", 0.05, True,
                                FriedmanResult(0, len(names) - 1, 1), {a: ranks[a] for a in names}, pairs)


def check_geometry(result, layout):
    """No bar joins, by where it is drawn, two algorithms the test separates; every pair not separated is joined
    by a bar or named by an arc, whose ends are not separated."""
    separated = {frozenset((c.a, c.b)) for c in result.significant_pairs()}
    r = result.mean_ranks
    for group in layout.groups:
        under = [a for a in result.algorithms if r[group[0]] <= r[a] <= r[group[-1]]]
        assert set(under) == set(group)
        assert not any(frozenset(p) in separated for p in itertools.combinations(under, 2))
    joined = {frozenset(p) for g in layout.groups for p in itertools.combinations(g, 2)}
    arcs = {frozenset((a, b)) for a, b, _ in layout.skips}
    assert not arcs & (separated | joined)
    assert {frozenset(p) for p in itertools.combinations(result.algorithms, 2)} == separated | joined | arcs
    for a, b, inside in layout.skips:  # an arc names the separated pairs at the points it spans
        under = [x for x in layout.order if r[a] <= r[x] <= r[b]]
        assert {frozenset(p) for p in inside} == {frozenset(p) for p in itertools.combinations(under, 2)} & separated


def _as_sets(layout):
    return ({frozenset(g) for g in layout.groups}, {(frozenset((a, b)), frozenset(map(frozenset, inside)))
                                                   for a, b, inside in layout.skips})


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_no_bar_spans_a_separated_pair_whatever_the_column_order(data):
    m = data.draw(st.integers(2, 7))
    names = [chr(65 + k) for k in range(m)]
    ranks = dict(zip(names, data.draw(st.lists(st.sampled_from([1.0, 1.5, 2.15, 2.5, 3.0, 4.0]), min_size=m,
                                               max_size=m))))  # few values: many ties
    separated = {frozenset(p) for p in itertools.combinations(names, 2) if data.draw(st.booleans())}
    base = cd_layout(tied_result(names, ranks, separated))
    check_geometry(tied_result(names, ranks, separated), base)
    permuted = data.draw(st.permutations(names))
    result = tied_result(permuted, ranks, separated)
    layout = cd_layout(result)
    check_geometry(result, layout)
    assert _as_sets(layout) == _as_sets(base)


TIED = pd.DataFrame(  # 10 data sets; logreg and naive_bayes tie at mean rank 2.3; forest-naive_bayes separated
    [[0.91, 0.84, 0.85, 0.77], [0.86, 0.88, 0.88, 0.84], [0.88, 0.91, 0.85, 0.85], [0.89, 0.84, 0.87, 0.83],
     [0.90, 0.84, 0.82, 0.76], [0.92, 0.89, 0.86, 0.77], [0.93, 0.82, 0.84, 0.82], [0.83, 0.87, 0.84, 0.80],
     [0.90, 0.87, 0.88, 0.78], [0.94, 0.88, 0.89, 0.83]], columns=["forest", "logreg", "naive_bayes", "stump"])


@pytest.mark.parametrize("columns", list(itertools.permutations(TIED.columns)))
def test_a_real_table_with_tied_mean_ranks_draws_the_same_bars_in_any_column_order(columns):
    """The issue's case: with logreg before naive_bayes a bar forest-logreg was drawn over naive_bayes (same mean
    rank), although the test separates forest and naive_bayes (adjusted p = 0.0469)."""
    result = across_datasets(TIED[list(columns)])
    assert result.mean_ranks["logreg"] == result.mean_ranks["naive_bayes"] == 2.3
    layout = cd_layout(result)
    check_geometry(result, layout)
    assert _as_sets(layout) == ({frozenset({"logreg", "naive_bayes"})},
                                {(frozenset({"forest", "logreg"}), frozenset({frozenset({"forest", "naive_bayes"})}))})


def test_two_algorithms_of_equal_rank_get_two_labels_and_the_titles_fit(tmp_path):
    pytest.importorskip("matplotlib")
    result = across_datasets(TIED, mean_ranks_posthoc=True)
    for method in ("tests", "nemenyi"):
        figure = result.plot_cd(None, method=method)
        ax = figure.axes[0]
        labels = {t.get_text(): t for t in ax.texts if "(2.30)" in t.get_text()}
        assert set(labels) == {"logreg (2.30)", "naive_bayes (2.30)"}
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        boxes = [t.get_window_extent(renderer) for t in labels.values()]
        assert not boxes[0].overlaps(boxes[1])
        ys = {round(t.get_position()[1], 6) for t in labels.values()}
        assert len(ys) == 2  # two rows: the two elbows never merge into one line through both names
        title = ax.title.get_window_extent(renderer)
        assert 0 <= title.x0 and title.x1 <= figure.bbox.width  # not cut at either end

