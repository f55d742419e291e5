"""Bayesian comparison of average F1 (Zhang, Wang, Zhao & Wang, ICDM 2015) against independent references.

(a) a plain Metropolis–Hastings sampler written here (η by random-walk MH on scipy's Dirichlet–
multinomial likelihood, then numpy Dirichlets, F1 from the paper's P_j, R_j); (b) η's grid density
integrates to 1 under adaptive quadrature and a 16× finer grid changes nothing the report shows;
(c) the binary case against direct Monte Carlo (η by rejection on scipy's beta-binomial, numpy Betas);
(d) the decision rules on constructed posteriors.  Also the gamma/normal variates against scipy, the
prior draws against a numpy prior sampler, the frequentist tests against scikit-learn and hand
formulas, bad input, and the command line.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit

from tablegen.compare import f1_frequentist_tests, f1_posterior, f1_score_posterior
from tablegen.compare.f1.bayes_factor import interval_bayes_factor, point_null_ratios, window_density
from tablegen.compare.f1.eta import eta_posterior, log_target
from tablegen.compare.f1.posterior import prior_delta_draws
from tablegen.compare.f1.sampler import macro_draws
from tablegen.compare.f1.summary import decide, hdi, summarize_delta
from tablegen.compute.kernels.f1 import fill_gamma, sample_dirichlet
from tablegen.errors import TablegenInputError

A3 = np.array([[45, 3, 2], [4, 40, 6], [1, 2, 47]])
B3 = np.array([[40, 6, 4], [8, 33, 9], [3, 5, 42]])
SMALL_A = np.array([[9, 1, 0], [2, 6, 2], [0, 1, 4]])  # small counts: priors matter, posteriors wide
SMALL_B = np.array([[7, 2, 1], [3, 5, 2], [1, 0, 4]])


def _matrix(rng, n, accuracy, confusers=3):
    m = len(n)
    out = np.zeros((m, m), int)
    for j in range(m):
        p = np.zeros(m)
        p[j] = accuracy
        p[rng.choice([k for k in range(m) if k != j], confusers, replace=False)] = (1 - accuracy) / confusers
        out[j] = rng.multinomial(n[j], p)
    return out


def _f1_reference(mu, theta, average):
    """ψ straight from the model's definition: micro Σ μ_j θ_jj; macro mean of 2 P R / (P + R)."""
    diag = np.diagonal(theta, axis1=-2, axis2=-1)
    if average == "micro":
        return (mu * diag).sum(axis=-1)
    with np.errstate(invalid="ignore"):  # θ_jj = 0 (underflow in prior draws): P = R = 0, F1 = 0
        precision = np.nan_to_num(mu * diag / np.einsum("...u,...uj->...j", mu, theta))
        f1 = np.nan_to_num(2 * precision * diag / (precision + diag))
    return f1.mean(axis=-1)


def _dirichlet_rows(rng, alpha):
    """Independent Dirichlet draws for every row of ``alpha`` (..., M), by numpy's gamma variates."""
    g = rng.standard_gamma(alpha)
    return g / g.sum(axis=-1, keepdims=True)


def _omega(eta, m):
    """ω_j(η) for every draw: (S, M, M)."""
    off = (1 - eta) / (m - 1)
    omega = np.repeat(off[:, None, None], m, axis=1).repeat(m, axis=2)
    omega[:, np.arange(m), np.arange(m)] = eta[:, None]
    return omega


def _batch_errors(draws, batches=10, mass=0.95):
    """Monte Carlo errors of the mean, sd and HDI ends from batch-to-batch spread (independent of the library)."""
    parts = np.array_split(draws, batches)
    stats_ = np.array([[p.mean(), p.std(ddof=1), *hdi(p, mass)] for p in parts])
    return stats_.std(axis=0, ddof=1) / np.sqrt(batches)


def _agree(draws, reference, limit=4.5):
    """Mean, sd and HDI ends agree within ``limit`` combined Monte Carlo errors."""
    ours = np.array([draws.mean(), draws.std(ddof=1), *hdi(draws)])
    theirs = np.array([reference.mean(), reference.std(ddof=1), *hdi(reference)])
    error = np.hypot(_batch_errors(draws), _batch_errors(reference))
    z = np.abs(ours - theirs) / error
    assert np.all(z < limit), dict(zip(["mean", "sd", "hdi_low", "hdi_high"], z.round(2)))


# -- variates -----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [0.01, 0.3, 0.9, 1.0, 2.5, 40.0, 1e4])
def test_gamma_variates_follow_scipy(shape):
    draws = np.empty(20_000)
    fill_gamma(shape, np.uint64(11), np.uint64(shape * 1000), draws)
    assert stats.kstest(draws, stats.gamma(shape).cdf).pvalue > 1e-3
    assert abs(draws.mean() - shape) < 5 * np.sqrt(shape / draws.size)


def test_tiny_shape_gamma_mass_near_zero():
    """Gamma(0.003): ~12% of the mass lies below 1e-300 (flushed to 0); the share above 1e-100 is right."""
    draws = np.empty(50_000)
    fill_gamma(0.003, np.uint64(5), np.uint64(6), draws)
    expected = stats.gamma(0.003).sf(1e-100)
    assert abs(np.mean(draws > 1e-100) - expected) < 5 * np.sqrt(expected * (1 - expected) / draws.size)
    assert abs(draws.mean() - 0.003) < 5 * np.sqrt(0.003 / draws.size)


