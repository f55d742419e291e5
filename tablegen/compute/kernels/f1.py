"""numba kernels of the Bayesian F1 comparison: gamma variates, Dirichlet draws, one ψ per posterior draw.

Why a kernel
------------
Macro F1 needs every cell of θ (the column sums Σ_u μ_u θ_uk are the precisions' denominators), so a
draw costs M² gamma variates per classifier: 40 million for two classifiers, M = 20 and 50,000 draws.
numpy's ``Generator.standard_gamma`` takes about 30 ns a variate on this machine (1.2 s for those
alone).  These kernels draw a row at a time into a length-M scratch row and reduce it to ψ on the spot
(no S × M × M array); the powers of the zero cells' first tries are computed by numpy in between
(:mod:`tablegen.compare.f1.sampler` explains the three phases).

Stream
------
xoshiro256** (:mod:`tablegen.compute.kernels.rng`).  Draw ``s`` of a stream keyed ``(key0, key1)`` uses
``replicate_state(key0, key1, s)``, so a draw depends on the key and its index alone, never on how the
draws are split into blocks.  Uniforms are ``((x >> 11) + 0.5) · 2⁻⁵³``, strictly inside (0, 1), so
``log`` never sees 0.  Normals: Doornik's 128-layer ziggurat ("An improved ziggurat method to generate
normal random samples", 2005), tables computed at import from its two constants.

Gamma(a)
--------
a ≥ 1: Marsaglia & Tsang (2000), "A simple method for generating gamma variables" (squeeze, then the
log test).  a < 1: Ahrens & Dieter's GS algorithm (1974), "Computer methods for sampling from gamma,
beta, Poisson and binomial distributions" — two uniforms and one power p^(1/a) per try, acceptance
near 1 for the tiny shapes (1 − η)/(M − 1) of the zero cells, which are most cells.  Variates below
10⁻³⁰⁰ are returned as 0: p^(1/a) underflows there for tiny a, and subnormal numbers would slow every
sum they enter about tenfold.  A 0 changes nothing because every confusion row has a cell of shape
≥ 1 (a row with a count, as validated), whose variate is below 10⁻³⁰⁰ with probability about 10⁻³⁰⁰,
so a row sum is never 0 and a flushed cell's share is below 10⁻³⁰⁰ of it.  (Prior draws have no
counts: the shapes of a row sum to 1, and all its variates fall below 10⁻³⁰⁰ with probability about
10⁻³⁰⁰; a NaN would be caught before any summary.)  ``tests/compare/test_compare_f1.py`` checks the variates
against ``scipy.stats.gamma`` (Kolmogorov–Smirnov and moments) over shapes from 10⁻³ to 10⁴.

Model (Zhang et al. 2015): row u of θ given η is Dirichlet(ω_u(η) + c_u) with ω_uu = η, ω_uk = (1 − η)/(M − 1);
``eta_bar`` carries 1 − η computed as expit(−t) (never 1 − η, which loses every digit near η = 1).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.rng import replicate_state, xoshiro_next

_U11 = np.uint64(11)
_TWO_M53 = 2.0 ** -53
_FLUSH = np.log(1e-300)


@nb.njit(inline="always", nogil=True)
def _uniform(state):
    """A uniform in (0, 1) from the stream in ``state`` (uint64[4], advanced in place)."""
    x, state[0], state[1], state[2], state[3] = xoshiro_next(state[0], state[1], state[2], state[3])
    return (np.float64(x >> _U11) + 0.5) * _TWO_M53


def _ziggurat_tables(layers: int = 128, r: float = 3.442619855899, v: float = 9.91256303526217e-3):
    """Layer edges x_i and ratios x_{i+1}/x_i of Doornik's 128-layer normal ziggurat (ZIGNOR)."""
    x = np.zeros(layers + 1)
    f = np.exp(-0.5 * r * r)
    x[0], x[1] = v / f, r
    for i in range(2, layers):
        x[i] = np.sqrt(-2.0 * np.log(v / x[i - 1] + f))
        f = np.exp(-0.5 * x[i] * x[i])
    return x, x[1:] / x[:-1], r


_ZIG_X, _ZIG_RATIO, _ZIG_R = _ziggurat_tables()
_U127 = np.uint64(127)


