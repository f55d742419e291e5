"""The swap permutation with fewer patterns (:mod:`tablegen.compare.pairwise.sequential`): Besag & Clifford's
sequential p-value holds its level exactly (summed over its stopping distribution), the whole rule (McDiarmid's
bound below 1/(L + 1), else the sequential p-value plus 1/(L + 1)) holds its level exactly given the pair's values
(summed over every observed swap pattern of a real null), and the report's results say which p-value is a bound."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom, nbinom

from tablegen.compare import paired_test, pairwise_tests
from tablegen.compare.pairwise.sequential import besag_clifford_p, rounded_up, sequential_level, sequential_p
from tablegen.compare.pairwise.tests import p_bound


@pytest.mark.parametrize(("cap", "h"), [(60, 5), (200, 20), (999, 20)])
def test_besag_clifford_holds_its_level_exactly(cap, h):
    """Pr(p <= alpha) with every pattern reaching with probability U ~ Uniform(0, 1), summed exactly over the
    stopping distribution (the most liberal exact p-value): at most alpha for every alpha on a fine grid, and equal
    to alpha at the attainable values h/l and (x + 1)/(L + 1)."""
    grid = [Fraction(k, 2000) for k in range(1, 2001, 7)] + [Fraction(h, cap), Fraction(h, cap // 2),
                                                             Fraction(1, cap + 1), Fraction(3, cap + 1)]
    for alpha in grid:
        assert sequential_level(alpha, cap, h) <= alpha, alpha
    for hits, drawn in ((h, cap // 2), (h, h + 1), (min(h, 3) - 1, cap)):  # two stopped early, one at the cap
        attainable = Fraction(h, drawn) if hits == h else Fraction(hits + 1, cap + 1)
        reported = Fraction(besag_clifford_p(hits, drawn, cap, h))  # the double: never below the exact fraction
        assert reported >= attainable and sequential_level(reported, cap, h) == attainable


def _rejection(u: np.ndarray, alpha: float, tau: float, cap: int, h: int) -> np.ndarray:
    """Pr(sequential p + tau <= alpha | each pattern reaches with probability u), exactly: stopping at draw l
    (the h-th reaching pattern) has the negative binomial probability, not stopping with X < h the binomial."""
    out = np.zeros_like(u)
    for drawn in range(h, cap + 1):
        if besag_clifford_p(h, drawn, cap, h) + tau <= alpha:
            out += nbinom.pmf(drawn - h, h, u)  # drawn - h patterns not reaching before the h-th reaching one
    for x in range(h):
        if besag_clifford_p(x, cap, cap, h) + tau <= alpha:
            out += binom.pmf(x, cap, u)
    return out


def test_the_bound_and_the_sequential_p_value_together_hold_the_level_given_the_pair():
    """Given a pair's values, the null makes each of the 2^20 swap patterns the observed one with probability
    2^-20.  For each, the rule answers by the bound (B < tau: rejects iff B <= alpha) or by the sequential p-value
    plus tau, whose rejection probability is a sum over its stopping distribution at the exact p of that pattern.
    The average over the 2^20 patterns is the exact level of the whole rule: at most alpha at every alpha.  At
    20 items McDiarmid's bound is weak, so the rule runs here with a cap of L = 10 patterns and h = 5 (tau = 1/11),
    where the bound answers on the patterns far out in the tail."""
    from scipy.stats import rankdata

    from tablegen.compute.kernels.ranking import mcc_weights
    from tablegen.compute.kernels.swaps import swap_differences, swap_order

    rng = np.random.default_rng(40)
    n, cap, h = 20, 10, 5
    tau = 1 / (cap + 1)
    y = np.r_[np.ones(10, int), np.zeros(10, int)]
    a, b = 3 * y + 0.3 * rng.normal(size=n), -3 * y + 0.3 * rng.normal(size=n)  # opposite: D swings widely
    every = np.empty((1, 2 ** n))
    swap_differences(*swap_order(rankdata(a) / n, rankdata(b) / n), y.astype(np.uint8), 10, np.array([1]), 0,
                     mcc_weights(10, 10, n + 1), True, np.uint64(0), np.uint64(0), 0, every)
    values, counts = np.unique(every[0], return_counts=True)
    reached = np.cumsum(counts[::-1])[::-1]  # patterns with D >= each value (values distinct by > 1e-9)
    exact_p = reached / every.size  # "greater", as the report asks
    bounds = np.array([p_bound("best_accuracy", y, a, b, v, "greater") for v in values])
    assert (bounds >= exact_p).all() and (bounds < tau).any()  # the bound answers somewhere
    weights = counts / every.size
    for alpha in (0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8):
        reject = np.where(bounds < tau, bounds <= alpha, _rejection(exact_p, alpha, tau, cap, h))
        assert float(np.sum(weights * reject)) <= alpha, alpha


def test_a_bound_is_reported_as_a_bound_and_no_pattern_is_drawn(monkeypatch):
    import tablegen.compare.pairwise.tests as tests

    rng = np.random.default_rng(41)
    y = np.r_[np.ones(300), np.zeros(700)]
    a, b = 2 * y + rng.normal(size=1000), rng.normal(size=1000)
    monkeypatch.setattr(tests, "swap_counts", lambda *args, **kwargs: pytest.fail("patterns drawn"))
    result = paired_test(y, a, b, metric="best_accuracy")
    assert result.method == "bound" and result.p_value < 1 / 10_001 and result.replicates is None
    assert result.p_value == p_bound("best_accuracy", y, a, b, result.difference, "two-sided")
    assert result.p_interval == (0.0, result.p_value)
    assert f"p <= {result.p_value:.3g}" in result.sentence() and "McDiarmid" in result.sentence()
    record = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert record["p_value_is_bound"] is True and record["method"] == "bound"


def test_the_sequential_p_value_adds_tau_only_where_the_bound_could_answer():
    rng = np.random.default_rng(42)
    y = np.r_[np.ones(300), np.zeros(700)]
    a, b = 2 * y + rng.normal(size=1000), rng.normal(size=1000)
    ap = paired_test(y, a, b, metric="average_precision", R=1000)  # no constant: Besag & Clifford alone
    assert ap.method == "sequential permutation" and ap.hits == 0 and ap.replicates == 1000
    assert ap.p_value == rounded_up(Fraction(1, 1001)) and "p = " in ap.sentence()
    near = paired_test(y, a, a + 2 * rng.normal(size=1000), metric="best_f1", R=1000)
    assert near.method == "sequential permutation"
    assert near.p_value == min(1.0, rounded_up(Fraction(sequential_p(near.hits, near.replicates, 1000)[0])
                                               + Fraction(1, 1001)))
    record = json.loads(json.dumps(near.to_dict(), allow_nan=False))
    assert record["p_value_is_bound"] is False and record["max_replicates"] == 1000


def test_pairwise_tests_say_which_p_values_are_bounds():
    rng = np.random.default_rng(43)
    y = np.r_[np.ones(300), np.zeros(700)]
    models = {"good": 2 * y + rng.normal(size=1000), "close": 1.8 * y + rng.normal(size=1000),
              "noise": rng.normal(size=1000)}
    result = pairwise_tests(y, models, metric="best_balanced_accuracy")
    methods = {b: t.method for (a, b), t in result.tests.items()}
    assert methods == {"close": "sequential permutation", "noise": "bound"}
    tests = {t["b"]: t for t in json.loads(json.dumps(result.to_dict(), allow_nan=False))["tests"]}
    assert tests["noise"]["p_value_is_bound"] and not tests["close"]["p_value_is_bound"]
    assert tests["noise"]["adjusted_p_value_is_bound"] and not tests["close"]["adjusted_p_value_is_bound"]
    import tablegen

    report = tablegen.evaluate(y, models, C=3, metrics=["best_balanced_accuracy"])
    table = report.to_markdown()
    noise = next(line for line in table.splitlines() if line.startswith("| best_balanced_accuracy | noise |"))
    close = next(line for line in table.splitlines() if line.startswith("| best_balanced_accuracy | close |"))
    assert "| <= " in noise and "<=" not in close  # the Holm-adjusted bound is printed as one
    assert r"\textless{}= " in report.to_latex()
    assert report.to_frame().loc[("best_balanced_accuracy", "noise"), "p vs winner (Holm)"] < 1e-4
    assert "(bound, sequential permutation, Holm)" in _report_sentence(y, models) or \
        "(sequential permutation, bound, Holm)" in _report_sentence(y, models)


def _report_sentence(y, models):
    import tablegen

    return tablegen.evaluate(y, models, C=3, metrics=["best_balanced_accuracy"])["best_balanced_accuracy"].sentence()
