"""The result of :func:`tablegen.multiclass_test` (:class:`MulticlassTest`) and the clauses its sentence shares with
:class:`~tablegen.lookup.multiclass_scores.MulticlassScoresTest`'s."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MulticlassTest:
    """A K-class model's accuracy, kappa, balanced accuracy or macro-F1 against the best of C random classifiers.

    Attributes
    ----------
    metric : str
        ``"accuracy"``, ``"kappa"``, ``"balanced_accuracy"`` or ``"macro_f1"``.
    value : float
        The model's accuracy (hits / n), Cohen's kappa, balanced accuracy (the mean over the classes with items of
        their recall) or macro-F1 (the mean over all classes of 2 TP_k / (n_k + m_k)).
    p_value : float
        1 - Pr(X < x)**C under the permutation null (X the metric of one random classifier, x the model's); where
        ``p_bounded`` it is only an upper bound.  By Monte Carlo, 1 - (1 - q)**C with q = (b + 1) / (R + 1), b
        the replicates reaching x: an estimate, with its interval ``p_interval``.
    p_bounded : bool
        True where the single-classifier tail fell below 1e-300 and ``p_value`` is the bound at that floor.
    critical_value : float or None
        Exact: the smallest value of the metric significant at ``alpha`` for this C (the value is significant
        iff it reaches it); None where no attainable value is (too few items for this C and alpha).  Monte
        Carlo: the smallest replicate value whose Monte Carlo p-value is <= alpha (an estimate; a value between
        the largest replicate value below it and it is significant too, the replicates not resolving the law
        there); None where no replicate value is (R too small for this C and alpha, or no attainable value).
    significant : bool
        p-value <= alpha (exact: equivalently ``value >= critical_value``).
    method : str
        ``"exact"`` (integer arithmetic; every probability the correctly rounded double of the exact rational)
        or ``"monte carlo"`` (``replicates`` random permutations, ``p_interval``).
    C, alpha : the question.
    n : int
        Items.
    hits, critical_hits : int, int or None
        The model's hits and the smallest significant number of hits (None for balanced accuracy and
        macro-F1, whose critical value is not a number of hits).
    classes : tuple
        The classes, in the order of the counts (sorted where the labels sort, else as first seen).
    true_counts, predicted_counts : tuple of int
        n_k and m_k per class; a class only predicted has n_k = 0 (it is never a hit).
    expected_value : float
        The metric's expected value under the null (accuracy sum_k n_k m_k / n^2; kappa 0).
    tail_probability : float
        t = 1 - (1 - alpha)**(1/C): the single-classifier tail the critical value keeps.
    replicates, seed : int or None
        Monte Carlo: the replicates R and the root seed of their streams (None when exact).
    reaching : int or None
        Monte Carlo: b, the replicates whose value reaches the model's (within 1e-12 relative).
    p_interval : tuple of float or None
        Monte Carlo: the 95% interval of the p-value, the Clopper–Pearson interval of q from b of R mapped
        through q -> 1 - (1 - q)**C (increasing, so the interval keeps its coverage).

    Examples
    --------
    >>> from tablegen import multiclass_test
    >>> result = multiclass_test(["a", "a", "b", "b", "c", "c"], ["a", "a", "b", "c", "c", "b"], C=1)
    >>> result.hits, result.critical_hits, result.significant, result.to_dict()["predicted_counts"]
    (4, 5, False, [2, 2, 2])
    """

    metric: str
    value: float
    p_value: float
    p_bounded: bool
    critical_value: float | None
    significant: bool
    method: str
    C: int
    alpha: float
    n: int
    hits: int
    critical_hits: int | None
    classes: tuple
    true_counts: tuple
    predicted_counts: tuple
    expected_value: float
    tail_probability: float
    replicates: int | None = None
    seed: int | None = None
    reaching: int | None = None
    p_interval: tuple | None = None

    def sentence(self) -> str:
        """One plain sentence with the verdict.

        Examples
        --------
        >>> labels = ["cat"] * 4 + ["dog"] * 4 + ["fox"] * 4
        >>> predicted = ["cat"] * 4 + ["dog"] * 3 + ["fox"] * 5
        >>> from tablegen import multiclass_test
        >>> print(multiclass_test(labels, predicted, C=10).sentence())  # doctest: +NORMALIZE_WHITESPACE
        accuracy = 0.916667 (11 of 12 hits, 3 classes) is significant at alpha = 0.05 against the best of 10
        random classifiers with the same predicted counts: p = 0.00144 (exact), significant from 0.833333 up (the
        critical value, reached).
        """
        who, critical, verdict, unsettled = verdict_texts(self)
        p_text = f"p {'< ' if self.p_bounded else '= '}{self.p_value:.3g}"
        method = "exact" if self.method == "exact" else monte_carlo_text(self)
        return (f"{self.metric} = {self.value:.6g} ({self.hits:,} of {self.n:,} hits, {len(self.classes)} classes) "
                f"{verdict} at alpha = {self.alpha:g} against {who} with the same predicted counts: "
                f"{p_text} ({method}), {critical}.{unsettled}")

    def to_dict(self) -> dict:
        """Plain Python values, for JSON (classes as their ``str``)."""
        return {
            "metric": self.metric, "value": self.value, "p_value": self.p_value,
            "p_bound": "<" if self.p_bounded else "", "critical_value": self.critical_value,
            "significant": self.significant, "method": self.method, "C": self.C, "alpha": self.alpha,
            "n": self.n, "hits": self.hits, "critical_hits": self.critical_hits,
            "classes": [str(c) for c in self.classes], "true_counts": list(self.true_counts),
            "predicted_counts": list(self.predicted_counts), "expected_value": self.expected_value,
            "tail_probability": self.tail_probability, "replicates": self.replicates, "seed": self.seed,
            "reaching": self.reaching, "p_interval": None if self.p_interval is None else list(self.p_interval),
        }


def monte_carlo_text(result) -> str:
    """"Monte Carlo, R = ..., 95% interval ... to ..." of a simulated multi-class verdict."""
    low, high = result.p_interval
    return f"Monte Carlo, R = {result.replicates:,}, 95% interval {low:.3g} to {high:.3g}"


def verdict_texts(result) -> tuple[str, str, str, str]:
    """(whom, the critical value's clause, "is [not] significant", the unsettled note) of a multi-class verdict's
    sentence (:class:`MulticlassTest`, :class:`~tablegen.lookup.multiclass_scores.MulticlassScoresTest`)."""
    who = "a random classifier" if result.C == 1 else f"the best of {result.C:,} random classifiers"
    if result.method == "exact":
        critical = ("no attainable value is significant at this C and alpha" if result.critical_value is None
                    else f"significant from {result.critical_value:.6g} up (the critical value, reached)")
    else:
        critical = ("no replicate value is significant at this C and alpha" if result.critical_value is None
                    else f"significant from about {result.critical_value:.6g} up (the critical value, reached; "
                         "Monte Carlo)")
    verdict = "is significant" if result.significant else "is not significant"
    unsettled = ""
    if result.p_interval is not None and result.p_interval[0] <= result.alpha < result.p_interval[1]:
        unsettled = " The p-value's interval straddles alpha: more replicates (R) would settle the verdict."
    return who, critical, verdict, unsettled