def test_dirichlet_draws_moments():
    alpha = np.array([0.05, 1.0, 7.0, 30.0])
    out = np.empty((40_000, 4))
    sample_dirichlet(alpha, np.uint64(1), np.uint64(2), out)
    a0 = alpha.sum()
    mean, var = alpha / a0, alpha * (a0 - alpha) / (a0 ** 2 * (a0 + 1))
    assert np.allclose(out.sum(axis=1), 1.0)
    assert np.all(np.abs(out.mean(axis=0) - mean) < 5 * np.sqrt(var / out.shape[0]))
    assert np.allclose(out.var(axis=0), var, rtol=0.05)


@pytest.mark.parametrize("name", ["diagonal", "sparse", "dense"])
def test_macro_sampler_against_numpy_dirichlets(name):
    """Given the same η and μ draws, ψ from the three-phase kernel matches ψ from numpy's Dirichlets."""
    counts = {"diagonal": np.diag([30, 50, 20, 40]), "sparse": SMALL_A, "dense": A3}[name].astype(float)
    m, draws = counts.shape[0], 100_000
    rng = np.random.default_rng(21)
    t = eta_posterior(counts, (1.0, 1.0)).sample(rng.random(draws))
    eta, eta_bar = expit(t), expit(-t)
    mu = rng.dirichlet(1.0 + counts.sum(axis=1), draws)
    ours = macro_draws(counts, eta, eta_bar, mu, (np.uint64(8), np.uint64(9)))
    theirs = _f1_reference(mu, _dirichlet_rows(rng, _omega(eta, m) + counts), "macro")
    assert abs(ours.mean() - theirs.mean()) < 4 * np.hypot(ours.std(), theirs.std()) / np.sqrt(draws)
    assert stats.ks_2samp(ours, theirs).pvalue > 1e-3


def test_macro_draws_do_not_depend_on_the_block_size(monkeypatch):
    import tablegen.compare.f1.sampler as sampler

    counts = SMALL_A.astype(float)
    rng = np.random.default_rng(2)
    eta = rng.random(3_000)
    mu = rng.dirichlet(np.ones(3), eta.size)
    key = (np.uint64(1), np.uint64(2))
    whole = sampler.macro_draws(counts, eta, 1 - eta, mu, key)
    monkeypatch.setattr(sampler, "BLOCK_CELLS", 50)  # blocks of 16 draws
    assert np.array_equal(sampler.macro_draws(counts, eta, 1 - eta, mu, key), whole)


# -- (b) η's posterior on its grid ----------------------------------------------------------------
ETA_CASES = {
    "small": SMALL_A,
    "three classes": A3,
    "perfect": np.diag([30, 50, 20, 40]),
    "poor": np.array([[10, 8, 7], [9, 11, 6], [8, 7, 12]]),
    "twenty classes": _matrix(np.random.default_rng(3), np.random.default_rng(4).multinomial(4000, np.full(20, 0.05)),
                              0.9),
}


@pytest.mark.parametrize("name", list(ETA_CASES))
def test_eta_density_integrates_to_one(name):
    post = eta_posterior(ETA_CASES[name], (1.0, 1.0))
    # Adaptive quadrature of the formula's density (not the grid values) of t = logit η, beyond the grid.
    f = lambda t: np.exp(log_target(t, post.terms)[0] - post.log_normaliser)  # noqa: E731
    total, error = integrate.quad(f, post.t[0] - 20, post.t[-1] + 20, points=[post.mode], limit=400)
    assert abs(total - 1) < 1e-7 and error < 1e-7
    # The density of η itself, at points where η and 1 - η are both representable.
    t = np.linspace(max(post.t[0], -30), min(post.t[-1], 30), 7)
    assert np.allclose(post.logpdf(expit(t)) + np.log(expit(t) * expit(-t)),
                       log_target(t, post.terms) - post.log_normaliser)
    assert post.quadrature_error < 1e-8
    assert np.trapezoid(post.density, post.t) == pytest.approx(1, abs=1e-12)


def test_eta_draws_follow_the_quadrature_cdf():
    post = eta_posterior(ETA_CASES["twenty classes"], (1.0, 1.0))
    t = post.sample(np.random.default_rng(1).random(40_000))
    f = lambda x: np.exp(log_target(x, post.terms)[0] - post.log_normaliser)  # noqa: E731
    for p in (0.05, 0.25, 0.5, 0.75, 0.95):
        q = np.quantile(t, p)
        cdf, _ = integrate.quad(f, post.t[0], q, points=[post.mode] if post.mode < q else None, limit=400)
        assert abs(cdf - p) < 4 * np.sqrt(p * (1 - p) / t.size), (p, cdf)


