"""The report's power line: the smallest AUC the test set detects with 80% power, so that a verdict that is not
significant says whether the test set could have seen anything.

For each metric of :func:`tablegen.evaluate`, at the report's (P, N), C and alpha: the smallest AUC of a model
(Lehmann alternative: positives' scores have CDF F**k, negatives' F, k = AUC/(1 - AUC)) whose exact power against
the best-of-C critical value reaches :data:`TARGET_POWER`, bracketed to :data:`AUC_TOLERANCE`
(:func:`tablegen.power`, exact only; :func:`tablegen.minimum_detectable` brackets it to 1e-7, some 25 evaluations
where this takes 3 to 8).  The search runs only where its estimated cost fits :data:`BUDGET_SECONDS`; elsewhere, and
beyond the exact programme's domain (AUC beyond about 375 x 375, average precision beyond its enumeration), the
report says so in a note: never an approximation called exact.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

#: The power the line is for.
TARGET_POWER = 0.8
#: The bracket's width in AUC: the reported AUC reaches the target, and one at most this much below does not.
AUC_TOLERANCE = 1e-3
#: The largest AUC searched: a power that stays below the target there is "nothing detectable".
AUC_MAX = 1.0 - 1e-9
#: Exact power evaluations charged to the search in its estimate: those of a plain bisection, one at
#: :data:`AUC_MAX` and log2(0.5 / 1e-3) rounded up (the guided search takes fewer: 119 against 300 over 30 random
#: cells, 3 to 8 each but one of 11).
EVALUATIONS = 1 + math.ceil(math.log2(0.5 / AUC_TOLERANCE))
#: The estimated single-core seconds one metric's line may take in a report (the estimates run 2-3x above the
#: times measured: a line within it takes well under a second); over it, the report says so in a note.
BUDGET_SECONDS = 1.0


@dataclass(frozen=True)
class DetectableAUC:
    """The smallest AUC a metric's test at (P, N), C, alpha detects with the target power (exact, Lehmann).

    Attributes
    ----------
    metric : str
    auc : float
        An AUC whose exact power reaches ``target`` (power rises with the AUC, so every larger AUC does too).
    auc_below : float
        An AUC at most :data:`AUC_TOLERANCE` below ``auc`` whose power does not (0.5, the null, when
        ``auc`` is 0.5).
    power : float
        The exact power at ``auc``.
    target : float
    critical_value : float
        m*, the value a model must exceed.
    evaluations : int
        Exact power evaluations the search took.
    method : str
        ``"exact"``.

    Examples
    --------
    >>> line = detectable_auc("best_f1", 50, 50, 10, 0.05)
    >>> line.auc_below < line.auc <= line.auc_below + AUC_TOLERANCE, line.power >= 0.8
    (True, True)
    """

    metric: str
    auc: float
    auc_below: float
    power: float
    target: float
    critical_value: float
    evaluations: int
    method: str = "exact"

    def sentence(self) -> str:
        """The line in words (the AUC rounded up to 3 decimals: it still reaches the target).

        Examples
        --------
        >>> detectable_auc("auc", 50, 50, 10, 0.05).sentence()[42:89]
        'detects a model of AUC 0.693 or more with power'
        """
        shown = math.ceil(self.auc * 1000 - 1e-9) / 1000
        return (f"At this size, C and alpha the test on {self.metric} detects a model of AUC {shown:.3f} or more with "
                f"power at least {self.target:g} (exact, Lehmann alternative)")

    def to_dict(self) -> dict:
        """Plain Python values (JSON-ready).

        Examples
        --------
        >>> detectable_auc("auc", 50, 50, 10, 0.05).to_dict()["method"]
        'exact'
        """
        return asdict(self)


def estimated_seconds(metric: str, P: int, N: int) -> float | None:
    """Estimated single-core seconds of the search at (P, N), or None where the exact programme does not run.

    Examples
    --------
    >>> estimated_seconds("best_f1", 5000, 5000) > estimated_seconds("best_f1", 50, 50)
    True
    >>> estimated_seconds("auc", 10_000, 10_000) is None
    True
    """
    from tablegen.compute.metrics import get_metric

    entry = get_metric(metric)
    if not entry.power_exact_at(P, N):
        return None
    return entry.exact_cost(P, N)[0] + EVALUATIONS * entry.power_cost(P, N)[0]


def detectable_auc(metric: str, P: int, N: int, C: int, alpha: float, target: float = TARGET_POWER) -> DetectableAUC:
    """The smallest AUC whose exact Lehmann power reaches ``target``, bracketed to :data:`AUC_TOLERANCE`.

    Power rises with the AUC (docs/explanation/power.md), so a bisection keeps the answer in [auc_below, auc]:
    from [0.5, :data:`AUC_MAX`] to a width of :data:`AUC_TOLERANCE` (at 0.5, the null, the power is the test's size,
    at most alpha: evaluated only where alpha reaches the target).  Its last bracket depends only on where the power
    crosses the target, so the search guesses it first (:func:`_probe`: the normal approximation of the AUC test's
    power, then secants through the evaluations) and evaluates the bracket's ends; the bisection then runs deciding
    each middle from the evaluations where they already tell (a middle above an AUC that reaches the target reaches
    it) and evaluating the others: the same bracket, power and critical value as evaluating every middle (30 random
    cells checked), in 3 to 8 evaluations instead of 10 (a regula falsi on its own took 8 to 16: power is flat near
    both ends).

    Raises
    ------
    TablegenInputError
        Where the exact programme does not run at (P, N), or no AUC below 1 reaches the target (the message says
        which).

    Examples
    --------
    >>> line = detectable_auc("auc", 50, 50, 10, 0.05)
    >>> round(line.auc, 3), line.evaluations
    (0.692, 4)
    """
    from tablegen import power
    from tablegen.errors import TablegenInputError

    seen = {}

    def g(auc: float) -> float:
        result = power(metric, P, N, C, alpha, auc=auc)
        if result.method != "exact":  # never a Monte Carlo value called exact
            raise TablegenInputError(f"no exact power of {metric} at P = {P:,}, N = {N:,}")
        seen[auc] = result
        return result.power

    known = _Known(target)
    if alpha >= target and g(0.5) >= target:  # the size is at most alpha: below a target above alpha
        return DetectableAUC(metric, 0.5, 0.5, seen[0.5].power, target, seen[0.5].critical_value, len(seen))
    _probe(known, g, *_first_guess(P, N, C, alpha, target))
    if known.above is None and known.learn(AUC_MAX, g(AUC_MAX)) is False:
        raise TablegenInputError(f"no model of AUC below 1 reaches power {target:g} on {metric} at P = {P:,}, "
                                 f"N = {N:,}, C = {C:,}, alpha = {alpha:g} (power {seen[AUC_MAX].power:.4g} at AUC "
                                 f"1 - 1e-9)")
    low, high = 0.5, AUC_MAX
    while high - low > AUC_TOLERANCE:
        middle = 0.5 * (low + high)
        low, high = (low, middle) if known.reaches(middle, g) else (middle, high)
    found = seen[high] if high in seen else (g(high), seen[high])[1]
    return DetectableAUC(metric, found.auc, low, found.power, target, found.critical_value, len(seen))


class _Known:
    """What the evaluations so far say, power rising with the AUC: the largest AUC evaluated below the target
    (``below``; 0.5, the null, to start) and the smallest evaluated at or above it (``above``)."""

    def __init__(self, target: float):
        self.target, self.below, self.above = target, 0.5, None

    def learn(self, auc: float, value: float) -> bool:
        """Record one evaluation; whether it reaches the target."""
        if value >= self.target:
            self.above = auc if self.above is None else min(self.above, auc)
            return True
        self.below = max(self.below, auc)
        return False

    def known(self, auc: float) -> bool | None:
        """Whether ``auc``'s power reaches the target, where the evaluations already say (else None)."""
        if self.above is not None and auc >= self.above:
            return True
        return False if auc <= self.below else None

    def reaches(self, auc: float, g) -> bool:
        """Whether ``auc``'s power reaches the target: known, or evaluated now."""
        answer = self.known(auc)
        return self.learn(auc, g(auc)) if answer is None else answer