@nb.njit(inline="always", nogil=True)
def _normal_tail(negative, state):
    """A normal beyond the ziggurat's base |x| > r (Marsaglia's tail method)."""
    while True:
        x = np.log(_uniform(state)) / _ZIG_R
        y = np.log(_uniform(state))
        if -2.0 * y >= x * x:
            return x - _ZIG_R if negative else _ZIG_R - x


@nb.njit(inline="always", nogil=True)
def _normal(state):
    """A standard normal by Doornik's ziggurat (2005): u from the top 53 bits, the layer from the low 7."""
    while True:
        bits, state[0], state[1], state[2], state[3] = xoshiro_next(state[0], state[1], state[2], state[3])
        u = 2.0 * ((np.float64(bits >> _U11) + 0.5) * _TWO_M53) - 1.0
        i = np.int64(bits & _U127)
        if abs(u) < _ZIG_RATIO[i]:
            return u * _ZIG_X[i]
        if i == 0:
            return _normal_tail(u < 0.0, state)
        x = u * _ZIG_X[i]
        f0 = np.exp(-0.5 * (_ZIG_X[i] * _ZIG_X[i] - x * x))
        f1 = np.exp(-0.5 * (_ZIG_X[i + 1] * _ZIG_X[i + 1] - x * x))
        if f1 + _uniform(state) * (f0 - f1) < 1.0:
            return x


@nb.njit(inline="always", nogil=True)
def _gamma_at_least_one(a, state):
    """Gamma(a), a ≥ 1, by Marsaglia & Tsang's method."""
    d = a - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    while True:
        x = _normal(state)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = _uniform(state)
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2:
            return d * v
        if np.log(u) < 0.5 * x2 + d * (1.0 - v + np.log(v)):
            return d * v


@nb.njit(inline="always", nogil=True)
def _gamma_below_one(a, p_flush, state):
    """Gamma(a), 0 < a ≤ 1, by Ahrens & Dieter's GS algorithm, flushing p^(1/a) to 0 for p ≤ ``p_flush``.

    With the flush level ε = ``p_flush``^(1/a) ≤ 2⁻⁶⁰, a flushed try would have been accepted anyway
    (it accepts when u ≤ e⁻ˣ, and e⁻ˣ > 1 − 2⁻⁵⁴ ≥ u for x < 2⁻⁶⁰), so its u is not drawn.
    """
    b = 1.0 + a / np.e
    while True:
        p = b * _uniform(state)
        if p <= 1.0:
            if p <= p_flush:
                return 0.0
            x = np.exp(np.log(p) / a)
            u = _uniform(state)
            if u <= 1.0 - x or u <= np.exp(-x):
                return x
        else:
            x = -np.log((b - p) / a)
            if _uniform(state) <= np.exp((a - 1.0) * np.log(x)):
                return x


@nb.njit(inline="always", nogil=True)
def _gamma(a, state):
    """Gamma(a) for any a > 0 (variates below 10⁻³⁰⁰ flushed to 0)."""
    if a > 1.0:
        return _gamma_at_least_one(a, state)
    return _gamma_below_one(a, np.exp(a * _FLUSH), state)


@jit_cached(nogil=True)
def fill_gamma(shape, key0, key1, out):
    """Fill ``out`` with Gamma(``shape``) variates, draw i from stream i (for tests)."""
    state = np.empty(4, np.uint64)
    for i in range(out.shape[0]):
        state[0], state[1], state[2], state[3] = replicate_state(key0, key1, i)
        out[i] = _gamma(shape, state)


@jit_cached(nogil=True)
def sample_dirichlet(alpha, key0, key1, out):
    """Row s of ``out`` (S × M) := a Dirichlet(``alpha``) draw from stream s."""
    state = np.empty(4, np.uint64)
    for s in range(out.shape[0]):
        state[0], state[1], state[2], state[3] = replicate_state(key0, key1, s)
        total = 0.0
        for k in range(alpha.shape[0]):
            g = _gamma(alpha[k], state)
            out[s, k] = g
            total += g
        for k in range(alpha.shape[0]):
            out[s, k] /= total


