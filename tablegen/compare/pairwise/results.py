"""The answers of the paired tests (:mod:`tablegen.compare.pairwise.paired`): one pair's
:class:`PairedTestResult`, many models' :class:`PairwiseResult` with Holm's adjustment and the confidence set of
the best, and :class:`PValueBound`, a p-value that is an upper bound.  Importable from
:mod:`tablegen.compare.pairwise.paired` as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PairedTestResult:
    """Model A against model B on one test set.

    Attributes
    ----------
    metric : str
    value_a, value_b : float
        Each model's value (for McNemar: its accuracy at the threshold).
    difference : float
        value_a - value_b.
    ci_low, ci_high : float
        The difference's ``confidence_level`` interval (DeLong's normal interval, else bootstrap BCa), not
        adjusted for multiplicity; a bootstrap interval is computed when first read, once
        (``confidence_interval`` is the pair).
    statistic : float
        DeLong's z; McNemar's b (items only A gets right, of b + c discordant); the permutation's difference.
    p_value : float
        Two-sided unless ``alternative`` says otherwise; for ``method="bound"`` an upper bound on the exact
        p-value ("p <= p_value"), itself a valid p-value.
    method : str
        ``"delong"`` (asymptotic), ``"mcnemar"`` (exact, or mid-p), ``"permutation"`` (exact over every swap
        pattern), ``"bound"`` (McDiarmid's bound on the exact swap-permutation p-value, no pattern drawn) or
        ``"sequential permutation"`` (Besag & Clifford's sequential Monte Carlo over the keyed swap patterns,
        with ``p_interval``; :mod:`.sequential`).
    alternative : str
    replicates, seed : int or None
        The patterns drawn and the root seed of a sequential permutation (None otherwise).
    p_interval : tuple
        95% interval of the exact permutation p-value (equal ends when exact; [0, bound] for a bound).
    confidence_level : float
        Of ``ci_low``/``ci_high``: 1 - ``alpha`` of :func:`paired_test`.
    max_replicates, hits : int or None
        A sequential permutation's cap L (``R``) and the patterns that reached the difference (it stopped early
        where ``hits`` is h = 20 and ``replicates`` < L).
    early_look : int or None
        The patterns l_e of the sequential permutation's early look, where its design had one
        (:func:`pairwise_tests` with ``R`` unset): a run none of whose first l_e patterns reached the difference
        stopped there (``stopped_early``) with p = 1/(l_e + 1) (plus 1/(R + 1) where McDiarmid's bound could
        answer); every other run's p-value carries 1/(l_e + 1) more,
        and its interval is at 97.5% (:mod:`.sequential` proves the level).
    stopped_early : bool
        Whether this run stopped at its early look.

    Examples
    --------
    >>> import numpy as np
    >>> from tablegen.compare import paired_test
    >>> y = np.r_[np.ones(8), np.zeros(8)]
    >>> a = y + np.linspace(0, 0.9, 16)
    >>> paired_test(y, a, a[::-1], metric="auc").method
    'delong'
    """

    metric: str
    value_a: float
    value_b: float
    difference: float
    statistic: float
    p_value: float
    method: str
    alternative: str = "two-sided"
    replicates: int | None = None
    seed: int | None = None
    p_interval: tuple = field(default=(float("nan"), float("nan")))
    confidence_level: float = 0.95
    _interval: tuple | Callable[[], tuple] = field(default=(float("nan"), float("nan")), repr=False, compare=False)
    max_replicates: int | None = None
    hits: int | None = None
    early_look: int | None = None
    stopped_early: bool = False

    @property
    def confidence_interval(self) -> tuple[float, float]:
        """(ci_low, ci_high): a bootstrap interval is computed here, the first time it is read, then kept."""
        if callable(self._interval):
            object.__setattr__(self, "_interval", tuple(self._interval()))
        return self._interval

    @property
    def ci_low(self) -> float:
        """Low end of the difference's ``confidence_level`` interval."""
        return self.confidence_interval[0]

    @property
    def ci_high(self) -> float:
        """High end of the difference's ``confidence_level`` interval."""
        return self.confidence_interval[1]

    def significant(self, alpha: float = 0.05) -> bool:
        """Whether the p-value is at most ``alpha``."""
        return self.p_value <= alpha

    def sentence(self, names: tuple[str, str] = ("A", "B"), alpha: float | None = None) -> str:
        """The verdict in words, with the method (``alpha`` defaults to 1 - ``confidence_level``)."""
        a, b = names
        alpha = round(1.0 - self.confidence_level, 12) if alpha is None else alpha
        verdict = "differs significantly from" if self.significant(alpha) else "does not differ significantly from"
        return (f"{a}'s {self.metric} {self.value_a:.4g} {verdict} {b}'s {self.value_b:.4g} at alpha = {alpha:g}: "
                f"difference {self.difference:+.4g} ({100 * self.confidence_level:g}% CI "
                f"[{self.ci_low:.4g}, {self.ci_high:.4g}]), "
                f"{self.p_text()} ({self.alternative}; {self.how()})")

    def p_text(self) -> str:
        """``"p = x"``, or ``"p <= x"`` where the p-value is a bound."""
        return f"p {'<=' if self.method == 'bound' else '='} {self.p_value:.3g}"

    def how(self) -> str:
        """The method in words, with what a reader needs to check the p-value."""
        if self.method == "bound":
            return "McDiarmid's bound on the exact swap-permutation p-value, no pattern drawn"
        if self.method == "sequential permutation":
            from tablegen.compare.pairwise.sequential import SEQUENTIAL_HITS

            stopped = (f"stopped at the {self.hits}th that reached the difference" if self.hits >= SEQUENTIAL_HITS
                       else f"{self.hits} reached the difference")
            if self.stopped_early:
                stopped = f"stopped at the early look: {self.hits} reached the difference"
            elif self.early_look is not None:
                stopped += f", past an early look at {self.early_look:,}"
            return (f"sequential Monte Carlo (Besag & Clifford): {self.replicates:,} of at most "
                    f"{self.max_replicates:,} random swap patterns, {stopped}, seed {self.seed}; 95% interval of "
                    f"the exact p [{self.p_interval[0]:.3g}, {self.p_interval[1]:.3g}]")
        return {"delong": "DeLong's test, asymptotic", "mcnemar": "exact McNemar test",
                "permutation": "permutation over every swap pattern, exact"}.get(self.method, self.method)

    def to_dict(self) -> dict:
        """Plain Python values, strict JSON: a number that does not exist (``p_interval`` of DeLong's or McNemar's
        p-value, which has no Monte Carlo interval; a degenerate bootstrap's ends) is None, never NaN;
        ``p_value_is_bound`` says whether ``p_value`` is an upper bound (method ``"bound"``)."""
        from tablegen.common.outputs import json_ready

        return json_ready({"metric": self.metric, "value_a": self.value_a, "value_b": self.value_b,
                           "difference": self.difference, "ci_low": self.ci_low, "ci_high": self.ci_high,
                           "statistic": self.statistic, "p_value": self.p_value,
                           "p_value_is_bound": self.method == "bound", "method": self.method,
                           "alternative": self.alternative, "replicates": self.replicates, "seed": self.seed,
                           "max_replicates": self.max_replicates, "hits": self.hits,
                           "early_look": self.early_look, "stopped_early": self.stopped_early,
                           "p_interval": list(self.p_interval), "confidence_level": self.confidence_level})


