"""Closed-form null distributions: best accuracy (reflection principle) and TP at k (hypergeometric)."""

from __future__ import annotations

import numpy as np

from tablegen.compute.exact.nulls import TabulatedNull, tail_from_pmf


def best_accuracy_null(P: int, N: int) -> TabulatedNull:
    """Exact null of best accuracy = (N + D)/(P + N), D = max_k (TP_k - FP_k).

    Reflection principle: Pr(D >= h) = C(P+N, N+h) / C(P+N, P) for h >= h0 = max(0, P-N),
    and D >= h0 always.  Evaluated as the running product of the ratios
    Pr(D >= h) / Pr(D >= h-1) = (P - h + 1)/(N + h), starting from 1 at h0: O(P) time, every factor
    in (0, 1], relative error <= (P - h0) * 2**-53 (no large binomials, no cancellation).
    """
    h0 = max(0, P - N)
    h = np.arange(h0, P + 1)
    ratios = (P - h[1:] + 1) / (N + h[1:])
    tail = np.concatenate([[1.0], np.cumprod(ratios)])
    return TabulatedNull(values=(N + h) / (P + N), tail_ge=tail)


def tp_at_k_null(P: int, N: int, k: int) -> TabulatedNull:
    """Exact null of TP_k, the positives among the top k: hypergeometric (P+N items, P positives, k draws).

    k >= P + N means the whole list (TP = P with probability 1).  pmf by :func:`hypergeometric_pmf`,
    upper tail summed from the top: O(min(k, P)) time.
    """
    draws = min(k, P + N)
    low, high = max(0, draws - N), min(draws, P)
    pmf = hypergeometric_pmf(P + N, P, draws)
    return TabulatedNull(values=np.arange(low, high + 1, dtype=np.float64), tail_ge=tail_from_pmf(pmf))


def hypergeometric_pmf(population: int, successes: int, draws: int) -> np.ndarray:
    """Pr(X = x) on the whole support x = max(0, draws - failures) .. min(draws, successes).

    Running products of the ratios pmf(x+1)/pmf(x) = (K - x)(n - x) / ((x + 1)(M - K - n + x + 1)),
    outward from the mode (weight 1), then normalised by their sum: no large binomial and no
    cancellation, relative error ~ (steps from the mode) * 2**-53 in each term; terms below 1e-308
    of the mode underflow to 0.  Plain numpy (scipy.stats takes ~1 s to import).

    Examples
    --------
    >>> hypergeometric_pmf(4, 2, 2).tolist()           # C(2, x) C(2, 2 - x) / C(4, 2)
    [0.16666666666666666, 0.6666666666666666, 0.16666666666666666]
    """
    failures = population - successes
    low, high = max(0, draws - failures), min(draws, successes)
    x = np.arange(low, high, dtype=np.float64)  # ratio from x to x + 1
    ratios = (successes - x) * (draws - x) / ((x + 1) * (failures - draws + x + 1))
    mode = low + int(np.sum(ratios >= 1.0))  # ratios fall as x grows: the mode is after the last ratio >= 1
    up = np.cumprod(ratios[mode - low:])  # pmf(mode + j) / pmf(mode), j >= 1
    down = np.cumprod(1.0 / ratios[:mode - low][::-1])[::-1]  # pmf(low + i) / pmf(mode), i < mode - low
    weights = np.concatenate([down, [1.0], up])
    return weights / np.sum(weights)
