"""Exact null law of a weighted diagonal: multi-class balanced accuracy and macro-F1 under the permutation null.

With both margins fixed (true counts n_k, predicted counts m_k), balanced accuracy (the mean over the classes with
items of T_kk / n_k) and macro-F1 (the mean over all classes of 2 T_kk / (n_k + m_k)) are both linear in the
diagonal counts T_kk: scale * W with W = sum_k w_k T_kk and integer weights w_k (:func:`diagonal_weights`).  The
law of W under the null (the predicted labels permuted uniformly over the items) comes from the multivariate rook
polynomial of the board union_k (n_k x m_k): marking the hits of class k by x_k,

    sum over the n! permutations of prod_k x_k^(T_kk) = sum_i (n - |i|)! prod_k r_k(i_k) (x_k - 1)^(i_k),

r_k(i) = C(n_k, i) C(m_k, i) i! (the rook numbers of a full block), the sum over vectors i with
i_k <= d_k = min(n_k, m_k), by the same inclusion-exclusion as the hits' law
(:mod:`tablegen.compute.exact.multiclass`).  Substituting x_k = z^(w_k) gives the generating function of W,
sum_perm z^W = sum_s (n - s)! A_s(z) with A_s(z) = [y^s] prod_k sum_i r_k(i) (y (z^(w_k) - 1))^i: a programme
over the classes whose state is s, the rooks placed so far, and whose entries are the polynomials A_s(z), all in
Python integers (exact).  Each A_s is evaluated at z = 2**b with b > log2(n!) (Kronecker substitution: one big
integer per s, negative digits allowed on the way; only sum_s (n - s)! A_s(2**b) is read, and its base-2**b
digits are the counts, each in [0, n!]).  Classes of equal weight form one factor sum_i R_i (y (z^w - 1))^i, R
the product of their rook polynomials, applied by Horner's rule in q = y (z^w - 1): per degree one pass of a
shift, a subtraction and a product by a rook number over the entries.  With one weight only (a balanced design:
all n_k equal for balanced accuracy, all n_k + m_k equal for macro-F1) W = w X, X the hits, and the hits' law
applies directly (:func:`equal_weight`; lookups use :mod:`tablegen.compute.exact.multiclass` then).

Cost: the entries hold (range of W + 1) digits of log2(n!) bits, the range max W = sum_k w_k d_k with the weights
reduced by their gcd; a group of degree d makes d passes over the S + 1 entries (S the rooks so far), linear in the
words.  :func:`weighted_cost` bounds time and memory before anything runs, and lookups answer by Monte Carlo where
the time is beyond the time limit (``TABLEGEN_TIME_LIMIT``).  Measured (one core, AMD EPYC): three classes of
10/20/30 items in 3 ms; 30/40/50 in 0.3 s (balanced accuracy) and 1.2 s (macro-F1); 60/80/100 in 8 s; the range
of W, hence the cost, grows with the lcm of the class sizes, so designs with many classes of unequal sizes go
to Monte Carlo quickly.  Every probability is the correctly rounded double of an exact rational; values of W are
integers, so ties are exact.  ``docs/explanation/multiclass-accuracy.md`` derives it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from tablegen.compute.exact.multiclass import (
    TAIL_FLOOR,
    TIE_RTOL,
    block_rook_polynomial,
    check_margins,
    multiply,
)
from tablegen.compute.stats import p_value_from_tail, upper_tail_probability
from tablegen.errors import TablegenInputError

#: The metrics whose null this module gives.
WEIGHTED_METRICS = ("balanced_accuracy", "macro_f1")
#: Seconds per entry update of the programme's Horner passes and per 64-bit word they touch, measured on the
#: development machine (AMD EPYC; benchmarks/bench_multiclass_weighted.py), with room for a loaded machine.
_SECONDS_PER_UPDATE = 1e-6
_SECONDS_PER_WORD = 5e-9


@dataclass(frozen=True)
class DiagonalWeights:
    """The metric as ``scale * sum_k weights[k] * T_kk``, with integer weights and an exact rational scale.

    Attributes
    ----------
    metric : str
        ``"balanced_accuracy"`` or ``"macro_f1"``.
    weights : tuple of int
        w_k >= 0 per class; 0 where the class can have no hit (d_k = min(n_k, m_k) = 0); their gcd is 1 (or all 0).
    scale : Fraction
        The metric is scale * W.
    """

    metric: str
    weights: tuple[int, ...]
    scale: Fraction

    def value(self, key: int) -> Fraction:
        """The metric's exact value at W = ``key``."""
        return self.scale * key

    def key(self, diagonal) -> int:
        """W = sum_k w_k T_kk of the diagonal counts ``diagonal`` (class order)."""
        return sum(w * int(t) for w, t in zip(self.weights, diagonal))


