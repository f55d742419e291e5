"""Monte Carlo power under the binormal and Lehmann alternatives (:mod:`tablegen.compute.power_mc`) and their kernels.

- The kernel's values equal the registry's scorers of the very scores it drew (recorded), every metric, and
  the label-permutation kernel's ``score_model`` bit for bit; tied scores (which random draws do not give)
  are checked on :func:`score_sorted` directly.
- Its power agrees within 4 standard errors with a plain numpy simulation (numpy's normals, the registry's
  reference scorers); at d = 0 (both classes N(0, 1): every ranking equally likely) it estimates the test's
  exact size Pr(X > m*) within 4 standard errors.
- The Lehmann kernel (positives U**(1/k), negatives U): its values equal the registry's scorers of its drawn
  scores, its draws have the laws F**k and F (Kolmogorov-Smirnov) and mean AUC k / (k + 1); its power agrees
  within 4 standard errors with the exact Lehmann power (:mod:`tablegen.compute.exact.power`) on cells and
  metrics inside the exact programme's domain, and with a plain numpy simulation (numpy's uniforms, the
  registry's scorers) outside it (AUC at 400 x 400, average precision at 30 x 30).
- The CUDA twins, run in numba-cuda's simulator in a child process (this file is its script:
  ``python tests/compute/test_power_mc.py OUT.npz``), equals the CPU kernel bit for bit.
"""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve()
#: (P, N, d, first replicate, count) of the CUDA-twin comparison (several launches: 5 threads each).
SIM_CASES = [(7, 9, 0.8, 0, 12), (13, 2, 0.0, 1000, 8), (3, 25, 2.5, 5, 8)]
SIM_CUTOFFS = (1, 4, 10)
#: (P, N, k, first replicate, count) of the Lehmann twin's comparison.
SIM_LEHMANN_CASES = [(7, 9, 7 / 3, 0, 12), (13, 2, 1.0, 1000, 8), (3, 25, 19.0, 5, 8)]


def _ks(P, N, cutoffs=SIM_CUTOFFS):
    return np.array(sorted({min(k, P + N) for k in cutoffs}), dtype=np.int64)


def _cpu_values(P, N, d, first, count, key=(np.uint64(11), np.uint64(29)), cutoffs=SIM_CUTOFFS, with_mcc=True,
                model="binormal"):
    from tablegen.compute.kernels.alternative import binormal_block, lehmann_block
    from tablegen.compute.kernels.ranking import TP_COLUMN, mcc_weights

    kernel = binormal_block if model == "binormal" else lehmann_block
    ks = _ks(P, N, cutoffs)
    out = np.empty((count, TP_COLUMN + ks.size))
    scores = np.empty((count, P + N))
    kernel(P, N, float(d), key[0], key[1], first, ks, mcc_weights(P, N, P + N + 1), with_mcc, out, scores)
    return out, scores


# --- the child process (simulator) ---------------------------------------------------------------

def _child(path: str) -> None:
    import warnings

    warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)  # numpy uint64 scalars wrap
    from tablegen.compute.kernels.cuda.alternative import binormal_values_cuda, lehmann_values_cuda
    from tablegen.compute.kernels.ranking import TP_COLUMN, mcc_weights

    results = {}
    for P, N, d, first, count in SIM_CASES:
        ks = _ks(P, N)
        for with_mcc in (True, False):
            out = np.empty((count, TP_COLUMN + ks.size))
            binormal_values_cuda(P, N, float(d), np.uint64(11), np.uint64(29), first, ks,
                                 mcc_weights(P, N, P + N + 1), with_mcc, out, threads=5)
            results[f"values_{P}_{N}_{with_mcc}"] = out
    for P, N, k, first, count in SIM_LEHMANN_CASES:
        ks = _ks(P, N)
        out = np.empty((count, TP_COLUMN + ks.size))
        lehmann_values_cuda(P, N, float(k), np.uint64(11), np.uint64(29), first, ks, mcc_weights(P, N, P + N + 1),
                            True, out, threads=5)
        results[f"lehmann_{P}_{N}"] = out
    results["power"] = _power_through_the_engine("cuda")
    results["lehmann_power"] = _lehmann_through_the_engine("cuda")
    np.savez(path, **results)


