"""Average precision of a random ranking: enumeration of every arrangement, and rounded lattice programmes.

A ranking of P positives among P + N items is a walk over states (r, j): after r items, j positives.
From (r, j) the next item is positive with probability (P - j)/(P + N - r), and then the sum
S = sum_j j / r_j (AP = S / P, r_j the rank of the j-th positive) grows by (j + 1)/(r + 1).

**Enumeration** (:func:`enumerate_sums`): every arrangement in lexicographic order of the positives'
ranks, keeping the prefix sums of the increments so that each arrangement costs the length of the
changed suffix.  Each S is summed in the order j = 1..P, each increment a correctly rounded division,
so |S_float - S| <= P * 2**-53 * S (sequential summation of P positive terms; the caller's bound).
Checked against exact Fractions over every arrangement (``tests/compute/test_average_precision_exact.py``).

**Rounded programme** (:func:`rounded_programme`): the law of S carried on a grid of width 1/M, each
increment rounded to a whole number of grid steps (``kind``: nearest, floor or ceiling) in exact
integer arithmetic, so the programme's sum B (in grid steps) is a deterministic function of the path.
For the rounding error E = S - B / M of the nearest rounding the same programme carries the error on a
grid of width 1/(M V), each step's error ((j + 1) M - K (r + 1)) / (r + 1), K the rounded step, rounded
up (``ERROR_UP``) or down (``ERROR_DOWN``): an exact upper or lower bound of E for every path.

State: one row of bins per j, stored from its own offset (``base``) in a (P + 1) x cap array that
grows by doubling when a row's live window outgrows it; entries outside a row's live window [lo, hi]
are zero.  Step r -> r + 1 in pull form, rows descending: row t becomes
pneg(t) * row t + ppos(t - 1) * (row t - 1 shifted by the step's grid steps), one fused loop per row
(float64, no cancellation: every term is a product of probabilities).  Integer widths: bins and
bounds int64 (|B| <= P M + P < 2**62 for the caller's M).

**Retirement** (``retire``): the tails are wanted only at thresholds y in [Ya, Yb).  From (r, j) the
rest of the path adds at least ``low_rest[j]`` grid steps (the remaining positives at the bottom) and
at most ``high_rest[r - j, j]`` (the remaining positives next): both in closed form from the same
rounded steps (:func:`rest_bounds`), since a rounded step only falls as r grows.  Mass that can no
longer reach Ya is added to ``below``, mass that will surely end at or above Yb to ``above``: both
exact, and Pr(B >= y) = above + (the final row's mass at bins >= y) for y in [Ya, Yb].

**Trimming** (``trim``): live-window ends whose mass is below ``trim`` are dropped and summed in
``lost``; every tail of the untrimmed programme lies in [computed, computed + lost].

The FLOOR and CEILING kinds, with retirement and trimming, are what the bracket uses and are checked
through it against brute force over every arrangement (``test_bracket_holds_the_exact_law_at_every_support_point``
in ``tests/compute/test_average_precision_exact.py``); the NEAREST and error kinds are not used and not tested.
"""

import numpy as np

from tablegen.compute.kernels.jit import jit_cached

#: Increment kinds of :func:`rounded_programme`.
NEAREST, FLOOR, CEILING, ERROR_UP, ERROR_DOWN = 0, 1, 2, 3, 4


@jit_cached(nogil=True)
def enumerate_sums(n_pos, n_neg, out):
    """Fill ``out`` (length C(P+N, P)) with S = sum_j j / r_j of every arrangement, in float64.

    Lexicographic order of the positives' ranks c_0 < ... < c_{P-1} (0-based); ``prefix[i]`` holds
    the sum of the first i increments, so only the changed suffix is summed again.  Returns the count.
    """
    ranks = np.arange(n_pos)
    prefix = np.zeros(n_pos + 1)
    for i in range(n_pos):
        prefix[i + 1] = prefix[i] + (i + 1) / (ranks[i] + 1.0)
    count = 0
    while True:
        out[count] = prefix[n_pos]
        count += 1
        i = n_pos - 1
        while i >= 0 and ranks[i] == n_neg + i:
            i -= 1
        if i < 0:
            return count
        ranks[i] += 1
        for k in range(i + 1, n_pos):
            ranks[k] = ranks[k - 1] + 1
        for k in range(i, n_pos):
            prefix[k + 1] = prefix[k] + (k + 1) / (ranks[k] + 1.0)


