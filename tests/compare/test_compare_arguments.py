"""Bad arguments of the comparison functions are refused with TablegenInputError naming the argument, before
any work: wrong types, out-of-range ROPEs, test fractions and decision probabilities, draws beyond memory,
grids beyond their cap, and results of the wrong kind handed to the tables and pictures."""

from __future__ import annotations

import numpy as np
import pytest

from tablegen.compare import (
    across_datasets,
    adjust_p_values,
    bayesian_pair,
    bayesian_pairs,
    comparison_table,
    cross_validated,
    f1_posterior,
    f1_score_posterior,
    paired_test,
    pairwise_tests,
    plot_f1_comparison,
)
from tablegen.errors import ResourceLimitError, TablegenInputError

TABLE = np.array([[0.70 + i / 100, 0.72 + (i % 3) / 100, 0.69 + i / 90] for i in range(8)])
X, Y = TABLE[:, 0], TABLE[:, 1]
LABELS = np.array([0, 1] * 10)
A, B = np.linspace(0, 1, 20), np.linspace(1, 0, 20) ** 2
CONF_A, CONF_B = [[40, 5], [6, 49]], [[38, 7], [5, 50]]

CASES = [
    (across_datasets, dict(scores={}), "scores"),
    (across_datasets, dict(scores=TABLE, correction=["holm"]), "correction"),
    (adjust_p_values, dict(p_values="x"), "p_values"),
    (adjust_p_values, dict(p_values=[0.1], correction={}), "correction"),
    (bayesian_pair, dict(x=X, y=Y, test=[]), "test"),
    (bayesian_pair, dict(x=X, y=Y, names="x"), "names"),
    (bayesian_pair, dict(x=X, y=Y, names=None), "names"),
    (bayesian_pair, dict(x=X, y=Y, rope=1.0), "rope"),  # scores in [0, 1]: every difference would be inside
    (bayesian_pair, dict(x=X, y=Y, probability=0.3), "probability"),
    (bayesian_pairs, dict(scores=object(), samples=500), "scores"),
    (bayesian_pairs, dict(scores=TABLE, test=[[1]]), "test"),
    (comparison_table, dict(result=None), "result"),
    (comparison_table, dict(result=across_datasets(TABLE), bayesian="x"), "bayesian"),
    (cross_validated, dict(x="x", y=Y), "x"),
    (cross_validated, dict(x=X, y={}), "y"),
    (cross_validated, dict(x=X, y=Y, names=[]), "names"),
    (cross_validated, dict(x=X, y=Y, rho=0), "rho"),
    (cross_validated, dict(x=X, y=Y, rope=2.0), "rope"),
    (f1_score_posterior, dict(confusion=CONF_A, samples=500, eta_grid=2**64), "eta_grid"),
    (f1_posterior, dict(confusion_a=CONF_A, confusion_b=CONF_B, rope=2.0), "rope"),
    (f1_posterior, dict(confusion_a=CONF_A, confusion_b=CONF_B, rope=(-1.0, 0.1)), "rope"),
    (paired_test, dict(labels=LABELS, scores_a=A, scores_b=B, threshold="x"), "threshold"),
    (pairwise_tests, dict(labels=LABELS, scores={"a": A, "b": B}, metric=[]), "metric"),
    (pairwise_tests, dict(labels=LABELS, scores={"a": A, "b": B}, metric="nope"), "metric"),
    (plot_f1_comparison, dict(result="x"), "result"),
]


@pytest.mark.parametrize(("function", "kwargs", "argument"), CASES,
                         ids=[f"{f.__name__}-{arg}-{i}" for i, (f, _, arg) in enumerate(CASES)])
def test_a_bad_argument_is_refused_naming_it(function, kwargs, argument):
    with pytest.raises(TablegenInputError, match=argument):
        function(**kwargs)


def test_draws_beyond_memory_are_refused_before_drawing():
    with pytest.raises(ResourceLimitError, match="samples"):
        bayesian_pair(X, Y, samples=2**64)


def test_a_large_threshold_is_a_threshold():
    # 2**64 is a finite number: every item falls below it, so both models predict all negative
    result = paired_test(LABELS, A, B, threshold=2**64)
    assert result.p_value == 1.0


def test_a_rope_of_one_or_more_is_valid_for_scores_beyond_one():
    # accuracies in percent (as in the 2017 paper's tables): one point of accuracy is rope=1
    pair = bayesian_pair(100 * X, 100 * Y, rope=1.0, samples=500)
    assert pair.rope == 1.0


def test_the_names_may_be_a_list():
    assert bayesian_pair(X, Y, samples=500, names=["p", "q"]).a == "p"
    assert cross_validated(X, Y, names=["p", "q"]).b == "q"


@pytest.mark.slow  # compiles the F1 kernels: 4.9 s from a cold cache
def test_the_plot_refuses_a_path_or_labels_of_the_wrong_kind_before_drawing():
    result = f1_posterior(CONF_A, CONF_B, samples=500, prior_samples=500, mu="independent")
    with pytest.raises(TablegenInputError, match="path"):
        plot_f1_comparison(result, path=3)
    with pytest.raises(TablegenInputError, match="labels"):
        plot_f1_comparison(result, labels=("A",))