def _power_through_the_engine(device):
    """Hits of binormal_power on a device (a given R, and the two-stage rule's pilot and second stage)."""
    from tablegen.compute.power_mc import binormal_power

    given = binormal_power(["auc", "best_mcc", "precision_at_3"], 6, 5, [0.7, 0.4, 0.6], 1.0, R=30, seed=4,
                           device=device)
    chosen = binormal_power("auc", 4, 3, 0.99, 5.0, seed=4, half_width=0.2, device=device)
    return np.array([r.hits for r in given] + [chosen.hits, chosen.R])


def _lehmann_through_the_engine(device):
    """Hits of lehmann_power on a device (a given R, and the two-stage rule)."""
    from tablegen.compute.power_mc import lehmann_power

    given = lehmann_power(["auc", "best_f1", "tp_at_2"], 6, 5, [0.7, 0.7, 1.0], 3.0, R=30, seed=4, device=device)
    chosen = lehmann_power("auc", 4, 3, 0.99, 50.0, seed=4, half_width=0.2, device=device)
    return np.array([r.hits for r in given] + [chosen.hits, chosen.R])


# --- the kernel against the registry -------------------------------------------------------------

METRICS = ("auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision", "best_mcc")


def _registry_values(labels, scores, ks):
    from tablegen.compute.metric_scorers import threshold_groups, tp_at_k
    from tablegen.compute.metrics import get_metric

    groups = threshold_groups(labels, scores)
    values = [get_metric(name).score_groups(groups) for name in METRICS]
    for k in ks:
        try:
            values.append(float(tp_at_k(groups, int(k))))
        except ValueError:  # tied scores straddle k
            values.append(math.nan)
    return np.array(values)


@pytest.mark.parametrize("P,N,d", [(1, 1, 0.5), (5, 8, 0.0), (20, 30, 1.0), (40, 3, 2.0), (2, 60, -0.5)])
def test_kernel_scores_equal_the_registry_scorers_of_the_drawn_scores(P, N, d):
    out, scores = _cpu_values(P, N, d, 0, 40)
    labels = np.r_[np.ones(P, np.int64), np.zeros(N, np.int64)]
    ks = _ks(P, N)
    for row in range(out.shape[0]):
        expected = _registry_values(labels, scores[row], ks)
        exact = [0, 1, 2, 5] + list(range(6, out.shape[1]))
        assert np.array_equal(out[row, exact], expected[exact]), row  # the same float
        # AP (a sum in another order) and balanced accuracy (the scorer rounds 0.5 (TP/P + 1 - FP/N) step by step,
        # the kernel divides exact integers once, as the nulls' values are): a few ulps
        np.testing.assert_allclose(out[row, [3, 4]], expected[[3, 4]], rtol=1e-13, atol=0)


def test_kernel_scores_equal_the_permutation_kernels_scorer_bit_for_bit():
    from tablegen.compute.kernels.permutation import score_model
    from tablegen.compute.kernels.ranking import mcc_weights

    P, N = 17, 23
    out, scores = _cpu_values(P, N, 0.7, 100, 30, cutoffs=(5,))
    labels = np.r_[np.ones(P, np.uint8), np.zeros(N, np.uint8)]
    weights = mcc_weights(P, N, P + N + 1)
    for row in range(out.shape[0]):
        order = np.argsort(-scores[row], kind="stable")
        ends = np.r_[scores[row][order][1:] != scores[row][order][:-1], True].astype(np.uint8)
        for column, k_cut in ((0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 5)):
            value = score_model(labels, order, ends, P, column, k_cut, weights)
            assert out[row, column].tobytes() == np.float64(value).tobytes(), (row, column)


def test_tied_scores_form_one_group_as_the_registry_groups_them():
    from tablegen.compute.kernels.alternative import score_sorted
    from tablegen.compute.kernels.ranking import TP_COLUMN, mcc_weights

    rng = np.random.default_rng(3)
    for trial in range(60):
        P, N = rng.integers(1, 12, size=2)
        positives, negatives = (np.sort(np.round(rng.normal(size=size), 0)) for size in (P, N))  # many ties
        ks = _ks(P, N, (1, 3, 7))
        out = np.empty((1, TP_COLUMN + ks.size))
        score_sorted(positives, negatives, ks, mcc_weights(P, N, P + N + 1), True, out, 0)
        labels = np.r_[np.ones(P, np.int64), np.zeros(N, np.int64)]
        expected = _registry_values(labels, np.r_[positives, negatives], ks)
        np.testing.assert_allclose(out[0], expected, rtol=1e-13, atol=0, equal_nan=True, err_msg=str(trial))


@pytest.mark.parametrize("n,center,spread", [(1, 0.0, 1.0), (2, 0.0, 1.0), (50, 3.0, 1.0), (400, 0.0, 1.0),
                                              (300, 0.0, 30.0), (200, -2.0, 0.001)])
