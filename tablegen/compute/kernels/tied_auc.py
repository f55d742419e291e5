"""Kernels of the exact AUC null given tie groups: the programme over groups and the inversion's sums.

Items fall in G tie groups of sizes m_1..m_G, ascending score; n = sum m_g, P positives, N = n - P
negatives, labels permuted uniformly.  With k_g positives in group g, the half-credit statistic is

    2U = sum_g k_g (2 * negatives in groups below g + (m_g - k_g)),

an integer (2U counts a won pair 2, a tied pair 1).

:func:`tied_programme` — the programme over groups, in probability form.  After groups 1..g
(M_g items) the state is q = positives among them, max(0, M_g - N) <= q <= min(P, M_g), carrying
p_g(q, .) = the law of 2U restricted to those items given q.  Adding group g (m items) with k of the
q positives in it:

    p_g(q, u) = sum_k h(k) p_{g-1}(q - k, u - d(q, k)),
    d(q, k) = 2 k (M_{g-1} - (q - k)) + k (m - k),
    h(k) = C(m, k) C(M_{g-1}, q - k) / C(M_g, q)       (hypergeometric: sums to 1 over k).

Every new probability is a convex combination of old ones: no subtraction, no cancellation.  h is
built from its mode by the ratio h(k+1)/h(k) = (m-k)(q-k) / ((k+1)(M_{g-1} - q + k + 1)) and
normalised by its sum.  Each state's support is stored on its exact range [lo, hi] of 2U (positives
pushed to the lowest / highest groups), so a group of m tied items costs (m + 1) saxpys per state.
Integer widths: int64 throughout (2U <= 2 P N < 2**63 for n < 3e9).  Checked against brute-force
enumeration with exact fractions in ``tests/compute/test_auc_ties.py``.

:func:`band_sums` — the inversion's per-frequency sums (see :mod:`tablegen.compute.exact.auc_ties_fft`).
"""

from __future__ import annotations

import math

import numpy as np

from tablegen.compute.kernels.jit import jit_cached


@jit_cached(nogil=True)
def _hypergeometric_weights(m, previous, q, out):
    """out[k] = C(m, k) C(previous, q - k) / C(m + previous, q) for k = 0..m (0 outside the support).

    Built from the mode by ratios (each <= 1 moving away from it) and normalised by the sum of
    non-negative terms: relative error of order (m + 2) * 2**-53 per weight.
    """
    low, high = max(0, q - previous), min(m, q)
    for k in range(m + 1):
        out[k] = 0.0
    mode = (q + 1) * (m + 1) // (m + previous + 2)
    mode = min(max(mode, low), high)
    out[mode] = 1.0
    for k in range(mode, high):  # ascending: h(k+1) = h(k) (m-k)(q-k) / ((k+1)(previous-q+k+1))
        out[k + 1] = out[k] * ((m - k) * (q - k)) / ((k + 1) * (previous - q + k + 1))
    for k in range(mode, low, -1):  # descending: h(k-1) = h(k) k (previous-q+k) / ((m-k+1)(q-k+1))
        out[k - 1] = out[k] * (k * (previous - q + k)) / ((m - k + 1) * (q - k + 1))
    total = 0.0
    for k in range(low, high + 1):
        total += out[k]
    for k in range(low, high + 1):
        out[k] /= total


@jit_cached(nogil=True)
def tied_programme(sizes, P, N):
    """(lo, pmf): pmf[i] = Pr(2U = lo + i) under label permutations given the tie groups ``sizes``.

    ``sizes`` are the group sizes in ascending score order (int64, positive, summing to P + N).
    """
    G = sizes.shape[0]
    # state after 0 groups: q = 0, 2U = 0 with probability 1
    q_low, q_high = 0, 0
    lo = np.zeros(1, dtype=np.int64)
    offsets = np.zeros(2, dtype=np.int64)
    offsets[1] = 1
    buffer = np.ones(1)
    items = 0  # M_{g-1}
    largest = 0
    for g in range(G):
        largest = max(largest, sizes[g])
    weights = np.empty(largest + 1)
    for g in range(G):
        m = sizes[g]
        total = items + m
        new_low, new_high = max(0, total - N), min(P, total)
        count = new_high - new_low + 1
        new_lo = np.empty(count, dtype=np.int64)
        new_hi = np.empty(count, dtype=np.int64)
        for q in range(new_low, new_high + 1):
            best_lo, best_hi = np.int64(-1), np.int64(-1)
            for k in range(max(0, q - items), min(m, q) + 1):
                old = q - k
                if old < q_low or old > q_high:
                    continue
                shift = 2 * k * (items - old) + k * (m - k)
                old_length = offsets[old - q_low + 1] - offsets[old - q_low]
                a = lo[old - q_low] + shift
                b = a + old_length - 1
                if best_lo < 0 or a < best_lo:
                    best_lo = a
                if b > best_hi:
                    best_hi = b
            new_lo[q - new_low] = best_lo
            new_hi[q - new_low] = best_hi
        new_offsets = np.zeros(count + 1, dtype=np.int64)
        for i in range(count):
            new_offsets[i + 1] = new_offsets[i] + new_hi[i] - new_lo[i] + 1
        new_buffer = np.zeros(new_offsets[count])
        for q in range(new_low, new_high + 1):
            _hypergeometric_weights(m, items, q, weights)
            target = new_offsets[q - new_low] - new_lo[q - new_low]
            for k in range(max(0, q - items), min(m, q) + 1):
                w = weights[k]
                old = q - k
                if w == 0.0 or old < q_low or old > q_high:
                    continue
                shift = 2 * k * (items - old) + k * (m - k)
                start = offsets[old - q_low]
                stop = offsets[old - q_low + 1]
                base = target + lo[old - q_low] + shift - start
                for i in range(start, stop):
                    new_buffer[base + i] += w * buffer[i]
        buffer, offsets, lo = new_buffer, new_offsets, new_lo
        q_low, q_high = new_low, new_high
        items = total
    return lo[P - q_low], buffer[offsets[P - q_low]:offsets[P - q_low + 1]].copy()


