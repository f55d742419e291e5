"""The Dirichlet-process posterior of the Bayesian sign and signed-rank tests (Benavoli, Corani, Demšar &
Zaffalon, JMLR 2017; Benavoli et al., ICML 2014), sampled exactly and vectorised.

The data are the n differences d_i = score(A) − score(B) on n data sets (oriented so that d > 0 favours A).
With a Dirichlet-process prior of strength s whose base measure is a point mass at 0 (the *prior
pseudo-observation*, inside the ROPE; for the sign test it may be placed in a region instead, as baycomp's
``SignTest`` allows: above the ROPE, "a", or below it, "b", written here as the point ±∞), the posterior of
the distribution of d is Σ_i w_i δ(z_i) over the n + 1 points z = (z_0 = 0, d_1, …, d_n) with weights
w ~ Dirichlet(s, 1, …, 1).  Each draw of w gives

* **sign test**: θ_A = Σ w_i [z_i > r], θ_B = Σ w_i [z_i < −r], θ_ROPE = the rest (the prior point and the
  differences with |d| ≤ r).  By the aggregation property of the Dirichlet this is the Dirichlet
  (n_A, n_ROPE + s, n_B) of baycomp's ``SignTest`` (which adds 10⁻⁴ to each count; here an empty class
  stays exactly 0);
* **signed-rank test**: the probability that the average of two independent draws from the posterior
  distribution (a Walsh average) falls above r, below −r or within: θ_A = Σ_{i,j} w_i w_j h(z_i + z_j − 2r),
  θ_B = Σ_{i,j} w_i w_j h(−2r − z_i − z_j), with h(t) = 1 for t > 0, ½ at t = 0, 0 below (baycomp's
  ``SignedRankTest``: the sum runs over all ordered pairs, i = j included, so the three add up to 1).

Sampling: w is drawn as independent Gamma(s) and Exp(1) variables divided by their sum (exact).  The
signed-rank sums are O(n) per draw, not O(n²): sort z; for each i the j with fl(z_i + z_j) > 2r form a
suffix of the sorted points (floating addition is monotone), whose start k_i depends on the data only, so
θ_A = Σ_i w_i (W_total − ½(C[k_i^>] + C[k_i^≥])) with C the prefix sums of the sorted weights, and
likewise θ_B from prefixes.  The thresholds use the same floating sums as a dense n × n comparison, so
ties at ±2r get their half weight exactly as there.  Draws are made in blocks of :data:`BLOCK` to bound memory.

The posterior *means* of θ have closed forms (the Dirichlet moments E[w_i] = α_i/α₀ and
E[w_i w_j] = (α_i α_j + α_i [i = j]) / (α₀(α₀ + 1))): :func:`exact_mean` computes them from the dense
n × n comparison, independently of the sampler.
"""

from __future__ import annotations

import math

import numpy as np

#: Draws per block of the vectorised sampler (memory: about 5 arrays of BLOCK × (n + 1) doubles).
BLOCK = 25_000


#: Where the prior pseudo-observation may sit -> its point: 0 (in the ROPE), or a region of the sign test
#: (baycomp's ``SignTest`` prior ``(strength, LEFT | ROPE | RIGHT)``: LEFT is "a better", RIGHT "b better").
PRIOR_PLACES = {"rope": 0.0, "a": math.inf, "b": -math.inf}


def points(d: np.ndarray, place: str = "rope") -> np.ndarray:
    """The n + 1 support points (z_0, d_1, …, d_n): the prior pseudo-observation first, at
    :data:`PRIOR_PLACES` [place]."""
    return np.concatenate(([PRIOR_PLACES[place]], np.asarray(d, dtype=float)))


def weights(n: int, prior: float, samples: int, rng: np.random.Generator) -> np.ndarray:
    """(samples, n + 1) draws of Dirichlet(prior, 1, …, 1): Gamma(prior) and Exp(1) over their sum.

    Examples
    --------
    >>> w = weights(3, 0.5, 4, np.random.default_rng(0))
    >>> w.shape, bool(np.allclose(w.sum(axis=1), 1))
    ((4, 4), True)
    """
    w = np.empty((samples, n + 1))
    w[:, 0] = rng.standard_gamma(prior, samples)
    w[:, 1:] = rng.standard_exponential((samples, n))
    w /= w.sum(axis=1, keepdims=True)
    return w


def _regions(z: np.ndarray, rope: float) -> tuple[np.ndarray, np.ndarray]:
    """Dense (N, N) h-weights of the Walsh sums above 2r and below −2r (h = ½ at equality)."""
    sums = z[:, None] + z[None, :]
    above = (sums > 2 * rope) + 0.5 * (sums == 2 * rope)
    below = (sums < -2 * rope) + 0.5 * (sums == -2 * rope)
    return above, below


