"""From labels and scores to verdicts: tablegen.compute.metrics_from_scores, significance_test_from_scores, and
`tablegen test --scores-file`.

References: scikit-learn (roc_auc_score, average_precision_score, roc_curve and precision_recall_curve
for the best thresholds, precision_score on the top k) on random data with and without ties; the
exact rational metrics of tests/conftest.py on tie-free rankings; tablegen.lookup.api.significance_test
called directly with the winner's scikit-learn value.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import exact_scores
from scorestools import models_and_labels, random_case, write_predictions

from tablegen import significance_test_from_scores
from tablegen.cli.main import main
from tablegen.compute.metrics_from_scores import BASE_SCORE_METRICS, check_binary_labels, metrics_from_scores
from tablegen.errors import TablegenInputError
from tablegen.lookup.api import significance_test

sklearn_metrics = pytest.importorskip("sklearn.metrics")

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
EXACT_METRICS = ["auc", "best_accuracy", "best_f1", "best_balanced_accuracy"]  # answered without the table


def sklearn_values(y, s) -> dict[str, float]:
    """Every base metric by scikit-learn: best thresholds over its ROC / PR curve thresholds."""
    P, N = int(y.sum()), int(len(y) - y.sum())
    fpr, tpr, _ = sklearn_metrics.roc_curve(y, s, drop_intermediate=False)
    precision, recall, _ = sklearn_metrics.precision_recall_curve(y, s)
    with np.errstate(invalid="ignore"):
        f1 = np.nan_to_num(2 * precision * recall / (precision + recall))
    return {"auc": sklearn_metrics.roc_auc_score(y, s),
            "best_accuracy": np.max((tpr * P + (1 - fpr) * N) / (P + N)),
            "best_f1": np.max(f1),
            "best_balanced_accuracy": np.max(0.5 * (tpr + 1 - fpr)),
            "average_precision": sklearn_metrics.average_precision_score(y, s)}


# -- every metric against scikit-learn ------------------------------------------------------------
@pytest.mark.parametrize("ties", [False, True])
def test_base_metrics_equal_scikit_learn(ties):
    rng = np.random.default_rng(18 + ties)
    for _ in range(60):
        y, s = random_case(rng, ties)
        ours, theirs = metrics_from_scores(y, s), sklearn_values(y, s)
        assert list(ours) == list(BASE_SCORE_METRICS)
        for metric in BASE_SCORE_METRICS:
            assert ours[metric] == pytest.approx(theirs[metric], abs=1e-12), (metric, y, s)


@pytest.mark.parametrize("ties", [False, True])
def test_precision_and_tp_at_k_equal_scikit_learn(ties):
    rng = np.random.default_rng(7 + ties)
    checked = refused = 0
    for _ in range(80):
        y, s = random_case(rng, ties)
        k = int(rng.integers(1, len(y) + 3))
        top = np.sort(s)[::-1]
        if k < len(y) and top[k - 1] == top[k]:  # a tie straddles k: refused (see below)
            with pytest.raises(TablegenInputError, match=f"tp_at_{k}: items ranked"):
                metrics_from_scores(y, s, [f"tp_at_{k}"])
            refused += 1
            continue
        predicted = s >= top[min(k, len(y)) - 1]  # the top min(k, n) items
        ours = metrics_from_scores(y, s, [f"precision_at_{k}", f"tp_at_{k}"])
        assert ours[f"precision_at_{k}"] == pytest.approx(sklearn_metrics.precision_score(y, predicted), abs=1e-15)
        assert ours[f"tp_at_{k}"] == sklearn_metrics.confusion_matrix(y, predicted)[1, 1]
        checked += 1
    assert checked > 15 and (refused > 15 if ties else refused == 0)


def test_without_ties_metrics_equal_the_ranking_definitions():
    rng = np.random.default_rng(3)
    for _ in range(100):
        y, _ = random_case(rng, ties=False)
        s = -np.arange(len(y), dtype=float)  # distinct scores: the ranking is y itself, top first
        exact = exact_scores(tuple(int(v) for v in y), int(y.sum()), int(len(y) - y.sum()), ks=(1, 3, 10))
        wanted = [*BASE_SCORE_METRICS, "tp_at_1", "tp_at_3", "tp_at_10", "precision_at_1", "precision_at_10"]
        ours = metrics_from_scores(y, s, wanted)
        assert ours == pytest.approx({m: float(exact[m]) for m in wanted}, abs=1e-12)


def test_ties_follow_design_conventions():
    # One tied (positive, negative) pair counts 1/2; no cut-off splits the tie.
    y, s = [1, 1, 0, 0], [0.9, 0.5, 0.5, 0.1]
    values = metrics_from_scores(y, s, ["auc", "best_accuracy", "tp_at_1", "tp_at_3", "tp_at_9", "precision_at_9"])
    assert values == {"auc": 0.875, "best_accuracy": 0.75, "tp_at_1": 1.0, "tp_at_3": 2.0, "tp_at_9": 2.0,
                      "precision_at_9": 0.5}
    with pytest.raises(TablegenInputError, match=r"precision_at_2: items ranked 2 to 3 have tied scores.*here 1 or 3"):
        metrics_from_scores(y, s, ["precision_at_2"])
    with pytest.raises(TablegenInputError, match=r"^tp_at_2: items ranked 2 to 3"):
        metrics_from_scores(y, s, ["tp_at_2"])


# -- the verdicts ---------------------------------------------------------------------------------
def test_verdicts_are_the_lookup_answers_for_the_winner():
    y, models = models_and_labels()
    result = significance_test_from_scores(y, models, metrics=EXACT_METRICS)
    assert (result.P, result.N, result.C, result.alpha, result.models) == (40, 60, 3, 0.01, ("noise", "good", "tied"))
    reference = {name: sklearn_values(y, s) for name, s in models.items()}
    for metric in EXACT_METRICS:
        verdict = result[metric]
        best = max(reference, key=lambda name: reference[name][metric])
        assert verdict.winner == best and verdict.score == pytest.approx(reference[best][metric], abs=1e-12)
        direct = significance_test(metric, 40, 60, C=3, alpha=0.01, score=reference[best][metric])
        assert verdict.result.critical_value.value == pytest.approx(direct.critical_value.value, rel=1e-12)
        assert verdict.result.method == direct.method
        assert verdict.significant == bool(direct.significant)
        assert verdict.result.p_value.value == pytest.approx(direct.p_value.value, rel=1e-9)


def test_top_k_metrics_reach_the_lookups():
    y, models = models_and_labels()
    untied = {k: v for k, v in models.items() if k != "tied"}
    result = significance_test_from_scores(y, untied, metrics=["tp_at_10", "precision_at_20"], C=5)
    for metric, k in (("tp_at_10", 10), ("precision_at_20", 20)):
        v = result[metric]
        best = max(untied, key=lambda name: np.sum(y[np.argsort(-untied[name])[:k]]))
        count = int(np.sum(y[np.argsort(-untied[best])[:k]]))
        assert v.winner == best and v.score == (count if metric.startswith("tp") else count / k)
        direct = significance_test(metric, 40, 60, C=5, alpha=0.01, score=v.score)
        assert v.result.p_value.value == pytest.approx(direct.p_value.value, rel=1e-9)
        assert v.significant == bool(direct.significant)


def test_simulation_options_reach_the_lookups(tmp_path, capsys):
    y, models = models_and_labels(P=25, N=35)
    result = significance_test_from_scores(y, models, metrics=["average_precision"], method="simulate", R=20_000,
                                           seed=5)
    answer = result["average_precision"].result
    assert (answer.method, answer.replicates, answer.critical_value.seed) == ("simulate", 20_000, 5)
    path = tmp_path / "preds.csv"
    write_predictions(path, y, models)
    argv = ["test", "--scores-file", str(path), "--metrics", "average_precision", "--method", "simulate", "--R",
            "20000", "--seed", "5", "--json"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)["verdicts"][0]["result"]
    assert printed["critical_value"]["value"] == answer.critical_value.value and printed["replicates"] == 20_000


def test_C_counts_every_model_tried():
    y, models = models_and_labels()
    one = significance_test_from_scores(y, models["noise"], metrics=["auc"])
    assert one.C == 1 and one.models == ("model",)
    wider = significance_test_from_scores(y, models, metrics=["auc"], C=50)
    assert wider.C == 50 and wider["auc"].result.C == 50
    assert wider["auc"].result.p_value.value > significance_test_from_scores(y, models, metrics=["auc"])[
        "auc"].result.p_value.value  # more models tried, weaker evidence
    with pytest.raises(TablegenInputError, match="C = 2 is less than the 3 models given: C counts every model tried"):
        significance_test_from_scores(y, models, C=2)


def brute_force_tied_auc_law(s: np.ndarray, P: int) -> dict:
    """{2U: number of label sets} over every placement of P positives on the scored items (Fractions-free:
    2U is an integer), AUC counting a tied pair as 1/2, by direct pair counting."""
    from itertools import combinations

    law: dict[int, int] = {}
    for positives in combinations(range(s.size), P):
        y = np.zeros(s.size, bool)
        y[list(positives)] = True
        diff = s[y][:, None] - s[~y][None, :]
        two_u = int(2 * np.sum(diff > 0) + np.sum(diff == 0))
        law[two_u] = law.get(two_u, 0) + 1
    return law


@pytest.mark.parametrize("C, alpha", [(1, 0.05), (3, 0.05), (10, 0.2)])
def test_tied_auc_winner_is_tested_given_its_ties_and_holds_its_level_exactly(C, alpha):
    scores = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 3, 4, 5, 5], float)  # 6 tie groups, 13 items
    P, N = 5, 8
    law = brute_force_tied_auc_law(scores, P)
    total = sum(law.values())
    t = 1 - (1 - alpha) ** (1 / C)
    tail = {v: sum(c for w, c in law.items() if w >= v) / total for v in law}
    verdicts = {}
    for v in sorted(law):  # one labelling reaching each attainable 2U: the verdict there
        y = next(y for y in _labellings(scores.size, P) if _two_u(scores, y) == v)
        verdict = significance_test_from_scores(y, {"m": scores}, metrics=["auc"], C=C, alpha=alpha)["auc"]
        assert verdict.tie_conditional and verdict.result.method == "exact"
        assert "exact null given its tie groups" in verdict.sentence()
        assert verdict.result.p_value.value == pytest.approx(1 - (1 - tail[v]) ** C, rel=1e-12)
        verdicts[v] = verdict.significant
        assert verdict.significant == (verdict.result.p_value.value <= alpha * (1 + 1e-12))
    rejected = sum(law[v] for v, significant in verdicts.items() if significant) / total
    assert rejected <= t * (1 + 1e-12)  # the exact level, from the law's counts
    # and no smaller critical value would hold it: rejecting one more value exceeds t
    first_kept = max(v for v, significant in verdicts.items() if not significant)
    assert rejected + law[first_kept] / total > t
    critical = verdict.result.critical_value.value
    assert critical == pytest.approx(first_kept / (2 * P * N), abs=1e-12)


def _labellings(n, P):
    from itertools import combinations

    for positives in combinations(range(n), P):
        y = np.zeros(n, int)
        y[list(positives)] = 1
        yield y


def _two_u(s, y):
    diff = s[y == 1][:, None] - s[y == 0][None, :]
    return int(2 * np.sum(diff > 0) + np.sum(diff == 0))


def test_tied_winner_with_half_integer_U_and_its_fallbacks(monkeypatch):
    y = np.r_[np.ones(21, int), np.zeros(30, int)]
    s = np.r_[np.ones(15), np.zeros(6), np.ones(3), np.zeros(27)]  # U = 15 * 27 + (15 * 3 + 6 * 27) / 2 = 508.5
    result = significance_test_from_scores(y, {"coarse": s}, metrics=["auc"], C=10)
    v = result["auc"]
    assert v.score * 21 * 30 == pytest.approx(508.5) and v.winner_has_ties and v.tie_conditional
    # two groups (33 scored 0, 18 scored 1): with k positives in the top group 2U = 51 k + 252, so the
    # conditional law is the hypergeometric law of k (scipy), and the observed k = 15
    from scipy.stats import hypergeom

    assert 51 * 15 + 252 == 2 * 508.5
    tail = hypergeom(51, 18, 21).sf(15 - 1)
    assert v.result.p_value.value == pytest.approx(1 - (1 - tail) ** 10, rel=1e-10)
    assert result.to_dict()["verdicts"][0]["tie_conditional"] is True
    # the table or a simulation asked for: the no-ties null, said so
    simulated = significance_test_from_scores(y, {"coarse": s}, metrics=["auc"], C=10, method="simulate",
                                              R=100_000, seed=4)["auc"]
    assert not simulated.tie_conditional and "no-ties null" in simulated.notes[0]
    assert "method='simulate'" in simulated.notes[0]
    direct = significance_test("auc", 21, 30, C=10, alpha=0.01, score=v.score, method="simulate", R=100_000, seed=4)
    assert simulated.result.critical_value == direct.critical_value
    # over the time limit: auto falls back with a note, exact refuses
    from tablegen.errors import ResourceLimitError

    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1e-9")
    slow = significance_test_from_scores(y, {"coarse": s}, metrics=["auc"], C=10)["auc"]
    assert not slow.tie_conditional and "would take about" in slow.notes[0]
    with pytest.raises(ResourceLimitError, match="exact null of auc given the winner's 2 tie groups"):
        significance_test_from_scores(y, {"coarse": s}, metrics=["auc"], C=10, method="exact")


def test_untied_scores_get_the_no_ties_answer_bit_for_bit():
    y, models = models_and_labels()
    untied = {name: s for name, s in models.items() if name != "tied"}
    v = significance_test_from_scores(y, untied, metrics=["auc"], C=4)["auc"]
    direct = significance_test("auc", 40, 60, C=4, alpha=0.01, score=v.score)
    assert not v.winner_has_ties and not v.tie_conditional and v.notes == ()
    assert v.result.critical_value == direct.critical_value and v.result.p_value == direct.p_value


def test_a_metric_undefined_for_one_model_is_answered_for_the_others(tmp_path, capsys):
    y, models = models_and_labels()
    k = 10
    tied_top = np.sort(models["tied"])[::-1]
    assert tied_top[k - 1] == tied_top[k]  # the tied model's scores straddle the cut-off 10
    result = significance_test_from_scores(y, models, metrics=["precision_at_10", "auc"])
    v = result["precision_at_10"]
    assert set(v.scores) == {"noise", "good"} and list(v.not_applicable) == ["tied"]
    assert v.not_applicable["tied"].startswith("precision_at_10: items ranked")
    assert v.winner in ("noise", "good") and v.result.C == 3  # C still counts the model left out
    direct = significance_test("precision_at_10", 40, 60, C=3, alpha=0.01, score=v.score)
    assert v.result.p_value.value == pytest.approx(direct.p_value.value, rel=1e-12)
    assert "precision_at_10 is not defined for 'tied'" in v.sentence() and result["auc"].not_applicable == {}
    assert result.to_dict()["verdicts"][0]["not_applicable"] == {"tied": v.not_applicable["tied"]}
    nobody = significance_test_from_scores(y, {"tied": models["tied"]}, metrics=["tp_at_10"])["tp_at_10"]
    assert nobody.result is None and nobody.winner is None and not nobody.significant
    assert nobody.sentence().startswith("tp_at_10 is not applicable to any model.")
    path = tmp_path / "preds.csv"
    write_predictions(path, y, models)
    assert main(["test", "--scores-file", str(path), "--metrics", "precision_at_10", "auc"]) == 0
    out = capsys.readouterr().out
    assert "* precision_at_10: precision_at_10 is not defined for 'tied'" in out


def test_a_winner_far_below_one_half_gets_an_inverted_scores_note():
    y, models = models_and_labels(seed=3)
    flipped = {name: -s for name, s in models.items() if name != "noise"}  # every model ranks positives last
    result = significance_test_from_scores(y, flipped, metrics=["auc", "best_f1"])
    note = [n for n in result["auc"].notes if "look inverted" in n]
    assert len(note) == 1 and "positive_label=" in note[0] and not result["auc"].significant
    assert not any("inverted" in n for n in result["best_f1"].notes)  # only for a metric whose null is symmetric
    # the note's probability is Pr(best of C random <= score) = F(score)**C, checked by brute force at small size
    y_small, s_small = np.r_[np.ones(4, int), np.zeros(5, int)], np.arange(9.0)  # positives ranked last: AUC = 0
    small = significance_test_from_scores(y_small, {"m": s_small}, metrics=["auc"], alpha=0.01)["auc"]
    assert small.score == 0.0 and any("probability 0.0079" in n for n in small.notes)  # 1 / C(9, 4) = 1/126
    # the positive label given the right way round: no note, and the verdict turns significant
    text = np.where(y == 1, "yes", "no")
    righted = significance_test_from_scores(text, flipped, metrics=["auc"], positive_label="no")["auc"]
    assert righted.significant and not any("inverted" in n for n in righted.notes)
    assert not any("inverted" in n for n in significance_test_from_scores(y, models, metrics=["auc"])["auc"].notes)
    # a middling winner among many is not "inverted", though Pr(best of 1000 <= 1/2) = F(1/2)**1000 is tiny
    middling = significance_test_from_scores(y_small, {"m": np.r_[0, 8, 1, 7, 2, 6, 3, 5, 4.0]}, metrics=["auc"],
                                             C=1000)["auc"]
    assert middling.score == 0.5 and not any("inverted" in n for n in middling.notes)


def test_inputs_in_other_shapes():
    y, models = models_and_labels()
    stacked = np.column_stack(list(models.values()))
    by_array = significance_test_from_scores(y, stacked, metrics=["auc"])
    assert by_array.models == ("model 1", "model 2", "model 3") and by_array["auc"].winner == "model 2"
    pd = pytest.importorskip("pandas")
    by_frame = significance_test_from_scores(y, pd.DataFrame(models), metrics=["auc"])
    assert by_frame["auc"].winner == "good"
    text = np.where(y == 1, "spam", "ham")
    assert significance_test_from_scores(text, models, metrics=["auc"], positive_label="spam")["auc"].score == \
        by_frame["auc"].score
    assert check_binary_labels([-1, 1, 1]).tolist() == [0, 1, 1]
    assert check_binary_labels([True, False]).tolist() == [1, 0]


@pytest.mark.parametrize("labels, scores, kwargs, message", [
    ([0, 1, 2, 1], [0.1, 0.2, 0.3, 0.4], {}, "exactly two classes .* found 3"),
    ([1, 1, 1], [0.1, 0.2, 0.3], {}, "exactly two classes .* found 1"),
    ([0, 1, 1], [0.1, 0.2], {}, "scores of 'model' has 2 value.* labels has 3"),
    ([0, 1, 1], {"a": [0.1, 0.2, 0.3], "b": [0.1, 0.2]}, {}, "scores of 'b' has 2"),
    ([0, 1, 1], [0.1, np.nan, 0.3], {}, "scores of 'model' holds a missing .* position 1"),
    ([0, 1, np.nan], [0.1, 0.2, 0.3], {}, "labels holds a missing"),
    ([0, 1, 1], [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]], {}, r"shape \(2, 3\): give one column per model"),
    (["a", "b"], [0.1, 0.2], {}, "say which is positive"),
    (["a", "b"], [0.1, 0.2], {"positive_label": "c"}, "positive_label 'c' is not one of"),
    ([0, 1], [0.1, 0.2], {"metrics": ["accuracy"]}, "unknown metric 'accuracy'"),
    ([0, 1], [0.1, 0.2], {"metrics": []}, "at least one metric"),
    ([0, 1], [0.1, 0.2], {"alpha": 0}, "alpha must be in"),
    ([0, 1], {}, {}, "names no model"),
])
def test_bad_input_is_refused(labels, scores, kwargs, message):
    with pytest.raises(TablegenInputError, match=message):
        significance_test_from_scores(labels, scores, **kwargs)


# -- the command line -----------------------------------------------------------------------------
def test_cli_scores_file_table_and_json(tmp_path, capsys):
    y, models = models_and_labels()
    path = tmp_path / "preds.csv"
    write_predictions(path, y, models, "yes", "no")
    argv = ["test", "--scores-file", str(path), "--positive-label", "yes", "--metrics", *EXACT_METRICS]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.startswith("scored 3 model column(s): noise, good, tied (every column but the label).\n"
                           "P = 40, N = 60; 3 model(s)") and "C = 3 random classifiers at alpha = 0.01" in text
    library = significance_test_from_scores(y, models, metrics=EXACT_METRICS)
    for v in library:
        row = next(line for line in text.splitlines() if line.startswith(v.metric + " "))
        assert v.winner in row and ("not significant" in row) != v.significant
    assert "C must count every model tried" in text
    assert main([*argv, "--json", "--C", "20", "--alpha", "0.05"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["C"] == 20 and data["alpha"] == 0.05 and [v["metric"] for v in data["verdicts"]] == EXACT_METRICS


@pytest.mark.parametrize("extra, message", [
    (["--label-column", "y"], "no label column 'y'"),
    ([], "say which is positive"),
    (["--positive-label", "yes", "--P", "10"], "--P: not used with --scores-file"),
    (["--positive-label", "yes", "--metrics", "tp_at_0"], "unknown metric 'tp_at_0'"),
])
def test_cli_scores_file_errors(tmp_path, capsys, extra, message):
    y, models = models_and_labels()
    path = tmp_path / "preds.csv"
    write_predictions(path, y, models, "yes", "no")
    assert main(["test", "--scores-file", str(path), *extra]) == 2
    assert message in capsys.readouterr().err


def test_cli_single_score_form_still_needs_its_arguments(capsys):
    assert main(["test", "auc", "0.7"]) == 2
    assert "missing: --P, --N, --C" in capsys.readouterr().err
    assert main(["test", "auc", "0.7", "--P", "30", "--N", "70", "--C", "10"]) == 0
    assert "auc = 0.7 is significant" in capsys.readouterr().out


# -- ties against the no-ties null: conservative (statistical) ------------------------------------
@pytest.mark.slow
def test_tied_random_scorers_reject_less_often_than_alpha():
    """A random scorer with heavy ties, tested against the no-ties critical value, rejects at most
    about alpha (benchmarks/bench_tied_null.py runs the full measurement)."""
    spec = importlib.util.spec_from_file_location("bench_tied_null", BENCHMARKS / "bench_tied_null.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rates = bench.rejection_rates(P=30, N=30, levels=4, C=1, alpha=0.05, trials=4000, seed=1)

    for metric, (rate, low, high) in rates.items():
        assert high < 0.05 + 0.01 and rate < 0.05, (metric, rate, low, high)


def test_a_verdict_s_quoted_numbers_are_plain_attributes():
    """Once: a per-metric verdict had no p_value (it was at .result.p_value.value)."""
    y, models = models_and_labels()
    result = significance_test_from_scores(y, models, metrics=["auc", "best_f1"], C=20, alpha=0.05)
    for v in result:
        r = v.result
        assert (v.p_value, v.critical_value, v.value, v.significant, v.settled, v.method) == (
            r.p_value.value, r.critical_value.value, r.score, r.significant, r.settled, r.method)
        assert isinstance(v.p_value, float) and isinstance(v.critical_value, float) and type(v.significant) is bool
        assert v.p_value_bound == r.p_value.bound and v.p_value_interval == (r.p_value.ci_low, r.p_value.ci_high)
        assert v.critical_value_interval == (r.critical_value.ci_low, r.critical_value.ci_high)
        flat = v.to_dict()
        assert (flat["p_value"], flat["critical_value"], flat["significant"]) == (v.p_value, v.critical_value,
                                                                                    v.significant)


def test_a_p_value_that_is_only_a_bound_says_so():
    y = np.r_[np.ones(30), np.zeros(30)]  # no random ranking of 2,000 reaches a perfect one: p < 1/(R + 1)-ish
    verdict = significance_test_from_scores(y, {"perfect": np.arange(60.0)[::-1]}, metrics=["average_precision"],
                                            method="simulate", R=2000)["average_precision"]
    assert (verdict.p_value_bound, verdict.p_value) == ("<", verdict.result.p_value.value)
    assert verdict.p_value_interval[0] == 0.0 and verdict.p_value_interval[1] == verdict.p_value


def test_a_metric_no_model_has_gives_none_not_nan():
    y = np.r_[np.ones(3), np.zeros(3)]
    verdict = significance_test_from_scores(y, {"a": [1, 1, 1, 1, 1, 1]}, metrics=["tp_at_2"])["tp_at_2"]
    assert verdict.result is None
    assert (verdict.p_value, verdict.critical_value, verdict.value, verdict.p_value_bound) == (None,) * 4


@pytest.mark.parametrize("k", [2, 3, 4])
def test_a_tie_for_the_winner_is_noted_whatever_its_size(k):
    """Once: a three-way tie for the winner was not noted."""
    y = np.r_[np.ones(10), np.zeros(10)]
    good = np.r_[np.linspace(1, 2, 10), np.linspace(0, 1.5, 10)]
    models = {"worse": np.linspace(0, 1, 20), **{f"m{i}": good for i in range(k)}}
    verdict = significance_test_from_scores(y, models, metrics=["auc"])["auc"]
    assert verdict.winner == "m0"
    tie = [note for note in verdict.notes if "tie for the best" in note]
    assert tie == [f"{k} models tie for the best auc ({verdict.score:.4g}): "
                   + ", ".join(repr(f"m{i}") for i in range(k - 1)) + f" and 'm{k - 1}'; the winner named is the "
                   "first listed, 'm0'"]
    alone = significance_test_from_scores(y, {"worse": models["worse"], "m0": good}, metrics=["auc"])["auc"]
    assert not [note for note in alone.notes if "tie for the best" in note]
