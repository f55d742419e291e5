"""tablegen.evaluate: one report that carries each source's answer unchanged, its tables, and its picture."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import tablegen
from tablegen.compare import selection_test
from tablegen.compare.report.plot import random_roc_band
from tablegen.compare.report.tables import latex_table, markdown_table


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(12)
    y = np.r_[np.ones(7), np.zeros(9)]
    base = y + rng.normal(size=16)
    models = {"a": base + 0.3 * rng.normal(size=16), "b": np.round(base, 0), "c": rng.normal(size=16)}
    return y, models, tablegen.evaluate(y, models, C=5, metrics=["auc", "best_f1"], alpha=0.1)


def test_the_report_is_the_sources_answers_unchanged(small):
    from tablegen.compare import pairwise_tests

    y, models, report = small
    random = tablegen.significance_test_from_scores(y, models, metrics=["auc", "best_f1"], C=5, alpha=0.1)
    for metric in ("auc", "best_f1"):
        expected = pairwise_tests(y, models, metric=metric, alpha=0.1).to_dict()
        assert json.dumps(report[metric].versus_others.to_dict()) == json.dumps(expected)  # NaN ends too
        assert report[metric].versus_random.to_dict() == random[metric].to_dict()
        assert report[metric].versus_models.to_dict() == selection_test(y, models, metric=metric, C=5,
                                                                         alpha=0.1).to_dict()
        assert report[metric].values == random[metric].scores
    assert (report.P, report.N, report.C, report.models) == (7, 9, 5, ("a", "b", "c"))


def test_the_report_reads_as_text_tables_and_json(small):
    _, _, report = small
    frame = report.to_frame()
    assert frame.shape == (6, 7) and frame.loc[("auc", report["auc"].winner), "winner"]
    assert frame.loc[("auc", "c"), "max-T p (adjusted)"] == report["auc"].versus_models.adjusted_p_values["c"]
    others = report["auc"].versus_others
    assert frame.loc[("auc", "c"), "p vs winner (Holm)"] == others.adjusted_p_values[others.winner, "c"]
    assert bool(frame.loc[("auc", others.winner), "in best set"])
    markdown = report.to_markdown()
    assert markdown.startswith("| metric | model | value | 95% CI low | 95% CI high | winner | max-T p (adjusted) |")
    low, high = frame.loc[("auc", "a"), ["95% CI low", "95% CI high"]]
    assert (low, high) == report["auc"].intervals["a"] and low <= report["auc"].values["a"] <= high
    assert report["auc"].sentence() in markdown
    assert "\\begin{tabular}{llrrrlrrl}" in report.to_latex() and "best\\_f1" in report.to_latex()
    assert json.loads(json.dumps(report.to_dict()))["metrics"][0]["metric"] == "auc"
    assert "only 7 positives" in report.sentence()  # the few-items note


def test_tables_escape_what_their_format_needs():
    rows = [{"model": "a|b_c", "p": 0.000123456, "winner": True}]
    assert markdown_table(rows).splitlines()[-1] == "| a\\|b_c | 0.0001235 | yes |"
    assert "a|b\\_c & 0.0001235 & yes" in latex_table(rows)


@pytest.mark.parametrize(("P", "N", "C", "alpha"), [(4, 3, 1, 0.3), (3, 5, 3, 0.1), (5, 5, 2, 0.05)])
def test_the_random_band_is_the_quantile_of_every_rankings_curve(P, N, C, alpha):
    """Enumerate every ranking: at each step j the positives above the (j + 1)-th negative; the band is the
    smallest count c with Pr(count <= c)^C >= 1 - alpha."""
    counts = []
    for positives in itertools.combinations(range(P + N), P):
        ranking = np.zeros(P + N, int)
        ranking[list(positives)] = 1
        negatives = np.flatnonzero(ranking == 0)
        counts.append([int(ranking[:at].sum()) for at in negatives])
    counts = np.array(counts)
    expected = []
    for j in range(N):
        cdf = np.array([np.mean(counts[:, j] <= c) for c in range(P + 1)])
        expected.append(int(np.argmax(cdf ** C >= (1 - alpha) * (1 - 1e-12))))
    fpr, tpr = random_roc_band(P, N, C, alpha)
    assert np.allclose(fpr, np.arange(N + 1) / N)
    assert np.allclose(tpr, np.r_[expected, P] / P)


def test_the_picture_is_drawn(small, tmp_path):
    _, _, report = small
    report.plot(tmp_path / "report.png")
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_bad_input_is_refused_naming_the_argument():
    with pytest.raises(tablegen.TablegenInputError, match="labels must hold exactly two classes") as one_class:
        tablegen.evaluate([1, 1, 1], {"a": [0.1, 0.2, 0.3]})
    assert "multiclass_test" not in str(one_class.value)
    with pytest.raises(tablegen.TablegenInputError, match=r"scores\['a'\] holds values that are neither classes"):
        tablegen.evaluate([0, 1, 2] * 4, {"a": np.arange(12.0) / 7})  # more than two classes: scores are not labels
    with pytest.raises(tablegen.TablegenInputError, match="scores of 'a' has 2 value"):
        tablegen.evaluate([1, 0, 1], {"a": [0.1, 0.2]})
    with pytest.raises(tablegen.TablegenInputError, match="NaN"):
        tablegen.evaluate([1, 0, 1], {"a": [0.1, np.nan, 0.3]})
    with pytest.raises(tablegen.TablegenInputError, match="scores of 'a' must be numbers"):
        tablegen.evaluate([1, 0, 1], {"a": ["x", "y", "z"]})
    with pytest.raises(tablegen.TablegenInputError, match="say which is positive"):
        tablegen.evaluate(["cat", "dog", "cat"], {"a": [0.1, 0.2, 0.3]})
    with pytest.raises(tablegen.TablegenInputError, match="C = 1 is less than the 2 models"):
        tablegen.evaluate([1, 0, 1, 0], {"a": [1, 2, 3, 4], "b": [4, 3, 2, 1]}, C=1)


@pytest.fixture(scope="module")
def degenerate():
    """Once: a constant model (and 0/1 predictions below the majority's accuracy) got [NaN, NaN]."""
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(30), np.zeros(50)]
    good = y + rng.normal(size=80)
    models = {"good": good, "constant": np.full(80, 0.3), "predictions": (good > 0.5).astype(float)}
    return y, tablegen.evaluate(y, models, metrics=["auc", "best_accuracy", "best_f1"])


