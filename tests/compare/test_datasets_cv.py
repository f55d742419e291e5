"""Two algorithms from cross-validation folds (tablegen.compare.cross_validated, `tablegen compare cv`).

References: baycomp 1.0.3's CorrelatedTTest (probabilities, mean, variance and degrees of freedom stored in
tests/data/baycomp_table2/correlated.csv, script beside them); Nadeau & Bengio's corrected resampled t-test
by hand with scipy.stats.t.
"""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
from scipy import stats

from tablegen.cli.main import main
from tablegen.compare import cross_validated
from tablegen.errors import TablegenInputError
from tests.conftest import DATA


def baycomp_cases():
    with open(DATA / "baycomp_table2" / "correlated.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("row", baycomp_cases(), ids=lambda r: f"{r['case']}-{r['rope']}")
def test_correlated_t_test_equals_baycomp(row):
    x, y = [float(v) for v in row["x"].split()], [float(v) for v in row["y"].split()]
    # baycomp's (x, y): p_left = P(x better); its mean is of y - x
    result = cross_validated(x, y, runs=int(row["runs"]), rope=float(row["rope"]))
    assert (result.p_a_better, result.p_rope, result.p_b_better) == pytest.approx(
        (float(row["p_left"]), float(row["p_rope"]), float(row["p_right"])), rel=1e-9, abs=1e-12)
    assert result.mean == pytest.approx(-float(row["mean"]), rel=1e-12)
    assert result.scale ** 2 == pytest.approx(float(row["var"]), rel=1e-12) and result.df == int(row["df"])


def test_corrected_resampled_t_test_by_hand():
    rng = np.random.default_rng(3)
    x = 0.8 + 0.02 * rng.standard_normal(20)
    y = x - 0.01 + 0.015 * rng.standard_normal(20)
    result = cross_validated(x, y, runs=2)  # 2 runs of 10-fold: n_test/n_train = 1/9
    d = x - y
    t = d.mean() / math.sqrt((1 / 20 + 1 / 9) * d.var(ddof=1))
    assert result.t == pytest.approx(t, rel=1e-12)
    assert result.p_value == pytest.approx(2 * stats.t.sf(abs(t), 19), rel=1e-10)
    assert result.rho == pytest.approx(0.1) and result.folds == 20
    lower = cross_validated(1 - x, 1 - y, runs=2, higher_is_better=False)  # errors: the same comparison
    assert lower.t == pytest.approx(result.t, rel=1e-9) and lower.p_a_better == pytest.approx(result.p_a_better)


def test_equal_differences_give_a_point_posterior():
    result = cross_validated([0.75, 0.5, 0.25], [0.5, 0.25, 0.0], rope=0.01)  # d = 0.25 exactly
    assert (result.p_a_better, result.p_value, result.decision) == (1.0, 0.0, "a better")


@pytest.mark.parametrize("kwargs, match", [({"runs": 4}, "does not divide"), ({"rho": 1.0}, "rho must be"),
                                           ({"rope": -1}, "rope must be"), ({"runs": 0}, "runs must be"),
                                           ({"higher_is_better": 0}, "higher_is_better must be True or False")])
def test_bad_options_are_refused(kwargs, match):
    with pytest.raises(TablegenInputError, match=match):
        cross_validated([0.8, 0.9, 0.7, 0.75, 0.8, 0.82], [0.78, 0.88, 0.68, 0.7, 0.8, 0.8], **kwargs)


def test_command_line(tmp_path, capsys):
    path = tmp_path / "folds.csv"
    row = baycomp_cases()[0]
    x, y = row["x"].split(), row["y"].split()
    path.write_text("svm,knn\n" + "".join(f"{a},{b}\n" for a, b in zip(x, y)))
    assert main(["compare", "cv", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["a"], data["b"]) == ("svm", "knn") and data["p_a_better"] == pytest.approx(float(row["p_left"]))
    assert main(["compare", "cv", str(path)]) == 0 and "P(svm better)" in capsys.readouterr().out
    path.write_text("a,b,c\n1,2,3\n2,3,4\n")
    assert main(["compare", "cv", str(path)]) == 2 and "exactly 2 columns" in capsys.readouterr().err


@pytest.mark.parametrize("row", baycomp_cases(), ids=lambda r: f"{r['case']}-{r['rope']}")
def test_the_correlated_bayesian_t_test_by_its_name_equals_baycomp(row):
    from tablegen.compare import correlated_bayesian_ttest

    x, y = [float(v) for v in row["x"].split()], [float(v) for v in row["y"].split()]
    result = correlated_bayesian_ttest(x, y, runs=int(row["runs"]), rope=float(row["rope"]))
    assert (result.p_a_better, result.p_rope, result.p_b_better) == pytest.approx(
        (float(row["p_left"]), float(row["p_rope"]), float(row["p_right"])), rel=1e-9, abs=1e-12)
    assert result.scale ** 2 == pytest.approx(float(row["var"]), rel=1e-12) and result.df == int(row["df"])
    both = cross_validated(x, y, runs=int(row["runs"]), rope=float(row["rope"]))
    assert (result.decision, result.mean) == (both.decision, both.mean)


def test_the_corrected_resampled_t_test_by_its_name_by_hand():
    from tablegen.compare import corrected_resampled_ttest

    rng = np.random.default_rng(3)
    x = 0.8 + 0.02 * rng.standard_normal(20)
    y = x - 0.01 + 0.015 * rng.standard_normal(20)
    result = corrected_resampled_ttest(x, y, runs=2)
    d = x - y
    t = d.mean() / math.sqrt((1 / 20 + 1 / 9) * d.var(ddof=1))
    assert result.t == pytest.approx(t, rel=1e-12) and result.df == 19
    assert result.p_value == pytest.approx(2 * stats.t.sf(abs(t), 19), rel=1e-10)
    assert corrected_resampled_ttest(x, y, rho=0.2).t == pytest.approx(d.mean() / math.sqrt(
        (1 / 20 + 0.25) * d.var(ddof=1)), rel=1e-12)
    with pytest.raises(TablegenInputError, match="rho must be"):
        corrected_resampled_ttest(x, y, rho=1.5)