def test_refining_the_eta_grid_changes_nothing_the_report_shows():
    rng = np.random.default_rng(8)
    n = rng.multinomial(3000, np.full(12, 1 / 12))
    a, b = _matrix(rng, n, 0.93), _matrix(rng, n, 0.91)
    coarse = f1_posterior(a, b, samples=20_000, seed=4)
    fine = f1_posterior(a, b, samples=20_000, seed=4, eta_grid=16 * 2048 + 1)
    assert coarse.table() == fine.table() and coarse.sentence() == fine.sentence()
    # The same uniforms give nearly the same η (δ moves by ~1e-6 sd); a draw whose rejection step flips
    # on that difference takes another path (2 of 20,000 here).
    moved = np.abs(coarse.delta - fine.delta) / coarse.summary.sd
    assert np.quantile(moved, 0.99) < 1e-5 and np.mean(moved > 1e-3) < 1e-3


# -- (a) against a plain Metropolis–Hastings sampler -----------------------------------------------
def _mh_eta(rng, counts, alpha, chains=12_000, steps=200, scale=0.8):
    """Random-walk MH on t = logit η, many independent chains in parallel; the last states."""
    m = counts.shape[0]
    n = counts.sum(axis=1)

    def log_post(t):
        eta = expit(t)
        total = stats.beta.logpdf(eta, *alpha) + np.log(eta) + np.log1p(-eta)
        omega = _omega(eta, m)
        for j in range(m):
            total = total + stats.dirichlet_multinomial.logpmf(counts[j], omega[:, j, :], n[j])
        return total

    t = np.log(rng.beta(*alpha, chains)) - np.log(rng.beta(*alpha[::-1], chains))  # dispersed starts
    current = log_post(t)
    accepted = 0
    for _ in range(steps):
        proposal = t + scale * rng.standard_normal(chains)
        candidate = log_post(proposal)
        accept = np.log(rng.random(chains)) < candidate - current
        t, current = np.where(accept, proposal, t), np.where(accept, candidate, current)
        accepted += accept.mean()
    assert 0.2 < accepted / steps < 0.9
    return expit(t)


def _reference_psi(rng, counts, eta, mu, average):
    theta = _dirichlet_rows(rng, _omega(eta, counts.shape[0]) + counts)
    return _f1_reference(mu, theta, average)


@pytest.fixture(scope="module")
def mh_eta():
    """η draws of SMALL_A and SMALL_B from the MH reference (the costly part), shared by the tests."""
    rng = np.random.default_rng(1999)
    return _mh_eta(rng, SMALL_A, (1.0, 1.0)), _mh_eta(rng, SMALL_B, (1.0, 1.0))


@pytest.mark.slow
@pytest.mark.parametrize("average", ["macro", "micro"])
@pytest.mark.parametrize("mu_mode", ["joint", "independent"])
def test_agrees_with_metropolis_hastings(mh_eta, average, mu_mode):
    rng = np.random.default_rng(2015)
    a, b = SMALL_A, SMALL_B
    eta_a, eta_b = mh_eta
    mu_a = rng.dirichlet(1.0 + a.sum(axis=1), eta_a.size)
    mu_b = mu_a if mu_mode == "joint" else rng.dirichlet(1.0 + b.sum(axis=1), eta_a.size)
    psi_a = _reference_psi(rng, a, eta_a, mu_a, average)
    psi_b = _reference_psi(rng, b, eta_b, mu_b, average)
    result = f1_posterior(a, b, average=average, samples=40_000, seed=7, mu=mu_mode)
    _agree(result.a.draws, psi_a)
    _agree(result.b.draws, psi_b)
    _agree(result.delta, psi_a - psi_b)


# -- (c) the binary case against direct Monte Carlo ------------------------------------------------
def _binary_reference(rng, counts, draws, alpha=(1.0, 1.0)):
    """η by rejection from its Beta prior with the beta-binomial likelihood; θ_jj from numpy Betas."""
    n = counts.sum(axis=1)
    log_lik = lambda eta: sum(stats.betabinom.logpmf(counts[j, j], n[j], eta, 1 - eta) for j in range(2))  # noqa: E731
    grid = np.linspace(1e-6, 1 - 1e-6, 200_001)
    bound = log_lik(grid).max() + 1e-3  # log-concave likelihood: the grid maximum is within 1e-3 of the top
    accepted = []
    while sum(map(len, accepted)) < draws:
        eta = rng.beta(*alpha, 4 * draws)
        accepted.append(eta[np.log(rng.random(eta.size)) < log_lik(eta) - bound])
    eta = np.concatenate(accepted)[:draws]
    theta_diag = rng.beta(eta[:, None] + np.diag(counts), (1 - eta)[:, None] + n - np.diag(counts))
    theta = np.stack([np.stack([theta_diag[:, 0], 1 - theta_diag[:, 0]], -1),
                      np.stack([1 - theta_diag[:, 1], theta_diag[:, 1]], -1)], axis=1)
    return theta


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_binary_case_against_direct_monte_carlo(average):
    rng = np.random.default_rng(12)
    a, b = np.array([[30, 5], [8, 17]]), np.array([[27, 8], [4, 21]])
    draws = 20_000
    mu = rng.dirichlet(1.0 + a.sum(axis=1), draws)
    psi_a = _f1_reference(mu, _binary_reference(rng, a, draws), average)
    psi_b = _f1_reference(mu, _binary_reference(rng, b, draws), average)
    result = f1_posterior(a, b, average=average, samples=draws, seed=3)
    for ours, theirs in ((result.a.draws, psi_a), (result.b.draws, psi_b), (result.delta, psi_a - psi_b)):
        _agree(ours, theirs)
        assert stats.ks_2samp(ours, theirs).pvalue > 1e-3
    single = f1_score_posterior(a, average=average, samples=draws, seed=5)
    _agree(single.draws, psi_a)


