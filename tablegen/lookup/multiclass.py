"""Is a K-class classifier's accuracy (kappa, balanced accuracy, macro-F1) better than the best of C random classifiers?

The random classifier keeps the tested model's predictions and permutes them uniformly over the items: the
true class counts n_k and the predicted counts m_k stay fixed (the conditional null, as the tie-conditional
AUC null is for scores).  Its hits X follow the exact law of :mod:`tablegen.compute.exact.multiclass`; the
best of C independent random classifiers with the same predicted counts beats x with probability
1 - Pr(X < x)**C, the p-value.  Kappa is an increasing affine function of the hits when both margins are
fixed, so it has the same p-value and its critical value is the accuracy's, transformed.
``docs/explanation/multiclass-accuracy.md`` proves the law and the level.

Balanced accuracy and macro-F1 are linear in the diagonal counts when both margins are fixed: their exact law is the
weighted rook programme of :mod:`tablegen.compute.exact.multiclass_weighted` (the hits' law where every class that
can have a hit has the same weight, as in balanced designs).  Any metric whose exact law would take longer than the
time limit is answered by Monte Carlo: R replicates of the same null from the keyed permutation kernel
(:mod:`tablegen.compute.kernels.multiclass`), the single-classifier tail q = Pr(X >= x) estimated by
(b + 1) / (R + 1) (b replicates reaching x), the p-value 1 - (1 - q)**C with the Clopper–Pearson interval of q
mapped through the same increasing function.
"""

from __future__ import annotations

import logging
import math
import numbers
from collections.abc import Hashable, Iterable
from fractions import Fraction

import numpy as np

from tablegen.compute.exact.multiclass import (
    TIE_RTOL,
    accuracy_bytes,
    accuracy_null,
    accuracy_seconds,
    chance_agreement,
    kappa_from_hits,
)
from tablegen.compute.limits import check_memory, check_time, memory_limit_bytes, time_limit_seconds
from tablegen.compute.stats import clopper_pearson, p_value_from_tail, upper_tail_probability
from tablegen.compute.validation import MAX_REPLICATES, check_alpha, check_competitors, check_integer, check_seed
from tablegen.errors import Argument, TablegenInputError
from tablegen.lookup.multiclass_results import MulticlassTest

logger = logging.getLogger(__name__)

#: The metrics that are functions of the hits (exact by the hits' law within the time limit; else Monte Carlo).
EXACT_METRICS = ("accuracy", "kappa")
#: Every metric :func:`multiclass_test` answers: the last two (weighted sums of the diagonal) exactly by the weighted
#: rook programme within the time limit, else by Monte Carlo.
METRICS = EXACT_METRICS + ("balanced_accuracy", "macro_f1")
#: ``method="auto"`` computes the exact law when its estimate is at most this many seconds (as the binary lookups'
#: :data:`tablegen.lookup.api.LOOKUP_SECONDS`), or less than the Monte Carlo answer's; else it simulates.
AUTO_EXACT_SECONDS = 10.0
#: The methods of :func:`multiclass_test`.
METHODS = ("auto", "exact", "monte carlo")
#: The least number of Monte Carlo replicates by default; more where C and alpha need them
#: (:func:`default_replicates`).
DEFAULT_REPLICATES = 10_000
#: Single-core seconds per item and replicate of the permutation kernel, with room for a loaded machine (measured
#: about 1.5 ns on the development machine, AMD EPYC; the binary permutation kernel about 1.9 ns).
SECONDS_PER_ELEMENT_STEP = 4e-9
#: Replicates per kernel call (bounds the scratch memory: 24 bytes a replicate).
_BLOCK = 1 << 16


