"""The bootstrap kernels (:mod:`tablegen.compute.kernels.resample`) against the registry's scorers and scipy.

- A resample's weighted pass equals the registry's scorer applied to the explicitly resampled items (every
  metric, tied scores, bit for bit but average precision to 1e-12; NaN exactly where the scorer refuses).
- The jackknife equals the scorer on each leave-one-out sample.
- The interval equals scipy's ``bootstrap`` fed the same resamples: the very draws scipy makes from
  ``default_rng(seed)``, turned into multiplicities, give scipy's interval (bit for bit, average precision to
  1e-12); and scipy's own interval arithmetic on the kernels' values is :func:`interval_from_resamples`'s.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tablegen.compute.kernels.jackknife as leave_one_out
import tablegen.compute.kernels.resample as kernels
from tablegen.compute.kernels.ranking import BASE_COLUMNS, TP_COLUMN
from tablegen.compute.metric_scorers import threshold_groups
from tablegen.compute.metrics import get_metric
from tablegen.errors import TablegenInputError

METRICS = (*BASE_COLUMNS, "tp_at_3", "precision_at_4", "tp_at_50")


def _column(name):
    spec = get_metric(name)
    entry = spec.counted_entry()
    column = TP_COLUMN if entry.k is not None else BASE_COLUMNS.index(entry.kernel_column)
    return spec, column, int(entry.k or 0)


def _scorer(spec, labels, scores, items):
    """The registry's scorer on the items ``items`` (NaN where it refuses, as the old bootstrap statistic did)."""
    try:
        return spec.score_groups(threshold_groups(labels[items], scores[items]))
    except TablegenInputError:
        return float("nan")


def _same(value, reference, name):
    if np.isnan(reference):
        return np.isnan(value)
    if name == "average_precision":  # a sequential sum here, numpy's pairwise sum in the scorer
        return abs(value - reference) <= 1e-12
    return value == reference


@st.composite
def labelled_scores(draw):
    n = draw(st.integers(4, 40))
    labels = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), np.int64)
    labels[:2] = [1, 0]
    levels = draw(st.integers(1, 12))  # few levels: many ties
    scores = np.array(draw(st.lists(st.integers(0, levels), min_size=n, max_size=n)), float) / levels
    if draw(st.booleans()):  # no ties: every item a group end (the kernel's walk without group-end tests)
        scores = scores + np.arange(n) * 1e-3 / n
    return labels, scores


@settings(max_examples=60, deadline=None)
@given(data=labelled_scores(), replicate=st.integers(0, 2**40), name=st.sampled_from(METRICS))
def test_weighted_pass_is_the_scorer_on_the_resampled_items(data, replicate, name):
    labels, scores = data
    spec, column, k_cut = _column(name)
    positives, negatives = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    divisor = spec.count_divisor(positives.size, negatives.size)
    weights = np.zeros((3, labels.size), np.int64)
    key0, key1 = kernels.bootstrap_key(replicate % 1000, positives.size, negatives.size)
    kernels.resample_weights(positives, negatives, key0, key1, replicate, weights)
    orders, ends = kernels.sorted_models(scores)
    values = np.empty((3, 1))
    kernels.weighted_values(orders, ends, labels, weights, column, k_cut, values)
    for row in range(3):
        items = np.repeat(np.arange(labels.size), weights[row])  # the resample, item by item
        assert _same(values[row, 0] / divisor, _scorer(spec, labels, scores, items), name), (row, name)


@settings(max_examples=60, deadline=None)
@given(data=labelled_scores(), name=st.sampled_from(METRICS))
def test_jackknife_is_the_scorer_on_each_leave_one_out_sample(data, name):
    labels, scores = data
    spec, column, k_cut = _column(name)
    if min(labels.sum(), labels.size - labels.sum()) < 2:
        labels[2:4] = [1, 0] if labels.size >= 4 else labels[2:4]
    if min(labels.sum(), labels.size - labels.sum()) < 2:
        return
    orders, ends = kernels.sorted_models(scores)
    left_out = np.empty(labels.size)
    leave_one_out.jackknife_values(orders[0], ends[0], labels, column, k_cut, left_out)
    for i in range(labels.size):
        kept = np.delete(np.arange(labels.size), i)
        P, N = int(labels[kept].sum()), int(kept.size - labels[kept].sum())
        reference = _scorer(spec, labels, scores, kept)
        assert _same(left_out[i] / spec.count_divisor(P, N), reference, name), (i, name)


