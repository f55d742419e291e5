"""The max-T test of several metrics from one set of label arrangements (``selection_tests``).

Each arrangement is scored for every metric at once (each model walked once: the cut-offs where TP grew, then a
short loop per metric).  Checked here: the counts equal those of the one-metric kernel of the previous release
(``tests/data/selection_counts``, recorded from commit 5f9b0d4), bit for bit; the cut-off walk gives the sorted
walk's float for every metric (itself checked against the registry's scorers in ``test_selection.py``); every
metric's answer from one fused call equals :func:`selection_test`'s for that metric alone; the report runs one
pass; and the CUDA twin gives the CPU's counts under numba-cuda's simulator (a child process, this file its
script: ``python tests/compare/test_selection_fused.py OUT.npz``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tablegen.compare.selection import engine
from tablegen.compare.selection.maxt import selection_test, selection_tests, selection_tests_noting
from tablegen.compute.kernels.permutation import score_model
from tablegen.compute.kernels.ranking import mcc_weights
from tablegen.errors import TablegenInputError

HERE = Path(__file__).resolve()
DATA = HERE.parents[1] / "data" / "selection_counts"
METRICS = ["auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision", "best_mcc", "tp_at_3",
           "precision_at_4"]


def _reference_module():
    spec = importlib.util.spec_from_file_location("selection_counts_reference", DATA / "make_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _digest(counts) -> dict:
    return {"maxima_sha256": hashlib.sha256(np.ascontiguousarray(counts.maxima).tobytes()).hexdigest(),
            "raw_hits": counts.raw_hits.tolist(), "step_hits": counts.step_hits.tolist(),
            "arrangements": int(counts.arrangements)}


def test_one_metric_and_fused_passes_count_as_the_previous_kernel_bit_for_bit():
    reference = _reference_module()
    expected = json.loads((DATA / "expected.json").read_text())
    one = reference.reference(engine, mcc_weights)  # today's one-metric pass, the same cases
    assert one == expected
    for index, (n, P, K, R, _) in enumerate(reference.CASES):  # every column of a case in one pass
        scores, P, ranked = reference.case_inputs(index)
        columns = reference.columns(n)
        plans = [engine.MetricPlan(column, k_cut, np.arange(K), reference.thresholds(K, P, column), ranked)
                 for column, k_cut in columns]
        fused = engine.null_counts_all(engine.models_sorted(scores), P, plans, mcc_weights(P, n - P, n + 1),
                                       exact=R == 0, R=R, key=(np.uint64(n), np.uint64(index)))
        for (column, k_cut), counts in zip(columns, fused):
            assert _digest(counts) == expected[f"{index}/{column}/{k_cut}"], (index, column, k_cut)
    assert len(expected) == 9 * len(reference.CASES)


def test_the_cutoff_walk_gives_the_sorted_walks_float_for_every_metric():
    """One walk per model keeps the cut-offs where TP grew; each metric's value from them is the float of the
    metric's own walk over every item (:func:`score_model`), ties and no ties, every k of TP at k."""
    from tablegen.compute.kernels.permutation import _score_models, f1_reciprocals

    rng = np.random.default_rng(11)
    checked = 0
    for trial in range(150):
        n = int(rng.integers(2, 60))
        P = int(rng.integers(1, n))
        labels = np.zeros(n, np.uint8)
        labels[rng.choice(n, P, replace=False)] = 1
        scores = rng.normal(size=(3, n))
        if trial % 3:
            scores = np.round(scores, int(rng.integers(0, 2)))  # ties, some heavy
        s = engine.models_sorted(scores)
        columns = np.array([0, 1, 2, 3, 4, 5, 6, 6, 6, 6], np.int64)
        k_cuts = np.array([0, 0, 0, 0, 0, 0, 1, int(rng.integers(1, n + 1)), n, n + 2], np.int64)
        weights = mcc_weights(P, n - P, n + 1)
        values = np.empty((columns.size, 3))
        _score_models(labels, s.orders, s.group_ends, s.double_ranks, s.untied, P, columns, k_cuts, weights, values,
                      np.empty(n, np.int64), np.empty(n, np.int64), f1_reciprocals(P, n))
        for m in range(3):
            for t in range(columns.size):
                walk = score_model(labels, s.orders[m], s.group_ends[m], P, columns[t], k_cuts[t], weights)
                assert np.array_equal(values[t, m], walk, equal_nan=True), (trial, m, columns[t], k_cuts[t])
                checked += 1
    assert checked == 150 * 30


