"""The K-class report's answers, each computed once for every model and every metric.

- **The null's pass** (:func:`permutation_null`): the true labels arranged at random, one arrangement applied to
  every model (their dependence kept), every model's four metrics scored on it.  Every distinct arrangement once
  where there are at most :data:`EXACT_ARRANGEMENTS` of them (exact), else R keyed random shuffles
  (:func:`~tablegen.compute.kernels.multiclass_resample.label_permutations`).  Each model's column is its own
  permutation null (its predicted counts and the class counts fixed), so the same pass gives the max-T test and
  the Monte Carlo verdicts against random classifiers.
- **Against the best of C random classifiers** (:func:`versus_random`): each model's conditional p-value
  1 - Pr(X < x)**C, X one random classifier with that model's predicted counts: :func:`tablegen.multiclass_test`'s
  answer where its exact law (the hits' for accuracy and kappa, the weighted diagonal's for balanced accuracy and
  macro-F1: :func:`exact_seconds`) costs at most :data:`EXACT_SECONDS` a model, exact for every metric where the
  arrangements are enumerated, else from the pass (q = (b + 1) / (R + 1), p = 1 - (1 - q)**C,
  the Clopper–Pearson interval of q mapped through it).  The winner is the model with the smallest p.
- **max-T** (:func:`~.multiclass_selection.selection`): Westfall–Young step-down adjusted p-values over the models
  given.
- **Paired tests** (:func:`~.multiclass_resampling.paired_tests`): the winner against each other model,
  one-sided, Holm-adjusted; exact McNemar on accuracy, the swap permutation of the two models' predictions item by
  item on the other metrics (exact over every pattern where at most :data:`EXACT_SWAP_ITEMS` items differ); the
  confidence set of the best.
- **Bootstrap intervals** (:func:`~.multiclass_resampling.bootstrap`): items resampled within each true class, the same
  resamples for every model, BCa (scipy's arithmetic, :func:`~.bootstrap.interval_from_resamples`; the jackknife
  from each model's confusion matrix less one item).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from tablegen.compute.exact.nulls import SNAP_TOLERANCE

logger = logging.getLogger(__name__)

#: The report's metrics, in the kernels' column order.
METRICS = ("accuracy", "kappa", "balanced_accuracy", "macro_f1")
#: Distinct arrangements of the true labels up to which the null is enumerated (exact).
EXACT_ARRANGEMENTS = 20_000
#: Single-core seconds a model's exact accuracy law may cost in the report (else Monte Carlo from the pass).
EXACT_SECONDS = 0.25
#: Items up to which the weighted diagonal's exact law (balanced accuracy, macro-F1) is costed at all: beyond, its cost
#: estimate itself multiplies large rook polynomials (517 s at n = 10^4, K = 10) and the law is far over
#: :data:`EXACT_SECONDS` anyway (estimated 8.6 s at n = 200, K = 20; 296 s at n = 120, K = 3).
WEIGHTED_ITEMS = 400
#: Items on which two models differ up to which every swap pattern is enumerated.
EXACT_SWAP_ITEMS = 16
#: Replicates per kernel call.
BLOCK = 1024


@dataclass(frozen=True)
class Prepared:
    """The arrays every kernel takes, built once."""

    names: tuple
    true_codes: np.ndarray
    predicted: np.ndarray  # (n, M) int32
    true_counts: np.ndarray
    predicted_counts: np.ndarray  # (M, K)
    weights: np.ndarray
    recall_classes: int
    f1_classes: np.ndarray  # (M,)
    classes: tuple
    paired: bool

    @property
    def n(self) -> int:
        return int(self.true_codes.size)

    @property
    def K(self) -> int:
        return int(self.true_counts.size)


def prepare(data) -> Prepared:
    """The kernels' arrays from a :class:`~.multiclass_input.MulticlassData`."""
    from tablegen.compute.kernels.multiclass_resample import recall_weights

    names = tuple(data.predicted)
    predicted = np.ascontiguousarray(np.stack([data.predicted[m] for m in names], axis=1), dtype=np.int32)
    true_counts = data.true_counts()
    predicted_counts = np.stack([np.bincount(predicted[:, m], minlength=data.K) for m in range(len(names))])
    weights, recall_classes = recall_weights(true_counts)
    f1_classes = np.count_nonzero((true_counts + predicted_counts) > 0, axis=1).astype(np.int64)
    return Prepared(names, np.ascontiguousarray(data.true_codes, dtype=np.int32), predicted, true_counts,
                    predicted_counts.astype(np.int64), weights, recall_classes, f1_classes, data.classes, data.paired)


