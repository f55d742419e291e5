"""Plan a test set: power, sample size, minimum detectable effect and how many models a test set can take.

Power is Pr(a model's metric > m*), m* the critical value of the best-of-C test (the test's own rule:
significant iff m > m*; :func:`tablegen.critical_value` with ``method="exact"``).  Under the **Lehmann
alternative** (``model="lehmann"``, the default: positives' scores have CDF F**k, negatives' F,
k = AUC/(1 - AUC)) it is exact (:mod:`tablegen.compute.exact.power`); under the **binormal** one
(``model="binormal"``: positives N(d, 1), negatives N(0, 1), AUC = Phi(d/sqrt 2)) a Monte Carlo estimate
with its 95% interval (:mod:`tablegen.compute.power_mc`).

Two questions (``winners``):

- ``winners=1`` (default): one informative model among C tried, the others learned nothing.  Power is
  the probability that *this model's own* score clears m*: Pr(X > m*).  (The test may also come out
  significant because a useless model won; that happens with probability at most alpha.)
- ``winners="all"`` (or an integer w <= C): w equally good models of that AUC among the C.  Power is the
  probability that at least one of them clears m*, 1 - (1 - Pr(X > m*))**w; with ``"all"``, w = C and
  it is the probability that the winner of C equally good models is significant.

Exact power is saw-toothed in the test-set size: m* moves in steps of the lattice, so adding an item can
lower the power.  :func:`sample_size` reports both the first size that reaches the target and the size
from which it stays there (``docs/explanation/power.md``).
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import asdict, dataclass

import numpy as np

from tablegen.compute.validation import check_alpha, check_class_size, check_competitors, check_metric
from tablegen.errors import Argument, TablegenInputError

#: Models: exact Lehmann power, or Monte Carlo under the binormal alternative.
MODELS = ("lehmann", "binormal")
#: :func:`minimum_detectable` brackets the smallest AUC to this width.
AUC_TOLERANCE = 1e-7
#: :func:`sample_size`'s default bound on the size it searches (total P + N, or the free class's size).
DEFAULT_MAX_SIZE = 100_000
#: :func:`max_models`' default bound on C.
DEFAULT_MAX_C = 10**12
#: The quantile ranking (:func:`typical_value`) has about this many items for metrics of rates.
TYPICAL_ITEMS = 100_000


# -- checks -------------------------------------------------------------------------------------------
def _check_unit(name: str, value, low: float, low_closed: bool, text: str) -> float:
    """``value`` as a float in [low, 1) (``low_closed``) or (low, 1), else an error naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise TablegenInputError.naming(Argument(name), f" must be a number in {text}, got {value!r}")
    value = float(value)
    if not ((low <= value) if low_closed else (low < value)) or not value < 1.0:
        raise TablegenInputError.naming(Argument(name), f" must be in {text}, got {value:g}")
    return value


def check_auc(value) -> float:
    """The alternative's AUC, a number in [0.5, 1) (0.5 is the null: the power is then the test's size).

    Examples
    --------
    >>> check_auc(0.75)
    0.75
    """
    return _check_unit("auc", value, 0.5, True, "[0.5, 1)")


def check_power(value) -> float:
    """A target power in (0, 1).

    Examples
    --------
    >>> check_power(0.8)
    0.8
    """
    return _check_unit("power", value, 0.0, False, "(0, 1)")


def _check_model(value) -> str:
    if value not in MODELS:
        raise TablegenInputError.naming(Argument("model"), f" must be one of {', '.join(map(repr, MODELS))}, "
                                        f"got {value!r}")
    return value


def _check_winners(value, C: int) -> int:
    if isinstance(value, str) and value == "all":
        return C
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or not 1 <= value <= C:
        raise TablegenInputError.naming(Argument("winners"), f" must be an integer in [1, C] or 'all', got {value!r}")
    return int(value)


def _check_power_metric(metric) -> str:
    from tablegen.compute.metrics import get_metric

    name = check_metric("metric", metric)
    if get_metric(name).power_routine is None:
        raise TablegenInputError.naming(Argument("metric", name), " has no power model")
    return name