@jit_cached(nogil=True)
def sample_micro_f1(counts, eta, eta_bar, mu, key0, key1, out):
    """``out[s]`` := micro F1 Σ_u μ_u θ_uu of posterior draw s, from stream s.

    θ_uu | η ~ Beta(η + c_uu, 1 − η + n_u − c_uu) (Dirichlet aggregation): two gamma variates a row.
    In single-label classification micro F1 is accuracy.  Shapes: counts (M, M), eta and eta_bar (S,),
    mu (S, M), out (S,).
    """
    row_sums = np.zeros(counts.shape[0])
    for u in range(counts.shape[0]):  # not counts.sum(axis=1): numba compiles its axis check's message (1 s)
        for k in range(counts.shape[1]):
            row_sums[u] += counts[u, k]
    state = np.empty(4, np.uint64)
    for s in range(out.shape[0]):
        state[0], state[1], state[2], state[3] = replicate_state(key0, key1, s)
        psi = 0.0
        for u in range(counts.shape[0]):
            hit = _gamma(eta[s] + counts[u, u], state)
            miss = _gamma(eta_bar[s] + (row_sums[u] - counts[u, u]), state)
            psi += mu[s, u] * hit / (hit + miss)
        out[s] = psi


@jit_cached(nogil=True)
def zero_cell_uniforms(n_zero, key0, key1, first, p_out, u_out, states):
    """Macro phase 1: the first GS try's two uniforms for every zero cell of draws first, first + 1, …

    Draw ``first + s`` uses stream ``first + s``; its state after these uniforms goes to ``states[s]``.
    """
    state = np.empty(4, np.uint64)
    for s in range(p_out.shape[0]):
        state[0], state[1], state[2], state[3] = replicate_state(key0, key1, first + s)
        for z in range(n_zero):
            p_out[s, z] = _uniform(state)
            u_out[s, z] = _uniform(state)
        for i in range(4):
            states[s, i] = state[i]


@nb.njit(inline="always", nogil=True)
def _zero_cell(a, p, u, x, p_flush, state):
    """A zero cell's variate: GS's first try (p already times b, x = p^(1/a) from numpy), else more tries.

    Both branches of the first try are GS's own (a try from the tail, p > 1, is a proposal like any
    other: skipping it would bias the variates towards 0); a rejected try continues on the stream.
    """
    if p <= 1.0:
        if x < 1e-300:  # below the flush level: accepted (see _gamma_below_one) and 0, never subnormal
            return 0.0
        if u <= 1.0 - x or u <= np.exp(-x):
            return x
    else:
        tail = -np.log((1.0 + a / np.e - p) / a)
        if u <= np.exp((a - 1.0) * np.log(tail)):
            return tail
    return _gamma_below_one(a, p_flush, state)


@jit_cached(nogil=True)
def macro_from_zero_cells(counts, eta, eta_bar, mu, p_first, u_first, x_first, states, out):
    """Macro phase 3: ``out[s]`` := mean_k 2 μ_k θ_kk / (μ_k + Σ_u μ_u θ_uk) for each draw s of the block.

    Zero cells (row-major order) take their first GS try from phase 1–2 (``p_first`` = b·p,
    ``u_first``, ``x_first`` = p^(1/a)); a rejected try continues GS on the draw's own stream (from
    ``states[s]``), as do the cells with a count (Marsaglia–Tsang).  2 P R / (P + R) with
    P = μ_k θ_kk / Σ_u μ_u θ_uk, R = θ_kk equals 2 μ_k θ_kk / (μ_k + Σ_u μ_u θ_uk).
    """
    m = counts.shape[0]
    state = np.empty(4, np.uint64)
    row, column, diagonal = np.empty(m), np.empty(m), np.empty(m)
    for s in range(out.shape[0]):
        for i in range(4):
            state[i] = states[s, i]
        eta_s, off = eta[s], eta_bar[s] / (m - 1)
        p_eta, p_off = np.exp(eta_s * _FLUSH), np.exp(off * _FLUSH)
        column[:] = 0.0
        z = 0
        for u in range(m):
            total = 0.0
            for k in range(m):
                a = eta_s if k == u else off
                if counts[u, k] > 0.0:
                    g = _gamma_at_least_one(a + counts[u, k], state)
                else:
                    g = _zero_cell(a, p_first[s, z], u_first[s, z], x_first[s, z], p_eta if k == u else p_off, state)
                    z += 1
                row[k] = g
                total += g
            weight = mu[s, u] / total
            for k in range(m):
                column[k] += weight * row[k]
            diagonal[u] = row[u] / total
        psi = 0.0
        for k in range(m):
            psi += 2.0 * mu[s, k] * diagonal[k] / (mu[s, k] + column[k])
        out[s] = psi / m
