"""Bayesian sign and signed-rank tests with a ROPE, for two algorithms across data sets, and for every pair
of m (Benavoli, Corani, Demšar & Zaffalon, "Time for a change", JMLR 18(77), 2017).

The posterior of the distribution of the differences is the Dirichlet-process posterior of
:mod:`tablegen.compare.datasets.dirichlet`, sampled exactly (independent draws, no chain).  Reported:

* ``p_a_better``, ``p_rope``, ``p_b_better``: the posterior probability that "A better by more than the
  ROPE", "practically equivalent" or "B better" is the most probable of the three (the share of draws in
  which θ_A, θ_ROPE or θ_B is the largest: baycomp's ``probs``), each with its Monte Carlo standard error
  √(p(1 − p)/S) for S independent draws;
* ``mean``: the posterior means of (θ_A, θ_ROPE, θ_B), exact (closed-form Dirichlet moments);
* ``decision`` at a probability P (0.95 by default): "a better" when p_a_better > P, "equivalent (ROPE)"
  when p_rope > P, "b better" when p_b_better > P, else "no decision"; ``settled`` is False when one of the
  three lies within 3 Monte Carlo errors of P (more draws would be needed to be sure of the decision).

Every pair of :func:`bayesian_pairs` uses the same Dirichlet weights on the data sets (one joint posterior
over the data sets, from one seed), so a pair's answer does not depend on which other algorithms are in the
pool, and equals :func:`bayesian_pair` on its two columns with the same seed.
"""

from __future__ import annotations

import logging
import math
import numbers
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tablegen.compare.datasets import dirichlet
from tablegen.compare.datasets.dirichlet import format_probability
from tablegen.compare.datasets.results_table import results_table
from tablegen.compare.datasets.validation import (
    check_choice,
    check_draws,
    check_flag,
    check_names,
    check_pair_scores,
    check_probability,
    check_rope,
)
from tablegen.compute.cell import DEFAULT_SEED
from tablegen.compute.validation import check_seed
from tablegen.errors import Argument, TablegenInputError

if TYPE_CHECKING:
    import os

    import xarray
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

logger = logging.getLogger(__name__)

#: Bayesian test -> default prior strength (baycomp's: 0.5 for the signed-rank test, 1 for the sign test).
BAYESIAN_TESTS = {"signed_rank": 0.5, "sign": 1.0}
DECISIONS = ("a better", "equivalent (ROPE)", "b better", "no decision")
#: The three probabilities of a pair, in order: the ``outcome`` labels of :meth:`BayesianPairs.matrix`.
OUTCOMES = ("a better", "equivalent", "b better")