#: Guesses before the bisection (each evaluates the ends of the bisection's last bracket around the guess that are
#: not yet known).
PROBES = 8


def _cell(auc: float) -> tuple[float, float]:
    """The bisection's last bracket around ``auc``: the halvings of [0.5, :data:`AUC_MAX`], each keeping the half that
    holds it, to :data:`AUC_TOLERANCE` (the same floats as the search's middles)."""
    low, high = 0.5, AUC_MAX
    while high - low > AUC_TOLERANCE:
        middle = 0.5 * (low + high)
        low, high = (low, middle) if auc <= middle else (middle, high)
    return low, high


def _probe(known: _Known, g, guess: float, slope: float) -> None:
    """Evaluate the ends of the bisection's last bracket around ``guess``, then around a guess from the evaluations
    (a secant of the power's normal quantile against the AUC, through the evaluations nearest the target on either
    side; after one evaluation, with ``slope``), up to :data:`PROBES` times or until the bracket's ends straddle the
    target.  Every point evaluated is one of the bisection's middles, so the bisection that follows reaches the
    bracket it would have reached evaluating every middle (power rises with the AUC), evaluating none of the middles
    already decided."""
    from statistics import NormalDist

    quantile = NormalDist().inv_cdf
    aim = quantile(known.target)
    points = {}  # AUC -> the normal quantile of its power
    for _ in range(PROBES):
        low, high = _cell(min(max(guess, 0.5), AUC_MAX))
        for end in (high, low):
            if known.known(end) is None:
                value = g(end)
                known.learn(end, value)
                points[end] = quantile(min(max(value, 1e-12), 1 - 1e-12))
        if known.below == low and known.above == high:
            return
        if not points:
            return
        under = [x for x in points if points[x] < aim]
        over = [x for x in points if points[x] >= aim]
        if under and over:
            x1, x2 = max(under), min(over)
        elif len(points) >= 2:
            x1, x2 = sorted(points, key=lambda x: abs(points[x] - aim))[:2]
        else:
            x1 = next(iter(points))
            guess = x1 + (aim - points[x1]) * slope
            continue
        if points[x1] == points[x2]:
            return
        guess = x1 + (aim - points[x1]) * (x2 - x1) / (points[x2] - points[x1])