@jit_cached(nogil=True)
def band_sums(ks, j_first, j_count, L, M, P, pi, sizes, shifts, out, out_abs):
    """H_k = (1/L) sum_j Phi(theta_j, omega_k) e^{-i theta_j P} over each frequency's theta band.

    Phi(theta, omega) = prod_g (1 - pi_g + pi_g e^{i (theta + omega s_g)})^{m_g}, theta_j = 2 pi j / L,
    omega_k = 2 pi k / M; the band of k holds j = j_first[r] .. j_first[r] + j_count[r] - 1 (mod L).
    Each factor is written from the half angle, cancellation-free: with x = sin(y/2), c = cos(y/2),

        f = (1 - 2 pi x^2) + i 2 pi x c,   log|f|^2 = log1p(-4 pi (1 - pi) x^2),

    the half angles of y = theta + omega s added from sin/cos of exactly reduced integers
    (j mod L, k s mod 2M).  Size-1 groups enter as a complex product, larger ones as m_g log f
    (log1p and atan2).  ``out_abs`` gets (1/L) sum_j |Phi|, for the rounding-error account.
    """
    G = pi.shape[0]
    half_s = np.empty(G)
    half_c = np.empty(G)
    for r in range(ks.shape[0]):
        k = ks[r]
        for g in range(G):
            turns = (k * shifts[g]) % (2 * M)  # omega s / 2 = pi (k s mod 2M) / M
            angle = math.pi * turns / M
            half_s[g] = math.sin(angle)
            half_c[g] = math.cos(angle)
        total_re, total_im, total_abs = 0.0, 0.0, 0.0
        for t in range(j_count[r]):
            j = (j_first[r] + t) % L
            theta_half = math.pi * j / L
            sa, ca = math.sin(theta_half), math.cos(theta_half)
            prod_re, prod_im = 1.0, 0.0
            log_re, log_im = 0.0, 0.0
            for g in range(G):
                x = sa * half_c[g] + ca * half_s[g]  # sin((theta + omega s) / 2)
                c = ca * half_c[g] - sa * half_s[g]  # cos((theta + omega s) / 2)
                p = pi[g]
                f_re = 1.0 - 2.0 * p * x * x
                f_im = 2.0 * p * x * c
                if sizes[g] == 1:
                    re = prod_re * f_re - prod_im * f_im
                    prod_im = prod_re * f_im + prod_im * f_re
                    prod_re = re
                else:
                    log_re += 0.5 * sizes[g] * math.log1p(-4.0 * p * (1.0 - p) * x * x)
                    log_im += sizes[g] * math.atan2(f_im, f_re)
            # Phi e^{-i theta P}: theta_j P reduced exactly as (j P mod L)
            phase = log_im - 2.0 * math.pi * ((j * P) % L) / L
            scale = math.exp(log_re) if log_re > -745.0 else 0.0
            er, ei = scale * math.cos(phase), scale * math.sin(phase)
            total_re += prod_re * er - prod_im * ei
            total_im += prod_re * ei + prod_im * er
            total_abs += scale * math.sqrt(prod_re * prod_re + prod_im * prod_im)
        out[r] = complex(total_re / L, total_im / L)
        out_abs[r] = total_abs / L


@jit_cached(nogil=True)
def s_bound_values(starts, counts, M, weights, shifts, out_re, out_im):
    """S(omega_k) = sum_g w_g e^{i omega_k s_g} for k in each run [starts[r], starts[r] + counts[r]).

    Along a run the phase advances by a rotation per step, re-anchored from the exactly reduced
    angle (k s mod M) every 64 steps: each term carries ~64 * 4 ulp at most, so S to ~1e-13 of
    sum w (the band's bound only needs it to a margin of 1 + 1e-9 W).  Outputs follow the runs in order.
    """
    G = weights.shape[0]
    position = 0
    for r in range(starts.shape[0]):
        k0, count = starts[r], counts[r]
        for i in range(count):
            out_re[position + i] = 0.0
            out_im[position + i] = 0.0
        for g in range(G):
            w, s = weights[g], shifts[g]
            step = 2.0 * math.pi * (s % M) / M
            step_re, step_im = math.cos(step), math.sin(step)
            re, im = 0.0, 0.0
            for i in range(count):
                if i % 64 == 0:
                    angle = 2.0 * math.pi * (((k0 + i) * s) % M) / M
                    re, im = math.cos(angle), math.sin(angle)
                else:
                    re, im = re * step_re - im * step_im, re * step_im + im * step_re
                out_re[position + i] += w * re
                out_im[position + i] += w * im
        position += count
