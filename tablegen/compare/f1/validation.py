"""Argument checks of the F1 comparison (STYLE 7): one function per entry point, messages name the argument."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tablegen.errors import Argument, TablegenInputError

AVERAGES = ("macro", "micro")
MU_MODES = ("joint", "independent")
#: Fewest posterior draws accepted (an HDI from fewer is mostly noise).
MIN_SAMPLES = 100
#: Points of η's posterior grid: at least 65, at most 2**20 + 1 (the default 2049 is already far finer than
#: any report needs; beyond this the grid only costs memory and time).
MIN_ETA_GRID, MAX_ETA_GRID = 65, 2**20 + 1


@dataclass(frozen=True)
class F1Prior:
    """Priors of the model: μ ~ Dir(β, …, β) and η ~ Beta(α₁, α₂); the paper's are the defaults.

    Examples
    --------
    >>> F1Prior()
    F1Prior(beta=1.0, alpha=(1.0, 1.0))
    """

    beta: float = 1.0
    alpha: tuple[float, float] = (1.0, 1.0)


def _positive(name: str, value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not (
            math.isfinite(float(value)) and float(value) > 0):
        raise TablegenInputError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def check_prior(value) -> F1Prior:
    """``None`` (the paper's priors), an :class:`F1Prior`, or a mapping with keys ``beta`` and/or ``alpha``."""
    if value is None:
        return F1Prior()
    if isinstance(value, F1Prior):
        beta, alpha = value.beta, value.alpha
    elif isinstance(value, Mapping):
        unknown = set(value) - {"beta", "alpha"}
        if unknown:
            raise TablegenInputError(f"prior: unknown keys {sorted(unknown)}; known: 'beta', 'alpha'")
        beta, alpha = value.get("beta", 1.0), value.get("alpha", (1.0, 1.0))
    else:
        raise TablegenInputError(f"prior must be None, an F1Prior or a mapping with 'beta' and 'alpha', got {value!r}")
    if isinstance(alpha, (str, bytes)) or not hasattr(alpha, "__len__") or len(alpha) != 2:
        raise TablegenInputError(f"prior alpha must be a pair (alpha1, alpha2) of numbers > 0, got {alpha!r}")
    return F1Prior(_positive("prior beta", beta), (_positive("prior alpha[0]", alpha[0]),
                                                    _positive("prior alpha[1]", alpha[1])))


def _bad(name: str, text: str) -> TablegenInputError:
    """The error "``name`` ``text``", the argument named apart (the command line says its option or file)."""
    return TablegenInputError.naming(Argument(name), text)


def check_confusion(name: str, value) -> np.ndarray:
    """A square M × M (M ≥ 2) matrix of non-negative integer counts with every row (true class) nonempty."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as error:
        raise _bad(name, f" must be a square matrix of counts ({error})") from None
    if array.dtype == bool or array.dtype.kind not in "iuf":
        raise _bad(name, f" must be a square matrix of counts, got dtype {array.dtype}")
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise _bad(name, f" must be square (M × M, rows = true class), got shape {array.shape}")
    if array.shape[0] < 2:
        raise _bad(name, f" needs at least 2 classes, got {array.shape[0]}")
    array = array.astype(float)
    bad = ~np.isfinite(array) | (array < 0) | (array != np.round(array))
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise _bad(name, f" must hold non-negative integer counts; [{i}, {j}] is {array[i, j]!r}")
    if array.sum() >= 2.0 ** 53:
        raise _bad(name, f": counts too large (total {array.sum():.3g} >= 2**53)")
    empty = np.flatnonzero(array.sum(axis=1) == 0)
    if empty.size:
        raise _bad(name, f": class {int(empty[0])} (row {int(empty[0])}) has no test items; every true class "
                         "needs at least one (drop empty classes from both matrices)")
    return array


def check_rope(value) -> tuple[float, float]:
    """A half-width r in (0, 1) (the ROPE is (−r, r)) or a pair (low, high) with −1 < low < 0 < high < 1: a
    difference of two F1 scores lies in [−1, 1], so a ROPE reaching ±1 would leave one side no room.

    Examples
    --------
    >>> check_rope(0.01), check_rope((-0.01, 0.02))
    ((-0.01, 0.01), (-0.01, 0.02))
    """
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        r = float(value)
        if not (math.isfinite(r) and 0 < r < 1):
            raise _bad("rope", f" must be a half-width in (0, 1) or an interval (low, high) around 0, got {value!r}")
        return -r, r
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise _bad("rope", f" must be a half-width in (0, 1) or an interval (low, high) around 0, got {value!r}")
    try:
        low, high = float(value[0]), float(value[1])
    except (TypeError, ValueError, OverflowError):
        raise _bad("rope", f" must hold two numbers, got {value!r}") from None
    if not (-1.0 < low < 0.0 < high < 1.0):
        raise _bad("rope", f" must be an interval (low, high) with -1 < low < 0 < high < 1, got {value!r}")
    return low, high


def _choice(name: str, value, choices) -> str:
    if value not in choices:
        raise _bad(name, f" must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def _integer(name: str, value, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < minimum:
        raise _bad(name, f" must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _eta_grid(value) -> int:
    grid = _integer("eta_grid", value, MIN_ETA_GRID)
    if grid > MAX_ETA_GRID:
        raise _bad("eta_grid", f" must be at most {MAX_ETA_GRID:,} points, got {grid}")
    return grid


def _seed(value) -> int | None:
    seed = None if value is None else _integer("seed", value, 0)
    if seed is not None and seed >= 2**64:
        raise _bad("seed", f" must be below 2**64, got {seed}")
    return seed


def _mass(value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not 0 < float(value) < 1:
        raise TablegenInputError(f"credible_mass must be a number in (0, 1), got {value!r}")
    return float(value)


@dataclass(frozen=True)
class F1Args:
    """Checked arguments of :func:`tablegen.compare.f1_posterior` / ``f1_score_posterior``."""

    confusions: tuple[np.ndarray, ...]
    average: str
    samples: int
    seed: int | None
    prior: F1Prior
    credible_mass: float
    eta_grid: int
    rope: tuple[float, float] = (0.0, 0.0)
    mu: str = "joint"
    prior_samples: int = 0
    point_null: bool = False


def validate_f1_posterior_args(confusion_a, confusion_b, average, rope, samples, seed, prior, mu,
                               prior_samples, credible_mass, eta_grid, point_null=False) -> F1Args:
    """Check every argument of :func:`tablegen.compare.f1_posterior` before any work."""
    a, b = check_confusion("confusion_a", confusion_a), check_confusion("confusion_b", confusion_b)
    if a.shape != b.shape:
        raise TablegenInputError.naming(Argument("confusion_b"), f" has {b.shape[0]} classes but ",
                                        Argument("confusion_a"), f" has {a.shape[0]}; both must be over the same "
                                        "classes, in the same order")
    mu = _choice("mu", mu, MU_MODES)
    rows_a, rows_b = a.sum(axis=1), b.sum(axis=1)
    if mu == "joint" and not np.array_equal(rows_a, rows_b):
        j = int(np.flatnonzero(rows_a != rows_b)[0])
        raise TablegenInputError.naming(
            Argument("confusion_b"), "'s row sums (true-class counts) differ from ", Argument("confusion_a"),
            f"'s (class {j}: {rows_b[j]:.0f} vs {rows_a[j]:.0f}); on one test set they agree. Different test sets: "
            "pass ", Argument("mu", "independent"))
    samples = _integer("samples", samples, MIN_SAMPLES)
    prior_samples = _integer("prior_samples", prior_samples, MIN_SAMPLES)
    if not isinstance(point_null, (bool, np.bool_)):
        raise TablegenInputError(f"point_null must be True or False, got {point_null!r}")
    check_draws(samples, a.shape[0], 2, prior_samples)
    return F1Args((a, b), _choice("average", average, AVERAGES), samples, _seed(seed), check_prior(prior),
                  _mass(credible_mass), _eta_grid(eta_grid), check_rope(rope), mu, prior_samples,
                  bool(point_null))


def validate_f1_score_args(confusion, average, samples, seed, prior, credible_mass, eta_grid) -> F1Args:
    """Check every argument of :func:`tablegen.compare.f1_score_posterior` before any work."""
    confusion = check_confusion("confusion", confusion)
    samples = _integer("samples", samples, MIN_SAMPLES)
    check_draws(samples, confusion.shape[0], 1)
    return F1Args((confusion,), _choice("average", average, AVERAGES), samples, _seed(seed), check_prior(prior),
                  _mass(credible_mass), _eta_grid(eta_grid))


def check_draws(samples: int, classes: int, posteriors: int, prior_samples: int = 0) -> None:
    """Refuse (exit code 5, with the estimate) posterior draws over the memory or time limit, before any draw:
    ``samples`` draws of ``posteriors`` matrices and ``prior_samples`` draws of the prior (as many matrices).

    Examples
    --------
    >>> check_draws(50_000, 3, 2, 200_000)
    """
    from tablegen.compute.limits import check_memory, check_time, f1_draws_memory, f1_draws_seconds

    what = f"{samples:,} posterior draws over {classes:,} classes"
    way_out = ("use fewer ", Argument("samples"), "")
    check_memory(max(f1_draws_memory(samples, classes, posteriors), f1_draws_memory(prior_samples, classes,
                                                                                      posteriors)), what, way_out)
    check_time(f1_draws_seconds(samples + prior_samples, classes, posteriors), what, way_out)


def check_plot_args(result, path, labels) -> tuple[str, str]:
    """Check the arguments of :func:`tablegen.compare.plot_f1_comparison` before drawing: ``result`` an
    :class:`~tablegen.compare.F1Comparison`, ``path`` None, a file name (an image format, its directory
    existing) or a binary file object, ``labels`` two names (strings); returns the labels."""
    import os

    from tablegen.common.figures import image_file
    from tablegen.compare.datasets.validation import check_names
    from tablegen.compare.f1.summary import DeltaSummary

    if not isinstance(getattr(result, "summary", None), DeltaSummary):  # an F1Comparison (its module imports this)
        raise TablegenInputError(f"result must be an F1Comparison (from f1_posterior), got {type(result).__name__} "
                                 f"{result!r:.60}")
    if isinstance(path, (str, os.PathLike)):
        image_file(path)
    elif path is not None and not callable(getattr(path, "write", None)):
        raise TablegenInputError(f"path must be None, a file name or a file object open for writing, got {path!r}")
    return check_names(labels, "labels")