# -- (d) decisions, HDI -------------------------------------------------------------------------------
@pytest.mark.parametrize("mean, sd, expected", [
    (0.0, 0.001, "≈"), (0.02, 0.003, "≫"), (-0.02, 0.003, "≪"), (0.006, 0.003, ">"), (-0.006, 0.003, "<"),
    (0.001, 0.02, ">"), (-0.001, 0.02, "<")])
def test_decisions_on_constructed_posteriors(mean, sd, expected):
    draws = np.random.default_rng(0).normal(mean, sd, 100_000)
    s = summarize_delta(draws, (-0.005, 0.005))
    assert decide((s.hdi_low, s.hdi_high), (-0.005, 0.005), s.below_zero, s.above_zero) == expected
    assert s.mc_error == pytest.approx(sd / np.sqrt(draws.size), rel=0.02)
    assert s.hdi_low == pytest.approx(mean - 1.96 * sd, abs=0.03 * sd)


def test_decision_boundaries():
    rope = (-0.01, 0.02)  # an asymmetric ROPE
    assert decide((-0.01, 0.02), rope, 0.3, 0.7) == "≈"  # HDI equal to the ROPE: inside
    assert decide((0.02, 0.05), rope, 0.0, 1.0) == ">"  # touching is not wholly right
    assert decide((0.0201, 0.05), rope, 0.0, 1.0) == "≫"
    assert decide((-0.05, -0.0101), rope, 1.0, 0.0) == "≪"
    assert decide((-0.05, 0.05), rope, 0.5, 0.5) == "?"  # a tie leans to neither
    assert decide((-0.05, 0.05), rope, 0.49, 0.51, margin=0.03) == "?"  # nor does a difference within the margin
    assert decide((-0.05, 0.05), rope, 0.45, 0.55, margin=0.03) == ">"


def test_hdi_of_a_skewed_distribution():
    draws = np.random.default_rng(1).exponential(1.0, 200_000)
    low, high = hdi(draws)
    assert low < 1e-3 and high == pytest.approx(-np.log(0.05), abs=0.03)


@pytest.mark.parametrize("average", ["macro", "micro"])
def test_prior_draws_against_numpy_prior(average):
    m, draws = 3, 20_000
    ours = prior_delta_draws(m, average, 1.0, (1.0, 1.0), "joint", draws)
    rng = np.random.default_rng(9)
    mu = rng.dirichlet(np.ones(m), draws)
    psi = [_f1_reference(mu, _dirichlet_rows(rng, _omega(rng.beta(1.0, 1.0, draws), m)), average) for _ in range(2)]
    assert stats.ks_2samp(ours, psi[0] - psi[1]).pvalue > 1e-3


# -- (e) the ROPE Bayes factor, and why there is no point-null one ---------------------------------
def test_interval_bayes_factor_on_known_normals():
    """Prior N(0, 1), posterior N(0, 0.1²), ROPE ±0.1: BF01 = [Φ-mass odds] / [Φ-mass odds], from scipy."""
    rng = np.random.default_rng(4)
    rope = (-0.1, 0.1)
    p, q = stats.norm.cdf(1.0) - stats.norm.cdf(-1.0), stats.norm.cdf(0.1) - stats.norm.cdf(-0.1)
    exact = (p / (1 - p)) / (q / (1 - q))
    bf = interval_bayes_factor(rng.normal(0, 0.1, 100_000), rng.normal(0, 1, 100_000), rope)
    assert bf.low < exact < bf.high and abs(bf.bf01 - exact) < 4 * bf.mc_error and bf.bound is None
    assert bf.bf10 == pytest.approx(1 / bf.bf01) and bf.prior.mc_error == pytest.approx(np.sqrt(q * (1 - q) / 1e5),
                                                                                     rel=0.05)
    far = interval_bayes_factor(rng.normal(1.0, 0.01, 50_000), rng.normal(0, 1, 50_000), rope)
    assert far.bf01 is None and far.bound == "upper" and far.low == 0.0 and 0 < far.high < 2e-3
    assert "BF01 < " in far.text() and "no posterior draw" in far.text() and far.to_dict()["bf01"] is None
    inside = interval_bayes_factor(rng.normal(0.0, 0.001, 50_000), rng.normal(0, 1, 50_000), rope)
    assert inside.bound == "lower" and inside.high == np.inf and inside.low > 100 and "BF01 > " in inside.text()
    assert json.loads(json.dumps(inside.to_dict(), allow_nan=False))["high"] is None
    no_prior = interval_bayes_factor(rng.normal(0.0, 0.05, 1_000), rng.normal(10, 0.1, 1_000), rope)
    assert no_prior.bound == "lower" and "no prior draw in the ROPE" in no_prior.text()
    neither = interval_bayes_factor(rng.normal(5.0, 0.1, 1_000), rng.normal(10, 0.1, 1_000), rope)
    assert neither.bound == "none" and "not estimated" in neither.text() and neither.short_text().endswith("estimated")


