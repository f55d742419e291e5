"""A metric's exact answers, the metric named by its registry name: its null, the critical value, tail and
p-value of a best-of-C score (the registry, :mod:`tablegen.compute.metrics`, holds the entries; these ask them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tablegen.compute.metrics import get_metric

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import ArrayLike

    from tablegen.compute.metrics import Metric


def has_exact(metric: str) -> bool:
    """Whether ``metric`` has an exact null distribution."""
    return get_metric(metric).has_exact


def null_distribution(metric: str, P: int, N: int):
    """Exact null distribution object of ``metric`` at (P, N) (:meth:`Metric.exact_null`).

    Raises
    ------
    KeyError
        Unknown metric.  ``ValueError`` if the metric has no exact routine.
    """
    return get_metric(metric).exact_null(P, N)


def tabulated_null(metric: str, P: int, N: int):
    """The whole exact null at (P, N): every candidate value with Pr(X >= value) (``values``, ``tail_ge_at``).

    For pictures of the distribution and small cells: AUC comes from the recursion (P^2 N^2 / 4
    multiply-adds) whatever :func:`null_distribution` would pick, the lattice metrics list all
    P (N + 1) candidates.

    Examples
    --------
    >>> null = tabulated_null("auc", 2, 2)
    >>> null.values.tolist(), [round(float(p), 4) for p in null.tail_ge]
    ([0.0, 0.25, 0.5, 0.75, 1.0], [1.0, 0.8333, 0.6667, 0.3333, 0.1667])
    """
    return get_metric(metric).tabulated_null(P, N)


def exact_cost(metric: str, P: int, N: int) -> tuple[float, float]:
    """Estimated (single-core seconds, peak bytes) of one exact critical value or p-value at (P, N).

    ``(inf, inf)`` for a metric without an exact routine.

    Examples
    --------
    >>> seconds, memory = exact_cost("auc", 1000, 1000)
    >>> seconds < 1, memory < 1e8
    (True, True)
    """
    return get_metric(metric).exact_cost(P, N)


def exact_critical_value(metric: str, P: int, N: int, C: int, alpha: float = 0.01, null=None) -> float:
    """Exact m* = smallest x in the support with F(x) >= (1 - alpha)**(1/C).

    Examples
    --------
    >>> exact_critical_value("best_accuracy", 20, 20, C=10, alpha=0.01)
    0.775
    """
    from tablegen.compute.exact import null_critical_value
    from tablegen.compute.stats import upper_tail_probability

    null = null_distribution(metric, P, N) if null is None else null
    return null_critical_value(null, float(upper_tail_probability(C, alpha)))


def exact_tail_ge(metric: str, P: int, N: int, score: float, null=None) -> float:
    """Pr(X >= score) for one random ranking, X the metric."""
    from tablegen.compute.exact import null_tail_ge

    null = null_distribution(metric, P, N) if null is None else null
    return null_tail_ge(null, score)


def exact_p_value(metric: str, score: float, P: int, N: int, C: int, null=None) -> float:
    """Exact p-value 1 - F(score-)**C of a best-of-C score against random rankings."""
    from tablegen.compute.stats import p_value_from_tail

    return float(p_value_from_tail(exact_tail_ge(metric, P, N, score, null=null), C))


class ExactNulls:
    """The exact nulls one question needs, each built once: a metric's no-ties null at (P, N) and its nulls given
    tie groups, keyed on (metric, P, N, tie group sizes), the least recently used dropped beyond ``capacity``.

    A null object keeps what it has computed (AUC's tilted laws, one per point asked), so the selection test,
    the verdict against random classifiers and the report asking one object share that work; the numbers are
    those of a fresh null, bit for bit.  Passed down the call chain explicitly (:func:`tablegen.evaluate` makes
    one per call); ``builds`` counts the nulls built, per key.

    Parameters
    ----------
    capacity : int
        Nulls kept at most (each may hold tens of MB: an AUC null's tilted laws).
    build : callable, optional
        ``build(metric_name, P, N)`` -> the no-ties null (default :func:`null_distribution`; the lookups pass
        their own cached builder so that their answers share the object).

    Examples
    --------
    >>> nulls = ExactNulls()
    >>> nulls.untied("best_accuracy", 20, 20) is nulls.untied("best_accuracy", 20, 20)
    True
    >>> nulls.builds
    {('best_accuracy', 20, 20, None): 1}
    """

    def __init__(self, capacity: int = 8, build: Callable[[str, int, int], object] | None = None):
        from collections import OrderedDict

        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity!r}")
        self.capacity, self._build = capacity, null_distribution if build is None else build
        self._nulls: OrderedDict = OrderedDict()
        self.builds: dict = {}

    def untied(self, metric: str | Metric, P: int, N: int) -> object:
        """The no-ties exact null of ``metric`` (a name or registry entry) at (P, N)."""
        name = metric if isinstance(metric, str) else metric.name
        return self._get((name, int(P), int(N), None), lambda: self._build(name, P, N))

    def tied(self, metric: str | Metric, group_sizes: ArrayLike, P: int) -> object:
        """The exact null of ``metric`` given tie groups of ``group_sizes`` (ascending score) and P positives."""
        import numpy as np

        spec = get_metric(metric) if isinstance(metric, str) else metric
        sizes = tuple(int(s) for s in np.asarray(group_sizes).tolist())
        return self._get((spec.name, int(P), sum(sizes) - int(P), sizes), lambda: spec.tied_null(group_sizes, P))

    def _get(self, key: tuple, build: Callable[[], object]) -> object:
        if key in self._nulls:
            self._nulls.move_to_end(key)
            return self._nulls[key]
        null = build()
        self.builds[key] = self.builds.get(key, 0) + 1
        self._nulls[key] = null
        while len(self._nulls) > self.capacity:
            self._nulls.popitem(last=False)
        return null


def approximate_critical_value(null, tail: float) -> float | None:
    """A cheap guess at :func:`tablegen.compute.exact.null_critical_value` ``(null, tail)``, for a search that
    then decides with the exact values (never an answer): for AUC's tilted inversion the Lugannani–Rice
    saddle-point tail with the lattice continuity correction (Daniels 1987), within a unit of U of the exact
    critical value (measured at P, N = 600, 1400 and 3000, 7000, tails 0.3 to 1e-200) and without a Fourier
    transform (~1 ms where a tilted law costs ~0.1-5 s at P N ~ 10^7-10^10); None where there is no such guess
    (the other nulls, whose exact values are cheap or bracketed, and tails of 1/2 or more).

    Examples
    --------
    >>> from tablegen.compute.exact.auc_fft import TiltedAucNull
    >>> null = TiltedAucNull(300, 700)
    >>> exact, guess = null.critical_value(1e-6), approximate_critical_value(null, 1e-6)
    >>> abs(guess - exact) <= 2 / (300 * 700)
    True
    """
    import math

    from tablegen.compute.exact.auc_fft import TiltedAucNull
    from tablegen.compute.exact.nulls import TIE_RTOL

    if not isinstance(null, TiltedAucNull):
        return None
    cell, threshold = null.cell, tail * (1.0 + TIE_RTOL)
    if cell.small == 1 or not 0.0 < threshold < 0.5:
        return None
    if -cell.log_total > math.log(threshold):  # not even the top value is that rare: the top
        return 1.0
    b = _lugannani_rice_tilt(cell, math.log(threshold))
    if b is None:
        return None
    return math.floor(cell.PN - (cell.mu(b) - 0.5)) / cell.PN


def _lugannani_rice_tilt(cell, log_tail: float) -> float | None:
    """The tilt b > 0 at which the Lugannani–Rice approximation of log Pr(U <= v), v + 1/2 = mu(b), is
    ``log_tail`` (U the Mann–Whitney count of ``cell``, a :class:`~tablegen.compute.exact.auc_fft.TiltedAuc`)."""
    import math

    from scipy.special import log_ndtr

    def log_lower(b: float) -> float:
        x = cell.mu(b)
        w = math.sqrt(max(-2.0 * (cell.lam(b) + b * x), 0.0))
        u = 2.0 * math.sinh(0.5 * b) * math.sqrt(cell.var(b))
        if w <= 0.0 or u <= 0.0:
            return math.log(0.5)
        main = float(log_ndtr(-w))
        correction = math.exp(-0.5 * w * w - 0.5 * math.log(2 * math.pi) - main) * (1.0 / u - 1.0 / w)
        return main + math.log1p(correction) if correction > -1.0 else -math.inf

    low, high = 1e-6 / math.sqrt(cell.var0), 1.0 / math.sqrt(cell.var0)
    while log_lower(high) > log_tail and cell.mu(high) > 0.5:
        high *= 2.0
        if high > 1e4:
            return None
    while high / low - 1.0 > 1e-12:
        middle = math.sqrt(low * high)
        if log_lower(middle) > log_tail:
            low = middle
        else:
            high = middle
    b = math.sqrt(low * high)
    return b if math.isfinite(cell.mu(b)) else None


def checked_nulls(nulls, default: Callable[[], ExactNulls] = None) -> ExactNulls:
    """``nulls`` if it is an :class:`ExactNulls`, a new one (``default()``, else ``ExactNulls()``) if None, else
    an error naming ``nulls``.

    Examples
    --------
    >>> type(checked_nulls(None)).__name__
    'ExactNulls'
    >>> checked_nulls(True)
    Traceback (most recent call last):
    tablegen.errors.TablegenInputError: nulls must be None or a tablegen.compute.metric_nulls.ExactNulls, got True
    """
    from tablegen.errors import Argument, TablegenInputError

    if nulls is None:
        return ExactNulls() if default is None else default()
    if not isinstance(nulls, ExactNulls):
        raise TablegenInputError.naming(Argument("nulls"), " must be None or a "
                                        f"tablegen.compute.metric_nulls.ExactNulls, got {nulls!r}")
    return nulls

