"""Exact null law of multi-class accuracy: the hits of a random permutation of the predicted labels.

The null: the predicted labels are permuted uniformly over the n items, so the true class counts n_k and
the predicted counts m_k are fixed (the conditional null).  The statistic is the number of hits X (items
whose predicted label is their true class); accuracy is X / n and Cohen's kappa an increasing affine
function of it (:func:`kappa_from_hits`), so both share this law.

The law is the rencontres problem with repeated cards.  The permutations with a hit at each of i chosen
items are counted by the rook numbers r_i of the board of the union over k of the (n_k x m_k) blocks,
r(x) = prod_k sum_i C(n_k, i) C(m_k, i) i! x^i, and inclusion-exclusion gives the number with exactly j
hits, N_j = sum_{i >= j} (-1)^(i - j) C(i, j) r_i (n - i)!, and with at least x hits

    S_x = sum_{j >= x} N_j = sum_{i >= x} (-1)^(i - x) C(i - 1, x - 1) r_i (n - i)!     (x >= 1; S_0 = n!).

The alternating sums cancel catastrophically in floating point (their terms reach about e^(2 mu) times the
result, mu = sum_k n_k m_k / n the expected hits: 10^8,700 at n = 10^5, K = 10), so everything here is
computed in Python integers and only the final ratio S_x / n! is rounded: every probability is the
correctly rounded double of the exact rational (relative error <= 2**-53; a tail below 2**-1022 keeps an
absolute error <= 2**-1075).  ``docs/explanation/multiclass-accuracy.md`` derives the formulas, the
sequential conditioning over classes (a chain with a two-dimensional state, the tests' independent reference)
and the costs.

Cost: the rook polynomial is one product of K integer polynomials, each tail one pass of at most D big-integer
products, D = sum_k min(n_k, m_k) the most hits; the integers have about log2(n!) bits.  A tail stops early where
two consecutive partial sums, which bracket it (Bonferroni), round to the same double, so only a prefix of the rook
numbers is computed (truncated products, still exact).  The products are FLINT's (python-flint's ``fmpz_poly``,
FFT multiplication, and GMP integers in the tails) where python-flint is installed (the ``fast`` extra), else
Python's (Kronecker substitution: one Karatsuba multiplication per class); the integers
are the same.  Measured (one core, AMD EPYC, load about 6; K = 10 balanced, critical value at C = 10 and the
p-value there): n = 1,000 in 0.036 s (0.38 s without python-flint), n = 3,000 in 0.21 s (14 s), n = 10,000 in
3.4 s (about 1,000 s estimated).  n = 100,000 stays out of reach of this route: the rook numbers needed (about
4 10^4 integers of 1.5 10^6 bits) take gigabytes.  :func:`accuracy_seconds` and :func:`accuracy_bytes` estimate
it (without the early stop) and lookups refuse beyond the time and memory limits rather than start.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from tablegen.compute.stats import p_value_from_tail, upper_tail_probability
from tablegen.errors import TablegenInputError

#: Tail probabilities within this relative distance of t = 1 - (1 - alpha)**(1/C) count as equal to it (the
#: project's convention: an exact tie at C = 1 resolves as in exact arithmetic; t itself is a rounded double).
TIE_RTOL = 1e-12
#: Single-classifier tails below this are reported as a bound ("p < ..."), as elsewhere in tablegen.
TAIL_FLOOR = 1e-300
#: Multiply the rook polynomials with python-flint where it is installed (the same integers, faster); tests set it
#: False to check the pure-Python route.
USE_FLINT = True
#: Seconds per (64-bit word)**1.585 of the Kronecker products, and per word x coefficient x bisection step of the
#: tails, measured on the development machine (AMD EPYC; benchmarks/bench_multiclass.py, n = 300 .. 3,000).
_SECONDS_PER_KARATSUBA_WORD = 3.0e-9
_SECONDS_PER_TAIL_WORD = 1.5e-11
#: With python-flint: seconds per word x log2(words) of the FLINT products, and per word of one tail's pass (GMP
#: additions; about log2(D) tails), measured on the same machine at n = 1,000 .. 10,000 (7 and 16 ns under load 6).
_SECONDS_PER_FLINT_WORD = 1e-8
_SECONDS_PER_FLINT_TAIL_WORD = 1.5e-8


def check_margins(true_counts, predicted_counts) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The two margins as tuples of ints, if they describe a K-class problem this module can answer.

    ``true_counts[k]`` and ``predicted_counts[k]`` count the items of true class k and those predicted k
    (the same classes, in the same order).  Both are non-negative integers with the same total n >= 2; at
    least two classes have items (a predicted class no item has, n_k = 0, is allowed: it is never a hit).

    Examples
    --------
    >>> check_margins([3, 2], [1, 4])
    ((3, 2), (1, 4))
    >>> try:
    ...     check_margins([5, 0], [2, 3])
    ... except TablegenInputError as error:
    ...     print(error)  # doctest: +ELLIPSIS
    true_counts has one class with items only (class 0): a random classifier always scores 100%; ...
    """
    true = _counts("true_counts", true_counts)
    predicted = _counts("predicted_counts", predicted_counts)
    if len(true) != len(predicted):
        raise TablegenInputError(f"true_counts and predicted_counts must have the same length (one entry per "
                                 f"class), got {len(true)} and {len(predicted)}")
    if sum(true) != sum(predicted):
        raise TablegenInputError(f"true_counts and predicted_counts must have the same total (the number of "
                                 f"items), got {sum(true)} and {sum(predicted)}")
    occupied = [k for k, count in enumerate(true) if count > 0]
    if len(occupied) < 2:
        which = f" (class {occupied[0]})" if occupied else ""
        raise TablegenInputError(f"true_counts has one class with items only{which}: a random classifier always "
                                 "scores 100%; at least two classes are needed")
    return true, predicted