def test_bucket_sort_sorts_whatever_the_spread(n, center, spread):
    from tablegen.compute.kernels.alternative import bucket_sort

    rng = np.random.default_rng(n)
    for values in (rng.normal(center, spread, size=n), np.round(rng.normal(center, spread, size=n), 1)):
        expected = np.sort(values)
        bucket_sort(values, center, np.empty(n + 1, np.int64), np.empty(n), np.empty(n, np.int64))
        assert np.array_equal(values, expected)  # (-0.0 and 0.0 are equal, in either order)


def test_a_tie_straddling_k_gives_nan_like_the_registry_refusal():
    from tablegen.compute.kernels.alternative import score_sorted
    from tablegen.compute.kernels.ranking import TP_COLUMN, mcc_weights

    positives, negatives = np.array([0.0, 1.0]), np.array([1.0, 2.0])  # 2.0 (neg) | 1.0, 1.0 | 0.0
    ks = np.array([1, 2, 3], np.int64)
    out = np.empty((1, TP_COLUMN + 3))
    score_sorted(positives, negatives, ks, mcc_weights(2, 2, 5), True, out, 0)
    assert out[0, TP_COLUMN] == 0 and np.isnan(out[0, TP_COLUMN + 1]) and out[0, TP_COLUMN + 2] == 1
    assert out[0, 0] == 0.5 / 4  # of the four pairs only the tied one (1.0, 1.0) counts, 1/2


def test_draws_are_normal_with_the_given_means_and_do_not_depend_on_the_blocks():
    from scipy import stats

    from tablegen.compute.mc import KernelLayout
    from tablegen.compute.metrics import metric_entries
    from tablegen.compute.power_mc import binormal_values

    P, N, d = 300, 500, 1.3
    _, scores = _cpu_values(P, N, d, 0, 20)
    assert stats.kstest((scores[:, :P] - d).ravel(), "norm").pvalue > 1e-3
    assert stats.kstest(scores[:, P:].ravel(), "norm").pvalue > 1e-3
    layout = KernelLayout.for_metrics(metric_entries(["auc", "tp_at_10", "best_mcc"]), 30, 40)
    key = (np.uint64(5), np.uint64(6))
    whole = binormal_values(30, 40, 0.4, key, 3, 50, layout)
    parts = np.vstack([binormal_values(30, 40, 0.4, key, first, count, layout)
                       for first, count in ((3, 7), (10, 30), (40, 13))])
    assert whole.tobytes() == parts.tobytes()


def test_mean_auc_of_the_draws_is_phi_of_d_over_root_2():
    from tablegen.compute.power_mc import auc_of_separation

    P, N, d, R = 20, 30, 0.9, 20000
    out, _ = _cpu_values(P, N, d, 0, R)
    aucs = out[:, 0]
    assert abs(aucs.mean() - auc_of_separation(d)) < 4 * aucs.std() / math.sqrt(R)


# --- power ---------------------------------------------------------------------------------------

def _numpy_power(metric, P, N, d, critical, R, seed):
    """The plain simulation: numpy's normals, the registry's reference scorer on the sorted labels."""
    from tablegen.compute.metrics import get_metric

    rng = np.random.default_rng(seed)
    scores = np.hstack([rng.normal(d, 1.0, size=(R, P)), rng.normal(0.0, 1.0, size=(R, N))])
    labels = np.r_[np.ones(P, np.int64), np.zeros(N, np.int64)]
    ranked = labels[np.argsort(-scores, axis=1, kind="stable")]
    values = get_metric(metric).reference_scores(ranked, P, N)
    return float(np.mean(values > critical + 1e-9))


@pytest.mark.parametrize("metric,C", [("auc", 10), ("best_f1", 10), ("best_balanced_accuracy", 100),
                                      ("precision_at_10", 1), ("average_precision", 1)])
def test_power_agrees_with_a_plain_numpy_simulation_within_4_se(metric, C):
    from tablegen.compute.metric_nulls import exact_critical_value
    from tablegen.compute.power_mc import binormal_power, separation_of_auc

    P, N, R = 40, 40, 20000
    d = separation_of_auc(0.72)
    if metric == "average_precision":  # no exact null at (40, 40): any fixed threshold is a test of the kernel
        critical = 0.72
    else:
        critical = exact_critical_value(metric, P, N, C, 0.05)
    ours = binormal_power(metric, P, N, critical, d, R=R, seed=7)
    plain = _numpy_power(metric, P, N, d, critical, R, 11)
    se = math.sqrt(ours.power * (1 - ours.power) / R + plain * (1 - plain) / R)
    assert 0.05 < ours.power < 0.95, ours  # a cell where the comparison has teeth
    assert abs(ours.power - plain) < 4 * se, (ours, plain)
    assert ours.ci_low <= ours.power <= ours.ci_high and ours.R == R and ours.pilot_replicates == 0


