"""best_mcc: max over thresholds of the Matthews correlation coefficient (0 where it is undefined).

The reference scorer against brute force over every ranking of tiny cells, its range, the premise of
the minority-class kernel (the maximum sits at the end of a run of positives), every kernel's column
against the reference, the sampled distribution against the enumerated one, and the public entry
points (an exact routine since the per-diagonal lattice programme: ``tests/compute/test_best_mcc_exact.py``;
``method="simulate"`` still simulates).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy import stats

import tablegen
from tablegen.compute.kernels.lanes import lane_output, simulate_rows
from tablegen.compute.kernels.ranking import BASE_COLUMNS, TP_COLUMN, simulate_block
from tablegen.compute.mc import KernelLayout, cell_key, score_replicates
from tablegen.compute.metrics import get_metric, metric_entries

MCC = get_metric("best_mcc")
TINY = [(P, n - P) for n in range(2, 11) for P in range(1, n)]


def all_rankings(P: int, N: int) -> np.ndarray:
    """Every arrangement of P positives and N negatives, one per row (1 = positive, top first)."""
    rows = []
    for top in itertools.combinations(range(P + N), P):
        row = np.zeros(P + N, np.uint8)
        row[list(top)] = 1
        rows.append(row)
    return np.array(rows)


def brute_best_mcc(labels) -> float:
    """max over k of (TP TN - FP FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)), 0 where a factor is 0."""
    P, n = int(sum(labels)), len(labels)
    best = -math.inf
    for k in range(n + 1):
        tp = int(sum(labels[:k]))
        fp, fn = k - tp, P - tp
        tn = n - P - fp
        product = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
        best = max(best, 0.0 if product == 0 else (tp * tn - fp * fn) / math.sqrt(product))
    return best


@pytest.mark.parametrize("P,N", TINY)
def test_reference_equals_brute_force_on_every_ranking(P, N):
    labels = all_rankings(P, N)
    reference = MCC.reference_scores(labels, P, N)
    brute = np.array([brute_best_mcc(row) for row in labels])
    np.testing.assert_allclose(reference, brute, rtol=0, atol=1e-14)
    low, high = MCC.range(P, N)
    # the range is attained: the worst ranking (negatives first) scores 0, the perfect one 1
    assert reference.min() == low == 0.0 and brute.min() == 0.0
    assert reference.max() <= high == 1.0 and reference.max() == pytest.approx(1.0, abs=1e-15)
    assert MCC.reference_scores(np.array([0] * N + [1] * P), P, N)[0] == 0.0


def run_end_maximum(labels, P, N) -> float:
    """The maximum over k = 0 and the ends of runs of positives only (what the minority kernel scans),
    with the kernels' weights and products."""
    n = P + N
    k = np.arange(1, n)
    weights = np.zeros(n + 1)
    weights[1:n] = 1.0 / np.sqrt(np.float64(P * N) * (k * (n - k)).astype(np.float64))
    best, tp = 0.0, 0
    for position, label in enumerate(labels, start=1):
        tp += int(label)
        run_ends = label == 1 and (position == n or labels[position] == 0)
        if run_ends:
            best = max(best, (tp * N - (position - tp) * P) * weights[position])
    return min(best, 1.0)


@pytest.mark.parametrize("P,N", [(P, n - P) for n in range(2, 13) for P in range(1, n)])
def test_the_maximum_is_at_the_end_of_a_run_of_positives(P, N):
    labels = all_rankings(P, N)
    reference = MCC.reference_scores(labels, P, N)
    assert [run_end_maximum(row, P, N) for row in labels] == reference.tolist()


@pytest.mark.parametrize("P,N", [(3, 4000), (4000, 3), (60, 60)])
def test_the_maximum_is_at_a_run_end_on_larger_rankings_too(P, N):
    rng = np.random.default_rng(5)
    labels = np.zeros((40, P + N), np.uint8)
    for row in labels:
        row[rng.choice(P + N, P, replace=False)] = 1
    reference = MCC.reference_scores(labels, P, N)
    assert [run_end_maximum(row, P, N) for row in labels] == reference.tolist()


@pytest.mark.parametrize("P,N", [(1, 1), (3, 7), (40, 40), (5, 700), (700, 5), (37, 211)])
def test_every_cpu_kernel_scores_it_like_the_reference(P, N):
    layout = KernelLayout.for_metrics(metric_entries(["best_mcc", "tp_at_3"]), P, N)
    assert layout.columns["best_mcc"] == BASE_COLUMNS.index("best_mcc") < TP_COLUMN == layout.columns["tp_at_3"]
    labels = np.zeros((300, P + N), np.uint8)
    out = score_replicates(P, N, cell_key(3, P, N), 0, 300, layout, labels_out=labels)  # scalar or minority
    np.testing.assert_array_equal(out[:, layout.columns["best_mcc"]], MCC.reference_scores(labels, P, N))
    key0, key1 = cell_key(3, P, N)
    scalar, lanes = np.empty((300, TP_COLUMN + 1)), lane_output(300, TP_COLUMN + 1)
    simulate_block(P, N, key0, key1, 0, layout.ks, scalar, np.empty((0, 0), np.uint8), with_mcc=True)
    simulate_rows(P, N, key0, key1, 0, layout.ks, lanes, with_mcc=True)
    assert lanes.tobytes() == scalar.tobytes()


