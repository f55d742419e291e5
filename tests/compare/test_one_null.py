"""One exact null per question: evaluate builds each metric's null once per (metric, P, N, tie groups), and the
selection test's critical value reaches the same answer from the null's cheap guesses as by plain bisection.

The counts come from the registry's builders themselves (``Metric.exact_null``, ``Metric.tied_null``, wrapped);
the bit-for-bit comparisons run the same question with the sharing or the guesses switched off.
"""

from __future__ import annotations

import numpy as np
import pytest

import tablegen
from tablegen.compare import selection_test
from tablegen.compare.selection import maxt
from tablegen.compute.metric_nulls import ExactNulls, approximate_critical_value
from tablegen.compute.metrics import Metric


def _question(ties: bool, n=300, P=90, K=4, seed=5):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(P), np.zeros(n - P)]
    models = {f"m{i}": 0.5 * y + rng.normal(size=n) for i in range(K)}
    return y, ({m: np.round(s, 1) for m, s in models.items()} if ties else models)


@pytest.fixture
def builds(monkeypatch):
    """(kind, metric, P or tie groups) -> how many times the registry built that null."""
    from tablegen.lookup.answer_sources import cached_null as _null  # the lookups' cache of exact nulls

    _null.cache_clear()  # the lookups' own cache would hide builds made before the test
    counted, exact_null, tied_null = {}, Metric.exact_null, Metric.tied_null

    def counting_exact(self, P, N):
        key = ("untied", self.name, int(P), int(N))
        counted[key] = counted.get(key, 0) + 1
        return exact_null(self, P, N)

    def counting_tied(self, sizes, P):
        key = ("tied", self.name, tuple(int(s) for s in np.asarray(sizes)), int(P))
        counted[key] = counted.get(key, 0) + 1
        return tied_null(self, sizes, P)

    monkeypatch.setattr(Metric, "exact_null", counting_exact)
    monkeypatch.setattr(Metric, "tied_null", counting_tied)
    yield counted
    _null.cache_clear()


@pytest.mark.parametrize("ties", [False, True])
def test_evaluate_builds_each_exact_null_once(builds, ties):
    y, models = _question(ties)
    tablegen.evaluate(y, models, C=10, metrics=["auc"], R=500)  # C > K: the selection test needs the null too
    assert builds, "no exact null was built: the test would check nothing"
    assert ("untied", "auc", 90, 210) in builds
    assert {key: count for key, count in builds.items() if count != 1} == {}
    if ties:  # every model's own tie groups, the winner's once for its verdict and its p-value
        assert sum(key[0] == "tied" for key in builds) >= len(models)


def test_more_tied_models_than_the_nulls_kept_still_build_each_null_once(builds):
    y, models = _question(True, n=120, P=40, K=12, seed=9)  # 12 tie patterns, 8 nulls kept
    models["m11"] = np.round(3 * y + np.random.default_rng(1).normal(size=120), 1)  # the winner, listed last
    result = tablegen.significance_test_from_scores(y, models, metrics=["auc"], C=12)
    assert result["auc"].winner == "m11" and result["auc"].tie_conditional
    assert sum(key[0] == "tied" for key in builds) >= 12
    assert {key: count for key, count in builds.items() if count != 1} == {}


def test_shared_nulls_give_the_numbers_of_fresh_ones_bit_for_bit():
    for ties in (False, True):
        y, models = _question(ties, seed=11)
        nulls = ExactNulls()
        shared = tablegen.significance_test_from_scores(y, models, metrics=["auc", "best_accuracy"], C=9,
                                                        nulls=nulls)
        fresh = tablegen.significance_test_from_scores(y, models, metrics=["auc", "best_accuracy"], C=9)
        assert repr(shared.to_dict()) == repr(fresh.to_dict())
        with_nulls = selection_test(y, models, metric="auc", C=9, R=500, nulls=nulls)
        alone = selection_test(y, models, metric="auc", C=9, R=500)
        assert repr(with_nulls.to_dict()) == repr(alone.to_dict())
        assert with_nulls.critical_interval == alone.critical_interval


@pytest.mark.parametrize("ties,n,P,R", [(False, 300, 90, 2000), (True, 300, 90, 2000), (False, 60, 20, None),
                                        (True, 2000, 600, 1000)])
def test_the_guessed_search_reaches_the_critical_value_of_plain_bisection(monkeypatch, ties, n, P, R):
    y, models = _question(ties, n=n, P=P, K=3, seed=n)
    guessed = selection_test(y, models, metric="auc", C=12, R=R)
    monkeypatch.setattr(maxt, "_guessed_crossing", lambda *args: None)  # the search as it was: bisection alone
    plain = selection_test(y, models, metric="auc", C=12, R=R)
    assert repr(guessed.to_dict()) == repr(plain.to_dict())
    assert (guessed.critical_value, guessed.critical_interval) == (plain.critical_value, plain.critical_interval)


def test_the_guessed_search_asks_for_few_exact_critical_values(monkeypatch):
    y, models = _question(False, n=2000, P=600, K=3, seed=3)
    asked = []
    extra_critical = maxt._extra_critical

    def counting(null, needed, extra):
        asked.append(needed)
        return extra_critical(null, needed, extra)

    monkeypatch.setattr(maxt, "_extra_critical", counting)
    selection_test(y, models, metric="auc", C=12, R=2000)
    guessed = len(asked)
    asked.clear()
    monkeypatch.setattr(maxt, "_guessed_crossing", lambda *args: None)
    selection_test(y, models, metric="auc", C=12, R=2000)
    assert guessed < len(asked)
    assert guessed <= 3 * 2  # the estimate and the two ends of its interval: the guess and the one before


