"""Lookups: the bundled table, Table, and the module-level answers with method auto|table|exact|simulate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import zarr
from jobtools import small_config

import tablegen
from tablegen import TablegenInputError, critical_value, open_table, p_value, significance_test
from tablegen.batch.config import load_config
from tablegen.batch.job import create_job_store, run
from tablegen.compute.mc import RNG_NAME
from tablegen.compute.metric_nulls import exact_critical_value, exact_p_value
from tablegen.compute.stats import exceedance_bounds, tail_rank
from tablegen.errors import StoreError
from tablegen.store.schema import bundled_table_path

REPO = Path(__file__).resolve().parents[2]
EXACT_METRICS = ("auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "tp_at_10")


@pytest.fixture(scope="module")
def table():
    return open_table()


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    """A finished 12-cell store (P 5..20 x N 8..24, R = 40,000), written by the serial executor."""
    path = tmp_path_factory.mktemp("lookup") / "small.zarr"
    run(small_config(path), executor="serial")
    return path


# -- the bundled table --------------------------------------------------------------------------

def test_bundled_table_is_the_paper_grid_at_ten_million_rankings(table):
    ds, attrs = table.ds, table.ds.attrs
    assert attrs["complete"] and bool(ds.done.all())
    assert attrs["replicates"] == 10_000_000 and int(ds.replicates.min()) == 10_000_000
    assert ds.sizes["P"] == ds.sizes["N"] == 19
    assert list(ds.C.values) == [10, 100, 1000] and list(ds.alpha.values) == [0.01, 0.05]
    assert set(ds.metric.values) == {"auc", "best_accuracy", "best_f1", "best_balanced_accuracy",
                                     "average_precision", "tp_at_10"}
    assert attrs["command"] == "tablegen run configs/paper.yaml"
    # Written by the config kept in the repo: same result hash.
    assert attrs["config_hash"] == load_config(REPO / "configs" / "paper.yaml").result_hash


def test_bundled_table_is_small_package_data():
    files = [f for f in Path(bundled_table_path()).rglob("*") if f.is_file()]
    assert sum(f.stat().st_size for f in files) <= 20e6


def test_bundled_table_has_exact_values_where_they_are_cheap(table):
    exact = np.isfinite(table.ds.exact_critical_value.values).all(axis=(1, 2))  # (metric, P, N)
    share = dict(zip(table.ds.metric.values, exact.mean(axis=(1, 2))))
    for metric in ("best_accuracy", "best_f1", "best_balanced_accuracy", "tp_at_10"):
        assert share[metric] == 1.0
    assert share["average_precision"] == 0.0
    assert share["auc"] == 1.0  # the cells beyond the recursion's budget by the tilted inversion


# -- Table lookups ----------------------------------------------------------------------------

def test_table_critical_value_prefers_the_stored_exact_value(table):
    answer = table.critical_value("best_accuracy", 20, 20, C=10)
    assert (answer.value, answer.method, answer.replicates) == (0.775, "exact", None)
    mc = table.critical_value("average_precision", 1000, 1000, C=1000, alpha=0.05)
    stored = table.ds.sel(metric="average_precision", P=1000, N=1000, C=1000, alpha=0.05)
    assert mc.method == "table" and mc.replicates == 10_000_000 and mc.source == "bundled table"
    assert (mc.value, mc.ci_low, mc.ci_high) == (float(stored.critical_value), float(stored.ci_low),
                                                 float(stored.ci_high))
    assert mc.ci_low < mc.value < mc.ci_high


def test_table_lookups_broadcast_like_their_scalar_calls(table):
    P = np.array([[20], [300], [1000]])
    N = np.array([40, 1000])
    C = np.array([10, 1000])
    answer = table.critical_value("auc", P, N, C, alpha=0.05)
    assert answer.value.shape == answer.method.shape == (3, 2)
    pv = table.p_value("average_precision", P, N, 100, score=0.95)
    test = table.significance_test("best_f1", P, N, C, score=np.full((3, 2), 0.99))
    for i in range(3):
        for j in range(2):
            one = table.critical_value("auc", int(P[i, 0]), int(N[j]), int(C[j]), alpha=0.05)
            assert (answer.value[i, j], answer.method[i, j]) == (one.value, one.method)
            one_p = table.p_value("average_precision", int(P[i, 0]), int(N[j]), 100, score=0.95)
            assert (pv.value[i, j], pv.bound[i, j]) == (one_p.value, one_p.bound)
            one_t = table.significance_test("best_f1", int(P[i, 0]), int(N[j]), int(C[j]), score=0.99)
            assert test.significant[i, j] == one_t.significant


def test_exceedance_bounds_bracket_the_true_count_of_random_samples():
    """Independent reference: sort R samples, store Q(t) as the job does, count directly."""
    rng = np.random.default_rng(5)
    t = np.array([1e-4, 2e-4, 5e-4, 1e-3, 1e-2, 0.1])
    for trial in range(200):
        R = int(rng.integers(2_000, 20_000))
        samples = rng.integers(0, int(rng.integers(5, 400)), R) / 7.0  # ties, as in discrete metrics
        ordered = np.sort(samples)[::-1]
        ranks = [tail_rank(R, p) for p in t]
        quantiles = np.array([ordered[r - 1] if r else np.nan for r in ranks])
        for score in rng.choice(samples, 5):
            low, high = exceedance_bounds(quantiles, t, R, score)
            true = int(np.count_nonzero(samples >= score))
            assert low <= true <= high, (trial, score, low, true, high)


def test_table_p_values_bracket_the_exact_p_values(table):
    """Over exact metrics, cells and scores: the interval holds the exact p-value (>= 95%)."""
    rng = np.random.default_rng(2026)
    inside = checked = bounded = upper_bounds = 0
    for _ in range(120):
        metric = str(rng.choice(["best_accuracy", "best_f1", "best_balanced_accuracy", "tp_at_10"]))
        P, N = (int(rng.choice(table.ds.P.values)) for _ in range(2))
        C = int(rng.choice([1, 10, 114, 1000]))
        critical = exact_critical_value(metric, P, N, C=C, alpha=0.01)
        lowest = tablegen.compute.metrics.get_metric(metric).range(P, N)[0]
        for score in (critical, max(critical * 0.98, lowest)):
            exact = exact_p_value(metric, score, P, N, C)
            answer = table.p_value(metric, P, N, C, score=score)
            checked += 1
            inside += answer.ci_low <= exact <= answer.ci_high
            if answer.bound == "<":
                upper_bounds += 1
                bounded += exact <= answer.value
    assert inside / checked >= 0.95, (inside, checked)
    assert bounded / upper_bounds >= 0.95, (bounded, upper_bounds)  # "<" is a 97.5% upper bound


def test_table_p_value_beyond_the_deepest_quantile_is_a_bound_not_zero(table):
    answer = table.p_value("auc", 1000, 1000, C=1000, score=0.9)
    assert answer.bound == "<" and answer.value == answer.ci_high > 0
    # At most floor(R t) = 1 of 10^7 rankings reached it; the bound adds the sampling error on that count.
    assert answer.value > -np.expm1(1000 * np.log1p(-1e-7))
    assert answer.formatted(3) == "< 0.000557"
    shallow = table.p_value("auc", 1000, 1000, C=10, score=0.5)
    assert shallow.bound == ">" and shallow.value == shallow.ci_low
    assert shallow.value == pytest.approx(1 - 0.9 ** 10, rel=2e-3) and shallow.value < 1 - 0.9 ** 10


def test_a_table_verdict_at_the_critical_value_never_shows_a_p_value_bound_below_alpha(table):
    """The review's case: score = exact m*, not significant, so the "<" bound must not read p < alpha."""
    result = table.significance_test("auc", 200, 900, C=10, score=0.5696166666666667)
    assert not result.significant and result.p_value.bound == "<" and result.p_value.value > 0.01
    assert exact_p_value("auc", 0.5696166666666667, 200, 900, 10) <= result.p_value.value


