"""Bootstrap kernels: every metric of a resample by one weighted pass along each model's fixed order.

A bootstrap resample of a test set changes how often each item counts, never the order of the scores.
Each model's items are sorted once by descending score (``order``, ties in item order) with ``group_end``
1 at the last item of each group of tied scores (as
:func:`tablegen.compute.metric_scorers.threshold_groups` groups them); a resample is a vector of integer
multiplicities (``weights``, one per item), and a model's values on it come from one pass over its sorted items,
adding each item's weight to the weighted TP (positives) or FP (negatives) and closing a cut-off at
each group end that holds any weight.  Copies of one item are tied scores, so they form one group, as
the registry's scorers group the explicitly resampled items; a group of weight 0 is absent from the
resample, and the cut-off after it repeats the one before, which changes no value (so the pass branches on
neither the weights nor the labels, both random).  One pass scores every metric asked (:func:`metrics_pass`):
the walk along the order sums AUC and keeps the cut-offs where TP grew (no other cut-off can hold a maximum
or add to average precision), and the maxima and average precision come from those alone.  O(n) per resample
and model, for all the metrics together.

Every value is the registry scorer's expression (:mod:`tablegen.compute.metric_scorers`) on the weighted
counts, with its float operations, so the values equal the scorer applied to the resampled items bit
for bit, but average precision (a sequential sum here, numpy's pairwise sum there: a few ulps):

``0 auc``                     A = sum gp (N - FP after the group), B = sum gp gn, (A + 0.5 B) / (P N)
``1 best_accuracy``           max over the cut-offs of (TP + N - FP) / (P + N)
``2 best_f1``                 max of 2 TP / (P + k)
``3 best_balanced_accuracy``  max of 0.5 (TP / P + 1 - FP / N)
``4 average_precision``       sum of gp (TP / k) over groups, divided by P
``5 best_mcc``                max of (TP N - FP P) / sqrt(P N k (P + N - k)) (0 at k = 0 and k = P + N), capped at 1
``6 tp_at_k``                 TP at the cut-off holding exactly k items (P when k >= P + N); NaN when no
                              cut-off does (copies or tied scores straddle k: the scorer refuses such a
                              resample, and the interval has NaN ends)

Resamples: resample r draws its multiplicities from its own xoshiro256** stream
(:func:`~tablegen.compute.kernels.rng.replicate_state` of the question's key and r): P draws uniform
over the positives, then N over the negatives (stratified, every resample keeps P and N), each draw
Lemire's multiply-shift of the upper 32 bits of one output with its rejection step (as the label
permutation kernel draws).  A resample therefore depends on the key and r alone, never on blocks,
workers or the device.  Memory traffic, which sets the pace at 10^6 items: a draw of the j-th positive counts
into slot j (the j-th negative into slot P + j) of one byte per item, with no look-up of the item, and each
model's pass reads its codes (:func:`pass_codes`: slot, label and group end in 4 bytes) in sequence, gathering
only the counts.  At 10^6 items (AMD EPYC, AVX-512, a loaded machine) a resample's draw takes 1.2 ms and every
default metric of one model about 3 ms together (3 ns per item), against 2.7 ms per model and metric with a
pass per metric.  BCa's jackknife: :mod:`tablegen.compute.kernels.jackknife`.
"""

import math

import numba as nb
import numpy as np

from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.orders import descending_orders
from tablegen.compute.kernels.ranking import draw_below
from tablegen.compute.kernels.rng import replicate_state

#: The spawn key's tag of the bootstrap streams (``SeedSequence(seed, spawn_key=(P, N, tag))``): apart from the
#: tables' and the label permutations' streams of the same (P, N), ``cell_key(seed, P, N)``.
BOOTSTRAP_TAG = 0xB007


def bootstrap_key(seed: int, P: int, N: int) -> tuple[np.uint64, np.uint64]:
    """The 128-bit key of the bootstrap resamples of a test set of P positives and N negatives under ``seed``.

    Examples
    --------
    >>> bootstrap_key(2005, 30, 40) == bootstrap_key(2005, 30, 40)
    True
    """
    words = np.random.SeedSequence(seed, spawn_key=(P, N, BOOTSTRAP_TAG)).generate_state(2, np.uint64)
    return np.uint64(words[0]), np.uint64(words[1])


