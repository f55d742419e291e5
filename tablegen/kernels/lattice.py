"""Lattice-path dynamic programme: does a random ranking's path touch a half-plane?

A ranking is a monotone lattice path from (0, 0) to (P, N): a positive steps TP += 1, a negative
FP += 1, and all C(P+N, P) paths are equally likely.  For integers a > 0, b >= 0, c the event
"max over prefixes of a*TP - b*FP >= c" is the event that the path touches the half-plane
H = {(t, f): a t - b f >= c}.  Because a > 0 and b >= 0, a negative step never enters H, so a path
first enters H on a positive step.

The programme walks rows t = 0..P and, within a row, f = 0..N, carrying the probability that a
random path reaches (t, f) without having touched H (probability form: each step multiplies by
(P - t)/(P + N - t - f) or (N - f)/(P + N - t - f)).  Mass stepping into H is added to ``hit`` and
removed.  All terms are non-negative, so there is no cancellation: the returned probability has a
relative error of order (P + N) * 2**-53, even deep in the tail, where 1 - Pr(avoid) would lose
every digit.  Membership of H is decided in exact integer arithmetic.  Cost: O(P * N) time, O(N)
memory (about 3 ns per lattice point here, 3 ms at P = N = 1000).

The metrics map onto H as follows (``tablegen.exact.lattice``):
``best_accuracy >= (N + h)/(P + N)``   a = 1, b = 1, c = h
``best_balanced_accuracy`` with key g  a = N, b = P, c = g       (g = TP N - FP P)
``best_f1 >= num/den``                 a = 2 den - num, b = num, c = num P
Checked against brute-force enumeration and exact integer path counts in ``tests/test_exact.py``.
"""

import numba as nb
import numpy as np


@nb.njit(nogil=True)
def half_plane_hit_probability(n_pos, n_neg, a, b, c):
    """Probability that a uniformly random path from (0,0) to (P,N) touches a*t - b*f >= c.

    Parameters
    ----------
    n_pos, n_neg : int
        P and N (>= 0).
    a, b, c : int
        Half-plane coefficients, a > 0 and b >= 0 (see module docstring).

    Returns
    -------
    float
        The hitting probability, computed as a sum of non-negative terms.
    """
    if c <= 0:
        return 1.0  # the origin (0, 0) is already in the half-plane
    mass = np.zeros(n_neg + 1)
    mass[0] = 1.0
    hit = 0.0
    for t in range(n_pos + 1):
        carry = 0.0
        enters = a * (t + 1)  # a*(t+1) - b*f >= c  <=>  b*f <= a*(t+1) - c
        for f in range(n_neg + 1):
            here = mass[f] + carry
            remaining = n_pos + n_neg - t - f
            if remaining == 0:
                mass[f] = here
                break
            share = here / remaining
            carry = share * (n_neg - f)
            up = share * (n_pos - t)
            if t < n_pos and enters - b * f >= c:
                hit += up
                up = 0.0
            mass[f] = up
    return hit
