"""Multi-class from-scores permutation kernel: the rows of the probability matrix permuted over the items, every
score metric (Hand–Till AUC, one-vs-rest macro AUC, top-k accuracy) scored in one pass per replicate.

The null of :func:`tablegen.multiclass_scores_test`: a random classifier is the model's probability rows dealt
uniformly at random to the items, the true labels fixed.  A metric depends only on which (label, row) pairs
occur, so dealing the rows over fixed labels and dealing the labels over fixed rows give the same law; the
kernel does the latter (a permutation of n small class codes, not of n rows of K doubles).  Replicate r
shuffles a fresh copy of the label codes by Fisher–Yates from the top (position i, from n - 1 down to 1, swaps
with a uniform position j <= i), each draw :func:`~tablegen.compute.kernels.ranking.draw_below` of the
replicate's own stream (:func:`~tablegen.compute.kernels.rng.replicate_state` of the question's key and r): all
n! orders are equally likely, so every distinct arrangement of the labels is, and a replicate does not depend on
how the replicates are split into blocks.

What is computed once per matrix (:func:`tablegen.compute.multiclass_scores.score_tables`), never per replicate:

``double_ranks`` (n, K)  twice the ascending midrank of item i in column c (ties share their mean rank)
``orders`` (K, n)        column c's items by descending score; ``group_last[c, p]`` the last position of p's tie
``credit`` (n, K)        item i's top-k credit were its true class c (1, 0, or a fraction where a tie straddles k)

A replicate then costs O(n) for the shuffle, one-vs-rest and top-k (as each position settles, its label c adds
``double_ranks[i, c]`` to S_c and ``credit[i, c]`` to T), and O(n K) for Hand–Till (a walk down each column):

``hand_till_auc``    column i walked from the top, keeping a = the i-labelled items above; an item labelled c adds
                     2a (+ g, the i-labelled items of its tie group) to 2U(i|c), the doubled count of (i, c) pairs
                     ordered right by column i (ties ½).  M = (sum over i < j of (2U(i|j) + 2U(j|i)) / (4 n_i n_j))
                     / (K (K - 1) / 2): Hand & Till (2001), A(i|j) = U(i|j) / (n_i n_j).
``ovr_macro_auc``    AUC_c = (S_c - n_c (n_c + 1)) / (2 n_c (n - n_c)) (the doubled Mann–Whitney sum), macro mean
                     (NaN where a class has no items; Hand–Till is then not asked for: the caller refuses it)
``top_k_accuracy``   T / n, T summed over the items from the last to the first

Every 2U and S_c is an exact integer; each pair term and each AUC_c one correctly rounded division; the sums are
taken in a fixed order (pairs lexicographic, classes in order, items from the last), every addition rounded on
its own, then one division: the same labels give the same doubles on every device and in
:func:`arrangement_values` (the observed value and the enumeration).  Hand–Till costs K walks of n items; the
caller skips it (the column NaN) unless asked (``hand_till``).

Integer widths: int64 counts (n < 2**25 keeps 4 n_i n_j below 2**53, exact as a double), int32 codes; uint64 RNG.
"""

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.multiclass_scores_resample import (  # the report's resampling kernels, importable here
    linear_swap_differences,  # noqa: F401
    score_left_out,  # noqa: F401
    stratified_score_resamples,  # noqa: F401
    untied_columns,
)
from tablegen.compute.kernels.ranking import draw_below
from tablegen.compute.kernels.rng import replicate_state

#: The kernel's output columns.
COLUMNS = ("hand_till_auc", "ovr_macro_auc", "top_k_accuracy")
HAND_TILL, OVR_MACRO, TOP_K = range(3)
#: The spawn key's tag of these permutation streams (``SeedSequence(seed, spawn_key=(n, K, tag))``); every stream
#: of tablegen has its own tag (tests/contracts/test_stream_tags.py).
MULTICLASS_SCORES_TAG = 0x3C1F
#: The spawn key's tag of the K-class report's swap patterns of two models' probability rows.
SCORES_SWAP_TAG = 0x3C1E