def test_a_constant_model_s_interval_is_its_single_value_with_a_note(degenerate):
    y, report = degenerate
    for metric in ("auc", "best_accuracy", "best_f1"):
        value = report[metric].values["constant"]
        assert report[metric].intervals["constant"] == (value, value)
        assert ("the scores of 'constant' do not vary within a class, so every bootstrap resample"
                in report[metric].sentence())
    # what every resample gives: the metric of the only data a resample can hold (P and N kept)
    assert (report["auc"].values["constant"], report["best_accuracy"].values["constant"]) == (0.5, 50 / 80)
    assert report["best_f1"].values["constant"] == pytest.approx(2 * 30 / (2 * 30 + 50))


def test_an_interval_bca_cannot_give_is_none_with_the_reason_never_nan(degenerate):
    from tablegen.compare.pairwise.bootstrap import bootstrap_interval

    y, report = degenerate
    preds = report.scores["predictions"]
    assert np.isnan(bootstrap_interval(y, preds, metric="best_accuracy")).all()  # the case: BCa has no answer
    assert report["best_accuracy"].intervals["predictions"] is None
    assert ("no bootstrap interval for the best_accuracy of 'predictions': the resamples' law is degenerate"
            in report["best_accuracy"].sentence())
    for metric_report in report:
        for interval in metric_report.intervals.values():
            assert interval is None or not np.isnan(interval).any()
    strict = json.dumps(report["best_accuracy"].to_dict()["intervals"], allow_nan=False)  # null, not NaN
    assert json.loads(strict)["predictions"] is None
    row = next(r for r in report.rows() if (r["metric"], r["model"]) == ("best_accuracy", "predictions"))
    assert (row["95% CI low"], row["95% CI high"]) == (None, None)
    assert "| best_accuracy | predictions | 0.625 | – | – |" in report.to_markdown()


def test_one_number_format_across_sentence_text_markdown_and_latex():
    """Once: to_latex() printed 9.999e-05 where the sentence said 0.0001 (max-T p = 1/(R + 1), R = 10,000)."""
    from tablegen.cli.evaluate import format_report

    rng = np.random.default_rng(5)
    y = np.r_[np.ones(40), np.zeros(40)]
    report = tablegen.evaluate(y, {"good": 3 * y + rng.normal(size=80), "noise": rng.normal(size=80)},
                               metrics=["auc"], R=10_000)
    p = report["auc"].versus_models.adjusted_p_values["good"]
    assert p == 1 / 10_001 and f"{p:.4g}" == "9.999e-05"
    assert "max-T p = 0.0001 " in report.sentence()
    assert "auc & good & 0.9875 & 0.9169 & 0.9994 & yes & 0.0001 & -- & yes" in report.to_latex()
    assert "| auc | good | 0.9875 | 0.9169 | 0.9994 | yes | 0.0001 | – | yes |" in report.to_markdown()
    good = next(line for line in format_report(report).splitlines() if line.startswith("auc") and "good" in line)
    assert good.split()[2:5] == ["0.9875", "yes", "0.0001"]
    assert "9.999e-05" not in report.to_latex() + report.to_markdown() + format_report(report)


