"""The Monte Carlo planners (tablegen.lookup.planning_mc): common random numbers, the interval's coverage against the
exact Lehmann answers, the binormal alternative, bad input."""

import numpy as np
import pytest

import tablegen
from tablegen.compute.limits import ResourceLimitError
from tablegen.errors import TablegenInputError
from tablegen.lookup.planning_mc import (
    _Replicates,
    count_thresholds,
    max_models_mc,
    minimum_detectable_mc,
    one_model_target,
)

METRICS = ("auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision", "best_mcc", "tp_at_5")


@pytest.mark.parametrize("model", ["binormal", "lehmann"])
@pytest.mark.parametrize("metric", METRICS)
def test_every_replicate_rises_with_the_auc(metric, model):
    """The common random numbers: each replicate's metric is non-decreasing in the effect (what the search and the
    interval rest on)."""
    draws = _Replicates(metric, 12, 15, model, 300, seed=7)
    values = np.array([draws.values(auc) for auc in np.linspace(0.5, 0.99, 12)])
    assert np.all(np.diff(values, axis=0) >= 0)
    assert np.any(np.diff(values, axis=0) > 0)


def test_count_thresholds_are_the_clopper_pearson_crossings():
    from tablegen.compute.stats import clopper_pearson

    for t, R in [(0.8, 1000), (0.5, 37), (0.9, 20_000), (0.999, 100)]:
        c_low, c_estimate, c_high = count_thresholds(t, R)
        lows, highs = clopper_pearson(np.arange(R + 1), np.arange(R + 1), R)
        assert highs[c_low] >= t > (highs[c_low - 1] if c_low else -1)
        assert c_estimate / R >= t > (c_estimate - 1) / R
        if c_high is None:
            assert lows[R] < t
        else:
            assert lows[c_high] >= t > lows[c_high - 1]


def test_one_model_target_gives_the_target_to_w_models():
    assert one_model_target(0.8, 1) == 0.8
    assert 1 - (1 - one_model_target(0.8, 5)) ** 5 == pytest.approx(0.8, abs=1e-15)


@pytest.mark.parametrize("metric, P, N, C", [("auc", 30, 30, 10), ("best_f1", 25, 40, 100),
                                             ("best_balanced_accuracy", 40, 20, 1)])
def test_the_lehmann_interval_covers_the_exact_smallest_auc(metric, P, N, C):
    exact = tablegen.minimum_detectable(metric, P, N, C=C, alpha=0.05)
    assert exact.method == "exact"
    found = minimum_detectable_mc(metric, P, N, C, 0.05, 0.8, "lehmann", 1, 4000, 11)
    assert found.auc_low <= exact.auc <= found.auc_high
    assert found.auc_high - found.auc_low < 0.05
    assert found.power_ci_low <= 0.8 + 0.02 and found.critical_value == pytest.approx(exact.critical_value)


def test_the_interval_covers_at_its_level():
    """Coverage of the smallest detectable AUC's interval over 40 seeds at a small cell, against the exact answer:
    at least 95% in expectation, so 33 or fewer covers out of 40 (probability < 0.4% at 95%) fails."""
    exact = tablegen.minimum_detectable("auc", 10, 12, C=5, alpha=0.1).auc
    covers = sum(found.auc_low <= exact <= found.auc_high
                 for found in (minimum_detectable_mc("auc", 10, 12, 5, 0.1, 0.8, "lehmann", 1, 400, seed)
                               for seed in range(40)))
    assert covers >= 34


def test_the_max_models_interval_covers_the_exact_answer():
    exact = tablegen.max_models("auc", 100, 100, auc=0.65, alpha=0.05)
    found = max_models_mc("auc", 100, 100, 0.65, 0.05, 0.8, "lehmann", 10**12, 20_000, 5)
    assert found.C_low <= exact.C <= found.C_high
    assert found.C_low <= found.C <= found.C_high