def diagonal_weights(metric: str, true_counts, predicted_counts) -> DiagonalWeights:
    """Integer weights of balanced accuracy or macro-F1 as a linear function of the diagonal (margins fixed).

    Balanced accuracy: w_k proportional to 1 / n_k over the classes with items (a class only predicted is left out,
    as in scikit-learn); macro-F1: w_k proportional to 1 / (n_k + m_k) over all classes (a class only predicted
    scores 0).  The common factor goes into ``scale``.

    Examples
    --------
    >>> weights = diagonal_weights("balanced_accuracy", [2, 4, 0], [3, 2, 1])
    >>> weights.weights, weights.scale, weights.value(weights.key([1, 2, 0]))
    ((2, 1, 0), Fraction(1, 8), Fraction(1, 2))
    >>> diagonal_weights("macro_f1", [2, 4], [3, 3])
    DiagonalWeights(metric='macro_f1', weights=(7, 5), scale=Fraction(1, 35))
    """
    true, predicted = check_margins(true_counts, predicted_counts)
    if metric not in WEIGHTED_METRICS:
        raise TablegenInputError(f"metric must be one of {', '.join(WEIGHTED_METRICS)}, got {metric!r}")
    if metric == "balanced_accuracy":
        denominators = list(true)
        outside = Fraction(1, sum(1 for a in true if a > 0))
    else:
        denominators = [a + b for a, b in zip(true, predicted)]
        outside = Fraction(2, len(true))
    hit = [min(a, b) > 0 for a, b in zip(true, predicted)]
    common = math.lcm(*(d for d, h in zip(denominators, hit) if h)) if any(hit) else 1
    weights = [common // d if h else 0 for d, h in zip(denominators, hit)]
    divisor = math.gcd(*weights) or 1
    return DiagonalWeights(metric=metric, weights=tuple(w // divisor for w in weights),
                           scale=outside * Fraction(divisor, common))


def equal_weight(weights: DiagonalWeights) -> int | None:
    """The common weight w where every class that can have a hit has the same weight (then W = w X, X the hits,
    and the hits' law applies); None otherwise.

    Examples
    --------
    >>> equal_weight(diagonal_weights("balanced_accuracy", [5, 5, 5], [3, 7, 5]))
    1
    >>> equal_weight(diagonal_weights("macro_f1", [5, 5, 5], [3, 7, 5])) is None
    True
    """
    distinct = {w for w in weights.weights if w > 0}
    if len(distinct) > 1:
        return None
    return distinct.pop() if distinct else 0


def hits_map(weights: DiagonalWeights, true_counts, predicted_counts) -> tuple[Fraction, Fraction] | None:
    """(a, b) with W = a X + b and a >= 0, X the hits, where W is such a function of the hits; None otherwise.

    Two cases: every class that can have a hit has the same weight w (a = w, b = 0; balanced designs), and two
    classes (T_22 = T_11 + n_2 - m_1 and X = 2 T_11 + n_2 - m_1, so W = (w_1 + w_2) X / 2 + (w_2 - w_1)(n_2 - m_1) / 2).
    Then the law of W is the hits' law (:mod:`tablegen.compute.exact.multiclass`), far cheaper than the programme.

    Examples
    --------
    >>> weights = diagonal_weights("balanced_accuracy", [3, 2], [1, 4])  # W = 2 T_11 + 3 T_22, T_22 = T_11 + 1
    >>> hits_map(weights, [3, 2], [1, 4]), weights.key([1, 2]), weights.key([0, 1])  # X = 3 and X = 1
    ((Fraction(5, 2), Fraction(1, 2)), 8, 3)
    """
    true, predicted = check_margins(true_counts, predicted_counts)
    common = equal_weight(weights)
    if common is not None:
        return Fraction(common), Fraction(0)
    if len(true) == 2:
        (w_1, w_2), shift = weights.weights, true[1] - predicted[0]
        return Fraction(w_1 + w_2, 2), Fraction((w_2 - w_1) * shift, 2)
    return None


def _groups(true: tuple[int, ...], predicted: tuple[int, ...], weights: tuple[int, ...]) -> list[tuple[int, list[int]]]:
    """(w, R) per distinct positive weight: R the product of the rook polynomials of the classes of weight w."""
    by_weight: dict[int, list[int]] = {}
    for a, b, w in zip(true, predicted, weights):
        if w > 0 and min(a, b) > 0:
            block = block_rook_polynomial(a, b)
            by_weight[w] = multiply(by_weight[w], block) if w in by_weight else block
    return sorted(by_weight.items(), key=lambda item: len(item[1]))


def _work(true: tuple[int, ...], predicted: tuple[int, ...], weights: tuple[int, ...]) -> tuple[float, float]:
    """(entry updates, 64-bit word updates) of the programme, and the words it holds at most (upper bounds)."""
    digit = (math.lgamma(sum(true) + 1) / math.log(2) + 8) / 64  # words of one base-2**b digit
    updates = words = held = 0.0
    rooks = top = 0
    for w, rook in _groups(true, predicted, weights):
        degree = len(rook) - 1
        rooks, top = rooks + degree, top + w * degree
        size = digit * (top + 1)  # words of one entry A_s(2**b), at most
        updates += degree * (rooks + 1)
        words += degree * (rooks + 1) * size
        held = max(held, 3 * (rooks + 1) * size)
    return updates, words, held


def weighted_cost(true_counts, predicted_counts, weights: DiagonalWeights) -> tuple[float, float]:
    """(seconds, bytes): an upper estimate of the single-core time and memory of :func:`weighted_null`.

    Where W is a function of the hits (:func:`hits_map`) the hits' law's cost instead.  A group of degree d makes
    d Horner passes over the S + 1 entries (S the rooks so far), each entry an integer
    of at most (range of W so far + 1) digits of log2(n!) bits: a shift, a subtraction and a product by a rook
    number per entry and pass.  The time is linear in the words touched (no big-integer product of two large
    operands), so the estimate is (passes x entries) x (seconds per entry + seconds per word x words).

    Examples
    --------
    >>> weights = diagonal_weights("balanced_accuracy", [10, 20, 30], [20, 20, 20])
    >>> seconds, memory = weighted_cost([10, 20, 30], [20, 20, 20], weights)
    >>> seconds < 10, memory < 1e9
    (True, True)
    """
    true, predicted = check_margins(true_counts, predicted_counts)
    if hits_map(weights, true, predicted) is not None:  # the hits' law answers: its cost
        from tablegen.compute.exact.multiclass import accuracy_bytes, accuracy_seconds

        return accuracy_seconds(true, predicted), accuracy_bytes(true, predicted)
    updates, words, held = _work(true, predicted, weights.weights)
    return updates * _SECONDS_PER_UPDATE + words * _SECONDS_PER_WORD, 8.0 * held


def weighted_seconds(true_counts, predicted_counts, weights: DiagonalWeights) -> float:
    """The time of :func:`weighted_cost` (seconds, one core, an upper estimate).

    Examples
    --------
    >>> weighted_seconds([40, 50, 60], [50, 50, 50], diagonal_weights("macro_f1", [40, 50, 60], [50, 50, 50])) < 60
    True
    """
    return weighted_cost(true_counts, predicted_counts, weights)[0]


def _apply_group(state: list[int], shift: int, rook: list[int]) -> list[int]:
    """sum_s state[s] y^s times sum_i R_i (y (Z - 1))^i, Z = 2**shift, by Horner's rule in q = y (Z - 1):
    acc = acc q + state R_i for i = d .. 0 (each step a shift, a subtraction and a small product per entry)."""
    acc = [value * rook[-1] for value in state]
    for coefficient in reversed(rook[:-1]):
        shifted = [0] + [(value << shift) - value for value in acc]  # times y (Z - 1)
        for s, value in enumerate(state):
            shifted[s] += value * coefficient
        acc = shifted
    return acc


def weighted_counts(true_counts, predicted_counts, weights: DiagonalWeights) -> dict[int, int]:
    """{W: the permutations of the predicted labels with sum_k w_k T_kk = W}, exact (they sum to n!).

    The generating function sum_perm z^W is evaluated at z = 2**b, b > log2(n!) (Kronecker substitution): the
    programme's state is the list over s of the integers A_s(2**b), and the digits of sum_s (n - s)! A_s(2**b)
    in base 2**b are the counts (each in [0, n!], so the digits do not overlap).

    Examples
    --------
    >>> weights = diagonal_weights("balanced_accuracy", [2, 1], [1, 2])
    >>> weights.weights, weighted_counts([2, 1], [1, 2], weights)  # recall weights 1/2 and 1: W = T_00 + 2 T_11
    ((1, 2), {0: 2, 3: 4})
    """
    true, predicted = check_margins(true_counts, predicted_counts)
    n = sum(true)
    total = math.factorial(n)
    width = total.bit_length() // 8 + 1  # bytes per digit: a count <= n! < 2**(8 width)
    state = [1]
    top = 0
    for w, rook in _groups(true, predicted, weights.weights):
        state = _apply_group(state, 8 * width * w, rook)
        top += w * (len(rook) - 1)
    packed, factorial = 0, math.factorial(n - len(state) + 1)
    for s in range(len(state) - 1, -1, -1):  # sum_s (n - s)! A_s(Z)
        packed += factorial * state[s]
        factorial *= n - s + 1 if s else 1
    digits = packed.to_bytes(width * (top + 1), "little")  # an internal check below: the counts form a law
    counts = {}
    for v in range(top + 1):
        count = int.from_bytes(digits[v * width:(v + 1) * width], "little")
        if count:
            counts[v] = count
    if sum(counts.values()) != total:
        raise ArithmeticError("the weighted rook programme's counts do not form a law (a bug: please report it)")
    return counts


@dataclass(frozen=True)
class WeightedNull:
    """The exact law of W = sum_k w_k T_kk under the permutation null: tails, p-values and critical values.

    Attributes
    ----------
    weights : DiagonalWeights
        The metric as scale * W.
    n : int
        The number of items.
    keys : tuple of int
        The attainable values of W, increasing.
    tail_counts : tuple of int
        tail_counts[j]: the permutations with W >= keys[j] (tail_counts[0] = n!).

    Examples
    --------
    >>> null = weighted_null("balanced_accuracy", [4, 3, 2], [3, 3, 3])
    >>> key = null.weights.key([3, 2, 1])  # recalls 3/4, 2/3, 1/2
    >>> null.weights.value(key), null.tail_ge_exact(key)
    (Fraction(23, 36), Fraction(11, 210))
    >>> critical = null.critical_key(C=1, alpha=0.05)
    >>> null.weights.value(critical), round(null.tail_ge(critical), 6)
    (Fraction(2, 3), 0.038095)
    """

    weights: DiagonalWeights
    n: int
    keys: tuple[int, ...]
    tail_counts: tuple[int, ...]

    def _index(self, key: int) -> int:
        """The first attainable value >= key (len(keys) past the last)."""
        low, high = 0, len(self.keys)
        while low < high:
            middle = (low + high) // 2
            if self.keys[middle] < key:
                low = middle + 1
            else:
                high = middle
        return low

    def tail_count(self, key: int) -> int:
        """The permutations with W >= ``key``, exact."""
        index = self._index(key)
        return self.tail_counts[index] if index < len(self.keys) else 0

    def tail_ge_exact(self, key: int) -> Fraction:
        """Pr(W >= key) as an exact rational."""
        return Fraction(self.tail_count(key), self.tail_counts[0])

    def tail_ge(self, key: int) -> float:
        """Pr(W >= key), the correctly rounded double (an integer division)."""
        return self.tail_count(key) / self.tail_counts[0]

    def critical_key(self, C: int, alpha: float) -> int | None:
        """The smallest attainable W whose best-of-C p-value is <= alpha (tail <= t within :data:`TIE_RTOL`);
        None if none is."""
        threshold = float(upper_tail_probability(C, alpha)) * (1.0 + TIE_RTOL)
        for key, count in zip(self.keys, self.tail_counts):
            if count / self.tail_counts[0] <= threshold:
                return key
        return None

    def p_value(self, key: int, C: int = 1) -> tuple[float, bool]:
        """The best-of-C p-value 1 - Pr(W < key)**C and whether it is only a bound (tail below 1e-300)."""
        tail = self.tail_ge(key)
        if tail < TAIL_FLOOR:
            return float(p_value_from_tail(TAIL_FLOOR, C)), True
        return float(p_value_from_tail(tail, C)), False

    def expected_value(self) -> Fraction:
        """E[metric] under the null, from the law (equal to the scale times sum_k w_k n_k m_k / n)."""
        total = self.tail_counts[0]
        counts = [a - b for a, b in zip(self.tail_counts, (*self.tail_counts[1:], 0))]
        return self.weights.scale * Fraction(sum(k * c for k, c in zip(self.keys, counts)), total)


def weighted_null(metric: str, true_counts, predicted_counts) -> WeightedNull:
    """The exact null law of balanced accuracy or macro-F1 (as W, :func:`diagonal_weights`) for these margins.

    Runs the whole programme (use :func:`weighted_seconds` first for large margins; a balanced design is cheaper
    through the hits' law, :func:`equal_weight`).

    Examples
    --------
    >>> null = weighted_null("macro_f1", [2, 2], [1, 3])
    >>> [float(null.weights.value(key)) for key in null.keys], [float(null.tail_ge_exact(k)) for k in null.keys]
    ([0.2, 0.7333333333333333], [1.0, 0.5])
    """
    true, predicted = check_margins(true_counts, predicted_counts)
    weights = diagonal_weights(metric, true, predicted)
    counts = weighted_counts(true, predicted, weights)
    keys = tuple(counts)
    tails, running = [], 0
    for key in reversed(keys):
        running += counts[key]
        tails.append(running)
    return WeightedNull(weights=weights, n=sum(true), keys=keys, tail_counts=tuple(reversed(tails)))

