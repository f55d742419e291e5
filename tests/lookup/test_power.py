"""Planning a test set: ``tablegen.power``, ``sample_size``, ``minimum_detectable``, ``max_models``.

The exact power itself is checked against weighted enumeration in ``tests/compute/test_power_exact.py``; here:
the lookups' rules (the critical value is the test's own, the two questions of ``winners``), the saw-tooth
reported by ``sample_size`` against a brute-force scan of every size, the searches' answers verified at their
boundaries, and bad input refused naming the argument.
"""

from __future__ import annotations

import math

import pytest

import tablegen
from tablegen import TablegenInputError
from tablegen.compute.stats import upper_tail_probability


def test_power_is_exact_against_the_tests_own_critical_value():
    result = tablegen.power("best_f1", 40, 60, C=10, alpha=0.05, auc=0.7)
    assert result.method == "exact" and result.ci_low == result.power == result.ci_high
    assert result.critical_value == float(tablegen.critical_value("best_f1", 40, 60, C=10, alpha=0.05,
                                                                  method="exact"))
    assert 0 < result.power < 1 and "exact" in result.sentence()
    assert result.to_dict()["power"] == result.power and float(result) == result.power


@pytest.mark.parametrize("metric", ["auc", "best_accuracy", "best_balanced_accuracy", "best_f1", "best_mcc",
                                    "tp_at_10", "precision_at_10", "average_precision"])
def test_the_critical_value_is_the_one_critical_value_gives(metric):
    P, N = (6, 9) if metric == "average_precision" else (40, 60)
    for C, alpha in [(1, 0.05), (10, 0.01), (1000, 0.2)]:
        result = tablegen.power(metric, P, N, C=C, alpha=alpha, auc=0.6)
        assert result.critical_value == float(tablegen.critical_value(metric, P, N, C=C, alpha=alpha, method="exact"))


def test_winners_all_is_the_chance_that_one_of_c_equally_good_models_clears_the_bar():
    one = tablegen.power("auc", 30, 30, C=10, alpha=0.05, auc=0.65)
    every = tablegen.power("auc", 30, 30, C=10, alpha=0.05, auc=0.65, winners="all")
    three = tablegen.power("auc", 30, 30, C=10, alpha=0.05, auc=0.65, winners=3)
    assert every.power == pytest.approx(1 - (1 - one.power) ** 10, rel=1e-12)
    assert three.power == pytest.approx(1 - (1 - one.power) ** 3, rel=1e-12)
    assert one.power < three.power < every.power


@pytest.mark.parametrize("metric", ["auc", "best_accuracy", "best_mcc", "precision_at_5", "average_precision"])
def test_auc_one_half_gives_the_size_of_the_test(metric):
    for C in (1, 10):
        result = tablegen.power(metric, 6, 7, C=C, alpha=0.05, auc=0.5)
        assert result.power <= float(upper_tail_probability(C, 0.05)) * (1 + 1e-12)


def test_sample_size_reports_the_saw_tooth_as_a_scan_of_every_size_does():
    # best accuracy at AUC 0.8, prevalence 1/2, C = 1, alpha = 0.05: first reaches 0.8 at 24 items, falls back
    # below at some sizes up to 29, and stays above from 30 on (checked here by brute force through 200)
    result = tablegen.sample_size("best_accuracy", auc=0.8, C=1, alpha=0.05, power=0.8, prevalence=0.5)

    def cell(n):
        P = min(max(1, math.floor(0.5 * n + 0.5)), n - 1)
        return P, n - P

    powers = {n: tablegen.power("best_accuracy", *cell(n), C=1, alpha=0.05, auc=0.8).power for n in range(2, 201)}
    reached = [n for n, p in powers.items() if p >= 0.8]
    stable = 1 + max(n for n, p in powers.items() if p < 0.8)
    assert (result.first_P, result.first_N) == cell(min(reached)) == (12, 12)
    assert (result.stable_P, result.stable_N) == cell(stable) == (15, 15)
    assert stable > min(reached)  # a real saw-tooth
    assert result.first_power == powers[min(reached)] and result.stable_power == powers[stable]
    assert result.checked_P + result.checked_N >= stable + 15 and "falls back" in result.sentence()


def test_sample_size_says_when_the_bound_cuts_the_saw_tooth():
    # the doubling reaches the bound 29 below the target: the sizes just below it are scanned, 24 reaches the
    # target, and 29 misses it again, so no stable size lies within the bound
    with pytest.raises(TablegenInputError, match=r"falls back below it at the bound, max_size=29"):
        tablegen.sample_size("best_accuracy", auc=0.8, C=1, alpha=0.05, power=0.8, prevalence=0.5, max_size=29)
    result = tablegen.sample_size("best_accuracy", auc=0.8, C=1, alpha=0.05, power=0.8, prevalence=0.5, max_size=31)
    assert (result.first_P, result.first_N, result.stable_P, result.stable_N) == (12, 12, 15, 15)
    assert result.checked_P + result.checked_N == 31


