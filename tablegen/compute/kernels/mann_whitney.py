"""Stable recursion for the null distribution of the Mann–Whitney U statistic (AUC = U / (P N)).

With p_{i,j}(u) = Pr(U = u) for i positives and j negatives, conditioning on the top item gives

    p_{i,j}(u) = i/(i+j) * p_{i-1,j}(u - j) + j/(i+j) * p_{i,j-1}(u),   p_{i,0} = p_{0,j} = [1].

This is the probability form: weights in [0, 1] that sum to one, all terms non-negative, so each
probability carries a relative error of order (i + j) * 2**-53 and tail sums taken from the top are
as accurate (the q-binomial product form cancels catastrophically and is not used).

The sweep keeps one "row" i: slot j holds p_{i,j} (length i*j + 1).  Advancing to row i + 1 is
done in place, j ascending (p_{i+1,j} needs the new slot j - 1 and the old slot j), u descending
(new[u] reads old[u - j], which is not yet overwritten).  Memory: sum_j (I j + 1) ~ I J^2 / 2
floats for a sweep to (I, J); time: sum_{i<=I, j<=J} i j ~ I^2 J^2 / 4 multiply-adds, and the sweep
passes through every cell (i, j) on the way, so all cells of a grid cost the same as its largest.
Checked against brute force and exact integer counts in ``tests/compute/test_exact.py``.
"""

import numpy as np

from tablegen.compute.kernels.jit import jit_cached


def slot_offsets(max_rows, max_cols):
    """Start of each slot j = 0..max_cols in the flat buffer, and the buffer's length."""
    sizes = max_rows * np.arange(max_cols + 1, dtype=np.int64) + 1
    offsets = np.zeros(max_cols + 2, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return offsets[:-1].copy(), int(offsets[-1])


@jit_cached(nogil=True)
def advance_row(buffer, offsets, i, max_cols):
    """Turn slots j = 0..max_cols from p_{i-1, j} into p_{i, j}, in place (i >= 1)."""
    for j in range(1, max_cols + 1):
        new = buffer[offsets[j]:]
        left = buffer[offsets[j - 1]:]  # already p_{i, j-1}, length i*(j-1) + 1
        w_pos = i / (i + j)
        w_neg = j / (i + j)
        top_left = i * (j - 1)
        # u > top_left: only the "top item positive" term (u >= j holds there since i >= 1)
        for u in range(i * j, top_left, -1):
            new[u] = w_pos * new[u - j]
        # j <= u <= top_left: both terms; descending, so new[u - j] is still p_{i-1,j}
        for u in range(top_left, j - 1, -1):
            new[u] = w_pos * new[u - j] + w_neg * left[u]
        # u < j: only the "top item negative" term
        for u in range(min(j - 1, top_left), -1, -1):
            new[u] = w_neg * left[u]
