"""Top-k bounds and p-values: brute force, scipy.stats.hypergeom, the binomial limit, the CLI, bad input."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from tablegen.cli.main import main
from tablegen.compute.stats import upper_tail_probability
from tablegen.errors import TablegenInputError
from tablegen.lookup.topk import (
    CROSSOVER_RUN,
    TAIL_FLOOR,
    binomial_bound,
    crossover_point,
    curve_from_scores,
    topk_bounds,
    topk_test,
)


def brute_force_counts(P, N):
    """Exact distribution of X_k for every k: Fractions over all C(P+N, P) rankings."""
    n = P + N
    arrangements = list(itertools.combinations(range(n), P))
    weight = Fraction(1, len(arrangements))
    pmf = [dict() for _ in range(n + 1)]
    for positives in arrangements:
        for k in range(1, n + 1):
            x = sum(1 for i in positives if i < k)
            pmf[k][x] = pmf[k].get(x, 0) + weight
    return pmf


def exceed(pmf_k, x):
    """Pr(X > x) as a Fraction."""
    return sum((w for value, w in pmf_k.items() if value > x), Fraction(0))


@pytest.mark.parametrize("P,N", [(1, 1), (2, 3), (3, 4), (4, 4), (5, 2), (2, 8), (6, 4)])
@pytest.mark.parametrize("alpha,C", [(0.05, 1), (0.2, 1), (0.01, 10), (0.3, 3)])
def test_bounds_equal_brute_force(P, N, alpha, C):
    pmf = brute_force_counts(P, N)
    bounds = topk_bounds(P, N, C=C, alpha=alpha)
    p = float(upper_tail_probability(C, alpha))
    for k in range(1, P + N + 1):
        c = min(x for x in range(0, k + 1) if exceed(pmf[k], x) <= p)
        assert bounds.discrete[k - 1] == c, (k, c)
        at_c = pmf[k].get(c, Fraction(0))
        at_least_c = exceed(pmf[k], c - 1)
        expected = c + min(Fraction(1), (at_least_c - Fraction(p)) / at_c)
        assert bounds.interpolated[k - 1] == pytest.approx(float(expected), abs=1e-12), k
        assert c < bounds.interpolated[k - 1] <= c + 1  # an integer count reaches it iff it exceeds c


@pytest.mark.parametrize("P,N", [(3, 4), (4, 4), (2, 8), (6, 4)])
def test_p_values_equal_brute_force_and_invert_the_bounds(P, N):
    pmf = brute_force_counts(P, N)
    rng = np.random.default_rng(P * 100 + N)
    n = P + N
    k = np.arange(1, n + 1)
    low, high = np.maximum(0, k - N), np.minimum(k, P)
    for trial in range(20):
        curve = low + rng.random(n) * (high - low)
        if trial % 2:
            curve = np.round(curve)  # integer counts too
        result = topk_test(curve, P, N, alpha=0.2)
        for i, x in enumerate(curve):
            at_least = exceed(pmf[i + 1], math.ceil(x) - 1)
            assert result.p_discrete[i] == pytest.approx(float(at_least), abs=1e-12)
            whole, fraction = math.floor(x), Fraction(x) - math.floor(x)
            at_least_whole, at_least_next = exceed(pmf[i + 1], whole - 1), exceed(pmf[i + 1], whole)
            interpolated = (1 - fraction) * at_least_whole + fraction * at_least_next  # Pr(X >= x), linear between
            assert result.p_interpolated[i] == pytest.approx(float(interpolated), abs=1e-12)
            if fraction == 0:
                assert result.p_interpolated[i] == result.p_discrete[i]
        # a count reaches the interpolated bound iff its interpolated p-value <= p (the significance rule);
        # beyond the discrete bound iff its discrete p-value <= p
        bounds = result.bounds
        above_discrete = curve > bounds.discrete + 1e-9
        np.testing.assert_array_equal(above_discrete, result.p_discrete <= 0.2 + 1e-12)
        reaches = curve >= bounds.interpolated - 1e-9
        clear = np.abs(result.p_interpolated - 0.2) > 1e-9
        np.testing.assert_array_equal(reaches[clear], (result.p_interpolated <= 0.2)[clear])
        interpolated = topk_test(curve, P, N, alpha=0.2, variant="interpolated")
        np.testing.assert_array_equal(interpolated.significant[clear], reaches[clear])


def _exact_rejection_probability(P, N, K, C, alpha, variant):
    """Pr(the test rejects at k) under a random ranking, k = 1..K: the exact hypergeometric pmf summed over the
    integer counts the test calls significant (every count of every k, one curve per count)."""
    k = np.arange(1, K + 1)
    low, high = np.maximum(0, k - N), np.minimum(k, P)
    rejected = np.zeros(K)
    for x in range(0, min(K, P) + 1):
        at = (x >= low) & (x <= high)
        curve = np.where(at, x, np.clip(x, low, high)).astype(float)
        result = topk_test(curve, P, N, C=C, alpha=alpha, variant=variant)
        rejected += np.where(at & result.significant, stats.hypergeom.pmf(x, P + N, P, k), 0.0)
    return rejected


_SLOW = pytest.mark.slow


@pytest.mark.parametrize("P,N,K,levels", [
    (990, 10, 40, "some"), (10, 990, 1000, "some"), (50, 50, 60, "some"), (1, 1, 2, "all"), (7, 3, 10, "all"),
    pytest.param(95, 5, 100, "all", marks=_SLOW), pytest.param(5, 95, 100, "all", marks=_SLOW),
    pytest.param(30, 270, 300, "all", marks=_SLOW), pytest.param(990, 10, 100, "all", marks=_SLOW),
    pytest.param(10, 990, 1000, "all", marks=_SLOW)])
@pytest.mark.parametrize("variant", ["discrete", "interpolated"])
def test_every_test_variant_holds_its_level_exactly_at_every_k(P, N, K, levels, variant):
    pairs = ([(1, 0.05), (10, 0.01), (1000, 0.5)] if levels == "some"
             else [(C, alpha) for C in (1, 10, 1000) for alpha in (0.01, 0.05, 0.5)])
    for C, alpha in pairs:
        t = float(upper_tail_probability(C, alpha))
        rejected = _exact_rejection_probability(P, N, K, C, alpha, variant)
        assert np.all(rejected <= t * (1 + 1e-9)), (C, alpha, rejected.max() / t)


def test_the_issue_cases_no_longer_reject_a_random_ranking():
    # a random ranking of 990 positives and 10 negatives puts a positive first 99% of the time
    result = topk_test([1, 2, 3, 4], 990, 10, alpha=0.01, variant="interpolated")
    assert result.crossover is None and not result.significant.any()
    np.testing.assert_allclose(result.p_interpolated, stats.hypergeom.sf([0, 1, 2, 3], 1000, 990, [1, 2, 3, 4]))
    # P = N = 50, alpha = 0.05: the interpolated bound at k = 1 used to reject with probability 0.5
    assert _exact_rejection_probability(50, 50, 1, 1, 0.05, "interpolated")[0] == 0.0
    assert topk_bounds(50, 50, K=1, alpha=0.05).interpolated[0] > 1


def test_binomial_is_not_a_test_because_it_can_exceed_its_level():
    # the infinite-data bound rejects a random ranking of a finite test set more often than p here
    P, N, k, alpha = 6, 225, 4, 0.1
    bound = binomial_bound(P, N, np.array([k]), alpha)[0]
    rejected = stats.hypergeom.sf(math.ceil(bound) - 1, P + N, P, k)
    assert rejected > alpha * 1.005
    with pytest.raises(TablegenInputError, match="infinite-data"):
        topk_test([1, 1, 1, 1], P, N, alpha=alpha, variant="binomial")


def test_p_values_are_never_zero_below_the_floor_they_are_bounds():
    # every one of the top 2000 of (2000, 2000) positive: Pr = 1 / C(4000, 2000) ~ 1e-1203, far below a double
    curve = np.arange(1, 2001, dtype=float)
    result = topk_test(curve, 2000, 2000, alpha=0.01)
    assert np.all(result.p_discrete > 0) and np.all(result.p_interpolated > 0)
    assert result.p_bounded["discrete"][-1] and not result.p_bounded["discrete"][0]
    assert result.formatted_p("discrete", 1999).startswith("< ")
    exact = stats.hypergeom.logsf(curve - 1, 4000, 2000, np.arange(1, 2001))
    shown = ~result.p_bounded["discrete"]
    np.testing.assert_allclose(np.log(result.p_discrete[shown]), exact[shown], rtol=1e-9)
    assert np.all(exact[~shown] < np.log(TAIL_FLOOR))


@pytest.mark.parametrize("P,N,C,alpha", [(10, 90, 1, 0.05), (50, 500, 100, 0.01), (300, 2000, 1000, 0.01),
                                         (1000, 10, 10, 0.05),
                                         pytest.param(2000, 20000, 1000, 0.001, marks=pytest.mark.slow)])
def test_discrete_bounds_and_p_values_agree_with_scipy(P, N, C, alpha):
    bounds = topk_bounds(P, N, C=C, alpha=alpha)
    k = bounds.k
    # scipy costs ~5 ms per k here: past 5,000 k, the first and last 200 and 600 spread between them
    at = np.arange(k.size) if k.size <= 5000 else np.unique(np.r_[:200, k.size - 200:k.size,
                                                                   np.linspace(0, k.size - 1, 600).astype(int)])
    np.testing.assert_array_equal(bounds.discrete[at],
                                  stats.hypergeom.isf(bounds.tail_probability, P + N, P, k[at]))
    rng = np.random.default_rng(1)
    low, high = np.maximum(0, k - N), np.minimum(k, P)
    curve = np.round(low + rng.beta(5, 1, k.size) * (high - low))
    result = topk_test(curve, P, N, C=C, alpha=alpha)
    single = stats.hypergeom.sf(curve[at] - 1, P + N, P, k[at])
    with np.errstate(divide="ignore"):  # log1p(-1) = -inf where a count is certain: p = 1
        expected = -np.expm1(C * np.log1p(-single))  # 1 - (1 - s)**C without cancellation
    keep = ~result.p_bounded["discrete"][at]  # tails below TAIL_FLOOR are bounds: "<" a value above the truth
    assert keep.sum() > 0.5 * keep.size
    np.testing.assert_allclose(result.p_discrete[at][keep], expected[keep], rtol=1e-9, atol=0)
    assert np.all(result.p_discrete[at][~keep] >= expected[~keep])


def test_far_tails_keep_their_digits():
    # Pr(X_50 >= 30) for P = 100, N = 10000 is about 1e-37: summed from the top, not 1 - CDF.
    curve = np.maximum(0, np.arange(1, 51) - 20.0)  # 30 positives in the top 50
    result = topk_test(curve, 100, 10_000)
    expected = stats.hypergeom.sf(29, 10_100, 100, 50)
    assert expected < 1e-30
    assert result.p_discrete[49] == pytest.approx(expected, rel=1e-9)


def test_hypergeometric_bound_tends_to_the_binomial_as_the_test_set_grows():
    k = np.arange(1, 201)
    gaps = []
    for n in (1_000, 10_000, 100_000, 1_000_000):
        bounds = topk_bounds(n // 10, n - n // 10, K=200, alpha=0.01)
        gaps.append(np.max(np.abs(bounds.interpolated - bounds.binomial)))
    assert gaps == sorted(gaps, reverse=True) and gaps[-1] < 0.01 and gaps[0] > 0.1, gaps
    np.testing.assert_array_equal(binomial_bound(100, 900, k, 0.01) >= 0, True)


def test_binomial_bound_matches_scipy_at_the_integers():
    k = np.arange(1, 300)
    p = 0.001
    interpolated = binomial_bound(30, 270, k, p)
    discrete = stats.binom.isf(p, k, 0.1)
    assert np.all((interpolated >= discrete) & (interpolated <= discrete + 1 + 1e-12))  # = c only when Pr(X >= c) = p
    result = topk_test(np.maximum(np.minimum(k, 30) * 0.7, k - 270), 30, 270, alpha=p)
    curve = result.observed
    whole, fraction = np.floor(curve), curve - np.floor(curve)
    expected = (1 - fraction) * stats.binom.sf(whole - 1, k, 0.1) + fraction * stats.binom.sf(whole, k, 0.1)
    np.testing.assert_allclose(result.p_binomial, expected, rtol=1e-12)


def test_best_of_C_bound_is_the_bound_at_the_per_competitor_tail():
    many = topk_bounds(40, 400, C=100, alpha=0.05)
    one = topk_bounds(40, 400, C=1, alpha=float(upper_tail_probability(100, 0.05)))
    np.testing.assert_array_equal(many.discrete, one.discrete)
    np.testing.assert_allclose(many.interpolated, one.interpolated, rtol=0, atol=1e-12)
    assert np.all(many.discrete >= topk_bounds(40, 400, C=1, alpha=0.05).discrete)


def test_crossover_needs_consecutive_k():
    above = np.array([1, 0, 1, 1, 1, 0, 1, 1], dtype=bool)
    assert crossover_point(above) == 3
    assert crossover_point(np.array([1, 0, 1, 0, 1, 0, 1, 1], dtype=bool)) == 7
    assert crossover_point(np.array([1, 0, 1, 0, 1, 0, 1, 0], dtype=bool)) is None
    assert crossover_point(np.array([1, 1, 0, 0], dtype=bool)) == 1
    assert CROSSOVER_RUN == 2
    result = topk_test([1, 2, 3, 3, 4, 4, 5, 5], 10, 90, alpha=0.05)
    assert result.crossover == crossover_point(result.observed > result.bounds.discrete)
    assert "From k = " in result.sentence()


def test_curve_from_scores_averages_over_the_orders_of_tied_scores():
    scores = np.array([0.9, 0.7, 0.7, 0.7, 0.5, 0.5, 0.1])
    labels = np.array([1, 1, 0, 0, 1, 0, 0])
    curve, P, N = curve_from_scores(scores, labels)
    assert (P, N) == (3, 4)
    # brute force: every order within the ties, equally likely
    totals, orders = np.zeros(7), 0
    for a in itertools.permutations([1, 0, 0]):
        for b in itertools.permutations([1, 0]):
            totals += np.cumsum([1, *a, *b, 0])
            orders += 1
    np.testing.assert_allclose(curve, totals / orders, rtol=0, atol=1e-12)


def test_bad_input_names_the_argument():
    cases = [
        (lambda: topk_bounds(0, 10), "P"),
        (lambda: topk_bounds(10, 10, K=21), "K must be at most"),
        (lambda: topk_bounds(10, 10, alpha=1.5), "alpha"),
        (lambda: topk_bounds(10, 10, C=0), "C"),
        (lambda: topk_test([1, 3], 10, 90), "observed[1] (k = 2)"),
        (lambda: topk_test([-1], 10, 90), "observed[0]"),
        (lambda: topk_test([], 10, 90), "observed"),
        (lambda: topk_test(["a"], 10, 90), "observed"),
        (lambda: topk_test([1], 10, 90, variant="mid"), "variant"),
        (lambda: topk_test([1], 10, 90, variant="binomial"), "not offered as a test"),
        (lambda: curve_from_scores([1, 2], [1, 2]), "labels must be 0 or 1"),
        (lambda: curve_from_scores([1, 2], [1, 1]), "both classes"),
        (lambda: curve_from_scores([1, np.nan], [1, 0]), "scores"),
    ]
    for call, text in cases:
        with pytest.raises(TablegenInputError, match=None) as caught:
            call()
        assert text in str(caught.value), (text, str(caught.value))


# --- command line ---------------------------------------------------------------------------------

def test_cli_bounds_table(capsys):
    assert main(["topk", "--P", "10", "--N", "90", "--K", "12", "--alpha", "0.05"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 + 12
    assert lines[-3].split()[:3] == ["10", "1.000", "3"]  # k = 10: expected 1, discrete bound 3


def test_cli_counts_json_and_plot(tmp_path, capsys):
    image = tmp_path / "band.png"
    counts = ["1", "1", "2", "2", "3", "3", "3", "4", "4", "5"]
    assert main(["topk", "--P", "10", "--N", "90", "--alpha", "0.05", "--counts", *counts, "--json",
                 "--plot", str(image)]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["crossover"] == 3 and len(payload["k"]) == 10 and image.stat().st_size > 10_000
    expected = topk_test([float(c) for c in counts], 10, 90, alpha=0.05)
    assert payload["p_discrete"] == pytest.approx(expected.p_discrete.tolist())


def test_cli_reads_counts_and_scores_files(tmp_path, capsys):
    counts = tmp_path / "counts.txt"
    counts.write_text("1, 1.5\n2 2.5\n")
    assert main(["topk", "--P", "5", "--N", "20", "--counts-file", str(counts)]) == 0
    assert "2.500" in capsys.readouterr().out
    scores = tmp_path / "scores.csv"
    scores.write_text("score,label\n0.9,1\n0.8,1\n0.8,0\n0.4,0\n0.3,1\n0.1,0\n")
    assert main(["topk", "--scores-file", str(scores), "--alpha", "0.2", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert (payload["P"], payload["N"]) == (3, 3) and payload["observed"][:3] == [1.0, 1.5, 2.0]


@pytest.mark.parametrize("argv,text", [
    (["topk", "--N", "90"], "--P and --N are required"),
    (["topk", "--P", "10", "--N", "90", "--counts", "1", "5"], "the count at k = 2"),
    (["topk", "--P", "10", "--N", "90", "--K", "200"], "K must be at most P + N = 100"),
    (["topk", "--P", "10", "--N", "90", "--counts", "1", "--K", "3"], "--K 3 is longer than the curve"),
    (["topk", "--scores-file", "/nonexistent/s.csv"], "--scores-file /nonexistent/s.csv: cannot read it"),
    (["topk", "--P", "1", "--N", "1", "--counts-file", "/nonexistent/c.txt"], "--counts-file"),
])
def test_cli_bad_input_exits_2_naming_the_option(argv, text, capsys, tmp_path):
    image = tmp_path / "never.png"
    assert main([*argv, "--plot", str(image)]) == 2
    assert text in capsys.readouterr().err
    assert not image.exists()


@pytest.mark.parametrize("P,N,alpha", [(3, 4, 0.2), (10, 90, 0.05), (300, 40, 0.01), (50, 5000, 0.001)])
def test_lower_bound_is_the_mirror_image_of_the_negatives_upper_bound(P, N, alpha):
    lower = topk_bounds(P, N, alpha=alpha, C=7).lower  # the lower bound is one ranking's, at alpha
    negatives = topk_bounds(N, P, alpha=alpha).interpolated
    np.testing.assert_allclose(lower, np.arange(1, P + N + 1) - negatives, rtol=0, atol=1e-9)