def test_scores_and_alphas_within_rounding_are_accepted(table):
    assert p_value("best_f1", 20, 20, C=10, score=0.6666666666).value == 1.0  # 1e-10 below the minimum 2/3
    with pytest.raises(TablegenInputError, match="outside the range"):
        p_value("best_f1", 20, 20, C=10, score=0.6666)
    assert table.critical_value("auc", 20, 20, 10, np.float32(0.05)).value == \
        table.critical_value("auc", 20, 20, 10, 0.05).value
    with pytest.raises(TablegenInputError, match="C must be given"):
        table.critical_value("auc", 20, 20, None)


def test_simulation_arguments_without_simulation_are_refused():
    with pytest.raises(TablegenInputError, match=r"R applies only to simulated answers \(method 'simulate' or "
                                                 r"'auto'\), not to method='table'"):
        critical_value("auc", 20, 20, C=1000, R=1000, method="table")
    with pytest.raises(TablegenInputError, match="seed applies only to simulated answers"):
        p_value("auc", 20, 20, C=10, score=0.7, method="exact", seed=3)


def test_table_p_values_do_not_increase_with_the_score(table):
    scores = np.linspace(0.5, 1.0, 201)
    answer = table.p_value("average_precision", 300, 300, 100, score=scores)
    assert np.all(np.diff(answer.ci_low) <= 0) and np.all(np.diff(answer.ci_high) <= 0)
    assert np.all(np.diff(answer.value[answer.bound == "<"]) <= 0)