def test_the_across_datasets_tables_print_p_as_its_sentence_does():
    from tablegen.compare import across_datasets
    from tablegen.compare.datasets.report import comparison_table, pair_rows

    rng = np.random.default_rng(3)
    X = np.c_[rng.uniform(0.8, 0.9, 12), rng.uniform(0.78, 0.88, 12), rng.uniform(0.5, 0.6, 12)]
    result = across_datasets(X)
    rows = pair_rows(result)
    for c, row in zip(result.pairwise, rows):
        assert (row["p"], row["Holm p"]) == (f"{c.p_value:.3g}", f"{c.adjusted_p_value:.3g}")
    detail = result.sentence()
    assert all(f"adjusted p = {c.adjusted_p_value:.3g}" in detail for c in result.pairwise if c.significant)
    # the old table format (3 decimals above 0.01, 1.00e-04 below 1e-3) differed from the sentences' here:
    assert any(f"{c.adjusted_p_value:.3f}" != f"{c.adjusted_p_value:.3g}" for c in result.pairwise)
    for form in ("markdown", "latex", "text"):
        assert all(f"{c.adjusted_p_value:.3g}" in comparison_table(result, format=form) for c in result.pairwise)


def test_the_paired_tests_test_the_metric_of_the_verdict_even_for_predictions():
    """0/1 predictions where the AUC winner (A: balanced) is not the accuracy winner (B: conservative): the
    report's paired tests of AUC test AUC (DeLong), from the AUC winner, and never say the winner beats itself;
    those of best accuracy test best accuracy (swap permutation)."""
    y = np.r_[np.ones(20, int), np.zeros(80, int)]
    a = np.r_[np.ones(18), np.zeros(2), np.ones(25), np.zeros(55)]
    b = np.r_[np.ones(8), np.zeros(12), np.ones(2), np.zeros(78)]
    report = tablegen.evaluate(y, {"A": a, "B": b}, C=2, metrics=["auc", "best_accuracy"])
    for metric, winner, methods in (("auc", "A", {"delong"}), ("best_accuracy", "B", {"sequential permutation",
                                                                                     "bound"})):
        others = report[metric].versus_others
        assert report[metric].winner == others.winner == winner
        assert others.metric == metric and {t.method for t in others.tests.values()} <= methods
        assert all(first == winner != second for first, second in others.tests)
        assert f"{winner} beats {winner}" not in report[metric].sentence()


def test_a_count_at_a_cut_off_gets_a_note_instead_of_paired_tests():
    rng = np.random.default_rng(3)
    y = np.r_[np.ones(20, int), np.zeros(80, int)]
    report = tablegen.evaluate(y, {"A": y + rng.normal(size=100), "B": 0.5 * y + rng.normal(size=100)}, C=2,
                               metrics=["precision_at_10"])["precision_at_10"]
    assert report.versus_others is None
    assert any("no paired test between the models on precision_at_10" in note for note in report.notes)


def test_each_pair_s_swap_patterns_are_scored_once_for_every_metric_the_same_p_values(monkeypatch):
    """Four metrics tested by the swap permutation, winners a (best accuracy, AP) and b (best F1, best balanced
    accuracy): 3 sampling runs where one per (metric, pair) made 8, each test's p-value the one pairwise_tests
    gives alone (the pair (a, b) of one metric is (b, a) of another: its counts with greater and less exchanged)."""
    import tablegen.compare.pairwise.tests as tests

    metrics = ["best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision"]
    rng = np.random.default_rng(4)
    y = np.r_[np.ones(15, int), np.zeros(25, int)]
    models = {"a": y + rng.normal(size=40), "b": y + rng.normal(size=40), "c": 0.5 * y + rng.normal(size=40)}
    passes = []
    kernel = tests.swap_counts

    def counted(*args, **kwargs):
        passes.append(list(args[3]))
        return kernel(*args, **kwargs)

    monkeypatch.setattr(tests, "swap_counts", counted)
    report = tablegen.evaluate(y, models, C=3, metrics=metrics)
    assert [report[m].winner for m in metrics] == ["a", "b", "b", "a"]
    assert len(passes) == 3 and sorted(map(len, passes)) == [2, 2, 4]
    for metric in metrics:
        alone = tablegen.compare.pairwise_tests(y, models, metric=metric, method="permutation")
        others = report[metric].versus_others
        assert {k: (t.p_value, t.p_interval, t.replicates) for k, t in others.tests.items()} == \
            {k: (t.p_value, t.p_interval, t.replicates) for k, t in alone.tests.items()}
        assert others.adjusted_p_values == alone.adjusted_p_values and others.best_set == alone.best_set