@pytest.mark.parametrize("metric,C", [("auc", 1), ("auc", 10), ("best_accuracy", 1), ("best_f1", 10),
                                      ("tp_at_5", 1)])
def test_d_zero_gives_the_tests_exact_size(metric, C):
    from tablegen.compute.metric_nulls import exact_critical_value, exact_tail_ge
    from tablegen.compute.power_mc import binormal_power

    P, N, R, alpha = 20, 25, 40000, 0.05
    critical = exact_critical_value(metric, P, N, C, alpha)
    size = exact_tail_ge(metric, P, N, critical + 1e-6)  # Pr(X > m*): the next value up
    assert 0.0 < size <= 1 - (1 - alpha) ** (1 / C)
    result = binormal_power(metric, P, N, critical, 0.0, R=R, seed=3)
    assert abs(result.power - size) < 4 * math.sqrt(size * (1 - size) / R), (result, size)


def test_several_metrics_share_one_set_of_draws():
    from tablegen.compute.power_mc import binormal_power

    both = binormal_power(["auc", "tp_at_5"], 20, 20, [0.7, 3.0], 1.0, R=500, seed=2)
    alone = binormal_power("tp_at_5", 20, 20, 3.0, 1.0, R=500, seed=2)
    assert both[1] == alone and both[0].metric == "auc" and both[0].hits != alone.hits


# --- the Lehmann alternative ----------------------------------------------------------------------

@pytest.mark.parametrize("P,N,k", [(1, 1, 3.0), (5, 8, 1.0), (20, 30, 7 / 3), (40, 3, 9.0), (2, 60, 1.5)])
def test_lehmann_kernel_scores_equal_the_registry_scorers_of_the_drawn_scores(P, N, k):
    out, scores = _cpu_values(P, N, k, 0, 40, model="lehmann")
    assert ((0.0 < scores) & (scores < 1.0)).all()
    labels = np.r_[np.ones(P, np.int64), np.zeros(N, np.int64)]
    ks = _ks(P, N)
    for row in range(out.shape[0]):
        expected = _registry_values(labels, scores[row], ks)
        exact = [0, 1, 2, 5] + list(range(6, out.shape[1]))
        assert np.array_equal(out[row, exact], expected[exact]), row
        np.testing.assert_allclose(out[row, [3, 4]], expected[[3, 4]], rtol=1e-13, atol=0)


def test_lehmann_draws_have_the_laws_f_to_the_k_and_f_and_do_not_depend_on_the_blocks():
    from scipy import stats

    from tablegen.compute.mc import KernelLayout
    from tablegen.compute.metrics import metric_entries
    from tablegen.compute.power_mc import binormal_values

    P, N, k = 300, 500, 7 / 3
    _, scores = _cpu_values(P, N, k, 0, 20, model="lehmann")
    assert stats.kstest((scores[:, :P] ** k).ravel(), "uniform").pvalue > 1e-3  # Pr(X <= x) = x**k
    assert stats.kstest(scores[:, P:].ravel(), "uniform").pvalue > 1e-3
    layout = KernelLayout.for_metrics(metric_entries(["auc", "tp_at_10", "best_mcc"]), 30, 40)
    key = (np.uint64(5), np.uint64(6))
    whole = binormal_values(30, 40, 3.0, key, 3, 50, layout, model="lehmann")
    parts = np.vstack([binormal_values(30, 40, 3.0, key, first, count, layout, model="lehmann")
                       for first, count in ((3, 7), (10, 30), (40, 13))])
    assert whole.tobytes() == parts.tobytes()


def test_lehmann_mean_auc_is_k_over_k_plus_1():
    P, N, k, R = 20, 30, 1.8, 20000
    out, _ = _cpu_values(P, N, k, 0, R, model="lehmann")
    aucs = out[:, 0]
    assert abs(aucs.mean() - k / (k + 1)) < 4 * aucs.std() / math.sqrt(R)


