"""The printed examples of Benavoli, Corani, Demšar & Zaffalon, "Time for a change: a tutorial for comparing
multiple classifiers through Bayesian analysis", JMLR 18(77), 2017, on their public data.

Data and printed values: the paper's companion repository (BayesianTestsML/tutorial), copied into
tests/data/benavoli2017_tutorial with the file, cell and commit of each value (README there).  Fold
accuracies of naive Bayes (nbc), AODE, hidden naive Bayes (hnb), J48 and J48 graft (j48gr) on 54 UCI data
sets, 10 runs of 10-fold cross-validation.

* Bayesian signed-rank and sign tests (:func:`bayesian_pair`, :func:`bayesian_pairs`): their Monte Carlo
  shares against ours within 4.5 combined standard errors (theirs from the draws they made, ours from ours,
  both √(p(1 − p)/S) at the pooled estimate) plus half a unit of the last printed decimal;
* correlated Bayesian t-test and corrected resampled t-test (:func:`cross_validated`): exact on both sides,
  so compared to 1e-9 relative (their Python notebook read the folds rounded to 0.01 %; their Julia
  posterior has a normal prior of variance 10⁶ on the mean, applied here in closed form).
"""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from tablegen.compare import bayesian_pair, bayesian_pairs, cross_validated
from tests.conftest import DATA

HERE = DATA / "benavoli2017_tutorial"
CLASSIFIERS = ("nbc", "aode", "hnb", "j48", "j48gr")
Z = 4.5  # standard errors allowed, as in the baycomp comparison of the 2016 data


def rows(name: str) -> list[dict]:
    with open(HERE / name, newline="") as f:
        return list(csv.DictReader(f))


def mean_accuracy() -> np.ndarray:
    """(54, 5) mean accuracies (fractions), columns in :data:`CLASSIFIERS` order."""
    table = rows("mean_accuracy.csv")
    return np.array([[float(r[c]) for c in CLASSIFIERS] for r in table])


def folds(classifier: str, dataset: str) -> np.ndarray:
    """The 100 fold accuracies (%) of one classifier on one data set, as printed in the source (3 decimals)."""
    found = [r for r in rows("folds_nbc_aode.csv") if r["classifier"] == classifier and r["dataset"] == dataset]
    assert len(found) == 1, (classifier, dataset)
    return np.array([float(found[0][f"f{k}"]) for k in range(1, 101)])


def within_monte_carlo_error(ours, row: dict, samples: int) -> None:
    theirs = np.array([float(row[k]) for k in ("p_a_better", "p_rope", "p_b_better")])
    mine = np.array(ours.probabilities)
    p = (mine + theirs) / 2
    se = np.sqrt(p * (1 - p) * (1 / samples + 1 / int(row["samples"])))
    rounding = 0.5 * 10.0 ** -int(row["decimals"]) if row["decimals"] else 0.0
    assert np.all(np.abs(mine - theirs) <= Z * se + rounding + 1e-12), (row, mine, se)


def dirichlet_rows(source: str) -> list[dict]:
    return [r for r in rows("printed_dirichlet.csv") if r["source"] == source]


def check_dirichlet_rows(source: str, samples: int) -> None:
    X = mean_accuracy()
    for row in dirichlet_rows(source):
        i, j = CLASSIFIERS.index(row["a"]), CLASSIFIERS.index(row["b"])
        ours = bayesian_pair(X[:, i], X[:, j], test=row["test"], rope=float(row["rope"]), prior=float(row["prior"]),
                             samples=samples, seed=2017)
        within_monte_carlo_error(ours, row, samples)


def test_sign_test_agrees_with_the_python_notebooks():
    check_dirichlet_rows("Bsigntest", 20_000)
    check_dirichlet_rows("The importance of the Rope", 20_000)


def test_signed_rank_test_agrees_with_the_python_notebook():
    check_dirichlet_rows("Bsignedrank", 20_000)