def test_resamples_keep_each_class_and_do_not_depend_on_blocks():
    rng = np.random.default_rng(2)
    labels = (rng.random(50) < 0.3).astype(np.int64)
    scores = rng.normal(size=(3, 50))
    positives, negatives = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    key = kernels.bootstrap_key(5, positives.size, negatives.size)
    weights = np.zeros((40, 50), np.int64)
    kernels.resample_weights(positives, negatives, *key, 0, weights)
    assert (weights[:, positives].sum(axis=1) == positives.size).all()
    assert (weights[:, negatives].sum(axis=1) == negatives.size).all()
    orders, ends = kernels.sorted_models(scores)
    whole, split, explicit = np.empty((40, 3)), np.empty((40, 3)), np.empty((40, 3))
    kernels.resample_values(orders, ends, labels, positives, negatives, 0, 0, *key, 0, whole)
    kernels.resample_values(orders, ends, labels, positives, negatives, 0, 0, *key, 0, split[:15])
    kernels.resample_values(orders, ends, labels, positives, negatives, 0, 0, *key, 15, split[15:])
    kernels.weighted_values(orders, ends, labels, weights, 0, 0, explicit)
    assert whole.tobytes() == split.tobytes() == explicit.tobytes()
    P, N = positives.size, negatives.size
    assert kernels.bootstrap_key(5, P, N) != kernels.bootstrap_key(6, P, N)


def _scipy_draws(labels, seed, resamples):
    """The multiplicities of the resamples scipy's ``bootstrap((positives, negatives), ...)`` draws from
    ``default_rng(seed)``: each sample's indices ``rng.integers(0, n, (resamples, n))``, positives first."""
    positives, negatives = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    rng = np.random.default_rng(seed)
    drawn = [rng.integers(0, c.size, (resamples, c.size)) for c in (positives, negatives)]
    weights = np.zeros((resamples, labels.size), np.int64)
    for r in range(resamples):
        np.add.at(weights[r], positives[drawn[0][r]], 1)
        np.add.at(weights[r], negatives[drawn[1][r]], 1)
    return weights


def _interval_on(labels, scores, name, weights, level, method):
    """:func:`interval_from_resamples` from the kernels' values on the resamples ``weights``."""
    from tablegen.compare.pairwise.bootstrap import interval_from_resamples

    spec, column, k_cut = _column(name)
    positives, negatives = labels == 1, labels == 0
    divisor = spec.count_divisor(int(positives.sum()), int(negatives.sum()))
    orders, ends = kernels.sorted_models(scores)
    values, observed = np.empty((weights.shape[0], 1)), np.empty((1, 1))
    kernels.weighted_values(orders, ends, labels, weights, column, k_cut, values)
    kernels.weighted_values(orders, ends, labels, np.ones((1, labels.size), np.int64), column, k_cut, observed)
    left_out = np.empty(labels.size)
    leave_one_out.jackknife_values(orders[0], ends[0], labels, column, k_cut, left_out)
    jackknife = (left_out[positives] / divisor, left_out[negatives] / divisor)
    return (interval_from_resamples(observed[0, 0] / divisor, values[:, 0] / divisor, jackknife, level, method),
            values[:, 0] / divisor)


