"""Many classifiers across many data sets (Benavoli, Corani & Mangili, JMLR 17(5), 2016).

On an (n data sets × m algorithms) table of scores:

1. the **Friedman test** (omnibus): ranks within each data set (1 = best, ties get their average
   rank), χ²_F = 12n/(m(m+1)) Σ_j (R̄_j − (m+1)/2)², divided by the tie correction
   1 − Σ(t³ − t)/(n m (m² − 1)), against χ² with m − 1 degrees of freedom (as
   ``scipy.stats.friedmanchisquare``, which it equals for m >= 3; m = 2 is allowed here);
2. **every pair** by a test whose outcome depends only on the two algorithms compared: the Wilcoxon
   signed-rank test (default) or the sign test, with family-wise error control over the
   m(m − 1)/2 pairs by Holm's step-down method (default) or Bonferroni;
3. the **mean ranks**, for information; and on request the mean-ranks post-hoc test (Nemenyi's, by the
   studentized range, or the Bonferroni z test; :mod:`tablegen.compare.datasets.mean_ranks`), to show how its
   verdicts depend on the pool.

scipy options, stated: ``scipy.stats.wilcoxon(a, b, zero_method="wilcox", correction=False,
alternative="two-sided", method="auto")`` — zero differences are dropped (Wilcoxon's convention);
with n <= 50 nonzero differences and no ties among them the p-value is exact, with ties or zeros
scipy enumerates all sign flips when n <= 13 and uses the tie-corrected normal approximation
otherwise (scipy's documented rules); if every difference is zero the p-value is 1.  The sign test
is ``scipy.stats.binomtest(wins, wins + losses, 0.5)`` (two-sided, exact): ties are dropped, and a
pair with no untied data set has p = 1.  A pair is significant when its adjusted p-value is <= alpha.
"""

from __future__ import annotations

import logging
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from tablegen.compare.datasets.corrections import CORRECTIONS as _CORRECTIONS
from tablegen.compare.datasets.corrections import adjust
from tablegen.compare.datasets.results_table import results_table
from tablegen.compare.datasets.validation import check_choice, check_correction, check_flag
from tablegen.compute.validation import check_alpha

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

logger = logging.getLogger(__name__)

TESTS = ("wilcoxon", "sign")
CORRECTIONS = tuple(_CORRECTIONS)
TEST_NAMES = {"wilcoxon": "Wilcoxon signed-rank", "sign": "sign"}


@dataclass(frozen=True)
class FriedmanResult:
    """The Friedman test: chi-square statistic (tie-corrected), degrees of freedom and p-value."""

    statistic: float
    df: int
    p_value: float


@dataclass(frozen=True)
class PairwiseComparison:
    """One pair by the chosen test.

    Attributes
    ----------
    a, b : str
        The algorithms (in the table's column order).
    statistic : float
        Wilcoxon: min(W+, W−) over the nonzero differences (scipy's two-sided statistic); sign: the
        number of data sets on which ``a`` is better.
    p_value, adjusted_p_value : float
        Raw two-sided p-value and its adjustment by the chosen correction.
    significant : bool
        adjusted_p_value <= alpha.
    better : str or None
        The algorithm the data favour (larger signed-rank sum, or more wins); None if neither.
    wins, losses, ties : int
        Data sets on which ``a`` is better than, worse than, equal to ``b``.
    """

    a: str
    b: str
    statistic: float
    p_value: float
    adjusted_p_value: float
    significant: bool
    better: str | None
    wins: int
    losses: int
    ties: int


def adjust_p_values(p_values: ArrayLike, correction: str = "holm") -> np.ndarray:
    """Adjusted p-values: family-wise (Holm, Bonferroni, Hommel) or false discovery rate (Benjamini–Hochberg
    ``"bh"``, Benjamini–Yekutieli ``"by"``); the formulas are in :mod:`tablegen.compare.datasets.corrections`.

    Bonferroni: min(1, K p).  Holm: sort ascending, p_(i) -> max_{j <= i} min(1, (K − j + 1) p_(j)).
    Rejecting where the adjusted value is <= alpha controls the family-wise error (the false discovery
    rate for ``"bh"`` and ``"by"``) at alpha.

    Examples
    --------
    >>> adjust_p_values([0.01, 0.04, 0.03], "holm").tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_p_values([0.01, 0.04, 0.03], "bonferroni").round(2).tolist()
    [0.03, 0.12, 0.09]
    >>> adjust_p_values([0.01, 0.04, 0.03], "bh").round(2).tolist()
    [0.03, 0.04, 0.04]
    """
    return adjust(p_values, correction)


