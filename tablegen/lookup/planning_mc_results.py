"""The results of the Monte Carlo planners (:mod:`tablegen.lookup.planning_mc`): the smallest detectable AUC and
the most models, each with its rigorous 95% interval, ``sentence()`` and ``to_dict()``."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class DetectableMonteCarlo:
    """The smallest AUC the test detects with the target power, by Monte Carlo (:mod:`tablegen.lookup.planning_mc`).

    Attributes
    ----------
    metric, model : str
    P, N, C, winners : int
    alpha, target : float
    auc : float
        The estimate: the smallest AUC (to :data:`~tablegen.lookup.planning_mc.AUC_STEP`) at which at least
        ``ceil(t R)`` replicates are significant, t the one-model target (``target`` itself when ``winners`` is 1).
    auc_low, auc_high : float or None
        The 95% interval of the smallest detectable AUC (None: not bounded with these replicates).
    effect : float
        The alternative's parameter at ``auc``: binormal d = sqrt 2 Phi^-1(AUC), or Lehmann k = AUC/(1 - AUC).
    power, power_ci_low, power_ci_high : float
        The estimated power at ``auc`` (for ``winners`` equally good models) and its 95% interval.
    replicates, seed : int
    critical_value : float
        m*; ``critical_method`` says how it was found.
    critical_method : str
    method : str
        ``"monte carlo"``.

    Examples
    --------
    >>> from tablegen import minimum_detectable
    >>> result = minimum_detectable("auc", 30, 30, C=10, alpha=0.05, model="binormal", R=2000)
    >>> result.auc_low <= result.auc <= result.auc_high, result.method
    (True, 'monte carlo')
    """

    metric: str
    P: int
    N: int
    C: int
    alpha: float
    target: float
    winners: int
    model: str
    auc: float
    auc_low: float | None
    auc_high: float | None
    effect: float
    power: float
    power_ci_low: float
    power_ci_high: float
    replicates: int
    seed: int
    critical_value: float
    critical_method: str
    method: str = "monte carlo"

    def sentence(self) -> str:
        """One plain sentence with the answer and its interval.

        Examples
        --------
        >>> from tablegen import minimum_detectable
        >>> minimum_detectable("auc", 30, 30, C=10, alpha=0.05, model="binormal", R=2000).sentence()[:40]
        'With P = 30, N = 30 the test of auc agai'
        """
        return (f"With P = {self.P:,}, N = {self.N:,} the test of {self.metric} against the best of {self.C:,} "
                f"random classifiers at alpha = {self.alpha:g} detects, with power {self.target:g}, a model of AUC "
                f"about {self.auc:.4f} or more ({self.model} alternative, {_effect_name(self.model)} = "
                f"{self.effect:.4g}; Monte Carlo, {self.replicates:,} replicates, 95% interval "
                f"{_end(self.auc_low)} to {_end(self.auc_high)}); the critical value is {self.critical_value:.4g} "
                f"({self.critical_method}).")

    def to_dict(self) -> dict:
        """JSON-ready fields.

        Examples
        --------
        >>> from tablegen import minimum_detectable
        >>> minimum_detectable("auc", 30, 30, C=10, alpha=0.05, model="binormal", R=2000).to_dict()["model"]
        'binormal'
        """
        return asdict(self)


@dataclass(frozen=True)
class MaxModelsMonteCarlo:
    """How many models can be tried before a model of given AUC stops being detected, by Monte Carlo.

    Attributes
    ----------
    metric, model : str
    P, N : int
    auc, alpha, target : float
    C : int
        The estimate: the largest C (<= ``bound``) at which at least ``ceil(target R)`` replicates are significant;
        0 if not even C = 1.
    C_low, C_high : int
        The 95% interval of the most models (``C_high == bound``: at least that many).
    power, power_ci_low, power_ci_high : float
        The estimated power at C (at C = 1 when ``C`` is 0) and its 95% interval.
    bound : int
    replicates, seed : int
    critical_method : str
        How m* was found at C.
    method : str
        ``"monte carlo"``.

    Examples
    --------
    >>> from tablegen import max_models
    >>> result = max_models("auc", 40, 40, auc=0.75, alpha=0.05, model="binormal", R=2000)
    >>> result.C_low <= result.C <= result.C_high
    True
    """

    metric: str
    P: int
    N: int
    auc: float
    alpha: float
    target: float
    model: str
    C: int
    C_low: int
    C_high: int
    power: float
    power_ci_low: float
    power_ci_high: float
    bound: int
    replicates: int
    seed: int
    critical_method: str
    method: str = "monte carlo"

    def sentence(self) -> str:
        """One plain sentence with the answer and its interval.

        Examples
        --------
        >>> from tablegen import max_models
        >>> max_models("auc", 40, 40, auc=0.75, alpha=0.05, model="binormal", R=2000).sentence()[:36]
        'At P = 40, N = 40 a model of AUC 0.7'
        """
        head = f"At P = {self.P:,}, N = {self.N:,} a model of AUC {self.auc:g} "
        tail = (f"(Monte Carlo power of {self.metric} under the {self.model} alternative, {self.replicates:,} "
                f"replicates, alpha = {self.alpha:g}; 95% interval of C: {self.C_low:,} to {self.C_high:,}"
                f"{' or more' if self.C_high >= self.bound else ''}).")
        if self.C == 0:
            return head + f"is not detected with power {self.target:g} even as the only model tried {tail}"
        more = " at least" if self.C >= self.bound else " up to"
        return head + (f"is detected with power {self.target:g} among{more} {self.C:,} models tried (power "
                       f"{self.power:.4f}, 95% interval {self.power_ci_low:.4f} to {self.power_ci_high:.4f}) {tail}")

    def to_dict(self) -> dict:
        """JSON-ready fields.

        Examples
        --------
        >>> from tablegen import max_models
        >>> max_models("auc", 40, 40, auc=0.75, alpha=0.05, model="binormal", R=2000).to_dict()["method"]
        'monte carlo'
        """
        return asdict(self)


def _effect_name(model: str) -> str:
    return "d" if model == "binormal" else "k"


def _end(value) -> str:
    return "unbounded" if value is None else f"{value:.4f}"