def multiclass_test(labels: Iterable[Hashable], predicted: Iterable[Hashable], metric: str = "accuracy", C: int = 1,
                    alpha: float = 0.05, R: int | None = None, seed: int | None = None,
                    method: str = "auto", device: str = "cpu") -> MulticlassTest:
    """Test a K-class model's accuracy, Cohen's kappa, balanced accuracy or macro-F1 against the best of C random
    classifiers.

    The random classifiers share the model's predicted counts: each is the model's predictions permuted
    uniformly over the items (independent across the C).  For accuracy and kappa the p-value 1 - Pr(X < x)**C
    comes from the exact law of the hits X (:mod:`tablegen.compute.exact.multiclass`); at C = 1 it is the
    permutation test's.  Balanced accuracy and macro-F1 come from the exact law of their weighted diagonal
    (:mod:`tablegen.compute.exact.multiclass_weighted`; ties are equal rationals).  Where the exact law would be
    dear (``method="auto"``: estimated above :data:`AUTO_EXACT_SECONDS` and above simulating, or beyond the time or
    memory limit) the answer is Monte Carlo (``method`` says which, never an approximation called exact): R
    permutations from keyed streams (the same question, the same replicates), the single-classifier tail q estimated
    by (b + 1) / (R + 1), b the replicates reaching the model's value, and the p-value 1 - (1 - q)**C with its 95%
    interval (``p_interval``).

    Parameters
    ----------
    labels : sequence of hashable values
        The true class of each item (strings, integers, ...; at least two classes).  Values that compare
        equal are one class (``1``, ``1.0`` and ``True`` are the same class, as in a Python dict).
    predicted : sequence of hashable values
        The model's predicted class of each item, the same length.  A predicted class that no item has is
        allowed: it is counted as a class with no items, so its predictions are never hits (they count
        against accuracy, and kappa's chance agreement gets nothing from them).
    metric : {"accuracy", "kappa", "balanced_accuracy", "macro_f1"}
        Accuracy (micro-F1 for single-label predictions) or Cohen's kappa (the same p-value); balanced accuracy
        (the mean over the classes with items of TP_k / n_k: a class only predicted is left out, as in
        scikit-learn) or macro-F1 (the mean over all classes of 2 TP_k / (n_k + m_k): a class only predicted
        scores 0).
    C : int
        The number of random classifiers the model is the best of (>= 1).
    alpha : float
        The level, in (0, 1); default 0.05, the level of the multi-class report (``evaluate``).
    R : int, optional
        Monte Carlo replicates, where the answer simulates; default :func:`default_replicates`: 10,000, or
        10 / t where that is more (t = 1 - (1 - alpha)**(1/C): ten replicates expected beyond the critical value).
    seed : int, optional
        Root seed of the replicates' streams, in [0, 2**64); default 2005
        (:data:`~tablegen.compute.cell.DEFAULT_SEED`).  The streams are keyed by the seed, n and K.
    method : {"auto", "exact", "monte carlo"}
        ``"auto"``: exact where the exact law's estimated cost (:func:`exact_cost`) is at most
        :data:`AUTO_EXACT_SECONDS`, or less than the Monte Carlo answer's, and within the time and memory limits; else
        Monte Carlo.  ``"exact"``: the exact law, refused (:class:`~tablegen.compute.limits.ResourceLimitError`)
        beyond the limits.  ``"monte carlo"``: Monte Carlo always (a caller with a budget of its own, as the
        multi-class report, asks for it where the exact law would cost more than that budget).
    device : {"cpu", "cuda", "auto"}
        Where the Monte Carlo replicates are scored: ``"cuda"`` runs the kernel's CUDA twin on a GPU, the same keyed
        replicates, so the same answer bit for bit (an error naming ``device`` where there is no GPU); ``"auto"`` a
        GPU if one is visible, else the CPU.  Exact answers run on the CPU.

    Returns
    -------
    MulticlassTest

    Raises
    ------
    TablegenInputError
        Naming the argument: labels or predictions empty, of different lengths, not one-dimensional, with a
        missing value (None or NaN) or an unhashable one, or with a single true class; an unknown metric; C
        or alpha out of range; R not an integer in [1, 2**53], seed not one in [0, 2**64).
    ResourceLimitError
        Where the Monte Carlo answer would take longer than the time limit (``TABLEGEN_TIME_LIMIT``: the exact
        answer beyond it falls back to Monte Carlo; on the CPU only: a GPU's time is not estimated, so
        ``device="cuda"`` is not refused by it) or need more memory than the memory limit.

    Examples
    --------
    >>> result = multiclass_test([0, 0, 1, 1, 2, 2, 2, 2], [0, 0, 1, 2, 2, 2, 2, 1])
    >>> result.value, result.hits, result.p_value, result.critical_value, result.significant
    (0.75, 6, 0.05, 0.75, True)
    >>> result.p_value == 0.05  # Pr(X >= 6) = 1/20 exactly: p <= alpha, significant
    True
    >>> kappa = multiclass_test([0, 0, 1, 1, 2, 2, 2, 2], [0, 0, 1, 2, 2, 2, 2, 1], metric="kappa")
    >>> round(kappa.value, 4), kappa.p_value == result.p_value
    (0.6, True)
    >>> balanced = multiclass_test([0, 0, 1, 1, 2, 2, 2, 2], [0, 0, 1, 2, 2, 2, 2, 1], metric="balanced_accuracy")
    >>> balanced.value, balanced.method, balanced.p_value == 17 / 420, round(balanced.critical_value, 6)
    (0.75, 'exact', True, 0.666667)
    >>> simulated = multiclass_test([0, 0, 1, 1, 2, 2, 2, 2], [0, 0, 1, 2, 2, 2, 2, 1], metric="balanced_accuracy",
    ...                             method="monte carlo")
    >>> simulated.method, simulated.replicates, simulated.p_interval[0] < simulated.p_value
    ('monte carlo', 10000, True)
    """
    metric = _check_metric(metric)
    C = check_competitors(C)
    alpha = check_alpha("alpha", alpha)
    R = None if R is None else check_integer("R", R, 1)
    if R is not None and R > MAX_REPLICATES:
        raise TablegenInputError.naming(Argument("R"), f" must be at most 2**53 = {MAX_REPLICATES:,}, got {R:,}")
    seed = check_seed("seed", seed, allow_none=True)
    if method not in METHODS:
        raise TablegenInputError.naming(Argument("method"), f" must be 'auto', 'exact' or 'monte carlo', got "
                                        f"{method!r}")
    from tablegen.compute.kernels.cuda.device import resolve_device

    device = resolve_device(device)
    classes, true_codes, predicted_codes = _encode(labels, predicted)
    K = len(classes)
    true_counts = tuple(int(c) for c in np.bincount(true_codes, minlength=K))
    predicted_counts = tuple(int(c) for c in np.bincount(predicted_codes, minlength=K))
    present = [classes[k] for k in range(K) if true_counts[k] > 0]
    if len(present) < 2:
        raise TablegenInputError.naming(
            Argument("labels"), f" has one class only ({present[0]!r}): a random classifier then scores 100% "
            "accuracy; at least two true classes are needed")
    if not _answers_exactly(metric, method, C, alpha, R, true_counts, predicted_counts):
        return _monte_carlo(metric, C, alpha, R, seed, classes, true_codes, predicted_codes, true_counts,
                            predicted_counts, device)
    if metric not in EXACT_METRICS:
        return _exact_weighted(metric, C, alpha, classes, true_codes, predicted_codes, true_counts, predicted_counts)
    null = accuracy_null(true_counts, predicted_counts)
    hits = int(np.count_nonzero(true_codes == predicted_codes))
    critical_hits = null.critical_hits(C, alpha)
    p_value, bounded = null.p_value(hits, C)
    logger.debug("multiclass_test: n=%d K=%d hits=%d critical=%s p=%g", null.n, K, hits, critical_hits, p_value)

    def as_metric(x: int) -> float:
        return x / null.n if metric == "accuracy" else kappa_from_hits(x, true_counts, predicted_counts)

    expected = float(chance_agreement(true_counts, predicted_counts)) if metric == "accuracy" else 0.0
    return MulticlassTest(
        metric=metric, value=as_metric(hits), p_value=p_value, p_bounded=bounded,
        critical_value=None if critical_hits is None else as_metric(critical_hits),
        significant=critical_hits is not None and hits >= critical_hits, method="exact", C=C, alpha=alpha,
        n=null.n, hits=hits, critical_hits=critical_hits, classes=classes, true_counts=true_counts,
        predicted_counts=predicted_counts, expected_value=expected,
        tail_probability=float(upper_tail_probability(C, alpha)))