@dataclass(frozen=True)
class BayesianPair:
    """The Bayesian comparison of two algorithms across data sets (see the module docstring).

    Attributes
    ----------
    a, b : str
        The algorithms; the differences are score(a) − score(b), read as "a better" when positive
        (negated when lower is better).
    test, rope, prior, samples, seed, probability :
        The options used (``seed``: the root seed, drawn fresh and reported when None was given; ``prior``: the
        strength of the prior pseudo-observation).
    p_a_better, p_rope, p_b_better : float
        Posterior probabilities that each region is the most probable (Monte Carlo estimates).
    mc_error : tuple of float
        Their Monte Carlo standard errors.
    mean : tuple of float
        Exact posterior means of (θ_a, θ_ROPE, θ_b).
    decision : str
        One of :data:`DECISIONS`.
    settled : bool
        False when a probability lies within 3 Monte Carlo errors of ``probability``.
    n : int
        Number of data sets.
    draws : numpy.ndarray or None
        The (samples, 3) posterior draws of (θ_a, θ_ROPE, θ_b) (for the simplex plot; None in
        :func:`bayesian_pairs`).
    prior_place : str
        Where the prior pseudo-observation sits: ``"rope"`` (at 0), ``"a"`` or ``"b"`` (sign test only).

    Examples
    --------
    >>> pair = bayesian_pair([0.9, 0.8, 0.85, 0.7, 0.95], [0.8, 0.7, 0.84, 0.6, 0.85], rope=0.01, samples=2000)
    >>> pair.decision, round(pair.mean[0], 4)
    ('a better', 0.951)
    """

    a: str
    b: str
    test: str
    rope: float
    prior: float
    samples: int
    seed: int
    probability: float
    p_a_better: float
    p_rope: float
    p_b_better: float
    mc_error: tuple
    mean: tuple
    decision: str
    settled: bool
    n: int
    draws: np.ndarray | None = field(default=None, repr=False, compare=False)
    prior_place: str = "rope"

    @property
    def probabilities(self) -> tuple[float, float, float]:
        """(p_a_better, p_rope, p_b_better)."""
        return self.p_a_better, self.p_rope, self.p_b_better

    @property
    def winner(self) -> str | None:
        """The algorithm the decision favours (None for equivalence or no decision)."""
        return {DECISIONS[0]: self.a, DECISIONS[2]: self.b}.get(self.decision)

    @property
    def verdict(self) -> str:
        """The decision with the algorithms' names ("svm better", "equivalent (ROPE)", "no decision")."""
        return f"{self.winner} better" if self.winner is not None else self.decision

    def sentence(self) -> str:
        """The decision in plain words, with the probabilities and their Monte Carlo errors."""
        p = ", ".join(f"{label} {format_probability(value, error, self.samples)}" for label, value, error in
                      zip((f"P({self.a} better)", "P(equivalent)", f"P({self.b} better)"),
                          self.probabilities, self.mc_error))
        verdict = {DECISIONS[0]: f"{self.a} is better than {self.b}", DECISIONS[2]: f"{self.b} is better than {self.a}",
                   DECISIONS[1]: f"{self.a} and {self.b} are practically equivalent (within ±{self.rope:g})",
                   DECISIONS[3]: f"no decision between {self.a} and {self.b}"}[self.decision]
        caveat = "" if self.settled else " (not settled: a probability is within 3 Monte Carlo errors of the threshold)"
        return (f"Bayesian {self.test.replace('_', '-')} test on {self.n} data sets: {verdict} at probability "
                f"{self.probability:g}{caveat}; {p} ({self.samples} draws, seed {self.seed}).")

    def to_dict(self) -> dict:
        """JSON-ready fields (without the draws)."""
        return {"a": self.a, "b": self.b, "test": self.test, "rope": self.rope, "prior": self.prior,
                "prior_place": self.prior_place,
                "samples": self.samples, "seed": self.seed, "probability": self.probability, "n": self.n,
                "p_a_better": self.p_a_better, "p_rope": self.p_rope, "p_b_better": self.p_b_better,
                "mc_error": list(self.mc_error), "mean": list(self.mean), "decision": self.decision,
                "settled": self.settled}

    def plot(self, path: str | os.PathLike[str] | None = None) -> Figure:
        """The posterior draws in the probability simplex (:func:`.bayes_plot.plot_simplex`)."""
        from tablegen.compare.datasets.bayes_plot import plot_simplex

        return plot_simplex(self, path)


def _decide(p: np.ndarray, error: np.ndarray, probability: float) -> tuple[str, bool]:
    above = np.flatnonzero(p > probability)
    decision = DECISIONS[int(above[0])] if above.size else DECISIONS[3]
    settled = bool(np.all(np.abs(p - probability) > 3 * error))
    return decision, settled


def _summary(a, b, d, options, w, seed, keep) -> BayesianPair:
    test, rope, (prior, place), samples, probability = options
    draws = dirichlet.theta_draws(d, test, rope, w, place)
    p = dirichlet.argmax_shares(draws, rope)
    error = np.sqrt(p * (1 - p) / samples)
    decision, settled = _decide(p, error, probability)
    mean = dirichlet.exact_mean(d, test, rope, prior, place)
    return BayesianPair(a, b, test, rope, prior, samples, seed, probability, *map(float, p),
                        tuple(map(float, error)), tuple(map(float, mean)), decision, settled, int(d.size),
                        draws if keep else None, place)


def _checked_prior(test: str, prior) -> tuple[float, str]:
    """(strength, place) of the prior pseudo-observation: a strength alone puts it in the ROPE (at 0); a pair
    (strength, place) with place "a", "rope" or "b" places it, for the sign test (baycomp's ``SignTest`` prior
    ``(strength, LEFT | ROPE | RIGHT)``; its ``SignedRankTest`` takes a strength only, the point at 0)."""
    if prior is None:
        return BAYESIAN_TESTS[test], "rope"
    strength, place = prior if isinstance(prior, tuple) and len(prior) == 2 else (prior, "rope")
    if (isinstance(strength, (bool, np.bool_)) or not isinstance(strength, numbers.Real)
            or not math.isfinite(strength) or strength <= 0):
        raise TablegenInputError.naming(Argument("prior"), " must be a finite number > 0 (the strength), or a pair "
                                        f"(strength, place) with place 'a', 'rope' or 'b'; got {prior!r}")
    if not isinstance(place, str) or place not in dirichlet.PRIOR_PLACES:
        raise TablegenInputError.naming(Argument("prior"), "'s place must be 'a' (a better: baycomp's LEFT), "
                                        f"'rope' (ROPE) or 'b' (b better: RIGHT); got {place!r}")
    if place != "rope" and test != "sign":
        raise TablegenInputError.naming(Argument("prior"), f"'s place {place!r}: the signed-rank test's prior "
                                        "pseudo-observation sits at 0, in the ROPE (as baycomp's SignedRankTest); "
                                        "only the sign test places it in a region")
    return float(strength), place


