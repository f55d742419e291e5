"""Exact nulls of best F1 and best balanced accuracy by the half-plane lattice programme.

"max_k metric >= value" is the event that the ranking's lattice path touches a half-plane
(:mod:`tablegen.kernels.lattice`).  The candidate values are every value the metric takes at some
lattice point, a finite superset of the attainable maxima; a critical value bisects over them with
O(log(P N)) programmes of O(P N) each (about 60 ms at P = N = 1000).
"""

from __future__ import annotations

import numpy as np

from tablegen.exact.nulls import LatticeNull
from tablegen.kernels.lattice import half_plane_hit_probability


def best_f1_null(P: int, N: int) -> LatticeNull:
    """Exact null of best F1 = max_k 2 TP_k / (P + k).

    Candidates: 2t/(P + t + f) for t = 1..P, f = 0..N (F1 at k = 0 is 0, below the always-attained
    2P/(2P + N) at k = P + N).  Equal fractions round to equal floats, so ``np.unique`` on the floats
    merges exactly the equal rationals; the fraction (num, den) kept for each is exact.
    Pr(F1 >= num/den) = Pr(touch 2 t den >= num (P + t + f)), i.e. a = 2 den - num, b = num, c = num P.
    """
    t = np.arange(1, P + 1, dtype=np.int64)[:, None]
    f = np.arange(0, N + 1, dtype=np.int64)[None, :]
    numerators = np.broadcast_to(2 * t, (P, N + 1)).ravel()
    denominators = (P + t + f).ravel()
    values, first = np.unique(numerators / denominators, return_index=True)
    numerators, denominators = numerators[first], denominators[first]

    def tail(index: int) -> float:
        num, den = int(numerators[index]), int(denominators[index])
        return half_plane_hit_probability(P, N, 2 * den - num, num, num * P)

    return LatticeNull(values=values, tail_function=tail)


def best_balanced_accuracy_null(P: int, N: int) -> LatticeNull:
    """Exact null of best balanced accuracy = (G + P N)/(2 P N), G = max_k (TP_k N - FP_k P).

    Candidates: every G = t N - f P >= 0 (G >= 0 always, from k = 0).  Pr(G >= g) is the touch
    probability of t N - f P >= g, i.e. a = N, b = P, c = g.
    """
    t = np.arange(0, P + 1, dtype=np.int64)[:, None]
    f = np.arange(0, N + 1, dtype=np.int64)[None, :]
    keys = np.unique(t * N - f * P)
    keys = keys[keys >= 0]
    values = (keys + P * N) / (2 * P * N)

    def tail(index: int) -> float:
        return half_plane_hit_probability(P, N, N, P, int(keys[index]))

    return LatticeNull(values=values, tail_function=tail)