# -- the exact programme, cached ----------------------------------------------------------------------
@functools.lru_cache(maxsize=256)  # an event holds its boundary, 8 (P + N) bytes
def _event(metric: str, P: int, N: int, C: int, alpha: float):
    """The event "metric > m*" with its exact Lehmann probability (:meth:`Metric.lehmann_event`), cached."""
    from tablegen.compute.exact.power import boundary_cost
    from tablegen.compute.limits import check_memory, check_time
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.stats import upper_tail_probability

    entry = get_metric(metric)
    if not entry.power_exact_at(P, N):
        raise TablegenInputError.naming(Argument("P", P), ", ", Argument("N", N), f": no exact Lehmann power of "
                                        f"{metric} at this size (average precision: only where its null enumerates "
                                        "every arrangement; AUC: within the budget of the law of U along the lattice,"
                                        " about 375 x 375); ask model='binormal' for a Monte Carlo answer")
    seconds, memory = boundary_cost(P, N, entry.k)
    critical_seconds, critical_memory = entry.exact_cost(P, N)
    what = f"exact power of {metric} at P = {P:,}, N = {N:,}"
    check_memory(max(memory, critical_memory), what, "ask a smaller test set")
    check_time(seconds + critical_seconds, what, "ask a smaller test set")
    return entry.lehmann_event(P, N, float(upper_tail_probability(C, alpha)))


def _of_winners(single: float, winners: int) -> float:
    """1 - (1 - single)**winners, without cancellation."""
    if single >= 1.0:
        return 1.0
    return float(-math.expm1(winners * math.log1p(-single)))


def _lehmann_power(metric: str, P: int, N: int, C: int, alpha: float, k: float, winners: int) -> tuple[float, float]:
    """(power, m*) under the Lehmann alternative with exponent k."""
    event = _event(metric, P, N, C, alpha)
    return _of_winners(event.probability(k), winners), event.critical_value


# -- results ---------------------------------------------------------------------------------------------
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
        ``"exact"`` or ``"monte carlo"``.
    ci_low, ci_high : float
        The 95% interval (Monte Carlo); equal to ``power`` when exact.
    critical_value : float
        m*, the value a model must exceed.
    replicates : int or None
        R behind a Monte Carlo answer.

    Examples
    --------
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

    def __float__(self) -> float:
        return float(self.power)

    def sentence(self) -> str:
        """One plain sentence with the answer.

        Examples
        --------
        >>> print(power("auc", 20, 20, C=1, alpha=0.05, auc=0.7).sentence())  # doctest: +NORMALIZE_WHITESPACE
        A model of AUC 0.7 (Lehmann alternative) scores auc > 0.6525 at P = 20, N = 20 with probability
        0.7180 (exact): the power of the test at alpha = 0.05 against the best of 1 random classifier.
        """
        who = ("A model" if self.winners == 1 else f"At least one of {self.winners:,} models")
        interval = ("exact" if self.method == "exact"
                    else f"Monte Carlo, 95% interval [{self.ci_low:.4f}, {self.ci_high:.4f}], R = {self.replicates:,}")
        others = (f"the best of {self.C:,} random classifier{'s' if self.C != 1 else ''}" if self.winners == 1
                  else f"the best of {self.C:,} classifiers")
        return (f"{who} of AUC {self.auc:g} ({self.model.capitalize()} alternative) scores {self.metric} > "
                f"{self.critical_value:.4g} at P = {self.P:,}, N = {self.N:,} with probability {self.power:.4f} "
                f"({interval}): the power of the test at alpha = {self.alpha:g} against {others}.")

    def to_dict(self) -> dict:
        """JSON-ready fields.

        Examples
        --------
        >>> sorted(power("auc", 20, 20, auc=0.8).to_dict())[:3]
        ['C', 'N', 'P']
        """
        return asdict(self)