def exact_cost(metric: str, true_counts, predicted_counts) -> tuple[float, float]:
    """(seconds, bytes) the exact law of ``metric`` for these margins is estimated to take.

    Accuracy and kappa cost :func:`~tablegen.compute.exact.multiclass.accuracy_seconds` and
    :func:`~tablegen.compute.exact.multiclass.accuracy_bytes`; balanced accuracy and macro-F1
    :func:`~tablegen.compute.exact.multiclass_weighted.weighted_cost` (the same where they are functions of the
    hits: equal weights, or two classes).

    Examples
    --------
    >>> seconds, memory = exact_cost("accuracy", (30, 40, 50), (40, 40, 40))
    >>> seconds < 1.0, memory < 1e6
    (True, True)
    """
    from tablegen.compute.exact.multiclass_weighted import diagonal_weights, weighted_cost

    if metric not in EXACT_METRICS:
        return weighted_cost(true_counts, predicted_counts, diagonal_weights(metric, true_counts, predicted_counts))
    return accuracy_seconds(true_counts, predicted_counts), accuracy_bytes(true_counts, predicted_counts)


def _answers_exactly(metric: str, method: str, C: int, alpha: float, R, true_counts, predicted_counts) -> bool:
    """Whether :func:`multiclass_test` computes the exact law (its ``method``'s rule); ``"exact"`` beyond the limits
    is refused, naming ``method``."""
    if method == "monte carlo":
        return False
    seconds, memory = exact_cost(metric, true_counts, predicted_counts)
    if method == "exact":
        what = f"the exact null of {metric} at n = {sum(true_counts):,}, K = {len(true_counts)}"
        way_out = ("use ", Argument("method", "auto"), " (Monte Carlo where the exact law is dear)")
        check_time(seconds, what, way_out)
        check_memory(memory, what, way_out)
        return True
    if seconds > time_limit_seconds() or memory > memory_limit_bytes():
        return False
    simulating = (default_replicates(C, alpha) if R is None else R) * sum(true_counts) * SECONDS_PER_ELEMENT_STEP
    return seconds <= AUTO_EXACT_SECONDS or seconds <= simulating


