"""critical_value, p_value and significance_test take (metric, P, N, C, ...) in the same order, keyword-friendly;
the old order of p_value and significance_test, (metric, score, P, N, ...), still works with a DeprecationWarning."""

from __future__ import annotations

import inspect
import warnings

import pytest

import tablegen


@pytest.mark.parametrize("function", [tablegen.critical_value, tablegen.p_value, tablegen.significance_test])
def test_the_lookups_share_their_leading_order(function):
    assert list(inspect.signature(function).parameters)[:4] == ["metric", "P", "N", "C"]


def test_the_new_order_gives_the_old_answers_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new_p = tablegen.p_value("auc", 100, 300, 1000, score=0.65)
        by_name = tablegen.p_value(metric="auc", P=100, N=300, C=1000, score=0.65)
        new_test = tablegen.significance_test("auc", 100, 300, 1000, 0.05, score=0.65)
    with pytest.warns(DeprecationWarning, match=r"p_value\(metric, P, N, C, \.\.\., score=\.\.\.\)"):
        old_p = tablegen.p_value("auc", 0.65, 100, 300, C=1000)
    with pytest.warns(DeprecationWarning, match="significance_test"):
        old_test = tablegen.significance_test("auc", 0.65, 100, 300, 1000, 0.05)
    assert new_p == by_name == old_p and round(float(new_p), 6) == 0.002841
    assert new_test.to_dict() == old_test.to_dict() and new_test.alpha == 0.05


@pytest.mark.parametrize("old_call", [
    lambda: tablegen.p_value("auc", 0.65, P=100, N=300, C=1000),  # the form the how-to used
    lambda: tablegen.p_value("auc", 0.65, 100, 300, 1000, "exact"),  # every argument positional
])
def test_every_old_call_form_still_answers(old_call):
    with pytest.warns(DeprecationWarning):
        assert round(float(old_call()), 6) == 0.002841


def test_a_call_without_a_score_is_refused_naming_it():
    with pytest.raises(TypeError, match="'score'"):
        tablegen.p_value("auc", 100, 300, C=10)
    with pytest.raises(TypeError, match="'score'"):
        tablegen.significance_test("auc", P=100, N=300, C=10)