@pytest.mark.parametrize("name", METRICS[:7])
@pytest.mark.parametrize("method", ["BCa", "percentile", "basic"])
def test_same_resamples_give_scipys_interval(name, method):
    from tablegen.compare.pairwise.bootstrap import scipy_bootstrap
    from tablegen.compare.pairwise.validation import metric_on_items

    rng = np.random.default_rng(5)
    labels = (rng.random(60) < 0.4).astype(np.int64)
    scores = np.round(rng.normal(size=60) + labels, 1)  # tied scores
    spec = get_metric(name)
    seed, resamples = 7, 400
    ours, values = _interval_on(labels, scores, name, _scipy_draws(labels, seed, resamples), 0.9, method)
    scipys = scipy_bootstrap(lambda i: metric_on_items(spec, labels, scores, i), labels, seed, 0.9, resamples, method)
    if name == "average_precision":
        assert ours == pytest.approx(scipys, abs=1e-12, rel=0)
    else:
        np.testing.assert_array_equal(ours, scipys)  # to the last bit (NaN ends where scipy has NaN)
    assert np.isnan(ours).any() == (name == "tp_at_3")  # copies straddle k = 3 in some resample


@pytest.mark.parametrize("method", ["BCa", "percentile", "basic"])
def test_scipys_arithmetic_on_the_kernels_values_is_ours_to_the_last_bit(method):
    """scipy's ``bootstrap`` given the kernels' distribution (``bootstrap_result``, no new resample) and the kernels'
    statistic for its jackknife: the same floats."""
    from types import SimpleNamespace

    from scipy.stats import bootstrap

    rng = np.random.default_rng(11)
    labels = (rng.random(45) < 0.5).astype(np.int64)
    scores = rng.normal(size=45) + labels
    positives, negatives = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    ours, values = _interval_on(labels, scores, "average_precision", _scipy_draws(labels, 3, 300), 0.95, method)
    orders, ends = kernels.sorted_models(scores)

    def statistic(p, n):  # the kernels' value on the items p + n
        weights = np.bincount(np.concatenate([p, n]).astype(np.int64), minlength=labels.size)[None, :]
        out = np.empty((1, 1))
        kernels.weighted_values(orders, ends, labels, weights.astype(np.int64), 4, 0, out)
        return out[0, 0]

    result = bootstrap((positives, negatives), statistic, vectorized=False, n_resamples=0, method=method,
                       confidence_level=0.95, bootstrap_result=SimpleNamespace(bootstrap_distribution=values))
    assert ours == tuple(float(v) for v in result.confidence_interval)


def test_bootstrap_interval_is_the_sorted_kernels_interval():
    from tablegen.compare.pairwise.bootstrap import bootstrap_interval

    rng = np.random.default_rng(3)
    labels = np.r_[np.ones(30), np.zeros(40)].astype(np.int64)
    scores = labels + rng.normal(size=70)
    positives, negatives = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    weights = np.zeros((2000, 70), np.int64)
    kernels.resample_weights(positives, negatives, *kernels.bootstrap_key(9, 30, 40), 0, weights)
    expected, _ = _interval_on(labels, scores, "auc", weights, 0.95, "BCa")
    assert bootstrap_interval(labels, scores, metric="auc", seed=9) == expected


def test_fewer_than_two_items_of_a_class_has_no_interval_as_in_scipy():
    from tablegen.compare.pairwise.bootstrap import bootstrap_interval

    assert np.isnan(bootstrap_interval([1, 0, 0, 0], [0.9, 0.1, 0.2, 0.3])).all()


def test_no_resample_sorts_or_scores_the_items_again(monkeypatch):
    """The issue's 31 s of 58 s: scipy's bootstrap called the registry's scorer on every resample, which sorted
    the scores again (2,000 sorts per interval).  Now the scorer and numpy's sort are never called per resample."""
    import tablegen.compute.metric_scorers as scorers
    import tablegen.compute.metrics_from_scores as from_scores
    from tablegen.compare.pairwise.bootstrap import bootstrap_interval

    calls = []
    real_sort = np.argsort
    for module in (scorers, from_scores):
        monkeypatch.setattr(module, "threshold_groups", lambda *a, real=scorers.threshold_groups: calls.append("groups")
                            or real(*a))
    monkeypatch.setattr(np, "argsort", lambda *a, **k: calls.append("argsort") or real_sort(*a, **k))
    rng = np.random.default_rng(8)
    labels = np.r_[np.ones(50), np.zeros(60)].astype(np.int64)
    for method in ("BCa", "percentile"):
        low, high = bootstrap_interval(labels, labels + rng.normal(size=110), metric="best_f1", method=method)
        assert low < high
    # 2 x 2,000 resamples (and 2 x 110 leave-one-out samples): a few sorts in all (the model's, the labels'), none per
    # resample; the scipy path made 2 x 2,000 (+ 110) calls to the scorer, each one sort
    assert calls.count("groups") == 0 and calls.count("argsort") <= 6, calls


