"""The answer policy: exact -> the table's exact value -> exact within budget -> the table ->
simulate; never a refusal of a valid question; the same sources across the three lookup functions."""

from __future__ import annotations

import numpy as np
import pytest

from tablegen import critical_value, p_value, significance_test
from tablegen.compute.cell import DEFAULT_SEED
from tablegen.lookup.api import simulation_replicates


def slow_exact(monkeypatch, seconds: float) -> None:
    """Pretend every exact routine is estimated to take ``seconds``."""
    from tablegen.compute.metrics import Metric

    monkeypatch.setattr(Metric, "exact_cost", lambda self, P, N: (seconds, 0.0))


def test_quick_exact_is_computed():
    answer = critical_value("auc", 100, 300, C=10)
    assert answer.method == "exact" and answer.source == ""  # computed, not read


def test_a_stored_exact_value_is_read_when_computing_it_is_not_quick(monkeypatch):
    computed = critical_value("best_f1", 100, 300, C=10)
    slow_exact(monkeypatch, 2.0)
    stored = critical_value("best_f1", 100, 300, C=10)
    assert stored.method == "exact" and stored.source == "bundled table" and stored.value == computed.value


def test_exact_off_the_table_within_the_budget():
    answer = critical_value("auc", 380, 380, C=10)  # not a grid cell
    assert answer.method == "exact" and answer.source == ""


def test_the_table_answers_where_exact_is_over_budget(monkeypatch):
    slow_exact(monkeypatch, 60.0)
    answer = p_value("best_f1", 200, 300, C=10, score=0.6)
    assert answer.method == "table" and answer.source == "bundled table" and answer.replicates == 10_000_000


def test_simulate_when_nothing_else_answers_seeded_by_the_cell_and_repeatable():
    first = critical_value("average_precision", 150, 484, C=114, R=100_000)
    again = critical_value("average_precision", 150, 484, C=114, R=100_000)
    assert first.method == "simulate" and first.seed == DEFAULT_SEED and first.replicates == 100_000
    assert first == again  # the same question, the same answer
    other_cell = critical_value("average_precision", 151, 484, C=114, R=100_000)
    assert other_cell.value != first.value  # the stream is keyed on the cell


def test_simulation_shows_progress_and_reports_R_and_seed():
    calls = []
    answer = p_value("average_precision", 150, 484, C=5, score=0.4, R=150_000, seed=9,
                     progress=lambda done, total: calls.append((done, total)))
    assert (answer.replicates, answer.seed) == (150_000, 9) and calls[-1] == (150_000, 150_000)


@pytest.mark.parametrize("question,sources", [
    (("auc", 0.6, 380, 380, 10), ("exact", "exact")), (("auc", 0.55, 350, 4000, 10), ("exact", "exact")),
    (("auc", 0.9, 12, 20000, 100), ("exact", "exact")), (("best_f1", 0.2, 100, 1000, 12), ("exact", "exact")),
    (("best_balanced_accuracy", 0.6, 100, 1000, 7), ("exact", "exact")),
    (("best_accuracy", 0.6, 3000, 2000, 10), ("exact", "exact")),
    (("tp_at_10", 6, 1000, 100000, 1000), ("exact", "exact")),
    (("precision_at_20", 0.5, 250, 5000, 3), ("exact", "exact")),
    (("average_precision", 0.2, 100, 1000, 12), ("simulate", "table")),
    (("average_precision", 0.3, 222, 333, 10), ("simulate", "simulate")),
])
def test_auto_never_refuses_a_valid_question(question, sources):
    metric, score, P, N, C = question
    R = 100_000 if metric == "average_precision" else None
    result = significance_test(metric, P, N, C=C, score=score, R=R)
    assert (result.critical_value.method, result.p_value.method) == sources
    assert 0.0 <= result.p_value.value <= 1.0 and result.p_value.bound in ("", "<", ">")
    forced = sources
    assert result.critical_value == critical_value(metric, P, N, C=C, method=forced[0], R=R if forced[0] == "simulate"
                                                   else None)
    assert result.p_value == p_value(metric, P, N, C=C, score=score, method=forced[1], R=R if forced[1] == "simulate"
                                     else None)


@pytest.mark.parametrize("question", [
    ("auc", 0.58, 100, 1000, 12), ("average_precision", 0.2, 100, 1000, 12), ("best_f1", 0.2, 100, 1000, 10),
    ("average_precision", 0.3, 150, 484, 114),
])
def test_the_three_functions_use_the_same_sources(question):
    metric, score, P, N, C = question
    R = 100_000 if metric == "average_precision" else None
    cv = critical_value(metric, P, N, C=C, R=R)
    pv = p_value(metric, P, N, C=C, score=score, R=R)
    result = significance_test(metric, P, N, C=C, score=score, R=R)
    assert result.critical_value == cv and result.p_value == pv


def test_grid_cell_at_an_unstored_C_answers_both_ways():
    """The issue's example: (100, 1000) at C = 12 — p-value from the table, critical value simulated."""
    result = significance_test("average_precision", 100, 1000, C=12, score=0.2, R=100_000)
    assert result.p_value.method == "table" and result.critical_value.method == "simulate"


def test_precision_at_k_through_the_count_when_forced_to_the_table():
    exact = critical_value("precision_at_10", 100, 300, C=10)
    from_table = critical_value("precision_at_10", 100, 300, C=10, method="table")
    assert from_table.value == critical_value("tp_at_10", 100, 300, C=10, method="table").value / 10
    assert from_table.ci_low <= exact.value <= from_table.ci_high


def test_table_p_values_stay_in_the_unit_interval():
    answer = p_value("average_precision", 100, 300, C=1000, score=0.2, method="table")
    assert answer.value == 1.0 and answer.bound == "" and answer.ci_low == answer.ci_high == 1.0


def test_default_R_follows_the_cost_model_and_the_C_alpha_minimum():
    assert simulation_replicates(100, 300, C=10, alpha=0.01) == 10_000_000
    assert simulation_replicates(1000, 1000, C=10) == 2_000_000
    assert simulation_replicates(100_000, 100_000, C=1000, alpha=0.01) >= 4 * 99_500
    values = [simulation_replicates(P, P, C=10) for P in (10, 100, 1000, 10_000)]
    assert all(np.diff(values) <= 0)
