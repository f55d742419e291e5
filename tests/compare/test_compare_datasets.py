"""Many classifiers across many data sets: tablegen.compare.across_datasets and `tablegen compare datasets`.

References: scipy.stats (friedmanchisquare, wilcoxon, binomtest, rankdata, norm) for every statistic
and p-value; Holm and Bonferroni worked by hand; the data of Benavoli, Corani & Mangili, JMLR 2016,
Table 2 (tests/data/benavoli2016_table2_accuracies.csv) for the paper's procedure, its sub-pools
recomputed by brute force.
"""

from __future__ import annotations

import csv
import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from tablegen.cli.main import main
from tablegen.compare import across_datasets, adjust_p_values
from tablegen.errors import TablegenInputError
from tests.conftest import DATA

PAPER = DATA / "benavoli2016_table2_accuracies.csv"


def paper_table():
    X = np.loadtxt(PAPER, delimiter=",", comments="#", skiprows=5, usecols=range(1, 8))
    return X, [f"C{j}" for j in range(1, 8)]


def tied_table(rng, n, m):
    """Scores on a coarse grid, so that ties within data sets and zero differences between pairs occur."""
    return np.round(rng.normal(size=(n, m)) + np.linspace(0, 1, m), 1)


# -- statistics against scipy ---------------------------------------------------------------------
@pytest.mark.parametrize("n, m, higher", [(6, 3, True), (20, 5, False), (54, 7, True), (80, 4, True)])
def test_friedman_equals_scipy(n, m, higher):
    X = tied_table(np.random.default_rng(n * m), n, m)
    result = across_datasets(X, higher_is_better=higher)
    expected = stats.friedmanchisquare(*X.T)  # symmetric in the direction of ranking
    assert result.friedman.statistic == pytest.approx(expected.statistic, rel=1e-12)
    assert result.friedman.p_value == pytest.approx(expected.pvalue, rel=1e-10)
    assert result.friedman.df == m - 1
    ranks = stats.rankdata(-X if higher else X, axis=1)
    assert list(result.mean_ranks.values()) == pytest.approx(ranks.mean(axis=0).tolist())


@pytest.mark.parametrize("n", [8, 30, 60])  # exact (n <= 13 with ties: enumeration), asymptotic
def test_wilcoxon_pairs_equal_scipy(n):
    X = tied_table(np.random.default_rng(n), n, 4)
    result = across_datasets(X, test="wilcoxon")
    for c, (i, j) in zip(result.pairwise, itertools.combinations(range(4), 2)):
        expected = stats.wilcoxon(X[:, i], X[:, j], zero_method="wilcox", correction=False, method="auto")
        assert (c.a, c.b) == (str(i + 1), str(j + 1))
        assert c.statistic == expected.statistic and c.p_value == pytest.approx(expected.pvalue, rel=1e-12)
        d = X[:, i] - X[:, j]
        assert (c.wins, c.losses, c.ties) == (np.sum(d > 0), np.sum(d < 0), np.sum(d == 0))


def test_wilcoxon_exact_without_ties_equals_scipy_exact():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    for c, (i, j) in zip(across_datasets(X).pairwise, itertools.combinations(range(3), 2)):
        assert c.p_value == pytest.approx(stats.wilcoxon(X[:, i], X[:, j], method="exact").pvalue, rel=1e-12)


def test_sign_pairs_equal_scipy_binomtest():
    X = tied_table(np.random.default_rng(5), 25, 4)
    result = across_datasets(X, test="sign", higher_is_better=False)
    for c, (i, j) in zip(result.pairwise, itertools.combinations(range(4), 2)):
        d = X[:, j] - X[:, i]  # lower is better: a wins where its score is smaller
        wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
        assert (c.statistic, c.wins, c.losses) == (wins, wins, losses)
        assert c.p_value == pytest.approx(stats.binomtest(wins, wins + losses, 0.5).pvalue, rel=1e-12)
        assert c.better == (c.a if wins > losses else c.b if losses > wins else None)