def test_table_significance_test_agrees_with_exact_verdicts(table):
    P, N, C = 100, 300, 1000
    critical = table.critical_value("best_f1", P, N, C).value
    above = table.significance_test("best_f1", P, N, C, score=critical + 1e-6)
    at = table.significance_test("best_f1", P, N, C, score=critical)
    assert above.significant and above.settled and not at.significant
    assert exact_p_value("best_f1", critical + 1e-6, P, N, C) <= 0.01 < exact_p_value("best_f1", critical, P, N, C)


def test_a_monte_carlo_verdict_inside_its_interval_is_not_settled(table):
    cv = table.critical_value("average_precision", 500, 500, 10)
    result = table.significance_test("average_precision", 500, 500, 10, score=cv.ci_high)
    assert not result.settled and "not settled" in result.sentence()
    clear = table.significance_test("average_precision", 500, 500, 10, score=min(1.0, cv.ci_high + 0.05))
    assert clear.settled and clear.significant


@pytest.mark.parametrize("call,message", [
    (lambda t: t.critical_value("auc", 25, 40, 10), r"P = 25 is not in this table .* never interpolate"),
    (lambda t: t.critical_value("auc", 20, 45, 10), r"N = 45 is not in this table"),
    (lambda t: t.critical_value("auc", 20, 40, 114),
     r"C = 114 is not in this table .* method='exact' or method='simulate'"),
    (lambda t: t.critical_value("average_precision", 20, 40, 114), r"C = 114 .* use method='simulate'$"),
    (lambda t: t.critical_value("auc", 20, 40, 10, alpha=0.1), r"alpha = 0.1 is not in this table"),
    (lambda t: t.critical_value("auc", 20, 40, 10, alpha=1.0), r"alpha must be in \(0, 1\)"),
    (lambda t: t.critical_value("auc", 0, 40, 10), "P must be an integer >= 1, got 0"),
    (lambda t: t.critical_value("auc", [20, 30.5], 40, 10), "P must be an integer >= 1, got 30.5"),
    (lambda t: t.critical_value("auc", "20", 40, 10), "P must be an integer"),
    (lambda t: t.critical_value("auc", 20, 40, 0), "C must be an integer >= 1, got 0"),
    (lambda t: t.critical_value("tp_at_5", 20, 40, 10), r"metric 'tp_at_5' is not in this table"),
    (lambda t: t.critical_value("f2", 20, 40, 10), "unknown metric 'f2'"),
    (lambda t: t.critical_value("auc", [20, 30], [40, 50, 60], 10), "broadcast"),
    (lambda t: t.p_value("auc", 20, 40, 10, score=1.01), r"score = 1.01 is outside the range of auc"),
    (lambda t: t.p_value("best_accuracy", 20, 40, 10, score=[0.9, 0.1]), r"score = 0.1 is outside the range"),
    (lambda t: t.p_value("auc", 20, 40, 10, score=np.nan), "score must be a finite number"),
    (lambda t: t.p_value("auc", 20, 40, 0, score=0.7), "C must be an integer >= 1"),
])
def test_table_rejects_bad_input(table, call, message):
    with pytest.raises(TablegenInputError, match=message):
        call(table)


# -- stores that cannot be read ---------------------------------------------------------------

def test_missing_incomplete_and_foreign_stores_are_refused(tmp_path, small_store):
    with pytest.raises(StoreError, match="does not exist"):
        open_table(tmp_path / "missing.zarr")
    create_job_store(small_config(tmp_path / "partial.zarr"))
    with pytest.raises(StoreError, match=r"incomplete \(0 of 12 cells done\).*allow_incomplete=True"):
        open_table(tmp_path / "partial.zarr")
    partial = open_table(tmp_path / "partial.zarr", allow_incomplete=True)
    with pytest.raises(TablegenInputError, match=r"cell \(P = 5, N = 8\) .* is not finished"):
        partial.critical_value("auc", 5, 8, 10)
    zarr.open_group(tmp_path / "other.zarr", mode="w").attrs["schema"] = "something-else"
    with pytest.raises(StoreError, match="not a tablegen store"):
        open_table(tmp_path / "other.zarr")


def test_any_store_answers_like_its_dataset(small_store):
    table = open_table(small_store)
    answer = table.critical_value("best_f1", 10, 16, 100, alpha=0.05)
    assert answer.method == "exact" and answer.source == str(small_store)
    assert answer.value == float(table.ds.exact_critical_value.sel(metric="best_f1", P=10, N=16, C=100, alpha=0.05))
    assert critical_value("best_f1", 10, 16, 100, 0.05, method="table", table=small_store).value == answer.value


# -- module-level answers, method="auto" ------------------------------------------------------

def test_exact_p_value_below_double_precision_is_a_bound_not_zero():
    answer = p_value("best_accuracy", 1000, 1000, C=10, score=1.0)
    assert answer.method == "exact" and answer.bound == "<" and answer.value > 0
    assert answer.formatted().startswith("< 2.225e-308")