def _check(test, prior, seed, probability):
    """The options that do not depend on the scores, checked before the scores are read."""
    test = check_choice("test", test, BAYESIAN_TESTS)
    return test, _checked_prior(test, prior), check_seed("seed", seed, allow_none=True), check_probability(probability)


def _options(checked, X, rope, samples) -> tuple:
    """(test, rope, (prior strength, place), samples, probability) with the checks that depend on the (n, m)
    scores ``X``."""
    test, prior, _, probability = checked
    return test, check_rope(rope, X), prior, check_draws(samples, X.shape[0]), probability


def _weights(n, prior: tuple, samples, seed):
    """Dirichlet weights from ``SeedSequence(seed)``; a None seed becomes a fresh 63-bit one, reported."""
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
    return dirichlet.weights(n, prior[0], samples, np.random.default_rng(np.random.SeedSequence(seed))), seed


def bayesian_pair(x: ArrayLike, y: ArrayLike, *, test: str = "signed_rank", rope: float = 0.01,
                  prior: float | tuple[float, str] | None = None, samples: int = 50_000,
                  seed: int | None = DEFAULT_SEED, probability: float = 0.95, higher_is_better: bool = True,
                  names: tuple[str, str] = ("A", "B")) -> BayesianPair:
    """Bayesian signed-rank or sign test of two algorithms' scores on the same n data sets, with a ROPE.

    Parameters
    ----------
    x, y : array_like
        The two algorithms' scores, one per data set (same length n >= 2, finite).
    test : {"signed_rank", "sign"}
    rope : float
        Half-width of the region of practical equivalence, in the scores' units (0.01 = one point of
        accuracy on a 0–1 scale).  0 leaves the ROPE out (p_rope = 0; as baycomp).  Any finite value >= 0,
        but below 1 where every score lies in [0, 1] (a ROPE of 1 would hold every difference).
    prior : float or (float, str), optional
        Strength of the prior pseudo-observation at 0 (in the ROPE), > 0; default 0.5 (signed-rank) or 1 (sign).
        The sign test also takes a pair (strength, place), place ``"a"`` (the prior favours a), ``"rope"`` or
        ``"b"``, as baycomp's ``SignTest(prior=(strength, LEFT | ROPE | RIGHT))`` (LEFT is a, the first
        algorithm); the signed-rank test's pseudo-observation sits at 0, as in baycomp.
    samples : int
        Independent posterior draws (>= 100; more than memory holds is refused, exit 5, with the estimate).
    seed : int or None
        Root seed (default 2005: the same call gives the same numbers); None draws fresh entropy, reported.
    probability : float
        The posterior probability a decision needs, in [0.5, 1) (so at most one outcome can reach it).
    higher_is_better : bool
    names : (str, str)
        The names of x and y (two strings).

    Returns
    -------
    BayesianPair

    Examples
    --------
    >>> x = [0.91, 0.85, 0.88, 0.79, 0.93, 0.81, 0.86, 0.90, 0.84, 0.87]
    >>> y = [0.89, 0.80, 0.86, 0.75, 0.90, 0.80, 0.83, 0.86, 0.82, 0.85]
    >>> pair = bayesian_pair(x, y, rope=0.01, samples=20_000, names=("svm", "knn"))
    >>> pair.decision, pair.winner, pair.settled
    ('a better', 'svm', True)
    >>> sceptic = bayesian_pair(x, y, test="sign", prior=(5.0, "b"), samples=20_000)  # a prior that favours b
    >>> sceptic.prior_place, round(sceptic.mean[2], 4)
    ('b', 0.3333)
    """
    checked, names = _check(test, prior, seed, probability), check_names(names)
    check_flag("higher_is_better", higher_is_better)
    X, _, _ = results_table(np.column_stack(check_pair_scores(x, y, 2)))
    options, seed = _options(checked, X, rope, samples), checked[2]
    d = (X[:, 0] - X[:, 1]) * (1.0 if higher_is_better else -1.0)
    w, seed = _weights(d.size, options[2], options[3], seed)
    pair = _summary(names[0], names[1], d, options, w, seed, True)
    logger.info("bayesian_pair: %s test, %d data sets, %d draws, seed %d: %s", test, d.size, options[3], seed,
                pair.decision)
    return pair


