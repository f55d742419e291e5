"""Metrics from labels and scores through the registry: every entry's ``from_scores`` scorer,
``best_mcc`` from real classifier scores, and the tie note as registry data.

References: scikit-learn's ``matthews_corrcoef`` maximised over the thresholds between distinct scores
(with and without ties); the registry's reference scorers on tie-free data (bit for bit for best_mcc,
whose scores scorer repeats the reference's operations); random tie-breakings (a maximum over cut-offs
can only grow when ties are broken); ``significance_test`` called directly with the winner's value.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scorestools import models_and_labels, random_case, write_predictions

from tablegen import significance_test_from_scores
from tablegen.cli.main import main
from tablegen.compute.metric_scorers import threshold_groups
from tablegen.compute.metrics import BASE_METRICS, get_metric
from tablegen.compute.metrics_from_scores import check_score_metric, metrics_from_scores
from tablegen.errors import TablegenInputError
from tablegen.lookup.api import significance_test
from tablegen.lookup.from_scores import FEW_TIES_NOTE, TIES_NOTE, ties_note

sklearn_metrics = pytest.importorskip("sklearn.metrics")

MAXIMA = ["best_accuracy", "best_f1", "best_balanced_accuracy", "best_mcc"]  # maxima over cut-offs


def sklearn_best_mcc(y, s) -> float:
    """max of matthews_corrcoef over "predict positive iff score >= t", t each distinct score, and none."""
    values = [sklearn_metrics.matthews_corrcoef(y, s >= t) for t in np.unique(s)]
    return max([0.0, *values])  # predicting no positive: constant prediction, MCC 0 by convention


@pytest.mark.parametrize("ties", [False, True])
def test_best_mcc_equals_scikit_learn_maximised_over_thresholds(ties):
    rng = np.random.default_rng(31 + ties)
    cases = 30 if ties else 8  # one scikit-learn call per distinct score (~5 ms each): few cases without ties
    perfect = 0
    for _ in range(cases):
        y, s = random_case(rng, ties)
        ours = metrics_from_scores(y, s, ["best_mcc"])["best_mcc"]
        assert ours == pytest.approx(sklearn_best_mcc(y, s), abs=1e-12), (y, s)
        perfect += ours == 1.0
    assert perfect < cases // 2  # mostly imperfect separations


def test_best_mcc_small_cases_by_hand():
    # one tied (positive, negative) pair in the middle: cut-offs k = 1 (MCC 1/sqrt(3)) and k = 3 (same)
    assert metrics_from_scores([1, 1, 0, 0], [0.9, 0.5, 0.5, 0.1], ["best_mcc"]) == {"best_mcc": pytest.approx(
        3 ** -0.5, abs=1e-15)}
    assert metrics_from_scores([0, 1], [0.9, 0.1], ["best_mcc"]) == {"best_mcc": 0.0}  # worse than random: 0 (k = 0)
    assert metrics_from_scores([0, 1, 1, 0], [0.5, 0.5, 0.5, 0.5], ["best_mcc"]) == {"best_mcc": 0.0}  # one group
    assert metrics_from_scores([1, 0, 0], [3.0, 2.0, 1.0], ["best_mcc"]) == {"best_mcc": 1.0}


def test_without_ties_every_entry_scores_as_its_reference():
    rng = np.random.default_rng(5)
    names = [*BASE_METRICS, "tp_at_1", "tp_at_4", "precision_at_3", "precision_at_200"]
    for _ in range(80):
        y, _ = random_case(rng, ties=False)
        order = rng.permutation(len(y))
        s = np.empty(len(y))
        s[order] = -np.arange(len(y), dtype=float)  # distinct scores: the ranking is y[order], top first
        P, N = int(y.sum()), int(len(y) - y.sum())
        groups = threshold_groups(y, s)
        for name in names:
            spec = get_metric(name)
            reference = float(spec.reference_scores(y[order], P, N)[0])
            if name == "best_mcc":  # the same operations: the same float
                assert spec.score_groups(groups) == reference, (y[order],)
            else:
                assert spec.score_groups(groups) == pytest.approx(reference, abs=1e-12), (name, y[order])


def test_breaking_ties_never_lowers_a_maximum_over_cut_offs():
    """The premise of the conservative tie note: a tie-breaking adds cut-offs, so a maximum can only grow."""
    rng = np.random.default_rng(12)
    grew = 0
    for _ in range(60):
        y, s = random_case(rng, ties=True)
        tied = metrics_from_scores(y, s, MAXIMA)
        for _ in range(5):
            broken = metrics_from_scores(y, s + 1e-3 * rng.random(len(s)), MAXIMA)  # ties broken, groups kept in order
            for metric in MAXIMA:
                assert broken[metric] >= tied[metric] - 1e-15, (metric, y, s)
            grew += broken["best_mcc"] > tied["best_mcc"]
    assert grew > 0  # the check sees real differences


def test_tie_notes_are_registry_data():
    assert [m for m in BASE_METRICS if not get_metric(m).ties_conservative] == ["auc"]
    for name in [*BASE_METRICS, "tp_at_10", "precision_at_3"]:
        assert ties_note(get_metric(name)) == (TIES_NOTE if get_metric(name).ties_conservative else FEW_TIES_NOTE)
    assert "about alpha" in ties_note(get_metric("auc"))
    assert "conservative for this metric" in ties_note(get_metric("best_mcc"))
    # the one metric not conservative under ties is the one tested given its ties
    assert [m for m in BASE_METRICS if get_metric(m).tied_null_routine] == ["auc"]


def test_scores_metrics_are_checked_by_the_registry():
    assert check_score_metric("best_mcc") == "best_mcc" and check_score_metric("precision_at_7") == "precision_at_7"
    for bad in ("mcc", "tp_at_0", 3, ["auc"]):
        with pytest.raises(TablegenInputError, match=r"unknown metric .*computes auc, .*best_mcc, tp_at_<k>"):
            check_score_metric(bad)


def test_best_mcc_verdict_is_the_lookup_answer_for_the_winner():
    y, models = models_and_labels()
    result = significance_test_from_scores(y, models, metrics=["best_mcc"], method="simulate", R=20_000, seed=3)
    values = {name: sklearn_best_mcc(y, s) for name, s in models.items()}
    verdict = result["best_mcc"]
    assert verdict.winner == max(values, key=values.get) == "good"
    assert verdict.score == pytest.approx(values["good"], abs=1e-12)
    direct = significance_test("best_mcc", 40, 60, C=3, alpha=0.01, score=verdict.score, method="simulate", R=20_000,
                               seed=3)
    assert verdict.result.critical_value.value == direct.critical_value.value
    assert verdict.result.p_value.value == direct.p_value.value and verdict.significant == bool(direct.significant)
    tied = significance_test_from_scores(y, {"tied": models["tied"]}, metrics=["best_mcc"], method="simulate",
                                         R=20_000, seed=3)
    assert tied["best_mcc"].winner_has_ties and TIES_NOTE in tied.sentence()


def test_cli_scores_file_best_mcc(tmp_path, capsys):
    y, models = models_and_labels()
    path = tmp_path / "preds.csv"
    write_predictions(path, y, models)
    argv = ["test", "--scores-file", str(path), "--metrics", "best_mcc", "auc", "--method", "simulate", "--R",
            "20000", "--seed", "3"]
    assert main([*argv, "--json"]) == 0
    verdicts = json.loads(capsys.readouterr().out)["verdicts"]
    assert [v["metric"] for v in verdicts] == ["best_mcc", "auc"]
    library = significance_test_from_scores(y, models, metrics=["best_mcc"], method="simulate", R=20_000, seed=3)
    assert verdicts[0]["winner"] == "good" and verdicts[0]["score"] == library["best_mcc"].score
    assert verdicts[0]["result"]["critical_value"]["value"] == library["best_mcc"].result.critical_value.value
    assert main(argv) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("best_mcc "))
    assert "good" in row and ("not significant" in row) != library["best_mcc"].significant