def test_direction_follows_higher_is_better():
    X = np.array([[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.95, 0.5], [0.6, 0.4], [0.99, 0.0]])
    assert across_datasets(X).pairwise[0].better == "1"
    assert across_datasets(X, higher_is_better=False).pairwise[0].better == "2"
    assert across_datasets(X).ranking() == ["1", "2"]


def test_identical_algorithms_give_p_one():
    X = np.tile(np.arange(5.0)[:, None], (1, 3))
    result = across_datasets(X)
    assert result.friedman.p_value == 1.0
    assert all(c.p_value == 1.0 and not c.significant and c.better is None for c in result.pairwise)


# -- family-wise corrections, by hand -------------------------------------------------------------
def test_holm_and_bonferroni_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    # Bonferroni: 4 p.  Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04,
    # then the running maximum 0.02, 0.03, 0.06, 0.06, back in the original order.
    assert adjust_p_values(p, "bonferroni").tolist() == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert adjust_p_values(p, "holm").tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert adjust_p_values([0.5, 0.6], "bonferroni").tolist() == [1.0, 1.0]  # capped at 1


def test_decisions_use_the_adjusted_p_values():
    X = tied_table(np.random.default_rng(11), 40, 5)
    for correction in ("holm", "bonferroni"):
        result = across_datasets(X, correction=correction, alpha=0.1)
        raw = [c.p_value for c in result.pairwise]
        adjusted = adjust_p_values(raw, correction)
        assert [c.adjusted_p_value for c in result.pairwise] == pytest.approx(adjusted.tolist())
        assert [c.significant for c in result.pairwise] == [bool(a <= 0.1) for a in adjusted]


# -- the paper's data and procedure (Benavoli, Corani & Mangili 2016) -------------------------------
def mean_ranks_verdict(X, pool, a, b, alpha, law="bonferroni"):
    """The paper's mean-ranks test of columns a, b inside the pool of columns, by brute force: the Bonferroni z
    test, or Nemenyi's (studentized range, infinite df: Pr(Q > sqrt(2) z) <= alpha)."""
    ranks = stats.rankdata(-X[:, pool], axis=1).mean(axis=0)
    m, n = len(pool), X.shape[0]
    z = abs(ranks[pool.index(a)] - ranks[pool.index(b)]) / np.sqrt(m * (m + 1) / (6 * n))
    if law == "nemenyi":
        return bool(stats.studentized_range.sf(np.sqrt(2) * z, m, np.inf) < alpha)
    return z > stats.norm.isf(alpha / (m * (m - 1)))


def test_paper_data_friedman_and_mean_ranks():
    X, names = paper_table()
    result = across_datasets(PAPER, mean_ranks_posthoc=True)
    assert result.algorithms == tuple(names) and result.n == 54 and result.datasets[0] == "anneal"
    assert result.friedman.statistic == pytest.approx(stats.friedmanchisquare(*X.T).statistic, rel=1e-12)
    # What the procedure gives on the paper's table (listed in the issue note): chi2 = 19.20 on 6 df.
    assert round(result.friedman.statistic, 2) == 19.20 and round(result.friedman.p_value, 4) == 0.0038
    assert result.ranking() == ["C3", "C2", "C6", "C5", "C1", "C7", "C4"]
    assert [round(result.mean_ranks[a], 3) for a in result.ranking()] == [3.343, 3.574, 3.759, 3.991, 4.139, 4.306,
                                                                          4.889]
    assert {(c.a, c.b) for c in result.significant_pairs()} == {("C2", "C4"), ("C3", "C4"), ("C4", "C6")}


