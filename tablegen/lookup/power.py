"""Plan a test set: power, sample size, minimum detectable effect and how many models a test set can take.

Power is Pr(a model's metric > m*), m* the critical value of the best-of-C test (the test's own rule:
significant iff m > m*; :func:`tablegen.critical_value` with ``method="exact"``).  Under the **Lehmann
alternative** (``model="lehmann"``, the default: positives' scores have CDF F**k, negatives' F,
k = AUC/(1 - AUC)) it is exact (:mod:`tablegen.compute.exact.power`) wherever the exact programme runs, and
beyond it (AUC beyond about 375 x 375, average precision beyond its enumeration) a Monte Carlo estimate with its
95% interval, method ``"monte carlo"`` (:func:`tablegen.compute.power_mc.lehmann_power`); under the **binormal**
one (``model="binormal"``: positives N(d, 1), negatives N(0, 1), AUC = Phi(d/sqrt 2)) always a Monte Carlo
estimate (:mod:`tablegen.compute.power_mc`).  A Monte Carlo answer takes m* from :func:`tablegen.critical_value`
(exact where an exact null exists; otherwise the table's or a simulation's estimate, and the result says so:
``critical_method``, ``critical_ci_low``, ``critical_ci_high``).

Two questions (``winners``):

- ``winners=1`` (default): one informative model among C tried, the others learned nothing.  Power is
  the probability that *this model's own* score clears m*: Pr(X > m*).  (The test may also come out
  significant because a useless model won; that happens with probability at most alpha.)
- ``winners="all"`` (or an integer w <= C): w equally good models of that AUC among the C.  Power is the
  probability that at least one of them clears m*, 1 - (1 - Pr(X > m*))**w; with ``"all"``, w = C and
  it is the probability that the winner of C equally good models is significant.

Exact power is saw-toothed in the test-set size: m* moves in steps of the lattice, so adding an item can
lower the power.  :func:`tablegen.sample_size` reports both the first size that reaches the target and the size
from which it stays there (``docs/explanation/power.md``); the planners live in :mod:`tablegen.lookup.planning`,
the results in :mod:`tablegen.lookup.power_results`.
"""


from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from tablegen.compute.stats import of_winners  # re-exported: the planners import it from here
from tablegen.compute.validation import check_alpha, check_class_size, check_competitors, check_metric
from tablegen.errors import Argument, TablegenInputError
from tablegen.lookup.power_results import PowerResult

#: Models: exact Lehmann power (Monte Carlo beyond the exact programme), or Monte Carlo under the binormal one.
MODELS = ("lehmann", "binormal")


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


def check_model(value) -> str:
    """A model of the alternative, one of :data:`MODELS`.

    Examples
    --------
    >>> check_model("binormal")
    'binormal'
    """
    if value not in MODELS:
        raise TablegenInputError.naming(Argument("model"), f" must be one of {', '.join(map(repr, MODELS))}, "
                                        f"got {value!r}")
    return value


def check_winners(value, C: int) -> int:
    """How many of the C models are informative: an integer in [1, C], or ``"all"`` (= C).

    Examples
    --------
    >>> check_winners("all", 10), check_winners(3, 10)
    (10, 3)
    """
    if isinstance(value, str) and value == "all":
        return C
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or not 1 <= value <= C:
        raise TablegenInputError.naming(Argument("winners"), f" must be an integer in [1, C] or 'all', got {value!r}")
    return int(value)


def check_power_metric(metric) -> str:
    """A metric with a power model (its registry entry's ``power_routine``).

    Examples
    --------
    >>> check_power_metric("best_f1")
    'best_f1'
    """
    from tablegen.compute.metrics import get_metric

    name = check_metric("metric", metric)
    if get_metric(name).power_routine is None:
        raise TablegenInputError.naming(Argument("metric", name), " has no power model")
    return name


# -- the exact programme, cached ----------------------------------------------------------------------
@functools.lru_cache(maxsize=256)  # an event holds its boundary, 8 (P + N) bytes
def exceed_event(metric: str, P: int, N: int, C: int, alpha: float):
    """The event "metric > m*" with its exact Lehmann probability (:meth:`Metric.lehmann_event`), cached; refused
    (naming P and N) beyond the exact programme's domain.

    Examples
    --------
    >>> exceed_event("auc", 10, 10, 1, 0.05).critical_value
    0.72
    """
    from tablegen.compute.exact.power import boundary_cost
    from tablegen.compute.limits import check_memory, check_time
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.stats import upper_tail_probability

    entry = get_metric(metric)
    if not entry.power_exact_at(P, N):
        raise TablegenInputError.naming(Argument("P", P), ", ", Argument("N", N), f": no exact Lehmann power of "
                                        f"{metric} at this size (average precision: only where its null enumerates "
                                        "every arrangement; AUC: within the budget of the law of U along the lattice,"
                                        " about 375 x 375); power() answers there by Monte Carlo")
    seconds, memory = boundary_cost(P, N, entry.k)
    critical_seconds, critical_memory = entry.exact_cost(P, N)
    what = f"exact power of {metric} at P = {P:,}, N = {N:,}"
    check_memory(max(memory, critical_memory), what, "ask a smaller test set")
    check_time(seconds + critical_seconds, what, "ask a smaller test set")
    return entry.lehmann_event(P, N, float(upper_tail_probability(C, alpha)))


