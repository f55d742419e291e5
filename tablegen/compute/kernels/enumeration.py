"""Every label arrangement of a small test set, in order: the exact null of the max-T test.

:func:`enumeration_metrics_counts` scores, for every metric of a report, each of the C(n, P) arrangements of P
positives among n items, block by block from any lexicographic rank (the combinatorial number system: the
positions of the smaller class, :func:`_unrank`, then :func:`_next_subset`), with the walks and tallies of the
random-arrangement kernel (:func:`~tablegen.compute.kernels.permutation.count_metrics`): all of them give the exact
null (the selection engine runs it where C(n, P) fits the exact budget).
"""

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.permutation import count_metrics, f1_reciprocals


@nb.njit(inline="always", nogil=True)
def _unrank(rank, n, k, positions, binomial):
    """The ``rank``-th k-subset of range(n) in lexicographic order (``binomial[a, b]`` = C(a, b))."""
    x = 0
    for i in range(k):
        while binomial[n - x - 1, k - i - 1] <= rank:
            rank -= binomial[n - x - 1, k - i - 1]
            x += 1
        positions[i] = x
        x += 1


@nb.njit(inline="always", nogil=True)
def _next_subset(positions, n, k):
    """Advance ``positions`` to the next k-subset of range(n) in lexicographic order."""
    i = k - 1
    while positions[i] == n - k + i:
        i -= 1
    positions[i] += 1
    for j in range(i + 1, k):
        positions[j] = positions[j - 1] + 1


@jit_cached(nogil=True)
def enumeration_metrics_counts(orders, group_ends, double_ranks, untied, n_pos, columns, k_cuts, weights, members,
                               sizes, thresholds, ranked, binomial, minority, first, maxima, raw_hits, step_hits):
    """As :func:`permutation_metrics_counts`, over the arrangements of lexicographic ranks ``first ..
    first + maxima.shape[1] - 1`` (all C(n, P) of them, block by block, give the exact null).

    The subsets enumerated are the positions of the smaller class (``minority`` = min(P, n - P) items;
    ``binomial[a, b]`` = C(a, b) for a < n, b <= minority).
    """
    models, n = orders.shape
    labels = np.zeros(n, np.uint8)
    values = np.empty((columns.size, models))
    cut_tp, cut_k, reciprocals = np.empty(n, np.int64), np.empty(n, np.int64), f1_reciprocals(n_pos, n)
    positions = np.empty(minority, np.int64)
    inside = 1 if minority == n_pos else 0  # the label of the enumerated items
    _unrank(first, n, minority, positions, binomial)
    for row in range(maxima.shape[1]):
        if row > 0:
            _next_subset(positions, n, minority)
        labels[:] = 1 - inside
        for i in range(minority):
            labels[positions[i]] = inside
        count_metrics(labels, orders, group_ends, double_ranks, untied, n_pos, columns, k_cuts, weights, members,
                       sizes, thresholds, ranked, values, cut_tp, cut_k, reciprocals, row, maxima, raw_hits, step_hits)
