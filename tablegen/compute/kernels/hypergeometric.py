"""Positives in the top k of a random ranking, for every k = 1..K in one pass (numba, O(K P)).

A uniformly random ranking of P positives and N negatives puts X_k ~ Hypergeometric(P + N, P, k)
positives in its top k.  Walking down the ranking, the item at position k is positive with
probability (P - x) / (P + N - k + 1) given x positives above it, so the distribution of X_k follows
from that of X_{k-1}:

    Pr(X_k = x) = Pr(X_{k-1} = x) (N - (k - 1 - x)) / (n - k + 1)
                + Pr(X_{k-1} = x - 1) (P - x + 1) / (n - k + 1)

(Macskassy 2005 uses this recursion for the same bounds).  Every term is a product and sum of
non-negative numbers, so the probabilities keep their relative accuracy far into the tails.  The
upper tails S_k(c) = Pr(X_k >= c) are summed from the top for each k; bounds and p-values are read
from them, never from 1 - CDF, so a tail of 1e-12 keeps its digits.

Conventions (exact inverses of each other; ``tests/lookup/test_topk.py`` checks them by brute force, and that
each holds its level: Pr(reject at k) <= p under a random ranking, summed over the exact pmf):

discrete bound       the smallest c with Pr(X_k <= c) >= 1 - p, i.e. Pr(X_k > c) <= p; a count
                     x exceeds it iff the discrete p-value Pr(X_k >= ceil(x)) <= p
interpolated bound   c + (S_k(c) - p) / Pr(X_k = c) with c the discrete bound: it runs from c + 1
                     down towards c as p rises from Pr(X_k > c) to Pr(X_k >= c), so it lies in
                     (c, c + 1].  Its inverse, the interpolated p-value of a count x, is S_k(x) at an
                     integer x (the discrete p-value) and interpolates S_k linearly between
                     integers, (1 - f) S_k(floor x) + f S_k(floor x + 1) with f = x - floor x, a
                     non-increasing function of x; x reaches the interpolated bound iff that
                     p-value is <= p.  At integer counts the two variants reject the same counts
                     (so the level holds exactly); between integers (averaged curves) the
                     interpolated one is the more conservative.
"""

import numpy as np

from tablegen.compute.kernels.jit import jit_cached


@jit_cached(nogil=True)
def _advance(pmf, k, n_pos, n_neg):
    """Turn the distribution of X_{k-1} in ``pmf`` into that of X_k, in place."""
    inverse = 1.0 / (n_pos + n_neg - k + 1)
    high = min(k, n_pos)
    for x in range(high, max(0, k - 1 - n_neg) - 1, -1):
        negatives_left = n_neg - (k - 1 - x)
        stay = pmf[x] * (negatives_left * inverse) if negatives_left > 0 and x <= k - 1 else 0.0
        arrive = pmf[x - 1] * ((n_pos - x + 1) * inverse) if x >= 1 else 0.0
        pmf[x] = stay + arrive


@jit_cached(nogil=True)
def _upper_tails(pmf, tails, low, high):
    """tails[c] = Pr(X >= c) for c = low..high + 1 (tails[high + 1] = 0), summed from the top."""
    tails[high + 1] = 0.0
    for c in range(high, low - 1, -1):
        tails[c] = tails[c + 1] + pmf[c]


@jit_cached(nogil=True)
def _lower_tails(pmf, tails, low, high):
    """tails[c] = Pr(X <= c) for c = low..high, summed from the bottom."""
    total = 0.0
    for c in range(low, high + 1):
        total += pmf[c]
        tails[c] = total


@jit_cached(nogil=True)
def topk_sweep(n_pos, n_neg, n_k, levels, observed, discrete, interpolated, p_discrete, p_interpolated,
               lower_level, lower):
    """Bounds at every level and p-values of every observed count, for k = 1..n_k, in one pass.

    Parameters
    ----------
    n_pos, n_neg : int
        P and N (P >= 1, N >= 0).
    n_k : int
        K, at most P + N.
    levels : float64 array (L,)
        Tail probabilities p in (0, 1).
    observed : float64 array (K,)
        Positives in the top k of the ranking under test, each in [0, min(k, P)]; NaN skips a k.
    discrete, interpolated : float64 arrays (K, L)
        Filled with the discrete and interpolated bounds n(k, p).
    p_discrete, p_interpolated : float64 arrays (K,)
        Filled with Pr(X_k >= ceil(x_k)) and the interpolated Pr(X_k >= x_k) (NaN where x_k is NaN):
        single-ranking tails, equal at integer x_k.
    lower_level : float
        Tail probability of the lower bound.
    lower : float64 array (K,)
        Filled with the interpolated lower bound: the mirror image of the upper one (the upper bound
        of the negatives in the top k, subtracted from k), c - (Pr(X_k <= c) - p) / Pr(X_k = c)
        with c the largest count with Pr(X_k < c) <= p.
    """
    pmf = np.zeros(n_pos + 2)
    tails = np.zeros(n_pos + 3)
    lower_tails = np.zeros(n_pos + 2)
    pmf[0] = 1.0
    for k in range(1, n_k + 1):
        _advance(pmf, k, n_pos, n_neg)
        low, high = max(0, k - n_neg), min(k, n_pos)
        _upper_tails(pmf, tails, low, high)
        _lower_tails(pmf, lower_tails, low, high)
        c = low
        while c < high and lower_tails[c] <= lower_level:
            c += 1
        lower[k - 1] = c - min(1.0, (lower_tails[c] - lower_level) / pmf[c]) if pmf[c] > 0 else c - 1
        for j in range(levels.shape[0]):
            p = levels[j]
            c = high
            while c > low and tails[c] <= p:
                c -= 1
            discrete[k - 1, j] = c
            mass = pmf[c]
            # tails[c] > p >= tails[c + 1], so 0 < tails[c] - p <= mass: the bound is in (c, c + 1]
            interpolated[k - 1, j] = c + min(1.0, (tails[c] - p) / mass) if mass > 0 else c + 1
        x = observed[k - 1]
        if np.isnan(x):
            p_discrete[k - 1] = np.nan
            p_interpolated[k - 1] = np.nan
            continue
        at_least = int(np.ceil(x))
        p_discrete[k - 1] = 1.0 if at_least <= low else (0.0 if at_least > high else tails[at_least])
        whole = int(np.floor(x))
        fraction = x - whole
        at_whole = 1.0 if whole <= low else (0.0 if whole > high else tails[whole])
        at_next = 1.0 if whole + 1 <= low else (0.0 if whole + 1 > high else tails[whole + 1])
        p_interpolated[k - 1] = at_whole if fraction == 0.0 else (1.0 - fraction) * at_whole + fraction * at_next