@pytest.mark.parametrize("kwargs", [dict(auc=0.7, C=10, alpha=0.05, prevalence=0.5),
                                    dict(auc=0.75, C=100, alpha=0.01, prevalence=0.2),
                                    dict(auc=0.7, C=10, alpha=0.05, N=40), dict(auc=0.7, C=1, alpha=0.05, P=30)])
def test_sample_size_decides_the_auc_scans_at_once_with_the_same_answer(kwargs, monkeypatch):
    # the scans around n_b are decided by one backward programme (lehmann_batch); every field of the answer is
    # the one the per-size programme alone gives, and far fewer sizes run the per-size programme
    from tablegen.lookup import planning, power

    calls = []
    counted = power.lehmann_power_at

    def counting(*args):
        calls.append(args[1:3])
        return counted(*args)

    monkeypatch.setattr(planning, "lehmann_power_at", counting)
    power.exceed_event.cache_clear()
    batched = tablegen.sample_size("auc", **kwargs)
    batched_calls = len(calls)
    monkeypatch.setattr(planning, "BATCH_SIZES", 10**9)  # no batch: every size by the per-size programme
    calls.clear()
    alone = tablegen.sample_size("auc", **kwargs)
    assert batched.to_dict() == alone.to_dict()
    assert batched_calls + 16 <= len(calls) == alone.evaluations, (batched_calls, len(calls))


def test_the_batch_tails_equal_the_per_size_programme():
    import numpy as np

    from tablegen.compute.exact.power import auc_upper_tail
    from tablegen.compute.kernels.lehmann_batch import auc_upper_tails

    rng = np.random.default_rng(4)
    for k in (0.4, 1.0, 7 / 3):
        cells = [tuple(int(x) for x in rng.integers(1, 40, size=2)) for _ in range(12)] + [(1, 1), (40, 2), (2, 40)]
        thresholds = [int(rng.integers(0, P * N + 2)) for P, N in cells]
        for both in (cells, [cell for cell in cells if cell[0] >= cell[1]]):  # the rows over either class
            batch = auc_upper_tails(k, both, [thresholds[cells.index(cell)] for cell in both])
            for (P, N), value in zip(both, batch):
                expected = auc_upper_tail(P, N, k, thresholds[cells.index((P, N))])
                assert value == pytest.approx(expected, rel=1e-12, abs=1e-300), (P, N, k)


def test_sample_size_with_one_class_fixed():
    result = tablegen.sample_size("auc", auc=0.7, C=10, alpha=0.05, N=40)
    assert result.first_N == 40 == result.stable_N
    before = tablegen.power("auc", result.first_P - 1, 40, C=10, alpha=0.05, auc=0.7).power
    assert before < 0.8 <= result.first_power


def test_minimum_detectable_brackets_the_smallest_auc():
    result = tablegen.minimum_detectable("best_f1", 60, 90, C=100, alpha=0.05, power=0.8)
    assert result.auc - result.auc_below <= 1e-7
    assert tablegen.power("best_f1", 60, 90, C=100, alpha=0.05, auc=result.auc).power >= 0.8
    assert tablegen.power("best_f1", 60, 90, C=100, alpha=0.05, auc=result.auc_below).power < 0.8
    assert result.k == pytest.approx(result.auc / (1 - result.auc))
    auc = tablegen.minimum_detectable("auc", 40, 40, C=10, alpha=0.05)
    assert auc.metric_value == pytest.approx(auc.auc, abs=1e-4)  # the AUC's quantile ranking has that AUC


def test_minimum_detectable_refuses_a_test_that_detects_nothing():
    # one positive: best accuracy's m* is its maximum at C = 1000, nothing exceeds it
    with pytest.raises(TablegenInputError, match="power"):
        tablegen.minimum_detectable("best_accuracy", 1, 3, C=1000, alpha=0.05)


def test_max_models_is_the_last_c_with_enough_power():
    result = tablegen.max_models("best_balanced_accuracy", 120, 150, auc=0.68, alpha=0.05, power=0.8)
    assert 1 < result.C < result.bound
    at = tablegen.power("best_balanced_accuracy", 120, 150, C=result.C, alpha=0.05, auc=0.68).power
    beyond = tablegen.power("best_balanced_accuracy", 120, 150, C=result.C + 1, alpha=0.05, auc=0.68).power
    assert at == result.power >= 0.8 > beyond == result.power_beyond
    assert tablegen.max_models("auc", 10, 10, auc=0.55, alpha=0.05).C == 0


def test_binormal_power_is_a_monte_carlo_estimate_with_its_interval():
    result = tablegen.power("auc", 20, 20, C=5, alpha=0.05, auc=0.75, model="binormal", R=2000, seed=3)
    assert result.method == "monte carlo" and result.replicates == 2000
    assert result.ci_low <= result.power <= result.ci_high and result.ci_low < result.ci_high
    assert "95% interval" in result.sentence()