def test_evaluates_intervals_share_resamples_and_equal_each_models_own():
    import tablegen
    from tablegen.compare.pairwise.bootstrap import bootstrap_interval

    rng = np.random.default_rng(12)
    labels = np.r_[np.ones(45), np.zeros(55)].astype(np.int64)
    models = {"a": labels + rng.normal(size=100), "b": np.round(labels + rng.normal(size=100), 1),
              "flat": labels.astype(float)}
    report = tablegen.evaluate(labels, models, metrics=["auc", "best_mcc"], seed=4)
    for metric in ("auc", "best_mcc"):
        intervals = report[metric].intervals
        assert list(intervals) == list(report[metric].values)  # the verdict's order
        for m in ("a", "b"):
            assert intervals[m] == bootstrap_interval(labels, models[m], metric=metric, seed=4)
        assert intervals["flat"] == (1.0, 1.0)  # no variation within a class: the single value, noted


@pytest.mark.parametrize("name", ["best_f1", "average_precision", "best_mcc"])
@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_a_paired_difference_on_the_same_resamples_is_scipys_interval(name, method):
    """paired_test's interval of metric(a) - metric(b): both models on each resample and each leave-one-out sample."""
    from tablegen.compare.pairwise.bootstrap import interval_from_resamples, scipy_bootstrap
    from tablegen.compare.pairwise.validation import metric_on_items

    rng = np.random.default_rng(21)
    labels = (rng.random(70) < 0.45).astype(np.int64)
    a, b = np.round(labels + rng.normal(size=(2, 70)), 1)
    spec, column, k_cut = _column(name)
    weights = _scipy_draws(labels, 13, 300)
    orders, ends = kernels.sorted_models(np.stack([a, b]))
    values, observed = np.empty((300, 2)), np.empty((1, 2))
    kernels.weighted_values(orders, ends, labels, weights, column, k_cut, values)
    kernels.weighted_values(orders, ends, labels, np.ones((1, 70), np.int64), column, k_cut, observed)
    left = [np.empty(70), np.empty(70)]
    for m in range(2):
        leave_one_out.jackknife_values(orders[m], ends[m], labels, column, k_cut, left[m])
    difference = left[0] - left[1]
    ours = interval_from_resamples(observed[0, 0] - observed[0, 1], values[:, 0] - values[:, 1],
                                   (difference[labels == 1], difference[labels == 0]), 0.95, method)
    scipys = scipy_bootstrap(lambda i: metric_on_items(spec, labels, a, i) - metric_on_items(spec, labels, b, i),
                             labels, 13, 0.95, 300, method)
    assert ours == pytest.approx(scipys, abs=1e-12, rel=0)
    if name != "average_precision":
        assert ours == scipys


def test_paired_tests_interval_is_the_sorted_kernels_difference():
    from tablegen.compare.pairwise.bootstrap import sorted_bootstrap_difference
    from tablegen.compare.pairwise.paired import paired_test

    rng = np.random.default_rng(6)
    labels = np.r_[np.ones(12), np.zeros(13)].astype(np.int64)
    a, b = labels + rng.normal(size=(2, 25))
    result = paired_test(labels, a, b, metric="best_mcc", method="permutation", seed=3)
    expected = sorted_bootstrap_difference(labels, np.stack([a, b]), get_metric("best_mcc"), 3)
    assert result.confidence_interval == expected and expected[0] < result.difference < expected[1]


def test_a_count_at_k_whose_resamples_straddle_k_says_why_it_has_no_interval():
    import tablegen

    rng = np.random.default_rng(30)
    labels = np.r_[np.ones(30), np.zeros(40)].astype(np.int64)
    report = tablegen.evaluate(labels, {"a": labels + rng.normal(size=70), "b": labels + rng.normal(size=70)},
                               metrics=["tp_at_10"])
    assert report["tp_at_10"].intervals == {"a": None, "b": None}
    assert any("straddle the cut-off k = 10" in note for note in report["tp_at_10"].notes)