@pytest.mark.parametrize("law", ["nemenyi", "bonferroni"])
def test_paper_mean_ranks_flips_match_brute_force_subpools(law):
    X, names = paper_table()
    result = across_datasets(X, mean_ranks_posthoc=True, mean_ranks_law=law)
    se = np.sqrt(7 * 8 / (6 * 54))
    for c in result.mean_ranks_posthoc:
        a, b = int(c.a) - 1, int(c.b) - 1
        others = [j for j in range(7) if j not in (a, b)]
        verdicts = [mean_ranks_verdict(X, sorted([a, b, *S]), a, b, 0.05, law)
                    for r in range(6) for S in itertools.combinations(others, r)]
        assert c.subpools == len(verdicts) == 32
        sizes = [r + 2 for r in range(6) for _ in itertools.combinations(others, r)]
        assert c.by_pool_size == tuple((k, sum(v for v, s in zip(verdicts, sizes) if s == k), math.comb(5, k - 2))
                                       for k in range(2, 8))
        assert c.significant == mean_ranks_verdict(X, list(range(7)), a, b, 0.05, law) and c.law == law
        assert c.flips == sum(v != c.significant for v in verdicts)
        assert c.z == pytest.approx(abs(c.mean_rank_difference) / se)
        assert c.critical_z == pytest.approx(stats.norm.isf(0.05 / 42) if law == "bonferroni" else
                                             stats.studentized_range.isf(0.05, 7, np.inf) / np.sqrt(2))
    by_pair = {(c.a, c.b): c for c in result.mean_ranks_posthoc}
    # The paper's point on its own data, by either law: C2 vs C4 differs in the full pool but not in
    # {C1, C2, C4, C5}; C4 vs C6 does not differ in the full pool but does when compared alone.
    nemenyi = law == "nemenyi"
    assert by_pair[("2", "4")].significant and by_pair[("2", "4")].flips == (5 if nemenyi else 6)
    assert by_pair[("2", "4")].example_pool == ("1", "5")
    assert not by_pair[("4", "6")].significant and by_pair[("4", "6")].flips == (24 if nemenyi else 20)
    assert by_pair[("4", "6")].example_pool == ()
    assert sum(1 for c in result.mean_ranks_posthoc if c.flips) == 4
    # the verdict on each pair by pool size (the paper's Table 1 layout), reachable from the public result
    assert by_pair[("2", "4")].by_pool_size == ((2, 1, 1), (3, 5, 5), (4, 7, 10), (5, 9, 10),
                                                (6, 4 if nemenyi else 3, 5), (7, 1, 1))
    assert by_pair[("4", "6")].to_dict()["by_pool_size"][3] == {"size": 5, "significant": 7 if nemenyi else 5,
                                                                 "pools": 10}


NEMENYI = DATA / "nemenyi"


def _oracle(name):
    with open(NEMENYI / name) as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("case", sorted({row["case"] for row in _oracle("expected_p.csv")}))
def test_nemenyi_equals_scikit_posthocs_and_autorank(case):
    """p-values of every pair as scikit-posthocs' posthoc_nemenyi_friedman, the critical difference as autorank's
    (statsmodels' approximate qsturng: within 1e-4 here) and Demšar's formula (tests/data/nemenyi/nemenyi.py)."""
    result = across_datasets(NEMENYI / "cases" / f"{case}.csv", mean_ranks_posthoc=True)
    by_pair = {(c.a, c.b): c for c in result.mean_ranks_posthoc}
    for row in _oracle("expected_p.csv"):
        if row["case"] == case:
            c = by_pair[row["a"], row["b"]]
            assert c.adjusted_p_value == pytest.approx(float(row["p_value"]), rel=1e-9, abs=1e-13)
            assert c.significant == (float(row["p_value"]) < result.alpha)
    for row in _oracle("expected_cd.csv"):
        if row["case"] == case:
            alpha, k, n = float(row["alpha"]), int(row["k"]), int(row["n"])
            cd = across_datasets(NEMENYI / "cases" / f"{case}.csv", mean_ranks_posthoc=True,
                                 alpha=alpha).critical_difference()
            assert (k, n) == (result.m, result.n) and cd == pytest.approx(float(row["critical_difference"]),
                                                                          rel=5e-4)
            assert cd == pytest.approx(stats.studentized_range.isf(alpha, k, np.inf) * np.sqrt(k * (k + 1) / (12 * n)))


