"""The K-class report's probability-matrix metrics (Hand–Till AUC, one-vs-rest macro AUC, top-k accuracy) against
independent computations:

- values against scikit-learn's stored record (``tests/data/sklearn_multiclass``: roc_auc_score ovo / ovr macro,
  top_k_accuracy_score);
- each model's verdict against random classifiers: :func:`tablegen.multiclass_scores_test`'s answer, bit for bit;
- the max-T test against brute force: every one of the n! orders of the labels, the metrics from their definitions
  in Fractions (pairs counted one by one, ties 1/2), the Westfall–Young step-down p-values directly;
- the swap permutation against brute force over every swap pattern, in Fractions;
- the bootstrap: each resample's values are the metrics of the resampled rows (the label metrics' draws replayed),
  the jackknife's values the metrics without each item;
- the swap difference as a Rademacher sum of the items' influences against the metrics of the swapped matrices
  (every pattern at tiny n, in Fractions; random patterns with ties), Hoeffding's bound against the exact tails;
- the bound and the sequential rule where they answer;
- the CUDA twins of the report's kernels bit for bit in numba-cuda's simulator (a child process: this file is the
  child's script, ``python tests/compare/test_report_multiclass_probabilities.py OUT.npz``);
- the intervals' coverage by simulation (slow).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import tablegen
from tablegen.compare.report import multiclass_probabilities as probabilities
from tablegen.compare.report.multiclass import evaluate_multiclass
from tablegen.compare.report.multiclass_input import multiclass_data
from tablegen.compute.multiclass_scores import score_metric_values

SCORES = ["hand_till_auc", "ovr_macro_auc", "top_1_accuracy", "top_2_accuracy"]
HERE = Path(__file__).resolve()


def _softmax_models(rng, y, strengths, K):
    models = {}
    for name, strength in strengths.items():
        logits = rng.normal(size=(y.size, K)) + strength * np.eye(K)[y]
        models[name] = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return models


# -- definitions in Fractions ----------------------------------------------------------------------------------
def _pairs(scores_hi, scores_lo) -> Fraction:
    """Pairs (a, b) with a > b counted 1, ties 1/2."""
    total = Fraction(0)
    for a in scores_hi:
        for b in scores_lo:
            total += 1 if a > b else Fraction(1, 2) if a == b else 0
    return total


def _credit(row, c, k) -> Fraction:
    higher = sum(1 for v in row if v > row[c])
    tied = sum(1 for v in row if v == row[c])
    return min(Fraction(1), max(Fraction(0), Fraction(k - higher, tied)))


def _definitions(labels, P, ks=(1, 2)) -> list:
    """[Hand–Till, one-vs-rest macro, top-k for each k] of the rows P (Fractions of the float entries)."""
    K = len(P[0])
    P = [[Fraction(v) for v in row] for row in P]
    by_class = {c: [i for i, y in enumerate(labels) if y == c] for c in range(K)}
    n = len(labels)
    pair_terms = []
    for i, j in itertools.combinations(range(K), 2):
        a_ij = _pairs([P[p][i] for p in by_class[i]], [P[q][i] for q in by_class[j]]) / (len(by_class[i]) *
                                                                                       len(by_class[j]))
        a_ji = _pairs([P[p][j] for p in by_class[j]], [P[q][j] for q in by_class[i]]) / (len(by_class[i]) *
                                                                                       len(by_class[j]))
        pair_terms.append((a_ij + a_ji) / 2)
    hand_till = sum(pair_terms) / len(pair_terms)
    ovr = sum(_pairs([P[p][c] for p in by_class[c]], [P[q][c] for q in range(n) if labels[q] != c])
              / (len(by_class[c]) * (n - len(by_class[c]))) for c in range(K)) / K
    tops = [sum(_credit(P[i], labels[i], k) for i in range(n)) / n for k in ks]
    return [hand_till, ovr, *tops]


# -- values and verdicts ---------------------------------------------------------------------------------------
SKLEARN = json.loads((Path(__file__).parents[1] / "data" / "sklearn_multiclass" / "values.json").read_text())


@pytest.mark.parametrize("case", [c for c in SKLEARN["cases"] if c["name"].startswith("continuous")],
                         ids=lambda case: case["name"])
def test_values_equal_scikit_learns(case):
    """The report's values equal scikit-learn's roc_auc_score (ovo, ovr macro) and top_k_accuracy_score (the stored
    record; continuous scores, where scikit-learn's top-k tie rule does not arise)."""
    P = np.array([[float.fromhex(v) for v in row] for row in case["probabilities"]])
    K = P.shape[1]
    metrics = ["hand_till_auc", "ovr_macro_auc", *(f"top_{k}_accuracy" for k in range(1, K))]
    report = evaluate_multiclass(case["labels"], {"m": P, "m again": P}, metrics=metrics, R=20)
    for model in ("m", "m again"):
        assert report["hand_till_auc"].values[model] == pytest.approx(case["hand_till_auc"], rel=1e-13)
        assert report["ovr_macro_auc"].values[model] == pytest.approx(case["ovr_macro_auc"], rel=1e-13)
        for k, value in case["top_k_accuracy"].items():
            assert report[f"top_{k}_accuracy"].values[model] == pytest.approx(value, rel=1e-13, abs=1e-15)
    others = report["hand_till_auc"].versus_others  # identical models: nothing moves, the swap test says p = 1
    assert others.tests["m", "m again"].p_value == 1.0 and others.best_set == ("m", "m again")


def test_every_answer_is_given_and_the_verdicts_are_multiclass_scores_tests():
    rng = np.random.default_rng(9)
    y = rng.integers(0, 3, size=40)
    models = _softmax_models(rng, y, {"sharp": 3.0, "vague": 0.3, "mid": 1.0}, 3)
    report = tablegen.evaluate(y, models, metrics=["accuracy", *SCORES], R=500)
    for metric in SCORES:
        part = report[metric]
        k = probabilities.top_k_of(metric)
        for model, matrix in models.items():
            alone = tablegen.multiclass_scores_test(y, matrix, "top_k_accuracy" if k else metric, k=k, C=3, R=500)
            assert part.versus_random.tests[model] == alone  # the same null, bit for bit
            low, high = part.intervals[model]
            assert low <= part.values[model] <= high
        assert part.versus_models.method == "permutation" and part.versus_models.R == 500
        assert part.versus_others.winner == part.winner and set(part.versus_others.best_set) <= set(models)
    assert report["hand_till_auc"].winner == "sharp" and "sharp" in report["hand_till_auc"].versus_others.best_set
    json.dumps(report.to_dict(), allow_nan=False)
    frame = report.to_frame()
    assert frame.loc[("hand_till_auc", "vague"), "p vs winner (Holm)"] is not None
    assert "probability rows, one-sided, Holm" in report.sentence()
    again = tablegen.evaluate(y, models, metrics=SCORES, R=500)
    assert again.to_dict()["metrics"] == report.to_dict()["metrics"][1:]  # keyed: the same report


def test_the_pass_is_each_models_own_null_bit_for_bit():
    from tablegen.compute.kernels import multiclass_scores as kernels
    from tablegen.compute.multiclass_scores import score_tables

    rng = np.random.default_rng(4)
    y = np.r_[0, 1, 2, 3, rng.integers(0, 4, 36)]
    models = _softmax_models(rng, y, {"a": 1.0, "b": 0.0, "c": 2.0}, 4)
    models["b"] = np.round(models["b"], 1) / np.round(models["b"], 1).sum(axis=1, keepdims=True)  # ties
    sp = probabilities.prepare_scores(multiclass_data(y, models), ("hand_till_auc", "top_2_accuracy"))
    null = probabilities.score_null(sp, 300, 77)
    key = kernels.multiclass_scores_key(77, y.size, 4)
    for m, matrix in enumerate(models.values()):
        alone = np.empty((300, 3))
        kernels.multiclass_score_permutations(sp.true_codes, *score_tables(matrix, 2), sp.true_counts, True, *key, 0,
                                              alone)
        assert null.values[:, m, :3].tobytes() == alone.tobytes()


# -- brute force -----------------------------------------------------------------------------------------------
TINY_LABELS = [0, 0, 1, 1, 1, 2, 2]
TINY = {
    "a": [[0.7, 0.2, 0.1], [0.5, 0.3, 0.2], [0.2, 0.6, 0.2], [0.3, 0.4, 0.3], [0.4, 0.4, 0.2], [0.1, 0.2, 0.7],
          [0.2, 0.3, 0.5]],
    "b": [[0.4, 0.4, 0.2], [0.2, 0.5, 0.3], [0.3, 0.5, 0.2], [0.2, 0.2, 0.6], [0.6, 0.2, 0.2], [0.3, 0.3, 0.4],
          [0.1, 0.1, 0.8]],
    "c": [[0.2, 0.5, 0.3], [0.6, 0.2, 0.2], [0.3, 0.3, 0.4], [0.5, 0.4, 0.1], [0.2, 0.2, 0.6], [0.4, 0.5, 0.1],
          [0.3, 0.2, 0.5]],
}


def _step_down(observed, null_rows, names):
    order = sorted(range(len(names)), key=lambda m: (-observed[m], m))
    adjusted, running = {}, Fraction(0)
    for j, m in enumerate(order):
        share = Fraction(sum(1 for row in null_rows if max(row[r] for r in order[j:]) >= observed[m]), len(null_rows))
        running = max(running, share)
        adjusted[names[m]] = running
    return adjusted


@pytest.fixture(scope="module")
def tiny_brute_force():
    names = list(TINY)
    rows = []
    for order in itertools.permutations(range(len(TINY_LABELS))):
        shuffled = [TINY_LABELS[i] for i in order]
        rows.append([_definitions(shuffled, TINY[m]) for m in names])
    observed = [_definitions(TINY_LABELS, TINY[m]) for m in names]
    report = evaluate_multiclass(TINY_LABELS, {m: np.array(p) for m, p in TINY.items()}, metrics=SCORES, C=5)
    return names, rows, observed, report


@pytest.mark.parametrize("metric", SCORES)
def test_max_t_and_verdicts_against_every_order(tiny_brute_force, metric):
    names, rows, observed, report = tiny_brute_force
    column = SCORES.index(metric)
    null_rows = [[row[m][column] for m in range(len(names))] for row in rows]
    x = [observed[m][column] for m in range(len(names))]
    part = report[metric]
    for m, name in enumerate(names):
        assert part.values[name] == pytest.approx(float(x[m]), rel=1e-14)
    expected = _step_down(x, null_rows, names)
    selection = part.versus_models
    assert selection.method == "exact" and selection.arrangements == 210
    for m, name in enumerate(names):
        assert selection.adjusted_p_values[name] == pytest.approx(float(expected[name]), abs=1e-12)
        tail = Fraction(sum(1 for row in null_rows if row[m] >= x[m]), len(null_rows))
        assert selection.raw_p_values[name] == pytest.approx(float(tail), abs=1e-12)
        test = part.versus_random.tests[name]
        assert test.method == "exact" and test.arrangements == 210
        assert test.p_value == pytest.approx(float(1 - (1 - tail) ** 5), rel=1e-12)


@pytest.mark.parametrize("metric", SCORES)
def test_swap_test_against_every_pattern(tiny_brute_force, metric):
    names, _, observed, report = tiny_brute_force
    column = SCORES.index(metric)
    part = report[metric]
    winner = part.winner
    w = names.index(winner)
    for name in names:
        if name == winner:
            continue
        d_observed = observed[w][column] - observed[names.index(name)][column]
        reaching = 0
        for pattern in itertools.product((0, 1), repeat=len(TINY_LABELS)):
            a = [TINY[name][i] if s else TINY[winner][i] for i, s in enumerate(pattern)]
            b = [TINY[winner][i] if s else TINY[name][i] for i, s in enumerate(pattern)]
            reaching += _definitions(TINY_LABELS, a)[column] - _definitions(TINY_LABELS, b)[column] >= d_observed
        test = part.versus_others.tests[winner, name]
        assert test.method == "permutation" and test.replicates is None
        assert test.p_value == pytest.approx(reaching / 2 ** len(TINY_LABELS), abs=1e-12)


# -- bootstrap -------------------------------------------------------------------------------------------------
def _resample_items(order, starts, key, r):
    """Resample r's items, the draws of the label bootstrap replayed (the kernels' stream functions called one by
    one)."""
    from tablegen.compute.kernels.ranking import draw_below
    from tablegen.compute.kernels.rng import replicate_state

    state = [np.uint64(s) for s in replicate_state(*key, np.uint64(r))]
    items = []
    for k in range(starts.size - 1):
        size = int(starts[k + 1] - starts[k])
        for _ in range(size):
            j, *state = draw_below(np.uint64(size), *state)
            state = [np.uint64(s) for s in state]
            items.append(int(order[starts[k] + int(j)]))
    return np.array(items)


def test_each_resample_is_the_metrics_of_the_resampled_rows_and_of_the_label_bootstrap():
    from tablegen.compare.report import multiclass_resampling, multiclass_tests
    from tablegen.compute.kernels.multiclass_resample import BOOTSTRAP_TAG, resample_key

    rng = np.random.default_rng(12)
    y = np.r_[0, 1, 2, rng.integers(0, 3, 27)]
    models = _softmax_models(rng, y, {"a": 1.5, "b": 0.5}, 3)
    models["b"] = np.round(models["b"], 1) / np.round(models["b"], 1).sum(axis=1, keepdims=True)
    data = multiclass_data(y, models)
    sp = probabilities.prepare_scores(data, tuple(SCORES))
    boot = probabilities.score_bootstrap(sp, probabilities.observed_scores(sp), 40, 5)
    prep = multiclass_tests.prepare(data)
    labels_boot = multiclass_resampling.bootstrap(prep, multiclass_tests.observed_values(prep), 40, 5)
    order = np.argsort(sp.true_codes, kind="stable")
    starts = np.r_[0, np.cumsum(sp.true_counts)]
    key = resample_key(5, y.size, 3, BOOTSTRAP_TAG)
    for r in (0, 7, 39):
        items = _resample_items(order, starts, key, r)
        for m, matrix in enumerate(models.values()):
            for k in (1, 2):
                values = score_metric_values(y[items], matrix[items], k=k)
                assert boot.values[r, m, 0] == pytest.approx(values["hand_till_auc"], rel=1e-12)
                assert boot.values[r, m, 1] == pytest.approx(values["ovr_macro_auc"], rel=1e-12)
                assert boot.values[r, m, 1 + k] == pytest.approx(values["top_k_accuracy"], rel=1e-12)
            accuracy = np.mean(matrix[items].argmax(axis=1) == y[items])
            assert labels_boot.values[r, m, 0] == pytest.approx(accuracy, rel=1e-12)  # the same resample


def test_the_jackknife_leaves_each_item_out():
    rng = np.random.default_rng(13)
    y = np.r_[0, 1, 2, 2, rng.integers(0, 3, 14)]
    models = _softmax_models(rng, y, {"a": 1.0}, 3)
    models["a"] = np.round(models["a"], 1) / np.round(models["a"], 1).sum(axis=1, keepdims=True)  # ties
    sp = probabilities.prepare_scores(multiclass_data(y, models), tuple(SCORES))
    boot = probabilities.score_bootstrap(sp, probabilities.observed_scores(sp), 10, 1)
    for q in range(y.size):
        keep = np.arange(y.size) != q
        for k in (1, 2):
            values = score_metric_values(y[keep], models["a"][keep], k=k)
            assert boot.left_out[0, q, 1 + k] == pytest.approx(values["top_k_accuracy"], rel=1e-12)
        if np.count_nonzero(y == y[q]) > 1:
            values = score_metric_values(y[keep], models["a"][keep], metrics=["hand_till_auc", "ovr_macro_auc"])
            assert boot.left_out[0, q, 0] == pytest.approx(values["hand_till_auc"], rel=1e-12)
            assert boot.left_out[0, q, 1] == pytest.approx(values["ovr_macro_auc"], rel=1e-12)
        else:  # the class's only item: its AUCs are undefined
            assert np.isnan(boot.left_out[0, q, :2]).all()


# -- the swap difference as a Rademacher sum, the bound, the sequential rule ------------------------------------
def _swapped(A, B, flags):
    return np.where(flags[:, None], B, A), np.where(flags[:, None], A, B)


def test_every_patterns_difference_is_the_metrics_of_the_swapped_matrices():
    """D = sum_i sigma_i L_i equals metric(A') - metric(B') recomputed from the definitions (Fractions) for every one
    of the 2^7 patterns of the tiny case, and from score_metric_values for random patterns of a larger case with
    ties."""
    from tablegen.compute.kernels.multiclass_scores import linear_swap_differences

    key = (np.uint64(3), np.uint64(4))
    A, B = np.array(TINY["a"]), np.array(TINY["b"])
    sp = probabilities.prepare_scores(multiclass_data(TINY_LABELS, {"a": A, "b": B}), tuple(SCORES))
    influences = probabilities.swap_influences(sp, 0, 1)
    out = np.empty((1 << 7, 4))
    linear_swap_differences(influences, *key, 0, True, out)
    for pattern in range(1 << 7):
        flags = np.array([(pattern >> i) & 1 for i in range(7)], bool)
        a, b = _swapped(A, B, flags)
        expected = [x - z for x, z in zip(_definitions(TINY_LABELS, a.tolist()), _definitions(TINY_LABELS, b.tolist()))]
        assert out[pattern] == pytest.approx([float(e) for e in expected], abs=1e-13), pattern
    rng = np.random.default_rng(17)
    y = np.r_[0, 1, 2, 3, rng.integers(0, 4, 56)]
    models = _softmax_models(rng, y, {"a": 1.0, "b": 0.7}, 4)
    models = {m: np.round(P, 1) / np.round(P, 1).sum(axis=1, keepdims=True) for m, P in models.items()}  # ties
    sp = probabilities.prepare_scores(multiclass_data(y, models), tuple(SCORES))
    moving = np.any(models["a"] != models["b"], axis=1)
    influences = probabilities.swap_influences(sp, 0, 1)
    assert np.all(influences[~moving] == 0)
    out = np.empty((30, 4))
    linear_swap_differences(np.ascontiguousarray(influences[moving]), *key, 0, False, out)
    for r in range(30):  # replay pattern r's flags: the bits of its stream, low bit first
        from tablegen.compute.kernels.rng import replicate_state, xoshiro_next

        state = [np.uint64(v) for v in replicate_state(*key, np.uint64(r))]
        bits = []
        while len(bits) < moving.sum():
            word, *state = xoshiro_next(*state)
            state = [np.uint64(v) for v in state]
            bits += [(int(word) >> t) & 1 for t in range(64)]
        flags = np.zeros(y.size, bool)
        flags[moving] = np.array(bits[:int(moving.sum())], bool)
        a, b = _swapped(models["a"], models["b"], flags)
        for column, k in ((0, None), (1, None), (2, 1), (3, 2)):
            name = SCORES[column] if k is None else "top_k_accuracy"
            d = score_metric_values(y, a, [name], k=k)[name] - score_metric_values(y, b, [name], k=k)[name]
            assert out[r, column] == pytest.approx(d, abs=1e-12)


def test_the_bound_holds_over_every_pattern():
    """Hoeffding's bound is at least the exact tail over all 2^n patterns at every threshold (the tiny case)."""
    from tablegen.compute.kernels.multiclass_scores import linear_swap_differences

    sp = probabilities.prepare_scores(multiclass_data(TINY_LABELS, {m: np.array(p) for m, p in TINY.items()}),
                                      tuple(SCORES))
    for a, b in ((0, 1), (0, 2), (2, 1)):
        influences = probabilities.swap_influences(sp, a, b)
        out = np.empty((1 << 7, 4))
        linear_swap_differences(influences, np.uint64(1), np.uint64(1), 0, True, out)
        for column in range(4):
            for t in np.unique(out[:, column]):
                exact = np.mean(out[:, column] >= t - 1e-9)
                assert probabilities.swap_bound(influences[:, column], float(t)) >= exact


def test_a_clear_winner_is_settled_by_the_bound_and_a_close_pair_stops_early():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, size=3000)
    models = _softmax_models(rng, y, {"sharp": 4.0, "noise": 0.0}, 3)
    twin = models["sharp"] + rng.normal(scale=1e-3, size=models["sharp"].shape) ** 2
    models["twin"] = twin / twin.sum(axis=1, keepdims=True)
    part = tablegen.evaluate(y, models, metrics=["ovr_macro_auc"], R=2000)["ovr_macro_auc"]
    bound = part.versus_others.tests[part.winner, "noise"]
    assert bound.method == "bound" and bound.p_value < 1 / 2001 and bound.replicates is None
    close = part.versus_others.tests[part.winner, "twin" if part.winner == "sharp" else "sharp"]
    assert close.method == "sequential permutation" and close.hits == 20 and close.replicates < 2000
    assert close.p_value >= 20 / close.replicates  # Besag–Clifford's h / l, plus the bound's price
    assert f"{part.versus_others.adjusted_p_values[part.winner, 'noise']:.3g}".startswith("<= ")


