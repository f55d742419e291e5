"""The lattice walk under the Lehmann alternative: step probabilities instead of path counts.

Positives' scores have CDF F**k and negatives' F (k > 0; k = 1 is the null).  Read from the highest
score down with p positives and n negatives left, the next item is positive with probability
k p / (n + k p) (``docs/explanation/power.md`` derives it), so a ranking's path from (0, 0) to (P, N)
is a Markov chain on the lattice whose step out of (t, f) is positive with probability
k (P - t) / ((N - f) + k (P - t)).  At k = 1 this is (P - t) / (P + N - t - f), the null's walk.

Three programmes:

- :func:`boundary_hit` — Pr(the path reaches t >= threshold[d] on some diagonal d), the event
  "max metric > m*" of every best-threshold metric (best accuracy, balanced accuracy and F1 are
  half-planes, best MCC a per-diagonal boundary: ``tablegen.compute.exact.power``).  The wavefront
  of :func:`tablegen.compute.kernels.lattice.column_boundary_sweep`, untrimmed, with the Lehmann step
  (a division per point: the denominator is not constant along a diagonal); it can stop after a
  given diagonal (TP at k: the boundary sits on diagonal k alone).  Each diagonal is two vectorised
  loops, the points' shares (mass over denominator), then each next point gathering its two in-steps
  (the scatter of one point's mass into two, as first written, kept LLVM from vectorising: 4.7 against
  30 ms at P, N = 3,000, 7,000, the same floats: ``tests/compute/test_power_exact.py``).
- :func:`auc_pmf` — the law of U = sum over negative steps of t (the positives above each negative),
  carried along the lattice: each point holds the law of the partial U of the paths reaching it,
  which lies in [0, t f].  O(P^2 N^2 / 4) multiply-adds.
- :func:`enumerate_weights` — every arrangement's average-precision sum and Lehmann probability, in
  the order of :func:`tablegen.compute.kernels.average_precision.enumerate_sums` (same sums, bit for bit).

Every term is a product of probabilities and every sum adds non-negative terms: no cancellation;
the hit probability after D diagonals carries a relative error of order 6 D 2**-53 (two products, a
division and a sum per step).  Checked against every arrangement weighted by its probability in exact
rationals (``tests/compute/test_power_exact.py``).
"""

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached


@nb.njit(nogil=True, error_model="numpy")
def _shares(current, share, low, high, d, n_pos, n_neg, k):
    """``share[t + 1]`` = the mass at (t, d - t) over its step's denominator (N - f) + k (P - t), for t in
    low .. high, and 0 just outside (no mass there)."""
    share[low] = 0.0
    remaining_negatives = float(n_neg - d)  # + t: N - f exactly (integers below 2**53)
    for t in range(low, high + 1):
        at = np.uint64(t)  # an unsigned index: no wrap-around test, so LLVM vectorises the division
        share[at + np.uint64(1)] = current[at] / ((remaining_negatives + float(t)) + k * float(n_pos - t))
    share[high + 2] = 0.0


@nb.njit(nogil=True, error_model="numpy")
def _following(following, share, low, high, d, n_pos, n_neg, k):
    """The mass at (t, d + 1 - t) for t in low .. high: a positive step from t - 1, then a negative one from t
    (the scatter's two additions to a zeroed point, in its order: 0 + a + b = a + b)."""
    for t in range(low, high + 1):
        at = np.uint64(t)
        following[at] = share[at] * (k * float(n_pos - (t - 1))) + share[at + np.uint64(1)] * float(n_neg - (d - t))


