"""Exact Lehmann AUC tails at many cells in one programme: the law of U read from the remaining counts.

Under the Lehmann alternative, read from the highest score down with p positives and n negatives left, the next
item is positive with probability k p / (n + k p) (:mod:`tablegen.compute.kernels.lehmann`).  A positive read
then has all n remaining negatives below it, so it adds n to U = the number of (positive, negative) pairs ranked
the right way round.  So the law L(p, n) of what the remaining items add to U depends on (p, n) alone, whatever
cell they are left of:

    L(p, n) = k p / (n + k p) * shift_n L(p - 1, n) + n / (n + k p) * L(p, n - 1),   L(0, n) = L(p, 0) = delta_0,

and L(P, N) is the law of U at the cell (P, N).  One sweep over p <= P_max, n <= N_max gives the law at every
cell below (P_max, N_max): about P_max^2 N_max^2 / 2 multiply-adds and two rows of laws, P_max N_max^2 / 2
doubles each.  The forward programme with retirement (:func:`~tablegen.compute.kernels.lehmann.auc_tail`) costs
about a fifth of the whole law of *one* cell, so this pays where many nearby cells are asked at once (the scans
of :func:`tablegen.sample_size`).

Every term is a product of probabilities and every sum adds non-negative terms (no cancellation); each tail is
summed from its own terms.  The result equals the forward programme's to rounding (relative ~1e-13, in another
order of summation: ``tests/lookup/test_power.py``).
"""

import numpy as np

from tablegen.compute.kernels.jit import jit_cached


@jit_cached(nogil=True, error_model="numpy")
def auc_tails_many(k, cell_pos, cell_neg, thresholds):
    """(Pr_k(U >= thresholds[i]), Pr_k(U < thresholds[i])) at each cell (cell_pos[i], cell_neg[i]), each summed
    from its own terms, by one sweep of the backward programme (module docstring).

    Parameters
    ----------
    k : float
        The Lehmann exponent (> 0).
    cell_pos, cell_neg : int64 arrays
        The cells (each class >= 0).
    thresholds : int64 array
        The thresholds on U, one per cell.

    Returns
    -------
    (upper, lower) : two float64 arrays

    Examples
    --------
    >>> upper, lower = auc_tails_many(3.0, np.array([1, 2]), np.array([1, 1]), np.array([1, 1]))
    >>> [round(float(x), 12) for x in upper]  # k/(k+1), then 1 - (1/(k+1)) (1/(2k+1))... as auc_tail gives
    [0.75, 0.857142857143]
    """
    cells = cell_pos.shape[0]
    upper = np.zeros(cells)
    lower = np.zeros(cells)
    if cells == 0:
        return upper, lower
    max_pos = cell_pos.max()
    max_neg = cell_neg.max()
    size = max_pos * max_neg * (max_neg + 1) // 2 + max_neg + 1
    previous = np.zeros(size)
    current = np.zeros(size)
    for n in range(max_neg + 1):  # row p = 0: every law is delta_0, law n at offset n
        previous[n] = 1.0
    for i in range(cells):
        if cell_pos[i] == 0:
            upper[i], lower[i] = (1.0, 0.0) if thresholds[i] <= 0 else (0.0, 1.0)
    for p in range(1, max_pos + 1):
        current[0] = 1.0
        for n in range(1, max_neg + 1):
            start = p * n * (n - 1) // 2 + n  # law (p, n), support [0, p n]
            left = p * (n - 1) * (n - 2) // 2 + (n - 1)  # law (p, n - 1) in this row
            up = (p - 1) * n * (n - 1) // 2 + n  # law (p - 1, n) in the row before
            weight = k * p
            positive = weight / (n + weight)
            negative = n / (n + weight)
            # law (p, n)[u] = negative * law (p, n - 1)[u] (u <= p (n - 1)) + positive * law (p - 1, n)[u - n] (u >= n)
            for u in range(n):
                current[start + u] = negative * current[left + u]
            for u in range(n, p * (n - 1) + 1):
                current[start + u] = negative * current[left + u] + positive * previous[up + u - n]
            for u in range(max(n, p * (n - 1) + 1), p * n + 1):
                current[start + u] = positive * previous[up + u - n]
        for i in range(cells):
            if cell_pos[i] != p:
                continue
            n = cell_neg[i]
            start = p * n * (n - 1) // 2 + n
            cut = min(max(thresholds[i], 0), p * n + 1)
            above = 0.0
            for u in range(cut, p * n + 1):
                above += current[start + u]
            below = 0.0
            for u in range(cut):
                below += current[start + u]
            upper[i], lower[i] = above, below
        previous, current = current, previous
    return upper, lower


def batch_memory(cells) -> float:
    """Bytes of :func:`auc_upper_tails`' two rows of laws for these cells (rows over the larger class).

    Examples
    --------
    >>> round(batch_memory([(200, 200)]) / 1e6, 2)
    64.32
    """
    big = max(max(P, N) for P, N in cells)
    small = max(min(P, N) for P, N in cells)
    return 2 * 8.0 * (big * small * (small + 1) / 2 + small + 1)


def auc_upper_tails(k: float, cells, thresholds) -> np.ndarray:
    """Pr_k(U >= thresholds[i]) at each cell (P, N) of ``cells``, by :func:`auc_tails_many` with its rows over the
    larger class (for more negatives than positives, the (N, P, 1/k) walk, whose U' = P N - U: Pr(U >= t) is
    Pr(U' < P N - t + 1), summed from its own terms).

    Examples
    --------
    >>> [round(float(x), 12) for x in auc_upper_tails(3.0, [(1, 1), (2, 1), (1, 2)], [1, 1, 1])]
    [0.75, 0.857142857143, 0.9]
    """
    pos = np.array([P for P, _ in cells], dtype=np.int64)
    neg = np.array([N for _, N in cells], dtype=np.int64)
    targets = np.asarray(thresholds, dtype=np.int64)
    if neg.max() > pos.max():
        return auc_tails_many(1.0 / k, neg, pos, pos * neg - targets + 1)[1]
    return auc_tails_many(float(k), pos, neg, targets)[0]
