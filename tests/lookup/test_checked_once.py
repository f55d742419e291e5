"""Arguments are checked once per call and passed down: a lookup that reads a table
checks the metric once, not once per layer it crosses."""

from __future__ import annotations

from unittest import mock

import pytest

import tablegen.compute.validation as validation
import tablegen.lookup._iv as lookup_iv
import tablegen.lookup.table_grid as table_grid  # where a table checks the metric it is asked for
from tablegen import critical_value, open_table, p_value, significance_test


@pytest.mark.parametrize("lookup", [
    lambda table: critical_value("average_precision", 100, 300, C=10, table=table),
    lambda table: p_value("average_precision", 100, 300, C=10, score=0.5, table=table),
    lambda table: significance_test("precision_at_10", 100, 300, C=10, score=0.5, method="table", table=table),
])
def test_a_table_lookup_checks_its_metric_once(lookup):
    table = open_table()
    check_metric = mock.Mock(wraps=validation.check_metric)
    with mock.patch.object(validation, "check_metric", check_metric), \
            mock.patch.object(lookup_iv, "check_metric", check_metric), \
            mock.patch.object(table_grid, "check_metric", check_metric):
        answer = lookup(table)
    assert check_metric.call_count == 1
    answers = [answer.critical_value, answer.p_value] if hasattr(answer, "p_value") else [answer]
    assert all(a.source == table.source for a in answers)  # read from the table, not computed


def test_checked_questions_the_table_does_not_hold_are_none_or_named():
    table = open_table()
    assert table.answer_checked("best_mcc", 20, 20, 10, alpha=0.01) is None
    assert table.answer_checked("auc", 20, 21, 10, alpha=0.01) is None
    with pytest.raises(ValueError, match="metric 'best_mcc' is not in this table"):
        table.answer_checked("best_mcc", 20, 20, 10, alpha=0.01, required=True)
    with pytest.raises(ValueError, match=r"N = 21 is not in this table"):
        table.answer_checked("auc", 20, 21, 10, alpha=0.01, required=True)