def test_beyond_the_exact_programme_the_planners_answer_by_monte_carlo():
    found = tablegen.minimum_detectable("auc", 400, 400, C=10, alpha=0.05, R=1000)
    assert found.method == "monte carlo" and found.model == "lehmann"
    assert found.auc_low <= found.auc <= found.auc_high
    assert "Monte Carlo, 1,000 replicates, 95% interval" in found.sentence()
    many = tablegen.max_models("auc", 400, 400, auc=0.6, alpha=0.05, R=1000)
    assert many.method == "monte carlo" and many.C_low <= many.C <= many.C_high


def test_binormal_answers_are_reproducible_and_seeded():
    one = tablegen.minimum_detectable("best_accuracy", 30, 30, C=10, alpha=0.05, model="binormal", R=1500, seed=3)
    two = tablegen.minimum_detectable("best_accuracy", 30, 30, C=10, alpha=0.05, model="binormal", R=1500, seed=3)
    other = tablegen.minimum_detectable("best_accuracy", 30, 30, C=10, alpha=0.05, model="binormal", R=1500, seed=4)
    from tablegen.compute.power_mc import separation_of_auc

    assert one == two and one != other
    assert one.to_dict()["model"] == "binormal" and one.effect == separation_of_auc(one.auc)


def test_binormal_and_lehmann_agree_roughly_where_both_run():
    """Not the same alternative, so not the same answer: but both are AUCs a test of this size detects with power 0.8,
    and the two models' ROC curves are close at moderate AUC (a gross error in either would show)."""
    lehmann = tablegen.minimum_detectable("auc", 50, 50, C=10, alpha=0.05)
    binormal = tablegen.minimum_detectable("auc", 50, 50, C=10, alpha=0.05, model="binormal", R=5000)
    assert abs(lehmann.auc - binormal.auc) < 0.01


def test_winners_lower_the_smallest_auc():
    one = tablegen.minimum_detectable("auc", 30, 30, C=10, alpha=0.05, model="binormal", R=3000)
    all_ten = tablegen.minimum_detectable("auc", 30, 30, C=10, alpha=0.05, model="binormal", R=3000, winners="all")
    assert all_ten.auc < one.auc and all_ten.power >= 0.8 - 0.03


@pytest.mark.parametrize("kwargs, named", [(dict(R=0), "R"), (dict(R=1.5), "R"), (dict(seed=-1), "seed"),
                                           (dict(model="normal"), "model"), (dict(power=1.0), "power")])
def test_bad_simulation_options_are_refused_naming_them(kwargs, named):
    arguments = dict(metric="auc", P=20, N=20, C=10, alpha=0.05, model="binormal")
    arguments.update(kwargs)
    with pytest.raises(TablegenInputError, match=rf"\b{named}\b"):
        tablegen.minimum_detectable(**arguments)
    arguments.pop("C")
    with pytest.raises(TablegenInputError, match=rf"\b{named}\b"):
        tablegen.max_models(**arguments, auc=0.7)


def test_a_search_over_the_time_limit_is_refused_before_it_draws(monkeypatch):
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1")
    drawn = []
    monkeypatch.setattr(_Replicates, "values", lambda self, auc: drawn.append(auc))
    with pytest.raises(ResourceLimitError, match=r"\bR\b"):
        tablegen.minimum_detectable("auc", 5000, 5000, C=10, alpha=0.05, model="binormal")
    with pytest.raises(ResourceLimitError, match=r"\bR\b"):
        tablegen.max_models("auc", 5000, 5000, auc=0.6, alpha=0.05, model="binormal", R=10**6)
    assert drawn == []


def test_no_auc_reaches_the_target_is_said():
    with pytest.raises(TablegenInputError, match=r"\bpower\b"):
        tablegen.minimum_detectable("tp_at_5", 3, 40, C=1000, alpha=0.01, model="binormal", R=500, power=0.99)
