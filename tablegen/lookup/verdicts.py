"""What :func:`tablegen.significance_test_from_scores` returns: the verdict on each metric's winner
(:class:`MetricVerdict`) and one per metric (:class:`FromScoresResult`), with the numbers a reader quotes as plain
attributes."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MetricVerdict:
    """The winner on one metric and the verdict on its score.

    Attributes
    ----------
    metric : str
    winner : str or None
        The best model among those the metric applies to (None if it applies to none).
    score : float
        The winner's value of the metric (NaN without a winner).
    scores : dict
        Every applicable model's value, in the order given.
    result : tablegen.SignificanceResult or None
        The answer of :func:`tablegen.lookup.api.significance_test` (critical value, p-value, method);
        None without a winner.
    winner_has_ties : bool
        Whether the winner's scores tie.
    not_applicable : dict
        Model -> why the metric is not defined on its scores (e.g. tied scores straddling the cut-off
        of ``precision_at_k``); those models are left out of the winner's choice, but still count in C.
    notes : tuple of str
        What the verdict's reader should know: how tied scores were tested, models left out, a winner
        whose scores look inverted.
    tie_conditional : bool
        Whether the winner was tested against the exact null given its tie groups (not the no-ties null).
    tie_conditional_p_values : dict
        For a metric with a tie-conditional null (``auc``), under ``method="auto"`` or ``"exact"``: every
        applicable model -> the exact p-value of its own value against the best of C random classifiers with
        its own ties, 1 - (1 - Pr(X >= value | its tie groups))^C (an untied model: the no-ties null, the same
        law), the winner's as its verdict's.  A model whose conditional null would exceed the time limit is left
        out; a p-value below the smallest positive double is given as that double (an upper bound).  Empty for
        the other metrics and methods.

    The numbers a reader quotes are plain attributes too (None where the metric applies to no model):
    ``value`` (the winner's value), ``p_value`` and ``critical_value`` (floats), ``p_value_bound`` (``""``, or
    ``"<"`` where ``p_value`` is only an upper bound), ``p_value_interval`` and ``critical_value_interval``
    (the 95% interval of a Monte Carlo answer, the bracket of a bounded one, the value twice where exact),
    ``method``, ``significant`` and ``settled``; ``result`` keeps the whole answer.

    Examples
    --------
    >>> import numpy as np
    >>> from tablegen.lookup.from_scores import significance_test_from_scores
    >>> y = np.r_[np.ones(10), np.zeros(10)]
    >>> verdict = significance_test_from_scores(y, {"a": np.arange(20.0)[::-1]}, metrics=["auc"])["auc"]
    >>> verdict.value, verdict.p_value_bound, verdict.method, verdict.significant
    (1.0, '', 'exact', True)
    >>> verdict.p_value == verdict.result.p_value.value, round(verdict.p_value, 9)
    (True, 5.413e-06)
    """

    metric: str
    winner: str | None
    score: float
    scores: dict
    result: object
    winner_has_ties: bool
    not_applicable: dict = field(default_factory=dict)
    notes: tuple = ()
    tie_conditional: bool = False
    tie_conditional_p_values: dict = field(default_factory=dict)

    @property
    def significant(self) -> bool:
        return self.result is not None and bool(self.result.significant)

    @property
    def value(self) -> float | None:
        """The winner's value of the metric (None without a winner)."""
        return None if self.result is None else float(self.score)

    @property
    def p_value(self) -> float | None:
        """The winner's p-value against the best of C random classifiers (an upper bound where
        ``p_value_bound`` is ``"<"``)."""
        return None if self.result is None else float(self.result.p_value.value)

    @property
    def p_value_bound(self) -> str | None:
        """``""`` where ``p_value`` is a value, ``"<"`` where it is only an upper bound (``">"``: a lower one)."""
        return None if self.result is None else str(self.result.p_value.bound)

    @property
    def p_value_interval(self) -> tuple[float, float] | None:
        """The p-value's 95% interval (Monte Carlo), bracket (bounds), or (p, p) where exact."""
        return None if self.result is None else (float(self.result.p_value.ci_low), float(self.result.p_value.ci_high))

    @property
    def critical_value(self) -> float | None:
        """The value the winner must exceed to be significant at ``alpha``."""
        return None if self.result is None else float(self.result.critical_value.value)

    @property
    def critical_value_interval(self) -> tuple[float, float] | None:
        """The critical value's 95% interval (Monte Carlo), bracket (bounds), or (value, value) where exact."""
        if self.result is None:
            return None
        return float(self.result.critical_value.ci_low), float(self.result.critical_value.ci_high)

    @property
    def method(self) -> str | None:
        """Where the critical value came from: ``"exact"``, ``"bracket"``, ``"table"`` or ``"simulate"``."""
        return None if self.result is None else str(self.result.method)

    @property
    def settled(self) -> bool | None:
        """False where a Monte Carlo critical value's interval holds the score (a larger R could turn it)."""
        return None if self.result is None else bool(self.result.settled)

    def sentence(self) -> str:
        """The verdict in words, naming the winner, then the notes."""
        if self.result is None:
            text = f"{self.metric} is not applicable to any model."
        else:
            text = f"{self.winner} wins on {self.metric}: {self.result.sentence()}"
        return " ".join([text, *(f"Note: {note}." for note in self.notes)])

    def to_dict(self) -> dict:
        return {"metric": self.metric, "winner": self.winner,
                "score": None if self.result is None else self.score, "scores": dict(self.scores),
                "winner_has_ties": self.winner_has_ties, "tie_conditional": self.tie_conditional,
                "tie_conditional_p_values": dict(self.tie_conditional_p_values),
                "not_applicable": dict(self.not_applicable),
                "notes": list(self.notes), "significant": self.significant,
                **{name: getattr(self, name) for name in ("p_value", "p_value_bound", "critical_value", "method",
                                                          "settled")},
                "result": None if self.result is None else self.result.to_dict()}


@dataclass(frozen=True)
class FromScoresResult:
    """One :class:`MetricVerdict` per metric; index it by metric name.

    Attributes
    ----------
    P, N : int
        Positives and negatives among the labels.
    C : int
        Competitors the winner was picked from (every model tried).
    alpha : float
    models : tuple of str
    verdicts : dict
        Metric name -> :class:`MetricVerdict`, in the order asked.

    Examples
    --------
    >>> import numpy as np
    >>> from tablegen.lookup.from_scores import significance_test_from_scores
    >>> rng = np.random.default_rng(0)
    >>> y = np.r_[np.ones(20), np.zeros(20)]
    >>> models = {"noise": rng.normal(size=40), "signal": y + rng.normal(size=40)}
    >>> result = significance_test_from_scores(y, models, metrics=["auc", "best_accuracy"])
    >>> result.P, result.N, result.C, result.models
    (20, 20, 2, ('noise', 'signal'))
    >>> [(v.metric, v.winner, v.score, v.significant) for v in result]
    [('auc', 'signal', 0.7575, True), ('best_accuracy', 'signal', 0.7, False)]
    >>> result["auc"].scores
    {'noise': 0.4325, 'signal': 0.7575}
    """

    P: int
    N: int
    C: int
    alpha: float
    models: tuple
    verdicts: dict

    def __getitem__(self, metric: str) -> MetricVerdict:
        return self.verdicts[metric]

    def __iter__(self):
        return iter(self.verdicts.values())

    def sentence(self) -> str:
        return " ".join(v.sentence() for v in self)

    def to_dict(self) -> dict:
        return {"P": self.P, "N": self.N, "C": self.C, "alpha": self.alpha, "models": list(self.models),
                "verdicts": [v.to_dict() for v in self]}