def exact_fits(metric: str, true_counts, predicted_counts) -> bool:
    """Whether the exact law of ``metric`` for these margins is estimated within the time limit
    (``TABLEGEN_TIME_LIMIT``) and the memory limit (``TABLEGEN_MEMORY_LIMIT``) (:func:`exact_cost`).

    Examples
    --------
    >>> exact_fits("macro_f1", (30, 40, 50), (40, 40, 40))
    True
    >>> exact_fits("macro_f1", (997, 1009, 1013), (1006, 1006, 1007))  # W ranges over about 10^9 values
    False
    """
    seconds, memory = exact_cost(metric, true_counts, predicted_counts)
    return seconds <= time_limit_seconds() and memory <= memory_limit_bytes()


def _exact_weighted(metric, C, alpha, classes, true_codes, predicted_codes, true_counts,
                    predicted_counts) -> MulticlassTest:
    """Balanced accuracy or macro-F1 from the exact law of W = sum_k w_k T_kk (the hits' law where W is an affine
    function of the hits: equal weights, or two classes)."""
    from tablegen.compute.exact.multiclass_weighted import diagonal_weights, hits_map, weighted_null

    weights = diagonal_weights(metric, true_counts, predicted_counts)
    diagonal = np.bincount(true_codes[true_codes == predicted_codes], minlength=len(classes))
    key, hits = weights.key(diagonal.tolist()), int(diagonal.sum())
    affine = hits_map(weights, true_counts, predicted_counts)
    if affine is not None:  # W = a X + b (a >= 0): the hits' law
        null = accuracy_null(true_counts, predicted_counts)
        critical_hits = null.critical_hits(C, alpha)
        odd = critical_hits is not None and (critical_hits - true_counts[1] + predicted_counts[0]) % 2
        if len(classes) == 2 and odd:  # two classes: X = 2 T_11 + n_2 - m_1 takes every other integer
            critical_hits += 1  # the next attainable
        critical_key = None if critical_hits is None else affine[0] * critical_hits + affine[1]
        p_value, bounded = null.p_value(hits, C)
    else:
        null = weighted_null(metric, true_counts, predicted_counts)
        critical_key = null.critical_key(C, alpha)
        p_value, bounded = null.p_value(key, C)
    logger.debug("multiclass_test (%s, exact): n=%d K=%d W=%d critical=%s p=%g", metric, len(true_codes),
                 len(classes), key, critical_key, p_value)
    return MulticlassTest(
        metric=metric, value=float(_observed(true_codes, predicted_codes, true_counts, predicted_counts)[metric]),
        p_value=p_value, p_bounded=bounded,
        critical_value=None if critical_key is None else float(weights.value(critical_key)),
        significant=critical_key is not None and key >= critical_key, method="exact", C=C, alpha=alpha,
        n=len(true_codes), hits=hits, critical_hits=None, classes=classes, true_counts=true_counts,
        predicted_counts=predicted_counts, expected_value=_expected(metric, true_counts, predicted_counts),
        tail_probability=float(upper_tail_probability(C, alpha)))