# -- coverage ------------------------------------------------------------------------------------------------
SETS, PER_CLASS, SHIFT = 300, 30, 1.0


def _population_truth(rng) -> float:
    """The population Hand–Till AUC of softmax(N(SHIFT e_y, I)) rows, from 60,000 items a class (standard error
    about 0.002, far below the intervals' width)."""
    from scipy.stats import mannwhitneyu

    draws = {c: _rows(rng, c, 60_000) for c in range(3)}
    terms = []
    for i, j in itertools.combinations(range(3), 2):
        u_ij = mannwhitneyu(draws[i][:, i], draws[j][:, i]).statistic / 60_000 ** 2
        u_ji = mannwhitneyu(draws[j][:, j], draws[i][:, j]).statistic / 60_000 ** 2
        terms.append((u_ij + u_ji) / 2)
    return float(np.mean(terms))


def _rows(rng, c, size):
    logits = rng.normal(size=(size, 3)) + SHIFT * np.eye(3)[c]
    return np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)


@pytest.mark.slow
def test_bca_interval_of_hand_till_covers_the_population_value_at_its_level():
    """300 simulated test sets of 30 items a class, rows softmax(N(e_y, I)); the 95% BCa interval (2,000 stratified
    resamples, mean width 0.139) of the Hand–Till AUC covers the population value 0.8137 (estimated from 180,000
    items) in 280 of 300 (0.933, Clopper–Pearson 95% interval 0.899 to 0.959): the nominal level inside."""
    from scipy.stats import binomtest

    from tablegen.compare.pairwise.bootstrap import BOOTSTRAP_RESAMPLES

    rng = np.random.default_rng(2041)
    truth = _population_truth(rng)
    y = np.repeat(np.arange(3), PER_CLASS)
    covered = 0
    for d in range(SETS):
        P = np.concatenate([_rows(rng, c, PER_CLASS) for c in range(3)])
        sp = probabilities.prepare_scores(multiclass_data(y, {"m": P}), ("hand_till_auc",))
        boot = probabilities.score_bootstrap(sp, probabilities.observed_scores(sp), BOOTSTRAP_RESAMPLES, d)
        low, high = boot.interval(0, 0)
        covered += low <= truth <= high
    ci = binomtest(int(covered), SETS).proportion_ci(0.99, "exact")
    assert covered == 280  # the figure the docstring and the how-to quote (a change of stream or arithmetic shows)
    assert ci.low <= 0.95 <= ci.high, (covered, ci)


