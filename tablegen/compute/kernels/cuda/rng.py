"""Device functions shared by the CUDA kernels: the replicate streams and unfused float arithmetic.

The generator is :mod:`tablegen.compute.kernels.rng` transcribed for numba-cuda: the same splitmix64
seeding of ``replicate_state(key0, key1, r)``, the same xoshiro256** step, all in uint64 with every
constant a ``np.uint64`` (numba-cuda, like numba, turns ``uint64 op int64`` into float64).

Floats: the CPU kernels round every multiplication and addition separately.  NVVM contracts a
multiply followed by an add into one fused multiply-add unless told otherwise, which would change
the last bit of average precision; :func:`mul_rn` and :func:`add_rn` call libdevice's
``__nv_dmul_rn`` / ``__nv_dadd_rn`` (PTX ``mul.rn`` / ``add.rn``, which the compiler never fuses).
Under the simulator libdevice has no Python implementation, so there they are plain Python float
operations, which never fuse either.  ``tests/compute/test_cuda_sim.py`` checks the streams and every score
against the CPU kernels.
"""

import numpy as np
from numba import cuda
from numba.cuda import config

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
LOW32 = np.uint64(0xFFFFFFFF)
TWO32 = np.uint64(1 << 32)
ZERO = np.uint64(0)
ONE = np.uint64(1)
TWO = np.uint64(2)
THREE = np.uint64(3)
FOUR = np.uint64(4)
FIVE = np.uint64(5)
SEVEN = np.uint64(7)
NINE = np.uint64(9)
S17 = np.uint64(17)
S27 = np.uint64(27)
S30 = np.uint64(30)
S31 = np.uint64(31)
S32 = np.uint64(32)
S45 = np.uint64(45)
S64 = np.uint64(64)
SIMULATOR = bool(config.ENABLE_CUDASIM)


@cuda.jit(device=True, inline=True)
def mix64(z):
    """splitmix64 finaliser (as :func:`tablegen.compute.kernels.rng.mix64`)."""
    z = (z ^ (z >> S30)) * MIX1
    z = (z ^ (z >> S27)) * MIX2
    return z ^ (z >> S31)


@cuda.jit(device=True, inline=True)
def rotl(x, k):
    """Rotate a uint64 left by the uint64 constant k."""
    return (x << k) | (x >> (S64 - k))


@cuda.jit(device=True, inline=True)
def replicate_state(key0, key1, replicate):
    """Initial xoshiro256** state of one replicate (as :func:`tablegen.compute.kernels.rng.replicate_state`)."""
    base = key0 + FOUR * np.uint64(replicate) * GOLDEN
    s0 = mix64(mix64(base + GOLDEN) ^ key1)
    s1 = mix64(mix64(base + TWO * GOLDEN) ^ key1)
    s2 = mix64(mix64(base + THREE * GOLDEN) ^ key1)
    s3 = mix64(mix64(base + FOUR * GOLDEN) ^ key1)
    if (s0 | s1 | s2 | s3) == ZERO:
        s0 = ONE
    return s0, s1, s2, s3


@cuda.jit(device=True, inline=True)
def xoshiro_next(s0, s1, s2, s3):
    """One xoshiro256** step: (output, s0, s1, s2, s3)."""
    result = rotl(s1 * FIVE, SEVEN) * NINE
    t = s1 << S17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = rotl(s3, S45)
    return result, s0, s1, s2, s3


@cuda.jit(device=True, inline=True)
def trailing_zeros(bits):
    """Number of trailing zero bits of a non-zero uint64 (popcount of the bits below the lowest set one)."""
    return cuda.popc((bits & (~bits + ONE)) - ONE)


if SIMULATOR:
    def mul_rn(a, b):
        """a * b rounded once (Python floats never fuse)."""
        return np.float64(a) * np.float64(b)

    def add_rn(a, b):
        """a + b rounded once."""
        return np.float64(a) + np.float64(b)
else:  # pragma: no cover - needs a GPU
    from numba.cuda import libdevice

    @cuda.jit(device=True, inline=True)
    def mul_rn(a, b):
        """a * b rounded once, never contracted into a fused multiply-add."""
        return libdevice.dmul_rn(a, b)

    @cuda.jit(device=True, inline=True)
    def add_rn(a, b):
        """a + b rounded once, never contracted into a fused multiply-add."""
        return libdevice.dadd_rn(a, b)