def multiclass_scores_key(seed: int, n: int, K: int) -> tuple[np.uint64, np.uint64]:
    """The 128-bit key of the permutations of ``n`` items' rows over ``K`` classes under ``seed``.

    Examples
    --------
    >>> key = multiclass_scores_key(2005, 30, 3)
    >>> key == multiclass_scores_key(2005, 30, 3), key == multiclass_scores_key(2005, 31, 3)
    (True, False)
    """
    words = np.random.SeedSequence(seed, spawn_key=(n, K, MULTICLASS_SCORES_TAG)).generate_state(2, np.uint64)
    return np.uint64(words[0]), np.uint64(words[1])


@nb.njit(inline="always", nogil=True)
def _hand_till(work, orders, group_last, counts, acc):
    """The Hand–Till M of the labels ``work`` (``acc`` (K, K) int64 scratch: 2U(i|c) in row i)."""
    K = orders.shape[0]
    acc[:, :] = 0
    for i in range(K):
        _walk_column(work, orders, group_last, i, acc)
    return _hand_till_total(acc, counts)


@nb.njit(inline="always", nogil=True)
def _walk_column(work, orders, group_last, i, acc):
    """Row i of the doubled pair counts: column i walked from the top."""
    n = orders.shape[1]
    above = 0  # twice the i-labelled items above
    p = 0
    while p < n:
        last = group_last[i, p]
        if last == p:  # branch-free
            c = work[orders[i, p]]
            acc[i, c] += above  # acc[i, i] collects junk, never read
            above += 2 * (c == i)
            p += 1
        else:
            tied = 0
            for q in range(p, last + 1):
                tied += 1 if work[orders[i, q]] == i else 0
            for q in range(p, last + 1):
                acc[i, work[orders[i, q]]] += above + tied
            above += 2 * tied
            p = last + 1