def confusions(prep: Prepared) -> np.ndarray:
    """(M, K, K) confusion matrices, rows true."""
    K = prep.K
    cells = prep.true_codes.astype(np.int64)[:, None] * K + prep.predicted
    return np.stack([np.bincount(cells[:, m], minlength=K * K).reshape(K, K) for m in range(len(prep.names))])


def observed_values(prep: Prepared) -> np.ndarray:
    """(M, 4): every model's four metrics (the kernels' arithmetic)."""
    from tablegen.compute.kernels.multiclass_resample import confusion_scores

    out = np.empty((len(prep.names), len(METRICS)))
    confusion_scores(confusions(prep), prep.f1_classes, out)
    return out


# -- the null's pass ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PermutationNull:
    """The models' metrics on arrangements of the true labels: ``values`` (A, M, 4); exact (every distinct
    arrangement once) or R keyed shuffles under ``seed``."""

    values: np.ndarray
    exact: bool
    R: int | None
    seed: int | None

    @property
    def size(self) -> int:
        return int(self.values.shape[0])


def arrangement_count(true_counts) -> int:
    """The number of distinct arrangements of the labels, n! / prod n_k!.

    Examples
    --------
    >>> arrangement_count([2, 2, 1])
    30
    """
    count, n = 1, 0
    for c in (int(v) for v in true_counts):
        n += c
        count *= math.comb(n, c)
    return count


def pass_rows(true_counts, R: int, exact_limit: int = EXACT_ARRANGEMENTS) -> int:
    """The rows of a permutation pass over labels with ``true_counts``: every distinct arrangement where there are at
    most ``exact_limit`` (the pass enumerates them, whatever R: up to ``exact_limit`` rows where R is smaller), else R.

    Examples
    --------
    >>> pass_rows([2, 2, 1], 10_000), pass_rows([200, 200, 200], 10_000)
    (30, 10000)
    """
    count = enumerated_arrangements(true_counts, exact_limit)
    return R if count is None else count


def enumerated_arrangements(true_counts, exact_limit: int = EXACT_ARRANGEMENTS) -> int | None:
    """The number of distinct arrangements where it is at most ``exact_limit`` (a pass then enumerates them), else
    None (without the huge exact count).

    Examples
    --------
    >>> enumerated_arrangements([2, 2, 1]), enumerated_arrangements([10**6, 10**6, 10**6])
    (30, None)
    """
    counts = [int(v) for v in true_counts]
    if exact_limit < 1:
        return None
    log_count = math.lgamma(sum(counts) + 1) - sum(math.lgamma(c + 1) for c in counts)
    if log_count > math.log(exact_limit) + 1.0:  # far past the limit: its exact count (a huge integer) not needed
        return None
    count = arrangement_count(counts)
    return count if count <= exact_limit else None


def pass_memory(rows: int, models: int, columns: int) -> float:
    """Peak bytes of a permutation pass of ``rows`` and its readers, an upper bound: the values (rows, models,
    columns) as doubles; the max-T test's two (rows, models) copies of a column (the models' values in rank order,
    their running maxima); a verdict's five rows-long arrays of one model's column (its sorted copy, the copy scaled
    by the tie tolerance, the ranks, the counts reaching, the flags).

    Examples
    --------
    >>> pass_memory(200_000, 20, 5) / 1e6  # the values 160 MB, the max-T copies 64 MB, a verdict's 8 MB
    232.0
    """
    return 8.0 * rows * (models * columns + 2 * models + 5)


