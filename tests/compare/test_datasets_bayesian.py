"""Bayesian sign and signed-rank tests across data sets (tablegen.compare.bayesian_pair, bayesian_pairs).

References: baycomp 1.0.3 (Benavoli, Corani, Demšar & Zaffalon's package), run independently on the data of
Benavoli, Corani & Mangili, JMLR 2016, Table 2 (values stored in tests/data/baycomp_table2, script beside
them): its probabilities agree within Monte Carlo error; the sampler's signed-rank sums against the dense
n × n double sum (baycomp's formulation) on the same weights; the posterior means against their closed
forms (Dirichlet moments).
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

from tablegen.compare import bayesian_pair, bayesian_pairs
from tablegen.compare.datasets import dirichlet
from tablegen.errors import TablegenInputError
from tests.conftest import DATA

PAPER = DATA / "benavoli2016_table2_accuracies.csv"


def paper_table():
    return np.loadtxt(PAPER, delimiter=",", comments="#", skiprows=5, usecols=range(1, 8))


def baycomp_rows():
    with open(DATA / "baycomp_table2" / "pairs.csv", newline="") as f:
        return list(csv.DictReader(f))


def agree(ours, row, samples):
    """Our shares against baycomp's, within 4.5 combined Monte Carlo standard errors (plus 1e-9); with rope 0
    baycomp's ``probs`` renormalises p_left and p_right over the draws where neither loses to the middle."""
    theirs = np.array([float(row[k]) for k in ("p_left", "p_rope", "p_right")])
    kept = 1.0
    if float(row["rope"]) == 0:
        kept = theirs[0] + theirs[2]
        theirs = np.array([theirs[0], 0.0, theirs[2]]) / kept
    mine = np.array(ours.probabilities)
    p = (mine + theirs) / 2
    se = np.sqrt(p * (1 - p) / (kept * samples) + p * (1 - p) / (kept * int(row["samples"])))
    assert np.all(np.abs(mine - theirs) <= 4.5 * se + 1e-9), (row, mine)


def check_means(ours, row):
    """The exact posterior means against baycomp's sample means (its sign test adds 1e-4 to each count)."""
    theirs = np.array([float(row[k]) for k in ("mean_left", "mean_rope", "mean_right")])
    assert np.abs(np.array(ours.mean) - theirs).max() <= 4.5 * 0.5 / np.sqrt(int(row["samples"])), row


def compare_with_baycomp(rows, samples):
    X = paper_table()
    for row in rows:
        i, j = int(row["a"][1:]) - 1, int(row["b"][1:]) - 1
        ours = bayesian_pair(X[:, i], X[:, j], test=row["test"], rope=float(row["rope"]), samples=samples, seed=3)
        agree(ours, row, samples)
        check_means(ours, row)


def test_a_few_pairs_agree_with_baycomp():
    rows = [r for r in baycomp_rows() if (r["a"], r["b"]) in (("C1", "C2"), ("C2", "C3"))]
    compare_with_baycomp(rows, 20_000)


@pytest.mark.slow
def test_every_pair_agrees_with_baycomp():
    compare_with_baycomp(baycomp_rows(), 200_000)


def dense_signed_rank(w, d, rope):
    """baycomp's formulation: Σ_{i,j} w_i w_j over Walsh sums above 2r / below −2r, ½ at equality."""
    z = np.concatenate(([0.0], d))
    sums = z[:, None] + z[None, :]
    above = (sums > 2 * rope) + 0.5 * (sums == 2 * rope)
    below = (sums < -2 * rope) + 0.5 * (sums == -2 * rope)
    return np.einsum("si,sj,ij->s", w, w, above), np.einsum("si,sj,ij->s", w, w, below)


