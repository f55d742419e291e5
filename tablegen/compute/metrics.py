"""Metric registry: the definition, range, support and slow numpy reference scorer of each metric.

Definitions follow DESIGN §1 (normative).  A ranking is a 0/1 label vector read from the top;
prefix k holds TP_k positives and FP_k = k - TP_k negatives, k = 0 .. P+N.  All metrics are
"higher is better".  The reference scorers here are deliberately plain numpy over whole prefix
arrays: they are the independent check of the numba kernel (``tests/test_kernel.py``), not the
production path.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

_AT_K = re.compile(r"^(tp|precision)_at_([1-9][0-9]*)$")


def _prefix_counts(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TP_k, FP_k and k for k = 0..n of each row of a (R, n) 0/1 label matrix."""
    labels = np.asarray(labels, dtype=np.int64)
    tp = np.concatenate([np.zeros((labels.shape[0], 1), np.int64), np.cumsum(labels, axis=1)], axis=1)
    k = np.arange(labels.shape[1] + 1)
    return tp, k - tp, k


def _reference_auc(labels, P, N):
    tp, _, _ = _prefix_counts(labels)
    negatives = 1 - np.asarray(labels, dtype=np.int64)
    return (negatives * tp[:, :-1]).sum(axis=1) / (P * N)


def _reference_best_accuracy(labels, P, N):
    tp, fp, _ = _prefix_counts(labels)
    return ((tp + N - fp) / (P + N)).max(axis=1)


def _reference_best_f1(labels, P, N):
    tp, _, k = _prefix_counts(labels)
    f1 = 2 * tp / (P + k)  # k = 0 gives 0 / P = 0, as defined
    return f1.max(axis=1)


def _reference_best_balanced_accuracy(labels, P, N):
    tp, fp, _ = _prefix_counts(labels)
    return (0.5 * (tp / P + 1 - fp / N)).max(axis=1)


def _reference_average_precision(labels, P, N):
    tp, _, k = _prefix_counts(labels)
    labels = np.asarray(labels, dtype=np.int64)
    precision_at_rank = tp[:, 1:] / k[1:]
    return (labels * precision_at_rank).sum(axis=1) / P


def _reference_tp_at(k_cut):
    def score(labels, P, N):
        tp, _, _ = _prefix_counts(labels)
        return tp[:, min(k_cut, P + N)].astype(np.float64)

    return score


def _reference_precision_at(k_cut):
    count = _reference_tp_at(k_cut)

    def score(labels, P, N):
        return count(labels, P, N) / min(k_cut, P + N)

    return score


def _tp_at_range(k, P, N):
    return float(max(0, min(k, P + N) - N)), float(min(k, P))


def _min_average_precision(P, N):
    """All positives at the bottom: mean over i = 1..P of i / (N + i) = 1 - (N / P) sum_i 1 / (N + i).

    Summed directly up to P = 10^6 (in blocks); beyond, the harmonic gap H(N + P) - H(N) comes from
    the digamma difference, exact to double precision there, so any P answers in constant memory.
    """
    if P <= 10**6:
        i = np.arange(1, P + 1)
        return float(np.mean(i / (N + i)))
    return 1.0 - N / P * _harmonic_gap(N, P)


def _harmonic_gap(N: int, P: int) -> float:
    """sum_{i=1..P} 1/(N + i) = psi(N + P + 1) - psi(N + 1) (scipy's digamma, taken as a difference of
    logs plus its asymptotic corrections where both arguments are large)."""
    from scipy.special import digamma

    a, b = float(N + 1), float(N + P + 1)
    if a < 1e6:
        return float(digamma(b) - digamma(a))
    correction = lambda x: -1 / (2 * x) - 1 / (12 * x * x)  # noqa: E731  psi(x) = log x + this + O(x^-4)
    return math.log1p((b - a) / a) + correction(b) - correction(a)


