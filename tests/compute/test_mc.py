"""Monte Carlo engine: determinism and agreement with the exact nulls."""

import numpy as np
import pytest
import xarray as xr

from tablegen import simulate_cell
from tablegen.compute.accumulator import tail_count_at_least
from tablegen.compute.cell import critical_values_from_tails, exact_critical_values
from tablegen.compute.exact import null_critical_value, null_tail_ge
from tablegen.compute.exact.nulls import SNAP_TOLERANCE
from tablegen.compute.mc import KernelLayout, block_tails, cell_key, merge_tails, simulate_tails, tail_capacity
from tablegen.compute.metric_nulls import null_distribution
from tablegen.compute.metrics import metric_entries
from tablegen.compute.stats import upper_tail_probability
from tablegen.compute.validation import SimulateCellArgs

SMALL = dict(P=25, N=60, R=40_000, Cs=(10, 100), alphas=(0.01, 0.05))


def test_same_seed_gives_identical_datasets():
    xr.testing.assert_identical(simulate_cell(seed=5, **SMALL), simulate_cell(seed=5, **SMALL))


TINY = dict(P=25, N=60, R=5_000, Cs=(10,), alphas=(0.01, 0.05))


@pytest.mark.parametrize("block_size", [1, 977, 4096, 5_000, 1 << 20])
def test_block_size_does_not_change_the_result(block_size):
    reference = simulate_cell(seed=5, **TINY)
    xr.testing.assert_identical(simulate_cell(seed=5, block_size=block_size, **TINY), reference)


def test_other_seed_gives_other_samples():
    first, second = simulate_cell(seed=5, **SMALL), simulate_cell(seed=6, **SMALL)
    assert not first.critical_value.equals(second.critical_value)
    assert not first.tail_quantile.equals(second.tail_quantile)


def test_dataset_schema_and_provenance():
    ds = simulate_cell(seed=5, **SMALL)
    assert ds.critical_value.dims == ("metric", "alpha", "C")
    assert ds.tail_quantile.dims == ("metric", "tail_probability")
    assert int(ds.replicates) == SMALL["R"] and int(ds.P) == 25 and int(ds.N) == 60
    assert ds.attrs["root_seed"] == 5 and "xoshiro256**" in ds.attrs["rng"]
    assert (ds.ci_low <= ds.critical_value).all() and (ds.critical_value <= ds.ci_high).all()
    assert np.isnan(ds.exact_critical_value.sel(metric="average_precision")).all()
    unresolved = ds.tail_probability < 1 / SMALL["R"]
    assert ds.tail_quantile.where(unresolved).isnull().all()
    assert not ds.tail_quantile.where(~unresolved, drop=True).isnull().any()


def test_critical_value_is_the_tail_quantile_at_its_tail_probability():
    t = float(upper_tail_probability(10, 0.01))
    ds = simulate_cell(seed=5, tail_probabilities=(t,), **SMALL)
    np.testing.assert_array_equal(ds.critical_value.sel(alpha=0.01, C=10).values,
                                  ds.tail_quantile.isel(tail_probability=0).values)


# --- Monte Carlo against exact --------------------------------------------------------------------

CELLS = [(2, 300), (300, 5), (2, 2), (3, 7), (5, 50), (10, 10), (20, 20), (20, 100), (30, 300),
         (50, 50), (60, 15), (75, 200), (100, 100), (100, 300), (120, 40), (150, 150), (200, 30),
         (250, 250), (300, 300), (7, 180), (180, 7), (40, 90), (10, 1000), (1000, 12)]
EXACT_METRICS = ("auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "tp_at_10")
CS = (10, 100, 1000)
R_CHECK = 400_000
Z_LIMIT = 4.5  # two-sided, about 330 tests: a false alarm anywhere has probability ~ 0.002


@pytest.fixture(scope="module")
def monte_carlo_vs_exact():
    rows = []
    for P, N in CELLS:
        capacity = tail_capacity(R_CHECK, CS, (0.01,), (0.01,))
        tails = simulate_tails(P, N, R_CHECK, 2005, metric_entries(EXACT_METRICS), capacity)
        _, low, high = critical_values_from_tails(
            SimulateCellArgs(P, N, R_CHECK, 2005, EXACT_METRICS, CS, (0.01,), (), 1 << 16), tails)
        exact = exact_critical_values(P, N, metric_entries(EXACT_METRICS), CS, (0.01,))
        for i, metric in enumerate(EXACT_METRICS):
            null = null_distribution(metric, P, N)
            for k, C in enumerate(CS):
                critical = null_critical_value(null, float(upper_tail_probability(C, 0.01)))
                above_critical = critical + 2 * SNAP_TOLERANCE  # means the next attainable value (spacing >> 1e-9)
                above = null_tail_ge(null, above_critical)  # exact Pr(X > m*)
                count = tail_count_at_least(tails[metric], above_critical)
                rows.append(dict(P=P, N=N, metric=metric, C=C, exact=exact[i, 0, k],
                                 low=float(low[i, 0, k]), high=float(high[i, 0, k]),
                                 count=count, probability=above))
    return rows


@pytest.mark.slow
def test_exact_value_is_inside_the_monte_carlo_ci(monte_carlo_vs_exact):
    rows = monte_carlo_vs_exact
    assert len(rows) >= 20 * len(EXACT_METRICS) * len(CS)
    inside = [r["low"] <= r["exact"] <= r["high"] for r in rows]
    misses = [r for r, ok in zip(rows, inside) if not ok]
    assert np.mean(inside) >= 0.90, misses


@pytest.mark.slow
def test_tail_frequency_at_the_exact_critical_value_passes_a_z_test(monte_carlo_vs_exact):
    tested = 0
    for r in monte_carlo_vs_exact:
        p = r["probability"]
        assert r["count"] is not None, r  # the retained tail reaches the exact critical value
        if p == 0.0:
            assert r["count"] == 0, r
            continue
        z = (r["count"] - R_CHECK * p) / np.sqrt(R_CHECK * p * (1 - p))
        assert abs(z) < Z_LIMIT, (r, z)
        tested += 1
    assert tested >= 200


def test_blocks_run_apart_and_merged_in_any_order_equal_one_run():
    P, N, R, capacity = 25, 60, 9_000, 700
    metrics = ("auc", "best_f1", "average_precision", "tp_at_10")
    layout = KernelLayout.for_metrics(metric_entries(metrics), P, N)
    key = cell_key(8, P, N)
    parts = [block_tails(P, N, key, first, min(2_500, R - first), layout, capacity)
             for first in range(0, R, 2_500)]
    whole = simulate_tails(P, N, R, 8, metric_entries(metrics), capacity)
    for merged in (merge_tails(parts), merge_tails(parts[::-1])):
        for metric in metrics:
            np.testing.assert_array_equal(merged[metric].values, whole[metric].values)
            np.testing.assert_array_equal(merged[metric].counts, whole[metric].counts)
            assert merged[metric].seen == whole[metric].seen == R