def test_simulate_is_reproducible_reports_progress_and_covers_exact():
    calls = []
    first = critical_value("best_f1", 40, 90, C=10, method="simulate", R=200_000, seed=7,
                           progress=lambda done, total: calls.append((done, total)))
    again = critical_value("best_f1", 40, 90, C=10, method="simulate", R=200_000, seed=7)
    assert first == again and first.method == "simulate" and first.seed == 7
    assert calls[-1] == (200_000, 200_000) and len(calls) > 1
    assert first.ci_low <= exact_critical_value("best_f1", 40, 90, C=10) <= first.ci_high
    test = significance_test("best_f1", 40, 90, C=10, score=0.6, method="simulate", R=200_000, seed=7)
    assert test.critical_value == first  # one pass serves both answers, from the same rankings
    assert test.p_value.ci_low <= exact_p_value("best_f1", 0.6, 40, 90, 10) <= test.p_value.ci_high


# -- the paper's worked examples --------------------------------------------------------------

def test_text_example_auc_100_positives_300_negatives_1000_competitors_is_about_065(table):
    answer = critical_value("auc", 100, 300, C=1000, alpha=0.01)
    assert answer.method == "exact" and answer.value == pytest.approx(0.65, abs=0.01)
    stored = table.critical_value("auc", 100, 300, C=1000)
    assert stored.value == answer.value  # the table holds the same exact value
    mc = table.ds.sel(metric="auc", P=100, N=300, C=1000, alpha=0.01)
    assert float(mc.ci_low) <= answer.value <= float(mc.ci_high)


@pytest.mark.parametrize("name,P,N,C", [("KDD Cup 2001", 150, 484, 114), ("Wisconsin breast cancer", 241, 458, 10)])
def test_off_grid_examples_are_answered_exactly_and_say_so(name, P, N, C):
    for metric in EXACT_METRICS:
        answer = critical_value(metric, P, N, C=C, alpha=0.05)
        assert answer.method == "exact", (name, metric)
        result = significance_test(metric, P, N, C=C, alpha=0.05, score=answer.value)
        assert not result.significant and result.p_value.value > 0.05 and result.method == "exact"
    simulated = critical_value("average_precision", P, N, C=C, R=100_000)  # auto: off the table, simulated
    assert simulated.method == "simulate" and simulated.ci_low <= simulated.value <= simulated.ci_high
    assert (simulated.replicates, simulated.seed) == (100_000, 2005)


def test_kdd_cup_auc_exact_agrees_with_a_simulation():
    exact = critical_value("auc", 150, 484, C=114, alpha=0.05)
    simulated = critical_value("auc", 150, 484, C=114, alpha=0.05, method="simulate", R=300_000, seed=2001)
    assert simulated.ci_low <= exact.value <= simulated.ci_high


def test_results_serialise_to_json():
    result = significance_test("auc", 150, 484, C=114, score=0.7)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["significant"] is True and data["method"] == "exact" and data["p_value"]["bound"] == ""
    table_result = open_table().significance_test("average_precision", 1000, 1000, 10, score=[0.6, 0.7])
    data = json.loads(json.dumps(table_result.to_dict()))
    assert data["critical_value"]["method"] == ["table", "table"] and len(data["p_value"]["value"]) == 2


def test_public_names():
    for name in ("open_table", "Table", "significance_test", "SignificanceResult", "Answer"):
        assert name in tablegen.__all__ and hasattr(tablegen, name)


@pytest.mark.slow
def test_bundled_table_cells_are_reproduced_bit_for_bit_from_the_repo_config(table):
    """Recompute three cells of configs/paper.yaml at R = 10^7 and compare every stored variable (~10 s).

    (20, 20) and (20, 30) come from the lane kernel, (20, 1000) from the minority-class kernel.
    """
    from tablegen.batch.plan import Chunk
    from tablegen.batch.tasks import compute_chunk
    from tablegen.compute.kernels.minority import uses_minority_sampling
    from tablegen.store.zarr_store import DATA_VARIABLES

    config = load_config(REPO / "configs" / "paper.yaml")
    assert table.ds.attrs["rng"] == RNG_NAME
    for chunk in (Chunk(0, 1, 0, 2), Chunk(0, 1, 18, 19)):
        arrays = compute_chunk(config, chunk)
        stored = table.ds.isel(P=slice(chunk.p_start, chunk.p_stop), N=slice(chunk.n_start, chunk.n_stop))
        for name in DATA_VARIABLES:
            np.testing.assert_array_equal(arrays[name], stored[name].values, err_msg=name)
    assert uses_minority_sampling(20, int(table.ds.N[18])) and not uses_minority_sampling(20, 30)
