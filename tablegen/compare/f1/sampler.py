"""Draws of ψ given draws of η and μ: the Python layer over :mod:`tablegen.compute.kernels.f1`.

Micro F1 needs two gamma variates a row (one kernel call).  Macro F1 needs all M² cells of θ, and most
cells of a real confusion matrix are zero counts, whose shapes η or (1 − η)/(M − 1) are below 1: their
variates come from Ahrens & Dieter's GS algorithm, whose first try costs a power p^(1/a).  Computed one
cell at a time that power (a log and an exp from libm) dominates the time, so a block of draws goes
through three phases:

1. kernel: each draw's stream gives the first try's two uniforms (p, u) for every zero cell;
2. numpy, on the whole block at once (SIMD log and exp): b·p and x = (b·p)^(1/a);
3. kernel: accept or reject each first try (a rejected one continues GS on the draw's stream), draw the
   cells with a count (Marsaglia–Tsang), and reduce the row to ψ.

Every draw uses its own stream, so the result does not depend on the block size.  The variates are those of
GS exactly; only where the power is computed changes.
"""

from __future__ import annotations

import numpy as np

from tablegen.compute.kernels.f1 import macro_from_zero_cells, sample_micro_f1, zero_cell_uniforms

#: Zero cells per block of the macro path (block arrays of about 2 MB each stay in cache).
BLOCK_CELLS = 1 << 18


def _first_tries(p: np.ndarray, shape: np.ndarray) -> np.ndarray:
    """Phase 2, in place: p becomes b·p (b = 1 + a/e); returns x = (b·p)^(1/a) (huge where b·p > 1, unused)."""
    p *= 1.0 + shape / np.e
    x = np.log(p)
    x /= shape
    with np.errstate(over="ignore", under="ignore"):
        np.exp(x, out=x)
    return x


def macro_draws(counts: np.ndarray, eta: np.ndarray, eta_bar: np.ndarray, mu: np.ndarray, key) -> np.ndarray:
    """Macro F1 of each posterior draw (η, 1 − η, μ given), θ | η drawn from the stream keyed ``key``.

    Examples
    --------
    >>> counts = np.array([[40.0, 2, 0], [3, 30, 1], [0, 4, 20]])
    >>> eta, mu = np.full(1000, 0.6), np.tile(counts.sum(axis=1) / counts.sum(), (1000, 1))
    >>> draws = macro_draws(counts, eta, 1 - eta, mu, (np.uint64(1), np.uint64(2)))
    >>> draws.shape, bool(0.85 < draws.mean() < 0.93)
    ((1000,), True)
    """
    m = counts.shape[0]
    zero = np.flatnonzero(counts.ravel() == 0)
    on_diagonal = (zero // m) == (zero % m)
    block = int(np.clip(BLOCK_CELLS // max(zero.size, 1), 16, 4096))
    p_all, u_all = np.empty((block, zero.size)), np.empty((block, zero.size))  # reused: no page faults per block
    states_all = np.empty((block, 4), np.uint64)
    out = np.empty(eta.size)
    for start in range(0, eta.size, block):
        stop = min(start + block, eta.size)
        p, u, states = p_all[:stop - start], u_all[:stop - start], states_all[:stop - start]
        zero_cell_uniforms(zero.size, key[0], key[1], start, p, u, states)
        shape = np.where(on_diagonal, eta[start:stop, None], eta_bar[start:stop, None] / (m - 1))
        x = _first_tries(p, shape)
        macro_from_zero_cells(counts, eta[start:stop], eta_bar[start:stop], mu[start:stop], p, u, x, states,
                              out[start:stop])
    return out


def micro_draws(counts: np.ndarray, eta: np.ndarray, eta_bar: np.ndarray, mu: np.ndarray, key) -> np.ndarray:
    """Micro F1 of each posterior draw (η, 1 − η, μ given), from the stream keyed ``key``.

    Examples
    --------
    >>> counts = np.array([[40.0, 2, 0], [3, 30, 1], [0, 4, 20]])
    >>> eta, mu = np.full(1000, 0.6), np.tile(counts.sum(axis=1) / counts.sum(), (1000, 1))
    >>> bool(0.85 < micro_draws(counts, eta, 1 - eta, mu, (np.uint64(1), np.uint64(2))).mean() < 0.93)
    True
    """
    out = np.empty(eta.size)
    sample_micro_f1(counts, eta, eta_bar, mu, key[0], key[1], out)
    return out
