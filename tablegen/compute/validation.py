"""Input validation: one function per public entry point (STYLE 7), messages name the argument.

The ``check_*`` helpers check one argument each and are shared with :mod:`tablegen.batch.config`.

Every check runs before any work is done or anything is written.  Errors are
:class:`TablegenInputError`, a ``ValueError``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from tablegen.compute.exact.nulls import SNAP_TOLERANCE
from tablegen.compute.metrics import DEFAULT_METRICS, get_metric, metric_entries, unknown_metric_text
from tablegen.compute.stats import minimum_replicates
from tablegen.errors import Argument, TablegenInputError

METHODS = ("auto", "exact", "table", "simulate")
#: The largest C a lookup takes: (1 - alpha)**(1/C) needs C as a float.
MAX_C = 10**300
#: Scores within this distance of the metric's range count as inside it (they snap to the attainable
#: end value, as everywhere else).
SCORE_TOLERANCE = SNAP_TOLERANCE
#: The largest P or N taken: P + N stays an exact float (2**53), as the metrics' ranges and exact
#: routines need; far beyond any test set.
MAX_CLASS_SIZE = 2**52




def check_integer(name: str, value, minimum: int) -> int:
    """``value`` as an int, if it is an integer (not a bool) >= ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TablegenInputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise TablegenInputError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_competitors(C) -> int:
    """``C`` (the number of classifiers compared) as an int, if it is an integer in [1, 1e300] (a larger C has
    no tail probability a float can hold).

    Examples
    --------
    >>> check_competitors(10**30) == 10**30
    True
    """
    C = check_integer("C", C, 1)
    if C > MAX_C:
        raise TablegenInputError(f"C (a {len(str(C))}-digit number) is beyond what a tail probability can be "
                                 "computed for: C must be at most 1e300")
    return C


def check_class_size(name: str, value) -> int:
    """``value`` (P or N) as an int, if it is an integer in [1, :data:`MAX_CLASS_SIZE`].

    Examples
    --------
    >>> check_class_size("N", 300)
    300
    """
    value = check_integer(name, value, 1)
    if value > MAX_CLASS_SIZE:
        raise TablegenInputError(f"{name} must be at most 2**52 = {MAX_CLASS_SIZE:,} examples "
                                 f"(P + N must be an exact float), got {value:,}")
    return value


