"""Top-k significance against the random model: bounds and p-values for every k = 1..K at once.

Ranked output is often judged by the positives in its top k (precision at k).  Under the null that
the ranking learned nothing, the positives a random ranking of P positives and N negatives puts in
its top k are hypergeometric.  :func:`topk_bounds` gives, for every k, the count a random ranking
exceeds with probability at most p (discrete, interpolated, and the binomial "infinite data"
approximation), for one ranking or as the best of C (p = 1 - (1 - alpha)**(1/C), the same rule as
the critical-value tables); :func:`topk_test` adds the p-values of an observed curve of counts and
the crossover point where it first beats the bound at two consecutive k.  Conventions:
:mod:`tablegen.compute.kernels.hypergeometric`.

Levels.  The discrete and interpolated variants hold their level exactly: at an integer count both
reject x at k iff Pr(X_k >= x) <= p, so under a random ranking Pr(reject at k) <= p at every k
(``tests/lookup/test_topk.py`` sums the exact hypergeometric pmf over the rejected counts).  The binomial
bound is the infinite-data limit (items drawn with replacement); against a finite test set it can
reject a random ranking slightly more often than p (e.g. 1.0055 p at P = 6, N = 225, k = 4,
alpha = 0.1), so it is drawn and listed but not offered as a test.

p-values are never 0: a single-ranking tail below :data:`TAIL_FLOOR` (where the recursion's
underflow could matter) is reported as the bound "< p-value at TAIL_FLOOR".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tablegen.compute.limits import check_memory, check_time, topk_memory, topk_seconds
from tablegen.compute.stats import p_value_from_tail, upper_tail_probability
from tablegen.compute.validation import check_alpha, check_class_size, check_competitors, check_integer
from tablegen.errors import Argument, TablegenInputError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

VARIANTS = ("discrete", "interpolated", "binomial")
#: The variants a test may use: those whose level holds exactly against a random ranking.
TEST_VARIANTS = ("discrete", "interpolated")
#: Single-ranking tails below this are reported as a bound (module docstring): every pmf entry the
#: recursion flushes to zero or keeps as a denormal is off by < 5e-324, so over at most 1e12 steps the
#: tails above it keep a relative error below 1e-11.
TAIL_FLOOR = 1e-300
#: Consecutive k at which the curve must beat the bound for a crossover.
CROSSOVER_RUN = 2


@dataclass(frozen=True)
class TopKBounds:
    """The bound n(k, p) for k = 1..K of a random ranking (or the best of C of them).

    Attributes
    ----------
    P, N, C, alpha : the question; ``tail_probability`` is p = 1 - (1 - alpha)**(1/C).
    k : int array (K,), 1..K.
    discrete, interpolated, binomial : float arrays (K,)
        The smallest count c whose CDF reaches 1 - p; the interpolated bound c + (Pr(X_k >= c) - p) /
        Pr(X_k = c), in (c, c + 1], which an integer count reaches iff it exceeds c; the same rule for
        Binomial(k, P / (P + N)) (the infinite-data limit, not a test).
    expected : float array (K,), k P / (P + N).
    lower : float array (K,)
        The interpolated lower bound of one random ranking at alpha (its count falls below it with
        probability about alpha): the bottom of the band the plot shades.

    Examples
    --------
    >>> b = topk_bounds(10, 90, K=10, alpha=0.05)  # 10 positives among 100 items
    >>> b.tail_probability, b.k.tolist(), b.expected[:3].tolist()
    (0.05, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [0.1, 0.2, 0.3])
    >>> b.bound("discrete").tolist()
    [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 3.0]
    >>> b.interpolated.round(3).tolist()
    [1.5, 1.775, 1.902, 1.996, 2.382, 2.612, 2.763, 2.876, 2.969, 3.193]
    """

    P: int
    N: int
    C: int
    alpha: float
    tail_probability: float
    k: np.ndarray
    discrete: np.ndarray
    interpolated: np.ndarray
    binomial: np.ndarray
    expected: np.ndarray
    lower: np.ndarray

    def bound(self, variant: str) -> np.ndarray:
        """The bound of one variant: ``"discrete"``, ``"interpolated"`` or ``"binomial"``."""
        return getattr(self, _check_variant(variant))


@dataclass(frozen=True)
class TopKTest:
    """An observed curve of positives-in-top-k against the bounds.

    Attributes
    ----------
    bounds : TopKBounds
    observed : float array (K,), the curve (NaN where not given).
    p_discrete, p_interpolated, p_binomial : float arrays (K,)
        Best-of-C p-values 1 - (1 - s)**C of the count at each k, with s = Pr(X_k >= ceil(x)), the
        interpolated Pr(X_k >= x) (equal at integer x; linear in x between integers), and the same
        interpolated tail under Binomial(k, P / (P + N)) (see :mod:`tablegen.compute.kernels.hypergeometric`).
        Never 0: where ``p_bounded`` is true the value is only an upper bound.
    p_bounded : dict of bool arrays (K,)
        Per variant, where s fell below :data:`TAIL_FLOOR` and the p-value is reported as the bound
        "< value".
    variant : str, the bound the crossover and ``significant`` use (``"discrete"`` or ``"interpolated"``).
    significant : bool array (K,)
        The count reaches the bound at that k: its single-ranking tail s <= p (so at most the level,
        exactly, at every k).
    crossover : int or None
        The first k where the curve beats the bound at CROSSOVER_RUN consecutive k, or None.

    Examples
    --------
    >>> test = topk_test([1, 1, 2, 3, 3, 4, 4, 4, 5, 5], 10, 90, C=10, alpha=0.05)
    >>> test.bounds.bound(test.variant).tolist()  # the best of 10 random rankings
    [1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 3.0, 4.0, 4.0]
    >>> test.significant.tolist(), test.crossover
    ([False, False, False, True, False, True, True, True, True, True], 6)
    >>> test.to_dict()["crossover_run"]
    2
    """

    bounds: TopKBounds
    observed: np.ndarray
    p_discrete: np.ndarray
    p_interpolated: np.ndarray
    p_binomial: np.ndarray
    p_bounded: dict
    variant: str
    significant: np.ndarray
    crossover: int | None

    def p_values(self, variant: str) -> np.ndarray:
        """The best-of-C p-values of one variant (``"discrete"``, ``"interpolated"`` or ``"binomial"``)."""
        return getattr(self, f"p_{_check_variant(variant)}")

    def formatted_p(self, variant: str, index: int, digits: int = 3) -> str:
        """One p-value as text, ``"< 1e-297"`` where it is only a bound, ``"-"`` where no count was given."""
        value = self.p_values(variant)[index]
        if np.isnan(value):
            return "-"
        return f"{'< ' if self.p_bounded[variant][index] else ''}{value:.{digits}g}"

    def sentence(self) -> str:
        """One plain sentence with the verdict."""
        b = self.bounds
        who = "a random ranking" if b.C == 1 else f"the best of {b.C} random rankings"
        if self.crossover is None:
            return (f"The curve never beats {who} ({self.variant} bound, alpha = {b.alpha:g}) at "
                    f"{CROSSOVER_RUN} consecutive k in k = 1..{b.k[-1]}.")
        return (f"From k = {self.crossover} the curve beats {who} ({self.variant} bound, alpha = {b.alpha:g}) "
                f"at {CROSSOVER_RUN} or more consecutive k; it is above the bound at "
                f"{int(self.significant.sum())} of {np.count_nonzero(~np.isnan(self.observed))} k.")

    def to_dict(self) -> dict:
        """Plain Python values, for JSON."""
        b = self.bounds
        return {
            "P": b.P, "N": b.N, "C": b.C, "alpha": b.alpha, "tail_probability": b.tail_probability,
            "variant": self.variant, "crossover": self.crossover, "crossover_run": CROSSOVER_RUN,
            "k": b.k.tolist(), "observed": _listed(self.observed), "bound": _listed(b.bound(self.variant)),
            "discrete": _listed(b.discrete), "interpolated": _listed(b.interpolated),
            "binomial": _listed(b.binomial), "expected": _listed(b.expected),
            "p_discrete": _listed(self.p_discrete), "p_interpolated": _listed(self.p_interpolated),
            "p_binomial": _listed(self.p_binomial),
            "p_bound": {name: ["<" if b else "" for b in bounded] for name, bounded in self.p_bounded.items()},
            "significant": self.significant.tolist(),
        }


def _listed(values: np.ndarray) -> list:
    return [None if np.isnan(v) else float(v) for v in values]


def _check_variant(variant) -> str:
    if variant not in VARIANTS:
        raise TablegenInputError(f"variant must be one of {', '.join(VARIANTS)}; got {variant!r}")
    return variant


def _check_test_variant(variant) -> str:
    if variant == "binomial":
        raise TablegenInputError(
            "variant 'binomial' is the infinite-data approximation: against a finite test set it can reject a "
            "random ranking more often than alpha, so it is not offered as a test; use 'discrete' or "
            "'interpolated' (both hold alpha exactly)")
    if variant not in TEST_VARIANTS:
        raise TablegenInputError(f"variant must be one of {', '.join(TEST_VARIANTS)}; got {variant!r}")
    return variant


def _check_question(P, N, K, C, alpha) -> tuple[int, int, int, int, float]:
    P = check_class_size("P", P)
    N = check_class_size("N", N)
    K = P + N if K is None else check_integer("K", K, 1)
    if K > P + N:
        raise TablegenInputError(f"K must be at most P + N = {P + N}, got {K}")
    return P, N, K, check_competitors(C), check_alpha("alpha", alpha)


def _check_resources(P: int, N: int, K: int, sweeps: int) -> None:
    """Refuse (exit code 5, with the estimate) a top-k question over the memory or time limit, before any work."""
    what = f"top-k bounds at P = {P:,}, N = {N:,}, K = {K:,}"
    way_out = ("for P this large the binomial limit Binomial(k, P / (P + N)) is accurate (scipy.stats.binom.isf), "
               "or use a smaller P or K")
    check_memory(topk_memory(P, K), what, way_out)
    check_time(topk_seconds(P, K, sweeps), what, way_out)


def _sweep(P, N, K, levels, observed, lower_level=0.5):
    discrete = np.empty((K, len(levels)))
    interpolated = np.empty((K, len(levels)))
    p_discrete, p_interpolated, lower = np.empty(K), np.empty(K), np.empty(K)
    from tablegen.compute.kernels.hypergeometric import topk_sweep  # numba loads with the first sweep

    topk_sweep(P, N, K, np.asarray(levels, dtype=float), observed, discrete, interpolated,
               p_discrete, p_interpolated, float(lower_level), lower)
    return discrete, interpolated, p_discrete, p_interpolated, lower


def binomial_bound(P: int, N: int, k: np.ndarray, p: float) -> np.ndarray:
    """Interpolated bound of Binomial(k, P / (P + N)) at tail probability p (the infinite-data limit).

    The rule of the hypergeometric bound: c + (Pr(X >= c) - p) / Pr(X = c) with c the smallest count
    with Pr(X > c) <= p, from scipy's binomial survival function.

    Examples
    --------
    >>> binomial_bound(10, 90, np.array([1, 10]), 0.05).round(3).tolist()
    [1.5, 3.352]
    """
    share = P / (P + N)
    from scipy import stats as scipy_stats  # ~1 s to import: only for the binomial variant

    count = scipy_stats.binom.isf(p, k, share)  # smallest c with Pr(X > c) <= p
    at_least = scipy_stats.binom.sf(count - 1, k, share)  # Pr(X >= c) > p
    mass = scipy_stats.binom.pmf(count, k, share)
    with np.errstate(invalid="ignore", divide="ignore"):
        step = np.where(mass > 0, np.minimum(1.0, (at_least - p) / mass), 1.0)
    return count + step


def binomial_tail(P: int, N: int, curve: np.ndarray) -> np.ndarray:
    """Interpolated Pr(X_k >= x_k) under Binomial(k, P / (P + N)), k = 1..K (NaN where x_k is NaN)."""
    from scipy import stats as scipy_stats

    k = np.arange(1, curve.size + 1)
    whole = np.floor(np.nan_to_num(curve))
    fraction = np.nan_to_num(curve) - whole
    share = P / (P + N)
    at_whole, at_next = (scipy_stats.binom.sf(whole + shift - 1, k, share) for shift in (0, 1))
    return np.where(np.isnan(curve), np.nan, np.where(fraction == 0, at_whole,
                                                      (1 - fraction) * at_whole + fraction * at_next))


def topk_bounds(P: int, N: int, K: int | None = None, *, C: int = 1, alpha: float = 0.01) -> TopKBounds:
    """The bound n(k, p) on positives in the top k of a random ranking, for every k = 1..K.

    Parameters
    ----------
    P, N : int
        Positives and negatives of the test set (each >= 1).
    K : int, optional
        Largest k (default P + N).
    C : int
        Competitors: the bound of the best of C random rankings, p = 1 - (1 - alpha)**(1/C).
    alpha : float
        Level in (0, 1) (default 0.01, the level of Forman & Cohen's tables, as the lookups).

    Returns
    -------
    TopKBounds

    Examples
    --------
    >>> b = topk_bounds(10, 90, K=20, alpha=0.05)
    >>> int(b.discrete[9]), round(float(b.interpolated[9]), 3)   # top 10 of 100 with 10 positives
    (3, 3.193)
    """
    P, N, K, C, alpha = _check_question(P, N, K, C, alpha)
    _check_resources(P, N, K, sweeps=1)
    p = float(upper_tail_probability(C, alpha))
    discrete, interpolated, _, _, lower = _sweep(P, N, K, [p], np.full(K, np.nan), lower_level=alpha)
    k = np.arange(1, K + 1)
    return TopKBounds(P, N, C, alpha, p, k, discrete[:, 0], interpolated[:, 0], binomial_bound(P, N, k, p),
                      k * P / (P + N), lower)


def topk_test(observed: ArrayLike, P: int, N: int, *, C: int = 1, alpha: float = 0.01,
              variant: str = "discrete") -> TopKTest:
    """Test a curve of positives in the top k, k = 1..K, against random rankings.

    Parameters
    ----------
    observed : array of float (K,)
        Positives in the top k for k = 1..K (counts, or averages over runs: non-integers allowed;
        NaN is refused).  Each within [max(0, k - N), min(k, P)].
    P, N, C, alpha
        As :func:`topk_bounds` (``alpha``: default 0.01, the level of Forman & Cohen's tables).
    variant : {"discrete", "interpolated"}
        The bound used for ``significant`` and the crossover; both hold alpha exactly at integer
        counts ("binomial", the infinite-data approximation, is refused as a test: module docstring).

    Returns
    -------
    TopKTest

    Examples
    --------
    >>> test = topk_test([1, 1, 2, 3, 3, 4, 4, 4, 5, 5], 10, 90, alpha=0.05)  # 10 positives among 100
    >>> test.crossover, test.p_discrete[:4].round(4).tolist()
    (3, [0.1, 0.1909, 0.0258, 0.0028])
    """
    variant = _check_test_variant(variant)
    curve = np.asarray(observed, dtype=float) if np.asarray(observed).dtype.kind in "iuf" else None
    if curve is None or curve.ndim != 1 or curve.size == 0 or np.isinf(curve).any():
        raise TablegenInputError(f"observed must be a non-empty 1-d array of counts, got {observed!r}")
    if np.isnan(curve).any():
        i = int(np.flatnonzero(np.isnan(curve))[0])
        raise TablegenInputError.naming(_count_at(i + 1), " is NaN: give the count of positives in the top k "
                                        "for every k = 1..K")
    _check_resources(*_check_question(P, N, curve.size, C, alpha)[:3], sweeps=2)
    bounds = topk_bounds(P, N, curve.size, C=C, alpha=alpha)
    k = bounds.k
    low, high = np.maximum(0, k - bounds.N), np.minimum(k, bounds.P)
    bad = ~np.isnan(curve) & ((curve < low - 1e-9) | (curve > high + 1e-9))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise TablegenInputError.naming(
            _count_at(i + 1), f" must be within [{low[i]}, {high[i]}] positives in the top {i + 1} of P = {bounds.P}, "
            f"N = {bounds.N}; got {curve[i]}")
    curve = np.where(np.isnan(curve), np.nan, np.clip(curve, low, high))
    curve = np.where(np.abs(curve - np.round(curve)) <= 1e-9, np.round(curve), curve)  # counts typed as 2.9999999999
    _, _, single_discrete, single_interpolated, _ = _sweep(bounds.P, bounds.N, curve.size, [0.5], curve)
    tails = {"discrete": single_discrete, "interpolated": single_interpolated,
             "binomial": binomial_tail(bounds.P, bounds.N, curve)}
    with np.errstate(invalid="ignore"):
        significant = tails[variant] <= bounds.tail_probability
        bounded = {name: tail < TAIL_FLOOR for name, tail in tails.items()}
    p = {name: p_value_from_tail(np.where(bounded[name], TAIL_FLOOR, tail), C) for name, tail in tails.items()}
    return TopKTest(bounds, curve, p["discrete"], p["interpolated"], p["binomial"], bounded, variant, significant,
                    crossover_point(significant))


def check_curve_rises(curve) -> None:
    """Refuse a curve no ranking gives: positives in the top k never fall as k grows, and rise by at most
    one per k (averages of such curves too).  ``topk_test`` itself takes any per-k counts; the command line
    checks its curves with this.

    Examples
    --------
    >>> check_curve_rises([1, 1, 2, 2.5])
    """
    curve = np.asarray(curve, dtype=float)
    k = np.arange(1, curve.size + 1)
    given = ~np.isnan(curve)
    steps, widths = np.diff(curve[given]), np.diff(k[given])
    bad = (steps < -1e-9) | (steps > widths + 1e-9)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        before, after = k[given][i], k[given][i + 1]
        raise TablegenInputError.naming(
            _count_at(after), f" = {curve[after - 1]:g} after {curve[before - 1]:g} at k = {before}: "
            "positives in the top k never fall as k grows and rise by at most one per k")


def _count_at(k: int) -> Argument:
    """The curve's count at ``k`` (1-based) in an error: ``observed[k - 1] (k = k)``, on the command line
    ``the count at k = k``."""
    return Argument("observed", python=f"observed[{k - 1}] (k = {k})", option=f"the count at k = {k}")


def crossover_point(significant, run: int = CROSSOVER_RUN) -> int | None:
    """The first k (1-based) from which the curve is significant at ``run`` consecutive k, else None.

    Examples
    --------
    >>> crossover_point([True, False, True, True, False])
    3
    """
    streak = 0
    for index, is_above in enumerate(np.asarray(significant, dtype=bool)):
        streak = streak + 1 if is_above else 0
        if streak == run:
            return index - run + 2
    return None


def curve_from_scores(scores, labels) -> tuple[np.ndarray, int, int]:
    """Expected positives in the top k, k = 1..n, of the ranking by ``scores`` (highest first).

    Tied scores are ranked in random order, so within a tie the expected count grows by the tie's
    share of positives per position: the curve is exact (no tie-breaking seed) and may be
    fractional.

    Returns
    -------
    (curve, P, N)
    """
    scores = np.asarray(scores, dtype=float)
    labels = np.asarray(labels)
    if scores.ndim != 1 or scores.size == 0 or labels.shape != scores.shape:
        raise TablegenInputError(
            f"scores and labels must be 1-d and of one length, got {scores.shape} and {labels.shape}")
    if not np.isfinite(scores).all():
        raise TablegenInputError("scores must be finite numbers")
    if not np.isin(labels, (0, 1)).all():
        others = np.unique(labels)[~np.isin(np.unique(labels), (0, 1))][:3]
        raise TablegenInputError(f"labels must be 0 or 1, got {others}")
    labels = labels.astype(int)
    P = int(labels.sum())
    N = labels.size - P
    if P == 0 or N == 0:
        raise TablegenInputError(f"labels must hold both classes, got P = {P}, N = {N}")
    order = np.argsort(-scores, kind="stable")
    sorted_scores, sorted_labels = scores[order], labels[order]
    starts = np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])
    sizes = np.diff(np.r_[starts, scores.size])
    positives = np.add.reduceat(sorted_labels, starts)
    share = np.repeat(positives / sizes, sizes)  # expected positive share of each position
    return np.cumsum(share), P, N