@dataclass(frozen=True)
class Metric:
    """One metric: its name, definition and range, and its reference scorer.

    Attributes
    ----------
    name : str
        Registry name, e.g. ``"auc"`` or ``"tp_at_10"``.
    definition : str
        The definition of DESIGN §1, in words.
    k : int or None
        The cut-off of a ``tp_at_k`` or ``precision_at_k`` metric, else None.
    has_exact : bool
        Whether :mod:`tablegen.compute.exact` has an exact null distribution for it.
    count_of : str or None
        For ``precision_at_k``: the count metric ``tp_at_k`` it divides by :meth:`count_divisor`
        (the same event, so the Monte Carlo engine and the tables store only the count).
    integer_valued : bool
        Whether every value is an integer (a count): a fractional score cannot occur.
    """

    name: str
    definition: str
    reference: Callable[[np.ndarray, int, int], np.ndarray]
    value_range: Callable[[int, int], tuple[float, float]]
    k: int | None = None
    has_exact: bool = True
    count_of: str | None = None
    integer_valued: bool = False

    def count_divisor(self, P: int, N: int) -> int:
        """min(k, P + N) for ``precision_at_k`` (value = count / divisor), 1 for every other metric."""
        return min(self.k, P + N) if self.count_of is not None else 1

    def reference_scores(self, labels: np.ndarray, P: int, N: int) -> np.ndarray:
        """Score each row of a (R, P+N) 0/1 label matrix (top first) by the definition."""
        return self.reference(np.atleast_2d(labels), P, N)

    def range(self, P: int, N: int) -> tuple[float, float]:
        """Smallest and largest value the metric can take on a ranking of P positives, N negatives."""
        return self.value_range(P, N)


_BASE = {
    "auc": Metric(
        "auc",
        "U/(P*N), U = number of (positive, negative) pairs with the positive ranked above",
        _reference_auc,
        lambda P, N: (0.0, 1.0),
    ),
    "best_accuracy": Metric(
        "best_accuracy",
        "max over the P+N+1 thresholds of (TP_k + N - FP_k)/(P+N)",
        _reference_best_accuracy,
        lambda P, N: (max(P, N) / (P + N), 1.0),
    ),
    "best_f1": Metric(
        "best_f1",
        "max over thresholds of 2*TP_k/(P+k) (0 at k = 0)",
        _reference_best_f1,
        lambda P, N: (2 * P / (2 * P + N), 1.0),
    ),
    "best_balanced_accuracy": Metric(
        "best_balanced_accuracy",
        "max over thresholds of (TP_k/P + 1 - FP_k/N)/2",
        _reference_best_balanced_accuracy,
        lambda P, N: (0.5, 1.0),
    ),
    "average_precision": Metric(
        "average_precision",
        "mean over the positives of the precision TP_k/k at that positive's rank k",
        _reference_average_precision,
        lambda P, N: (_min_average_precision(P, N), 1.0),
        has_exact=False,
    ),
}

#: Names of the metrics with no parameter; ``tp_at_<k>`` and ``precision_at_<k>`` for any k >= 1 are also known.
BASE_METRICS = tuple(_BASE)
#: Metrics a run scores when none are named.
DEFAULT_METRICS = (*BASE_METRICS, "tp_at_10")


def known_metrics_text() -> str:
    """The list of known metric names, for error messages."""
    return (", ".join(BASE_METRICS) + ", tp_at_<k> (a count) and precision_at_<k> (a fraction) for any integer "
            "k >= 1 (e.g. tp_at_10, precision_at_10)")


def get_metric(name: str) -> Metric:
    """Return the :class:`Metric` called ``name``.

    Raises
    ------
    KeyError
        If the name is unknown (the message lists the known ones).
    """
    if name in _BASE:
        return _BASE[name]
    match = _AT_K.match(name) if isinstance(name, str) else None
    if match is None:
        raise KeyError(f"unknown metric {name!r}; known metrics: {known_metrics_text()}")
    kind, k = match.group(1), int(match.group(2))
    if kind == "tp":
        return Metric(
            name,
            f"TP_{k}: the count of positives among the top {k} (all P when {k} >= P+N)",
            _reference_tp_at(k),
            lambda P, N, k=k: _tp_at_range(k, P, N),
            k=k,
            integer_valued=True,
        )
    return Metric(
        name,
        f"TP_{k} / min({k}, P+N): the fraction of positives among the top {k}",
        _reference_precision_at(k),
        lambda P, N, k=k: tuple(v / min(k, P + N) for v in _tp_at_range(k, P, N)),
        k=k,
        count_of=f"tp_at_{k}",
    )
