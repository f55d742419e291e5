"""The answer of the max-T selection test (:func:`tablegen.compare.selection.maxt.selection_test`): the winner, every
model's raw, step-down and single-step adjusted p-values with their intervals, the critical value and the effective
number of independent competitors.  Importable from :mod:`tablegen.compare.selection.maxt` as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SelectionResult:
    """The winner among K given models (and C - K more not given) against the label-permutation null.

    Attributes
    ----------
    metric : str
    values : dict
        Each applicable model's value.
    winner : str
    raw_p_values, adjusted_p_values : dict
        Per model: Pr(its value on a random arrangement >= observed), and the Westfall–Young step-down
        adjusted p-value (with C - K extra random competitors).
    raw_p_intervals, adjusted_p_intervals : dict
        95% intervals of the exact p-values for ``method="permutation"`` (Clopper–Pearson around b / R); equal
        ends when exact.  The permutation p-values themselves are (b + 1) / (R + 1).
    single_step_p_values, single_step_p_intervals : dict
        Per model: the Westfall–Young single-step adjusted p-value Pr(max over every model (and the C - K
        random competitors) >= its observed value), and its 95% interval as above; the winner's equals its
        step-down p-value, the others' are at least theirs.
    critical_value, critical_interval : float, tuple
        The smallest x with Pr(max of the C <= x) >= 1 - alpha; its 95% interval when estimated.
    effective_C : float or None
        The c with Pr(X < t)^c = Pr(max of the C < t) at t = the critical value, X one random ranking's
        value: how many independent random competitors the models are worth.  None where X has no exact
        law here or the critical value is at the top of the support.
    method : str
        ``"exact"`` (every arrangement) or ``"permutation"`` (R random arrangements, ``seed``).
    arrangements : int
        The arrangements scored: C(n, P) when exact, else R, or fewer with an early look: l_e where the run
        stopped there, else where no count was left going.
    early_look, stopped_early : int or None, bool
        With R left unset, the permutation test has a look fixed in advance at l_e = ceil(10 / alpha) - 1
        arrangements (199 at alpha = 0.05): each count (raw, step-down, single-step) that at most e = 0 or at least
        H = 20 of them reached settles there with p = (X + 1)/(l_e + 1) (1/200: clearly better than chance; at least
        21/200: clearly not significant); a count in between goes on — where a run of R is costly (over 10^8
        model-item-arrangement steps) until H arrangements have reached it, at the L-th (Besag & Clifford: p_BC =
        H/L), or R are drawn (p_BC = (B + 1)/(R + 1)); else to R (p_BC = (B + 1)/(R + 1)) — and reports
        min(H/(l_e + 1), p_BC + 1/(l_e + 1)), which keeps the level exactly.  The run stops at the look
        (``stopped_early``) where every count settled, else once no count is left going (``arrangements``).  The
        C - K competitors not given are folded in after, as always.  With a look each p-value's interval is at
        97.5%, so that the one reported covers with 95%, and the critical value's DKW band is read from a prefix of
        one of 7 fixed sizes at 1 - 5%/7 (:func:`~tablegen.compare.selection.early.band_prefix`).

    Examples
    --------
    >>> import numpy as np
    >>> from tablegen.compare.selection.maxt import selection_test
    >>> y = np.r_[np.ones(6), np.zeros(6)]
    >>> s = np.arange(12.0)[::-1]  # ranks every positive first
    >>> result = selection_test(y, {"a": s, "b": s + (np.arange(12) == 0)}, metric="auc")
    >>> result.values["a"], result.method, result.p_value == 1 / 924  # 1 of C(12, 6) arrangements
    (1.0, 'exact', True)
    """

    metric: str
    P: int
    N: int
    C: int
    alpha: float
    values: dict
    winner: str
    raw_p_values: dict
    adjusted_p_values: dict
    raw_p_intervals: dict
    adjusted_p_intervals: dict
    critical_value: float
    critical_interval: tuple
    effective_C: float | None
    method: str
    arrangements: int
    R: int | None = None
    seed: int | None = None
    not_applicable: dict = field(default_factory=dict)
    """Models given that the metric is not defined for (``tp_at_k`` with tied scores straddling k), and why:
    they cannot win and leave the maximum, and C still counts them."""
    single_step_p_values: dict = field(default_factory=dict)
    single_step_p_intervals: dict = field(default_factory=dict)
    early_look: int | None = None
    stopped_early: bool = False

    @property
    def p_value(self) -> float:
        """The winner's adjusted p-value: Pr(max over the C >= the winner's value)."""
        return self.adjusted_p_values[self.winner]

    @property
    def significant(self) -> bool:
        """Whether the winner's adjusted p-value is <= ``alpha`` (a valid level-alpha test, exact or permutation)."""
        return self.p_value <= self.alpha

    @property
    def settled(self) -> bool:
        """Whether more arrangements could not change the verdict: exact, or alpha outside the p-value's
        95% interval."""
        low, high = self.adjusted_p_intervals[self.winner]
        return high <= self.alpha or low > self.alpha

    def significant_models(self) -> list[str]:
        """The models whose adjusted p-value is <= alpha (the family-wise error rate is at most alpha)."""
        return [m for m, p in self.adjusted_p_values.items() if p <= self.alpha]

    def sentence(self) -> str:
        """The verdict in words, with the method."""
        stopped = ""
        if self.stopped_early:
            stopped = ", stopped at the early look: every model's count settled"
        elif self.early_look is not None:
            stopped = f", past an early look at {self.early_look:,}"
        how = ("exact, over all label arrangements" if self.method == "exact" else
               f"{self.arrangements:,} random label arrangements{stopped}, seed {self.seed}; 95% interval "
               f"[{self.adjusted_p_intervals[self.winner][0]:.3g}, {self.adjusted_p_intervals[self.winner][1]:.3g}]")
        given = len(self.values) + len(self.not_applicable)
        others = "" if self.C == given else f" and {self.C - given} more not given"
        verdict = ("is" if self.significant else "is not") + ("" if self.settled else " (not settled: alpha is inside "
                                                                    "the p-value's 95% interval; raise R)")
        ec = "" if self.effective_C is None else f"; the models count as {self.effective_C:.3g} independent ones"
        return (f"{self.winner}'s {self.metric} = {self.values[self.winner]:.4g} {verdict} significantly better than "
                f"the best of the {len(self.values)} models given{others} on randomly permuted labels at alpha = "
                f"{self.alpha:g}: max-T p = {self.p_value:.3g} ({how}); critical value {self.critical_value:.4g}{ec}")

    def to_dict(self) -> dict:
        """Plain Python values (JSON-ready)."""
        return {"metric": self.metric, "P": self.P, "N": self.N, "C": self.C, "alpha": self.alpha,
                "values": self.values, "winner": self.winner, "p_value": self.p_value,
                "significant": self.significant, "settled": self.settled, "raw_p_values": self.raw_p_values,
                "adjusted_p_values": self.adjusted_p_values, "single_step_p_values": self.single_step_p_values,
                "single_step_p_intervals": {m: list(v) for m, v in self.single_step_p_intervals.items()},
                "raw_p_intervals": {m: list(v) for m, v in self.raw_p_intervals.items()},
                "adjusted_p_intervals": {m: list(v) for m, v in self.adjusted_p_intervals.items()},
                "critical_value": self.critical_value, "critical_interval": list(self.critical_interval),
                "effective_C": self.effective_C, "method": self.method, "arrangements": self.arrangements,
                "R": self.R, "seed": self.seed, "not_applicable": self.not_applicable,
                "early_look": self.early_look, "stopped_early": self.stopped_early}
