"""The report's power line: the smallest AUC the test set detects with 80% power, so that a verdict that is not
significant says whether the test set could have seen anything.

For each metric of :func:`tablegen.evaluate`, at the report's (P, N), C and alpha: the smallest AUC of a model
(Lehmann alternative: positives' scores have CDF F**k, negatives' F, k = AUC/(1 - AUC)) whose exact power against
the best-of-C critical value reaches :data:`TARGET_POWER`, bracketed to :data:`AUC_TOLERANCE`
(:func:`tablegen.power`, exact only; :func:`tablegen.minimum_detectable` brackets it to 1e-7, some 25 evaluations
where this takes 10).  The search runs only where its estimated cost fits :data:`BUDGET_SECONDS`; elsewhere, and
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
#: Exact power evaluations of the search: one at :data:`AUC_MAX`, then a bisection of [0.5, AUC_MAX] to
#: :data:`AUC_TOLERANCE` (log2(0.5 / 1e-3) rounded up).
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
    from [0.5, :data:`AUC_MAX`] to a width of :data:`AUC_TOLERANCE`, 9 exact evaluations after the one at
    :data:`AUC_MAX` (at 0.5, the null, the power is the test's size, at most alpha: evaluated only where alpha
    reaches the target).  A regula falsi took 8 to 16 here (power is flat near both ends).

    Raises
    ------
    TablegenInputError
        Where the exact programme does not run at (P, N), or no AUC below 1 reaches the target (the message says
        which).

    Examples
    --------
    >>> line = detectable_auc("auc", 50, 50, 10, 0.05)
    >>> round(line.auc, 3), line.evaluations
    (0.692, 10)
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

    low, high = 0.5, AUC_MAX
    if g(high) < target:
        raise TablegenInputError(f"no model of AUC below 1 reaches power {target:g} on {metric} at P = {P:,}, "
                                 f"N = {N:,}, C = {C:,}, alpha = {alpha:g} (power {seen[high].power:.4g} at AUC "
                                 f"1 - 1e-9)")
    if alpha >= target and g(low) >= target:  # the size is at most alpha: below a target above alpha
        high = low
    while high - low > AUC_TOLERANCE:
        middle = 0.5 * (low + high)
        low, high = (low, middle) if g(middle) >= target else (middle, high)
    found = seen[high]
    return DetectableAUC(metric, found.auc, low, found.power, target, found.critical_value, len(seen))


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
