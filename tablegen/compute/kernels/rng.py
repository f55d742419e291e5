"""Random number generation for the Monte Carlo kernels (numba, no dask/zarr/xarray).

Generator: xoshiro256** (Blackman & Vigna 2018), 256-bit state, 64-bit outputs.
Seeding: every replicate ``r`` of a cell has its own state, derived by the splitmix64 finaliser
from the cell's 128-bit key ``(key0, key1)`` and ``r`` alone::

    s_i = mix(mix(key0 + (4*r + i + 1) * GOLDEN) ^ key1),   i = 0..3

so the sampled rankings depend on the cell and the replicate index, never on how replicates are
split into blocks, on block order, or on the number of workers.  The cell key itself comes from
``numpy.random.SeedSequence(root_seed, spawn_key=(P, N))`` (see :func:`tablegen.compute.mc.cell_key`).

Integer widths: all state and arithmetic is ``uint64``; every constant and shift count is an
explicit ``np.uint64`` because numba promotes ``uint64 op int64`` to float64.
Checked bit-for-bit against the pure-Python reference in ``tests/compute/test_rng.py``.
"""

import numba as nb
import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S17 = np.uint64(17)
_U1 = np.uint64(1)
_U4 = np.uint64(4)
_U5 = np.uint64(5)
_U9 = np.uint64(9)
_U45 = np.uint64(45)
_U7 = np.uint64(7)
_U64 = np.uint64(64)


@nb.njit(inline="always", nogil=True)
def mix64(z):
    """splitmix64 finaliser: a bijective 64-bit mixer."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@nb.njit(inline="always", nogil=True)
def rotl(x, k):
    """Rotate a uint64 left by k (k a uint64 constant in 1..63)."""
    return (x << k) | (x >> (_U64 - k))


@nb.njit(inline="always", nogil=True)
def replicate_state(key0, key1, replicate):
    """Initial xoshiro256** state of one replicate (see module docstring)."""
    base = key0 + _U4 * np.uint64(replicate) * GOLDEN
    s0 = mix64(mix64(base + GOLDEN) ^ key1)
    s1 = mix64(mix64(base + np.uint64(2) * GOLDEN) ^ key1)
    s2 = mix64(mix64(base + np.uint64(3) * GOLDEN) ^ key1)
    s3 = mix64(mix64(base + _U4 * GOLDEN) ^ key1)
    if (s0 | s1 | s2 | s3) == np.uint64(0):  # the one forbidden state (probability 2**-256)
        s0 = _U1
    return s0, s1, s2, s3


@nb.njit(inline="always", nogil=True)
def xoshiro_next(s0, s1, s2, s3):
    """One xoshiro256** step: returns (output, s0, s1, s2, s3)."""
    result = rotl(s1 * _U5, _U7) * _U9
    t = s1 << _S17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = rotl(s3, _U45)
    return result, s0, s1, s2, s3


@nb.njit(nogil=True)
def fill_stream(key0, key1, replicate, out):
    """Write the first ``len(out)`` outputs of one replicate's stream into ``out`` (for tests)."""
    s0, s1, s2, s3 = replicate_state(key0, key1, replicate)
    for i in range(out.shape[0]):
        out[i], s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)


# -- the same generator in int64 arithmetic, for the lane kernels: numba vectorises int64 lanes, not uint64 ones -----
@nb.njit
def rotl_int64(x, k):
    """:func:`rotl` on the bits of an int64 (a logical shift right, by masking the arithmetic one)."""
    return (x << k) | ((x >> (64 - k)) & ((1 << k) - 1))


@nb.njit
def xoshiro_next_int64(x0, x1, x2, x3):
    """:func:`xoshiro_next` in int64 arithmetic: the same bits (multiplication and shifts wrap alike), returns
    (output, x0, x1, x2, x3)."""
    result = rotl_int64(x1 * 5, 7) * 9
    t = x1 << 17
    x2 ^= x0
    x3 ^= x1
    x1 ^= x2
    x0 ^= x3
    x2 ^= t
    x3 = rotl_int64(x3, 45)
    return result, x0, x1, x2, x3