class PValueBound(float):
    """A p-value that is an upper bound on the exact one: a float in every sum and comparison, printed "<= x"
    by any format with a spec (the report's tables: ``f"{p:.3g}"``); ``float(p)`` is the bare number.

    Examples
    --------
    >>> p = PValueBound(1.74e-06)
    >>> f"{p:.3g}", p <= 0.05, float(p)
    ('<= 1.74e-06', True, 1.74e-06)
    """

    def __format__(self, spec: str) -> str:
        text = float.__format__(self, spec)
        return "<= " + text if spec else text

    def __repr__(self) -> str:
        return f"PValueBound({float(self)!r})"


@dataclass(frozen=True)
class PairwiseResult:
    """Paired tests between models, Holm-adjusted; the confidence set of the best.

    Attributes
    ----------
    metric : str
        The metric tested, by which the winner is chosen: ``"accuracy"`` (at the threshold) where the tests are
        McNemar's, whatever metric was named.
    winner : str
        The model with the largest value of ``metric``.
    tests : dict
        (model A, model B) -> :class:`PairedTestResult` (A the better of the two, or the winner).
    adjusted_p_values : dict
        (model A, model B) -> Holm-adjusted p-value over the pairs tested: an upper bound on the Holm-adjusted
        exact p-value where this pair's and every smaller p-value are bounds (``adjusted_is_bound``; method
        ``"bound"``), since Holm's adjustment is increasing in each p-value: then a :class:`PValueBound`, which a
        table prints "<= x".
    best_set : tuple of str
        The confidence set of the best: the winner and every model m the winner does not beat at level
        alpha / (K - 1), K models (Bonferroni over the winner's K - 1 comparisons; Hsu's multiple comparisons
        with the best, single-step).  It holds the best model m* (largest expected value) with probability
        >= 1 - alpha: m* is left out only if some j != m* beats it at alpha / (K - 1), each such test has that
        level when j is not better than m*, and there are K - 1 of them.  A superset of the models not beaten
        after Holm (step-down, which has no such proof for a data-chosen winner); from the same p-values for
        ``against="winner"`` (one-sided) or ``"all"`` (the two-sided p of the pair; conservative).
    alpha : float

    Examples
    --------
    >>> import numpy as np
    >>> from tablegen.compare import pairwise_tests
    >>> rng = np.random.default_rng(2)
    >>> y = np.r_[np.ones(40), np.zeros(60)]
    >>> models = {"good": y + rng.normal(size=100), "also good": y + rng.normal(size=100),
    ...           "noise": rng.normal(size=100)}
    >>> result = pairwise_tests(y, models, metric="auc")
    >>> result.winner in result.best_set, "noise" in result.best_set
    (True, False)
    """

    metric: str
    winner: str
    tests: dict
    adjusted_p_values: dict
    best_set: tuple
    alpha: float

    def to_dict(self) -> dict:
        """Plain Python values, strict JSON (None where a number does not exist)."""
        from tablegen.common.outputs import json_ready

        bounds = self.adjusted_is_bound()
        return json_ready({"metric": self.metric, "winner": self.winner, "alpha": self.alpha,
                           "best_set": list(self.best_set),
                           "tests": [{"a": a, "b": b, **t.to_dict(), "adjusted_p_value": self.adjusted_p_values[a, b],
                                      "adjusted_p_value_is_bound": bounds[a, b]}
                                     for (a, b), t in self.tests.items()]})

    def adjusted_is_bound(self) -> dict:
        """(model A, model B) -> whether the Holm-adjusted p-value is an upper bound ("<="): the pair's p-value and
        every smaller one are bounds (Holm's adjusted value of the i-th smallest is the largest of (m - j + 1)
        p_(j) over j <= i)."""
        return adjusted_is_bound(self.tests)


def adjusted_is_bound(tests: dict) -> dict:
    """:meth:`PairwiseResult.adjusted_is_bound` of ``tests``."""
    order = sorted(tests, key=lambda pair: tests[pair].p_value)
    found, all_bounds = {}, True
    for pair in order:
        all_bounds = all_bounds and tests[pair].method == "bound"
        found[pair] = all_bounds
    return found
