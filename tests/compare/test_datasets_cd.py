"""The critical-difference diagram that agrees with the pairwise tests (tablegen.compare.datasets.cd_diagram).

Reference: the groups, skipped pairs and reversals recomputed by brute force over every interval of the
rank order, on random patterns of separated pairs.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

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
    result = across_datasets(X, mean_ranks_posthoc=True)
    separated = {frozenset((c.a, c.b)) for c in result.mean_ranks_posthoc if c.significant}
    for group in cd_layout(result, "nemenyi").groups:
        assert not any(frozenset(p) in separated for p in itertools.combinations(group, 2))
    title = result.plot_cd(None, method="nemenyi").axes[0].get_title()
    assert "POOL-DEPENDENT" in title


def test_unknown_method_is_refused():
    with pytest.raises(TablegenInputError, match="method must be one of 'tests', 'nemenyi'"):
        cd_layout(fake_result(3, set()), "bonferroni-dunn")