def _observed(true_codes, predicted_codes, true_counts, predicted_counts) -> dict[str, float]:
    """The metrics of the labels as they are, by the kernel's arithmetic (the Monte Carlo path and the multi-class
    report give the same doubles)."""
    from tablegen.compute.kernels.multiclass import COLUMNS, class_weights, observed_values

    observed = np.empty((1, len(COLUMNS)))
    observed_values(true_codes.astype(np.int32), predicted_codes.astype(np.int32),
                    *class_weights(true_counts, predicted_counts), observed)
    return dict(zip(COLUMNS, observed[0].tolist()))


def default_replicates(C: int, alpha: float) -> int:
    """The Monte Carlo replicates :func:`multiclass_test` uses unless told: :data:`DEFAULT_REPLICATES`, or 10 / t
    where that is more (t = 1 - (1 - alpha)**(1/C)), so that about ten replicates lie beyond the critical value.

    Examples
    --------
    >>> default_replicates(1, 0.05), default_replicates(1000, 0.05)
    (10000, 194963)
    """
    return max(DEFAULT_REPLICATES, math.ceil(10.0 / float(upper_tail_probability(C, alpha))))


def _monte_carlo(metric, C, alpha, R, seed, classes, true_codes, predicted_codes, true_counts,
                 predicted_counts, device="cpu") -> MulticlassTest:
    """The Monte Carlo answer: R replicates of the permutation null from the keyed kernel (its CUDA twin with
    ``device="cuda"``)."""
    from tablegen.compute.cell import DEFAULT_SEED
    from tablegen.compute.kernels.multiclass import COLUMNS, HITS, class_weights, observed_values

    n, K = len(true_codes), len(classes)
    R = default_replicates(C, alpha) if R is None else R
    seed = DEFAULT_SEED if seed is None else seed
    what = f"the Monte Carlo multi-class null at n = {n:,}, K = {K}, R = {R:,}"
    if device == "cpu":  # a GPU's time is not estimated (no GPU cost model measured on hardware): not refused by it
        check_time(R * n * SECONDS_PER_ELEMENT_STEP, what, ("use fewer replicates (", Argument("R"), ") or fewer "
                   "items (a random subsample keeps the test valid), or raise TABLEGEN_TIME_LIMIT"))
    else:
        logger.info("%s on the GPU: its time is not estimated (about %.3g s if on one CPU core)", what,
                    R * n * SECONDS_PER_ELEMENT_STEP)
    check_memory(8.0 * R + 24.0 * min(R, _BLOCK) + 16.0 * n, what, ("use fewer replicates (", Argument("R"), ")"))
    true32, predicted32 = true_codes.astype(np.int32), predicted_codes.astype(np.int32)
    weights = class_weights(true_counts, predicted_counts)
    column = HITS if metric in EXACT_METRICS else COLUMNS.index(metric)
    observed = np.empty((1, len(COLUMNS)))
    observed_values(true32, predicted32, *weights, observed)
    values = _replicate_values(true32, predicted32, weights, seed, K, R, column, device)
    x = float(observed[0, column])
    floor = x * (1.0 - TIE_RTOL)  # values >= 0: a replicate within 1e-12 relative below x reaches it
    reaching = int(np.count_nonzero(values >= floor))
    tail = (reaching + 1) / (R + 1)
    low, high = clopper_pearson(reaching, reaching, R)
    p_value = float(p_value_from_tail(tail, C))
    p_interval = (float(p_value_from_tail(float(low), C)), float(p_value_from_tail(float(high), C)))
    threshold = float(upper_tail_probability(C, alpha))
    critical = critical_from_replicates(values, threshold)
    hits = int(observed[0, HITS])
    logger.debug("multiclass_test (Monte Carlo): n=%d K=%d R=%d b=%d p=%g", n, K, R, reaching, p_value)
    if metric in EXACT_METRICS:
        value = _hits_as(metric, hits, n, true_counts, predicted_counts)
        critical_hits = None if critical is None else int(critical)
        critical_value = None if critical is None else _hits_as(metric, critical_hits, n, true_counts,
                                                                 predicted_counts)
    else:
        value, critical_hits, critical_value = x, None, critical
    return MulticlassTest(
        metric=metric, value=value, p_value=p_value, p_bounded=False, critical_value=critical_value,
        significant=p_value <= alpha, method="monte carlo", C=C, alpha=alpha, n=n, hits=hits,
        critical_hits=critical_hits, classes=classes, true_counts=true_counts, predicted_counts=predicted_counts,
        expected_value=_expected(metric, true_counts, predicted_counts), tail_probability=threshold,
        replicates=R, seed=seed, reaching=reaching, p_interval=p_interval)