def labels_memory(true_counts, models: int, R: int, resamples: int) -> float:
    """Peak bytes of the label metrics' pass and bootstrap (:func:`permutation_null`, the resamples of
    :mod:`.multiclass_resampling`, and their readers), an upper bound: :func:`pass_memory` of each (the pass
    enumerated where the arrangements are few: up to :data:`EXACT_ARRANGEMENTS` rows whatever R, and then the
    arrangements' table as it is built, about three int32 copies of each plus 120 bytes a row), 16 bytes a model and
    item besides.

    Examples
    --------
    >>> round(labels_memory([6, 5, 3], 20, 10_000, 2000) / 1e6, 1)  # 168,168 arrangements: R keyed shuffles
    12.0
    """
    n = int(np.sum(true_counts))
    enumerated = enumerated_arrangements(true_counts)
    rows = R if enumerated is None else enumerated
    table = 0.0 if enumerated is None else (12.0 * n + 120.0) * rows
    return (pass_memory(rows, models, len(METRICS)) + pass_memory(resamples, models, len(METRICS)) + table
            + 16.0 * models * n)


def arrangements(true_counts) -> np.ndarray:
    """Every distinct arrangement of the class codes (``true_counts[k]`` copies of k), lexicographic: (A, n) int32.

    Examples
    --------
    >>> arrangements([1, 2]).tolist()
    [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    """
    from itertools import combinations

    layouts = [np.full(int(np.sum(true_counts)), -1, np.int32)]
    for k, count in enumerate(int(c) for c in true_counts):  # each class placed into the free positions
        grown = []
        for layout in layouts:
            for chosen in combinations(np.flatnonzero(layout < 0).tolist(), count):
                child = layout.copy()
                child[list(chosen)] = k
                grown.append(child)
        layouts = grown
    table = np.array(layouts, dtype=np.int32)
    return np.ascontiguousarray(table[np.lexsort(table.T[::-1])])


def permutation_null(prep: Prepared, R: int, seed: int, progress: Callable | None = None,
                     device: str = "cpu") -> PermutationNull:
    """Every model's metrics on each arrangement (exact at most :data:`EXACT_ARRANGEMENTS`) or on R shuffles (scored
    on ``device``, ``"cpu"`` or ``"cuda"``: the kernel or its CUDA twin, the same values)."""
    from tablegen.compute.kernels import multiclass_resample as kernels
    from tablegen.compute.kernels.cuda.device import twin

    M = len(prep.names)
    args = (prep.predicted, prep.predicted_counts, prep.true_counts, prep.weights, prep.recall_classes,
            prep.f1_classes)
    if enumerated_arrangements(prep.true_counts, EXACT_ARRANGEMENTS) is not None:
        table = arrangements(prep.true_counts)
        out = np.empty((table.shape[0], M, len(METRICS)))
        kernels.arrangement_scores(table, *args, out)
        return PermutationNull(out, True, None, None)
    key = kernels.resample_key(seed, prep.n, prep.K, kernels.PERMUTATION_TAG)
    out = np.empty((R, M, len(METRICS)))
    for first in range(0, R, BLOCK):
        twin(kernels.label_permutations, device)(prep.true_codes, *args, *key, first, out[first:first + BLOCK])
        if progress is not None:
            progress(min(first + BLOCK, R), R)
    return PermutationNull(out, False, R, seed)


def reaching_count(values: np.ndarray, x) -> np.ndarray:
    return np.count_nonzero(values >= np.asarray(x) - SNAP_TOLERANCE, axis=0)


def null_tail(b, null: PermutationNull):
    """(estimate, (low, high)) of Pr(T >= x) from b of the pass's values reaching x."""
    from tablegen.compute.stats import CI_LEVEL, clopper_pearson

    if null.exact:
        return b / null.size, (b / null.size, b / null.size)
    low, high = clopper_pearson(b, b, null.size, CI_LEVEL)
    return (b + 1) / (null.size + 1), (float(low), float(high))


def critical_from(values: np.ndarray, null: PermutationNull, level: float) -> float | None:
    """The smallest value v of ``values`` whose tail (as :func:`null_tail` estimates it) is <= ``level``."""
    ordered = np.sort(values)
    b = ordered.size - np.searchsorted(ordered, ordered - SNAP_TOLERANCE, side="left")
    tails = b / ordered.size if null.exact else (b + 1) / (ordered.size + 1)
    ok = tails <= level * (1.0 + 1e-12)
    return float(ordered[np.argmax(ok)]) if ok.any() else None