def test_nemenyi_separates_a_pair_the_bonferroni_z_test_does_not():
    """Ranks A = 1x5 then 2x5, C = 2x5 then 1x5, B = 3, D = 4 on 10 data sets.  Nemenyi's CD is 1.483
    and A-B (mean ranks 1.5 and 3) differs, p = 0.046 (scikit-posthocs); the Bonferroni z test's CD is 1.523 and
    A-B does not differ (p = 0.056)."""
    result = across_datasets(NEMENYI / "cases" / "issue38.csv", mean_ranks_posthoc=True)
    ab = next(c for c in result.mean_ranks_posthoc if (c.a, c.b) == ("A", "B"))
    assert round(result.critical_difference(), 3) == 1.483 and result.mean_ranks_law == "nemenyi"
    assert ab.significant and round(ab.adjusted_p_value, 3) == 0.046 and ab.law == "nemenyi"
    bonferroni = across_datasets(NEMENYI / "cases" / "issue38.csv", mean_ranks_posthoc=True,
                                 mean_ranks_law="bonferroni")
    ab = next(c for c in bonferroni.mean_ranks_posthoc if (c.a, c.b) == ("A", "B"))
    assert round(bonferroni.critical_difference(), 3) == 1.523 and not ab.significant
    assert round(ab.adjusted_p_value, 3) == 0.056
    assert "Nemenyi (studentized range), critical difference 1.483" in result.sentence()
    data = result.to_dict()
    assert data["mean_ranks_law"] == "nemenyi" and round(data["critical_difference"], 3) == 1.483


def test_pairwise_verdicts_do_not_depend_on_the_pool():
    X, _ = paper_table()
    full = {(c.a, c.b): c.p_value for c in across_datasets(X).pairwise}
    for pool in ([1, 3], [0, 1, 3, 4], [1, 2, 3, 5, 6]):
        sub = across_datasets(X[:, pool])
        for c in sub.pairwise:
            a, b = pool[int(c.a) - 1] + 1, pool[int(c.b) - 1] + 1
            assert c.p_value == full[(str(a), str(b))]


# -- inputs -------------------------------------------------------------------------------------
def test_dataframe_csv_and_array_agree(tmp_path):
    pd = pytest.importorskip("pandas")
    X, names = paper_table()
    frame = pd.read_csv(PAPER, comment="#").set_index("dataset")
    from_frame, from_array = across_datasets(frame).to_dict(), across_datasets(X).to_dict()
    assert from_frame["algorithms"] == names and from_frame["datasets"][:2] == ["anneal", "audiology"]
    assert [c["p_value"] for c in from_frame["pairwise"]] == [c["p_value"] for c in from_array["pairwise"]]
    with_column = across_datasets(pd.read_csv(PAPER, comment="#")).to_dict()
    assert with_column["datasets"] == from_frame["datasets"]
    plain = tmp_path / "plain.csv"
    plain.write_text("a,b,c\n1,2,3\n2,3,1\n3,1,2.5\n")
    assert across_datasets(plain).datasets == ("1", "2", "3")


@pytest.mark.parametrize("table, message", [
    ([[1, 2, 3], [1, 2]], "ragged"),
    ([[1, 2], [np.nan, 3]], "missing or non-finite value .* data set '2', algorithm '1'"),
    ([[1], [2], [3]], "1 algorithm"),
    ([[0.9, 0.8, 0.7]], "1 data set"),
    ([1, 2, 3], "2-D table"),
    ([["a", "b"], ["c", "d"]], "2-D table of numbers"),
])
def test_bad_tables_are_refused(table, message):
    with pytest.raises(TablegenInputError, match=message):
        across_datasets(table)