def _reference_eta_posterior(rng, counts, size, grid=20_001):
    """η | C on an equispaced grid in η from scipy's Dirichlet–multinomial likelihood (uniform prior), by
    inverting the trapezoid CDF: a second method beside the library's logit-grid quadrature."""
    eta = np.linspace(0.0, 1.0, grid)[1:-1]
    omega = _omega(eta, counts.shape[0])
    log_density = sum(stats.dirichlet_multinomial.logpmf(counts[j], omega[:, j, :], counts[j].sum())
                      for j in range(counts.shape[0]))
    density = np.exp(log_density - log_density.max())
    cdf = np.concatenate([[0.0], np.cumsum((density[1:] + density[:-1]) / 2)])
    return np.interp(rng.random(size), cdf / cdf[-1], eta)


def _reference_micro_delta(rng, a, b, size, posterior=True):
    """δ = micro F1(A) − micro F1(B), one μ for both, written from the model: θ_jj | η, c ~ Beta(η + c_jj,
    1 − η + n_j − c_jj) (a Dirichlet's margin); with posterior=False the counts are zero (the prior)."""
    n = a.sum(axis=1) if posterior else np.zeros(a.shape[0])
    mu = rng.dirichlet(1.0 + n, size)
    psi = []
    for counts in (a, b):
        eta = _reference_eta_posterior(rng, counts, size) if posterior else rng.uniform(size=size)
        diag = np.diag(counts) if posterior else np.zeros(a.shape[0])
        theta = rng.beta(eta[:, None] + diag, (1 - eta)[:, None] + n - diag)
        psi.append((mu * theta).sum(axis=1))
    return psi[0] - psi[1]


def test_interval_bayes_factor_against_an_independent_sampler():
    """The ROPE masses and BF01 of micro F1 against prior and posterior draws from numpy/scipy (not the library's
    samplers): each within 4.5 combined Monte Carlo errors."""
    rng, rope = np.random.default_rng(24), (-0.02, 0.02)
    result = f1_posterior(SMALL_A, SMALL_B, average="micro", rope=rope, samples=50_000, seed=5)
    post = _reference_micro_delta(rng, SMALL_A, SMALL_B, 200_000)
    prior = _reference_micro_delta(rng, SMALL_A, SMALL_B, 400_000, posterior=False)
    reference = interval_bayes_factor(post, prior, rope)
    ours = result.bayes_factor
    for mine, theirs in ((ours.posterior, reference.posterior), (ours.prior, reference.prior)):
        assert abs(mine.mass - theirs.mass) < 4.5 * np.hypot(mine.mc_error, theirs.mc_error), (mine, theirs)
    assert abs(ours.bf01 - reference.bf01) < 4.5 * np.hypot(ours.mc_error, reference.mc_error)
    assert ours.low < ours.bf01 < ours.high and ours.prior.draws == 200_000 and ours.posterior.draws == 50_000
    assert 0.05 < ours.posterior.mass < 0.5  # the test means something: many draws in the ROPE


def test_prior_density_at_zero_diverges():
    """The window estimate of δ's prior density at 0 grows as the window shrinks, each step beyond its sampling
    error, in the library's prior draws and in numpy's (so in the model, not in a sampler); a smooth density
    (the posterior's) does not."""
    windows = (0.05, 0.01, 0.002, 5e-4)
    ours = prior_delta_draws(3, "micro", 1.0, (1.0, 1.0), "independent", 200_000)
    rng = np.random.default_rng(3)
    mu_a, mu_b = rng.dirichlet(np.ones(3), (2, 200_000))
    psi = [(mu * rng.beta(eta[:, None], 1 - eta[:, None], (eta.size, 3))).sum(axis=1)
           for mu, eta in ((mu_a, rng.uniform(size=200_000)), (mu_b, rng.uniform(size=200_000)))]
    for draws in (ours, psi[0] - psi[1]):
        table = point_null_ratios(draws[:1000] * 0.0 + 0.3, draws, windows)  # posterior far from 0: ratios unused
        prior_density = [r.prior_density for r in table.rows]
        counts = [r.prior_count for r in table.rows]
        for k in range(len(windows) - 1):  # Clopper–Pearson 99.9% intervals of consecutive densities do not overlap
            low = stats.binomtest(counts[k + 1], draws.size).proportion_ci(0.999).low / (2 * windows[k + 1])
            high = stats.binomtest(counts[k], draws.size).proportion_ci(0.999).high / (2 * windows[k])
            assert low > high, (windows[k], prior_density)
        assert prior_density[-1] > 5 * prior_density[0]
    smooth = f1_posterior(A3, B3, average="micro", samples=20_000, seed=3).delta  # sd 0.04: smooth at this scale
    at = float(np.median(smooth))
    assert window_density(smooth, 0.002, at) == pytest.approx(window_density(smooth, 0.01, at), rel=0.15)