def test_the_largest_count_is_read_after_the_draws_and_a_wrapped_byte_reports_every_draw():
    """draw_weights returns the largest count (the lane and scalar kernels compare it with the byte's limit), found
    by a scan after the draws: the largest count held, or P + N where a byte wrapped (its counts sum short)."""
    key = kernels.bootstrap_key(3, 40, 60)
    for replicate in range(20):
        narrow, wide = np.zeros(100, np.uint8), np.zeros(100, np.int64)
        assert kernels.draw_weights(*key, replicate, 40, 60, narrow) == int(narrow.max())
        assert kernels.draw_weights(*key, replicate, 40, 60, wide) == int(wide.max())
        assert wide.sum() == 100 and np.array_equal(narrow, wide)
    wrapped = np.array([257 % 256, 1, 0], np.uint8)  # 257 draws into slot 0 wrapped to 1
    scan = kernels._largest_count.py_func  # the scan itself, as the draw inlines it (no compile of its own)
    assert scan(wrapped, 259) == 259 and scan(wrapped, 2) == 1


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_a_resample_whose_count_could_wrap_a_byte_is_drawn_again_wide(limit):
    """Counts go into one byte per item; a resample where some count reaches the limit (255 in use, where a byte
    could wrap) is drawn again into 8 bytes.  Small limits send some or every resample down that path: the same
    values, bit for bit."""
    rng = np.random.default_rng(17)
    labels = (rng.random(60) < 0.4).astype(np.int64)
    orders, ends = kernels.sorted_models(np.round(rng.normal(size=(2, 60)) + labels, 1))
    positives, negatives = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    key = kernels.bootstrap_key(1, positives.size, negatives.size)
    weights = np.zeros((50, 60), np.int64)
    kernels.resample_weights(positives, negatives, *key, 0, weights)
    assert weights.max() >= 3 and (weights.max(axis=1) < 3).any()  # limit 3: both paths taken
    for column, k_cut in ((0, 0), (4, 0), (5, 0), (6, 7)):
        narrow, forced, explicit = np.empty((50, 2)), np.empty((50, 2)), np.empty((50, 2))
        kernels.resample_values(orders, ends, labels, positives, negatives, column, k_cut, *key, 0, narrow)
        kernels.resample_values(orders, ends, labels, positives, negatives, column, k_cut, *key, 0, forced, limit)
        kernels.weighted_values(orders, ends, labels, weights, column, k_cut, explicit)
        assert narrow.tobytes() == forced.tobytes() == explicit.tobytes()


@pytest.mark.parametrize("name", METRICS)
def test_jackknife_is_the_weighted_pass_without_each_item(name):
    """At 300 items with ties: the O(n) leave-one-out updates (AUC's placements, the best-threshold metrics' prefix
    and suffix maxima) against the weighted pass with each item's weight 0 (rows of their own class totals)."""
    spec, column, k_cut = _column(name)
    rng = np.random.default_rng(40)
    labels = (rng.random(300) < 0.35).astype(np.int64)
    orders, ends = kernels.sorted_models(np.round(rng.normal(size=300) + labels, 1))
    left_out = np.empty(300)
    leave_one_out.jackknife_values(orders[0], ends[0], labels, column, k_cut, left_out)
    passes = np.empty((300, 1))
    kernels.weighted_values(orders, ends, labels, 1 - np.eye(300, dtype=np.int64), column, k_cut, passes)
    if name == "average_precision":
        np.testing.assert_allclose(left_out, passes[:, 0], rtol=0, atol=1e-12)
    else:
        np.testing.assert_array_equal(left_out, passes[:, 0])