# -- CUDA twins ----------------------------------------------------------------------------------------------
def _kernel_rows(device: str) -> dict:
    """The report's three sampled kernels on a small case with ties (three models, two k), on ``device``."""
    from tablegen.compute.kernels.cuda.device import twin
    from tablegen.compute.kernels.multiclass_resample import BOOTSTRAP_TAG, resample_key

    rng = np.random.default_rng(8)
    y = np.r_[0, 1, 2, rng.integers(0, 3, 27)]
    models = _softmax_models(rng, y, {"a": 1.5, "b": 0.5, "c": 1.0}, 3)
    models["b"] = np.round(models["b"], 1) / np.round(models["b"], 1).sum(axis=1, keepdims=True)
    sp = probabilities.prepare_scores(multiclass_data(y, models), tuple(SCORES))
    from tablegen.compute.kernels import multiclass_scores as kernels

    tables = (sp.double_ranks, sp.orders, sp.group_last, sp.credit, sp.true_counts, True)
    outs = {"permutations": np.empty((37, 3, 4)), "resamples": np.empty((29, 3, 4)), "swaps_random": np.empty((33, 4)),
            "swaps_exact": np.empty((16, 4))}
    twin(kernels.model_score_permutations, device)(sp.true_codes, *tables, *kernels.multiclass_scores_key(3, 30, 3),
                                                   5, outs["permutations"])
    order = np.argsort(sp.true_codes, kind="stable")
    starts = np.r_[0, np.cumsum(sp.true_counts)].astype(np.int64)
    twin(kernels.stratified_score_resamples, device)(order, starts, sp.true_codes, sp.labels_along, sp.orders,
                                                     sp.group_last, sp.credit_true, sp.true_counts,
                                                     *resample_key(3, 30, 3, BOOTSTRAP_TAG), 2, outs["resamples"])
    influences = probabilities.swap_influences(sp, 0, 1)
    key = (np.uint64(11), np.uint64(12))
    twin(kernels.linear_swap_differences, device)(influences, *key, 7, False, outs["swaps_random"])
    twin(kernels.linear_swap_differences, device)(influences[:9], *key, 3, True, outs["swaps_exact"])
    return outs


