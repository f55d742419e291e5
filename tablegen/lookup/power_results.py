"""The results of the planning functions: :class:`PowerResult` (:func:`tablegen.power`),
:class:`SampleSizeResult` (:func:`tablegen.sample_size`), :class:`DetectableResult`
(:func:`tablegen.minimum_detectable`) and :class:`MaxModelsResult` (:func:`tablegen.max_models`), each with
``sentence()`` and ``to_dict()``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


def model_name(model: str) -> str:
    """The alternative's name in a sentence: Lehmann's capitalised, the binormal model's not.

    Examples
    --------
    >>> model_name("lehmann"), model_name("binormal")
    ('Lehmann', 'binormal')
    """
    return "Lehmann" if model == "lehmann" else model


@dataclass(frozen=True)
class PowerResult:
    """The power of the best-of-C test against one alternative.

    Attributes
    ----------
    metric : str
    P, N, C : int
    alpha : float
    auc : float
        The alternative's AUC.
    model : str
        ``"lehmann"`` or ``"binormal"``.
    effect : float
        The alternative's parameter: Lehmann k = AUC/(1 - AUC), or binormal d.
    winners : int
        How many of the C models are that good (1: one informative model among C - 1 that learned nothing).
    power : float
        Pr(at least one of the ``winners`` informative models scores > m*).
    method : str
        ``"exact"`` or ``"monte carlo"`` (the Lehmann alternative: exact where the exact programme runs, Monte
        Carlo beyond it; the binormal one: always Monte Carlo).
    ci_low, ci_high : float
        The 95% Clopper-Pearson interval (Monte Carlo); equal to ``power`` when exact.
    critical_value : float
        m*, the value a model must exceed.
    replicates : int or None
        R behind a Monte Carlo answer.
    critical_method : str
        Where m* comes from (:func:`tablegen.critical_value`'s ``method``): ``"exact"``, or ``"table"`` /
        ``"simulate"`` where the metric has no exact null at (P, N) (m* is then a Monte Carlo estimate, and
        the power is that against the estimate).
    critical_ci_low, critical_ci_high : float or None
        m*'s 95% interval (equal to it when exact).

    Examples
    --------
    >>> from tablegen import power
    >>> result = power("best_f1", 40, 60, C=10, alpha=0.05, auc=0.75)
    >>> result.method, round(result.power, 4), round(result.critical_value, 4)
    ('exact', 0.9747, 0.6337)
    """

    metric: str
    P: int
    N: int
    C: int
    alpha: float
    auc: float
    model: str
    effect: float
    winners: int
    power: float
    method: str
    ci_low: float
    ci_high: float
    critical_value: float
    replicates: int | None = None
    critical_method: str = "exact"
    critical_ci_low: float | None = None
    critical_ci_high: float | None = None

    def __float__(self) -> float:
        return float(self.power)

    def sentence(self) -> str:
        """One plain sentence with the answer.

        Examples
        --------
        >>> from tablegen import power
        >>> print(power("auc", 20, 20, C=1, alpha=0.05, auc=0.7).sentence())  # doctest: +NORMALIZE_WHITESPACE
        A model of AUC 0.7 (Lehmann alternative) scores auc > 0.6525 at P = 20, N = 20 with probability
        0.7180 (exact): the power of the test at alpha = 0.05 against the best of 1 random classifier.
        """
        who = ("A model" if self.winners == 1 else f"At least one of {self.winners:,} models")
        interval = ("exact" if self.method == "exact"
                    else f"Monte Carlo, 95% interval [{self.ci_low:.4f}, {self.ci_high:.4f}], R = {self.replicates:,}")
        if self.method != "exact" and self.model == "lehmann":
            interval += "; beyond the exact Lehmann programme at this size"
        others = (f"the best of {self.C:,} random classifier{'s' if self.C != 1 else ''}" if self.winners == 1
                  else f"the best of {self.C:,} classifiers")
        critical = ("" if self.critical_method == "exact" else
                    f" The critical value is itself an estimate ({self.critical_method}, 95% interval "
                    f"[{self.critical_ci_low:.4g}, {self.critical_ci_high:.4g}]), not exact.")
        return (f"{who} of AUC {self.auc:g} ({model_name(self.model)} alternative) scores {self.metric} > "
                f"{self.critical_value:.4g} at P = {self.P:,}, N = {self.N:,} with probability {self.power:.4f} "
                f"({interval}): the power of the test at alpha = {self.alpha:g} against {others}.{critical}")

    def to_dict(self) -> dict:
        """JSON-ready fields.

        Examples
        --------
        >>> from tablegen import power
        >>> sorted(power("auc", 20, 20, auc=0.8).to_dict())[:3]
        ['C', 'N', 'P']
        """
        return asdict(self)


@dataclass(frozen=True)
class SampleSizeResult:
    """The smallest test set whose power reaches a target: exact (Lehmann), or by Monte Carlo.

    Attributes
    ----------
    metric : str
    auc, alpha, target : float
    C, winners : int
    first_P, first_N : int
        Exact: the first size (in the search's order) whose power reaches the target.  Monte Carlo: the smallest
        size simulated whose power's 95% interval lies at or above the target (certified to reach it *at this size*).
    first_power : float
        The power there (Monte Carlo: the estimate; its interval ``first_ci_low``, ``first_ci_high``).
    stable_P, stable_N : int or None
        The size from which every size reaches the target, through ``checked_P``, ``checked_N``
        (power is saw-toothed: it can fall back below after ``first``).  None by Monte Carlo, which cannot show
        that the power never drops below the target again.
    stable_power : float or None
    checked_P, checked_N : int
        The largest size scanned (exact: after ``stable``; Monte Carlo: the top of the final scan, the highest
        size found by the bisections).
    evaluations : int
        Sizes at which the power was computed (exact) or simulated (Monte Carlo).
    method : str
        ``"exact"`` or ``"monte carlo"``.
    model : str
        ``"lehmann"`` or ``"binormal"``.
    first_ci_low, first_ci_high : float or None
        Monte Carlo: the 95% Clopper-Pearson interval of the power at ``first`` (None when exact).
    estimate_P, estimate_N : int or None
        Monte Carlo: the smallest size simulated whose estimated power reaches the target.
    estimate_power, estimate_ci_low, estimate_ci_high : float or None
        The estimate there and its 95% interval.
    possible_P, possible_N : int or None
        Monte Carlo: the smallest size simulated whose interval's upper end reaches the target; at every size
        simulated below it the interval lies wholly below the target.  [possible, first] brackets the first size that
        reaches the target, within the intervals' uncertainty.
    scanned_P, scanned_N : int or None
        Monte Carlo: the lowest size of the final scan, which simulated every size from it to ``checked``.
    replicates, seed : int or None
        Monte Carlo: replicates per size and the root seed (the same question and seed give the same answer).
    critical_method : str
        Where m* at ``first`` comes from (``"exact"``; ``"table"`` or ``"simulate"`` where the metric has no exact
        null there: the power is then that against the estimate).

    Examples
    --------
    >>> from tablegen import sample_size
    >>> result = sample_size("auc", auc=0.7, C=10, alpha=0.05, prevalence=0.5)
    >>> (result.first_P, result.first_N), (result.stable_P, result.stable_N)
    ((47, 46), (47, 46))
    """

    metric: str
    auc: float
    C: int
    alpha: float
    target: float
    winners: int
    first_P: int
    first_N: int
    first_power: float
    stable_P: int | None
    stable_N: int | None
    stable_power: float | None
    checked_P: int
    checked_N: int
    evaluations: int
    method: str = "exact"
    model: str = "lehmann"
    first_ci_low: float | None = None
    first_ci_high: float | None = None
    estimate_P: int | None = None
    estimate_N: int | None = None
    estimate_power: float | None = None
    estimate_ci_low: float | None = None
    estimate_ci_high: float | None = None
    possible_P: int | None = None
    possible_N: int | None = None
    scanned_P: int | None = None
    scanned_N: int | None = None
    replicates: int | None = None
    seed: int | None = None
    critical_method: str = "exact"

    def sentence(self) -> str:
        """One plain sentence with the answer.

        Examples
        --------
        >>> from tablegen import sample_size
        >>> sample_size("auc", auc=0.7, C=10, alpha=0.05, prevalence=0.5).sentence()[:61]
        'A model of AUC 0.7 reaches power 0.8 against the best of 10 r'
        """
        if self.method != "exact":
            return self._monte_carlo_sentence()
        text = (f"A model of AUC {self.auc:g} reaches power {self.target:g} against the best of {self.C:,} random "
                f"classifiers at alpha = {self.alpha:g} ({self.metric}, exact Lehmann power) first at P = "
                f"{self.first_P:,}, N = {self.first_N:,} (power {self.first_power:.4f})")
        if (self.stable_P, self.stable_N) == (self.first_P, self.first_N):
            return text + (f", and at every larger size checked, through P = {self.checked_P:,}, "
                           f"N = {self.checked_N:,}.")
        return text + (f"; it falls back below at some larger sizes, and stays at or above the target from P = "
                       f"{self.stable_P:,}, N = {self.stable_N:,} (power {self.stable_power:.4f}) through P = "
                       f"{self.checked_P:,}, N = {self.checked_N:,}.")

    def _monte_carlo_sentence(self) -> str:
        """The sentence of a Monte Carlo answer: certified size, estimate's size, the bracket, the scan, the caveat."""
        beyond = "; beyond the exact Lehmann programme" if self.model == "lehmann" else ""
        critical = "" if self.critical_method == "exact" else f"; m* itself an estimate ({self.critical_method})"
        return (f"A model of AUC {self.auc:g} ({model_name(self.model)} alternative{beyond}) reaches power "
                f"{self.target:g} against the best of {self.C:,} random classifiers at alpha = {self.alpha:g} "
                f"({self.metric}, Monte Carlo, {self.replicates:,} replicates per size, seed {self.seed}{critical}) "
                f"at P = {self.first_P:,}, N = {self.first_N:,}, certified: the smallest size simulated whose power's "
                f"95% interval, [{self.first_ci_low:.4f}, {self.first_ci_high:.4f}], lies at or above the target; "
                f"the estimate first reaches it at P = {self.estimate_P:,}, N = {self.estimate_N:,} (power "
                f"{self.estimate_power:.4f}, 95% interval [{self.estimate_ci_low:.4f}, {self.estimate_ci_high:.4f}]), "
                f"and every size simulated below P = {self.possible_P:,}, N = {self.possible_N:,} has its interval "
                f"wholly below it.  Every size from P = {self.scanned_P:,}, N = {self.scanned_N:,} to P = "
                f"{self.checked_P:,}, N = {self.checked_N:,} was simulated ({self.evaluations:,} sizes in all, "
                f"common random numbers).  A simulation certifies that the power reaches the target at that size, "
                f"not that it never drops below it at a larger one (power is saw-toothed in the size).")

    def to_dict(self) -> dict:
        """JSON-ready fields.

        Examples
        --------
        >>> from tablegen import sample_size
        >>> sample_size("auc", auc=0.7, C=10, alpha=0.05, prevalence=0.5).to_dict()["first_P"]
        47
        """
        return asdict(self)


@dataclass(frozen=True)
class DetectableResult:
    """The smallest AUC (Lehmann k) that the test detects with the target power at (P, N).

    Attributes
    ----------
    metric : str
    P, N, C, winners : int
    alpha, target : float
    auc : float
        The smallest AUC whose power reaches the target, to :data:`tablegen.lookup.planning.AUC_TOLERANCE`: the
        power at ``auc`` reaches it and the power at ``auc_below`` (= auc - tolerance or less) does not (both 0.5
        when even the null, AUC 0.5, reaches a target as low as the test's size).
    auc_below : float
    k : float
        Lehmann k = auc/(1 - auc).
    power : float
        The exact power at ``auc``.
    metric_value : float
        The metric's value at that alternative on its quantile ranking (:func:`tablegen.lookup.planning.typical_value`).
    critical_value : float
        m*.
    method : str
        ``"exact"``.

    Examples
    --------
    >>> from tablegen import minimum_detectable
    >>> result = minimum_detectable("auc", 50, 50, C=10, alpha=0.05)
    >>> round(result.auc, 4), round(result.power, 4)
    (0.6923, 0.8)
    """

    metric: str
    P: int
    N: int
    C: int
    alpha: float
    target: float
    winners: int
    auc: float
    auc_below: float
    k: float
    power: float
    metric_value: float
    critical_value: float
    method: str = "exact"

    def _source(self) -> str:
        return "exact" if self.method == "exact" else "exact, read from the table"

    def sentence(self) -> str:
        """One plain sentence with the answer.

        Examples
        --------
        >>> from tablegen import minimum_detectable
        >>> minimum_detectable("auc", 50, 50, C=10, alpha=0.05).sentence()[:53]
        'With P = 50, N = 50 the test of auc against the best '
        """
        return (f"With P = {self.P:,}, N = {self.N:,} the test of {self.metric} against the best of {self.C:,} "
                f"random classifiers at alpha = {self.alpha:g} detects, with power {self.target:g}, a model of AUC "
                f"{self.auc:.4f} or more (Lehmann alternative, k = {self.k:.4g}; {self._source()}), whose "
                f"{self.metric} on its quantile ranking is {self.metric_value:.4g}; the critical value is "
                f"{self.critical_value:.4g}.")

    def to_dict(self) -> dict:
        """JSON-ready fields.

        Examples
        --------
        >>> from tablegen import minimum_detectable
        >>> minimum_detectable("auc", 50, 50, C=10, alpha=0.05).to_dict()["method"]
        'exact'
        """
        return asdict(self)


@dataclass(frozen=True)
class MaxModelsResult:
    """How many models can be tried on one test set before a model of given AUC stops being detectable.

    Attributes
    ----------
    metric : str
    P, N : int
    auc, alpha, target : float
    C : int
        The largest C (<= ``bound``) at which the power reaches the target; 0 if not even C = 1 does.
    power : float
        The exact power at C (at C = 1 when ``C`` is 0).
    power_beyond : float or None
        The exact power at C + 1 (below the target), None when C reached ``bound``.
    bound : int
        The largest C searched; ``C == bound`` means "at least that many".
    method : str
        ``"exact"``.

    Examples
    --------
    >>> from tablegen import max_models
    >>> result = max_models("auc", 100, 100, auc=0.65, alpha=0.05)
    >>> result.C, result.power >= 0.8 > result.power_beyond
    (26, True)
    """

    metric: str
    P: int
    N: int
    auc: float
    alpha: float
    target: float
    C: int
    power: float
    power_beyond: float | None
    bound: int
    method: str = "exact"

    def sentence(self) -> str:
        """One plain sentence with the answer.

        Examples
        --------
        >>> from tablegen import max_models
        >>> max_models("auc", 100, 100, auc=0.65, alpha=0.05).sentence()[:40]
        'At P = 100, N = 100 a model of AUC 0.65 '
        """
        head = f"At P = {self.P:,}, N = {self.N:,} a model of AUC {self.auc:g} "
        tail = f"(exact Lehmann power of {self.metric}, alpha = {self.alpha:g})."
        if self.C == 0:
            return head + f"is not detected with power {self.target:g} even as the only model tried {tail}"
        if self.C >= self.bound:
            return head + f"is detected with power {self.target:g} among at least {self.C:,} models tried {tail}"
        return head + (f"is detected with power {self.target:g} among up to {self.C:,} models tried "
                       f"(power {self.power:.4f}; {self.power_beyond:.4f} with one more) {tail}")

    def to_dict(self) -> dict:
        """JSON-ready fields.

        Examples
        --------
        >>> from tablegen import max_models
        >>> max_models("best_accuracy", 100, 100, auc=0.65, alpha=0.05).to_dict()["bound"]
        1000000000000
        """
        return asdict(self)