def test_intervals_are_those_before_the_shared_pass():
    """Every metric of a report scored in one pass per (model, resample) (:class:`BootstrapValues` asked for all
    of them at once): the intervals each metric had alone before, to the last bit (the record of
    ``tests/data/bootstrap_intervals``: BCa, percentile and basic, tied and untied scores, TP at k with NaN ends)."""
    import importlib.util
    import json
    from pathlib import Path

    from tablegen.compare.pairwise.bootstrap import BootstrapValues

    folder = Path(__file__).parent.parent / "data" / "bootstrap_intervals"
    spec = importlib.util.spec_from_file_location("make_intervals", folder / "make_intervals.py")
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    record = json.loads((folder / "intervals.json").read_text())
    specs = [get_metric(name) for name in make.METRICS]
    for name, labels, scores, method, resamples, seed in make.cases():
        shared = BootstrapValues(labels, scores, specs, seed, resamples, method)
        for metric in specs:
            found = [[v.hex() if v == v else "nan" for v in interval] for interval in shared.intervals(metric)]
            assert found == record[name][metric.name], (name, metric.name)


def test_one_pass_scores_every_metric_as_each_alone():
    """The kernel's all-metric pass against its one-column calls on the same keyed resamples (10^4 items, ties and
    a rare class: the maxima found from the cut-offs where TP grew, by keys and fractions)."""
    rng = np.random.default_rng(44)
    for share, decimals in ((0.3, None), (0.03, 1), (0.5, 2)):
        labels = (rng.random(10_000) < share).astype(np.int64)
        scores = labels + rng.normal(size=(2, 10_000))
        scores = scores if decimals is None else np.round(scores, decimals)
        positives, negatives = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
        key = kernels.bootstrap_key(3, positives.size, negatives.size)
        orders, ends = kernels.sorted_models(scores)
        cuts = [7, 300, 9_999, 10_000]
        want, k_cuts = kernels.metric_choice(range(6), cuts)
        every = np.empty((20, 2, 6 + len(cuts)))
        kernels.resample_metrics(kernels.pass_codes(orders, ends, labels), positives.size, negatives.size, want, k_cuts,
                                 *key, 0, every)
        for column in range(7):
            for at, k_cut in enumerate(cuts if column == 6 else [0]):
                alone = np.empty((20, 2))
                kernels.resample_values(orders, ends, labels, positives, negatives, column, k_cut, *key, 0, alone)
                assert alone.tobytes() == every[:, :, column + at].tobytes(), (share, column, k_cut)


def test_evaluate_draws_and_scores_each_resample_once_for_every_metric(monkeypatch):
    """The report's five default metrics (and TP at k) share one call of the bootstrap kernel: each resample drawn
    once and each (model, resample) scored by one pass for all of them; the intervals are each metric's alone."""
    import tablegen
    from tablegen.compare.pairwise.bootstrap import bootstrap_interval

    calls = []
    real = kernels.resample_metrics
    monkeypatch.setattr(kernels, "resample_metrics", lambda *args: calls.append(args[3].tolist()) or real(*args))
    rng = np.random.default_rng(13)
    labels = np.r_[np.ones(40), np.zeros(60)].astype(np.int64)
    models = {"a": labels + rng.normal(size=100), "b": labels + 2 * rng.normal(size=100)}
    metrics = ["auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision", "tp_at_30"]
    report = tablegen.evaluate(labels, models, metrics=metrics, seed=2)
    assert calls == [[1, 1, 1, 1, 1, 0]]  # one call, every base metric wanted (TP at 30 among the cut-offs)
    for metric in ("best_f1", "average_precision"):
        assert report[metric].intervals["b"] == bootstrap_interval(labels, models["b"], metric=metric, seed=2)


def test_a_report_whose_models_all_score_alike_within_each_class_has_single_value_intervals():
    """No model's scores vary within a class: nothing is resampled, every interval
    is the single value, as before the shared pass (which raised a typing error on the empty set of models)."""
    import tablegen

    labels = np.r_[np.ones(10), np.zeros(10)]
    report = tablegen.evaluate(labels, {"flat": labels.copy(), "flipped": 1 - labels}, metrics=["auc", "best_f1"])
    assert report["auc"].intervals == {"flat": (1.0, 1.0), "flipped": (0.0, 0.0)}
    assert report["best_f1"].intervals == {"flat": (1.0, 1.0), "flipped": (2 / 3, 2 / 3)}