def test_point_null_option_shows_windows_side_by_side(tmp_path, capsys):
    from tablegen.cli.main import main

    result = f1_posterior(A3, B3, samples=2_000, seed=1, point_null=True)
    windows = [r.half_width for r in result.point_null.rows]
    assert windows == [0.05, 0.01, 0.002, 5e-4, 1e-4] and "NOT a Bayes factor" in result.table()
    assert [w["half_width"] for w in result.to_dict()["point_null_ratios"]["windows"]] == windows
    with pytest.raises(TablegenInputError, match="point_null must be True or False"):
        f1_posterior(A3, B3, samples=2_000, point_null="yes")
    a, b = _matrices(tmp_path)
    assert main(["compare", "f1", a, b, "--samples", "2000", "--seed", "1", "--point-null-bf"]) == 0
    out = capsys.readouterr().out
    assert "NOT a Bayes factor" in out and "0.0001" in out and "ROPE Bayes factor BF01" in out


# -- the public functions --------------------------------------------------------------------------
def test_result_contents_and_reproducibility():
    first = f1_posterior(A3, B3, rope=0.01, samples=5_000, seed=11)
    again = f1_posterior(A3, B3, rope=0.01, samples=5_000, seed=11)
    assert np.array_equal(first.delta, again.delta) and first.table() == again.table()
    other = f1_posterior(A3, B3, rope=0.01, samples=5_000, seed=12)
    assert not np.array_equal(first.delta, other.delta)
    fresh = f1_posterior(A3, B3, rope=0.01, samples=5_000)
    assert np.array_equal(f1_posterior(A3, B3, rope=0.01, samples=5_000, seed=fresh.seed).delta, fresh.delta)
    d = json.loads(json.dumps(first.to_dict()))
    assert d["decision"] == first.decision and d["rope"] == [-0.01, 0.01] and d["samples"] == 5_000
    assert d["delta"]["hdi_low"] <= d["delta"]["mean"] <= d["delta"]["hdi_high"]
    assert first.sentence().startswith(f"A {first.decision} B on macro F1")
    assert first.sentence(("SVM", "kNN")).startswith(f"SVM {first.decision} kNN on macro F1: δ = ψ(SVM) − ψ(kNN)")
    assert "ψ(SVM)" in first.table(("SVM", "kNN")) and "decision: SVM" in first.table(("SVM", "kNN"))
    assert np.allclose(first.delta, first.a.draws - first.b.draws)


def test_observed_f1_matches_scikit_learn():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    y_true = np.repeat(np.arange(3), A3.sum(axis=1))
    y_pred = np.concatenate([np.repeat(np.arange(3), row) for row in A3])
    result = f1_posterior(A3, B3, samples=1_000, seed=1)
    assert result.a.observed == pytest.approx(sklearn_metrics.f1_score(y_true, y_pred, average="macro"))
    micro = f1_score_posterior(A3, average="micro", samples=1_000, seed=1)
    assert micro.observed == pytest.approx(sklearn_metrics.f1_score(y_true, y_pred, average="micro"))


def test_identical_classifiers_with_joint_mu_center_on_zero():
    result = f1_posterior(A3, A3, samples=40_000, seed=2)
    assert abs(result.summary.mean) < 4 * result.summary.mc_error
    assert abs(result.summary.below_zero - 0.5) < 4 * result.summary.share_mc_error


def test_joint_mu_is_no_wider_than_independent():
    """Shared class proportions remove μ's noise from δ (macro F1 depends on μ through precision)."""
    rng = np.random.default_rng(5)
    n = np.array([400, 40, 15, 200])
    a, b = _matrix(rng, n, 0.85, 2), _matrix(rng, n, 0.8, 2)
    joint = f1_posterior(a, b, samples=20_000, seed=1)
    independent = f1_posterior(a, b, samples=20_000, seed=1, mu="independent")
    assert joint.summary.sd < 0.95 * independent.summary.sd


@pytest.mark.parametrize("kwargs, match", [
    ({"confusion_a": [[1, 2, 3], [4, 5, 6]]}, "confusion_a must be square"),
    ({"confusion_b": [[5, -1, 0], [1, 5, 1], [0, 1, 5]]}, r"confusion_b must hold non-negative integer"),
    ({"confusion_a": [[5, 0.5, 0], [1, 5, 1], [0, 1, 5]]}, r"confusion_a must hold non-negative integer"),
    ({"confusion_a": [[5, np.nan, 0], [1, 5, 1], [0, 1, 5]]}, r"confusion_a must hold"),
    ({"confusion_a": [[5]]}, "confusion_a needs at least 2 classes"),
    ({"confusion_a": [["a", "b"], ["c", "d"]]}, "confusion_a must be a square matrix of counts"),
    ({"confusion_b": [[5, 1], [1, 5]]}, "confusion_b has 2 classes but confusion_a has 3"),
    ({"confusion_b": [[40, 6, 4], [8, 33, 9], [3, 5, 43]]}, r"confusion_b.s row sums .*\(class 2: 51 vs 50\)"),
    ({"confusion_a": [[5, 1, 0], [0, 0, 0], [0, 1, 5]]}, "confusion_a: class 1 .* has no test items"),
    ({"rope": 0}, "rope must be"), ({"rope": -0.01}, "rope must be"), ({"rope": (0.01, 0.02)}, "low < 0 < high"),
    ({"rope": (-0.01, 0.0)}, "low < 0 < high"), ({"rope": "wide"}, "rope must be"), ({"rope": (1, 2, 3)}, "rope"),
    ({"average": "weighted"}, "average must be one of"), ({"samples": 10}, "samples must be an integer >= 100"),
    ({"seed": -1}, "seed must be"), ({"mu": "both"}, "mu must be one of"),
    ({"prior": {"alpha": (0, 1)}}, r"prior alpha\[0\]"), ({"prior": {"gamma": 1}}, "prior: unknown keys"),
    ({"prior": {"beta": -1}}, "prior beta"), ({"credible_mass": 1.0}, "credible_mass"),
])
def test_bad_input_names_the_argument(kwargs, match):
    arguments = {"confusion_a": A3, "confusion_b": B3, **kwargs}
    with pytest.raises(TablegenInputError, match=match):
        f1_posterior(**arguments)