def _replicate_values(true32, predicted32, weights, seed, K, R, column, device="cpu") -> np.ndarray:
    """Column ``column`` of replicates 0 .. R - 1, block by block (the same values whatever the blocks or the
    device)."""
    from tablegen.compute.kernels.cuda.device import twin
    from tablegen.compute.kernels.multiclass import COLUMNS, multiclass_key, multiclass_permutations

    key0, key1 = multiclass_key(seed, true32.size, K)
    values = np.empty(R)
    block = np.empty((min(R, _BLOCK), len(COLUMNS)))
    kernel = twin(multiclass_permutations, device)
    for first in range(0, R, _BLOCK):
        rows = block[:min(_BLOCK, R - first)]
        kernel(true32, predicted32, *weights, key0, key1, first, rows)
        values[first:first + rows.shape[0]] = rows[:, column]
    return values


def critical_from_replicates(values: np.ndarray, threshold: float) -> float | None:
    """The smallest replicate value v whose estimated tail (b(v) + 1) / (R + 1) is <= t (within TIE_RTOL), b(v)
    the replicates reaching v as the p-value counts them; None if none is."""
    ordered = np.sort(values)
    R = ordered.size
    reaching = R - np.searchsorted(ordered, ordered * (1.0 - TIE_RTOL), side="left")
    significant = (reaching + 1) / (R + 1) <= threshold * (1.0 + TIE_RTOL)
    return float(ordered[np.argmax(significant)]) if significant.any() else None


