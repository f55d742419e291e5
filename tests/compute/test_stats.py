"""The quantile functions of :mod:`tablegen.compute.stats` that stand in for scipy.stats's (so that a report does not
import scipy.stats): element for element the same floats as scipy.stats, on the arguments their callers pass and
at the edges (q = 0, q = 1, invalid parameters, NaN)."""

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from tablegen.compute import stats as tg_stats


def _same(ours, theirs):
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)  # NaN where NaN, every other element bit for bit


def test_binomial_quantile_is_scipy_binom_ppf_on_the_order_statistic_grid():
    rng = np.random.default_rng(1)
    n = np.round(10 ** rng.uniform(1, 8, 20_000))
    p = 10 ** rng.uniform(-7, -0.3, n.size)
    q = rng.choice([0.025, 0.975, 0.005, 0.995, 1 - 0.05 / 12], n.size)
    _same(tg_stats.binomial_quantile(q, n, p), stats.binom.ppf(q, n, p))


@pytest.mark.parametrize("q, n, p", [(0.0, 10, 0.3), (1.0, 10, 0.3), (0.5, 10, 0.0), (0.5, 10, 1.0), (0.5, 0, 0.5),
                                     (0.5, 10.5, 0.3), (0.5, -1, 0.3), (0.5, 10, 1.5), (1.5, 10, 0.3),
                                     (np.nan, 10, 0.3), (0.5, 10, np.nan)])
def test_binomial_quantile_edges_are_scipys(q, n, p):
    _same(tg_stats.binomial_quantile(q, n, p), stats.binom.ppf(q, n, p))


def test_beta_quantile_is_scipy_beta_ppf_on_clopper_pearson_arguments():
    rng = np.random.default_rng(2)
    R = np.round(10 ** rng.uniform(0.5, 7, 20_000))
    hits = np.floor(rng.uniform(0, 1, R.size) * (R + 1))
    for q in (0.025, 0.975, 0.05 / 24):
        _same(tg_stats.beta_quantile(q, hits + 1, R - hits + 1), stats.beta.ppf(q, hits + 1, R - hits + 1))


@pytest.mark.parametrize("q, a, b", [(0.0, 2, 3), (1.0, 2, 3), (0.5, 0, 3), (0.5, 2, 0), (0.5, -1, 3), (-0.1, 2, 3),
                                     (1.1, 2, 3), (np.nan, 2, 3), (0.3, 0.5, 0.5), (0.3, 1e-3, 1e4)])
def test_beta_quantile_edges_are_scipys(q, a, b):
    _same(tg_stats.beta_quantile(q, a, b), stats.beta.ppf(q, a, b))


def test_clopper_pearson_unchanged_where_hits_are_zero_or_all():
    low, high = tg_stats.clopper_pearson(np.array([0, 3, 10]), np.array([0, 3, 10]), 10)
    assert low[0] == 0.0 and high[2] == 1.0
    half = (1 - 0.95) / 2  # clopper_pearson's level, as it computes it
    _same(low[1:], stats.beta.ppf(half, [3, 10], [8, 1]))
    _same(high[:2], stats.beta.ppf(1 - half, [1, 4], [10, 7]))


@pytest.mark.parametrize("size", [1, 2, 7, 1000, 9999])
def test_linear_quantile_is_scipy_quantile(size):
    quantile = getattr(stats, "quantile", None)
    if quantile is None:
        pytest.fail("scipy.stats.quantile is missing: pyproject.toml asks for scipy >= 1.15")
    rng = np.random.default_rng(size)
    values = rng.normal(size=size).round(2)  # ties too
    levels = np.concatenate([[0.0, 1.0, 0.025, 0.975, 0.5], rng.uniform(0, 1, 200), [-0.1, 1.1, np.nan]])
    _same(tg_stats.linear_quantile(values, levels), quantile(values, levels))
    values[size // 2] = np.nan
    _same(tg_stats.linear_quantile(values, levels), quantile(values, levels))


def test_linear_quantile_of_no_values_is_nan():
    assert np.isnan(tg_stats.linear_quantile(np.array([]), np.array([0.1, 0.9]))).all()


@pytest.mark.parametrize("shape, axis", [((50,), -1), ((3, 40), 1), ((40, 3), 0)])
def test_midranks_are_scipy_rankdata(shape, axis):
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 7, size=shape).astype(float)  # many ties
    _same(tg_stats.midranks(scores, axis=axis), stats.rankdata(scores, method="average", axis=axis))
    scores[(0,) * len(shape)] = np.nan
    _same(tg_stats.midranks(scores, axis=axis), stats.rankdata(scores, method="average", axis=axis))


@pytest.mark.slow  # a new process running a report: 5 s
def test_a_report_does_not_import_scipy_stats():
    """``evaluate`` with its default metrics and methods (DeLong, bootstrap, Besag-Clifford, the verdicts' order
    statistics) answers without importing scipy.stats, whose import costs more than the answer at 10^4 items."""
    code = ("import sys, numpy as np, tablegen\n"
            "rng = np.random.default_rng(0)\n"
            "y = (rng.random(300) < 0.3).astype(int); y[:2] = (1, 0)\n"
            "scores = {f'm{j}': y * (0.5 + j) + rng.normal(size=300) for j in range(3)}\n"
            "tablegen.evaluate(y, scores, C=10)\n"
            "print('scipy.stats' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "False"
