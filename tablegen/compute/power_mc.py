"""Monte Carlo power under an alternative: Pr(one model's metric > m*), with its 95% interval.

Two alternatives.  **Binormal** (:func:`binormal_power`; pROC's and Obuchowski's convention): positives' scores
N(d, 1), negatives' N(0, 1), so AUC = Phi(d / sqrt 2) (:func:`auc_of_separation`, :func:`separation_of_auc`).
**Lehmann** (:func:`lehmann_power`): positives' scores have CDF F**k and negatives' F (F uniform: U**(1/k) and U),
AUC = k / (k + 1); :func:`tablegen.power` uses it where the exact Lehmann programme does not run (AUC beyond
about 375 x 375, average precision beyond its enumeration).  A replicate draws one test set's
scores and scores every requested metric in one pass (:mod:`tablegen.compute.kernels.alternative`, or its
CUDA twin); the power of a metric is the share of replicates whose value is significant by the test's own rule,
value > m* (within the snap tolerance, as the lookups decide: value > m* + 1e-9), given the critical value m*.

How many replicates (``R=None``, the default): a two-stage rule that keeps the interval honest.

1. A pilot of :data:`PILOT_REPLICATES` replicates, from a stream of its own, gives a 99.9% Clopper-Pearson
   interval [a, b] for each metric's power.
2. R is then the smallest number of replicates whose 95% Clopper-Pearson interval has half-width at most
   ``half_width`` (default 0.005) for every count k with k / R in [a, b] (the largest over the metrics;
   at most the worst case, :func:`replicates_for_half_width` over [0, 1]: 38,612 at 0.005).  R fresh
   replicates, from another stream, give the estimate and its interval; the pilot's draws are not used in it.

Since R is fixed before the second stage is drawn, and the second stage's draws are independent of the pilot's,
the reported Clopper-Pearson interval has coverage at least 95% given R, hence unconditionally: the data-dependent
choice of R costs no coverage (pooling the pilot in, or stopping a sequence when the interval is narrow enough,
would).  The half-width target is met whenever the estimate falls inside the pilot's interval (probability about
0.999 or more); otherwise the interval returned is still the correct one, only wider than asked.  A given ``R``
skips the pilot.  Replicates are computed in blocks whose split never changes a draw (keyed streams).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tablegen.compute.cell import DEFAULT_SEED
from tablegen.compute.exact.nulls import SNAP_TOLERANCE
from tablegen.compute.stats import clopper_pearson
from tablegen.errors import TablegenInputError

#: The spawn key's tag of the binormal streams (``SeedSequence(seed, spawn_key=(P, N, tag, bits of d, stage))``).
BINORMAL_TAG = 0xB17
#: The spawn key's tag of the Lehmann streams (the bits of k in place of d's).
LEHMANN_TAG = 0x1E4
#: The alternatives: (stream tag, CPU kernel, CUDA launcher), by model name.
_KERNELS = {"binormal": (BINORMAL_TAG, "binormal_block", "binormal_values_cuda"),
            "lehmann": (LEHMANN_TAG, "lehmann_block", "lehmann_values_cuda")}
#: Replicates of the pilot stage.
PILOT_REPLICATES = 1000
#: Level of the pilot's interval, which bounds the power when R is chosen.
PILOT_LEVEL = 0.999
#: Default target half-width of the 95% interval.
DEFAULT_HALF_WIDTH = 0.005
#: Replicates per block on the CPU and per GPU pass (the blocks never change a draw).
CPU_BLOCK = 4096
CUDA_BLOCK = 1 << 18
#: Stream of a given R (0), of the pilot (1) and of the chosen-R stage (2).
FIXED_STAGE, PILOT_STAGE, FINAL_STAGE = 0, 1, 2
#: CPU seconds per item and replicate of the alternative kernels (17-23 ns measured at (10^4, 10^4), one core of a
#: loaded machine): a stage whose estimate exceeds the time limit (``TABLEGEN_TIME_LIMIT``) is refused before it runs.
SECONDS_PER_ITEM = 3e-8


@dataclass(frozen=True)
class BinormalPower:
    """Monte Carlo power of one metric under the binormal alternative.

    Attributes
    ----------
    metric : str
        The metric.
    power : float
        hits / R: the share of replicates whose value exceeds ``critical_value``.
    ci_low, ci_high : float
        The 95% Clopper-Pearson interval of the power.
    hits, R : int
        Significant replicates and replicates (of the estimating stage; the pilot is not counted).
    critical_value : float
        m*: a value is significant iff it exceeds m* (by more than the snap tolerance 1e-9).
    d, auc : float
        The positives' mean (negatives 0, unit variances) and the AUC it gives, Phi(d / sqrt 2).
    seed : int
        The root seed of the streams.
    pilot_replicates : int
        Replicates of the pilot that chose R (0 when R was given).
    method : str
        ``"monte carlo"``.
    """

    metric: str
    power: float
    ci_low: float
    ci_high: float
    hits: int
    R: int
    critical_value: float
    d: float
    auc: float
    seed: int
    pilot_replicates: int
    method: str = "monte carlo"

    @property
    def half_width(self) -> float:
        """Half the width of the 95% interval."""
        return 0.5 * (self.ci_high - self.ci_low)


@dataclass(frozen=True)
class LehmannPower:
    """Monte Carlo power of one metric under the Lehmann alternative: the fields of :class:`BinormalPower`, with
    the exponent ``k`` (positives' CDF F**k, AUC = k / (k + 1)) in place of d."""

    metric: str
    power: float
    ci_low: float
    ci_high: float
    hits: int
    R: int
    critical_value: float
    k: float
    auc: float
    seed: int
    pilot_replicates: int
    method: str = "monte carlo"

    half_width = BinormalPower.half_width


def auc_of_separation(d: float) -> float:
    """AUC = Phi(d / sqrt 2) of the binormal model with separation d (unit variances).

    Examples
    --------
    >>> auc_of_separation(0.0), round(auc_of_separation(1.0), 6)
    (0.5, 0.76025)
    """
    from scipy.special import ndtr

    return float(ndtr(d / math.sqrt(2.0)))


def separation_of_auc(auc: float) -> float:
    """The separation d = sqrt 2 Phi^-1(AUC) that gives ``auc`` under the binormal model.

    Examples
    --------
    >>> round(separation_of_auc(0.76025), 4)
    1.0
    """
    from scipy.special import ndtri

    return float(math.sqrt(2.0) * ndtri(auc))


def stream_tag(model: str) -> int:
    """The spawn key's tag of ``model``'s streams (:data:`BINORMAL_TAG` or :data:`LEHMANN_TAG`).

    Examples
    --------
    >>> stream_tag("lehmann") == LEHMANN_TAG
    True
    """
    return _KERNELS[model][0]


def binormal_key(seed: int, P: int, N: int, d: float, stage: int, tag: int = BINORMAL_TAG) \
        -> tuple[np.uint64, np.uint64]:
    """The 128-bit key of the binormal streams of (P, N, d) at ``stage`` under root ``seed`` (apart from every
    null's stream: the spawn key carries :data:`BINORMAL_TAG`, the bits of d and the stage; with
    ``tag=LEHMANN_TAG`` and k for d, the Lehmann streams')."""
    bits = int(np.float64(d).view(np.uint64))
    words = np.random.SeedSequence(seed, spawn_key=(P, N, tag, bits, stage)).generate_state(2, np.uint64)
    return np.uint64(words[0]), np.uint64(words[1])


def max_half_width(R: int, low: float = 0.0, high: float = 1.0, level: float = 0.95) -> float:
    """The largest half-width of the ``level`` Clopper-Pearson interval over the counts k with k / R in
    [low, high] (the half-width grows towards k = R / 2, so it is taken at the count nearest R / 2 in range).

    Examples
    --------
    >>> round(max_half_width(38416), 6)  # the Wald count (1.96 / 0.005)**2 / 4 falls just short of 0.005
    0.005013
    """
    first, last = max(0, math.floor(low * R)), min(R, math.ceil(high * R))
    counts = np.unique(np.clip([R // 2, (R + 1) // 2], first, last))
    lows, highs = clopper_pearson(counts, counts, R, level)
    return float(np.max(highs - lows) / 2.0)


def replicates_for_half_width(half_width: float = DEFAULT_HALF_WIDTH, low: float = 0.0, high: float = 1.0,
                              level: float = 0.95) -> int:
    """The smallest R (found by doubling, then bisection) whose Clopper-Pearson interval has half-width at most
    ``half_width`` at every count with k / R in [low, high].

    Examples
    --------
    >>> replicates_for_half_width(0.005)
    38612
    """
    top = 16
    while max_half_width(top, low, high, level) > half_width:
        top *= 2
    bottom = top // 2  # fails, or is below 16
    while top - bottom > 1:
        middle = (top + bottom) // 2
        if max_half_width(middle, low, high, level) <= half_width:
            top = middle
        else:
            bottom = middle
    return top


def binormal_values(P: int, N: int, d: float, key, first: int, count: int, layout, device: str = "cpu",
                    scores_out: np.ndarray | None = None, model: str = "binormal") -> np.ndarray:
    """Kernel output (count, columns) of replicates ``first .. first + count - 1``: every metric of
    ``layout`` (:class:`tablegen.compute.mc.KernelLayout`), the best-MCC column NaN unless a metric needs it.
    ``scores_out`` (count, P + N), if given, receives the drawn scores (positives first; CPU only).
    ``model="lehmann"``: the Lehmann alternative's kernel, with ``d`` the exponent k."""
    import importlib

    from tablegen.compute.kernels.ranking import TP_COLUMN, mcc_weights

    _, cpu_kernel, cuda_kernel = _KERNELS[model]
    out = np.empty((count, TP_COLUMN + layout.ks.size))
    weights = mcc_weights(P, N, P + N + 1) if layout.with_mcc else np.zeros(1)
    if device == "cuda":
        launch = getattr(importlib.import_module("tablegen.compute.kernels.cuda.alternative"), cuda_kernel)
        launch(P, N, float(d), key[0], key[1], first, layout.ks, weights, layout.with_mcc, out)
        return out
    kernel = getattr(importlib.import_module("tablegen.compute.kernels.alternative"), cpu_kernel)
    record = np.empty((0, 0)) if scores_out is None else scores_out
    kernel(P, N, float(d), key[0], key[1], first, layout.ks, weights, layout.with_mcc, out, record)
    return out


def count_significant(P: int, N: int, d: float, key, R: int, layout, columns: np.ndarray, divisors: np.ndarray,
                      thresholds: np.ndarray, device: str = "cpu", block: int | None = None,
                      model: str = "binormal") -> np.ndarray:
    """Per metric, how many of replicates 0 .. R - 1 have column / divisor > threshold (blocks of ``block``,
    default :data:`CPU_BLOCK` or :data:`CUDA_BLOCK`)."""
    block = block or (CUDA_BLOCK if device == "cuda" else CPU_BLOCK)
    hits = np.zeros(columns.size, np.int64)
    for first in range(0, R, block):
        values = binormal_values(P, N, d, key, first, min(block, R - first), layout, device, model=model)
        hits += np.count_nonzero(values[:, columns] / divisors > thresholds, axis=0)
    return hits


def _check(metrics, P, N, critical_values, d, R, seed, half_width, device, effect="d"):
    from tablegen.compute.kernels.cuda.device import resolve_device
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.validation import check_class_size, check_integer, check_metric, check_seed

    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise TablegenInputError("metrics must name at least one metric")
    names = [check_metric("metrics", name) for name in names]
    P, N = check_class_size("P", P), check_class_size("N", N)
    try:
        values = None if isinstance(critical_values, str) else np.atleast_1d(np.asarray(critical_values, dtype=float))
    except (TypeError, ValueError):
        values = None
    if values is None or values.ndim != 1 or values.size != len(names) or np.isnan(values).any():
        raise TablegenInputError(f"critical_values must be one number (not NaN) per metric ({len(names)}), "
                                 f"got {critical_values!r}")
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, float, np.integer, np.floating)) \
            or not math.isfinite(d) or (effect == "k" and not d > 0):
        what = "a finite number (the positives' mean)" if effect == "d" else "a finite number > 0 (Lehmann's exponent)"
        raise TablegenInputError(f"{effect} must be {what}, got {d!r}")
    R = None if R is None else check_integer("R", R, 1)
    if not isinstance(half_width, (int, float, np.floating)) or not 0.0 < half_width < 0.5:
        raise TablegenInputError(f"half_width must be a number in (0, 0.5), got {half_width!r}")
    entries = [get_metric(name) for name in names]
    return names, entries, P, N, values, float(d), R, check_seed("seed", seed, False), float(half_width), \
        resolve_device(device)


def binormal_power(metrics: str | Sequence[str], P: int, N: int, critical_values, d: float, R: int | None = None,
                   seed: int = DEFAULT_SEED, half_width: float = DEFAULT_HALF_WIDTH, device: str = "cpu"):
    """Power of one model under the binormal alternative against given critical values, by Monte Carlo.

    Parameters
    ----------
    metrics : str or sequence of str
        The metric(s); several are scored on the same draws.
    P, N : int
        Positives and negatives of the test set.
    critical_values : float or sequence of float
        m* of each metric (e.g. :func:`tablegen.critical_value`'s for the best of C at alpha): significant iff
        the value exceeds m* (by more than the snap tolerance 1e-9, as the lookups decide).
    d : float
        The positives' mean (negatives N(0, 1), unit variances): AUC = Phi(d / sqrt 2)
        (:func:`separation_of_auc` gives d for an AUC).
    R : int, optional
        Replicates; default: the two-stage rule of the module docstring, for ``half_width``.
    seed : int
        Root seed (the streams are keyed on it, P, N, d and the stage).
    half_width : float
        Target half-width of the 95% interval when R is chosen (default 0.005).
    device : {"cpu", "cuda", "auto"}
        Where the replicates run (the same draws and values on both).

    Returns
    -------
    BinormalPower, or a tuple of them (one per metric, in order) when ``metrics`` is a sequence.

    Examples
    --------
    >>> result = binormal_power("auc", 20, 20, 0.70, separation_of_auc(0.8), R=2000, seed=1)
    >>> result.ci_low <= result.power <= result.ci_high, result.R
    (True, 2000)
    """
    return _alternative_power("binormal", metrics, P, N, critical_values, d, R, seed, half_width, device)


def lehmann_power(metrics: str | Sequence[str], P: int, N: int, critical_values, k: float, R: int | None = None,
                  seed: int = DEFAULT_SEED, half_width: float = DEFAULT_HALF_WIDTH, device: str = "cpu"):
    """Power of one model under the Lehmann alternative against given critical values, by Monte Carlo.

    As :func:`binormal_power`, with positives' scores U**(1/k) and negatives' U (CDF F**k against F, F uniform;
    AUC = k / (k + 1)) on streams of their own (:data:`LEHMANN_TAG`).  Where the exact Lehmann programme runs
    (:mod:`tablegen.compute.exact.power`) it gives the same power exactly; this is for the cells where it does
    not.

    Parameters
    ----------
    metrics, P, N, critical_values, R, seed, half_width, device :
        As for :func:`binormal_power`.
    k : float
        Lehmann's exponent (> 0; :func:`tablegen.compute.exact.power.lehmann_k` gives it for an AUC).

    Returns
    -------
    LehmannPower, or a tuple of them (one per metric, in order) when ``metrics`` is a sequence.

    Examples
    --------
    >>> result = lehmann_power("auc", 20, 20, 0.70, 3.0, R=2000, seed=1)
    >>> result.ci_low <= result.power <= result.ci_high, result.R, result.auc
    (True, 2000, 0.75)
    """
    return _alternative_power("lehmann", metrics, P, N, critical_values, k, R, seed, half_width, device)


def _check_time(replicates: int, P: int, N: int, model: str, device: str) -> None:
    """Refuse, before drawing, a CPU stage whose estimated time (:data:`SECONDS_PER_ITEM`) exceeds the limit."""
    from tablegen.compute.limits import check_time
    from tablegen.errors import Argument

    if device == "cpu":
        check_time(SECONDS_PER_ITEM * replicates * (P + N), f"{replicates:,} replicates of the {model} alternative at "
                   f"P = {P:,}, N = {N:,}", ("give a smaller ", Argument("R"), " (fewer replicates: a wider "
                                             "interval) or a smaller test set"))


def _alternative_power(model, metrics, P, N, critical_values, d, R, seed, half_width, device):
    from tablegen.compute.mc import KernelLayout

    single = isinstance(metrics, str)
    names, entries, P, N, critical, d, R, seed, half_width, device = _check(
        metrics, P, N, critical_values, d, R, seed, half_width, device, "d" if model == "binormal" else "k")
    tag = _KERNELS[model][0]
    counted = [entry.counted_entry() for entry in entries]
    layout = KernelLayout.for_metrics(counted, P, N)
    columns = np.array([layout.columns[entry.name] for entry in counted], dtype=np.int64)
    divisors = np.array([entry.count_divisor(P, N) for entry in entries], dtype=float)
    thresholds = critical + SNAP_TOLERANCE
    pilot = 0
    if R is None:
        pilot = PILOT_REPLICATES
        _check_time(pilot, P, N, model, device)
        hits = count_significant(P, N, d, binormal_key(seed, P, N, d, PILOT_STAGE, tag), pilot, layout, columns,
                                 divisors, thresholds, device, model=model)
        low, high = clopper_pearson(hits, hits, pilot, PILOT_LEVEL)
        R = max(replicates_for_half_width(half_width, lo, hi) for lo, hi in zip(low, high))
        stage = FINAL_STAGE
    else:
        stage = FIXED_STAGE
    _check_time(R, P, N, model, device)
    hits = count_significant(P, N, d, binormal_key(seed, P, N, d, stage, tag), R, layout, columns, divisors,
                             thresholds, device, model=model)
    lows, highs = clopper_pearson(hits, hits, R)
    kind, auc = (BinormalPower, auc_of_separation(d)) if model == "binormal" else (LehmannPower, d / (d + 1.0))
    results = tuple(kind(name, float(h / R), float(lo), float(hi), int(h), int(R), float(m), d, auc, seed, pilot)
                    for name, h, lo, hi, m in zip(names, hits, lows, highs, critical))
    return results[0] if single else results