def test_lehmann_beyond_the_exact_programme_is_monte_carlo_and_says_so():
    # AUC at 400 x 400 is beyond the law of U's budget: a Monte Carlo estimate against the exact m*, never "exact"
    from tablegen.compute.metrics import get_metric

    assert not get_metric("auc").power_exact_at(400, 400) and get_metric("auc").power_exact_at(300, 300)
    result = tablegen.power("auc", 400, 400, C=10, alpha=0.05, auc=0.55, R=3000, seed=5)
    assert result.method == "monte carlo" and result.model == "lehmann" and result.replicates == 3000
    assert result.ci_low <= result.power <= result.ci_high and result.ci_low < result.ci_high
    exact_m = tablegen.critical_value("auc", 400, 400, C=10, alpha=0.05, method="exact")
    assert result.critical_method == "exact" and result.critical_value == float(exact_m)
    assert result.critical_ci_low == result.critical_ci_high == result.critical_value
    text = result.sentence()
    assert "Monte Carlo, 95% interval" in text and "beyond the exact Lehmann programme" in text
    assert "(exact)" not in text and "estimate" not in text
    assert result == tablegen.power("auc", 400, 400, C=10, alpha=0.05, auc=0.55, R=3000, seed=5)  # keyed streams
    inside = tablegen.power("auc", 300, 300, C=10, alpha=0.05, auc=0.55, R=3000)
    assert inside.method == "exact" and inside.replicates is None  # R is unused where the power is exact


def test_auc_power_at_ten_thousand_uses_the_exact_critical_value():
    # the cell: AUC at (10^4, 10^4) is Monte Carlo power against tablegen.critical_value's exact m*
    exact_m = tablegen.critical_value("auc", 10_000, 10_000, C=10, alpha=0.05, method="exact")
    assert exact_m.method == "exact"
    result = tablegen.power("auc", 10_000, 10_000, C=10, alpha=0.05, auc=0.7, R=40, seed=1)
    assert (result.method, result.critical_method, result.replicates) == ("monte carlo", "exact", 40)
    assert result.critical_value == float(exact_m) and result.power == 1.0 and result.ci_low < 1.0


def test_a_monte_carlo_critical_value_is_said_to_be_an_estimate():
    # average precision at (20, 20): no exact null and no enumeration; m* is the table's (or a simulation's)
    result = tablegen.power("average_precision", 20, 20, C=10, alpha=0.05, auc=0.7, R=2000)
    answer = tablegen.critical_value("average_precision", 20, 20, C=10, alpha=0.05)
    assert answer.method != "exact" and result.method == "monte carlo"
    assert (result.critical_method, result.critical_value) == (answer.method, float(answer))
    assert result.critical_ci_low == answer.ci_low < answer.ci_high == result.critical_ci_high
    assert "The critical value is itself an estimate" in result.sentence()
    assert tablegen.power("average_precision", 6, 9, C=10, alpha=0.05, auc=0.7).method == "exact"


def test_beyond_the_exact_programme_the_planners_say_they_simulate():
    # (the Monte Carlo planners' own tests: tests/lookup/test_planning_mc.py)
    assert tablegen.minimum_detectable("auc", 400, 400, C=10, alpha=0.05, R=500).method == "monte carlo"


@pytest.mark.parametrize("kwargs, named", [
    (dict(auc=0.49), "auc"), (dict(auc=1.0), "auc"), (dict(auc=math.nan), "auc"), (dict(auc=True), "auc"),
    (dict(C=0), "C"), (dict(alpha=1.0), "alpha"), (dict(metric="nope"), "metric"),
    (dict(model="logistic"), "model"), (dict(winners=0), "winners"), (dict(winners=11), "winners"),
    (dict(P=0), "P"),
])
def test_power_refuses_bad_input_naming_the_argument(kwargs, named):
    arguments = dict(metric="auc", P=20, N=20, C=10, alpha=0.05, auc=0.7)
    arguments.update(kwargs)
    with pytest.raises(TablegenInputError, match=rf"\b{named}\b"):
        tablegen.power(**arguments)


@pytest.mark.parametrize("kwargs, named", [
    (dict(power=0.0), "power"), (dict(power=1.0), "power"), (dict(prevalence=1.0), "prevalence"),
    (dict(prevalence=0.0), "prevalence"), (dict(prevalence=None), "prevalence"), (dict(P=10), "prevalence"),
    (dict(model="normal"), "model"), (dict(auc=0.52, C=1000, max_size=40), "max_size"),
])
def test_sample_size_refuses_bad_input_naming_the_argument(kwargs, named):
    arguments = dict(metric="auc", auc=0.7, C=10, alpha=0.05, prevalence=0.5)
    arguments.update(kwargs)
    with pytest.raises(TablegenInputError, match=rf"\b{named}\b"):
        tablegen.sample_size(**arguments)


def test_the_planners_refuse_bad_input_naming_the_argument():
    with pytest.raises(TablegenInputError, match=r"\bpower\b"):
        tablegen.minimum_detectable("auc", 20, 20, power=1.5)
    with pytest.raises(TablegenInputError, match=r"\bmodel\b"):
        tablegen.minimum_detectable("auc", 20, 20, model="normal")
    with pytest.raises(TablegenInputError, match=r"\bauc\b"):
        tablegen.max_models("auc", 20, 20, auc=0.3)
    with pytest.raises(TablegenInputError, match=r"\bbound\b"):
        tablegen.max_models("auc", 20, 20, auc=0.7, bound=0)