# -- against the best of C random classifiers -------------------------------------------------------------
@dataclass(frozen=True)
class MulticlassVerdict:
    """Each model against the best of C random classifiers with its own predicted counts; the judged model is the
    one with the smallest p-value (ties: the larger value, then the first given).

    Attributes
    ----------
    metric : str
    model : str
        The judged model.
    tests : dict
        Model -> :class:`~tablegen.lookup.multiclass.MulticlassTest`.
    C, alpha : the question.
    """

    metric: str
    model: str
    tests: dict
    C: int
    alpha: float

    @property
    def p_value(self) -> float:
        return self.tests[self.model].p_value

    @property
    def significant(self) -> bool:
        return self.tests[self.model].significant

    def sentence(self) -> str:
        """The judged model's verdict in words, saying how it was chosen where there are several models."""
        if len(self.tests) == 1:
            return f"{self.model}'s {self.tests[self.model].sentence()}"
        return (f"{self.model} has the smallest p-value of the {len(self.tests)} models, each against random "
                f"classifiers dealt its own predictions: its {self.tests[self.model].sentence()}")

    def to_dict(self) -> dict:
        from tablegen.common.outputs import json_ready

        return json_ready({"metric": self.metric, "model": self.model, "C": self.C, "alpha": self.alpha,
                           "p_value": self.p_value, "significant": self.significant,
                           "tests": {m: t.to_dict() for m, t in self.tests.items()}})


def versus_random(prep: Prepared, observed: np.ndarray, null: PermutationNull, metric: str, C: int, alpha: float,
                  seed: int, device: str = "cpu") -> MulticlassVerdict:
    """Every model's conditional verdict on ``metric`` and the judged (smallest p) model."""
    column = METRICS.index(metric)
    tests = {name: _one_verdict(prep, observed, null, m, metric, column, C, alpha, seed, device)
             for m, name in enumerate(prep.names)}
    judged = min(prep.names, key=lambda name: (tests[name].p_value, -tests[name].value, prep.names.index(name)))
    return MulticlassVerdict(metric, judged, tests, C, alpha)


def exact_seconds(metric: str, true_counts, predicted_counts) -> float:
    """The estimated single-core seconds of ``metric``'s exact law for these margins: the hits' law
    (:func:`~tablegen.compute.exact.multiclass.accuracy_seconds`) for accuracy and kappa, and for balanced accuracy
    or macro-F1 where every class that can have a hit weighs the same; else the weighted diagonal's
    (:func:`~tablegen.compute.exact.multiclass_weighted.weighted_seconds`; infinite beyond :data:`WEIGHTED_ITEMS`
    items, where it is not costed).

    Examples
    --------
    >>> exact_seconds("accuracy", [10, 10, 10], [10, 10, 10]) < 0.25, exact_seconds("macro_f1", [9, 8], [7, 10]) > 0
    (True, True)
    """
    from tablegen.compute.exact.multiclass import accuracy_seconds
    from tablegen.compute.exact.multiclass_weighted import diagonal_weights, equal_weight, weighted_seconds

    true, predicted = [int(v) for v in true_counts], [int(v) for v in predicted_counts]
    if metric in ("accuracy", "kappa"):
        return accuracy_seconds(true, predicted)
    weights = diagonal_weights(metric, true, predicted)
    if equal_weight(weights) is not None:
        return accuracy_seconds(true, predicted)
    if sum(true) > WEIGHTED_ITEMS:
        return math.inf  # not costed: far over any report's budget (WEIGHTED_ITEMS)
    return weighted_seconds(true, predicted, weights)


def exact_law_fits(prep: Prepared, m: int, metric: str = "accuracy") -> bool:
    """Whether model ``m``'s exact law of ``metric`` costs at most :data:`EXACT_SECONDS`."""
    return exact_seconds(metric, prep.true_counts, prep.predicted_counts[m]) <= EXACT_SECONDS