@jit_cached(nogil=True, error_model="numpy")
def boundary_hit(n_pos, n_neg, k, threshold, stop):
    """Pr_k(the walk reaches (t, d - t) with t >= threshold[d] on some diagonal d <= stop).

    Parameters
    ----------
    n_pos, n_neg : int
        P and N (>= 0).
    k : float
        The Lehmann exponent (> 0).
    threshold : int64 array of P + N + 1
        The lowest absorbing t on each diagonal (above min(d, P): no boundary there).
    stop : int
        The last diagonal walked (P + N for the whole path).

    Returns
    -------
    float
        The hitting probability (mass absorbed, summed).
    """
    if threshold[0] <= 0:
        return 1.0
    last = min(stop, n_pos + n_neg)
    rows = min(n_pos, last) + 2  # t never exceeds min(P, last)
    current = np.zeros(rows)
    following = np.zeros(rows)
    share = np.zeros(rows + 1)  # share[t + 1]: the mass at t over its step's denominator; 0 outside the diagonal
    current[0] = 1.0
    low, high = 0, 0
    hit = 0.0
    for d in range(last):
        new_low = low if low >= d + 1 - n_neg else low + 1
        new_high = high + 1 if high < n_pos else n_pos
        _shares(current, share, low, high, d, n_pos, n_neg, k)
        _following(following, share, new_low, new_high, d, n_pos, n_neg, k)
        boundary = threshold[d + 1]
        while new_high >= new_low and new_high >= boundary:
            hit += following[new_high]
            following[new_high] = 0.0
            new_high -= 1
        if new_low > new_high:
            break
        current, following = following, current
        low, high = new_low, new_high
    return hit


@jit_cached(nogil=True, error_model="numpy")
def auc_pmf(n_pos, n_neg, k):
    """The law of U (pairs with the positive above) under the Lehmann alternative: an array of P N + 1.

    Diagonal by diagonal, row t of a (P + 1) x (P N + 1) array holds the law of the partial U of the
    paths reaching (t, d - t); a negative step out of (t, f) adds t to U, a positive step adds 0.
    """
    width = n_pos * n_neg + 1
    current = np.zeros((n_pos + 1, width))
    following = np.zeros((n_pos + 1, width))
    current[0, 0] = 1.0
    low, high = 0, 0
    for d in range(n_pos + n_neg):
        new_low = low if low >= d + 1 - n_neg else low + 1
        new_high = high + 1 if high < n_pos else n_pos
        for t in range(new_low, new_high + 1):
            f = d + 1 - t
            following[t, : t * f + 1] = 0.0
        for t in range(low, high + 1):
            f = d - t
            top = t * f + 1  # the partial U at (t, f) lies in [0, t f]
            p = k * (n_pos - t)
            n = float(n_neg - f)
            negative = n / (n + p)
            positive = p / (n + p)
            row = current[t]
            if f < n_neg:
                into = following[t]
                for u in range(top):
                    into[u + t] += row[u] * negative
            if t < n_pos:
                into = following[t + 1]
                for u in range(top):
                    into[u] += row[u] * positive
        current, following = following, current
        low, high = new_low, new_high
    return current[n_pos].copy()


@jit_cached(nogil=True, error_model="numpy")
def enumerate_weights(n_pos, n_neg, k, sums, weights):
    """Fill ``sums`` with S = sum_j j / r_j and ``weights`` with the Lehmann probability of every
    arrangement (length C(P+N, P) each), in the order and with the arithmetic of ``enumerate_sums``.

    The probability is the product of the step probabilities: between the (i-1)-th and the i-th
    positive (p = P - i left) each negative at a rank r (0-based, n = N - (r - i) left) has
    n / (n + k p), and the positive at rank c_i has k p / (N - (c_i - i) + k p); after the last
    positive the negatives have probability 1.  Returns the count.
    """
    ranks = np.arange(n_pos)
    prefix = np.zeros(n_pos + 1)
    weight = np.ones(n_pos + 1)
    for i in range(n_pos):
        prefix[i + 1] = prefix[i] + (i + 1) / (ranks[i] + 1.0)
        weight[i + 1] = weight[i] * _segment(n_pos, n_neg, k, i, ranks[i - 1] + 1 if i > 0 else 0, ranks[i])
    count = 0
    while True:
        sums[count] = prefix[n_pos]
        weights[count] = weight[n_pos]
        count += 1
        i = n_pos - 1
        while i >= 0 and ranks[i] == n_neg + i:
            i -= 1
        if i < 0:
            return count
        ranks[i] += 1
        for j in range(i + 1, n_pos):
            ranks[j] = ranks[j - 1] + 1
        for j in range(i, n_pos):
            prefix[j + 1] = prefix[j] + (j + 1) / (ranks[j] + 1.0)
            weight[j + 1] = weight[j] * _segment(n_pos, n_neg, k, j, ranks[j - 1] + 1 if j > 0 else 0, ranks[j])


