"""The max-T selection test's early look (R left unset): at l_e = ceil(10/alpha) - 1 arrangements each model's raw,
step-down and single-step count settles where at most e = 0 or at least H = 20 arrangements reached it (p = (X + 1)/
(l_e + 1)); a count in between goes on to R and pays tau_e = 1/(l_e + 1), capped at H/(l_e + 1); a run stops at
the look where every count settled.  Each count's p-value is valid (exact fractions in the worst case, and over
every observed arrangement of a small exact null) and monotone in its count (which the adjustments need), and the
code gives what the rule says: the same arrangements as fixed runs, each metric of a fused pass what it gives
alone."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from itertools import combinations
from math import comb

import numpy as np
import pytest
from scipy.stats import binom

from tablegen.compare import selection_test, selection_tests
from tablegen.compare.pairwise.sequential import EarlyLook, max_t_look, rounded_up
from tablegen.compare.selection.engine import designed_p_value

LOOK = EarlyLook(199, 0, 20)


def _strong(n=2000, K=4, seed=50):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    return y, {f"m{j}": (1.0 + 0.3 * j) * y + rng.normal(size=n) for j in range(K)}


def test_a_run_where_no_arrangement_reaches_stops_at_the_look_on_the_fixed_runs_arrangements():
    y, models = _strong()
    assert max_t_look(0.05, 10_000) == LOOK
    early = selection_test(y, models, metric="auc")
    fixed = selection_test(y, models, metric="auc", R=LOOK.drawn)  # the same first 199 arrangements
    assert early.stopped_early and early.arrangements == 199 and early.early_look == 199 and early.R == 10_000
    assert all(p == 1 / 200 for p in early.adjusted_p_values.values())
    assert early.adjusted_p_values == fixed.adjusted_p_values and early.raw_p_values == fixed.raw_p_values
    assert early.critical_value == fixed.critical_value  # the same maxima
    low, high = early.adjusted_p_intervals[early.winner]
    assert low == 0.0 and high == pytest.approx(1 - 0.0125 ** (1 / 199))  # Clopper-Pearson at 97.5%
    assert fixed.adjusted_p_intervals[fixed.winner][1] < high
    assert "stopped at the early look" in early.sentence() and early.to_dict()["stopped_early"] is True


def _counts(y, models, metric, R):
    """Per model, the raw, step-down (by observed rank) and single-step counts of a fixed run of R arrangements
    (replicates 0 .. R - 1, what a run with a look draws first)."""
    from tablegen.compare.selection.maxt import _counts as counted
    from tablegen.compare.selection.validation import checked_selection

    q = dataclasses.replace(checked_selection(y, models, metric, None, R, None, 0.05, None, "auto", "cpu", None),
                            look=None)
    found = counted([q], None)[0]
    return q, found.raw_hits, found.step_hits, found.single_hits(q.observed - 1e-9)


def test_each_count_settles_at_the_look_or_goes_on_and_pays_its_price():
    """A weak but real model's raw count falls between e and H at the look (the run goes on to R; it pays
    1/200), noise is reached by far more than H arrangements (settled: (X + 1)/200, from the look), the strong
    models by none (1/200): every p-value is what the rule gives from the counts of fixed runs of 199 and 10,000."""
    y, models = _strong()
    rng = np.random.default_rng(51)
    models["weak"] = 0.15 * y + rng.normal(size=y.size)
    models["noise"] = rng.normal(size=y.size)
    going = selection_test(y, models, metric="auc")
    assert not going.stopped_early and going.early_look == 199 and going.arrangements == 10_000
    q, raw_e, step_e, single_e = _counts(y, models, "auc", LOOK.drawn)
    _, raw_R, step_R, single_R = _counts(y, models, "auc", 10_000)
    names = list(q.models)

    def rule(at_look, hits):
        return [rounded_up(designed_p_value(LOOK, x, b, 10_000)) for x, b in zip(at_look, hits)]

    assert [going.raw_p_values[m] for m in names] == rule(raw_e, raw_R)
    assert [going.single_step_p_values[m] for m in names] == rule(single_e, single_R)
    ranked = np.argsort(-q.observed, kind="stable")
    adjusted = np.maximum.accumulate(rule(step_e, step_R))  # the step-down p-values made monotone down the ranking
    assert [going.adjusted_p_values[names[m]] for m in ranked] == adjusted.tolist()
    branches = {("low" if x == 0 else "high" if x >= 20 else "middle") for x in np.r_[raw_e, step_e, single_e]}
    assert branches == {"low", "middle", "high"}  # every branch taken: not vacuous
    weak = names.index("weak")
    assert 0 < raw_e[weak] < 20 and going.raw_p_values["weak"] >= (raw_R[weak] + 1) / 10_001 + 1 / 200
    assert going.raw_p_values["noise"] == rounded_up(Fraction(int(raw_e[names.index("noise")]) + 1, 200)) > 0.1
    low, high = going.raw_p_intervals["noise"]  # from the look's 199 arrangements, at 97.5%
    assert low < (raw_e[names.index("noise")]) / 199 < high and high - low > 0.1
    assert "arrangements, past an early look at 199," in going.sentence()


def test_a_model_like_noise_does_not_hold_the_run_back():
    """Noise among strong models: reached by more than H of the first 199 arrangements, it settles there (p from the
    look, clearly not significant) and the run stops: the answers of a fixed run of 199, less the strong models'
    price."""
    y, models = _strong()
    models["noise"] = np.random.default_rng(57).normal(size=y.size)
    early = selection_test(y, models, metric="auc")
    fixed = selection_test(y, models, metric="auc", R=LOOK.drawn)
    assert early.stopped_early and early.arrangements == 199
    for kind in ("raw_p_values", "single_step_p_values", "adjusted_p_values"):  # each rounded up, not to nearest
        ours, theirs = getattr(early, kind), getattr(fixed, kind)
        assert ours == {m: rounded_up(Fraction(round(p * 200), 200)) for m, p in theirs.items()}, kind
    assert early.raw_p_values["noise"] >= 21 / 200
    assert sorted(early.significant_models()) == sorted(m for m in models if m != "noise")


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


@pytest.mark.parametrize(("R", "look"), [(40, EarlyLook(6, 0, 3)), (60, EarlyLook(9, 0, 4)), (30, EarlyLook(4, 0, 2))])
def test_the_look_holds_the_winners_level_exactly_over_a_small_exact_null(R, look):
    """n = 12 items, P = 6, three models with fixed scores; under the null every one of the 924 arrangements is the
    observed one with probability 1/924.  Given it, each random arrangement's maximum reaches the winner's value
    with probability q, so the winner's count at the look is X ~ Bin(l_e, q) and past it X + Bin(R - l_e, q); the
    rule's rejection probability at level a, summed over both and averaged over the 924, is at most a for every a
    (and comes near it: not vacuous)."""
    rng = np.random.default_rng(53)
    n, P = 12, 6
    scores = rng.normal(size=n) + 0.1 * rng.normal(size=(3, n))  # alike models, as from one search
    every = np.array(list(combinations(range(n), P)))
    values = _auc_values(scores, every, P)  # (models, arrangements)
    maxima = values.max(axis=0)

    qs = np.array([np.mean(maxima >= values[:, o].max() - 1e-12) for o in range(every.shape[0])])
    xs, ks = np.arange(look.drawn + 1), np.arange(R - look.drawn + 1)
    at_look = binom.pmf(xs[None, :], look.drawn, qs[:, None])  # (observed, X)
    after = binom.pmf(ks[None, :], R - look.drawn, qs[:, None])  # (observed, B - X)
    reported = np.array([[designed_p_value(look, x, x + k, R) for k in ks] for x in xs], dtype=object)
    grid = [Fraction(k, 100) for k in (2, 5, 10, 15, 20, 25, 30, 40, 50, 70)] + \
        [look.price, Fraction(look.settled_from, look.drawn + 1)]
    levels = [float(np.mean(np.einsum("ox,ok,xk->o", at_look, after, (reported <= a).astype(float))))
              for a in grid]
    assert all(v <= float(a) + 1e-12 for v, a in zip(levels, grid))
    assert max(v / float(a) for v, a in zip(levels, grid)) > 0.5  # not vacuous: the sum comes near the level


def _outcomes(R: int, look: EarlyLook, price: bool = True) -> dict:
    """Reported p-value -> its probability when each arrangement reaches with probability U ~ Uniform(0, 1) (the
    most liberal exact p-value), in exact fractions: X of the first l_e reach with probability 1/(l_e + 1) each, and
    X of the first l_e and B of all R with C(l_e, X) C(R - l_e, B - X) / ((R + 1) C(R, B)) (the Beta integral).
    ``price=False``: the rule without tau_e."""
    law: dict = {}
    for x in range(look.drawn + 1):
        if look.settles(x):  # its p-value does not depend on B
            p = Fraction(x + 1, look.drawn + 1)
            law[p] = law.get(p, 0) + Fraction(1, look.drawn + 1)
            continue
        for b in range(x, x + R - look.drawn + 1):
            if price:
                p = designed_p_value(look, x, b, R)
            else:
                p = min(Fraction(b + 1, R + 1), Fraction(look.settled_from, look.drawn + 1))
            law[p] = law.get(p, 0) + Fraction(comb(look.drawn, x) * comb(R - look.drawn, b - x), (R + 1) * comb(R, b))
    return law


def _level(law: dict, a: Fraction) -> Fraction:
    return sum((mass for p, mass in law.items() if p <= a), Fraction(0))


@pytest.mark.parametrize(("R", "look"), [(40, EarlyLook(6, 0, 3)), (200, EarlyLook(19, 0, 4)),
                                         (1000, LOOK)])
def test_the_look_holds_its_level_exactly_in_the_worst_case_and_needs_its_price(R, look):
    law = _outcomes(R, look)
    assert sum(law.values()) == 1  # every outcome once
    grid = {Fraction(k, 400) for k in range(1, 401)} | set(law)  # every attainable p-value too
    assert all(_level(law, a) <= a for a in grid)
    unpriced = _outcomes(R, look, price=False)
    assert any(_level(unpriced, a) > a for a in grid)


def test_the_p_value_never_falls_as_more_arrangements_reach_and_would_without_its_cap():
    """Monotone in the count at the look and the count of all R (what a maximum over more models, or a smaller
    threshold, gives): checked over every attainable pair; without the cap a count that settles high can report
    less than one that went on."""
    R, look = 60, EarlyLook(9, 0, 4)

    def pairs():
        return [(x, b) for x in range(look.drawn + 1) for b in range(x, x + R - look.drawn + 1)]

    p = {(x, b): designed_p_value(look, x, b, R) for x, b in pairs()}
    for (x, b), value in p.items():
        for dx, db in ((0, 1), (1, 1)):
            if (x + dx, b + db) in p:
                assert p[(x + dx, b + db)] >= value, (x, b)
    uncapped = {(x, b): (Fraction(x + 1, look.drawn + 1) if look.settles(x) else
                         min(Fraction(1), Fraction(b + 1, R + 1) + look.price)) for x, b in pairs()}
    assert any(uncapped[(x + 1, b + 1)] < uncapped[(x, b)] for x, b in pairs() if (x + 1, b + 1) in uncapped)


def test_a_model_at_its_metric_s_floor_does_not_hold_the_run_back():
    """A model whose best accuracy is the majority rate (the empty cut-off's, which every ranking has) is reached by
    every arrangement: it settles at the look with p = 1, so the others stop there."""
    y, models = _strong()
    models["floor"] = -y + 0.01 * np.random.default_rng(54).normal(size=y.size)  # positives last: no cut-off helps
    P, n = int(y.sum()), y.size
    early = selection_test(y, models, metric="best_accuracy")
    fixed = selection_test(y, models, metric="best_accuracy", R=10_000)
    assert early.values["floor"] == (n - P) / n
    assert early.stopped_early and early.arrangements == 199
    for kind in ("raw_p_values", "adjusted_p_values", "single_step_p_values"):
        assert getattr(early, kind)["floor"] == getattr(fixed, kind)["floor"] == 1.0
        assert all(p == 1 / 200 for m, p in getattr(early, kind).items() if m != "floor"), kind