@pytest.mark.parametrize("metric,P,N,C", [("auc", 30, 50, 10), ("best_f1", 30, 50, 10), ("best_mcc", 25, 40, 1),
                                          ("best_balanced_accuracy", 60, 40, 10), ("tp_at_10", 30, 50, 1),
                                          ("average_precision", 6, 9, 1)])
def test_lehmann_power_agrees_with_the_exact_power_within_4_se(metric, P, N, C):
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.power_mc import lehmann_power
    from tablegen.compute.stats import upper_tail_probability

    k, R = 1.6, 20000
    event = get_metric(metric).lehmann_event(P, N, float(upper_tail_probability(C, 0.05)))
    exact = event.probability(k)
    ours = lehmann_power(metric, P, N, event.critical_value, k, R=R, seed=9)
    assert 0.05 < exact < 0.95, exact  # a cell where the comparison has teeth
    assert abs(ours.power - exact) < 4 * math.sqrt(exact * (1 - exact) / R), (ours, exact)
    assert ours.ci_low <= ours.power <= ours.ci_high and ours.auc == k / (k + 1) and ours.k == k


def _numpy_lehmann_power(metric, P, N, k, critical, R, seed, chunk=2000):
    """The plain simulation: numpy's uniforms, positives U**(1/k), the registry's reference scorer."""
    from tablegen.compute.metrics import get_metric

    rng = np.random.default_rng(seed)
    labels = np.r_[np.ones(P, np.int64), np.zeros(N, np.int64)]
    hits = 0
    for start in range(0, R, chunk):
        rows = min(chunk, R - start)
        scores = np.hstack([rng.random(size=(rows, P)) ** (1.0 / k), rng.random(size=(rows, N))])
        ranked = labels[np.argsort(-scores, axis=1, kind="stable")]
        hits += int(np.count_nonzero(get_metric(metric).reference_scores(ranked, P, N) > critical + 1e-9))
    return hits / R


@pytest.mark.parametrize("metric,P,N,auc,R", [("auc", 400, 400, 0.535, 6000),
                                              ("average_precision", 30, 30, 0.7, 20000)])
def test_lehmann_power_beyond_the_exact_programme_agrees_with_a_plain_numpy_simulation(metric, P, N, auc, R):
    from tablegen.compute.metric_nulls import exact_critical_value
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.power_mc import lehmann_power

    assert not get_metric(metric).power_exact_at(P, N)
    k = auc / (1 - auc)
    critical = exact_critical_value(metric, P, N, 10, 0.05) if metric == "auc" else 0.72  # any threshold tests it
    ours = lehmann_power(metric, P, N, critical, k, R=R, seed=7)
    plain = _numpy_lehmann_power(metric, P, N, k, critical, R, 11)
    se = math.sqrt(ours.power * (1 - ours.power) / R + plain * (1 - plain) / R)
    assert 0.05 < ours.power < 0.95, ours
    assert abs(ours.power - plain) < 4 * se, (ours, plain)


def test_lehmann_and_binormal_streams_are_apart():
    from tablegen.compute.power_mc import BINORMAL_TAG, LEHMANN_TAG, binormal_key

    assert binormal_key(1, 10, 10, 2.0, 0) != binormal_key(1, 10, 10, 2.0, 0, LEHMANN_TAG)
    assert BINORMAL_TAG != LEHMANN_TAG


def test_lehmann_power_refuses_a_non_positive_k():
    from tablegen.compute.power_mc import lehmann_power
    from tablegen.errors import TablegenInputError

    for k in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(TablegenInputError, match=r"\bk\b"):
            lehmann_power("auc", 10, 10, 0.7, k, R=10)


@pytest.mark.parametrize("model", ["binormal", "lehmann"])
def test_a_run_beyond_the_time_limit_is_refused_before_drawing(model, monkeypatch):
    from tablegen.compute import power_mc
    from tablegen.errors import ResourceLimitError

    drawn = []

    def no_draws(*args, **kwargs):
        drawn.append(args)
        raise AssertionError("drew replicates beyond the time limit")

    monkeypatch.setattr(power_mc, "count_significant", no_draws)
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1")
    estimate = power_mc.binormal_power if model == "binormal" else power_mc.lehmann_power
    with pytest.raises(ResourceLimitError, match=r"\bR\b.*wider interval"):
        estimate("auc", 500, 500, 0.55, 1.2, R=10**6)  # ~30 s estimated
    with pytest.raises(ResourceLimitError, match="1,000 replicates"):
        estimate("auc", 10**6, 10**6, 0.501, 1.2)  # the pilot alone: ~60 s estimated
    assert not drawn