def test_best_f1_from_approximate_quotients_is_the_largest_correctly_rounded_quotient():
    """Best F1's cut-off is found by 2 TP * fl(1 / (P + k)) and one division: the same float as the largest of the
    divisions, on cut-offs built to hold equal and nearly equal fractions (2 TP / (P + k) within 1 / (P + k)^2 of
    each other), up to 10^6 items, every remainder of the four interleaved maxima; and the division loop past
    F1_ARGMAX_ITEMS."""
    from tablegen.compute.kernels.permutation import F1_ARGMAX_ITEMS, cutoff_value, f1_reciprocals

    rng = np.random.default_rng(5)
    for trial in range(300):
        n = int(10 ** rng.uniform(1, 6))
        P = int(rng.integers(1, n))
        count = int(rng.integers(1, min(P, 40) + 1))
        k = np.sort(rng.choice(np.arange(1, n + 1), count, replace=False))
        target = rng.uniform(0.05, 1.0)  # TP near target (P + k) / 2: the fractions crowd round the target
        tp = np.minimum(np.maximum(np.round(target * (P + k) / 2), 1), np.minimum(k, P)).astype(np.int64)
        tp = np.maximum.accumulate(tp)
        keep = np.r_[True, tp[1:] > tp[:-1]]  # kept cut-offs: TP grew
        tp, k = tp[keep], k[keep]
        if trial % 5 == 0 and k.size >= 2 and 2 * (2 * tp[0]) <= P + n:  # an equal fraction at a doubled cut-off
            tp, k = np.r_[tp[:1], 2 * tp[:1]], np.r_[k[:1], P + 2 * k[0]]
            if k[1] > n or tp[1] > min(P, k[1]):
                continue
        division = max([0.0] + [(2 * int(a)) / (P + int(b)) for a, b in zip(tp, k)])
        value = cutoff_value(2, tp, k, tp.size, n, P, 0, np.ones(n + 1, np.uint8), np.zeros(n + 2),
                             f1_reciprocals(P, n))
        assert value == division, (trial, n, P)
    big = F1_ARGMAX_ITEMS + 1
    assert cutoff_value(2, np.array([3, 5]), np.array([4, 9]), 2, big, 10, 0, np.ones(10, np.uint8), np.zeros(1),
                        np.zeros(1)) == max(6 / 14, 10 / 19)


def _models(n=30, P=12, K=4, decimals=1, seed=3):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(P, int), np.zeros(n - P, int)]
    return y, {f"m{i}": np.round(y * (0.3 + 0.2 * i) + rng.normal(size=n), decimals) for i in range(K)}


@pytest.mark.parametrize("n, P, C, R", [(30, 12, None, 700), (30, 12, 9, 500), (14, 6, None, None),
                                        (14, 6, 7, None)])
def test_every_metric_from_one_pass_answers_as_its_own_test(n, P, C, R):
    """Permutation (R) and exact (every arrangement), with and without models not given: each metric's answer from
    one fused call is :func:`selection_test`'s for it alone, to the last bit (its JSON-ready fields by repr)."""
    y, models = _models(n, P)
    models["flat"] = np.round(models["m0"], 0)  # heavy ties: tp_at_3 and precision_at_4 leave it out
    names = [m for m in METRICS if C is None or m != "average_precision"]  # AP's law for C > K: slow
    together = selection_tests(y, models, metrics=names, C=C, R=R, seed=17, alpha=0.1)
    assert list(together) == names
    assert together["tp_at_3"].not_applicable or together["precision_at_4"].not_applicable
    for name in names:
        alone = selection_test(y, models, metric=name, C=C, R=R, seed=17, alpha=0.1)
        assert repr(together[name].to_dict()) == repr(alone.to_dict()), name
        assert together[name].method == ("exact" if R is None else "permutation")


def test_a_metric_named_twice_is_answered_once_and_bad_metrics_are_refused_naming_them():
    y, models = _models()
    assert list(selection_tests(y, models, metrics=["auc", "best_f1", "auc"], R=200)) == ["auc", "best_f1"]
    assert list(selection_tests(y, models, metrics="auc", R=200)) == ["auc"]
    with pytest.raises(TablegenInputError, match="metrics"):
        selection_tests(y, models, metrics=[], R=200)
    with pytest.raises(TablegenInputError, match="metrics"):
        selection_tests(y, models, metrics=["auc", "bogus"], R=200)