def test_independent_mu_allows_different_test_sets():
    other = B3 + np.eye(3, dtype=int)
    result = f1_posterior(A3, other, samples=1_000, seed=1, mu="independent")
    assert result.mu == "independent"
    with pytest.raises(TablegenInputError, match="confusion"):
        f1_score_posterior([[1, 2], [3]])


# -- frequentist tests ---------------------------------------------------------------------------------
def _items(confusion):
    y = np.repeat(np.arange(len(confusion)), np.sum(confusion, axis=1))
    pred = np.concatenate([np.repeat(np.arange(len(row)), row) for row in confusion])
    return y, pred


def test_frequentist_tests_against_references():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(6)
    y = rng.integers(0, 5, 600)
    pa = np.where(rng.random(600) < 0.8, y, rng.integers(0, 5, 600))
    pb = np.where(rng.random(600) < 0.72, y, rng.integers(0, 5, 600))
    a, b = (sklearn_metrics.confusion_matrix(y, p, labels=range(5)) for p in (pa, pb))
    tests = {t.name.split(" (")[0]: t for t in f1_frequentist_tests(a, b, y_true=y, y_pred_a=pa, y_pred_b=pb).tests}
    # micro sign test: Yang & Liu's binary decisions (item, class), listed one by one.
    decisions_a = np.array([(p == c) == (t == c) for t, p in zip(y, pa) for c in range(5)])
    decisions_b = np.array([(p == c) == (t == c) for t, p in zip(y, pb) for c in range(5)])
    only_a, only_b = np.sum(decisions_a & ~decisions_b), np.sum(~decisions_a & decisions_b)
    assert tests["micro sign test"].statistic == only_a and tests["micro sign test"].n == only_a + only_b
    assert tests["micro sign test"].p_value == pytest.approx(stats.binomtest(only_a, only_a + only_b).pvalue)
    # macro sign test and t-test on scikit-learn's per-class F1.
    f1a, f1b = (sklearn_metrics.f1_score(y, p, average=None) for p in (pa, pb))
    wins = int(np.sum(f1a > f1b))
    assert tests["macro sign test"].statistic == wins
    assert tests["macro sign test"].p_value == pytest.approx(stats.binomtest(wins, 5).pvalue)
    d = f1a - f1b
    t = d.mean() / (d.std(ddof=1) / np.sqrt(5))
    assert tests["macro paired t-test"].statistic == pytest.approx(t)
    assert tests["macro paired t-test"].p_value == pytest.approx(2 * stats.t.sf(abs(t), 4))
    # proportions test in Yang & Liu's equal-n form.
    p_a, p_b = np.mean(pa == y), np.mean(pb == y)
    p = (p_a + p_b) / 2
    z = (p_a - p_b) / np.sqrt(2 * p * (1 - p) / 600)
    assert tests["micro proportions test"].statistic == pytest.approx(z)
    assert tests["micro proportions test"].p_value == pytest.approx(2 * stats.norm.sf(abs(z)))
    assert tests["micro proportions test"].symbol == ("≫" if 2 * stats.norm.sf(abs(z)) <= 0.01 else ">")


def test_frequentist_tests_without_predictions_and_bad_predictions():
    tests = f1_frequentist_tests(A3, B3)
    assert tests.tests[0].p_value is None and "needs per-item predictions" in tests.table()
    same = f1_frequentist_tests(A3, A3)
    assert [t.symbol for t in same.tests[1:]] == ["~", "~", "~"] and same.tests[3].p_value == 1.0
    y, pred = _items(A3)
    with pytest.raises(TablegenInputError, match="do not reproduce confusion_b"):
        f1_frequentist_tests(A3, B3, y_true=y, y_pred_a=pred, y_pred_b=pred)
    with pytest.raises(TablegenInputError, match="give all of"):
        f1_frequentist_tests(A3, B3, y_true=y)


# -- command line -------------------------------------------------------------------------------------
def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def _matrices(tmp_path):
    a = _write(tmp_path / "a.csv", ",0,1,2\n0,45,3,2\n1,4,40,6\n2,1,2,47\n")  # pandas layout
    b = _write(tmp_path / "b.csv", "# classifier B\n40 6 4\n8 33 9\n3 5 42\n")
    return a, b


@pytest.mark.slow
def test_cli_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from tablegen.cli.main import main

    a, b = _matrices(tmp_path)
    png = tmp_path / "f1.png"
    assert main(["compare", "f1", a, b, "--samples", "2000", "--seed", "1", "--plot", str(png),
                 "--names", "SVM", "kNN"]) == 0
    assert f"wrote {png}" in capsys.readouterr().out and png.stat().st_size > 10_000
    assert main(["compare", "f1", a, b, "--samples", "500", "--plot", str(tmp_path / "no" / "f1.png")]) == 2
    assert "--plot" in capsys.readouterr().err