@jit_cached(inline="always")
def step_size(r, j, M, V, kind):
    """Grid steps added when the (j + 1)-th positive comes at rank r + 1 (exact integer arithmetic).

    NEAREST, FLOOR, CEILING: (j + 1) M / (r + 1) rounded (half up for NEAREST).  ERROR_UP / ERROR_DOWN:
    the nearest rounding's error times M V, (((j + 1) M - K (r + 1)) V) / (r + 1), rounded up / down.
    """
    num = (j + 1) * M
    den = r + 1
    if kind == FLOOR:
        return num // den
    if kind == CEILING:
        return -((-num) // den)
    nearest = (2 * num + den) // (2 * den)
    if kind == NEAREST:
        return nearest
    error = (num - nearest * den) * V
    if kind == ERROR_UP:
        return -((-error) // den)
    return error // den


@jit_cached(nogil=True)
def rest_bounds(n_pos, n_neg, M, V, kind):
    """(high_rest, low_rest): the most and least grid steps the rest of a path can add.

    high_rest[f, j] (f = r - j negatives so far) = sum_{i=j}^{P-1} step(f + i, i): the remaining
    positives next; low_rest[j] = sum_{i=j}^{P-1} step(N + i, i): the remaining positives last.  A
    rounded step (j + 1) M / (r + 1) never grows with r, so these are the extremes over all paths.
    """
    high = np.zeros((n_neg + 1, n_pos + 1), dtype=np.int64)
    for f in range(n_neg + 1):
        for j in range(n_pos - 1, -1, -1):
            high[f, j] = high[f, j + 1] + step_size(f + j, j, M, V, kind)
    low = np.zeros(n_pos + 1, dtype=np.int64)
    for j in range(n_pos - 1, -1, -1):
        low[j] = low[j + 1] + step_size(n_neg + j, j, M, V, kind)
    return high, low


@jit_cached(nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _pull(row, source, count, keep, take):
    """row[i] = keep row[i] + take source[i], i < count (the fused step; vectorises)."""
    for i in range(count):
        row[i] = keep * row[i] + take * source[i]


@jit_cached(nogil=True, error_model="numpy", fastmath={"contract"}, inline="always")
def _scale(row, count, keep):
    for i in range(count):
        row[i] *= keep


@jit_cached(nogil=True, error_model="numpy", inline="always")
def _total(row, count):
    total = 0.0
    for i in range(count):
        total += row[i]
    return total


@jit_cached(nogil=True, error_model="numpy")
def _move(row, old, new, lo, hi):
    """Move a row's live bins lo..hi from offset ``old`` to offset ``new``, zeroing what they leave."""
    if new > old:
        for b in range(lo, hi + 1):
            row[b - new] = row[b - old]
            row[b - old] = 0.0
    else:
        for b in range(hi, lo - 1, -1):
            row[b - new] = row[b - old]
            row[b - old] = 0.0


@jit_cached(nogil=True, error_model="numpy")
def _grown(H, cap):
    """``H`` copied into a (rows, 2 cap) array (each row keeps its offset)."""
    bigger = np.zeros((H.shape[0], 2 * cap))
    for r in range(H.shape[0]):  # not bigger[:, :cap] = H (compile time: see kernels/jit.py)
        for b in range(cap):
            bigger[r, b] = H[r, b]
    return bigger


@jit_cached(nogil=True, error_model="numpy")
def rounded_programme(n_pos, n_neg, M, V, kind, Ya, Yb, retire, trim, cap, high_rest, low_rest, counters):
    """Law of the rounded sum B of a random ranking (see the module docstring).

    Parameters
    ----------
    n_pos, n_neg : int
        P, N >= 1.
    M, V : int
        Grid: 1/M in S (V: the error grid's refinement, used by ERROR_UP / ERROR_DOWN).
    kind : int
        NEAREST, FLOOR, CEILING, ERROR_UP or ERROR_DOWN.
    Ya, Yb : int
        Thresholds of interest (grid steps), used when ``retire``.
    retire : bool
        Retire mass that can no longer reach Ya or will surely end >= Yb (exact).
    trim : float
        Drop live-window ends with mass below this (summed in ``lost``).
    cap : int
        Initial bins per row (grows by doubling).
    high_rest, low_rest : int64 arrays
        :func:`rest_bounds` of the same (M, V, kind) (used when ``retire``).
    counters : int64 array of 2
        Out: bins updated (the work) and the final row capacity.

    Returns
    -------
    hist, first, below, above, lost
        ``hist[i]`` = mass of B = first + i among paths not retired nor dropped; ``below``, ``above``
        the retired masses, ``lost`` the dropped mass.
    """
    n = n_pos + n_neg
    H = np.zeros((n_pos + 1, cap))
    base = np.zeros(n_pos + 1, dtype=np.int64)
    lo = np.ones(n_pos + 1, dtype=np.int64)
    hi = np.zeros(n_pos + 1, dtype=np.int64)  # a row is empty when lo > hi
    H[0, 0] = 1.0
    lo[0] = 0
    below, above, lost = 0.0, 0.0, 0.0
    work = 0
    for r in range(n):
        rem = float(n - r)
        bottom = max(0, r + 1 - n_neg)  # rows alive after the step
        for t in range(min(r + 1, n_pos), bottom - 1, -1):
            own = t <= r and lo[t] <= hi[t]
            keep = (n_neg - (r - t)) / rem
            shifted = t >= 1 and lo[t - 1] <= hi[t - 1]
            take = (n_pos - t + 1) / rem
            s_lo, s_hi, s = 1, 0, 0
            if shifted:
                s = step_size(r, t - 1, M, V, kind)
                s_lo, s_hi = lo[t - 1] + s, hi[t - 1] + s
                if retire and s_hi > Yb - low_rest[t] - 1:  # will surely end >= Yb
                    cut = max(s_lo, Yb - low_rest[t])
                    source = H[t - 1]
                    start = cut - s - base[t - 1]
                    above += take * _total(source[start:], s_hi - cut + 1)
                    s_hi = cut - 1
            if not own and s_lo > s_hi:
                continue
            new_lo = min(lo[t], s_lo) if own and s_lo <= s_hi else (lo[t] if own else s_lo)
            new_hi = max(hi[t], s_hi) if own and s_lo <= s_hi else (hi[t] if own else s_hi)
            while new_hi - new_lo + 1 > cap:
                H = _grown(H, cap)
                cap *= 2
            if not own:
                base[t] = new_lo
            elif new_lo < base[t] or new_hi >= base[t] + cap:
                _move(H[t], base[t], new_lo, lo[t], hi[t])
                base[t] = new_lo
            row = H[t]
            bt = base[t]
            if own:
                if s_lo <= s_hi:  # own bins the shifted ones do not reach
                    end = min(hi[t], s_lo - 1)
                    if end >= lo[t]:
                        _scale(row[lo[t] - bt:], end - lo[t] + 1, keep)
                    start = max(lo[t], s_hi + 1)
                    if start <= hi[t]:
                        _scale(row[start - bt:], hi[t] - start + 1, keep)
                else:
                    _scale(row[lo[t] - bt:], hi[t] - lo[t] + 1, keep)
                work += hi[t] - lo[t] + 1
            if s_lo <= s_hi:
                source = H[t - 1]
                _pull(row[s_lo - bt:], source[s_lo - s - base[t - 1]:], s_hi - s_lo + 1, keep, take)
                work += s_hi - s_lo + 1
            lo[t], hi[t] = new_lo, new_hi
            floor = Ya - high_rest[r + 1 - t, t] if retire else new_lo
            while lo[t] <= hi[t] and lo[t] < floor:  # can no longer reach Ya
                below += row[lo[t] - bt]
                row[lo[t] - bt] = 0.0
                lo[t] += 1
            while lo[t] <= hi[t] and row[lo[t] - bt] < trim:
                lost += row[lo[t] - bt]
                row[lo[t] - bt] = 0.0
                lo[t] += 1
            while hi[t] >= lo[t] and row[hi[t] - bt] < trim:
                lost += row[hi[t] - bt]
                row[hi[t] - bt] = 0.0
                hi[t] -= 1
        if bottom > 0 and lo[bottom - 1] <= hi[bottom - 1]:  # row r - N (no negatives left) moved up whole
            row = H[bottom - 1]
            for b in range(lo[bottom - 1], hi[bottom - 1] + 1):
                row[b - base[bottom - 1]] = 0.0
            lo[bottom - 1], hi[bottom - 1] = 1, 0
    counters[0] = work
    counters[1] = cap
    first = lo[n_pos]
    hist = np.zeros(max(hi[n_pos] - first + 1, 0))
    for b in range(first, hi[n_pos] + 1):
        hist[b - first] = H[n_pos, b - base[n_pos]]
    return hist, first, below, above, lost