def exact_mean(d: np.ndarray, test: str, rope: float, prior: float, place: str = "rope") -> np.ndarray:
    """Posterior means (E θ_A, E θ_ROPE, E θ_B), exact (Dirichlet moments; module docstring).

    Examples
    --------
    >>> exact_mean(np.array([0.1, 0.2, -0.05]), "sign", 0.01, 1.0).tolist()
    [0.5, 0.25, 0.25]
    """
    z = points(d, place)
    alpha = np.ones(z.size)
    alpha[0] = prior
    total = alpha.sum()
    if test == "sign":
        a, b = float(alpha[z > rope].sum()), float(alpha[z < -rope].sum())
        return np.array([a, total - a - b, b]) / total
    share = alpha / total  # E[w_i w_j] = (α_i α_j + α_i [i = j]) / (α₀(α₀ + 1)), without overflow for a huge prior
    moments = np.outer(share, share) * (total / (total + 1)) + np.diag(share) / (total + 1)
    above, below = _regions(z, rope)
    a, b = float(np.sum(moments * above)), float(np.sum(moments * below))
    return np.array([a, 1.0 - a - b, b])


def _gather_mean(prefix: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """½(prefix[:, first] + prefix[:, second]), one gather where the two index sets agree (no ties)."""
    if np.array_equal(first, second):
        return prefix[:, first]
    return 0.5 * (prefix[:, first] + prefix[:, second])


def _signed_rank_block(w: np.ndarray, z: np.ndarray, rope: float) -> np.ndarray:
    order = np.argsort(z, kind="stable")
    zs, ws = z[order], w[:, order]
    sums = zs[:, None] + zs[None, :]
    prefix = np.zeros((w.shape[0], z.size + 1))
    np.cumsum(ws, axis=1, out=prefix[:, 1:])
    out = np.empty((w.shape[0], 3))
    # θ_A = Σ_i w_i (total − C[k]) and Σ_i w_i total = total²: one product with the prefix gather
    above = _gather_mean(prefix, (sums <= 2 * rope).sum(axis=1), (sums < 2 * rope).sum(axis=1))
    out[:, 0] = prefix[:, -1] ** 2 - np.einsum("si,si->s", ws, above)
    below = _gather_mean(prefix, (sums < -2 * rope).sum(axis=1), (sums <= -2 * rope).sum(axis=1))
    out[:, 2] = np.einsum("si,si->s", ws, below)
    out[:, 1] = 0.0 if rope == 0 else 1.0 - out[:, 0] - out[:, 2]
    return out


def _sign_block(w: np.ndarray, z: np.ndarray, rope: float) -> np.ndarray:
    classes = np.stack([z > rope, np.abs(z) <= rope, z < -rope], axis=1).astype(float)
    return w @ classes


def theta_draws(d: np.ndarray, test: str, rope: float, w: np.ndarray, place: str = "rope") -> np.ndarray:
    """(samples, 3) draws of (θ_A, θ_ROPE, θ_B) for differences ``d`` from Dirichlet weights ``w`` (the prior
    pseudo-observation at ``place``: the sign test only places it outside the ROPE).

    Examples
    --------
    >>> w = weights(3, 1.0, 2, np.random.default_rng(0))
    >>> bool(np.allclose(theta_draws(np.array([0.1, 0.2, -0.05]), "sign", 0.01, w).sum(axis=1), 1))
    True
    """
    z = points(d, place)
    block = _sign_block if test == "sign" else _signed_rank_block
    return np.concatenate([block(w[start:start + BLOCK], z, rope) for start in range(0, w.shape[0], BLOCK)])


def argmax_shares(draws: np.ndarray, rope: float) -> np.ndarray:
    """(p_A, p_ROPE, p_B): the share of draws in which each θ is the largest (baycomp's ``probs``); with
    ``rope == 0`` the ROPE is left out and p_A, p_B are renormalised over the rest, as there.

    Examples
    --------
    >>> argmax_shares(np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]]), 0.01).tolist()
    [0.5, 0.5, 0.0]
    """
    counts = np.bincount(np.argmax(draws, axis=1), minlength=3).astype(float)
    if rope == 0:
        counts[1] = 0.0
    total = counts.sum()
    return counts / total if total else counts


def format_probability(p: float, error: float, samples: int | None = None) -> str:
    """A Monte Carlo probability with its standard error, to the error's second significant digit; a share of
    0 or 1 out of ``samples`` draws as the one-sided 95% bound of the rule of three (3/S).

    Examples
    --------
    >>> format_probability(0.9604, 0.00044), format_probability(0.0, 0.0, 50_000), format_probability(1.0, 0.0)
    ('0.96040 ± 0.00044', '< 6e-05', '1 ± 0')
    """
    if error <= 0:
        if samples:
            return f"< {3 / samples:.1g}" if p == 0 else f"> {1 - 3 / samples:.6g}"
        return f"{p:g} ± 0"
    digits = max(3, 1 - int(math.floor(math.log10(error))))
    return f"{p:.{digits}f} ± {error:.{digits}f}"
