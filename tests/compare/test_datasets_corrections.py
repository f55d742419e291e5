"""Multiple-comparison adjustments (tablegen.compare.datasets.corrections): Bonferroni, Holm, Hommel,
Benjamini–Hochberg, Benjamini–Yekutieli.

References: statsmodels 0.15.0 ``multipletests`` values stored in tests/data/statsmodels_multipletests
(script beside them); Hommel's closed-testing definition (Simes' test of every intersection) enumerated by
brute force; order relations on random inputs.
"""

from __future__ import annotations

import csv
import itertools

import numpy as np
import pytest

from tablegen.compare import across_datasets, adjust_p_values
from tablegen.compare.datasets.corrections import CORRECTIONS, adjust
from tablegen.errors import TablegenInputError
from tests.conftest import DATA

STATSMODELS = {"bonferroni": "bonferroni", "holm": "holm", "hommel": "hommel", "fdr_bh": "bh", "fdr_by": "by"}


def stored():
    with open(DATA / "statsmodels_multipletests" / "expected.csv", newline="") as f:
        for row in csv.DictReader(f):
            yield (int(row["case"]), STATSMODELS[row["method"]], [float(v) for v in row["p_values"].split()],
                   [float(v) for v in row["adjusted"].split()])


@pytest.mark.parametrize("case, correction, p, expected", list(stored()),
                         ids=lambda v: str(v) if isinstance(v, (int, str)) else "")
def test_adjustments_equal_statsmodels_multipletests(case, correction, p, expected):
    assert adjust(p, correction).tolist() == pytest.approx(expected, rel=1e-12, abs=1e-15)


def hommel_by_closed_testing(p):
    """Adjusted p_i = the largest Simes p-value over all subsets holding i (closed testing, brute force)."""
    K = len(p)
    out = []
    for i in range(K):
        worst = 0.0
        others = [j for j in range(K) if j != i]
        for size in range(K):
            for subset in itertools.combinations(others, size):
                q = np.sort([p[i], *(p[j] for j in subset)])
                worst = max(worst, float(np.min(q.size * q / np.arange(1, q.size + 1))))
        out.append(min(1.0, worst))
    return out


@pytest.mark.parametrize("K", [2, 3, 5, 8])
def test_hommel_equals_closed_testing_with_simes(K):
    rng = np.random.default_rng(K)
    for _ in range(3):
        p = np.round(rng.beta(0.5, 2.0, K), 3)  # rounded: ties occur
        assert adjust(p, "hommel").tolist() == pytest.approx(hommel_by_closed_testing(p), rel=1e-12)


def test_order_relations_hold_on_random_inputs():
    rng = np.random.default_rng(11)
    for _ in range(150):
        K = int(rng.integers(1, 30))
        p = np.round(rng.beta(0.3, 1.5, K), int(rng.integers(1, 5)))
        a = {c: adjust(p, c) for c in CORRECTIONS}
        for c, values in a.items():
            assert np.all(values >= p - 1e-15) and np.all(values <= 1), c
            order = np.argsort(p, kind="stable")
            assert np.all(np.diff(values[order]) >= -1e-15), c  # adjusted values keep the raw order
        tol = 1e-12
        assert np.all(a["hommel"] <= a["holm"] + tol) and np.all(a["holm"] <= a["bonferroni"] + tol)
        assert np.all(a["bh"] <= a["holm"] + tol) and np.all(a["bh"] <= a["by"] + tol)


@pytest.mark.slow
def test_rejections_at_alpha_hold_the_family_wise_level_under_the_global_null():
    """Independent uniform p-values (all nulls true): each family-wise method rejects anything in <= alpha of
    the families (and BH's false discovery rate is then its family-wise error, <= alpha)."""
    rng = np.random.default_rng(5)
    p = rng.random((4000, 10))
    for correction in ("holm", "hommel", "bonferroni", "bh", "by"):
        rate = np.mean([np.any(adjust(row, correction) <= 0.05) for row in p])
        assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 4000), (correction, rate)


def test_across_datasets_takes_every_correction_and_names_it():
    X = np.round(np.random.default_rng(2).normal(size=(20, 4)) + np.linspace(0, 1.5, 4), 2)
    raw = [c.p_value for c in across_datasets(X, test="sign").pairwise]
    for correction, (name, _) in CORRECTIONS.items():
        result = across_datasets(X, test="sign", correction=correction)
        assert [c.adjusted_p_value for c in result.pairwise] == pytest.approx(adjust_p_values(raw, correction).tolist())
        assert f"{name}-adjusted" in result.sentence()


@pytest.mark.parametrize("bad", [[0.5, np.nan], [1.2], [-0.1]])
def test_bad_p_values_are_refused(bad):
    with pytest.raises(TablegenInputError, match="p_values"):
        adjust(bad, "bh")


def test_unknown_correction_is_refused_naming_the_choices():
    with pytest.raises(TablegenInputError, match="correction must be one of 'holm'.*'by'"):
        across_datasets([[1, 2], [2, 3], [3, 1.0]], correction="sidak")
