"""Metric names are accepted in any case and a typo is answered with the closest name (difflib)."""

from __future__ import annotations

import pytest

from tablegen.compute.metrics import BASE_METRICS, get_metric
from tablegen.compute.metrics_from_scores import check_score_metric
from tablegen.compute.validation import check_metric
from tablegen.errors import TablegenInputError


@pytest.mark.parametrize("name", [*BASE_METRICS, "tp_at_10", "precision_at_3"])
def test_every_metric_name_in_upper_or_mixed_case_is_the_same_metric(name):
    for spelling in (name.upper(), name.title()):
        assert get_metric(spelling).name == name
        assert check_metric("metric", spelling) == check_score_metric(spelling) == name


@pytest.mark.parametrize(("typo", "meant"), [("best_f", "best_f1"), ("Best_F2", "best_f1"), ("aucc", "auc"),
                                             ("average_precison", "average_precision"), ("tp_at10", "tp_at_10")])
def test_a_typo_gets_did_you_mean(typo, meant):
    with pytest.raises(TablegenInputError, match=rf"unknown metric '{typo}'; did you mean '{meant}'\?"):
        check_metric("metric", typo)
    with pytest.raises(TablegenInputError, match=rf"did you mean '{meant}'\? From scores tablegen computes"):
        check_score_metric(typo)
    with pytest.raises(KeyError, match=f"did you mean '{meant}'"):
        get_metric(typo)


def test_a_name_far_from_every_metric_gets_the_list_only():
    with pytest.raises(TablegenInputError, match=r"unknown metric 'zzz'; known metrics: auc,"):
        check_metric("metric", "zzz")
