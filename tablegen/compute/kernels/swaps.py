"""Paired permutation kernel: two models' scores swapped item by item, the metric difference of each pattern.

Under "the two models are exchangeable on every item", swapping the two models' values on any subset of
the items gives an equally likely outcome.  Each swap pattern is a 0/1 flag per item: pattern ``p`` of an
exact enumeration is the bits of ``p`` (item i swapped iff bit i is set, n <= 62); replicate r of a random
run draws its flags from its own xoshiro256** stream (:func:`~tablegen.compute.kernels.rng.replicate_state`
of the question's key and r; 64 flags per output), so any split into blocks gives the same patterns.

The values swapped are each model's within-model ranks (midranks over n: ties kept, scales made alike);
every metric depends on a model's scores only through their order, so each model's observed value is
unchanged.  For a pattern the kernel sorts both swapped vectors (descending, ties in item order: the
threshold groups of :mod:`tablegen.compute.metrics_from_scores`) and scores each with
:func:`~tablegen.compute.kernels.permutation.score_model`; ``out[i]`` is metric(a) - metric(b).
``tests/compare/test_pairwise.py`` checks the differences against the registry's scorers on every pattern of
small cases.
"""

import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.permutation import score_model
from tablegen.compute.kernels.rng import replicate_state, xoshiro_next

_ONE = np.uint64(1)


@jit_cached(nogil=True)
def _value(values, labels, n_pos, column, k_cut, weights):
    """The metric of one score vector (higher first, ties in item order)."""
    order = np.argsort(-values, kind="mergesort")
    n = values.size
    ends = np.ones(n, np.uint8)
    for j in range(n - 1):
        ends[j] = 1 if values[order[j]] != values[order[j + 1]] else 0
    return score_model(labels, order, ends, n_pos, column, k_cut, weights)


@jit_cached(nogil=True)
def swap_differences(ranks_a, ranks_b, labels, n_pos, column, k_cut, weights, exact, key0, key1, first, out):
    """metric(a) - metric(b) after swapping the items flagged by patterns ``first .. first + out.size - 1``
    (their bits when ``exact``, else replicates of ``key``)."""
    n = ranks_a.size
    a = np.empty(n)
    b = np.empty(n)
    flags = np.empty(n, np.uint8)
    for row in range(out.size):
        pattern = first + row
        if exact:
            for i in range(n):
                flags[i] = (pattern >> i) & 1
        else:
            s0, s1, s2, s3 = replicate_state(key0, key1, pattern)
            word = np.uint64(0)
            for i in range(n):
                if i % 64 == 0:
                    word, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
                flags[i] = np.uint8((word >> np.uint64(i % 64)) & _ONE)
        for i in range(n):
            if flags[i]:
                a[i] = ranks_b[i]
                b[i] = ranks_a[i]
            else:
                a[i] = ranks_a[i]
                b[i] = ranks_b[i]
        out[row] = (_value(a, labels, n_pos, column, k_cut, weights)
                    - _value(b, labels, n_pos, column, k_cut, weights))