def test_cuda_twins_are_bit_identical_in_the_simulator(tmp_path):
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: the CUDA twins of the report's probability kernels are NOT tested "
                    "(pip install -e '.[test]')")
    out = tmp_path / "sim.npz"
    done = subprocess.run([sys.executable, str(HERE), str(out)], env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"},
                          capture_output=True, text=True, cwd=HERE.parents[2])
    assert done.returncode == 0, done.stderr[-4000:]
    cpu = _kernel_rows("cpu")
    with np.load(out) as sim:
        assert sorted(sim.files) == sorted(cpu)
        for name, values in cpu.items():
            assert sim[name].tobytes() == values.tobytes(), name


# -- the memory guard ---------------------------------------------------------------------------------------------
def _enumerated_case(models: int, counts=(6, 5, 3)):
    """By default 6, 5 and 3 items of three classes: 168,168 arrangements, every one scored by the probability
    metrics' pass (at most 200,000), whatever R; the label metrics' pass (at most 20,000) draws R keyed shuffles."""
    rng = np.random.default_rng(7)
    y = rng.permutation(np.repeat(np.arange(len(counts)), counts))
    return y, _softmax_models(rng, y, {f"m{m}": 0.3 + m / models for m in range(models)}, len(counts))


@pytest.mark.parametrize("counts, models, metrics", [
    ((6, 5, 3), 8, ["hand_till_auc", "top_1_accuracy"]),  # the enumerated pass dominates
    ((3000, 3000, 2000, 2000), 2, ["ovr_macro_auc", "top_3_accuracy"]),  # the models' tables dominate
])
def test_the_memory_estimate_bounds_the_report_s_peak(monkeypatch, counts, models, metrics):
    """Once the estimate counted R rows of the probability metrics' pass where it enumerates 168,168 arrangements
    (and neither the max-T test's copies): 1.1 MB estimated against a tracemalloc peak of 55 MB at 8 models; and
    56 bytes per model, item and class of the tables, where building them takes about 66 more for one model's
    scratch (5.07 MB estimated against a peak of 5.65 MB at 10^4 items and 2 models)."""
    import tracemalloc

    import tablegen.compute.limits as limits

    y, scores = _enumerated_case(models, counts)
    estimates = []
    checked = limits.check_memory
    monkeypatch.setattr(limits, "check_memory", lambda estimate, *rest: (estimates.append(estimate),
                                                                         checked(estimate, *rest))[1])
    evaluate_multiclass(y, scores, metrics=metrics, R=100)  # kernels loaded; numba's own memory is not traced
    tracemalloc.start()
    try:
        evaluate_multiclass(y, scores, metrics=metrics, R=100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak > 4e6  # a case where the estimate's terms matter, not the interpreter's noise
    assert len(estimates) == 2 and peak <= estimates[1] <= 2.5 * peak


def test_a_report_whose_enumerated_pass_is_over_the_memory_limit_is_refused_before_any_work(monkeypatch):
    """20 models, four probability columns: the pass's values alone are 108 MB (168,168 x 20 x 4 doubles); the
    estimate of R = 100 rows was 17 MB, under a limit of 100 MB, and the report ran."""
    y, models = _enumerated_case(20)
    monkeypatch.setenv("TABLEGEN_MEMORY_LIMIT", "100MB")
    started = []
    monkeypatch.setattr(probabilities, "prepare_scores", lambda *args: started.append(args))
    with pytest.raises(tablegen.errors.ResourceLimitError, match="K-class report's permutation pass"):
        evaluate_multiclass(y, models, metrics=["hand_till_auc", "ovr_macro_auc", "top_1_accuracy",
                                                "top_2_accuracy"], R=100)
    assert started == []


if __name__ == "__main__":
    import warnings

    sys.path.insert(0, str(HERE.parents[2]))
    warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)  # numpy uint64 scalars wrap
    np.savez(sys.argv[1], **_kernel_rows("cuda"))
