"""The probability-form wavefront that :func:`tablegen.compute.kernels.lattice.half_plane_sweep` replaced (each point's
probability mass, two coefficients and a division per point and step), kept as the reference its tilted successor is
checked against: the same hit, dropped mass, first entry and per-diagonal records."""

import numba as nb
import numpy as np


@nb.njit(inline="always")
def _ranks_below(value, t1, f1, t2, f2):
    num1 = value[0] * t1 + value[1] * f1 + value[2]
    den1 = value[3] * t1 + value[4] * f1 + value[5]
    num2 = value[0] * t2 + value[1] * f2 + value[2]
    den2 = value[3] * t2 + value[4] * f2 + value[5]
    return num1 * den2 < num2 * den1


@nb.njit
def probability_wavefront(n_pos, n_neg, a, b, c, floor, value, entry_mass, edge_mass, edge_t):
    """(hit, dropped, first_t, first_f) with the records filled, as the tilted programme's contract says."""
    first_t, first_f = -1, -1
    keep = entry_mass.shape[0] > n_pos + n_neg
    if keep:
        entry_mass[:] = 0.0
        edge_mass[:] = 0.0
        edge_t[:] = -1
    if c <= 0:
        return 1.0, 0.0, first_t, first_f  # the origin (0, 0) is already in the half-plane
    # index i holds t = i - 1; index 0 is a sentinel (t = -1) that always holds 0
    current = np.zeros(n_pos + 3)
    following = np.zeros(n_pos + 3)
    t_of = np.arange(n_pos + 3) - 1.0
    positives_left = n_pos + 1.0 - t_of  # P - (t - 1): the positive step into t comes from t - 1
    current[1] = 1.0
    step = a + b
    first_in = (c + step - 1) // step  # T_0 = ceil(c / (a + b)) >= 1
    slack = step * first_in - c  # (a + b) T_d - (c + b d), in [0, a + b)
    low, high = 0, 0  # live t-range on the current diagonal
    hit = 0.0
    dropped = 0.0
    for d in range(n_pos + n_neg):
        scale = 1.0 / (n_pos + n_neg - d)
        negatives_left = float(n_neg - d)  # N - f = N - d + t for the negative step out of (t, d - t)
        current[low] = 0.0
        current[high + 2] = 0.0
        new_low = low if low >= d + 1 - n_neg else low + 1
        new_high = high + 1 if high < n_pos else n_pos
        for i in range(new_low + 1, new_high + 2):
            following[i] = (current[i] * (negatives_left + t_of[i]) + current[i - 1] * positives_left[i]) * scale
        slack -= b
        if slack < 0:
            first_in += 1
            slack += step
        # at most one point enters H per diagonal: t = T_{d+1} = high + 1 when T did not move
        while new_high >= first_in and new_high >= new_low:
            mass = following[new_high + 1]
            if mass > 0.0 and (first_t < 0 or _ranks_below(value, new_high, d + 1 - new_high, first_t, first_f)):
                first_t, first_f = new_high, d + 1 - new_high
            if keep:
                entry_mass[d + 1] += mass
            hit += mass
            new_high -= 1
        while new_low <= new_high and following[new_low + 1] < floor:
            dropped += following[new_low + 1]
            new_low += 1
        while new_high >= new_low and following[new_high + 1] < floor:
            dropped += following[new_high + 1]
            new_high -= 1
        if new_low > new_high:
            break
        if keep:
            top = new_high
            while top > new_low and following[top + 1] == 0.0:  # underflowed (untrimmed) mass
                top -= 1
            if following[top + 1] > 0.0:
                edge_t[d + 1] = top
                edge_mass[d + 1] = following[top + 1]
        current, following = following, current
        low, high = new_low, new_high
    return hit, dropped, first_t, first_f