def test_prior_strength_and_place_agree_with_baycomp():
    """baycomp's ``prior=strength`` (both tests) and ``prior=(strength, LEFT | ROPE | RIGHT)`` (sign test), stored in
    tests/data/baycomp_table2/priors.csv: the shares within Monte Carlo error, the exact means against its means."""
    X = paper_table()
    with open(DATA / "baycomp_table2" / "priors.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["place"] for r in rows} == {"a", "rope", "b"}
    for row in rows:
        i, j = int(row["a"][1:]) - 1, int(row["b"][1:]) - 1
        prior = (float(row["strength"]), row["place"]) if row["test"] == "sign" else float(row["strength"])
        ours = bayesian_pair(X[:, i], X[:, j], test=row["test"], rope=float(row["rope"]), prior=prior,
                             samples=20_000, seed=5)
        assert ours.prior == float(row["strength"]) and ours.prior_place == row["place"]
        agree(ours, row, 20_000)
        check_means(ours, row)


def test_the_prior_place_moves_the_sign_test_posterior():
    """All n differences above the ROPE: the pseudo-observation's weight s goes to the region it is placed in."""
    x, y = np.arange(1.0, 7.0), np.zeros(6)
    for place, expected in (("a", [7, 0, 0]), ("rope", [6, 1, 0]), ("b", [6, 0, 1])):
        pair = bayesian_pair(x, y, test="sign", rope=0.5, prior=(1.0, place), samples=500)
        assert pair.mean == pytest.approx(np.array(expected) / 7, abs=1e-15)
        assert pair.to_dict()["prior_place"] == place


@pytest.mark.parametrize("prior, match", [
    ((1.0, "left"), "prior's place must be 'a'"), ((0.0, "a"), "prior must be a finite number > 0"),
    ((1.0, 0), "prior's place must be"), (("1", "a"), "prior must be"),
])
def test_a_bad_prior_place_is_refused_naming_the_argument(prior, match):
    with pytest.raises(TablegenInputError, match=match):
        bayesian_pair([1, 2, 3.0], [2, 1, 3.0], test="sign", prior=prior)


def test_the_signed_rank_prior_sits_in_the_rope_as_in_baycomp():
    with pytest.raises(TablegenInputError, match="signed-rank test's prior pseudo-observation sits at 0"):
        bayesian_pair([1, 2, 3.0], [2, 1, 3.0], prior=(1.0, "a"))
    assert bayesian_pair([1, 2, 3.0], [2, 1, 3.0], prior=(0.5, "rope"), samples=500).to_dict() == \
        bayesian_pair([1, 2, 3.0], [2, 1, 3.0], prior=0.5, samples=500).to_dict()


@pytest.mark.parametrize("rope", [0.0, 0.25, 0.5])
def test_signed_rank_sums_equal_the_dense_double_sum_with_ties_at_the_rope(rope):
    rng = np.random.default_rng(4)
    d = rng.integers(-4, 5, 30) / 4  # on a grid: Walsh sums land exactly on ±2r and on 0
    w = dirichlet.weights(d.size, 0.5, 300, rng)
    draws = dirichlet.theta_draws(d, "signed_rank", rope, w)
    above, below = dense_signed_rank(w, d, rope)
    np.testing.assert_allclose(draws[:, 0], above, rtol=0, atol=1e-13)
    np.testing.assert_allclose(draws[:, 2], below, rtol=0, atol=1e-13)
    np.testing.assert_allclose(draws.sum(axis=1), 1.0, atol=1e-13)


def test_sign_draws_are_the_weights_summed_by_region():
    rng = np.random.default_rng(6)
    d = rng.integers(-3, 4, 25) / 100
    w = dirichlet.weights(d.size, 1.0, 200, rng)
    draws = dirichlet.theta_draws(d, "sign", 0.01, w)
    z = np.concatenate(([0.0], d))
    expected = np.stack([w[:, z > 0.01].sum(1), w[:, np.abs(z) <= 0.01].sum(1), w[:, z < -0.01].sum(1)], axis=1)
    np.testing.assert_allclose(draws, expected, atol=1e-14)


@pytest.mark.parametrize("test", ["signed_rank", "sign"])
def test_posterior_means_of_the_draws_match_the_closed_form(test):
    X = paper_table()
    pair = bayesian_pair(X[:, 0], X[:, 6], test=test, rope=1.0, samples=40_000, seed=8)
    sd = pair.draws.std(axis=0)
    assert np.all(np.abs(pair.draws.mean(axis=0) - np.array(pair.mean)) <= 4.5 * sd / np.sqrt(40_000) + 1e-12)


def test_every_pair_is_the_pair_alone_whatever_the_pool():
    X = paper_table()[:20, :4]
    pairs = bayesian_pairs(X, rope=1.0, samples=2000, seed=12)
    alone = bayesian_pair(X[:, 1], X[:, 3], rope=1.0, samples=2000, seed=12, names=("2", "4"))
    assert pairs.pair("2", "4").to_dict() == alone.to_dict()
    matrix = pairs.matrix()
    assert matrix[3, 1].values.tolist() == list(alone.probabilities[::-1]) and np.isnan(matrix[0, 0]).all()


def test_the_matrix_is_labelled_by_the_algorithms_names():
    """Once: matrix() returned an unlabelled array."""
    X = paper_table()[:20, :4]
    pd = pytest.importorskip("pandas")
    pairs = bayesian_pairs(pd.DataFrame(X, columns=["rf", "svm", "knn", "nb"]), rope=1.0, samples=2000, seed=12)
    matrix = pairs.matrix()
    assert matrix.dims == ("a", "b", "outcome") and matrix.shape == (4, 4, 3)
    assert list(matrix.coords["a"].values) == list(matrix.coords["b"].values) == ["rf", "svm", "knn", "nb"]
    assert list(matrix.coords["outcome"].values) == ["a better", "equivalent", "b better"]
    pair = pairs.pair("svm", "nb")
    assert matrix.sel(a="svm", b="nb").values.tolist() == list(pair.probabilities)
    assert matrix.sel(a="nb", b="svm").values.tolist() == list(pair.probabilities[::-1])
    assert float(matrix.sel(a="svm", b="nb", outcome="equivalent")) == pair.probabilities[1]
    assert np.isnan(matrix.sel(a="knn", b="knn")).all()
    assert np.asarray(matrix).shape == (4, 4, 3)  # the bare array, as matrix() returned before


def test_decisions_at_the_probability():
    better = bayesian_pair(np.linspace(0.8, 0.9, 30), np.linspace(0.7, 0.8, 30), samples=5000)
    assert (better.decision, better.winner, better.p_a_better, better.settled) == ("a better", "A", 1.0, True)
    worse = bayesian_pair(np.linspace(0.7, 0.8, 30), np.linspace(0.8, 0.9, 30), samples=5000, higher_is_better=False)
    assert worse.decision == "a better"  # lower is better: A's smaller errors win
    same = bayesian_pair(np.linspace(0.8, 0.9, 30), np.linspace(0.8, 0.9, 30) + 0.001, samples=5000)
    assert same.decision == "equivalent (ROPE)" and same.winner is None
    few = bayesian_pair([0.9, 0.8, 0.85], [0.8, 0.82, 0.84], samples=5000)
    assert few.decision == "no decision" and "no decision between A and B" in few.sentence()


def test_rope_zero_leaves_the_rope_out_as_baycomp():
    X = paper_table()
    for test in ("signed_rank", "sign"):
        pair = bayesian_pair(X[:, 0], X[:, 1], test=test, rope=0.0, samples=5000)
        assert pair.p_rope == 0.0 and pair.p_a_better + pair.p_b_better == pytest.approx(1.0)


def test_seed_none_is_reported_and_repeats():
    x, y = np.arange(10.0), np.arange(10.0)[::-1]
    first = bayesian_pair(x, y, samples=500, seed=None)
    again = bayesian_pair(x, y, samples=500, seed=first.seed)
    assert first.to_dict() == again.to_dict()


@pytest.mark.parametrize("kwargs, match", [
    ({"test": "wilcoxon"}, "test must be one of 'signed_rank', 'sign'"), ({"rope": -0.1}, "rope must be"),
    ({"prior": 0}, "prior must be"), ({"samples": 10}, "samples must be an integer >= 100"),
    ({"probability": 1.0}, "probability must be in"), ({"seed": -1}, "seed must be"),
    ({"higher_is_better": "no"}, "higher_is_better must be True or False, got 'no'"),
])
def test_bad_options_are_refused_naming_the_argument(kwargs, match):
    with pytest.raises(TablegenInputError, match=match):
        bayesian_pair([1, 2, 3.0], [2, 1, 3.0], **kwargs)
    with pytest.raises(TablegenInputError, match=match):
        bayesian_pairs([[1, 2, 3.0], [2, 1, 3.0], [3, 3, 1.0]], **kwargs)


def test_unequal_lengths_are_refused():
    with pytest.raises(TablegenInputError, match="same length"):
        bayesian_pair([1, 2, 3.0], [2, 1.0])


def test_pictures_render(tmp_path):
    pair = bayesian_pair(paper_table()[:, 0], paper_table()[:, 1], rope=1.0, samples=2000)
    pair.plot(tmp_path / "simplex.png")
    bayesian_pairs(paper_table()[:, :3], rope=1.0, samples=500).plot(tmp_path / "pairs.png")
    assert (tmp_path / "simplex.png").stat().st_size > 10_000 and (tmp_path / "pairs.png").stat().st_size > 10_000