# --- how many replicates -------------------------------------------------------------------------

def test_default_replicates_meet_the_half_width_at_every_count():
    from tablegen.compute.power_mc import max_half_width, replicates_for_half_width
    from tablegen.compute.stats import clopper_pearson

    R = replicates_for_half_width(0.005)
    counts = np.arange(R + 1)
    low, high = clopper_pearson(counts, counts, R)
    assert np.max(high - low) / 2 <= 0.005  # every count, not only the middle one max_half_width reads
    assert max_half_width(R - 1) > 0.005  # and no fewer replicates would do
    assert R > math.ceil((1.96 / 0.005) ** 2 * 0.25)  # Clopper-Pearson is wider than the Wald count 38,416
    for R, lo, hi in ((500, 0.0, 0.1), (3000, 0.8, 1.0), (777, 0.2, 0.3)):  # the half-width peaks nearest R / 2
        counts = np.arange(math.floor(lo * R), math.ceil(hi * R) + 1)
        low, high = clopper_pearson(counts, counts, R)
        assert max_half_width(R, lo, hi) == pytest.approx(np.max(high - low) / 2, rel=1e-12)


@pytest.mark.parametrize("d,expect_fewer", [(4.0, True), (0.9, False)])
def test_two_stage_rule_reaches_the_half_width_with_a_fixed_second_stage(d, expect_fewer):
    from tablegen.compute.power_mc import PILOT_REPLICATES, binormal_power, replicates_for_half_width

    result = binormal_power("auc", 25, 25, 0.68, d, seed=5)
    assert result.pilot_replicates == PILOT_REPLICATES
    assert result.half_width <= 0.005, result
    assert (result.R < replicates_for_half_width(0.005) / 4) == expect_fewer, result
    again = binormal_power("auc", 25, 25, 0.68, d, seed=5)
    assert again == result  # keyed streams: the same answer


@pytest.mark.parametrize("kwargs,named", [
    (dict(metrics="nope"), "metrics"), (dict(P=0), "P"), (dict(N=2.5), "N"), (dict(critical_values=[0.7, 0.8]),
                                                                           "critical_values"),
    (dict(critical_values=float("nan")), "critical_values"), (dict(critical_values=[None]), "critical_values"),
    (dict(critical_values="0.7"), "critical_values"), (dict(metrics=[]), "metrics"), (dict(d=float("inf")), "d"),
    (dict(R=0), "R"),
    (dict(seed=-1), "seed"), (dict(half_width=0.0), "half_width"), (dict(device="tpu"), "device")])
def test_bad_input_is_refused_naming_the_argument(kwargs, named):
    from tablegen.compute.power_mc import binormal_power
    from tablegen.errors import TablegenInputError

    args = dict(metrics="auc", P=10, N=10, critical_values=0.7, d=1.0, R=10, seed=1) | kwargs
    with pytest.raises(TablegenInputError, match=named):
        binormal_power(**args)


# --- the CUDA twin -------------------------------------------------------------------------------

@pytest.mark.slow  # 2.4-4.9 s: in the full suite, out of the fast loop (<= 2 min)
def test_cuda_twin_equals_the_cpu_kernel_bit_for_bit_in_the_simulator(tmp_path):
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: the binormal CUDA kernel is NOT tested (pip install -e '.[test]')")
    out = tmp_path / "binormal.npz"
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run([sys.executable, str(HERE), str(out)], env=env, capture_output=True, text=True,
                          cwd=HERE.parents[2])
    assert done.returncode == 0, done.stderr[-4000:]
    with np.load(out) as sim:
        for P, N, d, first, count in SIM_CASES:
            for with_mcc in (True, False):
                cpu, _ = _cpu_values(P, N, d, first, count, with_mcc=with_mcc)
                assert np.isnan(cpu).any() == (not with_mcc)
                assert sim[f"values_{P}_{N}_{with_mcc}"].tobytes() == cpu.tobytes(), (P, N, with_mcc)
        assert np.array_equal(sim["power"], _power_through_the_engine("cpu"))
        for P, N, k, first, count in SIM_LEHMANN_CASES:
            cpu, _ = _cpu_values(P, N, k, first, count, model="lehmann")
            assert sim[f"lehmann_{P}_{N}"].tobytes() == cpu.tobytes(), (P, N, k)
        assert np.array_equal(sim["lehmann_power"], _lehmann_through_the_engine("cpu"))


if __name__ == "__main__":
    _child(sys.argv[1])