def check_alpha(name: str, value) -> float:
    """``value`` as a float, if it is a number in (0, 1)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TablegenInputError(f"{name} must be a number in (0, 1), got {value!r}")
    if not 0.0 < float(value) < 1.0:
        raise TablegenInputError(f"{name} must be in (0, 1), got {value}")
    return float(value)


def check_metric(name: str, value) -> str:
    """The canonical (lower-case) name of the metric ``value`` names, in any case; the error suggests the
    closest known name and lists them all.

    Examples
    --------
    >>> check_metric("metric", "AUC")
    'auc'
    """
    try:
        return get_metric(value).name
    except (KeyError, TypeError):
        raise TablegenInputError(f"{name}: {unknown_metric_text(value)}") from None


def _metrics(value) -> tuple[str, ...]:
    if value is None:
        return DEFAULT_METRICS
    if isinstance(value, str) or not isinstance(value, Iterable):
        value = [value]
    names = tuple(check_metric("metrics", m) for m in value)
    for name in names:
        if get_metric(name).count_of is not None:
            raise TablegenInputError(
                f"metrics: {name} is {get_metric(name).count_of} / min(k, P + N), the same event: simulate and "
                f"store {get_metric(name).count_of} (lookups of {name} answer exactly at any size)")
    if not names:
        raise TablegenInputError("metrics must name at least one metric")
    if len(set(names)) != len(names):
        raise TablegenInputError(f"metrics has duplicates: {list(names)}")
    return names


def check_integer_array(name: str, values, minimum: int = 1) -> np.ndarray:
    """``values`` (a scalar or array) as an int64 array, if every element is an integer >= ``minimum``."""
    array = np.asarray(values)
    if array.dtype == bool or array.dtype.kind not in "iuf" or array.size == 0:
        raise TablegenInputError(f"{name} must be an integer >= {minimum} (or an array of them), got {values!r}")
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or np.any(array != np.round(array)):
            bad = array[~np.isfinite(array) | (array != np.round(array))].flat[0].item()
            raise TablegenInputError(f"{name} must be an integer >= {minimum}, got {bad!r}")
    if np.any(array < minimum):
        raise TablegenInputError(f"{name} must be an integer >= {minimum}, got {array[array < minimum].flat[0].item()}")
    if np.any(array > np.iinfo(np.int64).max):  # uint64 or float beyond int64: refused, never wrapped
        raise TablegenInputError(f"{name} must be at most {np.iinfo(np.int64).max}, "
                                 f"got {array[array > np.iinfo(np.int64).max].flat[0].item()}")
    return array.astype(np.int64)


def check_real_array(name: str, values) -> np.ndarray:
    """``values`` (a scalar or array) as a float array, if every element is a finite number."""
    array = np.asarray(values)
    if array.dtype == bool or array.dtype.kind not in "iuf" or array.size == 0 or not np.all(np.isfinite(array)):
        raise TablegenInputError(f"{name} must be a finite number (or an array of them), got {values!r}")
    return array.astype(float)


def check_unique_list(name: str, values: Iterable, check) -> tuple:
    """A non-empty tuple of distinct values, each passed through ``check(f"{name}[i]", value)``."""
    if isinstance(values, (numbers.Number, str, bytes)) or not isinstance(values, Iterable):
        values = [values]  # one value (or something that is no list): checked as the list's only element
    checked = tuple(check(f"{name}[{i}]", v) for i, v in enumerate(values))
    if not checked:
        raise TablegenInputError(f"{name} must hold at least one value")
    if len(set(checked)) != len(checked):
        raise TablegenInputError(f"{name} has duplicates: {list(checked)}")
    return checked


#: Seeds are 64-bit: below 2**64 (a larger integer is refused, never reduced silently).
SEED_LIMIT = 2**64
#: The most replicates R anything plans: R and R * t must be exact floats (the interval's ranks).
MAX_REPLICATES = 2**53


def check_seed(name: str, value, allow_none: bool) -> int | None:
    """A root seed: an integer in [0, 2**64) (or None where ``allow_none``).

    Examples
    --------
    >>> check_seed("seed", 2**64 - 1, allow_none=False) == 2**64 - 1
    True
    """
    if value is None and allow_none:
        return None
    seed = check_integer(name, value, 0)
    if seed >= SEED_LIMIT:
        raise TablegenInputError.naming(Argument(name), f" must be below 2**64, got {seed}")
    return seed


def check_replicates(R, Cs, alphas) -> int:
    """``R`` as an int, if it is at least the minimum of every (C, alpha) (the error gives it)."""
    R = check_integer("R", R, 1)
    if R > MAX_REPLICATES:
        raise TablegenInputError.naming(Argument("R"), f" must be at most 2**53 = {MAX_REPLICATES:,} replicates, "
                                        f"got {R:,}")
    for C in Cs:
        for alpha in alphas:
            needed = minimum_replicates(C, alpha)
            if R < needed:
                raise TablegenInputError(
                    f"R = {R} is too small for C = {C}, alpha = {alpha}: the critical value needs "
                    f"R >= {needed} (at least one sample expected above it)"
                )
    return R


def check_score(metric: str, score, P: int, N: int) -> float:
    """A winner's score: a real number in ``metric``'s range at (P, N), as a float."""
    if isinstance(score, (bool, np.bool_)) or not isinstance(score, numbers.Real) \
            or (not isinstance(score, numbers.Integral) and math.isnan(score)):
        raise TablegenInputError(f"score must be a number, got {score!r}")
    try:
        score = float(score)
    except OverflowError:  # an integer beyond any float: outside every metric's range
        raise TablegenInputError(f"score must be a number in the metric's range, got {score!r}") from None
    spec = get_metric(metric)
    if spec.integer_valued and abs(score - round(score)) > SNAP_TOLERANCE:
        hint = (f"; {score:g} looks like a precision: use precision_at_{spec.k}" if 0.0 < score < 1.0 else "")
        raise TablegenInputError(f"score = {score:g}: {metric} is a count of positives among the top {spec.k}, "
                                 f"a whole number{hint}")
    check_scores_in_range(metric, np.asarray(score), np.asarray(P), np.asarray(N))
    if spec.count_of is not None:
        divisor = spec.count_divisor(P, N)
        if abs(score * divisor - round(score * divisor)) > SNAP_TOLERANCE * divisor:
            raise TablegenInputError(f"score = {score:g} cannot occur: {metric} at P = {P}, N = {N} is a count of "
                                     f"positives divided by {divisor}, a multiple of 1/{divisor}")
    return score


def check_scores_in_range(metric: str, score: np.ndarray, P: np.ndarray, N: np.ndarray) -> None:
    """Raise unless every score lies in ``metric``'s range at its (P, N) (arrays of one shape).

    Scores within :data:`SCORE_TOLERANCE` of an end count as inside.  The range is computed once
    per distinct (P, N).
    """
    spec = get_metric(metric)
    cells, where = np.unique(np.stack([P.ravel(), N.ravel()], axis=1), axis=0, return_inverse=True)
    ranges = np.array([spec.range(int(p), int(n)) for p, n in cells]).reshape(-1, 2)
    low, high = ranges[where.ravel(), 0], ranges[where.ravel(), 1]
    outside = (score.ravel() < low - SCORE_TOLERANCE) | (score.ravel() > high + SCORE_TOLERANCE)
    if outside.any():
        i = int(np.argmax(outside))
        hint = (f"; a count of positives among the top {spec.k} is tp_at_{spec.k}"
                if spec.count_of is not None and score.ravel()[i] > 1 else "")
        raise TablegenInputError(f"score = {score.ravel()[i]:g} is outside the range of {metric} at "
                                 f"P = {P.ravel()[i]}, N = {N.ravel()[i]}: [{low[i]:.6g}, {high[i]:.6g}]{hint}")


def check_method(value) -> str:
    """One of :data:`METHODS`."""
    if value not in METHODS:
        raise TablegenInputError(f"method must be one of {', '.join(map(repr, METHODS))}, got {value!r}")
    return value


@dataclass(frozen=True)
class SimulateCellArgs:
    """The checked arguments of one cell's simulation (:func:`tablegen.simulate_cell`, a run's chunk).

    Built by :func:`validate_simulate_cell_args` from what a user typed, or directly from a
    :class:`~tablegen.batch.config.JobConfig` (checked when it was loaded); the cell engine takes it
    as it is and checks nothing again.
    """

    P: int
    N: int
    R: int
    seed: int
    metrics: tuple[str, ...]
    Cs: tuple[int, ...]
    alphas: tuple[float, ...]
    tail_probabilities: tuple[float, ...]
    block_size: int
    #: The registry entries of ``metrics`` (looked up once, here; the engine asks them).
    entries: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "entries", metric_entries(self.metrics))


def validate_simulate_cell_args(P, N, R, seed, metrics, Cs, alphas, tail_probabilities,
                                block_size) -> SimulateCellArgs:
    """Checked and normalised arguments of :func:`tablegen.simulate_cell`.

    Examples
    --------
    >>> validate_simulate_cell_args(20, 30, 1000, 1, ["auc"], [10], [0.01], [0.01], 4096).metrics
    ('auc',)
    """
    P, N = check_class_size("P", P), check_class_size("N", N)
    Cs = tuple(check_unique_list("Cs", Cs, lambda n, v: check_competitors(v)))
    alphas = tuple(check_unique_list("alphas", alphas, check_alpha))
    return SimulateCellArgs(
        P=P,
        N=N,
        R=check_replicates(R, Cs, alphas),
        seed=check_seed("seed", seed, allow_none=False),
        metrics=_metrics(metrics),
        Cs=Cs,
        alphas=alphas,
        tail_probabilities=tuple(check_unique_list("tail_probabilities", tail_probabilities, check_alpha)),
        block_size=check_integer("block_size", block_size, 1),
    )