@dataclass(frozen=True)
class BayesianPairs:
    """Every pair of m algorithms by the Bayesian test (:func:`bayesian_pairs`).

    Attributes
    ----------
    algorithms : tuple of str
    pairs : tuple of BayesianPair
        In column order (a before b), without draws.

    Examples
    --------
    >>> X = [[0.9, 0.8, 0.7], [0.85, 0.8, 0.75], [0.95, 0.7, 0.72], [0.8, 0.78, 0.6], [0.91, 0.81, 0.79]]
    >>> result = bayesian_pairs(X, samples=2000)
    >>> matrix = result.matrix()
    >>> matrix.dims, matrix.coords["outcome"].values.tolist()
    (('a', 'b', 'outcome'), ['a better', 'equivalent', 'b better'])
    >>> matrix.sel(a="1", b="2").round(2).values.tolist()
    [1.0, 0.0, 0.0]
    """

    algorithms: tuple
    pairs: tuple

    def pair(self, a: str, b: str) -> BayesianPair:
        """The comparison of ``a`` and ``b`` (in either order, as stored)."""
        for p in self.pairs:
            if {p.a, p.b} == {a, b}:
                return p
        raise TablegenInputError(f"no pair {a!r}, {b!r} among {list(self.algorithms)}")

    def matrix(self) -> xarray.DataArray:
        """Every pair's probabilities, labelled: an (m, m, 3) ``xarray.DataArray`` with dimensions ``a``, ``b``
        (the algorithms' names) and ``outcome`` (``"a better"``, ``"equivalent"``, ``"b better"``):
        ``matrix.sel(a="rf", b="svm")`` is (P(rf better), P(equivalent), P(svm better)); NaN on the diagonal.

        Before it was labelled it was the bare numpy array, in the order of ``algorithms``: ``matrix().values``
        (or ``np.asarray(matrix())``) is that array, and positional indexing (``matrix()[i, j]``) still works.
        """
        import xarray as xr

        m = len(self.algorithms)
        where = {a: i for i, a in enumerate(self.algorithms)}
        out = np.full((m, m, 3), np.nan)
        for p in self.pairs:
            i, j = where[p.a], where[p.b]
            out[i, j] = p.probabilities
            out[j, i] = p.probabilities[::-1]
        names = list(self.algorithms)
        return xr.DataArray(out, dims=("a", "b", "outcome"),
                            coords={"a": names, "b": names, "outcome": list(OUTCOMES)},
                            name="probability")

    def to_dict(self) -> dict:
        """JSON-ready fields."""
        return {"algorithms": list(self.algorithms), "pairs": [p.to_dict() for p in self.pairs]}

    def sentences(self) -> list[str]:
        """One sentence per pair."""
        return [p.sentence() for p in self.pairs]

    def plot(self, path: str | os.PathLike[str] | None = None, order: list[str] | None = None) -> Figure:
        """The matrix picture (:func:`.bayes_plot.plot_pairs`)."""
        from tablegen.compare.datasets.bayes_plot import plot_pairs

        return plot_pairs(self, path, order)


def checked_pairs_args(scores, test, rope, prior, samples, seed, probability) -> tuple:
    """The (n, m) scores, their algorithms, the options (test, rope, prior, samples, probability) and the seed
    of :func:`bayesian_pairs`, every one checked (the command line checks them before any work)."""
    checked = _check(test, prior, seed, probability)
    X, algorithms, _ = results_table(scores)
    return X, algorithms, _options(checked, X, rope, samples), checked[2]


def bayesian_pairs(scores: ArrayLike | str | os.PathLike[str], *, test: str = "signed_rank", rope: float = 0.01,
                   prior: float | tuple[float, str] | None = None, samples: int = 50_000,
                   seed: int | None = DEFAULT_SEED, probability: float = 0.95,
                   higher_is_better: bool = True) -> BayesianPairs:
    """:func:`bayesian_pair` for every pair of the columns of an (n data sets × m algorithms) table.

    ``scores`` is read as by :func:`tablegen.compare.across_datasets`; the options are
    :func:`bayesian_pair`'s.  One set of Dirichlet weights on the data sets serves every pair.

    Examples
    --------
    >>> X = [[0.9, 0.8, 0.7], [0.85, 0.8, 0.75], [0.95, 0.7, 0.72], [0.8, 0.78, 0.6], [0.91, 0.81, 0.79]]
    >>> [(p.a, p.b, p.decision) for p in bayesian_pairs(X, samples=2000).pairs]
    [('1', '2', 'a better'), ('1', '3', 'a better'), ('2', '3', 'a better')]
    """
    X, algorithms, options, seed = checked_pairs_args(scores, test, rope, prior, samples, seed, probability)
    Y = X if check_flag("higher_is_better", higher_is_better) else -X
    w, seed = _weights(X.shape[0], options[2], options[3], seed)
    pairs = []
    for i in range(len(algorithms)):
        for j in range(i + 1, len(algorithms)):
            d = Y[:, i] - Y[:, j]
            pairs.append(_summary(algorithms[i], algorithms[j], d, options, w, seed, False))
    logger.info("bayesian_pairs: %s test, %d x %d, %d draws, seed %d", test, *X.shape, options[3], seed)
    return BayesianPairs(tuple(algorithms), tuple(pairs))