def test_the_guess_is_near_the_exact_critical_value_and_absent_where_there_is_none():
    from tablegen.compute.exact.auc_fft import TiltedAucNull
    from tablegen.compute.exact.closed_form import best_accuracy_null

    for P, N in ((600, 1400), (40, 3000)):
        null = TiltedAucNull(P, N)
        for tail in (0.3, 1e-2, 1e-6, 1e-30, 1e-200):  # Lugannani-Rice: within two units of U
            assert abs(approximate_critical_value(null, tail) - null.critical_value(tail)) <= 2 / (P * N)
    assert approximate_critical_value(null, 1e-300) <= 1.0
    assert approximate_critical_value(null, 0.7) is None
    assert approximate_critical_value(best_accuracy_null(20, 20), 1e-3) is None


def test_exact_nulls_keeps_a_bounded_number():
    nulls = ExactNulls(capacity=2)
    first = nulls.untied("best_accuracy", 10, 10)
    nulls.untied("best_accuracy", 11, 10)
    nulls.untied("best_accuracy", 12, 10)  # the first is dropped
    assert nulls.untied("best_accuracy", 10, 10) is not first
    assert nulls.builds[("best_accuracy", 10, 10, None)] == 2
    with pytest.raises(ValueError, match="capacity"):
        ExactNulls(capacity=0)


def test_a_permutation_band_below_the_level_everywhere_gives_the_metrics_maximum_as_its_upper_end():
    # R = 500 at alpha = 0.05: the DKW band's lower end, 1 - 0.061 at the metric's maximum, never reaches 0.95
    # (this raised IndexError, with and without competitors not given)
    y, models = _question(False, seed=2)
    for C in (4, 10):
        result = selection_test(y, models, metric="auc", C=C, R=500)
        assert result.critical_interval[1] == 1.0
        assert result.critical_interval[0] <= result.critical_value <= 1.0


def test_an_untied_model_is_answered_by_the_no_ties_null_which_is_its_tie_conditional_null(builds):
    """No law given ties is built for a model without ties: given n groups of one item, the conditional null is the
    no-ties null (equal tails and critical values, checked at every value of a small cell), so its p-value is."""
    from tablegen.compute.exact import null_critical_value, null_tail_ge
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.stats import p_value_from_tail

    spec, P, N = get_metric("auc"), 12, 18
    given_singletons, untied = Metric.tied_null(spec, np.ones(P + N, np.int64), P), spec.exact_null(P, N)
    values = np.arange(P * N + 1) / (P * N)
    assert [null_tail_ge(given_singletons, x) for x in values] == [null_tail_ge(untied, x) for x in values]
    for tail in (0.3, 1e-2, 1e-4, 1e-7):
        assert null_critical_value(given_singletons, tail) == null_critical_value(untied, tail)
    builds.clear()
    rng = np.random.default_rng(4)
    y = np.r_[np.ones(P), np.zeros(N)]
    models = {f"m{i}": 0.3 * i * y + rng.normal(size=P + N) for i in range(4)}
    verdict = tablegen.significance_test_from_scores(y, models, metrics=["auc"], C=7)["auc"]
    assert not verdict.tie_conditional and set(verdict.tie_conditional_p_values) == set(models)
    assert [key for key in builds if key[0] == "tied"] == []
    for name, s in models.items():
        expected = float(p_value_from_tail(null_tail_ge(untied, verdict.scores[name]), 7))
        assert verdict.tie_conditional_p_values[name] == max(expected, np.finfo(float).tiny)


def test_the_verdict_and_the_selection_test_build_each_tilted_law_once(monkeypatch):
    """Every model's tail and every critical value near another is answered by one tilted law (a grid of tilts),
    built once for the verdict, the tie-conditional p-values and the selection test together."""
    from tablegen.compute.exact import auc_fft_band

    built, build = [], auc_fft_band.TiltedLaw.build.__func__

    def counting(cls, cell, a):
        built.append((cell.small, cell.large, a))
        return build(cls, cell, a)

    monkeypatch.setattr(auc_fft_band.TiltedLaw, "build", classmethod(counting))
    rng = np.random.default_rng(8)
    y = np.r_[np.ones(600), np.zeros(1400)]
    models = {f"m{i}": (0.3 + 0.02 * i) * y + rng.normal(size=2000) for i in range(12)}  # AUCs ~0.4 sd apart
    nulls = tablegen.lookup.from_scores.question_nulls()
    verdict = tablegen.significance_test_from_scores(y, models, metrics=["auc"], C=30, alpha=0.05, nulls=nulls)
    selection_test(y, models, metric="auc", C=30, R=400, alpha=0.05, nulls=nulls)
    assert len(verdict["auc"].tie_conditional_p_values) == len(models)
    assert len(built) == len(set(built))  # none twice
    assert len(built) < len(models)  # 12 models' tails, the critical values and the effective C: fewer laws


def test_a_law_over_the_limits_for_the_competitors_not_given_is_refused_before_the_arrangements(monkeypatch):
    from tablegen.errors import ResourceLimitError

    y, models = _question(False, n=2000, P=600, K=3, seed=1)
    ran = []
    monkeypatch.setattr(maxt, "null_counts_all", lambda *args, **kwargs: ran.append(1))
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1")  # AP's bracket at (600, 1400): minutes
    with pytest.raises(ResourceLimitError, match="not given"):
        selection_test(y, models, metric="average_precision", C=10, R=500)
    assert ran == []