def test_a_refused_metric_is_noted_and_the_others_answered_from_the_pass(monkeypatch):
    """The law of the models not given over the time limit (average precision's bracket here) refuses that metric
    alone: ``selection_tests_noting`` answers the others, ``selection_tests`` raises before any arrangement."""
    from tablegen.compare.selection import maxt
    from tablegen.errors import ResourceLimitError

    rng = np.random.default_rng(1)
    y = np.r_[np.ones(600, int), np.zeros(1400, int)]
    models = {f"m{i}": y + rng.normal(size=y.size) for i in range(3)}
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1")  # AP's bracket at (600, 1400): minutes
    answered, refused = selection_tests_noting(y, models, metrics=["average_precision", "best_accuracy"], C=10,
                                               R=300)
    assert list(answered) == ["best_accuracy"] and isinstance(refused["average_precision"], ResourceLimitError)
    assert repr(answered["best_accuracy"].to_dict()) == repr(
        selection_test(y, models, metric="best_accuracy", C=10, R=300).to_dict())
    passes = []
    monkeypatch.setattr(maxt, "null_counts_all", lambda *args, **kwargs: passes.append(1))
    with pytest.raises(ResourceLimitError, match="not given"):
        selection_tests(y, models, metrics=["best_accuracy", "average_precision"], C=10, R=300)
    assert passes == []


def test_a_metric_defined_for_no_model_is_noted_and_the_others_answered():
    y, models = _models()
    flat = {name: np.round(s, 0) * 0 + np.arange(y.size) // 10 for name, s in models.items()}  # 3 groups of 10
    answered, refused = selection_tests_noting(y, flat, metrics=["tp_at_3", "auc"], R=200)
    assert list(answered) == ["auc"] and "tp_at_3" in str(refused["tp_at_3"])
    with pytest.raises(TablegenInputError, match="tp_at_3"):
        selection_tests(y, flat, metrics=["auc", "tp_at_3"], R=200)


def test_the_report_scores_its_metrics_in_one_max_t_pass(monkeypatch):
    """The issue's note: "the max-T test runs one permutation pass per metric though the metrics share
    arrangements".  Every default metric's max-T answer now comes from one pass, the same as each alone."""
    import tablegen

    y, models = _models(n=40, P=15, K=3)
    passes = []
    real = engine.null_counts_all

    def counted(*args, **kwargs):
        passes.append([plan.column for plan in args[2]])
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "null_counts_all", counted)
    from tablegen.compare.selection import maxt

    monkeypatch.setattr(maxt, "null_counts_all", counted)
    report = tablegen.evaluate(y, models, R=300, seed=5)
    assert len(passes) == 1 and sorted(passes[0]) == [0, 1, 2, 3, 4]
    for metric in ("auc", "best_f1", "average_precision"):
        alone = selection_test(y, models, metric=metric, R=300, seed=5)
        assert repr(report[metric].versus_models.to_dict()) == repr(alone.to_dict())


# --- the CUDA twin under the simulator --------------------------------------------------------------------------

#: (items, positives, models, replicates, decimals of the scores): ties, and none.
CUDA_CASES = [(14, 5, 3, 40, 1), (23, 9, 4, 24, None)]


def _cuda_counts(device: str) -> dict:
    """Each case's counts for several metrics in one pass, one metric over a subset of the models (TP at k)."""
    results = {}
    for n, P, K, R, decimals in CUDA_CASES:
        rng = np.random.default_rng(n)
        scores = rng.normal(size=(K, n))
        s = engine.models_sorted(scores if decimals is None else np.round(scores, decimals))
        plans = [engine.MetricPlan(column, k_cut, members, np.linspace(0.55, 0.75, members.size) * (P if column == 6
                                                                                                   else 1),
                                   np.arange(members.size)[::-1].copy())
                 for column, k_cut, members in ((0, 0, np.arange(K)), (2, 0, np.arange(K)), (4, 0, np.arange(K)),
                                                (5, 0, np.arange(K)), (1, 0, np.arange(K)), (3, 0, np.arange(K)),
                                                (6, 4, np.arange(1, K)))]
        counts = engine.null_counts_all(s, P, plans, mcc_weights(P, n - P, n + 1), exact=False, R=R,
                                        key=(np.uint64(n), np.uint64(7)), device=device)
        for t, c in enumerate(counts):
            results.update({f"{n}_{t}_maxima": c.maxima, f"{n}_{t}_raw": c.raw_hits, f"{n}_{t}_step": c.step_hits})
    return results


def test_the_cuda_twin_counts_every_metric_as_the_cpu_kernel(tmp_path):
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: the CUDA kernel is NOT tested (pip install -e '.[test]')")
    out = tmp_path / "cuda.npz"
    done = subprocess.run([sys.executable, str(HERE), str(out)], env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"},
                          capture_output=True, text=True, cwd=HERE.parents[2])
    assert done.returncode == 0, done.stderr[-4000:]
    cpu = _cuda_counts("cpu")
    with np.load(out) as sim:
        assert sorted(sim.files) == sorted(cpu)
        for name, values in cpu.items():
            assert sim[name].tobytes() == values.tobytes(), name
    assert len(cpu) == 3 * 7 * len(CUDA_CASES)


if __name__ == "__main__":
    np.savez(sys.argv[1], **_cuda_counts("cuda"))