def test_signed_rank_table_of_every_pair_agrees_with_the_julia_notebook():
    X = mean_accuracy()
    pairs = bayesian_pairs(X, rope=0.01, prior=0.5, samples=20_000, seed=2017)
    for row in dirichlet_rows("Notebook6"):
        i, j = CLASSIFIERS.index(row["a"]), CLASSIFIERS.index(row["b"])
        within_monte_carlo_error(pairs.pair(str(i + 1), str(j + 1)), row, 20_000)


@pytest.mark.slow
def test_signed_rank_table_at_their_sample_count():
    check_dirichlet_rows("Notebook6", 150_000)


def correlated_case(row: dict):
    a = folds(row["a"], row["dataset"])[int(row["first_fold"]) - 1:int(row["last_fold"])]
    b = folds(row["b"], row["dataset"])[int(row["first_fold"]) - 1:int(row["last_fold"])]
    if row["fold_decimals"] == "2":  # the Python notebook's CSV files hold the folds rounded to 0.01 %
        a, b = np.round(a, 2), np.round(b, 2)
    return cross_validated(a / 100, b / 100, runs=int(row["runs"]), rho=float(row["rho"]), rope=float(row["rope"]))


def test_correlated_bayesian_t_test_reproduces_the_python_notebook():
    for row in rows("printed_correlated.csv"):
        if row["p_a_better"]:
            ours = correlated_case(row)
            expected = [float(row[k]) for k in ("p_a_better", "p_rope", "p_b_better")]
            np.testing.assert_allclose([ours.p_a_better, ours.p_rope, ours.p_b_better], expected, rtol=1e-9,
                                       err_msg=str(row))


def with_their_prior(mean: float, scale: float, n: int, rho: float, k0: float = 1e6) -> tuple[float, float]:
    """Posterior mean and scale under their normal prior of variance k0 on the mean (Julia
    Bttest_correlated: k0 = 10⁶, a = −1/2, b = 0), from ours (the flat-prior limit).  With A = 1'M⁻¹1 =
    n/(1 + (n − 1)ρ) for the equicorrelated M: the mean shrinks by A/(A + 1/k0), and the scale² is
    ((n − 1)A·scale² − A·mean²/(k0·A + 1)) / ((n − 1)(A + 1/k0))."""
    A = n / (1 + (n - 1) * rho)
    shrunk = mean * A / (A + 1 / k0)
    variance = ((n - 1) * A * scale**2 - A * mean**2 / (k0 * A + 1)) / ((n - 1) * (A + 1 / k0))
    return shrunk, math.sqrt(variance)


def test_correlated_t_tests_reproduce_the_julia_notebooks():
    for row in rows("printed_correlated.csv"):
        if not row["mean"]:
            continue
        ours = correlated_case(row)
        n = int(row["last_fold"]) - int(row["first_fold"]) + 1
        assert ours.df == int(row["df"]) == n - 1
        mean, scale = with_their_prior(ours.mean, ours.scale, n, ours.rho)
        np.testing.assert_allclose([mean, scale], [float(row["mean"]), float(row["sd"])], rtol=1e-9, err_msg=str(row))
        # without their prior the difference is about 1e-7 relative: the adjustment is what the check measures
        assert abs(ours.mean / float(row["mean"]) - 1) > 1e-8
        if row["p_value"]:
            assert ours.p_value == pytest.approx(float(row["p_value"]), rel=1e-9), row


def test_corrected_t_test_p_values_of_all_54_data_sets():
    """Their table of two-sided p-values (nbc vs aode, ρ = 1/10), printed to three decimals."""
    printed = rows("printed_pvalues.csv")
    table = rows("folds_nbc_aode.csv")
    assert [r["dataset"] for r in table[::2]] == [r["dataset"] for r in printed]
    for k, row in enumerate(printed):
        nbc, aode = (np.array([float(table[2 * k + c][f"f{f}"]) for f in range(1, 101)]) for c in (0, 1))
        ours = cross_validated(nbc / 100, aode / 100, runs=10)
        assert abs(ours.p_value - float(row["p_value"])) <= 0.0005 + 1e-12, (row, ours.p_value)