@pytest.mark.parametrize("P,N", [(4, 6), (2, 230)])  # the lane kernel, the minority-class kernel
def test_sampled_values_follow_the_enumerated_distribution(P, N):
    from tablegen.compute.kernels.minority import uses_minority_sampling

    assert uses_minority_sampling(P, N) == (P == 2)
    labels = all_rankings(P, N)
    exact = Counter(MCC.reference_scores(labels, P, N).tolist())
    R = 60_000
    layout = KernelLayout.for_metrics(metric_entries(["best_mcc"]), P, N)
    out = score_replicates(P, N, cell_key(2005, P, N), 0, R, layout)
    sampled = Counter(out[:, layout.columns["best_mcc"]].tolist())
    assert set(sampled) <= set(exact)  # every sampled value is one the enumeration lists
    values = sorted(exact)
    expected = np.array([exact[v] for v in values], float) / len(labels) * R
    observed = np.array([sampled[v] for v in values], float)
    pooled = expected >= 5  # chi-square over the values with enough expectation, the rest pooled
    if not pooled.all():
        observed = np.append(observed[pooled], observed[~pooled].sum())
        expected = np.append(expected[pooled], expected[~pooled].sum())
    assert observed.size > 5
    chi = stats.chisquare(observed, expected)
    assert chi.pvalue > 1e-4, chi


def test_simulate_cell_scores_it_with_its_exact_value():
    P, N = 4, 6
    ds = tablegen.simulate_cell(P, N, R=60_000, seed=9, metrics=["best_mcc", "auc"], Cs=[10])
    cell = ds.sel(metric="best_mcc", C=10, alpha=0.01)
    # the exact critical value from the enumeration is the cell's exact value and lies in the Monte Carlo interval
    values = np.sort(MCC.reference_scores(all_rankings(P, N), P, N))
    q = (1 - 0.01) ** (1 / 10)
    exact = values[math.ceil(q * len(values)) - 1]
    assert float(cell.exact_critical_value) == exact
    assert float(cell.ci_low) <= exact <= float(cell.ci_high)
    assert 0.0 <= float(cell.critical_value) <= 1.0


def test_lookups_simulate_it_on_request():
    answer = tablegen.critical_value("best_mcc", 30, 50, C=10, method="simulate", R=20_000, seed=3)
    assert answer.method == "simulate" and 0.0 < answer.value < 1.0
    again = tablegen.critical_value("best_mcc", 30, 50, C=10, method="simulate", R=20_000, seed=3)
    assert again.value == answer.value
    p = tablegen.p_value("best_mcc", 30, 50, C=10, score=answer.value, method="simulate", R=20_000, seed=3)
    assert p.method == "simulate" and 0.0 <= p.value <= 1.0
    exact = tablegen.critical_value("best_mcc", 30, 50, C=10, method="exact")
    assert exact.method == "exact" and answer.ci_low <= exact.value <= answer.ci_high
    assert MCC.has_exact and max(MCC.exact_cost(30, 50)) < math.inf


@pytest.mark.parametrize(("P", "N", "kernel"), [(1000, 1000, "lanes"), (20, 2000, "minority")])
def test_the_cost_model_charges_its_kernel_work_only_when_it_is_requested(P, N, kernel):
    """bench_mcc.py measured x1.18-1.19 (lanes) and x1.05-1.07 (minority) with best MCC's work: plans and the
    lookups' time guard charge it where best_mcc is asked for, and nowhere else."""
    from tablegen.compute import cost
    from tablegen.compute.kernels.minority import uses_minority_sampling

    assert uses_minority_sampling(P, N) == (kernel == "minority")
    spec = get_metric("best_mcc")  # the registry entry owns its kernel work's cost
    factor = spec.minority_cost_factor if kernel == "minority" else spec.lane_cost_factor
    assert factor > 1.0
    plain = cost.sampling_seconds(P, N, metric_entries(["auc", "tp_at_10"]))
    assert plain == cost.sampling_seconds(P, N)
    assert cost.sampling_seconds(P, N, metric_entries(["auc", "best_mcc"])) == pytest.approx(factor * plain, rel=1e-12)
    R = 10**6
    extra = (cost.cell_seconds(P, N, R, metric_entries(["auc", "best_mcc"]), exact=False, critical_pairs=0)
             - cost.cell_seconds(P, N, R, metric_entries(["auc", "tp_at_10"]), exact=False, critical_pairs=0))
    assert extra == pytest.approx(R * (factor - 1) * plain, rel=1e-9)