def _hits_as(metric: str, hits: int, n: int, true_counts, predicted_counts) -> float:
    return hits / n if metric == "accuracy" else kappa_from_hits(hits, true_counts, predicted_counts)


def _expected(metric: str, true_counts, predicted_counts) -> float:
    """The metric's mean under the null, exactly (E[TP_k] = n_k m_k / n), rounded once."""
    n = sum(true_counts)
    pairs = list(zip(true_counts, predicted_counts))
    if metric == "accuracy":
        return float(chance_agreement(true_counts, predicted_counts))
    if metric == "kappa":
        return 0.0
    if metric == "balanced_accuracy":
        with_items = [m for a, m in pairs if a > 0]
        return float(Fraction(sum(with_items), n * len(with_items)))
    return float(sum(Fraction(2 * a * m, n * (a + m)) for a, m in pairs) / len(pairs))


def _check_metric(metric) -> str:
    if not isinstance(metric, str) or metric.lower() not in METRICS:
        raise TablegenInputError.naming(Argument("metric"), f" must be one of {', '.join(METRICS)} for the "
                                        f"multi-class test, got {metric!r}")
    return metric.lower()


def _encode(labels, predicted) -> tuple[tuple, np.ndarray, np.ndarray]:
    """The classes (union of both) and each item's class index in ``labels`` and in ``predicted``."""
    true_values = label_values("labels", labels)
    predicted_values = label_values("predicted", predicted)
    if len(true_values) != len(predicted_values):
        raise TablegenInputError.naming(
            Argument("labels"), " and ", Argument("predicted"),
            f" must have the same length (one entry per item), got {len(true_values):,} and "
            f"{len(predicted_values):,}")
    index: dict = {}
    for value in true_values:
        index.setdefault(value, len(index))
    for value in predicted_values:
        index.setdefault(value, len(index))
    classes = tuple(index)
    try:
        ordered = tuple(sorted(classes))
    except TypeError:  # labels of types that do not compare: first seen order
        ordered = classes
    order = {value: position for position, value in enumerate(ordered)}
    true_codes = np.fromiter((order[v] for v in true_values), dtype=np.int64, count=len(true_values))
    predicted_codes = np.fromiter((order[v] for v in predicted_values), dtype=np.int64, count=len(predicted_values))
    return ordered, true_codes, predicted_codes


def label_values(name: str, values) -> list:
    """``values`` as a list of hashable, non-missing Python values (numpy scalars unwrapped)."""
    if isinstance(values, (str, bytes)) or values is None:
        raise TablegenInputError.naming(Argument(name), f" must be a sequence of class labels, got {values!r}")
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise TablegenInputError.naming(Argument(name), f" must be one-dimensional, got shape {values.shape}")
        items = values.tolist()
    else:
        try:
            items = list(values)
        except TypeError:
            raise TablegenInputError.naming(
                Argument(name), f" must be a sequence of class labels, got {type(values).__name__}") from None
    if not items:
        raise TablegenInputError.naming(Argument(name), " is empty: there are no items to test")
    for position, value in enumerate(items):
        where = Argument(name, python=f"{name}[{position}]", option=f"{name} (item {position})")
        try:
            hash(value)
        except TypeError:
            raise TablegenInputError.naming(
                where, f" is not a class label (unhashable {type(value).__name__})") from None
        if _missing(value):
            raise TablegenInputError.naming(where, f" is missing ({value!r}): every item needs a class")
    return items


def _missing(value) -> bool:
    """None, a float NaN or anything (pandas.NA, NaT) that is not equal to itself."""
    if value is None:
        return True
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        return value != value
    try:
        return bool(value != value)
    except (TypeError, ValueError):
        return True
