"""critical_value, p_value and significance_test, the functions and the Table methods, take (metric, P, N, C, ...)
in the same order, keyword-friendly; the old order of p_value and significance_test, (metric, score, P, N, ...), still
works with a DeprecationWarning."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
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


# -- the Table methods take the same order ------------------------------------------------------------
@pytest.fixture(scope="module")
def table():
    return tablegen.open_table()


@pytest.mark.parametrize("name", ["critical_value", "p_value", "significance_test"])
def test_the_table_methods_share_the_order_of_the_functions(table, name):
    method, function = getattr(table, name), getattr(tablegen, name)
    assert list(inspect.signature(method).parameters)[:4] == ["metric", "P", "N", "C"]
    if name != "critical_value":
        assert inspect.signature(method).parameters["score"].kind is inspect.Parameter.KEYWORD_ONLY
        assert inspect.signature(function).parameters["score"].kind is inspect.Parameter.KEYWORD_ONLY


def test_the_table_methods_give_the_old_answers_in_the_new_order_without_a_warning(table):
    scores = np.array([0.6, 0.65, 0.7])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new_p = table.p_value("auc", 100, 300, 1000, score=scores)
        by_name = table.p_value(metric="auc", P=100, N=300, C=1000, score=scores)
        new_test = table.significance_test("auc", 100, 300, 1000, 0.01, score=scores)
    with pytest.warns(DeprecationWarning, match=r"Table\.p_value\(metric, P, N, C, \.\.\., score=\.\.\.\)") as caught:
        old_p = table.p_value("auc", scores, 100, 300, C=1000)
    assert caught[0].filename == __file__  # the warning points at the caller's line, not at the shim
    with pytest.warns(DeprecationWarning, match=r"Table\.significance_test\(metric, score, P, N, \.\.\.\) is deprec"):
        old_test = table.significance_test("auc", scores, 100, 300, 1000, 0.01)
    for new, old in ((new_p, by_name), (new_p, old_p), (new_test.p_value, old_test.p_value),
                     (new_test.critical_value, old_test.critical_value)):
        for field in ("value", "ci_low", "ci_high", "method", "bound", "replicates"):
            np.testing.assert_array_equal(getattr(new, field), getattr(old, field))
    np.testing.assert_array_equal(new_test.significant, old_test.significant)
    assert new_p.bound[1] == "<" and round(float(new_p.value[1]), 4) == 0.0066  # the docstring's '< 0.0066'
    assert new_test.significant.tolist() == [False, True, True]


@pytest.mark.parametrize("old_call", [
    lambda t: t.p_value("auc", 0.65, 100, 300, C=1000),  # the form the docstring used
    lambda t: t.p_value("auc", 0.65, 100, 300, 1000),  # every argument positional
    lambda t: t.p_value("auc", 0.65, P=100, N=300, C=1000),
])
def test_every_old_table_call_form_still_answers(table, old_call):
    with pytest.warns(DeprecationWarning):
        assert old_call(table).formatted(2) == "< 0.0066"


@pytest.mark.parametrize("call", [
    lambda t: t.p_value("auc", 100, 300, C=10),
    lambda t: t.p_value("auc", 100, 300, 10),
    lambda t: t.significance_test("auc", P=100, N=300, C=10),
    lambda t: t.significance_test("auc", 100, 300, 10),
])
def test_a_table_call_without_a_score_is_refused_naming_it(table, call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not read as an old-order call
        with pytest.raises(TypeError, match="'score'"):
            call(table)
