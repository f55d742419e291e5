"""The max-T selection test's early look (R left unset): at l_e = ceil(10/alpha) - 1 arrangements each model's raw,
step-down and single-step count settles where at most e = 0 or at least H = 20 arrangements reached it (p = (X + 1)/
(l_e + 1)); a count in between goes on until H arrangements have reached it (Besag-Clifford, p = H/L) or R, and pays
tau_e = 1/(l_e + 1), capped at H/(l_e + 1).  Each count's p-value is valid (the law of the reported p-value in
exact fractions in the worst case, and the winner's rejection over every observed arrangement of a small exact
null) and monotone in its arrangements (which the adjustments need), and the code gives what the rule says: the
same arrangements as fixed runs, each metric of a fused pass what it gives alone."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from itertools import combinations
from math import comb

import numpy as np
import pytest

from tablegen.compare import selection_test, selection_tests
from tablegen.compare.pairwise.sequential import EarlyLook, max_t_look, rounded_up
from tablegen.compare.selection.early import FOLLOW_BLOCK, designed_p_value

LOOK = EarlyLook(199, 0, 20, 20)
TO_R = EarlyLook(199, 0, 20)  # a count between e and H goes on to R: where a run of R is cheap


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
    return q, (found.raw_hits, found.step_hits, found.single_hits(q.observed - 1e-9))


def _expected(y, models, metric, look, R=10_000):
    """Each count's (X at the look, hits, drawn) by the rule, from fixed runs alone: X from a run of 199; a count
    between e and H followed by runs of growing length until h reached it (L found by bisection), else R."""
    q, at_look = _counts(y, models, metric, look.drawn)
    _, at_R = _counts(y, models, metric, R)
    found = {}
    for kind in range(3):
        for j, x in enumerate(at_look[kind]):
            if look.settles(x):
                found[kind, j] = (int(x), int(x), look.drawn)
            elif look.follow_hits is None or at_R[kind][j] < look.follow_hits:
                found[kind, j] = (int(x), int(at_R[kind][j]), R)
            else:  # the smallest L with H of the first L reaching
                low, high = LOOK.drawn, R
                while high - low > 1:
                    mid = (low + high) // 2
                    low, high = (low, mid) if _counts(y, models, metric, mid)[1][kind][j] >= 20 else (mid, high)
                found[kind, j] = (int(x), 20, high)
    return q, found


@pytest.mark.parametrize(("n", "lift", "look"), [(2000, 0.15, LOOK), (400, 0.3, TO_R)])
def test_each_count_settles_at_the_look_or_goes_on(n, lift, look):
    """A weak but real model's raw count falls between e and H at the look (it goes on until 20 arrangements reach
    it, Besag-Clifford, where a run of R costs over 10^8 steps (6 models x 2,000 items x 10^4); else to R), noise is
    reached by far more than H (settled: (X + 1)/200, from the look), the strong models by none (1/200): every
    p-value is what the rule gives from the counts of fixed runs."""
    y, models = _strong(n=n)
    rng = np.random.default_rng(51)
    models["weak"] = lift * y + rng.normal(size=y.size)
    models["noise"] = rng.normal(size=y.size)
    going = selection_test(y, models, metric="auc")
    q, found = _expected(y, models, "auc", look)
    assert q.look is None and going.early_look == 199  # q: the fixed run's question
    names, K = list(q.models), len(q.models)

    def rule(kind):
        return [rounded_up(designed_p_value(look, *found[kind, j], 10_000)) for j in range(K)]

    assert [going.raw_p_values[m] for m in names] == rule(0)
    assert [going.single_step_p_values[m] for m in names] == rule(2)
    ranked = np.argsort(-q.observed, kind="stable")
    adjusted = np.maximum.accumulate(rule(1))  # the step-down p-values made monotone down the ranking
    assert [going.adjusted_p_values[names[m]] for m in ranked] == adjusted.tolist()
    branches = {("low" if x == 0 else "high" if x >= 20 else "middle") for x, _, _ in found.values()}
    assert branches == {"low", "middle", "high"}  # every branch taken: not vacuous
    last = max(drawn for x, _, drawn in found.values())
    blocks = -(-(last - LOOK.drawn) // FOLLOW_BLOCK)
    assert not going.stopped_early
    weak = names.index("weak")
    x, hits, drawn = found[0, weak]
    if look.follow_hits is None:
        assert last == going.arrangements == 10_000 and 0 < x < 20
        assert going.raw_p_values["weak"] == rounded_up(Fraction(hits + 1, 10_001) + LOOK.price)
        return
    assert LOOK.drawn < last < 10_000 and going.arrangements == LOOK.drawn + blocks * FOLLOW_BLOCK
    assert 0 < x < 20 and hits == 20 and going.raw_p_values["weak"] == rounded_up(Fraction(20, drawn) + LOOK.price)
    noise = found[0, names.index("noise")][0]
    assert going.raw_p_values["noise"] == rounded_up(Fraction(noise + 1, 200)) > 0.1
    low, high = going.raw_p_intervals["noise"]  # from the look's 199 arrangements, at 97.5%
    assert low < noise / 199 < high and high - low > 0.1
    low, high = going.raw_p_intervals["weak"]  # Besag-Clifford's interval under its stopping rule, at 97.5%
    assert low < 20 / drawn < high
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


def _paths(R: int, look: EarlyLook):
    """Every outcome of one count's run — (X at the look, hits, drawn) — with its probability given a reach
    probability q as c q^i (1 - q)^j: (x, hits, drawn, c, i, j)."""
    h, l_e = look.follow_hits or R + 1, look.drawn
    for x in range(l_e + 1):
        if look.settles(x):
            yield x, x, l_e, comb(l_e, x), x, l_e - x
            continue
        for L in range(l_e + h - x, R + 1):  # the h-th reaching arrangement is the L-th
            yield x, h, L, comb(l_e, x) * comb(L - 1 - l_e, h - 1 - x), h, L - h
        for b in range(x, min(h, x + R - l_e + 1)):  # fewer than h of all R
            yield x, b, R, comb(l_e, x) * comb(R - l_e, b - x), b, R - b


def _reported(R: int, look: EarlyLook, price: bool = True):
    """(p, c, i, j) of every outcome of :func:`_paths`; ``price=False``: the rule without tau_e."""
    for x, hits, drawn, c, i, j in _paths(R, look):
        p = designed_p_value(look, x, hits, drawn, R)
        if not price and not look.settles(x):
            bc = Fraction(hits, drawn) if hits >= (look.follow_hits or R + 1) else Fraction(hits + 1, R + 1)
            p = min(bc, Fraction(look.settled_from, look.drawn + 1))
        yield p, c, i, j


@pytest.mark.parametrize(("R", "look"), [(40, EarlyLook(6, 0, 3, 3)), (60, EarlyLook(9, 0, 4, 4)),
                                         (30, EarlyLook(4, 0, 2, 2)), (40, EarlyLook(6, 0, 3)),
                                         (60, EarlyLook(9, 0, 4))])
def test_the_look_holds_the_winners_level_exactly_over_a_small_exact_null(R, look):
    """n = 12 items, P = 6, three models with fixed scores; under the null every one of the 924 arrangements is the
    observed one with probability 1/924.  Given it, each random arrangement's maximum reaches the winner's value
    with probability q; the rule's rejection probability at level a, summed over every outcome of the run and
    averaged over the 924, is at most a for every a (and comes near it: not vacuous)."""
    rng = np.random.default_rng(53)
    n, P = 12, 6
    scores = rng.normal(size=n) + 0.1 * rng.normal(size=(3, n))  # alike models, as from one search
    every = np.array(list(combinations(range(n), P)))
    values = _auc_values(scores, every, P)  # (models, arrangements)
    maxima = values.max(axis=0)
    qs = np.array([np.mean(maxima >= values[:, o].max() - 1e-12) for o in range(every.shape[0])])
    paths = list(_reported(R, look))
    assert np.allclose([sum(c * q ** i * (1 - q) ** j for _, c, i, j in paths) for q in (0.1, 0.5, 0.9)], 1)
    grid = [Fraction(k, 100) for k in (2, 5, 10, 15, 20, 25, 30, 40, 50, 70)] + \
        [look.price, Fraction(look.settled_from, look.drawn + 1)]
    levels = [float(np.mean(sum(c * qs ** i * (1 - qs) ** j for p, c, i, j in paths if p <= a))) for a in grid]
    assert all(v <= float(a) + 1e-12 for v, a in zip(levels, grid))
    assert max(v / float(a) for v, a in zip(levels, grid)) > 0.5  # not vacuous: the sum comes near the level


def _outcomes(R: int, look: EarlyLook, price: bool = True) -> dict:
    """Reported p-value -> its probability when each arrangement reaches with probability U ~ Uniform(0, 1) (the
    most liberal exact p-value), in exact fractions: the integral of c u^i (1 - u)^j is c i! j!/(i + j + 1)!."""
    law: dict = {}
    for p, c, i, j in _reported(R, look, price):
        law[p] = law.get(p, 0) + Fraction(c, (i + j + 1) * comb(i + j, i))
    return law


def _level(law: dict, a: Fraction) -> Fraction:
    return sum((mass for p, mass in law.items() if p <= a), Fraction(0))


@pytest.mark.parametrize(("R", "look"), [(40, EarlyLook(6, 0, 3, 3)), (200, EarlyLook(19, 0, 4, 4)), (1000, LOOK),
                                         (40, EarlyLook(6, 0, 3)), (200, EarlyLook(19, 0, 4)), (1000, TO_R)])
def test_the_look_holds_its_level_exactly_in_the_worst_case_and_needs_its_price(R, look):
    law = _outcomes(R, look)
    assert sum(law.values()) == 1  # every outcome once
    grid = {Fraction(k, 400) for k in range(1, 401)} | set(law)  # every attainable p-value too
    assert all(_level(law, a) <= a for a in grid)
    unpriced = _outcomes(R, look, price=False)
    assert any(_level(unpriced, a) > a for a in grid)


def _from_sequence(reached: np.ndarray, look: EarlyLook) -> Fraction:
    """The rule applied to one count's whole sequence of arrangements (1 where it reached)."""
    x = int(reached[:look.drawn].sum())
    running = np.cumsum(reached)
    if look.settles(x):
        return designed_p_value(look, x, x, look.drawn, reached.size)
    if look.follow_hits is not None and running[-1] >= look.follow_hits:
        L = int(np.argmax(running >= look.follow_hits)) + 1
        return designed_p_value(look, x, look.follow_hits, L, reached.size)
    return designed_p_value(look, x, int(running[-1]), reached.size, reached.size)


