"""Answers to lookups: a value with its provenance, and the verdict on a winner's score.

Plain dataclasses with no storage code, so an exact lookup builds its answer without importing the
table machinery (xarray, zarr).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tablegen.compute.exact.nulls import SNAP_TOLERANCE
from tablegen.compute.stats import CI_LEVEL, clopper_pearson, p_value_from_tail


def _plain(value):
    """A numpy array or scalar as plain Python (lists, int, float, str, bool) for JSON."""
    return np.asarray(value).tolist() if isinstance(value, (np.ndarray, np.generic)) else value


@dataclass(frozen=True)
class Answer:
    """A critical value or p-value with its provenance; fields are arrays for array input.

    Attributes
    ----------
    value : float or ndarray
        The answer.  Where ``bound`` is set it is only a bound: ``"<"`` means the true value is at
        most ``value`` (e.g. a p-value below what the source can resolve), ``">"`` at least.
    ci_low, ci_high : float or ndarray
        95% confidence interval (equal to ``value`` for exact answers; the bracket for ``"bracket"``).
    method : str or ndarray of str
        ``"exact"``, ``"bracket"`` (rigorous bounds wider than the reported precision: ``ci_low`` and
        ``ci_high`` bound the true value, ``value`` is the conservative end), ``"table"`` (Monte Carlo
        values read from a store) or ``"simulate"``.
    replicates : int, ndarray or None
        R behind a Monte Carlo answer (None for exact ones; 0 marks them in arrays).
    seed : int or None
        Root seed of a simulated answer (pass it back to reproduce it).
    bound : str or ndarray of str
        ``""`` for a value, ``"<"`` for an upper bound, ``">"`` for a lower bound.
    source : str
        Where a table answer came from (the store's path, or ``"bundled table"``).
    notes : tuple of str
        What the caller should know about how the answer was found: a store the caller named that is damaged
        where the question fell (the answer then comes from another source, and a warning says so too).

    Examples
    --------
    >>> answer = Answer(0.00283, 0.00283, 0.00283, "exact")
    >>> float(answer), answer.formatted(2), answer.upper_bound
    (0.00283, '0.0028', False)
    >>> Answer(1e-7, 0.0, 1e-7, "simulate", replicates=10_000_000, seed=2005, bound="<").formatted()
    '< 1e-07'
    """

    value: float
    ci_low: float
    ci_high: float
    method: str
    replicates: int | None = None
    seed: int | None = None
    bound: str = ""
    source: str = ""
    notes: tuple = field(default=())

    def __float__(self) -> float:
        return float(self.value)

    @property
    def upper_bound(self):
        """True where ``value`` is only an upper bound."""
        return np.asarray(self.bound) == "<" if np.ndim(self.bound) else self.bound == "<"

    def formatted(self, digits: int = 4) -> str:
        """``"0.00283"``, ``"< 1e-07"``: the value with its bound, to ``digits`` significant digits."""
        if np.ndim(self.value):
            raise TypeError("formatted() needs a scalar answer")
        return f"{self.bound + ' ' if self.bound else ''}{self.value:.{digits}g}"

    def to_dict(self) -> dict:
        """JSON-ready fields (arrays become lists)."""
        return {**{name: _plain(getattr(self, name)) for name in
                   ("value", "ci_low", "ci_high", "method", "replicates", "seed", "bound", "source")},
                "notes": list(self.notes)}


@dataclass(frozen=True)
class SignificanceResult:
    """The verdict on a winner's score against the best of C random classifiers.

    Attributes
    ----------
    metric : str
    score, P, N, C, alpha : scalars or arrays (broadcast)
        P and N are None for a K-class question (``K`` and ``n_per_class`` set instead).
    significant : bool or ndarray
        score > critical value (significant at level alpha iff m > m*).
    settled : bool or ndarray
        False where the verdict rests on a Monte Carlo estimate whose 95% interval contains the
        score: a larger R or an exact method could turn it.
    critical_value, p_value : Answer
    notes : tuple of str
    K, n_per_class : int or None
        The balanced K-class design of a K-class question (K classes of ``n_per_class`` items); None for a binary
        one.

    Examples
    --------
    >>> from tablegen import significance_test
    >>> result = significance_test("auc", 100, 300, C=1000, score=0.70)
    >>> bool(result.significant), bool(result.settled), result.critical_value.method
    (True, True, 'exact')
    """

    metric: str
    score: float
    P: int | None
    N: int | None
    C: int
    alpha: float
    significant: bool
    settled: bool
    critical_value: Answer
    p_value: Answer
    notes: tuple = field(default=())
    K: int | None = None
    n_per_class: int | None = None

    @property
    def method(self):
        """Method of the critical value, which carries the verdict."""
        return self.critical_value.method

    @property
    def replicates(self):
        """R behind the critical value (None where exact)."""
        return self.critical_value.replicates

    def sentence(self) -> str:
        """One plain sentence with the verdict (scalar results only)."""
        if np.ndim(self.significant):
            raise TypeError("sentence() needs a scalar result")
        cv = self.critical_value
        design = (f"K = {self.K:,} classes of {self.n_per_class:,} items (balanced)" if self.K is not None
                  else f"P = {self.P:,}, N = {self.N:,}")
        where = f"the best of {self.C:,} random classifier{'s' if self.C != 1 else ''} at {design}"
        if self.significant:
            text = (f"{self.metric} = {self.score:g} is significant at alpha = {self.alpha:g}: it exceeds "
                    f"{cv.value:.6g}, the critical value for {where}.")
        else:
            text = (f"{self.metric} = {self.score:g} is not significant at alpha = {self.alpha:g}: it does "
                    f"not exceed {cv.value:.6g}, the critical value for {where}.")
        if not self.settled and np.all(cv.method == "bracket"):
            text += (f" The score lies inside the bracket [{cv.ci_low:.6g}, {cv.ci_high:.6g}] known to hold the "
                     "critical value, so this verdict is not settled: see the p-value's bracket.")
        elif not self.settled:
            text += (f" The score lies inside that value's 95% interval [{cv.ci_low:.6g}, {cv.ci_high:.6g}], "
                     "so this verdict is not settled: use an exact method or a larger R.")
        return text

    def to_dict(self) -> dict:
        """JSON-ready fields (arrays become lists); ``K`` and ``n_per_class`` too for a K-class question."""
        design = ("K", "n_per_class") if self.K is not None else ()
        fields = ("score", "P", "N", *design, "C", "alpha", "significant", "settled", "method", "replicates")
        return {"metric": self.metric, **{name: _plain(getattr(self, name)) for name in fields},
                "critical_value": self.critical_value.to_dict(),
                "p_value": self.p_value.to_dict(), "notes": list(self.notes)}


def verdict(metric, score, P, N, C, alpha, cv: Answer, pv: Answer, notes=(), K=None, n_per_class=None
            ) -> SignificanceResult:
    """Combine a critical value and a p-value into a :class:`SignificanceResult` (broadcasting); ``K`` and
    ``n_per_class`` (with P and N None) for a K-class question."""
    score_array = np.asarray(score, dtype=float)
    significant = score_array > np.asarray(cv.value) + SNAP_TOLERANCE
    inside = ((score_array > np.asarray(cv.ci_low) + SNAP_TOLERANCE)
              & (score_array <= np.asarray(cv.ci_high) + SNAP_TOLERANCE))
    settled = ~inside | (np.asarray(cv.method) == "exact")
    scalar = np.ndim(significant) == 0
    return SignificanceResult(
        metric=metric, score=float(score_array) if scalar else score_array, P=P, N=N, C=C, alpha=alpha,
        significant=bool(significant) if scalar else significant, settled=bool(settled) if scalar else settled,
        critical_value=cv, p_value=pv, notes=tuple(notes), K=K, n_per_class=n_per_class)


def divided_answer(answer: Answer, divisor: int) -> Answer:
    """``answer`` with its value and interval divided by ``divisor`` (a count at a cut-off k as a precision).

    Examples
    --------
    >>> divided_answer(Answer(6.0, 5.0, 7.0, "simulate", 1000, 1), 10).value
    0.6
    """
    if divisor == 1:
        return answer
    return Answer(answer.value / divisor, answer.ci_low / divisor, answer.ci_high / divisor, answer.method,
                  answer.replicates, answer.seed, answer.bound, answer.source)


def simulated_p_value(C: int, R: int, seed: int, hits: int, level: float = CI_LEVEL) -> Answer:
    """The simulated p-value 1 - (1 - hits/R)**C of a winner whose score ``hits`` of R rankings reached, with the
    Clopper-Pearson interval at ``level`` carried through; none reaching: its interval's high end as a bound ("<").

    Examples
    --------
    >>> answer = simulated_p_value(10, 1000, 7, 0)
    >>> answer.bound, round(answer.value, 4)
    ('<', 0.0362)
    """
    tail_low, tail_high = clopper_pearson(hits, hits, R, level)
    low, high = (float(p_value_from_tail(s, C)) for s in (tail_low, tail_high))
    if hits == 0:
        return Answer(high, low, high, "simulate", R, seed, bound="<")
    return Answer(float(p_value_from_tail(hits / R, C)), low, high, "simulate", R, seed)