def _one_verdict(prep, observed, null, m, metric, column, C, alpha, seed, device="cpu"):
    from tablegen.lookup.multiclass import MulticlassTest, multiclass_test

    if not null.exact and exact_law_fits(prep, m, metric):  # multiclass_test's own answer: its exact law
        labels = [prep.classes[k] for k in prep.true_codes.tolist()]
        predicted = [prep.classes[k] for k in prep.predicted[:, m].tolist()]
        return multiclass_test(labels, predicted, metric, C=C, alpha=alpha, seed=seed, device=device)
    from tablegen.compute.stats import p_value_from_tail, upper_tail_probability

    values = null.values[:, m, column]
    x = float(observed[m, column])
    b = int(reaching_count(values, x))
    tail, (low, high) = null_tail(b, null)
    t = float(upper_tail_probability(C, alpha))
    p = float(p_value_from_tail(tail, C))
    interval = None if null.exact else (float(p_value_from_tail(low, C)), float(p_value_from_tail(high, C)))
    critical = critical_from(values, null, t)
    n = prep.n
    hits = int(round(observed[m, 0] * n))
    critical_hits = None
    if metric in ("accuracy", "kappa"):
        critical_hits = _critical_hits(np.rint(null.values[:, m, 0] * n).astype(np.int64), null, t)
        if null.exact:  # the smallest number of hits significant, attainable or not, as multiclass_test says it
            critical = None if critical_hits is None else _hits_as(metric, critical_hits, prep, m)
    return MulticlassTest(
        metric=metric, value=x, p_value=p, p_bounded=False, critical_value=critical,
        significant=p <= alpha, method="exact" if null.exact else "monte carlo", C=C, alpha=alpha, n=n, hits=hits,
        critical_hits=critical_hits, classes=prep.classes, true_counts=tuple(prep.true_counts.tolist()),
        predicted_counts=tuple(prep.predicted_counts[m].tolist()),
        expected_value=expected_value(metric, prep.true_counts, prep.predicted_counts[m]), tail_probability=t,
        replicates=null.R, seed=null.seed, reaching=None if null.exact else b, p_interval=interval)


def _critical_hits(hits: np.ndarray, null: PermutationNull, level: float) -> int | None:
    """The smallest number of hits h whose tail (as :func:`null_tail` estimates it) is <= ``level``; exact: one more
    than the largest attainable count whose tail is not (None where that is the most hits attained); Monte Carlo:
    the smallest replicate count whose tail is."""
    values, counts = np.unique(hits, return_counts=True)
    reaching = np.cumsum(counts[::-1])[::-1]
    tails = reaching / hits.size if null.exact else (reaching + 1) / (hits.size + 1)
    ok = tails <= level * (1.0 + 1e-12)
    if null.exact:
        failing = values[~ok]
        return None if failing[-1] == values[-1] else int(failing[-1]) + 1
    return int(values[np.argmax(ok)]) if ok.any() else None


def _hits_as(metric: str, hits: int, prep: Prepared, m: int) -> float:
    from tablegen.compute.exact.multiclass import kappa_from_hits

    if metric == "accuracy":
        return hits / prep.n
    return kappa_from_hits(hits, prep.true_counts.tolist(), prep.predicted_counts[m].tolist())


def expected_value(metric: str, true_counts, predicted_counts) -> float:
    """The metric's mean under the permutation null (E[TP_k] = n_k m_k / n), exactly, rounded once.

    Examples
    --------
    >>> expected_value("accuracy", [2, 2], [1, 3]), expected_value("balanced_accuracy", [2, 2, 0], [1, 2, 1])
    (0.5, 0.375)
    """
    pairs = [(int(a), int(b)) for a, b in zip(true_counts, predicted_counts)]
    n = sum(a for a, _ in pairs)
    if metric == "accuracy":
        return float(Fraction(sum(a * b for a, b in pairs), n * n))
    if metric == "kappa":
        return 0.0
    if metric == "balanced_accuracy":
        with_items = [b for a, b in pairs if a > 0]
        return float(Fraction(sum(with_items), n * len(with_items)))
    counted = [(a, b) for a, b in pairs if a + b > 0]
    return float(sum(Fraction(2 * a * b, n * (a + b)) for a, b in counted) / len(counted))