def _counts(name: str, values) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise TablegenInputError(f"{name} must be a sequence of counts, one per class, got {type(values).__name__}")
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise TablegenInputError(f"{name} must be one-dimensional, got shape {values.shape}")
    counts = []
    for k, value in enumerate(values):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise TablegenInputError(f"{name}[{k}] must be an integer >= 0, got {value!r}")
        if value < 0:
            raise TablegenInputError(f"{name}[{k}] must be an integer >= 0, got {value}")
        counts.append(int(value))
    if len(counts) < 2:
        raise TablegenInputError(f"{name} must count at least two classes, got {len(counts)}")
    return tuple(counts)


def block_rook_polynomial(rows: int, columns: int) -> list[int]:
    """Rook numbers of a full rows x columns board: C(rows, i) C(columns, i) i!, i = 0..min(rows, columns).

    Examples
    --------
    >>> block_rook_polynomial(2, 3)
    [1, 6, 6]
    """
    coefficients = [1]
    for i in range(1, min(rows, columns) + 1):
        coefficients.append(coefficients[-1] * (rows - i + 1) * (columns - i + 1) // i)
    return coefficients


def multiply(p: list[int], q: list[int]) -> list[int]:
    """The product of two polynomials with non-negative integer coefficients (Kronecker substitution).

    Examples
    --------
    >>> multiply([1, 2], [1, 3, 1])
    [1, 5, 7, 2]
    """
    width = (max(c.bit_length() for c in p) + max(c.bit_length() for c in q)
             + min(len(p), len(q)).bit_length() + 8) // 8 + 1
    packed = (_pack(p, width) * _pack(q, width)).to_bytes(width * (len(p) + len(q)), "little")
    return [int.from_bytes(packed[i * width:(i + 1) * width], "little") for i in range(len(p) + len(q) - 1)]


def _pack(coefficients: list[int], width: int) -> int:
    return int.from_bytes(b"".join(c.to_bytes(width, "little") for c in coefficients), "little")


def rook_numbers(true_counts, predicted_counts, degree: int | None = None) -> list[int]:
    """r_0..r_D of the board union_k (n_k x m_k), D = sum_k min(n_k, m_k), as exact integers.

    With ``degree``, only r_0..r_degree (every factor and product truncated there: still exact).

    Examples
    --------
    >>> rook_numbers([2, 1], [1, 2])
    [1, 4, 4]
    >>> rook_numbers([2, 1], [1, 2], degree=1)
    [1, 4]
    """
    true, predicted = check_margins(true_counts, predicted_counts)
    return [int(r) for r in _rook_product(true, predicted, degree)]


def _rook_product(true: tuple[int, ...], predicted: tuple[int, ...], degree: int | None = None) -> list:
    """r_0..r_D (or r_0..r_degree) for margins already checked: Python ints, or python-flint ``fmpz`` where
    :func:`_flint_polynomials` finds it (the same integers)."""
    keep = sum(min(a, b) for a, b in zip(true, predicted)) + 1 if degree is None else degree + 1
    factors = [block_rook_polynomial(a, b)[:keep] for a, b in zip(true, predicted)]
    factors = [factor for factor in factors if len(factor) > 1] or [[1]]
    flint_poly = _flint_polynomials()
    if flint_poly is not None and len(factors) > 1:
        return _flint_product([flint_poly(factor) for factor in factors], keep)
    while len(factors) > 1:  # the two smallest first: a balanced product tree
        factors.sort(key=lambda factor: len(factor) * factor[-1].bit_length(), reverse=True)
        factors.append(multiply(factors.pop(), factors.pop())[:keep])
    return factors[0]


def _flint_polynomials():
    """python-flint's ``fmpz_poly`` where it is installed (FLINT multiplies integer polynomials by FFT: about 100
    times Python's Karatsuba on these products at n = 3,000), else None; :data:`USE_FLINT` False turns it off."""
    if not USE_FLINT:
        return None
    try:
        from flint import fmpz_poly
    except ImportError:
        return None
    return fmpz_poly


def _flint_product(factors: list, keep: int) -> list:
    """The product of ``fmpz_poly`` factors truncated to ``keep`` coefficients, as ``fmpz`` (exact)."""
    while len(factors) > 1:  # the two smallest first: a balanced product tree
        factors.sort(key=lambda factor: factor.length() * factor.height_bits(), reverse=True)
        factors.append(factors.pop().mul_low(factors.pop(), keep))
    return factors[0].coeffs()


def hit_numbers(true_counts, predicted_counts) -> list[int]:
    """N_j, the permutations of the predicted labels with exactly j hits, j = 0..n (they sum to n!).

    Inclusion-exclusion by a Taylor shift of sum_i r_i (n - i)! s^i to s = t - 1: O(D^2) integer additions.

    Examples
    --------
    >>> hit_numbers([1, 1, 1], [1, 1, 1])  # the derangements of three cards
    [2, 3, 0, 1]
    """
    true, predicted = check_margins(true_counts, predicted_counts)
    coefficients = _weighted_rooks(true, predicted)
    degree = len(coefficients) - 1
    for start in range(degree):
        for j in range(degree - 1, start - 1, -1):
            coefficients[j] -= coefficients[j + 1]
    return [int(c) for c in coefficients] + [0] * (sum(true) - degree)


def _weighted_rooks(true: tuple[int, ...], predicted: tuple[int, ...], degree: int | None = None) -> list:
    """T_i = r_i (n - i)!, i = 0..D (or 0..degree), for margins already checked (Python ints, or ``fmpz`` where
    python-flint multiplied the rook polynomials: its products of large integers are GMP's)."""
    rooks = _rook_product(true, predicted, degree)
    n = sum(true)
    degree = len(rooks) - 1
    factorial = math.factorial(n - degree)
    if not isinstance(rooks[0], int):
        factorial = type(rooks[0])(factorial)
    weighted = [0] * (degree + 1)
    for i in range(degree, -1, -1):
        weighted[i] = rooks[i] * factorial
        factorial *= n - i + 1
    return weighted


def _rook_words(true: tuple[int, ...], predicted: tuple[int, ...]) -> tuple[int, float]:
    """D and the 64-bit words of the D + 1 weighted rook numbers (each about log2(n!) bits)."""
    most_hits = sum(min(a, b) for a, b in zip(true, predicted))
    return most_hits, most_hits * (math.lgamma(sum(true) + 1) / math.log(2) + 64) / 64


def accuracy_seconds(true_counts, predicted_counts) -> float:
    """Estimated single-core seconds to build :class:`AccuracyNull` and find a critical value.

    Without the tails' early stop (an upper estimate where the stop applies).  With python-flint installed the
    rook polynomials are multiplied by FLINT (about words x log2(words) work) and the tails add GMP integers (a
    pass over the words per tail, about log2(D) tails); without it, by Python's Karatsuba (words**1.585).

    Examples
    --------
    >>> accuracy_seconds([100] * 3, [100] * 3) < 1
    True
    """
    true, predicted = check_margins(true_counts, predicted_counts)
    most_hits, words = _rook_words(true, predicted)
    if _flint_polynomials() is not None:
        return words * (_SECONDS_PER_FLINT_WORD * math.log2(words + 2)
                        + _SECONDS_PER_FLINT_TAIL_WORD * math.log2(most_hits + 2))
    return (_SECONDS_PER_KARATSUBA_WORD * words ** 1.585
            + _SECONDS_PER_TAIL_WORD * most_hits * words * math.log2(most_hits + 2))


def accuracy_bytes(true_counts, predicted_counts) -> float:
    """Estimated memory of :class:`AccuracyNull` at its largest: the rook numbers, the product tree's last two
    factors and the weighted rook numbers, about four times the D + 1 integers of log2(n!) bits.

    Examples
    --------
    >>> accuracy_bytes([100] * 10, [100] * 10) < 1e8 < accuracy_bytes([10_000] * 10, [10_000] * 10)
    True
    """
    true, predicted = check_margins(true_counts, predicted_counts)
    return 4 * 8 * _rook_words(true, predicted)[1]


@dataclass(frozen=True)
class AccuracyNull:
    """The exact law of the hits X under the permutation null, for tail probabilities and critical values.

    Attributes
    ----------
    true_counts, predicted_counts : tuple of int
        n_k and m_k, class by class.
    n : int
        The number of items.
    most_hits : int
        D = sum_k min(n_k, m_k), the largest attainable X.
    expected_hits : Fraction
        E[X] = sum_k n_k m_k / n.

    Examples
    --------
    >>> null = accuracy_null([5, 5, 5], [5, 5, 5])
    >>> null.expected_hits, null.most_hits
    (Fraction(5, 1), 15)
    >>> null.tail_ge_exact(9), round(null.tail_ge(9), 6)
    (Fraction(653, 18018), 0.036242)
    >>> null.critical_hits(C=1, alpha=0.05), null.critical_hits(C=10, alpha=0.05)
    (9, 11)
    """

    true_counts: tuple[int, ...]
    predicted_counts: tuple[int, ...]
    n: int
    most_hits: int
    expected_hits: Fraction
    _factorial: int = field(repr=False, compare=False)
    #: T_i = r_i (n - i)! for i = 0..len - 1, extended on demand (the truncated products are exact).
    _weighted: list[list[int]] = field(default_factory=lambda: [[]], repr=False, compare=False)

    def _weights(self, degree: int) -> list[int]:
        """T_0..T_degree at least (degree <= D), with room for the next few tails (the search's probes)."""
        known = self._weighted[0]
        if len(known) <= degree:
            room = 8 * math.isqrt(int(self.expected_hits) + 1) + 32
            degree = min(self.most_hits, max(degree + room, 5 * len(known) // 4))
            self._weighted[0] = known = _weighted_rooks(self.true_counts, self.predicted_counts, degree)
        return known

    def _partial_sums(self, hits: int, last: int) -> tuple[int, int]:
        """The Bonferroni partial sums of S_x through i = last - 1 and i = last (x = ``hits`` >= 1)."""
        weighted = self._weights(last)
        total = previous = 0
        binomial = 1  # C(i - 1, x - 1), starting at i = x
        for i in range(hits, last + 1):
            previous = total
            term = binomial * weighted[i]
            total += term if (i - hits) % 2 == 0 else -term
            binomial = binomial * i // (i - hits + 1)
        return int(previous), int(total)

    def tail_count(self, hits: int) -> int:
        """S_x: the permutations with at least ``hits`` hits (n! at x <= 0, 0 above :attr:`most_hits`), exact."""
        if hits <= 0:
            return self._factorial
        if hits > self.most_hits:
            return 0
        return self._partial_sums(hits, self.most_hits)[1]

    def tail_ge_exact(self, hits: int) -> Fraction:
        """Pr(X >= hits) as an exact rational."""
        return Fraction(self.tail_count(hits), self._factorial)

    def tail_ge(self, hits: int) -> float:
        """Pr(X >= hits), the correctly rounded double of the exact rational.

        The sum over i stops early where two consecutive partial sums, which bracket S_x (Bonferroni), round to
        the same double: the exact ratio lies between them, so it rounds to that double too.
        """
        if hits <= 0:
            return 1.0
        if hits > self.most_hits:
            return 0.0
        mean = float(self.expected_hits)
        last = hits + int(math.e * mean + 6.0 * math.sqrt(mean) + 40)  # the terms fade past i - x ~ e E[X]
        while last < self.most_hits:
            previous, total = self._partial_sums(hits, last)
            low, high = min(previous, total), max(previous, total)
            if low >= 0 and low / self._factorial == high / self._factorial:
                return total / self._factorial
            last = hits + 3 * (last - hits) // 2
        return self.tail_count(hits) / self._factorial

    def critical_hits(self, C: int, alpha: float) -> int | None:
        """The smallest x whose best-of-C p-value 1 - Pr(X < x)**C is <= alpha; None if no attainable x is.

        That is the smallest x with Pr(X >= x) <= t = 1 - (1 - alpha)**(1/C) (within :data:`TIE_RTOL`): a
        search upwards from the mean in doubling steps, then bisection, on the exact, non-increasing tail.
        """
        threshold = float(upper_tail_probability(C, alpha)) * (1.0 + TIE_RTOL)
        low, high = 0, self.most_hits + 1  # tail(high) = 0 <= threshold
        step, probe = max(1, math.isqrt(int(self.expected_hits) + 1)), int(self.expected_hits)
        while probe < high:
            if self.tail_ge(probe) <= threshold:
                high = probe
                break
            low, probe, step = probe + 1, probe + step, 2 * step
        while low < high:
            middle = (low + high) // 2
            if self.tail_ge(middle) <= threshold:
                high = middle
            else:
                low = middle + 1
        return None if low > self.most_hits else low

    def p_value(self, hits: int, C: int = 1) -> tuple[float, bool]:
        """The best-of-C p-value of ``hits``, 1 - Pr(X < hits)**C, and whether it is only a bound.

        Where Pr(X >= hits) is below :data:`TAIL_FLOOR` the p-value returned is the one at the floor, an
        upper bound (``True``): the p-value is never 0.
        """
        tail = self.tail_ge(hits)
        if tail < TAIL_FLOOR:
            return float(p_value_from_tail(TAIL_FLOOR, C)), True
        return float(p_value_from_tail(tail, C)), False

    def pmf(self) -> np.ndarray:
        """Pr(X = j), j = 0..n, each the correctly rounded double of N_j / n! (O(D^2) integer additions)."""
        return np.array([count / self._factorial for count in hit_numbers(self.true_counts, self.predicted_counts)])


def accuracy_null(true_counts, predicted_counts) -> AccuracyNull:
    """The exact null law of the hits for class counts ``true_counts`` and predicted counts ``predicted_counts``.

    Nothing is computed until a tail is asked for; each tail computes the weighted rook numbers only as far as
    it needs them (:meth:`AccuracyNull.tail_ge`).

    Examples
    --------
    >>> accuracy_null([2, 1], [1, 2]).tail_ge_exact(2)  # arrangements aab/abb: 2 of the 3 have 2 hits
    Fraction(2, 3)
    """
    true, predicted = check_margins(true_counts, predicted_counts)
    n = sum(true)
    return AccuracyNull(true_counts=true, predicted_counts=predicted, n=n,
                        most_hits=sum(min(a, b) for a, b in zip(true, predicted)),
                        expected_hits=Fraction(sum(a * b for a, b in zip(true, predicted)), n),
                        _factorial=math.factorial(n))


def chance_agreement(true_counts, predicted_counts) -> Fraction:
    """p_e = sum_k n_k m_k / n^2, the agreement expected by chance in Cohen's kappa (exact).

    Examples
    --------
    >>> chance_agreement([2, 2], [1, 3])
    Fraction(1, 2)
    """
    true, predicted = check_margins(true_counts, predicted_counts)
    n = sum(true)
    return Fraction(sum(a * b for a, b in zip(true, predicted)), n * n)


def kappa_from_hits(hits: int, true_counts, predicted_counts) -> float:
    """Cohen's kappa (X / n - p_e) / (1 - p_e): increasing and affine in the hits X (both margins fixed).

    p_e < 1 whenever two classes have items, so kappa is defined; computed from exact rationals and rounded once.

    Examples
    --------
    >>> kappa_from_hits(3, [2, 2], [1, 3])
    0.5
    """
    true, predicted = check_margins(true_counts, predicted_counts)
    chance = chance_agreement(true, predicted)
    return float((Fraction(hits, sum(true)) - chance) / (1 - chance))