def sorted_models(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(orders, group_ends)`` of a (models, n) score array: each row sorted once, descending, ties in item order
    (as :func:`~tablegen.compute.metric_scorers.threshold_groups`), ``group_ends`` 1 at each tie group's last item.

    Examples
    --------
    >>> orders, ends = sorted_models(np.array([[0.2, 0.9, 0.9, 0.1]]))
    >>> orders.tolist(), ends.tolist()
    ([[1, 2, 0, 3]], [[0, 1, 1, 1]])
    """
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    orders = descending_orders(scores)
    ranked = np.take_along_axis(scores, orders, axis=1)
    ends = np.ones(scores.shape, np.uint8)
    ends[:, :-1] = ranked[:, 1:] != ranked[:, :-1]
    return orders, ends


# A plain njit function (one call per resample), not numba's inline="always", which copied and retyped its IR at
# each of its three calls.  metrics_pass (one call per model and resample) stays inlined: as a call it cost 200
# models x 60 items 12% more time.
@nb.njit(nogil=True)
def draw_weights(key0, key1, replicate, n_pos, n_neg, weights):
    """Add resample ``replicate``'s multiplicities into ``weights`` (all zero on entry) by slot: P draws over the
    slots 0 .. P-1 (the positives, in item order), then N over the slots P .. P+N-1 (the negatives).  Returns the
    largest count any slot reached: the largest count held, or P + N where a narrow ``weights`` wrapped (its counts
    then sum to less than P + N; a wrap needs 256 draws into one slot, so P + N >= 256 then).  The caller checks it
    against the narrow type's limit."""
    s0, s1, s2, s3 = replicate_state(key0, key1, replicate)
    for _ in range(n_pos):
        j, s0, s1, s2, s3 = draw_below(np.uint64(n_pos), s0, s1, s2, s3)
        weights[j] += 1
    for _ in range(n_neg):
        j, s0, s1, s2, s3 = draw_below(np.uint64(n_neg), s0, s1, s2, s3)
        weights[n_pos + j] += 1
    return _largest_count(weights, n_pos + n_neg)


@nb.njit(inline="always", nogil=True)
def _largest_count(weights, total):
    """The largest count of ``weights`` after ``total`` draws, or ``total`` where the counts sum to less (a narrow
    count wrapped).  A scan after the draws rather than a running maximum in the draw loop, whose read of each count
    just written cost 1.20 -> 1.68 ns per draw (10^6 items, AMD EPYC)."""
    largest = 0
    held = 0
    for i in range(weights.size):
        count = np.int64(weights[i])
        largest = max(largest, count)
        held += count
    return largest if held == total else total


@nb.njit(inline="always", nogil=True)
def mcc_at(g, n_pos, n_neg, k):
    """(TP N - FP P) w_k with ``g`` = TP N - FP P, w_k = 1 / sqrt(P N k (P+N-k)), 0 at k = 0 and k = P + N (the
    scorer's operations, each correctly rounded)."""
    n = n_pos + n_neg
    if k <= 0 or k >= n:
        return 0.0 * g
    return g * (1.0 / math.sqrt(np.float64(n_pos * n_neg) * np.float64(k * (n - k))))


#: The count past which a resample's multiplicities are drawn again into eight bytes per item
#: (:func:`resample_metrics`' default ``narrow_limit``: a byte could wrap past it).
NARROW_LIMIT = 255

#: The columns of the all-metric pass (:func:`metrics_pass`): :data:`~.ranking.BASE_COLUMNS`, then one TP at k
#: per cut-off asked.
METRIC_COLUMNS = 6

#: Below this P N the balanced accuracy's best cut-off is found from its integer key TP N - FP P (two keys apart
#: are 1 / (2 P N) apart in value, far more than the few ulps of the scorer's float expression), its value
#: computed only at cut-offs that reach the running best key; above it, at every cut-off.
EXACT_BA_LIMIT = 2.0 ** 48


@nb.njit(inline="always", nogil=True)
def metrics_pass(codes, untied, weights, n_pos, n_neg, want, k_cuts, tpk, cutoffs, out):
    """Every wanted metric of one model on one resample (see the module docstring): ``codes[j]`` = slot << 2 |
    label << 1 | group end of the model's j-th item (:func:`pass_codes`; ``untied``: every item a group end,
    :func:`untied_models`), ``weights`` the multiplicities by slot,
    ``want`` 0/1 per base column, ``k_cuts`` the cut-offs of the TP columns (``tpk`` scratch of their size),
    ``cutoffs`` scratch of 2 (P + 1) integers; the values go to ``out[:METRIC_COLUMNS + k_cuts.size]`` (columns
    not wanted: NaN).  The pass along the order (:func:`_walk`) sums AUC and keeps the cut-offs where TP grew;
    the maxima and average precision come from those alone (:func:`_best_of_cutoffs`)."""
    a, b, count = _walk(codes, untied, weights, n_neg, want[0], k_cuts, tpk, cutoffs)
    out[0] = (a + 0.5 * b) / (n_pos * n_neg) if want[0] else math.nan
    _best_of_cutoffs(cutoffs, count, n_pos, n_neg, want, out)
    for t in range(k_cuts.size):
        out[METRIC_COLUMNS + t] = math.nan if tpk[t] < 0 else float(tpk[t])


@nb.njit(inline="always", nogil=True)
def _walk(codes, untied, weights, n_neg, auc, k_cuts, tpk, cutoffs):
    """The weighted pass along one model's order: (AUC's A and B, the number of cut-offs kept).  Keeps in
    ``cutoffs`` (TP, FP, flat) at each group end where TP grew (written at every group end, kept where it grew: no
    branch on the random labels and weights), and TP at each cut-off of ``k_cuts`` items in ``tpk`` (-1 where
    none holds exactly k; P where k >= P + N).  A model without tied scores (``untied``: every item a group end)
    walks without testing for group ends (a fifth faster).  The item's step is written out in the loop: as an
    inlined step function (taking the arrays and a tuple of the state) it cost 34 ns per item instead of 4
    (10^5 items with ties, AMD EPYC)."""
    for t in range(k_cuts.size):
        tpk[t] = -1
    if untied and k_cuts.size == 0:
        return _walk_untied(codes, weights, n_neg, cutoffs)
    tp = fp = tp_before = fp_before = a = b = count = 0  # TP, FP, TP and FP at the last group end, A, B, cut-offs kept
    for j in range(codes.size):  # one item: its weight added to TP or FP, and at a group end the cut-off closed
        code = codes[j]
        w = np.int64(weights[code >> 2])
        positive = w * np.int64((code >> 1) & 1)
        tp += positive
        fp += w - positive
        if (code & 1) == 1:
            gp = tp - tp_before
            if auc:
                a += gp * (n_neg - fp)
                b += gp * (fp - fp_before)
            cutoffs[2 * count] = tp
            cutoffs[2 * count + 1] = fp
            count += np.int64(gp > 0)
            for t in range(k_cuts.size):
                if tp + fp == k_cuts[t]:
                    tpk[t] = tp
            tp_before = tp
            fp_before = fp
    for t in range(k_cuts.size):
        if k_cuts[t] >= tp + fp:
            tpk[t] = tp
    return a, b, count


@nb.njit(inline="always", nogil=True)
def _walk_untied(codes, weights, n_neg, cutoffs):
    """:func:`_walk` of a model without tied scores: each item its own group, so a positive of weight w adds
    w (N - FP) to A and a tie group never holds both classes (B = 0)."""
    tp = 0
    fp = 0
    a = 0
    count = 0
    for j in range(codes.size):
        code = codes[j]
        w = np.int64(weights[code >> 2])
        positive = w * np.int64((code >> 1) & 1)
        tp += positive
        fp += w - positive
        a += positive * (n_neg - fp)
        cutoffs[2 * count] = tp
        cutoffs[2 * count + 1] = fp
        count += np.int64(positive > 0)
    return a, 0, count


@nb.njit(inline="always", nogil=True)
def _best_of_cutoffs(cutoffs, count, n_pos, n_neg, want, out):
    """Columns 1 to 5 from the cut-offs where TP grew, float for float the scorer's maxima over every cut-off.

    A cut-off where TP did not grow holds the TP of the one before and more FP: each best-threshold metric's
    value there is no larger, in floats as in reals (best MCC's, when positive, falls by a relative 2 / n or
    more, far beyond rounding), and average precision's term there is 0.  Each maximum is found without a
    division per cut-off: best F1's by comparing 2 TP / (P + k) as fractions (one correctly rounded division is
    monotone), balanced accuracy's by its integer key TP N - FP P (:data:`EXACT_BA_LIMIT`), best MCC's by its
    square compared in floats with a 1e-12 margin (a cut-off whose float could reach the best's is evaluated;
    the others are below it by far more than rounding)."""
    n = n_pos + n_neg
    w_acc, w_f1, w_ba, w_ap, w_mcc = want[1], want[2], want[3], want[4], want[5]
    exact_ba = np.float64(n_pos) * np.float64(n_neg) < EXACT_BA_LIMIT
    best_d = 0  # the empty cut-off's TP - FP
    f1_num = 0  # the best F1 as the fraction f1_num / f1_den: 0 / P, the empty cut-off's 0
    f1_den = n_pos
    ba_key = 0  # the empty cut-off's key and value 0.5 (0 / P + 1 - 0 / N)
    best_ba = 0.5
    ap = 0.0
    best_m = 0.0
    mcc_g2 = 0.0  # G^2 and k (n - k) of the cut-off whose value best_m is (none yet: every G > 0 is a candidate)
    mcc_k = 1.0
    tp_before = 0
    for c in range(count):
        tp = cutoffs[2 * c]
        fp = cutoffs[2 * c + 1]
        k = tp + fp
        if w_acc:
            best_d = max(best_d, tp - fp)
        if w_f1:
            better = 2 * tp * f1_den > f1_num * (n_pos + k)
            f1_num = 2 * tp if better else f1_num
            f1_den = n_pos + k if better else f1_den
        if w_ba:
            key = tp * n_neg - fp * n_pos
            if key >= ba_key or not exact_ba:
                best_ba = max(best_ba, 0.5 * (tp / n_pos + 1 - fp / n_neg))
                ba_key = max(ba_key, key)
        if w_ap:
            ap += (tp - tp_before) * (tp / k)
        if w_mcc:
            g = tp * n_neg - fp * n_pos
            if g > 0:  # G <= 0: a value <= 0, never above the empty cut-off's 0
                g2 = np.float64(g) * np.float64(g)
                kk = np.float64(k * (n - k))
                if g2 * mcc_k >= mcc_g2 * kk * (1.0 - 1e-12):
                    value = mcc_at(g, n_pos, n_neg, k)
                    if value > best_m:
                        best_m = value
                        mcc_g2 = g2
                        mcc_k = kk
        tp_before = tp
    out[1] = (best_d + n_neg) / (n_pos + n_neg) if w_acc else math.nan
    out[2] = f1_num / f1_den if w_f1 else math.nan
    out[3] = best_ba if w_ba else math.nan
    out[4] = ap / n_pos if w_ap else math.nan
    out[5] = min(best_m, 1.0) if w_mcc else math.nan


@nb.njit(nogil=True)
def untied_models(codes):
    """Whether each model's scores are all distinct: every item a group end (the codes' lowest bit)."""
    untied = np.ones(codes.shape[0], np.bool_)
    for m in range(codes.shape[0]):
        for j in range(codes.shape[1]):
            if not codes[m, j] & 1:
                untied[m] = False
                break
    return untied


def pass_codes(orders: np.ndarray, group_ends: np.ndarray, labels: np.ndarray, by_slot: bool = True) -> np.ndarray:
    """Each model's items in its order as the codes of :func:`metrics_pass` (slot << 2 | label << 1 | group end,
    4 bytes each below 2^29 items): ``by_slot`` the slots of :func:`draw_weights`, else the items' indices.

    Examples
    --------
    >>> orders, ends = sorted_models(np.array([[0.2, 0.9, 0.9, 0.1]]))
    >>> pass_codes(orders, ends, np.array([1, 0, 1, 0])).tolist()  # slots: positives 0, 1; negatives 2, 3
    [[8, 7, 3, 13]]
    """
    labels = np.asarray(labels, np.int64)
    if by_slot:
        positive = labels == 1
        slot_of = np.empty(labels.size, np.int64)
        slot_of[positive] = np.arange(int(positive.sum()))
        slot_of[~positive] = int(positive.sum()) + np.arange(int((~positive).sum()))
    else:
        slot_of = np.arange(labels.size, dtype=np.int64)
    dtype = np.uint32 if labels.size < 2 ** 29 else np.int64
    codes = np.empty(orders.shape, dtype)
    for m in range(orders.shape[0]):  # one model at a time: no (models, n) int64 temporaries
        codes[m] = (slot_of[orders[m]] << 2) | (labels[orders[m]] << 1) | group_ends[m]
    return codes


def metric_choice(columns, k_cuts=()) -> tuple[np.ndarray, np.ndarray]:
    """``(want, k_cuts)`` of :func:`metrics_pass` for base ``columns`` (indices into ``BASE_COLUMNS``) and the
    TP cut-offs ``k_cuts``.

    Examples
    --------
    >>> want, cuts = metric_choice([0, 2], [5])
    >>> want.tolist(), cuts.tolist()
    ([1, 0, 1, 0, 0, 0], [5])
    """
    want = np.zeros(METRIC_COLUMNS, np.uint8)
    want[sorted(columns)] = 1
    return want, np.asarray(list(k_cuts), np.int64)


@jit_cached(nogil=True)
def resample_metrics(codes, n_pos, n_neg, want, k_cuts, key0, key1, first, out, narrow_limit=255):
    """Resamples ``first .. first + out.shape[0] - 1``: every model's wanted metrics on each, into ``out``
    (resamples, models, ``METRIC_COLUMNS + k_cuts.size``), one pass per model and resample (:func:`metrics_pass`);
    ``codes`` (models, n) from :func:`pass_codes`, by slot.

    The multiplicities are drawn into one byte per item (a million items fit in cache, where the pass gathers
    them in each model's order: 5x faster at 10^6 items than 4 bytes), and a resample in which some count reached
    ``narrow_limit`` (255, where a byte could wrap; smaller in tests) is drawn again, the same draws, into 8 bytes
    per item: never a wrapped count.

    The work is :func:`_resample_metrics`'s, always called with an int64 ``narrow_limit``: numba types an omitted
    default apart from a given one, and the whole pass compiled once per kind cost a second 5 s of CPU from a cold cache
    (this wrapper compiles in 0.4 s).
    """
    _resample_metrics(codes, n_pos, n_neg, want, k_cuts, key0, key1, first, out, np.int64(narrow_limit))


@jit_cached(nogil=True)
def _resample_metrics(codes, n_pos, n_neg, want, k_cuts, key0, key1, first, out, narrow_limit):
    """:func:`resample_metrics`'s pass, ``narrow_limit`` given."""
    n = n_pos + n_neg
    untied = untied_models(codes)
    narrow = np.zeros(n, np.uint8)
    wide = np.zeros(0, np.int64)
    tpk = np.empty(k_cuts.size, np.int64)
    cutoffs = np.empty(2 * (n_pos + 1), np.int64)
    for row in range(out.shape[0]):
        narrow[:] = 0
        if draw_weights(key0, key1, first + row, n_pos, n_neg, narrow) >= narrow_limit:
            if wide.size == 0:
                wide = np.zeros(n, np.int64)
            wide[:] = 0
            draw_weights(key0, key1, first + row, n_pos, n_neg, wide)
            for m in range(codes.shape[0]):
                metrics_pass(codes[m], untied[m], wide, n_pos, n_neg, want, k_cuts, tpk, cutoffs, out[row, m])
            continue
        for m in range(codes.shape[0]):
            metrics_pass(codes[m], untied[m], narrow, n_pos, n_neg, want, k_cuts, tpk, cutoffs, out[row, m])


@jit_cached(nogil=True)
def observed_metrics(codes, n_pos, n_neg, want, k_cuts, out):
    """Every model's wanted metrics on the items themselves (every multiplicity 1) into ``out`` (models,
    ``METRIC_COLUMNS + k_cuts.size``); ``codes`` as :func:`resample_metrics`'s."""
    ones = np.ones(n_pos + n_neg, np.uint8)
    untied = untied_models(codes)
    tpk = np.empty(k_cuts.size, np.int64)
    cutoffs = np.empty(2 * (n_pos + 1), np.int64)
    for m in range(codes.shape[0]):
        metrics_pass(codes[m], untied[m], ones, n_pos, n_neg, want, k_cuts, tpk, cutoffs, out[m])


@jit_cached(nogil=True)
def weighted_metrics(codes, labels, weights, want, k_cuts, out):
    """Every model's wanted metrics on each row of given multiplicities ``weights`` (rows, n, by item) into ``out``
    (rows, models, ``METRIC_COLUMNS + k_cuts.size``), each row with its own class totals; ``codes`` from
    :func:`pass_codes` by item (``by_slot=False``).  The observed values (a row of ones), and resamples drawn
    elsewhere (scipy's, in the tests)."""
    untied = untied_models(codes)
    tpk = np.empty(k_cuts.size, np.int64)
    for row in range(weights.shape[0]):
        n_pos = 0
        n_neg = 0
        for i in range(labels.size):
            n_pos += weights[row, i] * labels[i]
            n_neg += weights[row, i] * (1 - labels[i])
        cutoffs = np.empty(2 * (n_pos + 1), np.int64)
        for m in range(codes.shape[0]):
            metrics_pass(codes[m], untied[m], weights[row], n_pos, n_neg, want, k_cuts, tpk, cutoffs, out[row, m])


def _one_column(column: int, k_cut: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(want, k_cuts, the column of the pass's output) of one base column or of TP at ``k_cut``."""
    if column < METRIC_COLUMNS:
        return (*metric_choice([column]), column)
    return (*metric_choice([], [k_cut]), METRIC_COLUMNS)


def resample_values(orders, group_ends, labels, positives, negatives, column, k_cut, key0, key1, first, out,
                    narrow_limit=255) -> None:
    """One metric (base ``column``, or TP at ``k_cut`` for column 6) of every model on resamples ``first ..
    first + out.shape[0] - 1`` into ``out`` (resamples, models): :func:`resample_metrics` asked for one
    column.  ``orders`` and ``group_ends`` are (models, n) (:func:`sorted_models`), ``labels`` 0/1 per item,
    ``positives`` and ``negatives`` the items of each class in item order (a draw of slot j is the j-th of its
    class)."""
    want, cuts, at = _one_column(column, k_cut)
    values = np.empty((out.shape[0], orders.shape[0], METRIC_COLUMNS + cuts.size))
    resample_metrics(pass_codes(orders, group_ends, labels), positives.size, negatives.size, want, cuts, key0, key1,
                     first, values, narrow_limit)
    out[:] = values[:, :, at]


def weighted_values(orders, group_ends, labels, weights, column, k_cut, out) -> None:
    """One metric of every model on each row of given multiplicities ``weights`` (rows, n) into ``out`` (rows,
    models): :func:`weighted_metrics` asked for one column."""
    want, cuts, at = _one_column(column, k_cut)
    values = np.empty((weights.shape[0], orders.shape[0], METRIC_COLUMNS + cuts.size))
    labels = np.ascontiguousarray(labels, np.int64)
    weighted_metrics(pass_codes(orders, group_ends, labels, by_slot=False), labels, weights, want, cuts, values)
    out[:] = values[:, :, at]


@jit_cached(nogil=True)
def resample_weights(positives, negatives, key0, key1, first, out):
    """The multiplicities of resamples ``first .. first + out.shape[0] - 1`` into ``out`` (resamples, n), all
    zero on entry: what :func:`resample_metrics` weighs the items by (for tests and explicit resamples)."""
    n_pos, n_neg = positives.size, negatives.size
    by_slot = np.zeros(n_pos + n_neg, np.int64)
    for row in range(out.shape[0]):
        by_slot[:] = 0
        draw_weights(key0, key1, first + row, n_pos, n_neg, by_slot)
        for j in range(n_pos):
            out[row, positives[j]] = by_slot[j]
        for j in range(n_neg):
            out[row, negatives[j]] = by_slot[n_pos + j]