def lehmann_power_at(metric: str, P: int, N: int, C: int, alpha: float, k: float, winners: int) -> tuple[float, float]:
    """(exact power, m*) under the Lehmann alternative with exponent k, for ``winners`` equally good models.

    Examples
    --------
    >>> value, m_star = lehmann_power_at("auc", 20, 20, 1, 0.05, 7 / 3, 1)
    >>> round(value, 4), m_star
    (0.718, 0.6525)
    """
    event = exceed_event(metric, P, N, C, alpha)
    return of_winners(event.probability(k), winners), event.critical_value


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
        ``"lehmann"``: positives' CDF F**k, k = AUC/(1 - AUC); exact where the exact programme runs, otherwise
        (AUC beyond about 375 x 375, average precision beyond its enumeration) Monte Carlo with its 95% interval
        (``method`` says which).  ``"binormal"``: Monte Carlo with its 95% interval (positives N(d, 1),
        negatives N(0, 1), AUC = Phi(d/sqrt 2)).
    winners : int or "all"
        1 (default): one informative model among C, the power that its own score clears m*; w or ``"all"``
        (= C): w equally good models, the power that at least one clears it (module docstring).
    R, seed : int, optional
        Replicates and root seed of a Monte Carlo answer (default: R for a 95% interval of +-0.005, chosen by a
        pilot: :mod:`tablegen.compute.power_mc`); unused by an exact one.

    Returns
    -------
    PowerResult

    Raises
    ------
    TablegenInputError
        Bad input, naming the argument.

    Examples
    --------
    >>> result = power("auc", 20, 20, C=1, alpha=0.05, auc=0.7)
    >>> round(result.power, 4), result.method, result.ci_low == result.power
    (0.718, 'exact', True)
    >>> round(power("auc", 20, 20, C=10, alpha=0.05, auc=0.7, winners="all").power, 4)
    0.9855
    >>> big = power("auc", 400, 400, C=10, alpha=0.05, auc=0.55, R=2000)  # beyond the exact AUC programme
    >>> big.method, big.ci_low <= big.power <= big.ci_high, big.replicates, big.critical_method
    ('monte carlo', True, 2000, 'exact')
    """
    from tablegen.compute.exact.power import lehmann_k

    metric = check_power_metric(metric)
    P, N = check_class_size("P", P), check_class_size("N", N)
    C, alpha, auc = check_competitors(C), check_alpha("alpha", alpha), check_auc(auc)
    model, winners = check_model(model), check_winners(winners, C)
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.power_mc import separation_of_auc

    if model == "binormal":
        return _monte_carlo(metric, P, N, C, alpha, auc, "binormal", separation_of_auc(auc), winners, R, seed)
    k = lehmann_k(auc)
    if not get_metric(metric).power_exact_at(P, N):
        return _monte_carlo(metric, P, N, C, alpha, auc, "lehmann", k, winners, R, seed)
    value, m_star = lehmann_power_at(metric, P, N, C, alpha, k, winners)
    return PowerResult(metric, P, N, C, alpha, auc, model, k, winners, value, "exact", value, value, m_star,
                       critical_ci_low=m_star, critical_ci_high=m_star)


def power_critical_value(metric: str, P: int, N: int, C: int, alpha: float):
    """m* from :func:`tablegen.critical_value`: the exact value where the metric has an exact null at (P, N),
    otherwise its default answer (the table's or a simulation's estimate, with its interval).

    Examples
    --------
    >>> answer = power_critical_value("auc", 20, 20, 10, 0.05)
    >>> float(answer), answer.method
    (0.735, 'exact')
    """
    from tablegen.lookup.api import critical_value

    try:
        return critical_value(metric, P, N, C=C, alpha=alpha, method="exact")
    except TablegenInputError:
        return critical_value(metric, P, N, C=C, alpha=alpha)


def _monte_carlo(metric: str, P: int, N: int, C: int, alpha: float, auc: float, model: str, effect: float,
                 winners: int, R, seed) -> PowerResult:
    """Monte Carlo power under ``model`` (effect: binormal d or Lehmann k), m* from :func:`power_critical_value`."""
    from tablegen.compute.cell import DEFAULT_SEED
    from tablegen.compute.power_mc import binormal_power, lehmann_power

    cv = power_critical_value(metric, P, N, C, alpha)
    estimate = binormal_power if model == "binormal" else lehmann_power
    found = estimate(metric, P, N, float(cv), effect, R=R, seed=DEFAULT_SEED if seed is None else seed)
    low, value, high = (of_winners(x, winners) for x in (found.ci_low, found.power, found.ci_high))
    return PowerResult(metric, P, N, C, alpha, auc, model, effect, winners, value, "monte carlo", low, high,
                       float(cv), found.R, cv.method, float(cv.ci_low), float(cv.ci_high))


def size_line(prevalence, P, N):
    """The line of test sets a size search walks: (the free size's name, the smallest index, index -> (P, N)),
    given exactly one of ``prevalence`` (P the nearest integer to prevalence n, at least 1 and at most n - 1), a
    fixed ``P`` or a fixed ``N`` (:func:`tablegen.sample_size`, :func:`tablegen.plot_power_curve`).

    Examples
    --------
    >>> what, smallest, cell = size_line(0.3, None, None)
    >>> what, smallest, cell(10), cell(2)
    ('total sizes P + N', 2, (3, 7), (1, 1))
    """
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


