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
from tablegen.compare.pairwise.sequential import (
    EarlyLook,
    SequentialCounter,
    _through_the_look,
    besag_clifford_fraction,
    besag_clifford_p,
    early_look,
    rounded_up,
    sequential_level,
    sequential_p,
)
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


# -- the early look ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("cap", "h", "drawn", "most_hits"), [(60, 5, 10, 0), (200, 20, 19, 0), (200, 5, 30, 2),
                                                              (300, 20, 100, 3), (999, 20, 359, 0)])
def test_the_early_look_holds_its_level_exactly(cap, h, drawn, most_hits):
    """With a look, Pr(p <= alpha) summed exactly over the stopping distribution (U ~ Uniform(0, 1)): the outcomes'
    probabilities add up to 1, and the level is at most alpha on a fine grid and at every attainable value."""
    look = EarlyLook(drawn, most_hits)
    assert sequential_level(Fraction(1), cap, h, look) == 1
    attainable = {besag_clifford_fraction(x, drawn, cap, h, look, early=True) for x in range(most_hits + 1)}
    attainable |= {besag_clifford_fraction(h, at, cap, h, look) for at in range(h, cap + 1, max(1, cap // 40))}
    attainable |= {besag_clifford_fraction(x, cap, cap, h, look) for x in range(h)}
    for alpha in sorted(attainable | {Fraction(k, 1000) for k in range(1, 1001, 9)}):
        assert sequential_level(alpha, cap, h, look) <= alpha, alpha
    early = besag_clifford_fraction(most_hits, drawn, cap, h, look, early=True)
    reported = Fraction(rounded_up(early))  # the double, never below the fraction: the early stops alone, exactly
    assert early == look.price and sequential_level(reported, cap, h, look) == early


def test_without_its_price_the_look_would_break_the_level():
    """The price is needed: the same rule reporting Besag & Clifford's p-value unchanged after the look exceeds
    the level somewhere (so the exact sum above can fail)."""
    cap, h, look = 200, 5, EarlyLook(30, 2)

    def level_without_price(alpha):
        free = EarlyLook(look.drawn, look.most_hits)
        total = Fraction(0)
        for drawn in range(h, cap + 1):
            if Fraction(h, drawn) <= alpha:
                total += Fraction(h, drawn * (drawn + 1)) - _through_the_look(free, h, drawn, cap, h, True)
        for x in range(h):
            if Fraction(x + 1, cap + 1) <= alpha:
                total += Fraction(1, cap + 1) - _through_the_look(free, x, cap, cap, h, False)
        return total + sum(Fraction(1, look.drawn + 1) for x in range(look.most_hits + 1)
                           if Fraction(x + 1, look.drawn + 1) <= alpha)

    assert any(level_without_price(Fraction(k, 200)) > Fraction(k, 200) for k in range(1, 60))


def _rejection_with_look(u: np.ndarray, alpha: float, tau: float, cap: int, h: int, look: EarlyLook) -> np.ndarray:
    """Pr(reported p <= alpha | each pattern reaches with probability u), exactly, under the rule with the look:
    early stops (binomial at l_e), then the stopped and capped outcomes less the paths the look stopped."""
    e, le = look.most_hits, look.drawn
    out = np.zeros_like(u)
    for x in range(e + 1):
        if besag_clifford_p(x, le, cap, h, look, early=True) + tau <= alpha:
            out += binom.pmf(x, le, u)
    for drawn in range(h, cap + 1):
        if besag_clifford_p(h, drawn, cap, h, look) + tau <= alpha:
            out += nbinom.pmf(drawn - h, h, u)
            if drawn > le:  # less the paths with x <= e of the first l_e, the (h - x)-th hit after them at drawn
                out -= sum(binom.pmf(x, le, u) * nbinom.pmf(drawn - le - (h - x), h - x, u) for x in range(e + 1))
    for x_cap in range(h):
        if besag_clifford_p(x_cap, cap, cap, h, look) + tau <= alpha:
            out += binom.pmf(x_cap, cap, u)
            out -= sum(binom.pmf(x, le, u) * binom.pmf(x_cap - x, cap - le, u) for x in range(min(e, x_cap) + 1))
    return out


def test_the_look_the_bound_and_the_sequential_p_value_hold_the_level_given_the_pair():
    """The whole rule of the report (McDiarmid's bound below tau, else the early look at l_e, else Besag &
    Clifford's p-value plus the look's price, plus tau) at the exact p of each of the 2^20 swap patterns of a real
    pair, averaged over them: at most alpha at every alpha (a cap of L = 40, h = 5, a look at 6 patterns)."""
    from scipy.stats import rankdata

    from tablegen.compute.kernels.ranking import mcc_weights
    from tablegen.compute.kernels.swaps import swap_differences, swap_order

    rng = np.random.default_rng(44)
    n, cap, h, look = 20, 40, 5, EarlyLook(6)
    tau = 1 / (cap + 1)
    y = np.r_[np.ones(10, int), np.zeros(10, int)]
    a, b = 3 * y + 0.3 * rng.normal(size=n), -3 * y + 0.3 * rng.normal(size=n)
    every = np.empty((1, 2 ** n))
    swap_differences(*swap_order(rankdata(a) / n, rankdata(b) / n), y.astype(np.uint8), 10, np.array([1]), 0,
                     mcc_weights(10, 10, n + 1), True, np.uint64(0), np.uint64(0), 0, every)
    values, counts = np.unique(every[0], return_counts=True)
    exact_p = np.cumsum(counts[::-1])[::-1] / every.size
    bounds = np.array([p_bound("best_accuracy", y, a, b, v, "greater") for v in values])
    weights = counts / every.size
    for u in (0.001, 0.01, 0.3, 1.0):  # the path probabilities of each u add up to 1
        assert _rejection_with_look(np.array([u]), 2.0, 0.0, cap, h, look)[0] == pytest.approx(1.0, abs=1e-12)
    for alpha in (0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8):
        reject = np.where(bounds < tau, bounds <= alpha, _rejection_with_look(exact_p, alpha, tau, cap, h, look))
        assert float(np.sum(weights * reject)) <= alpha, alpha


def test_a_look_inside_a_block_counts_what_a_look_at_its_end_counts():
    rng = np.random.default_rng(45)
    observed = np.array([0.5, 2.0, -0.1])
    differences = rng.normal(size=(3, 300))
    one = SequentialCounter(observed, 5, 300, EarlyLook(37, 1))
    one.add(differences)
    pieces = SequentialCounter(observed, 5, 300, EarlyLook(37, 1))
    for start, stop in ((0, 37), (37, 100), (100, 300)):
        pieces.add(differences[pieces.active][:, start:stop])
    assert [one.counts(c) for c in range(3)] == [pieces.counts(c) for c in range(3)]
    assert one.counts(1).stopped_early("greater") and one.counts(1).of("greater")[1] == 37
    manual = int(np.sum(differences[1, :37] >= 2.0 - 1e-9))
    assert one.counts(1).of("greater")[0] == manual <= 1


def test_pairwise_tests_stop_a_clear_pair_at_the_look_and_charge_the_others():
    """R unset: a clearly beaten model's pair stops at l_e = ceil(2k/alpha) - 1 patterns, none of which reach the
    difference (checked on the same keyed patterns by the kernel directly), with p = 1/(l_e + 1); a close pair
    goes on and pays 1/(l_e + 1); the same call with R given has no look."""
    from tablegen.compare.pairwise.tests import swap_nulls
    from tablegen.compare.pairwise.validation import checked_pair

    rng = np.random.default_rng(46)
    y = np.r_[np.ones(300), np.zeros(700)]
    models = {"good": 2 * y + rng.normal(size=1000), "close": 1.9 * y + rng.normal(size=1000),
              "weak": 1.0 * y + rng.normal(size=1000)}
    result = pairwise_tests(y, models, metric="average_precision")
    look = early_look(0.05, 2, 10_000)
    assert look.drawn == 79
    weak, close = result.tests["good", "weak"], result.tests["good", "close"]
    assert weak.stopped_early and weak.replicates == look.drawn and weak.hits == 0
    assert weak.p_value == rounded_up(Fraction(1, 80)) and "early look" in weak.sentence()
    q = checked_pair(y, models["good"], models["weak"], "average_precision", "permutation", "greater", None, None,
                     None, None, "cpu")
    first, _ = swap_nulls(q.labels, q.scores_a, q.scores_b, [q.column], q.k_cut, R=look.drawn, key=q.key)
    assert not np.any(first[0] >= weak.difference * q.divisor - 1e-9)
    assert not close.stopped_early and close.early_look == 79
    expected = besag_clifford_fraction(close.hits, close.replicates, 10_000) + Fraction(1, 80)
    assert close.p_value == rounded_up(expected) and close.p_interval == sequential_p(
        close.hits, close.replicates, 10_000, look=look)[1]
    given = pairwise_tests(y, models, metric="average_precision", R=10_000)
    assert given.tests["good", "weak"].early_look is None and given.tests["good", "weak"].replicates == 10_000
    record = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert {t["b"]: t["stopped_early"] for t in record["tests"]} == {"close": False, "weak": True}


def test_the_look_takes_the_checked_alpha_a_numpy_float_too():
    """``alpha`` as a numpy float32 (accepted by the argument check) places the same look as the float."""
    rng = np.random.default_rng(47)
    y = np.r_[np.ones(300), np.zeros(700)]
    models = {"good": 2 * y + rng.normal(size=1000), "weak": 1.0 * y + rng.normal(size=1000)}
    single = pairwise_tests(y, models, metric="average_precision", alpha=np.float32(0.05))
    assert single.tests["good", "weak"].early_look == early_look(float(np.float32(0.05)), 1, 10_000).drawn


def test_the_report_says_which_pairs_stopped_at_the_look_and_what_their_p_value_is():
    import tablegen

    rng = np.random.default_rng(46)
    y = np.r_[np.ones(300), np.zeros(700)]
    models = {"good": 2 * y + rng.normal(size=1000), "close": 1.9 * y + rng.normal(size=1000),
              "weak": 1.0 * y + rng.normal(size=1000)}
    sentence = tablegen.evaluate(y, models, C=3, metrics=["average_precision"])["average_precision"].sentence()
    assert ("(sequential permutation; 1 stopped at the early look, none of the first 79 patterns reaching: "
            "p = 0.0125, a smaller one needs R given, Holm)") in sentence
    assert "199 random label arrangements, stopped at the early look: every model's count settled, seed 2005" \
        in sentence