def test_cli_text_and_json(tmp_path, capsys):
    from tablegen.cli.main import main

    a, b = _matrices(tmp_path)
    assert main(["compare", "f1", a, b, "--samples", "2000", "--seed", "1", "--names", "SVM", "kNN"]) == 0
    out = capsys.readouterr().out
    assert "A = SVM" in out and "decision: SVM ≫ kNN" in out and "macro sign test" in out
    assert "ROPE Bayes factor BF01 = " in out and "Point-null" not in out
    assert main(["compare", "f1", a, b, "--samples", "2000", "--seed", "1", "--json", "--average", "micro",
                 "--rope=-0.01,0.02"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["bayesian"]["rope"] == [-0.01, 0.02] and payload["bayesian"]["average"] == "micro"
    direct = f1_posterior(A3, B3, average="micro", rope=(-0.01, 0.02), samples=2000, seed=1)
    assert payload["bayesian"]["delta"]["mean"] == pytest.approx(direct.summary.mean)
    assert len(payload["frequentist"]["tests"]) == 4
    bf = payload["bayesian"]["bayes_factor"]
    assert bf["method"] == "interval (ROPE) Bayes factor" and bf["bf01"] == pytest.approx(direct.bayes_factor.bf01)
    assert bf["rope"] == [-0.01, 0.02] and "point_null_ratios" not in payload["bayesian"]


def test_cli_errors_name_the_file_or_option(tmp_path, capsys):
    from tablegen.cli.main import main

    a = _write(tmp_path / "a.csv", "45,3,2\n4,40,6\n1,2,47\n")
    b = _write(tmp_path / "b.csv", "40,6,4\n8,33,9\n3,5,43\n")
    bad = _write(tmp_path / "bad.csv", "1,2,3\n4,x,6\n7,8,9\n")
    short = _write(tmp_path / "short.csv", "1,2\n3,4\n")
    for argv, expected in (([a, b], f"{b}'s row sums"), ([a, bad], f"{bad}, line 2"),
                           ([a, short], f"{short} has 2 classes"), ([a, a, "--rope", "0"], "--rope must be"),
                           ([a, str(tmp_path / "missing.csv")], "cannot read it")):
        assert main(["compare", "f1", *argv, "--samples", "500"]) == 2
        assert expected in capsys.readouterr().err


def test_the_command_line_runs_the_micro_sign_test_from_per_item_predictions(tmp_path, capsys):
    """Once: `compare f1` on the command line could not run the micro sign test.  The per-item classes
    reproduce the two matrices; the test's counts are the one-vs-rest decisions (item, class) listed one by one."""
    from tablegen.cli.main import main

    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 150)
    pa = np.where(rng.random(150) < 0.85, y, rng.integers(0, 3, 150))
    pb = np.where(rng.random(150) < 0.7, y, rng.integers(0, 3, 150))
    matrices = []
    for name, pred in (("a", pa), ("b", pb)):
        matrix = np.bincount(y * 3 + pred, minlength=9).reshape(3, 3)
        matrices.append(_write(tmp_path / f"{name}.csv", "\n".join(" ".join(map(str, r)) for r in matrix) + "\n"))
    preds = _write(tmp_path / "preds.csv", "truth,a,b\n" + "".join(f"{t},{p},{q}\n" for t, p, q in zip(y, pa, pb)))
    assert main(["compare", "f1", *matrices, "--samples", "2000", "--predictions", preds, "--json"]) == 0
    micro = json.loads(capsys.readouterr().out)["frequentist"]["tests"][0]
    decisions_a = np.array([(p == c) == (t == c) for t, p in zip(y, pa) for c in range(3)])
    decisions_b = np.array([(p == c) == (t == c) for t, p in zip(y, pb) for c in range(3)])
    only_a, only_b = int(np.sum(decisions_a & ~decisions_b)), int(np.sum(~decisions_a & decisions_b))
    assert (micro["statistic"], micro["n"]) == (only_a, only_a + only_b)
    assert micro["p_value"] == pytest.approx(stats.binomtest(only_a, only_a + only_b).pvalue, rel=1e-12)
    assert main(["compare", "f1", *matrices, "--samples", "2000"]) == 0  # without them: said, not computed
    assert "needs per-item predictions" in capsys.readouterr().out


@pytest.mark.parametrize(("text", "message"), [
    ("truth,a\n0,1\n", "it needs three"),
    ("truth,a,b\n0,1,x\n", "row 1, column 'b': 'x' is not a class index"),
    ("truth,a,b\n0,1,2\n", "--predictions"),  # one item cannot reproduce the matrices
])
def test_bad_predictions_exit_2_naming_the_option(tmp_path, capsys, text, message):
    from tablegen.cli.main import main

    a, b = _matrices(tmp_path)
    preds = _write(tmp_path / "preds.csv", text)
    assert main(["compare", "f1", a, b, "--samples", "2000", "--predictions", preds]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("tablegen: error: --predictions"), err