@dataclass(frozen=True)
class SampleSizeResult:
    """The smallest test set whose exact power reaches a target.

    Attributes
    ----------
    metric : str
    auc, alpha, target : float
    C, winners : int
    first_P, first_N : int
        The first size (in the search's order) whose power reaches the target.
    first_power : float
    stable_P, stable_N : int
        The size from which every size reaches the target, through ``checked_P``, ``checked_N``
        (power is saw-toothed: it can fall back below after ``first``).
    stable_power : float
    checked_P, checked_N : int
        The largest size scanned after ``stable``.
    evaluations : int
        Sizes at which the exact power was computed.
    method : str
        ``"exact"``.

    Examples
    --------
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
    stable_P: int
    stable_N: int
    stable_power: float
    checked_P: int
    checked_N: int
    evaluations: int
    method: str = "exact"

    def sentence(self) -> str:
        """One plain sentence with the answer.

        Examples
        --------
        >>> sample_size("auc", auc=0.7, C=10, alpha=0.05, prevalence=0.5).sentence()[:61]
        'A model of AUC 0.7 reaches power 0.8 against the best of 10 r'
        """
        text = (f"A model of AUC {self.auc:g} reaches power {self.target:g} against the best of {self.C:,} random "
                f"classifiers at alpha = {self.alpha:g} ({self.metric}, exact Lehmann power) first at P = "
                f"{self.first_P:,}, N = {self.first_N:,} (power {self.first_power:.4f})")
        if (self.stable_P, self.stable_N) == (self.first_P, self.first_N):
            return text + (f", and at every larger size checked, through P = {self.checked_P:,}, "
                           f"N = {self.checked_N:,}.")
        return text + (f"; it falls back below at some larger sizes, and stays at or above the target from P = "
                       f"{self.stable_P:,}, N = {self.stable_N:,} (power {self.stable_power:.4f}) through P = "
                       f"{self.checked_P:,}, N = {self.checked_N:,}.")

    def to_dict(self) -> dict:
        """JSON-ready fields.

        Examples
        --------
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
        The smallest AUC whose power reaches the target, to :data:`AUC_TOLERANCE`: the power at ``auc``
        reaches it and the power at ``auc_below`` (= auc - tolerance or less) does not (both 0.5 when even the
        null, AUC 0.5, reaches a target as low as the test's size).
    auc_below : float
    k : float
        Lehmann k = auc/(1 - auc).
    power : float
        The exact power at ``auc``.
    metric_value : float
        The metric's value at that alternative on its quantile ranking (:func:`typical_value`).
    critical_value : float
        m*.
    method : str
        ``"exact"``.

    Examples
    --------
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

    def sentence(self) -> str:
        """One plain sentence with the answer.

        Examples
        --------
        >>> minimum_detectable("auc", 50, 50, C=10, alpha=0.05).sentence()[:53]
        'With P = 50, N = 50 the test of auc against the best '
        """
        return (f"With P = {self.P:,}, N = {self.N:,} the test of {self.metric} against the best of {self.C:,} "
                f"random classifiers at alpha = {self.alpha:g} detects, with power {self.target:g}, a model of AUC "
                f"{self.auc:.4f} or more (Lehmann alternative, k = {self.k:.4g}; exact), whose {self.metric} on its "
                f"quantile ranking is {self.metric_value:.4g}; the critical value is {self.critical_value:.4g}.")

    def to_dict(self) -> dict:
        """JSON-ready fields.

        Examples
        --------
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
        >>> max_models("best_accuracy", 100, 100, auc=0.65, alpha=0.05).to_dict()["bound"]
        1000000000000
        """
        return asdict(self)


# -- public ------------------------------------------------------------------------------------------------
def power(metric: str, P: int, N: int, C: int = 1, alpha: float = 0.01, *, auc: float, model: str = "lehmann",
          winners: int | str = 1, R: int | None = None, seed: int | None = None) -> PowerResult:
    """Power of the best-of-C test against a model of given AUC: Pr(its metric > m*).

    Parameters
    ----------
    metric : str
        Any metric with a power model (every metric of :mod:`tablegen.compute.metrics`).
    P, N : int
        Positives and negatives of the test set.
    C : int
        Models tried on the test set (default 1).
    alpha : float
        Level of the test, in (0, 1) (default 0.01, the level of Forman & Cohen's tables and of the bundled table,
        as for :func:`tablegen.critical_value`, whose critical value the power is computed against).
    auc : float
        The alternative's AUC, in [0.5, 1) (0.5: the null, the power is the test's exact size).
    model : {"lehmann", "binormal"}
        ``"lehmann"``: exact (positives' CDF F**k, k = AUC/(1 - AUC)); ``"binormal"``: Monte Carlo with its
        95% interval (positives N(d, 1), negatives N(0, 1), AUC = Phi(d/sqrt 2)).
    winners : int or "all"
        1 (default): one informative model among C, the power that its own score clears m*; w or ``"all"``
        (= C): w equally good models, the power that at least one clears it (module docstring).
    R, seed : int, optional
        Replicates and root seed of a binormal answer (default: R for a 95% interval of +-0.005).

    Returns
    -------
    PowerResult

    Raises
    ------
    TablegenInputError
        Bad input, naming the argument; a cell beyond the exact Lehmann programme's domain (average precision
        beyond its enumeration, AUC beyond :data:`tablegen.compute.exact.power.AUC_POWER_BUDGET`), naming P, N.

    Examples
    --------
    >>> result = power("auc", 20, 20, C=1, alpha=0.05, auc=0.7)
    >>> round(result.power, 4), result.method, result.ci_low == result.power
    (0.718, 'exact', True)
    >>> round(power("auc", 20, 20, C=10, alpha=0.05, auc=0.7, winners="all").power, 4)
    0.9855
    """
    from tablegen.compute.exact.power import lehmann_k

    metric = _check_power_metric(metric)
    P, N = check_class_size("P", P), check_class_size("N", N)
    C, alpha, auc = check_competitors(C), check_alpha("alpha", alpha), check_auc(auc)
    model, winners = _check_model(model), _check_winners(winners, C)
    if model == "binormal":
        return _binormal(metric, P, N, C, alpha, auc, winners, R, seed)
    k = lehmann_k(auc)
    value, m_star = _lehmann_power(metric, P, N, C, alpha, k, winners)
    return PowerResult(metric, P, N, C, alpha, auc, model, k, winners, value, "exact", value, value, m_star)


def _binormal(metric: str, P: int, N: int, C: int, alpha: float, auc: float, winners: int, R, seed) -> PowerResult:
    """Monte Carlo power under the binormal alternative, m* from :func:`tablegen.critical_value`."""
    from tablegen.compute.cell import DEFAULT_SEED
    from tablegen.compute.power_mc import binormal_power, separation_of_auc
    from tablegen.lookup.api import critical_value

    d = separation_of_auc(auc)
    cv = critical_value(metric, P, N, C=C, alpha=alpha)
    found = binormal_power(metric, P, N, float(cv), d, R=R, seed=DEFAULT_SEED if seed is None else seed)
    low, estimate, high = (_of_winners(x, winners) for x in (found.ci_low, found.power, found.ci_high))
    return PowerResult(metric, P, N, C, alpha, auc, "binormal", d, winners, estimate, "monte carlo", low, high,
                       float(cv), found.R)


def _lehmann_only(model) -> None:
    if _check_model(model) != "lehmann":
        raise TablegenInputError.naming(Argument("model", model), ": the planners search exact power, which only "
                                        "the Lehmann alternative has; use model='lehmann', or power() for "
                                        "the binormal alternative at given sizes")


def _cells(prevalence, P, N):
    """(the free size's name, the smallest index, index -> (P, N)) for the search of :func:`sample_size`."""
    given = [name for name, value in (("prevalence", prevalence), ("P", P), ("N", N)) if value is not None]
    if len(given) != 1:
        raise TablegenInputError.naming("give exactly one of ", Argument("prevalence"), ", ", Argument("P"), " or ",
                                        Argument("N"), f" (got {', '.join(given) or 'none'})")
    if prevalence is not None:
        prevalence = _check_unit("prevalence", prevalence, 0.0, False, "(0, 1)")

        def cell(n):
            positives = min(max(1, math.floor(prevalence * n + 0.5)), n - 1)
            return positives, n - positives

        return "total sizes P + N", 2, cell
    if P is not None:
        fixed = check_class_size("P", P)
        return "values of N", 1, lambda n: (fixed, n)
    fixed = check_class_size("N", N)
    return "values of P", 1, lambda n: (n, fixed)


def sample_size(metric: str, *, auc: float, C: int = 1, alpha: float = 0.01, power: float = 0.8,
                prevalence: float | None = None, P: int | None = None, N: int | None = None,
                model: str = "lehmann", winners: int | str = 1, max_size: int = DEFAULT_MAX_SIZE) -> SampleSizeResult:
    """The smallest test set whose exact power against a model of AUC ``auc`` reaches ``power``.

    The size grows along one line: the total n = P + N at a ``prevalence`` (P = the nearest integer to
    prevalence n, at least 1 and at most n - 1), or the free class with ``P`` or ``N`` fixed.  Exact power is
    saw-toothed in the size, so two sizes are reported: the first that reaches the target and the one from
    which every size does (through the last size scanned).  Search: doubling from the smallest size until the
    target is reached, bisection to a size n_b that reaches it while n_b - 1 does not, then scans (the last
    step): down from n_b while any of the last W sizes reaches the target (W = max(16, n_b/16)), and up from
    n_b until W sizes in a row reach it.  Where the doubling reaches ``max_size`` below the target, the W sizes below
    the bound are scanned for one that reaches it.

    Parameters
    ----------
    metric : str
    auc : float
        The alternative's AUC, in [0.5, 1).
    C, alpha, winners, model :
        As for :func:`power` (``alpha``: default 0.01, the level of Forman & Cohen's tables; ``model="lehmann"``
        only: the search needs exact power).
    power : float
        The target, in (0, 1) (default 0.8).
    prevalence, P, N :
        Exactly one: the prevalence P/(P + N) in (0, 1), or the fixed number of positives or negatives.
    max_size : int
        The largest size searched (default 100,000).

    Returns
    -------
    SampleSizeResult

    Raises
    ------
    TablegenInputError
        Bad input, naming the argument; a target not reached at the sizes searched up to ``max_size`` (or within
        the exact programme's domain), or reached but missed again at ``max_size``, naming ``max_size``.

    Examples
    --------
    >>> result = sample_size("best_f1", auc=0.7, C=100, alpha=0.05, N=200)
    >>> result.first_P, round(result.first_power, 4)
    (52, 0.8087)
    """
    from tablegen.compute.exact.power import lehmann_k

    metric = _check_power_metric(metric)
    auc, target = check_auc(auc), check_power(power)
    C, alpha = check_competitors(C), check_alpha("alpha", alpha)
    _lehmann_only(model)
    winners = _check_winners(winners, C)
    what, smallest, cell = _cells(prevalence, P, N)
    from tablegen.compute.validation import check_integer

    max_size = check_integer("max_size", max_size, smallest)
    k = lehmann_k(auc)
    seen: dict[int, float] = {}

    def g(n: int) -> float:
        if n not in seen:
            try:
                seen[n] = _lehmann_power(metric, *cell(n), C, alpha, k, winners)[0]
            except TablegenInputError as error:
                raise TablegenInputError.naming(f"the search for the sample size reached P, N = {cell(n)} before the "
                                                f"target power, beyond the exact programme ({error}); lower ",
                                                Argument("max_size"), f" below {n:,}, or ask power() "
                                                "at given sizes with model='binormal'") from None
        return seen[n]

    lo, hi = None, smallest
    while g(hi) < target:
        if hi >= max_size:
            floor = max(max_size - max(16, max_size // 16), smallest if lo is None else lo)
            reached = _below_bound(g, target, floor, max_size)
            if reached is None:
                raise TablegenInputError.naming(
                    f"the power of {metric} does not reach {target:g} at the {what} searched up to ",
                    Argument("max_size", max_size), f" (doubling from {smallest}, then every one from {floor} to the "
                    f"bound; {g(max_size):.4f} at the bound); raise it")
            lo, hi = reached - 1, reached
            break
        lo, hi = hi, min(2 * hi, max_size)
    while lo is not None and hi - lo > 1:
        middle = (lo + hi) // 2
        lo, hi = (lo, middle) if g(middle) >= target else (middle, hi)
    window = max(16, hi // 16)
    first, below_run, n = hi, 0, hi - 1
    while n >= smallest and below_run < window:
        if g(n) >= target:
            first, below_run = n, 0
        else:
            below_run += 1
        n -= 1
    stable, above_run, n = hi, 0, hi
    while above_run < window and n <= max_size:
        if g(n) >= target:
            above_run += 1
        else:
            stable, above_run = n + 1, 0
        n += 1
    checked = n - 1
    if stable > max_size:  # the last size scanned, at the bound, misses the target again
        raise TablegenInputError.naming(f"the power of {metric} reaches {target:g} at P, N = {cell(first)} but falls "
                                        f"back below it at the bound, ", Argument("max_size", max_size),
                                        "; raise it to find where it stays above")
    return SampleSizeResult(metric, auc, C, alpha, target, winners, *cell(first), g(first), *cell(stable), g(stable),
                            *cell(checked), len(seen))


def _below_bound(g, target: float, floor: int, bound: int):
    """The largest size in [floor, bound) whose power reaches the target, or None: where the doubling reached the
    bound without reaching the target."""
    for n in range(bound - 1, floor - 1, -1):
        if g(n) >= target:
            return n
    return None


def minimum_detectable(metric: str, P: int, N: int, C: int = 1, alpha: float = 0.01, power: float = 0.8,
                       model: str = "lehmann", winners: int | str = 1) -> DetectableResult:
    """The smallest AUC (Lehmann k) that the best-of-C test at (P, N) detects with the target power.

    Exact power rises with k (a larger k moves positives up the ranking, and every metric rises when a
    positive moves above a negative), so the AUC is found by bisection to :data:`AUC_TOLERANCE`.

    Parameters
    ----------
    metric, P, N, C, alpha, winners :
        As for :func:`power` (``alpha``: default 0.01, the level of Forman & Cohen's tables).
    power : float
        The target, in (0, 1) (default 0.8).
    model : {"lehmann"}
        The search needs exact power: the Lehmann alternative.

    Returns
    -------
    DetectableResult

    Raises
    ------
    TablegenInputError
        Bad input, naming the argument; a test that detects nothing with that power (m* at the metric's
        maximum, or a power that stays below the target as AUC -> 1), naming ``power``.

    Examples
    --------
    >>> result = minimum_detectable("best_f1", 100, 100, C=100, alpha=0.05)
    >>> round(result.auc, 4), round(result.metric_value, 4)
    (0.6695, 0.699)
    """
    from tablegen.compute.exact.power import lehmann_k

    metric = _check_power_metric(metric)
    P, N = check_class_size("P", P), check_class_size("N", N)
    C, alpha, target = check_competitors(C), check_alpha("alpha", alpha), check_power(power)
    _lehmann_only(model)
    winners = _check_winners(winners, C)

    def g(auc: float) -> float:
        return _lehmann_power(metric, P, N, C, alpha, lehmann_k(auc), winners)[0]

    low, high = 0.5, 1.0 - 1e-9
    if g(high) < target:
        raise TablegenInputError.naming(f"no model of AUC below 1 reaches power {target:g} with {metric} at P = {P:,}, "
                                        f"N = {N:,}, C = {C:,} (at AUC = 1 - 1e-9 the power is {g(high):.4g}); lower ",
                                        Argument("power", target), " or C")
    if g(low) >= target:
        high = low
    while high - low > AUC_TOLERANCE:
        middle = 0.5 * (low + high)
        low, high = (low, middle) if g(middle) >= target else (middle, high)
    k = lehmann_k(high)
    event = _event(metric, P, N, C, alpha)
    return DetectableResult(metric, P, N, C, alpha, target, winners, high, low, k, g(high),
                            typical_value(metric, P, N, k), event.critical_value, "exact")


def max_models(metric: str, P: int, N: int, *, auc: float, alpha: float = 0.01, power: float = 0.8,
               model: str = "lehmann", bound: int = DEFAULT_MAX_C) -> MaxModelsResult:
    """How many models can be tried on (P, N) while one of AUC ``auc`` is still detected with the target power.

    The power of one informative model (``winners=1``) falls as C grows (m* rises with C), so the answer is
    the largest C whose exact power reaches the target: doubling, then bisection over the integers.  The
    number to budget a hyper-parameter search on one test set.

    Parameters
    ----------
    metric, P, N, alpha :
        As for :func:`power` (``alpha``: default 0.01, the level of Forman & Cohen's tables).
    auc : float
        The AUC of the model to detect, in [0.5, 1).
    power : float
        The target, in (0, 1) (default 0.8).
    model : {"lehmann"}
        The search needs exact power.
    bound : int
        The largest C searched (default 10**12).

    Returns
    -------
    MaxModelsResult

    Examples
    --------
    >>> max_models("best_balanced_accuracy", 200, 200, auc=0.65, alpha=0.05).C
    866
    """
    from tablegen.compute.exact.power import lehmann_k
    from tablegen.compute.validation import check_integer

    metric = _check_power_metric(metric)
    P, N = check_class_size("P", P), check_class_size("N", N)
    alpha, auc, target = check_alpha("alpha", alpha), check_auc(auc), check_power(power)
    _lehmann_only(model)
    bound = check_competitors(check_integer("bound", bound, 1))
    k = lehmann_k(auc)

    def g(C: int) -> float:
        return _lehmann_power(metric, P, N, C, alpha, k, 1)[0]

    if g(1) < target:
        return MaxModelsResult(metric, P, N, auc, alpha, target, 0, g(1), None, bound)
    lo, hi = 1, 2
    while hi <= bound and g(hi) >= target:
        lo, hi = hi, 2 * hi
    if hi > bound:
        if g(bound) >= target:
            return MaxModelsResult(metric, P, N, auc, alpha, target, bound, g(bound), None, bound)
        hi = bound
    while hi - lo > 1:  # g(lo) >= target > g(hi)
        middle = (lo + hi) // 2
        lo, hi = (middle, hi) if g(middle) >= target else (lo, middle)
    return MaxModelsResult(metric, P, N, auc, alpha, target, lo, g(lo), g(hi), bound)


def typical_value(metric: str, P: int, N: int, k: float) -> float:
    """The metric on the Lehmann alternative's *quantile ranking*: negatives' scores at the uniform quantiles
    (j - 1/2)/N', positives' at ((i - 1/2)/P')**(1/k), ranked.  For the metrics of rates the cell is scaled
    to about :data:`TYPICAL_ITEMS` items at its prevalence (P' = s P, N' = s N), where this is the metric of
    the alternative's ROC curve to about 1/(P' + N'); for TP@k and precision@k (a fixed cut-off) it is the
    cell itself.  A description of the alternative, not a probability.

    Examples
    --------
    >>> round(typical_value("auc", 50, 50, 3.0), 4)
    0.75
    """
    from tablegen.compute.metrics import get_metric

    entry = get_metric(metric)
    scale = 1 if entry.k is not None else max(1, TYPICAL_ITEMS // (P + N))
    positives, negatives = P * scale, N * scale
    scores = np.concatenate([((np.arange(positives) + 0.5) / positives) ** (1.0 / k),
                             (np.arange(negatives) + 0.5) / negatives])
    labels = np.zeros(positives + negatives, dtype=np.uint8)
    labels[:positives] = 1
    ranked = labels[np.argsort(-scores, kind="stable")]
    return float(entry.reference_scores(ranked[None, :], positives, negatives)[0])
