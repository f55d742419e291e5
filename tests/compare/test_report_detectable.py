"""evaluate's power line: per metric, the smallest AUC the test set detects with 80% power at the report's C and
alpha (exact, Lehmann), or a note saying why there is none; never a Monte Carlo value called exact."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tablegen as tg
from tablegen import evaluate
from tablegen.compare.report import detectable as module
from tablegen.compare.report.detectable import AUC_TOLERANCE, detectable_auc, detectable_line


@pytest.fixture(scope="module")
def report():
    rng = np.random.default_rng(2)
    y = np.r_[np.ones(40, int), np.zeros(60, int)]
    return evaluate(y, {"a": 0.3 * y + rng.normal(size=100), "b": rng.normal(size=100)}, C=20,
                    metrics=["auc", "best_f1", "best_mcc", "average_precision"])


@pytest.mark.parametrize("metric", ["auc", "best_f1", "best_mcc"])
def test_the_line_brackets_the_smallest_auc_with_exact_power(report, metric):
    line = report[metric].detectable
    assert line.method == "exact" and line.target == 0.8 and 0 < line.auc - line.auc_below <= AUC_TOLERANCE
    above = tg.power(metric, 40, 60, 20, 0.05, auc=line.auc)
    below = tg.power(metric, 40, 60, 20, 0.05, auc=line.auc_below)
    assert above.method == below.method == "exact"
    assert above.power == line.power >= 0.8 > below.power
    assert line.critical_value == above.critical_value == tg.critical_value(metric, 40, 60, 20, 0.05,
                                                                             method="exact").value
    finer = tg.minimum_detectable(metric, 40, 60, C=20, alpha=0.05)  # the library's bisection to 1e-7
    assert line.auc_below <= finer.auc <= line.auc


def test_the_line_follows_the_verdict_in_the_sentence_and_the_json(report):
    text = report["best_f1"].sentence()
    verdict = report["best_f1"].versus_random.sentence().split(" Note: ")[0]
    line = report["best_f1"].detectable
    shown = float(text.split("detects a model of AUC ")[1].split(" ")[0])
    assert text.startswith(verdict + " At this size, C and alpha the test on best_f1 detects a model of AUC ")
    assert line.auc <= shown < line.auc + 0.001  # rounded up: the AUC shown still reaches the target
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert data["metrics"][1]["detectable"] == line.to_dict()


def test_beyond_the_exact_programme_a_note_and_no_number(report):
    assert report["average_precision"].detectable is None
    assert any("no minimum detectable AUC: exact Lehmann power of average_precision is not computed at P = 40, "
               "N = 60 (beyond the exact programme's domain)" in note for note in report["average_precision"].notes)
    assert tg.power("auc", 400, 400, 20, 0.05, auc=0.6).method == "monte carlo"  # power() would simulate here
    line, notes = detectable_line("auc", 400, 400, 20, 0.05)
    assert line is None and "beyond the exact programme's domain" in notes[0]


def test_over_the_budget_a_note_naming_the_call_and_no_work(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("an exact power was computed")

    monkeypatch.setattr(tg, "power", refuse)
    for P, N in [(500_000, 500_000), (300_000, 700_000), (5_000, 5_000)]:  # 10^6 and 10^4 items
        line, notes = detectable_line("best_f1", P, N, 10, 0.05)
        assert line is None and "over the report's 1 s for it; tablegen.minimum_detectable('best_f1', " \
            f"{P}, {N}, C=10, alpha=0.05) computes it" in notes[0]
    line, notes = detectable_line("best_f1", 40, 60, 10, 0.05, budget=0.0)
    assert line is None and "over the report's 0 s" in notes[0]


def test_ten_thousand_items_fit_the_budget_unbalanced():
    assert module.estimated_seconds("best_f1", 3000, 7000) <= module.BUDGET_SECONDS
    assert module.estimated_seconds("best_f1", 5000, 5000) > module.BUDGET_SECONDS


def test_a_test_set_that_detects_nothing_says_so():
    line, notes = detectable_line("best_f1", 2, 2, 1000, 0.05)
    assert line is None and notes[0].startswith("no minimum detectable AUC: no model of AUC below 1 reaches power "
                                                "0.8 on best_f1 at P = 2, N = 2, C = 1,000")


def test_a_level_above_the_target_evaluates_the_null():
    line = detectable_auc("best_accuracy", 30, 30, 1, 0.9, target=0.5)  # alpha >= target: the null may reach it
    null = tg.power("best_accuracy", 30, 30, 1, 0.9, auc=0.5).power
    assert (line.auc == 0.5) == (null >= 0.5)
    if null < 0.5:
        assert tg.power("best_accuracy", 30, 30, 1, 0.9, auc=line.auc_below).power < 0.5 <= line.power


def _plain_bisection(metric, P, N, C, alpha, target=0.8):
    """The search as first written: g at AUC_MAX, then every middle of [0.5, AUC_MAX] evaluated to the tolerance."""
    def g(auc):
        return tg.power(metric, P, N, C, alpha, auc=auc)

    low, high = 0.5, module.AUC_MAX
    found = g(high)
    while high - low > AUC_TOLERANCE:
        middle = 0.5 * (low + high)
        value = g(middle)
        low, high, found = (low, middle, value) if value.power >= target else (middle, high, found)
    return low, high, found.power, found.critical_value


@pytest.mark.parametrize("metric, P, N, C, alpha", [("best_f1", 50, 50, 10, 0.05), ("auc", 34, 11, 1, 0.1),
                                                    ("best_accuracy", 327, 269, 1, 0.05),
                                                    ("best_balanced_accuracy", 74, 40, 1000, 0.01),
                                                    ("best_accuracy", 16, 7, 1, 0.01), ("best_f1", 36, 123, 10, 0.05),
                                                    ("best_mcc", 40, 60, 20, 0.05)])
def test_the_guided_search_ends_in_the_plain_bisections_bracket(metric, P, N, C, alpha):
    """Guessing the last bracket first and deciding the middles the evaluations already decide: the same bracket,
    power and critical value as evaluating every middle, in fewer evaluations."""
    line = detectable_auc(metric, P, N, C, alpha)
    assert (line.auc_below, line.auc, line.power, line.critical_value) == _plain_bisection(metric, P, N, C, alpha)
    assert line.evaluations < module.EVALUATIONS