@jit_cached(inline="always")
def _segment(n_pos, n_neg, k, i, first, rank):
    """Probability of the negatives at ranks first .. rank - 1 then the i-th positive (0-based) at ``rank``."""
    p = k * (n_pos - i)
    product = 1.0
    for r in range(first, rank):
        n = float(n_neg - (r - i))
        product *= n / (n + p)
    n = float(n_neg - (rank - i))
    return product * p / (n + p)


@jit_cached(inline="always")
def _window(n_pos, n_neg, target, t, f):
    """The partial U at (t, f) whose fate is open: [max(0, target - (N - f) P), min(t f, target - (N - f) t - 1)]
    (each negative still to come adds between t and P to U)."""
    left = n_neg - f
    return max(0, target - left * n_pos), min(t * f, target - left * t - 1)


@jit_cached(inline="always")
def _scatter(row, first, last, shift, weight, into, low, high):
    """Add weight * row[u] to into[u + shift] for u in [first, last] landing in [low, high]; return the masses
    landing above ``high`` (U surely reaches the target) and below ``low`` (surely not), weighted."""
    start = max(first, low - shift)
    stop = min(last, high - shift)
    for u in range(start, stop + 1):
        into[u + shift] += row[u] * weight
    above = 0.0
    for u in range(max(first, high - shift + 1), last + 1):
        above += row[u]
    below = 0.0
    for u in range(first, min(last, low - shift - 1) + 1):
        below += row[u]
    return above * weight, below * weight


@jit_cached(nogil=True, error_model="numpy")
def auc_tail(n_pos, n_neg, k, target):
    """(Pr_k(U >= target), Pr_k(U < target)) under the Lehmann alternative, each summed from its own terms.

    The programme of :func:`auc_pmf` with retirement: from (t, f) the rest of the path adds between (N - f) t
    and (N - f) P to U, so mass with partial U >= target - (N - f) t surely ends at or above the target (added
    to the first answer) and mass with partial U < target - (N - f) P surely below it (added to the second);
    each point keeps only the window between.  Exact (nothing is approximated); about a fifth of
    :func:`auc_pmf`'s work near the centre of U's law.
    """
    if target <= 0:
        return 1.0, 0.0
    if target > n_pos * n_neg:
        return 0.0, 1.0
    width = n_pos * n_neg + 1
    current = np.zeros((n_pos + 1, width))
    following = np.zeros((n_pos + 1, width))
    current[0, 0] = 1.0
    low, high = 0, 0
    hit, miss = 0.0, 0.0
    for d in range(n_pos + n_neg):
        new_low = low if low >= d + 1 - n_neg else low + 1
        new_high = high + 1 if high < n_pos else n_pos
        for t in range(new_low, new_high + 1):
            first, last = _window(n_pos, n_neg, target, t, d + 1 - t)
            for u in range(first, last + 1):
                following[t, u] = 0.0
        for t in range(low, high + 1):
            f = d - t
            first, last = _window(n_pos, n_neg, target, t, f)
            if first > last:
                continue
            p = k * (n_pos - t)
            n = float(n_neg - f)
            row = current[t]
            if f < n_neg:
                into_low, into_high = _window(n_pos, n_neg, target, t, f + 1)
                above, below = _scatter(row, first, last, t, n / (n + p), following[t], into_low, into_high)
                hit += above
                miss += below
            if t < n_pos:
                into_low, into_high = _window(n_pos, n_neg, target, t + 1, f)
                above, below = _scatter(row, first, last, 0, p / (n + p), following[t + 1], into_low, into_high)
                hit += above
                miss += below
        current, following = following, current
        low, high = new_low, new_high
    return hit, miss
