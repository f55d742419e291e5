"""The tie-conditional exact AUC p-value of every model, not only the winner's (MetricVerdict.tie_conditional_p_values).

Reference: each model's entry is the verdict the winner gets (the exact null given its tie groups, checked against
R's coin in tests/lookup) when that model is the only one given, with the same C.
"""

from __future__ import annotations

import numpy as np

import tablegen


def models():
    rng = np.random.default_rng(1)
    y = np.r_[np.ones(12), np.zeros(18)]
    return y, {"coarse": np.round(y + rng.normal(size=30), 0), "fine": np.round(y + rng.normal(size=30), 1),
               "untied": rng.normal(size=30)}


def test_every_model_gets_the_p_value_it_would_get_as_the_winner():
    y, scores = models()
    verdict = tablegen.significance_test_from_scores(y, scores, metrics=["auc"])["auc"]
    assert set(verdict.tie_conditional_p_values) == set(scores)
    assert verdict.tie_conditional_p_values[verdict.winner] == verdict.p_value
    for name, s in scores.items():
        alone = tablegen.significance_test_from_scores(y, {name: s}, metrics=["auc"], C=len(scores))["auc"]
        assert alone.tie_conditional == (name != "untied")
        assert verdict.tie_conditional_p_values[name] == alone.p_value
    report = tablegen.evaluate(y, scores, metrics=["auc"])["auc"]
    assert report.versus_random.tie_conditional_p_values == verdict.tie_conditional_p_values
    assert report.to_dict()["versus_random"]["tie_conditional_p_values"] == verdict.tie_conditional_p_values


def test_only_auc_under_the_exact_answer_policies_has_them():
    y, scores = models()
    result = tablegen.significance_test_from_scores(y, scores, metrics=["auc", "best_f1"], method="simulate",
                                                    R=100_000, seed=1)
    assert result["auc"].tie_conditional_p_values == {} and result["best_f1"].tie_conditional_p_values == {}
    assert tablegen.significance_test_from_scores(y, scores, metrics=["best_f1"])["best_f1"].to_dict()[
        "tie_conditional_p_values"] == {}
