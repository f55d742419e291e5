"""Bayesian comparison of two classifiers' average F1 on one test set (Zhang, Wang, Zhao & Wang, ICDM 2015).

The model (the paper's), for each classifier's M × M confusion matrix C (rows = true class, n = row sums):
μ ~ Dir(β), n ~ Mult(N, μ); η ~ Beta(α₁, α₂); θ_j ~ Dir(ω_j) with ω_jj = η, ω_jk = (1 − η)/(M − 1);
c_j ~ Mult(n_j, θ_j).  ψ = micro F1 = Σ_j μ_j θ_jj (in single-label classification, accuracy) or
macro F1 = mean_j 2 P_j R_j / (P_j + R_j), P_j = μ_j θ_jj / Σ_u μ_u θ_uj, R_j = θ_jj; δ = ψ_A − ψ_B.

Exact, independent draws
------------------------
The paper ran one Metropolis–Hastings chain in PyMC3.  Here the posterior factorises,
p(μ, η, θ | C) = p(μ | n) · p(η | C) · ∏_j p(θ_j | η, c_j), with μ | n ~ Dir(β + n) and
θ_j | η, c_j ~ Dir(ω_j(η) + c_j), and η's posterior is one-dimensional (:mod:`.f1_eta`): each draw takes
η by inverting its CDF on a fine grid, then the Dirichlets (:mod:`.f1_sampler`, :mod:`.f1_kernel`).  The draws are
independent — no chain, no burn-in, no convergence question — so a mean's Monte Carlo error is sd/√S.

One μ for both classifiers (``mu="joint"``, the default)
--------------------------------------------------------
μ is the class mix of the population the test set came from, and n — the true-class counts, the row
sums of both matrices — is the same data for both classifiers.  The paper fits each classifier's model
on its own, which counts n twice and gives ψ_A and ψ_B independent μ's: noise in δ that is not in the
data.  Here one μ ~ Dir(β + n) is drawn per posterior draw and used for both, and the matrices' row
sums must agree.  ``mu="independent"`` reproduces the paper's choice (and allows different test sets).

The Bayes factor is the interval (ROPE) one (:mod:`.f1_bayes_factor`): the posterior odds of δ in the ROPE
over its prior odds.  The prior mass of the ROPE has no closed form: it is the share of ``prior_samples``
draws of the same model without data (η ~ Beta(α), μ ~ Dir(β), θ_j ~ Dir(ω_j(η)), μ shared as for the
posterior) that fall in the ROPE.  Those draws depend on the setting alone (M, average, priors, μ mode), so
they use a fixed seed and are cached (:func:`prior_delta_draws`).  The point-null (Savage–Dickey) ratio does
not exist under these priors (δ's prior density at 0 is infinite); ``point_null=True`` shows its window
estimates side by side to make that visible.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import expit

from tablegen.compare.f1.bayes_factor import interval_bayes_factor, point_null_ratios
from tablegen.compare.f1.eta import DEFAULT_GRID, EtaPosterior, eta_posterior
from tablegen.compare.f1.results import EtaInfo, F1Comparison, F1Posterior
from tablegen.compare.f1.sampler import macro_draws, micro_draws
from tablegen.compare.f1.summary import decide, observed_f1, summarize, summarize_delta
from tablegen.compare.f1.validation import validate_f1_posterior_args, validate_f1_score_args
from tablegen.compute.cell import DEFAULT_SEED
from tablegen.compute.kernels.f1 import sample_dirichlet

if TYPE_CHECKING:
    from collections.abc import Mapping

    from numpy.typing import ArrayLike

    from tablegen.compare.f1.validation import F1Prior

logger = logging.getLogger(__name__)


class _Streams:
    """Independent random streams of one call, all from ``SeedSequence(seed)`` (fresh entropy if None)."""

    def __init__(self, seed: int | None):
        self.sequence = np.random.SeedSequence(seed)
        self.seed = int(self.sequence.entropy)
        self._children = iter(self.sequence.spawn(16))

    def generator(self) -> np.random.Generator:
        return np.random.default_rng(next(self._children))

    def key(self) -> tuple[np.uint64, np.uint64]:
        key0, key1 = next(self._children).generate_state(2, np.uint64)
        return np.uint64(key0), np.uint64(key1)


def _mu(beta: float, n: np.ndarray, samples: int, streams: _Streams) -> np.ndarray:
    out = np.empty((samples, n.size))
    sample_dirichlet(beta + n, *streams.key(), out)
    return out


def _psi(counts, eta, eta_bar, mu, average: str, streams: _Streams) -> np.ndarray:
    draws = (macro_draws if average == "macro" else micro_draws)(counts, eta, eta_bar, mu, streams.key())
    if not np.all(np.isfinite(draws)):  # cannot happen for validated input; never report from NaNs
        raise FloatingPointError("non-finite F1 draw")
    return draws


def _posterior_eta(post: EtaPosterior, samples: int, streams: _Streams) -> tuple[np.ndarray, np.ndarray]:
    t = post.sample(streams.generator().random(samples))
    return expit(t), expit(-t)


def _prior_eta(alpha, samples: int, streams: _Streams) -> tuple[np.ndarray, np.ndarray]:
    """η ~ Beta(α₁, α₂) as X/(X + Y) with X, Y gamma, and 1 − η as Y/(X + Y) (no cancellation)."""
    rng = streams.generator()
    x, y = rng.standard_gamma(alpha[0], samples), rng.standard_gamma(alpha[1], samples)
    return x / (x + y), y / (x + y)


def _eta_info(post: EtaPosterior) -> EtaInfo:
    return EtaInfo(post.mean_eta(), float(expit(post.mode)), int(post.t.size),
                   float(post.t[0]), float(post.t[-1]), post.quadrature_error)


#: Root seed of the prior draws: δ's prior mass in the ROPE is a property of the model (M, average, priors,
#: μ mode), not of the data, so it is estimated once per setting, the same in every call.
PRIOR_SEED = 20151114
#: Default number of prior draws: a prior ROPE mass of 0.02 (±0.005, M = 3) is then known to ±1.6%
#: (Monte Carlo error); they take about 0.2 s per setting and are cached.
DEFAULT_PRIOR_SAMPLES = 200_000


@functools.lru_cache(maxsize=32)
def prior_delta_draws(m: int, average: str, beta: float, alpha: tuple[float, float], mu: str,
                      samples: int) -> np.ndarray:
    """Draws of δ from the prior (the model with zero counts), seeded by :data:`PRIOR_SEED` and cached.

    Examples
    --------
    >>> d = prior_delta_draws(3, "macro", 1.0, (1.0, 1.0), "joint", 2000)
    >>> d.shape, bool(abs(d.mean()) < 0.05)
    ((2000,), True)
    """
    streams = _Streams(PRIOR_SEED)
    zero, n = np.zeros((m, m)), np.zeros(m)
    mu_a = _mu(beta, n, samples, streams)
    mu_b = mu_a if mu == "joint" else _mu(beta, n, samples, streams)
    psi = [_psi(zero, *_prior_eta(alpha, samples, streams), mu_draws, average, streams) for mu_draws in (mu_a, mu_b)]
    delta = psi[0] - psi[1]
    delta.flags.writeable = False
    return delta


def f1_posterior(confusion_a: ArrayLike, confusion_b: ArrayLike, average: str = "macro",
                 rope: float | tuple[float, float] = 0.005, samples: int = 50_000, seed: int | None = DEFAULT_SEED,
                 prior: F1Prior | Mapping[str, object] | None = None, *, mu: str = "joint",
                 prior_samples: int = DEFAULT_PRIOR_SAMPLES, credible_mass: float = 0.95,
                 eta_grid: int = DEFAULT_GRID, point_null: bool = False) -> F1Comparison:
    """Posterior of δ = ψ_A − ψ_B, the difference of two classifiers' average F1 on one test set.

    Parameters
    ----------
    confusion_a, confusion_b : array_like, M × M
        Confusion matrices of classifiers A and B (rows = true class, columns = predicted class), over
        the same classes in the same order.
    average : {"macro", "micro"}
        Macro F1 (mean of per-class F1) or micro F1 (single-label: accuracy).
    rope : float or (float, float)
        Region of practical equivalence: a half-width r in (0, 1) (the ROPE is (−r, r)) or an interval
        (low, high) with −1 < low < 0 < high < 1 (δ lies in [−1, 1]).
    samples : int
        Independent posterior draws (≥ 100).
    seed : int or None
        Root seed (default 2005, :data:`tablegen.compute.cell.DEFAULT_SEED`: the same call, the same numbers);
        ``None`` draws fresh entropy, reported as ``result.seed`` so the run can be repeated.
    prior : F1Prior or mapping, optional
        ``beta`` (μ ~ Dir(β)) and ``alpha`` (η ~ Beta(α₁, α₂)); default the paper's β = 1, α = (1, 1).
    mu : {"joint", "independent"}
        One μ for both classifiers (they share the test set; the row sums must agree) or one each, as
        in the paper (module docstring).
    prior_samples : int
        Draws of δ from the prior, for the prior mass of the ROPE in the Bayes factor
        (:func:`prior_delta_draws`: fixed seed, cached per setting).
    credible_mass : float
        Mass of the HDI (0.95); the decision uses this HDI.
    eta_grid : int
        Points of η's posterior grid (:mod:`tablegen.compare.f1.eta`), 65 to 1,048,577; the default is far
        finer than any report needs.
    point_null : bool
        Also give ``.point_null``: window estimates of the point-null (Savage–Dickey) ratio at ±0.05,
        ±0.01, ±0.002, ±5e-4 and ±1e-4 side by side.  They are not a Bayes factor: δ's prior density at 0
        is infinite under these priors, so each is set by its window (:mod:`.f1_bayes_factor`).

    Returns
    -------
    F1Comparison
        ``.summary`` (mean, sd, Monte Carlo error, HDI, shares in the ROPE and around 0),
        ``.bayes_factor`` (the ROPE Bayes factor, :class:`.IntervalBayesFactor`), ``.decision`` (≈, ≪,
        <, >, ≫), ``.a`` and ``.b`` (each classifier's ψ), ``.point_null`` (only with ``point_null=True``),
        ``.sentence()``, ``.table()``, ``.to_dict()``, ``.plot()``.

    Raises
    ------
    TablegenInputError
        Bad input, naming the argument: a matrix not square, counts negative or not integers, an empty
        class, A and B over different numbers of classes, different row sums with ``mu="joint"``, a
        ROPE that is not an interval around 0.

    Examples
    --------
    >>> a = [[45, 3, 2], [4, 40, 6], [1, 2, 47]]
    >>> b = [[40, 6, 4], [8, 33, 9], [3, 5, 42]]
    >>> result = f1_posterior(a, b, rope=0.01, samples=20_000, seed=1)
    >>> result.decision, round(result.observed_delta, 3)
    ('≫', 0.114)
    >>> result.summary.hdi_low > 0.01
    True
    """
    args = validate_f1_posterior_args(confusion_a, confusion_b, average, rope, samples, seed, prior, mu,
                                      prior_samples, credible_mass, eta_grid, point_null)
    streams = _Streams(args.seed)
    a, b = args.confusions
    mu_a = _mu(args.prior.beta, a.sum(axis=1), args.samples, streams)
    mu_b = mu_a if args.mu == "joint" else _mu(args.prior.beta, b.sum(axis=1), args.samples, streams)
    posteriors = []
    for counts, mu_draws in ((a, mu_a), (b, mu_b)):
        post = eta_posterior(counts, args.prior.alpha, args.eta_grid)
        draws = _psi(counts, *_posterior_eta(post, args.samples, streams), mu_draws, args.average, streams)
        posteriors.append(F1Posterior(args.average, observed_f1(counts, args.average),
                                      summarize(draws, args.credible_mass), draws, streams.seed, args.prior,
                                      _eta_info(post)))
    delta = posteriors[0].draws - posteriors[1].draws
    summary = summarize_delta(delta, args.rope, args.credible_mass)
    prior_delta = prior_delta_draws(a.shape[0], args.average, args.prior.beta, args.prior.alpha, args.mu,
                                    args.prior_samples)
    decision = decide((summary.hdi_low, summary.hdi_high), args.rope, summary.below_zero, summary.above_zero,
                      margin=2 * summary.share_mc_error)
    logger.info("f1_posterior: %s F1, M = %d, %d draws, seed %d: %s", args.average, a.shape[0], args.samples,
                streams.seed, decision)
    return F1Comparison(args.average, args.rope, args.mu, streams.seed, args.prior, posteriors[0], posteriors[1],
                        summary, interval_bayes_factor(delta, prior_delta, args.rope), decision, delta, prior_delta,
                        point_null_ratios(delta, prior_delta) if args.point_null else None)


def f1_score_posterior(confusion: ArrayLike, average: str = "macro", samples: int = 50_000,
                       seed: int | None = DEFAULT_SEED,
                       prior: F1Prior | Mapping[str, object] | None = None, *, credible_mass: float = 0.95,
                       eta_grid: int = DEFAULT_GRID) -> F1Posterior:
    """Posterior of one classifier's average F1 ψ (the model of :func:`f1_posterior`), with its HDI.

    Parameters
    ----------
    confusion : array_like, M × M
        Confusion matrix (rows = true class).
    average, samples, seed, prior, credible_mass, eta_grid
        As in :func:`f1_posterior`.

    Returns
    -------
    F1Posterior
        ``.observed`` (the matrix's own F1), ``.summary`` (mean, sd, Monte Carlo error, HDI),
        ``.draws``, ``.sentence()``, ``.to_dict()``.

    Examples
    --------
    >>> post = f1_score_posterior([[45, 3, 2], [4, 40, 6], [1, 2, 47]], average="micro", samples=20_000, seed=1)
    >>> round(post.observed, 4), post.summary.hdi_low < post.observed < post.summary.hdi_high
    (0.88, True)
    """
    args = validate_f1_score_args(confusion, average, samples, seed, prior, credible_mass, eta_grid)
    streams = _Streams(args.seed)
    (counts,) = args.confusions
    mu = _mu(args.prior.beta, counts.sum(axis=1), args.samples, streams)
    post = eta_posterior(counts, args.prior.alpha, args.eta_grid)
    draws = _psi(counts, *_posterior_eta(post, args.samples, streams), mu, args.average, streams)
    return F1Posterior(args.average, observed_f1(counts, args.average), summarize(draws, args.credible_mass),
                       draws, streams.seed, args.prior, _eta_info(post))