def rank_matrix(X: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Ranks within each row (data set), 1 = best, ties sharing their average rank."""
    from scipy.stats import rankdata

    return rankdata(-X if higher_is_better else X, axis=1)


def friedman_test(X: np.ndarray, higher_is_better: bool = True) -> FriedmanResult:
    """The Friedman test on an (n, m) table (see the module docstring).

    Examples
    --------
    >>> X = np.array([[1, 2, 3], [1, 3, 2], [1, 2, 3], [2, 1, 3.]])
    >>> round(friedman_test(X).statistic, 3)
    4.5
    """
    from scipy.stats import chi2

    n, m = X.shape
    ranks = rank_matrix(X, higher_is_better)
    rank_sums = ranks.sum(axis=0)
    statistic = 12.0 / (n * m * (m + 1)) * np.sum(rank_sums ** 2) - 3.0 * n * (m + 1)
    tie_sum = sum(float(np.sum(c ** 3 - c)) for c in (np.unique(row, return_counts=True)[1] for row in X))
    correction = 1.0 - tie_sum / (n * m * (m * m - 1))
    if correction <= 0:  # every data set ties every algorithm: no evidence of any difference
        return FriedmanResult(0.0, m - 1, 1.0)
    statistic /= correction
    return FriedmanResult(float(statistic), m - 1, float(chi2.sf(statistic, m - 1)))


def _wilcoxon(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """(statistic, p-value, W+ − W−) of the two-sided signed-rank test with the options stated above."""
    from scipy.stats import rankdata, wilcoxon

    d = x - y
    nonzero = d[d != 0]
    if nonzero.size == 0:
        return 0.0, 1.0, 0.0
    ranks = rankdata(np.abs(nonzero))
    lean = float(ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum())
    result = wilcoxon(x, y, zero_method="wilcox", correction=False, alternative="two-sided", method="auto")
    return float(result.statistic), float(result.pvalue), lean


def _sign(wins: int, losses: int) -> tuple[float, float, float]:
    from scipy.stats import binomtest

    if wins + losses == 0:
        return float(wins), 1.0, 0.0
    return float(wins), float(binomtest(wins, wins + losses, 0.5).pvalue), float(wins - losses)


def pairwise_tests(X, names, test="wilcoxon", correction="holm", alpha=0.05, higher_is_better=True):
    """Every pair of columns of X by ``test``, adjusted by ``correction`` (see the module docstring)."""
    sign = 1.0 if higher_is_better else -1.0
    rows = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            d = sign * (X[:, i] - X[:, j])
            wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
            stat, p, lean = _wilcoxon(sign * X[:, i], sign * X[:, j]) if test == "wilcoxon" else _sign(wins, losses)
            better = names[i] if lean > 0 else names[j] if lean < 0 else None
            rows.append((i, j, stat, p, better, wins, losses, len(d) - wins - losses))
    adjusted = adjust_p_values([r[3] for r in rows], correction)
    return tuple(PairwiseComparison(names[i], names[j], stat, p, float(adj), bool(adj <= alpha), better, w, lo, t)
                 for (i, j, stat, p, better, w, lo, t), adj in zip(rows, adjusted))


@dataclass(frozen=True)
class AcrossDatasetsResult:
    """What :func:`across_datasets` found.

    Attributes
    ----------
    algorithms, datasets : tuple of str
        Column and row names (data sets ``"1"``, ``"2"``, … when the table had none).
    test, correction, alpha, higher_is_better :
        The options used.
    friedman : FriedmanResult
    mean_ranks : dict
        Algorithm -> mean rank (1 = best), in the table's column order.
    pairwise : tuple of PairwiseComparison
        Every pair, in column order.
    mean_ranks_posthoc : tuple of MeanRanksComparison or None
        Only with ``mean_ranks_posthoc=True`` (its law: :attr:`mean_ranks_law`).
    mean_scores : dict or None
        Algorithm -> mean score over the data sets.

    Examples
    --------
    >>> X = [[0.90, 0.80, 0.78], [0.85, 0.80, 0.82], [0.95, 0.70, 0.72], [0.80, 0.78, 0.60], [0.91, 0.81, 0.79],
    ...      [0.88, 0.86, 0.87], [0.93, 0.75, 0.74], [0.87, 0.83, 0.85], [0.92, 0.79, 0.80], [0.89, 0.84, 0.81]]
    >>> result = across_datasets(X)
    >>> result.n, result.m, result.mean_ranks, result.ranking()
    (10, 3, {'1': 1.0, '2': 2.5, '3': 2.5}, ['1', '2', '3'])
    >>> [(c.a, c.b, c.better, c.wins, c.losses, round(c.adjusted_p_value, 4)) for c in result.pairwise]
    [('1', '2', '1', 10, 0, 0.0059), ('1', '3', '1', 10, 0, 0.0059), ('2', '3', '2', 5, 5, 0.5352)]
    >>> [(c.a, c.b) for c in result.significant_pairs()]
    [('1', '2'), ('1', '3')]
    """

    algorithms: tuple
    datasets: tuple
    test: str
    correction: str
    alpha: float
    higher_is_better: bool
    friedman: FriedmanResult
    mean_ranks: dict
    pairwise: tuple
    mean_ranks_posthoc: tuple | None = None
    mean_scores: dict | None = None

    @property
    def n(self) -> int:
        """Number of data sets."""
        return len(self.datasets)

    @property
    def m(self) -> int:
        """Number of algorithms."""
        return len(self.algorithms)

    @property
    def test_name(self) -> str:
        """The pairwise test's name in words ("Wilcoxon signed-rank" or "sign")."""
        return TEST_NAMES[self.test]

    @property
    def correction_name(self) -> str:
        """The correction in words ("Holm", "Benjamini-Hochberg", ...)."""
        return _CORRECTIONS[self.correction][0]

    @property
    def mean_ranks_law(self) -> str | None:
        """The law of the mean-ranks post-hoc test (``"nemenyi"``, ``"bonferroni"``), None without it."""
        return None if not self.mean_ranks_posthoc else self.mean_ranks_posthoc[0].law

    def critical_difference(self) -> float | None:
        """The mean-ranks test's critical difference of mean ranks (Demšar 2006 for Nemenyi), None without it.

        Examples
        --------
        >>> X = np.tile([[4.0, 3, 2, 1]], (10, 1))
        >>> round(across_datasets(X, mean_ranks_posthoc=True).critical_difference(), 3)
        1.483
        """
        from tablegen.compare.datasets.mean_ranks import critical_difference

        law = self.mean_ranks_law
        return None if law is None else critical_difference(self.m, self.n, self.alpha, law)

    def ranking(self) -> list[str]:
        """Algorithms from the best mean rank to the worst."""
        return sorted(self.algorithms, key=lambda a: (self.mean_ranks[a], self.algorithms.index(a)))

    def adjusted_p_matrix(self, order: Sequence[str] | None = None) -> np.ndarray:
        """(m, m) adjusted p-values of the pairwise test (NaN on the diagonal), rows in ``order``."""
        order = list(order or self.algorithms)
        where = {a: i for i, a in enumerate(order)}
        matrix = np.full((len(order), len(order)), np.nan)
        for c in self.pairwise:
            matrix[where[c.a], where[c.b]] = matrix[where[c.b], where[c.a]] = c.adjusted_p_value
        return matrix

    def significant_pairs(self) -> list[PairwiseComparison]:
        """The pairs whose adjusted p-value is <= alpha."""
        return [c for c in self.pairwise if c.significant]

    def sentence(self) -> str:
        """The verdicts in plain words."""
        f = self.friedman
        omnibus = (f"Friedman test over {self.m} algorithms on {self.n} data sets: chi2 = {f.statistic:.4g} "
                   f"(df {f.df}), p = {f.p_value:.3g}"
                   + (f", so the algorithms do not all perform alike at alpha = {self.alpha:g}."
                      if f.p_value <= self.alpha else f": no evidence at alpha = {self.alpha:g} that they differ."))
        found = self.significant_pairs()
        pairs = (f" Pairwise {self.test_name} tests, {self.correction_name}-adjusted: "
                 f"{len(found)} of {len(self.pairwise)} pairs differ at alpha = {self.alpha:g}")
        detail = "; ".join(f"{c.better} beats {c.b if c.better == c.a else c.a} (adjusted p = {c.adjusted_p_value:.3g})"
                           for c in sorted(found, key=lambda c: c.adjusted_p_value))
        text = omnibus + pairs + (f": {detail}." if found else ".")
        if self.mean_ranks_posthoc is not None:
            from tablegen.compare.datasets.mean_ranks import LAWS

            flipped = [c for c in self.mean_ranks_posthoc if c.flips]
            text += (f" The mean-ranks post-hoc test ({LAWS[self.mean_ranks_law]}, critical difference "
                     f"{self.critical_difference():.3f}; shown only to expose its dependence on the pool) changes its "
                     f"verdict with the choice of the other algorithms for {len(flipped)} of "
                     f"{len(self.mean_ranks_posthoc)} pairs.")
        return text

    def to_dict(self) -> dict:
        """JSON-ready fields (strict JSON: None where a number does not exist)."""
        from tablegen.common.outputs import json_ready

        data = {"algorithms": list(self.algorithms), "datasets": list(self.datasets), "n": self.n, "m": self.m,
                "test": self.test, "correction": self.correction, "alpha": self.alpha,
                "higher_is_better": self.higher_is_better, "friedman": asdict(self.friedman),
                "mean_ranks": dict(self.mean_ranks), "mean_scores": self.mean_scores, "ranking": self.ranking(),
                "pairwise": [asdict(c) for c in self.pairwise],
                "mean_ranks_posthoc": None if self.mean_ranks_posthoc is None
                else [c.to_dict() for c in self.mean_ranks_posthoc],
                "mean_ranks_law": self.mean_ranks_law, "critical_difference": self.critical_difference()}
        return json_ready(data)

    def plot(self, path: str | os.PathLike[str] | None = None) -> Figure:
        """The pairwise picture (:func:`tablegen.compare.datasets.plot.plot_across_datasets`); needs matplotlib."""
        from tablegen.compare.datasets.plot import plot_across_datasets

        return plot_across_datasets(self, path)

    def plot_cd(self, path: str | os.PathLike[str] | None = None, method: str = "tests") -> Figure:
        """The critical-difference diagram (:func:`tablegen.compare.datasets.cd_diagram.plot_cd`): bars join
        the algorithms the pairwise test does not separate; ``method="nemenyi"`` for the mean-ranks version
        (needs ``mean_ranks_posthoc=True``; ``"bonferroni"`` for that law)."""
        from tablegen.compare.datasets.cd_diagram import plot_cd

        return plot_cd(self, path, method)


def _check_options(test, correction, alpha, higher_is_better, mean_ranks_posthoc, mean_ranks_law) -> float:
    from tablegen.compare.datasets.mean_ranks import check_law

    check_law(mean_ranks_law)
    check_choice("test", test, TESTS)
    check_correction(correction, _CORRECTIONS)
    check_flag("higher_is_better", higher_is_better)
    check_flag("mean_ranks_posthoc", mean_ranks_posthoc)
    return check_alpha("alpha", alpha)


def across_datasets(scores: ArrayLike | str | os.PathLike[str], higher_is_better: bool = True, test: str = "wilcoxon",
                    correction: str = "holm", alpha: float = 0.05,
                    mean_ranks_posthoc: bool = False, mean_ranks_law: str = "nemenyi") -> AcrossDatasetsResult:
    """Compare m algorithms on n data sets: Friedman, then every pair with family-wise error control.

    Parameters
    ----------
    scores : array_like, pandas.DataFrame, str or os.PathLike
        An (n data sets × m algorithms) table: a 2-D array, a DataFrame (columns are algorithms; the
        index, or a first non-numeric column, names the data sets), or a CSV file (header row of
        algorithm names; a first column named ``dataset`` or holding text names the data sets; lines
        starting with ``#`` are comments).  At least 2 data sets and 2 algorithms, no missing values.
    higher_is_better : bool
        True for accuracies, AUCs; False for error rates, losses.
    test : {"wilcoxon", "sign"}
        The pairwise test: its verdict on a pair depends only on those two algorithms.
    correction : {"holm", "bonferroni", "hommel", "bh", "by"}
        Family-wise error control over the m(m − 1)/2 pairs (Holm, Bonferroni, Hommel), or false discovery
        rate control (Benjamini–Hochberg ``"bh"``, Benjamini–Yekutieli ``"by"``).
    alpha : float
        Family-wise significance level (default 0.05, the convention for comparing classifiers, as
        every test of :mod:`tablegen.compare`).
    mean_ranks_posthoc : bool
        Also run the mean-ranks post-hoc test of the paper and count, for each pair, the
        sub-pools of the other algorithms in which its verdict flips.  For illustration only.
    mean_ranks_law : {"nemenyi", "bonferroni"}
        The mean-ranks test's law: Nemenyi's (studentized range, Demšar 2006: critical difference
        q_α(m, ∞)/√2 · sqrt(m(m + 1)/(6n))), or the z test with Bonferroni over the m(m − 1)/2 pairs.

    Returns
    -------
    AcrossDatasetsResult
        ``.friedman``, ``.pairwise``, ``.mean_ranks``, ``.mean_ranks_posthoc``, ``.sentence()``,
        ``.to_dict()``, ``.plot(path)``.

    Examples
    --------
    >>> X = [[0.90, 0.80, 0.70], [0.85, 0.80, 0.75], [0.95, 0.70, 0.72], [0.80, 0.78, 0.60],
    ...      [0.91, 0.81, 0.79], [0.88, 0.86, 0.70]]
    >>> result = across_datasets(X)
    >>> result.ranking(), round(result.friedman.p_value, 4)
    (['1', '2', '3'], 0.0057)
    >>> [(c.better, round(c.adjusted_p_value, 4)) for c in result.pairwise]
    [('1', 0.0938), ('1', 0.0938), ('2', 0.0938)]
    """
    alpha = _check_options(test, correction, alpha, higher_is_better, mean_ranks_posthoc, mean_ranks_law)
    X, algorithms, datasets = results_table(scores)
    logger.info("across_datasets: %d data sets x %d algorithms, %s test, %s correction", *X.shape, test, correction)
    mean_ranks = rank_matrix(X, higher_is_better).mean(axis=0)
    posthoc = None
    if mean_ranks_posthoc:
        from tablegen.compare.datasets.mean_ranks import mean_ranks_test

        posthoc = mean_ranks_test(X, algorithms, alpha, higher_is_better, mean_ranks_law)
    return AcrossDatasetsResult(
        algorithms=tuple(algorithms), datasets=tuple(datasets), test=test, correction=correction, alpha=alpha,
        higher_is_better=bool(higher_is_better), friedman=friedman_test(X, higher_is_better),
        mean_ranks={a: float(r) for a, r in zip(algorithms, mean_ranks)},
        pairwise=pairwise_tests(X, algorithms, test, correction, alpha, higher_is_better),
        mean_ranks_posthoc=posthoc, mean_scores={a: float(v) for a, v in zip(algorithms, X.mean(axis=0))})


def format_p(p: float) -> str:
    """A p-value for tables: 3 decimals, 3 significant digits below 0.01, scientific below 1e-3."""
    if math.isnan(p):
        return "-"
    return f"{p:.2e}" if 0 < p < 1e-3 else f"{p:.3g}" if p < 0.01 else f"{p:.3f}"