@pytest.mark.parametrize("look", [EarlyLook(9, 0, 4, 4), EarlyLook(9, 0, 4)])
def test_the_p_value_never_falls_as_more_arrangements_reach(look):
    """Monotone in the sequence: a sequence that reaches wherever another does (what a maximum over more models, or
    a smaller threshold, gives) never reports less — the step-down and single-step adjustments rely on it; 3,000
    random pairs over every branch (sequential past the look, and to R)."""
    rng = np.random.default_rng(58)
    R = 60
    seen = set()
    for _ in range(3_000):
        q = rng.uniform(0.0, 0.4)
        a = rng.random(R) < q
        b = a | (rng.random(R) < rng.uniform(0.0, 0.1))
        pa, pb = _from_sequence(a, look), _from_sequence(b, look)
        assert pb >= pa, (a.astype(int), b.astype(int))
        x = int(a[:look.drawn].sum())
        seen.add("low" if x == 0 else "high" if x >= 4 else "stopped" if a.sum() >= 4 else "to R")
    assert seen == {"low", "high", "stopped", "to R"}


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


@pytest.mark.parametrize("column", [0, 1, 2, 3, 4])
def test_a_block_of_64_finds_each_crossing_where_the_bisection_does(column, monkeypatch):
    """The follow-up finds where in a block of 64 arrangements a count got its h-th reaching arrangement from one lane
    walk's values (each arrangement tallied in order), not by scoring halves of the block again: the same L as the
    bisection, for raw and step-down counts, with counts crossing in the block and not."""
    from tablegen.compare.selection import engine
    from tablegen.compute.kernels import permutation_lanes

    rng = np.random.default_rng(column)
    y = (rng.random(300) < 0.3).astype(np.int64)
    scores = np.stack([0.05 * j * y + rng.normal(size=300) for j in range(5)])
    if column == 3:
        scores = np.round(scores, 1)  # tied scores
    s = engine.models_sorted(scores)
    P, key, start, weights = int(y.sum()), (np.uint64(7), np.uint64(8)), 128, np.zeros(1)

    def run(plan, raw, step):
        block = np.empty((1, 64))
        engine._run(s, P, [plan], weights, False, key, "cpu", start, start + 64, start + 64, block, raw, step, None)
        return block[0]

    maxima = run(engine.MetricPlan(column, 0, np.arange(5), np.zeros(5), np.arange(5)), np.zeros((1, 5), np.int64),
                 np.zeros((1, 5), np.int64))
    thresholds = np.quantile(maxima, [0.95, 0.8, 0.6, 0.4, 0.2])  # each model's: reached rarely to often
    plan = engine.MetricPlan(column, 0, np.arange(5), thresholds, np.array([3, 0, 4, 1, 2]))
    before = (rng.integers(0, 20, 5), rng.integers(0, 20, 5))
    after = (before[0].reshape(1, -1).copy(), before[1].reshape(1, -1).copy())
    run(plan, *after)
    waiting = (np.ones(5, bool), np.array([True, True, False, True, True]))
    arguments = (s, P, plan, weights, key, start, start + 64, start + 64, before, (after[0][0], after[1][0]), waiting,
                 20)
    by_lanes = engine._crossings(*arguments)
    monkeypatch.setattr(permutation_lanes, "lanes_apply", lambda *_: False)  # the bisection, scalar kernel
    bisected = engine._crossings(*arguments)
    for lanes, bisection in zip(by_lanes, bisected):
        assert lanes.tolist() == bisection.tolist()
    crossed = np.concatenate(by_lanes) > 0
    assert crossed.any() and not crossed.all()  # not vacuous
