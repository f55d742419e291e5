"""tablegen.evaluate with more than two classes: input recognised and checked, every part of the K-class report
present, rendered, and reproducible; bad input refused naming the argument."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tablegen
from tablegen.compare.report.multiclass import MulticlassEvaluation, evaluate_multiclass
from tablegen.errors import TablegenInputError


def _noisy(y, right, rng, K=3):
    return np.where(rng.random(y.size) < right, y, (y + rng.integers(1, K, size=y.size)) % K)


@pytest.fixture(scope="module")
def three():
    rng = np.random.default_rng(7)
    y = rng.integers(0, 3, size=90)
    models = {"good": _noisy(y, 0.8, rng), "fair": _noisy(y, 0.55, rng), "noise": rng.integers(0, 3, size=90)}
    return y, models, tablegen.evaluate(y, models)


def test_evaluate_recognises_more_than_two_classes(three):
    y, models, report = three
    assert isinstance(report, MulticlassEvaluation)
    assert report.K == 3 and report.n == 90 and report.C == 3 and report.models == ("good", "fair", "noise")
    assert [r.metric for r in report] == ["accuracy", "kappa", "balanced_accuracy", "macro_f1"]
    for metric in report.reports:
        assert report[metric].winner == "good"
        assert report[metric].versus_random.model == "good" and report[metric].versus_random.significant
        assert report[metric].versus_models.significant and report[metric].versus_models.winner == "good"
        assert "noise" not in report[metric].versus_others.best_set


def test_values_agree_with_multiclass_test_and_the_definitions(three):
    y, models, report = three
    for metric in ("accuracy", "kappa", "balanced_accuracy", "macro_f1"):
        for name, predicted in models.items():
            alone = tablegen.multiclass_test(y, predicted, metric=metric, C=3, R=100, method="monte carlo")
            assert report[metric].values[name] == alone.value  # the same arithmetic, bit for bit
    good = models["good"]
    tp = np.array([np.sum((y == k) & (good == k)) for k in range(3)])
    n_k = np.bincount(y, minlength=3)
    m_k = np.bincount(good, minlength=3)
    assert report["balanced_accuracy"].values["good"] == pytest.approx(np.mean(tp / n_k), abs=1e-15)
    assert report["macro_f1"].values["good"] == pytest.approx(np.mean(2 * tp / (n_k + m_k)), abs=1e-15)
    pe = np.sum(n_k * m_k) / 90 ** 2
    assert report["kappa"].values["good"] == pytest.approx((tp.sum() / 90 - pe) / (1 - pe), abs=1e-15)


def test_intervals_cover_the_values_and_are_reproducible(three):
    y, models, report = three
    again = tablegen.evaluate(y, models)
    assert json.dumps(report.to_dict(), allow_nan=False) == json.dumps(again.to_dict(), allow_nan=False)
    for r in report:
        for name, (low, high) in r.intervals.items():
            assert low <= r.values[name] <= high


def test_renderings(three, tmp_path):
    y, models, report = three
    frame = report.to_frame()
    assert frame.shape == (12, 8)
    assert "| accuracy | good |" in report.to_markdown()
    assert r"\begin{tabular}" in report.to_latex() and "balanced\\_accuracy" in report.to_latex()
    text = json.dumps(report.to_dict(), allow_nan=False)  # strict JSON
    assert json.loads(text)["K"] == 3
    sentence = report.sentence()
    assert sentence.startswith("3 models on 90 test items in 3 classes") and "exact McNemar" in sentence
    pytest.importorskip("matplotlib")
    report.plot(tmp_path / "multiclass.png")
    assert (tmp_path / "multiclass.png").stat().st_size > 0


def test_string_labels_and_one_model_array():
    y = ["cat", "dog", "fox"] * 6
    predicted = ["cat", "dog", "fox"] * 5 + ["dog", "fox", "cat"]
    report = tablegen.evaluate(y, np.array(predicted), metrics=["accuracy", "kappa"])
    assert report.models == ("model",) and report.classes == ("cat", "dog", "fox")
    test = report["accuracy"].versus_random.tests["model"]
    alone = tablegen.multiclass_test(y, predicted, C=1, alpha=0.05)
    assert test.method == "exact" and test.p_value == alone.p_value and test.critical_value == alone.critical_value
    assert report["kappa"].versus_random.p_value == alone.p_value  # kappa: the same exact law


def test_probability_matrices_are_argmaxed():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, size=40)
    logits = rng.normal(size=(40, 4)) + 3 * np.eye(4)[y]
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    report = tablegen.evaluate(y, {"p": probabilities}, metrics=["accuracy"])
    labels = tablegen.evaluate(y, {"p": probabilities.argmax(axis=1)}, metrics=["accuracy"])
    assert report.source == "probabilities" and any("largest probability" in n for n in report.notes)
    assert report["accuracy"].values == labels["accuracy"].values


def test_confusion_matrices_give_values_and_verdicts_but_no_paired_tests():
    y = np.repeat([0, 1, 2], [10, 12, 8])
    rng = np.random.default_rng(5)
    a, b = _noisy(y, 0.8, rng), _noisy(y, 0.5, rng)
    matrices = {m: np.array([[np.sum((y == k) & (p == j)) for j in range(3)] for k in range(3)])
                for m, p in (("a", a), ("b", b))}
    report = tablegen.evaluate(["x", "y", "z"], matrices)
    items = tablegen.evaluate(y, {"a": a, "b": b})
    assert report.source == "confusion" and report.classes == ("x", "y", "z")
    for metric in report.reports:
        assert report[metric].values == items[metric].values
        assert report[metric].versus_models is None and report[metric].versus_others is None
    for m, matrix in matrices.items():  # a model's interval: that of the items its matrix implies, in their order
        implied_true = np.repeat([0, 1, 2], matrix.sum(axis=1))
        implied = np.concatenate([np.repeat([0, 1, 2], row) for row in matrix])
        alone = tablegen.evaluate(implied_true, {m: implied})
        for metric in report.reports:
            assert report[metric].intervals[m] == alone[metric].intervals[m]
    assert any("need item-level predictions" in note for note in report.notes)
    assert report["accuracy"].versus_random.p_value == items["accuracy"].versus_random.p_value


def test_a_class_only_predicted_is_allowed_and_said():
    y = [0, 0, 1, 1, 2, 2] * 3
    predicted = [0, 0, 1, 1, 2, 3] * 3
    report = tablegen.evaluate(y, {"m": predicted}, metrics=["accuracy", "balanced_accuracy", "macro_f1"])
    assert report.K == 4 and any("absent from the labels" in note for note in report.notes)
    assert report["accuracy"].values["m"] == 15 / 18
    assert report["balanced_accuracy"].values["m"] == pytest.approx((1 + 1 + 0.5) / 3, abs=1e-15)
    assert report["macro_f1"].values["m"] == pytest.approx((1 + 1 + 2 * 3 / 9 + 0) / 4, abs=1e-15)


def test_multiclass_test_monte_carlo_on_request():
    y, p = [0, 0, 1, 1, 2, 2, 2, 2], [0, 0, 1, 2, 2, 2, 2, 1]
    result = tablegen.multiclass_test(y, p, method="monte carlo", R=2000)
    assert result.method == "monte carlo" and result.replicates == 2000
    assert tablegen.multiclass_test(y, p).method == "exact"
    with pytest.raises(TablegenInputError, match="method must be 'auto', 'exact' or 'monte carlo'"):
        tablegen.multiclass_test(y, p, method="exactly")


@pytest.mark.parametrize("labels, scores, match", [
    (["a"] * 6, {"m": ["a", "b", "c", "a", "a", "b"]}, r"^labels .*one class only|^labels must hold"),
    ([0, 1, 2, 0], {"m": [0, 1, 2]}, r"labels and scores\['m'\] must have the same length"),
    ([0, 1, 2, np.nan], {"m": [0, 1, 2, 1]}, r"^labels has a missing value \(NaN\) at item 3"),
    ([0, 1, 2, None], {"m": [0, 1, 2, 1]}, r"^labels has a missing value \(None\) at item 3"),
    ([0, 1, 2, 1], {"m": [0, 1, np.nan, 1]}, r"^scores\['m'\] has a missing value \(NaN\) at item 2"),
    ([0, 1, 2, 1], {"m": np.array([[0.5, 0.5, 0.0]] * 3 + [[0.5, 0.4, 0.0]])},
     r"^scores\['m'\] row 3 sums to 0.9, not 1"),
    ([0, 1, 2, 1], {"m": np.array([[0.5, 0.5, 0.0]] * 3 + [[np.nan, 0.4, 0.6]])},
     r"^scores\['m'\] has a missing or infinite probability in row 3"),
    ([0, 1, 2, 1], {"m": np.full((4, 2), 0.5)}, r"^scores\['m'\] must be an n x K probability matrix"),
    ([0, 1, 2], {"m": [3, 4, 5]}, r"^scores name 6 classes .* for 3 items: more classes than items"),
    (["x", "y", "z"], {"m": np.array([[2, 0, 0], [0, -1, 0], [0, 0, 2]])},
     r"^scores\['m'\] has a negative count \(-1\) at row 1, column 1"),
    (["x", "y", "z"], {"a": np.eye(3, dtype=int), "b": 2 * np.eye(3, dtype=int)},
     r"^scores\['b'\]'s rows sum to the class counts \[2, 2, 2\]"),
    (["x", "y"], {"a": np.eye(3, dtype=int)}, r"^labels must list the 3 distinct class names"),
    ([0, 1, 2, 1], {"a": [0, 1, 2, 1], "b": np.full((4, 3), 1 / 3)}, r"^scores must give every model's predictions"),
])
def test_bad_input_names_the_argument(labels, scores, match):
    with pytest.raises(TablegenInputError, match=match):
        tablegen.evaluate(labels, scores)


def test_bad_options_name_the_argument():
    y, p = [0, 1, 2] * 3, [0, 1, 1] * 3
    with pytest.raises(TablegenInputError, match="^metrics must name some of accuracy"):
        tablegen.evaluate(y, {"m": p}, metrics=["auc"])
    with pytest.raises(TablegenInputError, match="^positive_label applies to two classes only"):
        tablegen.evaluate(y, {"m": p}, positive_label=1)
    with pytest.raises(TablegenInputError, match="^method='exact' applies to two classes only"):
        tablegen.evaluate(y, {"m": p}, method="exact")
    with pytest.raises(TablegenInputError, match="^alpha"):
        tablegen.evaluate(y, {"m": p}, alpha=2)
    with pytest.raises(TablegenInputError, match="^R must"):
        tablegen.evaluate(y, {"m": p}, R=0)
    with pytest.raises(TablegenInputError, match="^seed"):
        tablegen.evaluate(y, {"m": p}, seed=-1)
    with pytest.raises(tablegen.errors.ResourceLimitError):
        evaluate_multiclass(y, {"m": p}, max_seconds=1e-9)


def test_progress_is_told_in_estimated_seconds_and_ends_at_the_total(three):
    y, models, _ = three
    told = []
    evaluate_multiclass(y, models, progress=lambda done, total: told.append((done, total)))
    done = [d for d, _ in told]
    assert len(told) >= 4 and done == sorted(done) and done[0] == 0.0
    assert told[-1][0] == told[-1][1] and len({t for _, t in told}) == 1


def test_the_time_limit_refuses_before_any_work(three, monkeypatch):
    y, models, _ = three
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1e-6")
    told = []
    with pytest.raises(tablegen.errors.ResourceLimitError, match="evaluating 3 models on 90 items in 3 classes"):
        tablegen.evaluate(y, models, progress=lambda done, total: told.append(done))
    assert told == []


def test_probability_metrics_on_request_are_multiclass_scores_test():
    rng = np.random.default_rng(9)
    y = rng.integers(0, 3, size=30)
    models = {}
    for name, strength in (("sharp", 3.0), ("vague", 0.3)):
        logits = rng.normal(size=(30, 3)) + strength * np.eye(3)[y]
        models[name] = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    report = tablegen.evaluate(y, models, metrics=["accuracy", "hand_till_auc", "top_2_accuracy"], R=2000)
    assert list(report.reports) == ["accuracy", "hand_till_auc", "top_2_accuracy"]
    for metric, name, k in (("hand_till_auc", "hand_till_auc", None), ("top_2_accuracy", "top_k_accuracy", 2)):
        part = report[metric]  # every answer the label metrics have (test_report_multiclass_probabilities.py)
        assert part.versus_models.method == "permutation" and part.versus_others.winner == part.winner
        assert all(low <= part.values[m] <= high for m, (low, high) in part.intervals.items())
        for model, matrix in models.items():
            alone = tablegen.multiclass_scores_test(y, matrix, name, k=k, C=2, R=2000)
            assert part.versus_random.tests[model].p_value == alone.p_value
            assert part.values[model] == alone.value
    assert report["hand_till_auc"].winner == "sharp" and report["hand_till_auc"].versus_random.model == "sharp"
    json.dumps(report.to_dict(), allow_nan=False)
    assert "top-2 accuracy" in report.sentence() and report.to_frame().shape == (6, 8)
    with pytest.raises(TablegenInputError, match="^metrics names hand_till_auc, metrics of probability matrices"):
        tablegen.evaluate(y, {m: p.argmax(axis=1) for m, p in models.items()}, metrics=["hand_till_auc"])


def test_zhangs_bayesian_f1_comparison_is_reachable_for_two_models(three):
    from tablegen.compare import f1_posterior

    y, models, report = three
    result = report.f1_posterior(samples=2000, seed=3)
    direct = f1_posterior(report.confusions["good"], report.confusions["fair"], samples=2000, seed=3)
    assert result.to_dict() == direct.to_dict()  # the macro-F1 winner against the runner-up by default
    with pytest.raises(TablegenInputError, match="^b must name a model of the report"):
        report.f1_posterior("good", "nobody")


def test_a_dataframe_gives_one_model_per_column(three):
    import pandas as pd

    y, models, report = three
    framed = tablegen.evaluate(pd.Series(y), pd.DataFrame(models), metrics=["accuracy"])
    assert framed.models == report.models and framed["accuracy"].values == report["accuracy"].values


def test_labels_of_mixed_types_keep_their_values():
    y = [1, "a", 2.5] * 3
    report = tablegen.evaluate(y, {"m": [1, "a", "a"] * 3}, metrics=["accuracy"])
    assert report.classes == (1, "a", 2.5)  # do not sort: first seen, each value as given (not "1", "2.5")
    assert report["accuracy"].values["m"] == 6 / 9


SKLEARN = json.loads((Path(__file__).parents[1] / "data" / "sklearn_multiclass_labels" / "values.json").read_text())


@pytest.mark.parametrize("case", SKLEARN["cases"], ids=lambda case: case["name"])
def test_values_equal_scikit_learns(case):
    """Every metric of every model equals scikit-learn's (the oracle: accuracy_score, cohen_kappa_score,
    balanced_accuracy_score, f1_score(average="macro")), classes only predicted included."""
    report = evaluate_multiclass(case["labels"], {m: p for m, p in case["predictions"].items()}, R=200)
    for model, expected in case["values"].items():
        for metric, value in expected.items():
            assert report[metric].values[model] == pytest.approx(value, rel=1e-13, abs=1e-15), (model, metric)


def test_a_C_below_the_number_of_models_is_refused_as_the_binary_report_refuses_it():
    import re

    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, 60)
    predicted = {name: rng.integers(0, 3, 60) for name in "abc"}
    with pytest.raises(TablegenInputError, match=re.escape("C = 2 is less than the 3 models given")):
        tablegen.evaluate(labels, predicted, C=2)
    assert tablegen.evaluate(labels, predicted, C=3, metrics=["accuracy"]).C == 3
