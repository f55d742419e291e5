"""The max-T selection test's early look (R left unset): a run in which no arrangement's maximum reaches any
model's value by l_e = ceil(10/alpha) - 1 arrangements stops there, every p-value 1/(l_e + 1); a run that goes on
adds 1/(l_e + 1) to every p-value.  The rule holds the winner's level exactly (binomial sums over every observed
arrangement of a small exact null), and the code gives what the rule says: the same arrangements as a fixed run,
the same counts, the price added, each metric of a fused pass what it gives alone."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations
from math import comb

import numpy as np
import pytest
from scipy.stats import binom

from tablegen.compare import selection_test, selection_tests
from tablegen.compare.pairwise.sequential import EarlyLook, max_t_look


def _strong(n=2000, K=4, seed=50):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    return y, {f"m{j}": (1.0 + 0.3 * j) * y + rng.normal(size=n) for j in range(K)}


def test_a_run_where_no_arrangement_reaches_stops_at_the_look_on_the_fixed_runs_arrangements():
    y, models = _strong()
    look = max_t_look(0.05, 10_000)
    assert look == EarlyLook(199)
    early = selection_test(y, models, metric="auc")
    fixed = selection_test(y, models, metric="auc", R=look.drawn)  # the same first 199 arrangements
    assert early.stopped_early and early.arrangements == 199 and early.early_look == 199 and early.R == 10_000
    assert all(p == 1 / 200 for p in early.adjusted_p_values.values())
    assert early.adjusted_p_values == fixed.adjusted_p_values and early.raw_p_values == fixed.raw_p_values
    assert early.critical_value == fixed.critical_value  # the same maxima
    low, high = early.adjusted_p_intervals[early.winner]
    assert low == 0.0 and high == pytest.approx(1 - 0.0125 ** (1 / 199))  # Clopper-Pearson at 97.5%
    assert fixed.adjusted_p_intervals[fixed.winner][1] < high
    assert "stopped at the early look" in early.sentence() and early.to_dict()["stopped_early"] is True


def test_a_run_past_the_look_pays_its_price_on_every_p_value():
    y, models = _strong()
    models["noise"] = np.random.default_rng(51).normal(size=y.size)  # reached by many arrangements: no early stop
    going = selection_test(y, models, metric="auc")
    fixed = selection_test(y, models, metric="auc", R=10_000)
    assert not going.stopped_early and going.early_look == 199 and going.arrangements == 10_000
    from tablegen.compare.pairwise.sequential import rounded_up

    for kind in ("raw_p_values", "adjusted_p_values", "single_step_p_values"):
        ours, theirs = getattr(going, kind), getattr(fixed, kind)
        hits = {m: round(p * 10_001) - 1 for m, p in theirs.items()}  # (b + 1)/(R + 1) of the fixed run
        assert ours == {m: min(1.0, rounded_up(Fraction(b + 1, 10_001) + Fraction(1, 200))) for m, b in hits.items()}
        assert all(ours[m] >= Fraction(b + 1, 10_001) + Fraction(1, 200) or ours[m] == 1.0 for m, b in hits.items())
    assert going.critical_value == fixed.critical_value
    assert going.critical_interval[0] <= fixed.critical_interval[0] <= fixed.critical_interval[1] \
        <= going.critical_interval[1]  # the DKW band at 97.5%
    assert "arrangements, past an early look at 199," in going.sentence()


def test_a_fused_pass_stops_each_metric_as_it_would_alone():
    y, models = _strong()
    models["weak"] = 0.15 * y + np.random.default_rng(52).normal(size=y.size)  # significant by AUC, not by F1
    both = selection_tests(y, models, metrics=["auc", "best_f1", "average_precision"])
    stops = {m: r.stopped_early for m, r in both.items()}
    assert True in stops.values() and False in stops.values(), stops
    for metric, result in both.items():
        assert result.to_dict() == selection_test(y, models, metric=metric).to_dict(), metric


def test_r_given_or_every_arrangement_enumerated_has_no_look():
    y, models = _strong()
    assert selection_test(y, models, metric="auc", R=5_000).early_look is None
    small_y = np.r_[np.ones(6, int), np.zeros(6, int)]
    small = {"a": np.arange(12.0)[::-1], "b": np.arange(12.0)}
    assert selection_test(small_y, small, metric="auc").method == "exact"
    assert selection_test(small_y, small, metric="auc").early_look is None
    assert max_t_look(0.001, 10_000) is None  # l_e = 9,999 would pass R / 2


def _auc_values(scores: np.ndarray, arrangements: np.ndarray, P: int) -> np.ndarray:
    """AUC of each model (rows of ``scores``, untied) on each arrangement (rows of positive indices)."""
    ranks = scores.argsort(axis=1).argsort(axis=1) + 1  # ascending ranks 1..n
    n = scores.shape[1]
    sums = ranks[:, arrangements].sum(axis=2)  # (models, arrangements)
    return (sums - P * (P + 1) / 2) / (P * (n - P))


@pytest.mark.parametrize(("R", "look"), [(40, EarlyLook(6)), (60, EarlyLook(9)), (30, EarlyLook(4))])
def test_the_look_holds_the_winners_level_exactly_over_a_small_exact_null(R, look):
    """n = 12 items, P = 6, three models with fixed scores; under the null every one of the 924 arrangements is the
    observed one with probability 1/924.  Given it, each random arrangement reaches the winner's value with
    probability q_w (the max over models reaches it) and the weakest model's with q_m >= q_w, so the rule rejects the
    winner at level a with probability (1 - q_m)^l_e [1/(l_e + 1) <= a] + Pr(B + 1 <= (a - tau)(R + 1)) -
    (1 - q_m)^l_e Pr(Bin(R - l_e, q_w) + 1 <= (a - tau)(R + 1)), B ~ Bin(R, q_w): averaged over the 924, at most a
    for every a (the worst-case test below shows the price is needed; here the sum comes near the level, so the
    check is not vacuous)."""
    rng = np.random.default_rng(53)
    n, P = 12, 6
    scores = rng.normal(size=n) + 0.1 * rng.normal(size=(3, n))  # alike models, as from one search
    every = np.array(list(combinations(range(n), P)))
    values = _auc_values(scores, every, P)  # (models, arrangements)
    maxima = values.max(axis=0)
    tau = 1 / (look.drawn + 1)

    def level(a: float, price: float) -> float:
        total = 0.0
        for o in range(every.shape[0]):
            winner, weakest = values[:, o].max(), values[:, o].min()
            q_w = np.mean(maxima >= winner - 1e-12)
            q_m = np.mean(maxima >= weakest - 1e-12)
            early = (1 - q_m) ** look.drawn
            reject = early * (1 / (look.drawn + 1) <= a)
            b = np.floor((a - price) * (R + 1) - 1 + 1e-12)  # largest count B with (B + 1)/(R + 1) + price <= a
            if b >= 0:
                reject += binom.cdf(b, R, q_w) - early * binom.cdf(b, R - look.drawn, q_w)
            total += reject
        return total / every.shape[0]

    grid = [0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1 / (look.drawn + 1) + 1e-9]
    levels = [level(a, tau) for a in grid]
    assert all(v <= a + 1e-12 for v, a in zip(levels, grid))
    assert max(v / a for v, a in zip(levels, grid)) > 0.5  # not vacuous: the sum comes near the level


def _worst_case_level(a: Fraction, R: int, look: EarlyLook, price: Fraction) -> Fraction:
    """Pr(reported <= a) of the max-T rule when each arrangement reaches the winner and the weakest model alike
    with probability U ~ Uniform(0, 1) (the most liberal exact p-value), in exact fractions: an early stop (none of
    the first l_e reach) has 1/(l_e + 1); a run past it with B of R reaching has 1/(R + 1) less the paths with none
    reaching among the first l_e, C(R - l_e, B) / ((R + 1) C(R, B))."""
    level = Fraction(1, look.drawn + 1) if Fraction(1, look.drawn + 1) <= a else Fraction(0)
    for b in range(R + 1):
        if Fraction(b + 1, R + 1) + price <= a:
            level += Fraction(1, R + 1) - Fraction(comb(R - look.drawn, b), (R + 1) * comb(R, b))
    return level


@pytest.mark.parametrize(("R", "drawn"), [(40, 6), (200, 19), pytest.param(1000, 199, marks=pytest.mark.slow)])
def test_the_look_holds_its_level_exactly_in_the_worst_case_and_needs_its_price(R, drawn):
    look = EarlyLook(drawn)
    grid = {Fraction(k, 400) for k in range(1, 401)} | {look.price, look.price + Fraction(1, R + 1)}
    assert _worst_case_level(Fraction(1), R, look, Fraction(0)) == 1  # every outcome once
    assert all(_worst_case_level(a, R, look, look.price) <= a for a in grid)
    assert any(_worst_case_level(a, R, look, Fraction(0)) > a for a in grid)


def test_a_model_at_its_metric_s_floor_does_not_hold_the_run_back():
    """A model whose best accuracy is the majority rate (the empty cut-off's, which every ranking has) is reached by
    every arrangement: its p-values are 1 whether the run stops or goes on, so the others stop at the look."""
    from tablegen.compare.selection.engine import metric_floor
    from tablegen.compute.kernels.ranking import mcc_weights

    y, models = _strong()
    models["floor"] = -y + 0.01 * np.random.default_rng(54).normal(size=y.size)  # positives last: no cut-off helps
    P, n = int(y.sum()), y.size
    early = selection_test(y, models, metric="best_accuracy")
    fixed = selection_test(y, models, metric="best_accuracy", R=10_000)
    floor = metric_floor(1, P, n, mcc_weights(P, n - P, n + 1))
    assert early.values["floor"] == floor == (n - P) / n
    assert early.stopped_early and early.arrangements == 199
    for kind in ("raw_p_values", "adjusted_p_values", "single_step_p_values"):
        assert getattr(early, kind)["floor"] == getattr(fixed, kind)["floor"] == 1.0
        assert all(p == 1 / 200 for m, p in getattr(early, kind).items() if m != "floor"), kind
    assert selection_test(y, models, metric="auc").stopped_early is False  # AUC has no floor: its worst model holds


@pytest.mark.parametrize("column", [1, 2, 3, 5])
def test_no_model_falls_below_the_floor_on_any_arrangement(column):
    """The floor of the best-threshold metrics against every model and arrangement of a small case, ties included."""
    from tablegen.compare.selection.engine import metric_floor
    from tablegen.compute.kernels.permutation import score_model
    from tablegen.compute.kernels.ranking import mcc_weights

    rng = np.random.default_rng(55 + column)
    n, P = 10, 4
    weights = mcc_weights(P, n - P, n + 1)
    floor = metric_floor(column, P, n, weights)
    for _ in range(30):
        scores = np.round(rng.normal(size=n), 1)
        order = np.argsort(-scores, kind="stable")
        ranked = scores[order]
        ends = np.ones(n, np.uint8)
        ends[:-1] = ranked[1:] != ranked[:-1]
        for positives in combinations(range(n), P):
            labels = np.zeros(n, np.uint8)
            labels[list(positives)] = 1
            assert score_model(labels, order, ends, P, column, 0, weights) >= floor