@pytest.mark.parametrize("text, message", [
    ("dataset,a,b\nx,1,2\ny,3\n", "line 3: 2 fields where the header has 3"),
    ("dataset,a,b\nx,1,2\ny,3,\n", "data set y, column 'b': missing value"),
    ("dataset,a,b\nx,1,2\ny,3,NaN\n", "missing or non-finite"),
    ("dataset,a\nx,1\ny,2\n", "1 algorithm"),
    ("dataset,a,b\nx,1,2\n", "1 data set"),
    ("dataset,a,a\nx,1,2\ny,1,2\n", "repeats the column name"),
])
def test_bad_csv_files_are_refused(tmp_path, text, message):
    path = tmp_path / "results.csv"
    path.write_text(text)
    with pytest.raises(TablegenInputError, match=message):
        across_datasets(path)


@pytest.mark.parametrize("kwargs, message", [
    ({"test": "t"}, "test must be one of"), ({"correction": "fdr"}, "correction must be one of"),
    ({"alpha": 1.5}, "alpha must be in"), ({"higher_is_better": "yes"}, "higher_is_better must be True or False"),
    ({"mean_ranks_law": "dunn"}, "mean_ranks_law must be one of 'nemenyi', 'bonferroni'"),
])
def test_bad_options_are_refused(kwargs, message):
    with pytest.raises(TablegenInputError, match=message):
        across_datasets([[1, 2], [3, 4]], **kwargs)


def test_mean_ranks_posthoc_refuses_pools_too_large_to_enumerate():
    X = np.random.default_rng(0).normal(size=(5, 19))
    assert across_datasets(X).m == 19  # the recommended tests have no such limit
    with pytest.raises(TablegenInputError, match="mean_ranks_posthoc: counting sub-pools needs m <= 18"):
        across_datasets(X, mean_ranks_posthoc=True)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(TablegenInputError, match="results table .*nope.csv: cannot read it"):
        across_datasets(tmp_path / "nope.csv")


# -- the command line -----------------------------------------------------------------------------
def test_cli_text_and_json(capsys):
    assert main(["compare", "datasets", str(PAPER), "--mean-ranks-posthoc"]) == 0
    text = capsys.readouterr().out
    assert "Friedman test: chi2 = 19.2025, df = 6, p = 0.00383" in text
    assert "Mean ranks (1 = best): C3 3.343, C2 3.574" in text
    assert "C3 vs C4" in text and "C3 better than C4" in text
    assert "5 of 32  {C2, C4, C1, C5}" in text  # Nemenyi's law (6 of 32 by the Bonferroni z test)
    assert "Mean-ranks post-hoc test, Nemenyi (studentized range), critical difference of mean ranks 1.226" in text
    assert main(["compare", "datasets", str(PAPER), "--mean-ranks-posthoc", "--mean-ranks-law", "bonferroni"]) == 0
    text = capsys.readouterr().out
    assert "6 of 32  {C2, C4, C1, C5}" in text and "Bonferroni z (all pairs), critical difference of mean " in text
    assert main(["compare", "datasets", str(PAPER), "--json", "--test", "sign", "--correction", "bonferroni"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["test"] == "sign" and data["correction"] == "bonferroni" and len(data["pairwise"]) == 21
    assert data["mean_ranks_posthoc"] is None
    assert main(["compare", "datasets", str(PAPER), "--json", "--lower-is-better"]) == 0
    assert json.loads(capsys.readouterr().out)["ranking"][0] == "C4"  # accuracies read as errors: C4 "best"


def test_cli_bad_input_exits_2(tmp_path, capsys):
    path = tmp_path / "r.csv"
    path.write_text("dataset,a\nx,1\ny,2\n")
    assert main(["compare", "datasets", str(path)]) == 2
    assert "1 algorithm(s)" in capsys.readouterr().err


@pytest.mark.slow  # matplotlib's import and one figure: ~2 s
def test_cli_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "pairs.png"
    assert main(["compare", "datasets", str(PAPER), "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"wrote {out}" in capsys.readouterr().out
    assert main(["compare", "datasets", str(PAPER), "--plot", str(tmp_path / "no" / "x.png")]) == 2
    assert "--plot" in capsys.readouterr().err