@nb.njit(inline="always", nogil=True)
def _hand_till_total(acc, counts):
    """M from the doubled pair counts (pairs lexicographic, each term one division)."""
    K = counts.size
    total = 0.0
    for i in range(K):
        for j in range(i + 1, K):
            total += (acc[i, j] + acc[j, i]) / (4.0 * counts[i] * counts[j])
    return total / (K * (K - 1) // 2)


@nb.njit(inline="always", nogil=True)
def _hand_till_untied(work, orders, group_last, untied, counts, acc):
    """:func:`_hand_till`, each column without ties (``untied[i]``) walked without reading its tie groups."""
    K, n = orders.shape
    acc[:, :] = 0
    pending = -1  # an untied column waiting for a second to be walked beside it (two independent chains)
    for i in range(K):
        if not untied[i]:
            _walk_column(work, orders, group_last, i, acc)
        elif pending < 0:
            pending = i
        else:
            above_a = 0
            above_b = 0
            row_a, row_b = acc[pending], acc[i]
            column_a, column_b = orders[pending], orders[i]
            for p in range(n):
                c = work[column_a[p]]
                e = work[column_b[p]]
                row_a[c] += above_a
                row_b[e] += above_b
                above_a += 2 * (c == pending)
                above_b += 2 * (e == i)
            pending = -1
    if pending >= 0:
        above = 0
        row = acc[pending]
        column = orders[pending]
        for p in range(n):
            c = work[column[p]]
            row[c] += above
            above += 2 * (c == pending)
    return _hand_till_total(acc, counts)


@nb.njit(inline="always", nogil=True)
def _ovr_macro(sums, counts, n):
    """The one-vs-rest macro AUC from the doubled rank sums S_c (NaN where a class has no items)."""
    total = 0.0
    for c in range(counts.size):
        if counts[c] == 0:
            return np.nan
        total += (sums[c] - counts[c] * (counts[c] + 1)) / (2.0 * counts[c] * (n - counts[c]))
    return total / counts.size


@nb.njit(inline="always", nogil=True)
def _write(work, double_ranks, orders, group_last, counts, hand_till, sums, top_k, acc, out, row):
    n = work.size
    out[row, HAND_TILL] = _hand_till(work, orders, group_last, counts, acc) if hand_till else np.nan
    out[row, OVR_MACRO] = _ovr_macro(sums, counts, n)
    out[row, TOP_K] = top_k / n


@jit_cached(nogil=True)
def arrangement_values(codes, double_ranks, orders, group_last, credit, counts, hand_till, out, row):
    """The three :data:`COLUMNS` of the labels ``codes`` as they stand, in ``out[row]`` (the replicates'
    arithmetic, bit for bit).

    Examples
    --------
    >>> from tablegen.compute.multiclass_scores import score_tables
    >>> tables = score_tables(np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4]]), k=1)
    >>> out = np.empty((1, 3))
    >>> arrangement_values(np.array([0, 1, 2], np.int32), *tables, np.array([1, 1, 1]), True, out, 0)
    >>> out.tolist()
    [[1.0, 1.0, 1.0]]
    """
    K = counts.size
    sums = np.zeros(K, np.int64)
    top_k = 0.0
    for i in range(codes.size - 1, -1, -1):
        c = codes[i]
        sums[c] += double_ranks[i, c]
        top_k += credit[i, c]
    acc = np.empty((K, K), np.int64)
    _write(codes, double_ranks, orders, group_last, counts, hand_till, sums, top_k, acc, out, row)


@jit_cached(nogil=True)
def multiclass_score_permutations(codes, double_ranks, orders, group_last, credit, counts, hand_till, key0, key1,
                                  first, out):
    """Replicates ``first .. first + out.shape[0] - 1``: each row of ``out`` (rows, 3) the :data:`COLUMNS` of that
    replicate's shuffle of the label ``codes`` (int32 < K) over the fixed rows.

    Examples
    --------
    >>> from tablegen.compute.multiclass_scores import score_tables
    >>> probabilities = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4], [0.5, 0.4, 0.1]])
    >>> codes, counts = np.array([0, 1, 2, 0], np.int32), np.array([2, 1, 1])
    >>> key0, key1 = multiclass_scores_key(2005, 4, 3)
    >>> out = np.empty((5, 3))
    >>> multiclass_score_permutations(codes, *score_tables(probabilities, k=1), counts, True, key0, key1, 0, out)
    >>> bool(np.all((out >= 0) & (out <= 1)))
    True
    """
    n = codes.size
    K = counts.size
    work = np.empty(n, np.int32)
    small = np.empty(n, np.uint8)  # the arrangement in a byte an item (K <= 255): the walks' gathers stay in L1
    untied = untied_columns(group_last.reshape(1, K, n))[0]
    sums = np.empty(K, np.int64)
    acc = np.empty((K, K), np.int64)
    for row in range(out.shape[0]):
        s0, s1, s2, s3 = replicate_state(key0, key1, first + row)
        for i in range(n):
            work[i] = codes[i]
        sums[:] = 0
        top_k = 0.0
        for i in range(n - 1, 0, -1):
            j, s0, s1, s2, s3 = draw_below(np.uint64(i + 1), s0, s1, s2, s3)
            c = work[j]
            work[j] = work[i]
            work[i] = c
            sums[c] += double_ranks[i, c]
            top_k += credit[i, c]
        c = work[0]
        sums[c] += double_ranks[0, c]
        top_k += credit[0, c]
        if hand_till and K <= 255:
            for i in range(n):
                small[i] = work[i]
            out[row, HAND_TILL] = _hand_till_untied(small, orders, group_last, untied, counts, acc)
        elif hand_till:
            out[row, HAND_TILL] = _hand_till_untied(work, orders, group_last, untied, counts, acc)
        else:
            out[row, HAND_TILL] = np.nan
        out[row, OVR_MACRO] = _ovr_macro(sums, counts, n)
        out[row, TOP_K] = top_k / n


@nb.njit(inline="always", nogil=True)
def _next_arrangement(work):
    """``work`` to the next distinct arrangement in lexicographic order (False after the last: left as it was)."""
    n = work.size
    i = n - 2
    while i >= 0 and work[i] >= work[i + 1]:
        i -= 1
    if i < 0:
        return False
    j = n - 1
    while work[j] <= work[i]:
        j -= 1
    work[i], work[j] = work[j], work[i]
    left, right = i + 1, n - 1
    while left < right:
        work[left], work[right] = work[right], work[left]
        left += 1
        right -= 1
    return True


@jit_cached(nogil=True)
def enumeration_values(codes, double_ranks, orders, group_last, credit, counts, hand_till, out):
    """Every distinct arrangement of the label ``codes`` over the rows, lexicographic from the sorted one: row a of
    ``out`` (multinomial(n; n_1 .. n_K), 3) the :data:`COLUMNS` of arrangement a (:func:`arrangement_values`).

    Each distinct arrangement is n_1! ... n_K! of the n! equally likely permutations, so the rows are the exact
    null law, each with probability 1 / out.shape[0].  Returns the number of rows written.

    Examples
    --------
    >>> from tablegen.compute.multiclass_scores import score_tables
    >>> tables = score_tables(np.array([[0.8, 0.2], [0.4, 0.6], [0.5, 0.5]]), k=1)
    >>> out = np.empty((3, 3))
    >>> enumeration_values(np.array([0, 1, 1], np.int32), *tables, np.array([1, 2]), True, out)
    3
    >>> out[:, 0].tolist()
    [1.0, 0.0, 0.5]
    """
    work = np.sort(codes)
    written = np.int64(0)  # not the literal 0: typing the loop, numba would compile arrangement_values for it too
    while written < out.shape[0]:
        arrangement_values(work, double_ranks, orders, group_last, credit, counts, hand_till, out, written)
        written += 1
        if not _next_arrangement(work):
            break
    return written


# -- the K-class report: several models at once -------------------------------------------------------------
# The report's kernels score M models' probability matrices together.  Columns of their ``out``: Hand–Till AUC,
# one-vs-rest macro AUC, then top-k accuracy for each of the J requested k (``credit`` (M, J, n, K)).
#
# - :func:`model_score_permutations` / :func:`model_score_enumeration`: the labels shuffled (or enumerated) once
#   per replicate and every model scored on that arrangement (the max-T test keeps the models' dependence); each
#   model's column is bit for bit :func:`multiclass_score_permutations` / :func:`enumeration_values` of that model
#   alone under the same key, so each model's verdict is :func:`tablegen.multiclass_scores_test`'s.
# - the report's bootstrap (:func:`stratified_score_resamples`), jackknife (:func:`score_left_out`) and swap
#   patterns (:func:`linear_swap_differences`): :mod:`tablegen.compute.kernels.multiclass_scores_resample`, imported
#   here (importable from this module as before).


@nb.njit(inline="always", nogil=True)
def _model_columns(work, m, double_ranks, orders, group_last, untied, credit, counts, hand_till, sums, acc, out_row):
    """Model m's columns on the arrangement ``work`` (the single-model kernel's arithmetic, bit for bit)."""
    n = work.size
    J = credit.shape[1]
    sums[:] = 0
    for i in range(n - 1, -1, -1):
        c = work[i]
        sums[c] += double_ranks[m, i, c]
    for j in range(J):
        top_k = 0.0
        for i in range(n - 1, -1, -1):
            top_k += credit[m, j, i, work[i]]
        out_row[2 + j] = top_k / n
    out_row[0] = _hand_till_untied(work, orders[m], group_last[m], untied[m], counts, acc) if hand_till else np.nan
    out_row[1] = _ovr_macro(sums, counts, n)


@jit_cached(nogil=True)
def model_score_permutations(codes, double_ranks, orders, group_last, credit, counts, hand_till, key0, key1, first,
                             out):
    """Replicates ``first .. first + out.shape[0] - 1`` of the shared label permutation: ``out[r, m]`` model m's
    columns (Hand–Till, one-vs-rest macro, top-k per k) on replicate r's shuffle of ``codes``.

    ``double_ranks`` (M, n, K) int32, ``orders`` and ``group_last`` (M, K, n): each model's
    :func:`~tablegen.compute.multiclass_scores.score_tables`; ``credit`` (M, J, n, K) its top-k credit per k.  The
    shuffle is :func:`multiclass_score_permutations`'s (the same key gives the same arrangements).

    Examples
    --------
    >>> from tablegen.compute.multiclass_scores import score_tables
    >>> P = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4], [0.5, 0.4, 0.1]])
    >>> codes, counts = np.array([0, 1, 2, 0], np.int32), np.array([2, 1, 1])
    >>> ranks, orders, last, credit = score_tables(P, k=1)
    >>> out, alone = np.empty((6, 1, 3)), np.empty((6, 3))
    >>> ranks32 = ranks[None].astype(np.int32)  # int32, as the report passes them (the one signature it compiles)
    >>> model_score_permutations(codes, ranks32, orders[None], last[None], credit[None, None], counts, True,
    ...                          *multiclass_scores_key(1, 4, 3), 0, out)
    >>> multiclass_score_permutations(codes, ranks, orders, last, credit, counts, True, *multiclass_scores_key(1, 4, 3),
    ...                               0, alone)
    >>> out[:, 0].tobytes() == alone.tobytes()
    True
    """
    n = codes.size
    K = counts.size
    M = double_ranks.shape[0]
    work = np.empty(n, np.int32)
    small = np.empty(n, np.uint8)  # the arrangement in a byte an item (K <= 255): the walks' gathers stay in L1
    untied = untied_columns(group_last)
    sums = np.empty(K, np.int64)
    acc = np.empty((K, K), np.int64)
    for row in range(out.shape[0]):
        s0, s1, s2, s3 = replicate_state(key0, key1, first + row)
        for i in range(n):
            work[i] = codes[i]
        for i in range(n - 1, 0, -1):
            j, s0, s1, s2, s3 = draw_below(np.uint64(i + 1), s0, s1, s2, s3)
            c = work[j]
            work[j] = work[i]
            work[i] = c
        if K <= 255:
            for i in range(n):
                small[i] = work[i]
            for m in range(M):
                _model_columns(small, m, double_ranks, orders, group_last, untied, credit, counts, hand_till, sums,
                               acc, out[row, m])
        else:
            for m in range(M):
                _model_columns(work, m, double_ranks, orders, group_last, untied, credit, counts, hand_till, sums,
                               acc, out[row, m])


@jit_cached(nogil=True)
def model_score_enumeration(codes, double_ranks, orders, group_last, credit, counts, hand_till, out):
    """Every distinct arrangement of the label ``codes``, lexicographic from the sorted one (the order of
    :func:`enumeration_values`): ``out[a, m]`` model m's columns on arrangement a.  Returns the number of rows
    written.

    Examples
    --------
    >>> from tablegen.compute.multiclass_scores import score_tables
    >>> ranks, orders, last, credit = score_tables(np.array([[0.8, 0.2], [0.4, 0.6], [0.5, 0.5]]), k=1)
    >>> out = np.empty((3, 1, 3))
    >>> ranks32 = ranks[None].astype(np.int32)  # int32, as the report passes them (the one signature it compiles)
    >>> model_score_enumeration(np.array([0, 1, 1], np.int32), ranks32, orders[None], last[None],
    ...                         credit[None, None], np.array([1, 2]), True, out)
    3
    >>> out[:, 0, 0].tolist()
    [1.0, 0.0, 0.5]
    """
    K = counts.size
    M = double_ranks.shape[0]
    work = np.sort(codes)
    sums = np.empty(K, np.int64)
    acc = np.empty((K, K), np.int64)
    untied = untied_columns(group_last)
    written = 0
    while written < out.shape[0]:
        for m in range(M):
            _model_columns(work, m, double_ranks, orders, group_last, untied, credit, counts, hand_till, sums, acc,
                           out[written, m])
        written += 1
        if not _next_arrangement(work):
            break
    return written