def _first_guess(P: int, N: int, C: int, alpha: float, target: float) -> tuple[float, float]:
    """(where the AUC test's own power crosses ``target`` by the normal approximation, 0.5 + (z of the best-of-C
    critical value + z of the power) times the null's standard deviation of the AUC; that deviation, the AUC per
    unit of the power's normal quantile there).  A starting point only."""
    from statistics import NormalDist

    from tablegen.compute.stats import upper_tail_probability

    quantile = NormalDist().inv_cdf
    tail = float(upper_tail_probability(C, alpha))
    sd = math.sqrt((P + N + 1) / (12.0 * P * N))
    return 0.5 + (quantile(1.0 - tail) + quantile(target)) * sd, sd


def detectable_line(metric: str, P: int, N: int, C: int, alpha: float,
                    budget: float = BUDGET_SECONDS) -> tuple[DetectableAUC | None, tuple[str, ...]]:
    """The report's line for one metric, or None and a note saying why there is none (beyond the exact programme,
    over ``budget`` estimated seconds, or nothing detectable).

    Examples
    --------
    >>> line, notes = detectable_line("auc", 10_000, 10_000, 10, 0.05, budget=1.0)
    >>> line, notes[0][:54]
    (None, 'no minimum detectable AUC: exact Lehmann power of auc ')
    """
    from tablegen.errors import TablegenInputError

    seconds = estimated_seconds(metric, P, N)
    call = f"tablegen.minimum_detectable({metric!r}, {P}, {N}, C={C}, alpha={alpha:g})"
    if seconds is None:
        return None, (f"no minimum detectable AUC: exact Lehmann power of {metric} is not computed at P = {P:,}, "
                      f"N = {N:,} (beyond the exact programme's domain)",)
    if seconds > budget:
        return None, (f"no minimum detectable AUC in this report: its exact search on {metric} would take about "
                      f"{seconds:.3g} s, over the report's {budget:.3g} s for it; {call} computes it",)
    try:
        return detectable_auc(metric, P, N, C, alpha), ()
    except TablegenInputError as error:
        return None, (f"no minimum detectable AUC: {error}",)
