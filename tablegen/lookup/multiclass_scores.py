"""Is a K-class model's probability matrix better ranked (Hand–Till AUC, one-vs-rest macro AUC, top-k accuracy) than
the best of C random classifiers?

A random classifier here is the model's own probability rows dealt to the items uniformly at random, the true
labels fixed: it has the model's scores, confidence and ties, and no relation to the items.  Its metric X has a
law over the n! / (n_1! ... n_K!) equally likely arrangements of the labels over the rows
(:mod:`tablegen.compute.kernels.multiclass_scores`); the best of C independent ones beats x with probability
1 - Pr(X < x)**C, the p-value.  Where the arrangements are few (:data:`EXACT_ARRANGEMENTS`) every one is scored:
the tail Pr(X >= x) = b / A is exact (b of the A arrangements reaching x) and the p-value -expm1(C log1p(-b/A))
within a few ulps of 1 - (1 - b/A)**C.  Otherwise R Monte Carlo replicates from keyed streams estimate the tail by
(b + 1) / (R + 1), with the Clopper–Pearson interval mapped through the same increasing function, as
:func:`tablegen.multiclass_test` does for predicted labels.  Log-loss and other calibration scores are refused:
they are not ranking metrics (:func:`tablegen.compute.multiclass_scores.check_score_metric` says why).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np

from tablegen.compute.exact.multiclass import TIE_RTOL
from tablegen.compute.limits import check_memory, check_time
from tablegen.compute.multiclass_scores import (
    check_codes,
    check_k,
    check_probabilities,
    check_score_metric,
    score_tables,
)
from tablegen.compute.stats import clopper_pearson, p_value_from_tail, upper_tail_probability
from tablegen.compute.validation import MAX_REPLICATES, check_alpha, check_competitors, check_integer, check_seed
from tablegen.errors import Argument, TablegenInputError
from tablegen.lookup.multiclass import critical_from_replicates, default_replicates, label_values

logger = logging.getLogger(__name__)

#: The most arrangements of the labels scored one by one for the exact answer (method "auto" or "exact").
EXACT_ARRANGEMENTS = 200_000
#: Single-core seconds per (replicate, item) of the kernel, plus per class (its tables' rows grow with K and the
#: gather of each item's entry leaves the cache: measured 3 to 5 ns at K <= 10, 42 ns at K = 50 on a loaded AMD EPYC),
#: and per (replicate, item, class) of the Hand–Till walk: CPU time, one thread, 0.53 to 0.88 ns on an AMD EPYC
#: (AVX-512) at load 2.6 to 3.3 on 2 cores (``benchmarks/bench_multiclass_scores.py``, ``benchmarks/results/
#: multiclass_scores.md``), set to 2 ns: a margin of 2.3x over the largest figure (the report's walk,
#: ``SCORES_WALK_STEP_SECONDS``, took 1.5 to 2 ns under heavy load).  Its earlier 8 ns came from wall-clock figures
#: at load 9 on 2 cores, some 10x the CPU cost.
SECONDS_PER_ELEMENT_STEP = 8e-9
SECONDS_PER_CLASS_STEP = 1e-9
SECONDS_PER_WALK_STEP = 2e-9
#: Replicates per kernel call (bounds the scratch memory: 24 bytes a replicate).
_BLOCK = 1 << 16


@dataclass(frozen=True)
class MulticlassScoresTest:
    """A K-class model's Hand–Till AUC, one-vs-rest macro AUC or top-k accuracy against the best of C random
    classifiers (its own probability rows dealt to the items at random).

    Attributes
    ----------
    metric : str
        ``"hand_till_auc"``, ``"ovr_macro_auc"`` or ``"top_k_accuracy"``.
    value : float
        The model's value (:mod:`tablegen.compute.multiclass_scores` defines each, the top-k tie rule included).
    k : int or None
        The k of top-k accuracy (None for the AUCs).
    p_value : float
        1 - Pr(X < x)**C under the null.  Exact: from the exact tail b / A.  Monte Carlo: 1 - (1 - q)**C with
        q = (b + 1) / (R + 1), an estimate with its interval ``p_interval``.
    critical_value : float or None
        The smallest value of the law (exact) or of the replicates (Monte Carlo, an estimate) whose tail is at most
        t = 1 - (1 - alpha)**(1/C); None where none is (too few items or replicates for this C and alpha).
    significant : bool
        p-value <= alpha.
    method : str
        ``"exact"`` (every arrangement scored; ``arrangements``) or ``"monte carlo"`` (``replicates``,
        ``p_interval``).
    C, alpha : the question.
    n : int
        Items.
    classes : tuple
        The class of each column of the probability matrix.
    true_counts : tuple of int
        Items per class.
    expected_value : float
        The metric's mean under the null: 1/2 for both AUCs (exactly: swapping two items' labels turns a pair
        ordered right into one ordered wrong); for top-k (1/n) sum_i sum_c (n_c / n) credit(i, c), to rounding.
    tail_probability : float
        t = 1 - (1 - alpha)**(1/C).
    reaching : int
        b, the arrangements (exact) or replicates (Monte Carlo) whose value reaches the model's (within 1e-12
        relative).
    arrangements : int or None
        Exact: A, the distinct arrangements of the labels, all scored.
    replicates, seed : int or None
        Monte Carlo: R and the root seed of the streams.
    p_interval : tuple of float or None
        Monte Carlo: the 95% interval of the p-value (Clopper–Pearson of b of R, mapped through q -> 1 - (1 - q)**C).

    Examples
    --------
    >>> P = [[0.8, 0.1, 0.1], [0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.3, 0.5, 0.2], [0.1, 0.2, 0.7], [0.2, 0.2, 0.6]]
    >>> result = multiclass_scores_test(["a", "a", "b", "b", "c", "c"], P)
    >>> result.value, result.method, result.arrangements, result.reaching, result.to_dict()["classes"]
    (1.0, 'exact', 90, 1, ['a', 'b', 'c'])
    """

    metric: str
    value: float
    k: int | None
    p_value: float
    critical_value: float | None
    significant: bool
    method: str
    C: int
    alpha: float
    n: int
    classes: tuple
    true_counts: tuple
    expected_value: float
    tail_probability: float
    reaching: int
    arrangements: int | None = None
    replicates: int | None = None
    seed: int | None = None
    p_interval: tuple | None = None

    def sentence(self) -> str:
        """One plain sentence with the verdict.

        Examples
        --------
        >>> P = [[0.8, 0.1, 0.1], [0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.3, 0.5, 0.2], [0.1, 0.2, 0.7], [0.2, 0.2, 0.6]]
        >>> print(multiclass_scores_test([0, 0, 1, 1, 2, 2], P, C=10).sentence())  # doctest: +NORMALIZE_WHITESPACE
        hand_till_auc = 1 (n = 6, 3 classes) is not significant at alpha = 0.05 against the best of 10 random
        classifiers (the model's probability rows dealt to the items at random): p = 0.106 (exact, all 90
        arrangements), no attainable value is significant at this C and alpha.
        """
        from tablegen.lookup.multiclass_results import monte_carlo_text, verdict_texts

        who, critical, verdict, unsettled = verdict_texts(self)
        name = self.metric if self.k is None else f"top-{self.k} accuracy"
        method = (f"exact, all {self.arrangements:,} arrangements" if self.method == "exact"
                  else monte_carlo_text(self))
        return (f"{name} = {self.value:.6g} (n = {self.n:,}, {len(self.classes)} classes) {verdict} at alpha = "
                f"{self.alpha:g} against {who} (the model's probability rows dealt to the items at random): "
                f"p = {self.p_value:.3g} ({method}), {critical}.{unsettled}")

    def to_dict(self) -> dict:
        """Plain Python values, for JSON (classes as their ``str``)."""
        return {
            "metric": self.metric, "value": self.value, "k": self.k, "p_value": self.p_value,
            "critical_value": self.critical_value, "significant": self.significant, "method": self.method,
            "C": self.C, "alpha": self.alpha, "n": self.n, "classes": [str(c) for c in self.classes],
            "true_counts": list(self.true_counts), "expected_value": self.expected_value,
            "tail_probability": self.tail_probability, "reaching": self.reaching, "arrangements": self.arrangements,
            "replicates": self.replicates, "seed": self.seed,
            "p_interval": None if self.p_interval is None else list(self.p_interval),
        }


def multiclass_scores_test(labels: Iterable[Hashable], probabilities: np.ndarray | Iterable[Iterable[float]],
                           metric: str = "hand_till_auc",
                           k: int | None = None, C: int = 1, alpha: float = 0.05, R: int | None = None,
                           seed: int | None = None, classes: Iterable[Hashable] | None = None,
                           method: str = "auto", device: str = "cpu") -> MulticlassScoresTest:
    """Test a K-class model's probability matrix (Hand–Till AUC, one-vs-rest macro AUC or top-k accuracy) against
    the best of C random classifiers.

    Each random classifier is the model's probability rows dealt to the items uniformly at random (independent
    across the C), the labels fixed.  Exact where the distinct arrangements of the labels are at most
    :data:`EXACT_ARRANGEMENTS` (every one scored), else Monte Carlo (R keyed replicates, the p-value's interval).

    Parameters
    ----------
    labels : sequence of hashable values
        The true class of each item.
    probabilities : 2-D array_like
        One row per item, one column per class (n x K): row i the probabilities of the K classes for item i;
        entries >= 0, each row summing to 1 (within 1e-6); K >= 2.
    metric : {"hand_till_auc", "ovr_macro_auc", "top_k_accuracy"}
        Hand & Till's M (scikit-learn's ``roc_auc_score(multi_class="ovo")``), the unweighted mean of the
        one-vs-rest AUCs (``multi_class="ovr", average="macro"``), or top-k accuracy (a tie straddling the k-th
        place gives the true class its fair share: :mod:`tablegen.compute.multiclass_scores`).  Log-loss, Brier and
        other calibration scores are refused: they are not ranking metrics.
    k : int, optional
        The k of top-k accuracy (needed for it, and only for it), in [1, K - 1].
    C : int
        The number of random classifiers the model is the best of (>= 1).
    alpha : float
        The level, in (0, 1).
    R : int, optional
        Monte Carlo replicates; default :func:`tablegen.lookup.multiclass.default_replicates`.
    seed : int, optional
        Root seed of the replicates' streams, in [0, 2**64); default 2005.  The streams are keyed by it, n and K.
    classes : sequence of hashable values, optional
        The class of each column, in column order; default the sorted distinct labels (then the labels must hold
        exactly K classes).  For the AUCs every class needs an item; top-k allows a class without items.
    method : {"auto", "exact", "monte carlo"}
        ``"auto"``: exact where the arrangements are few enough, else Monte Carlo.  ``"exact"`` refuses a case
        with more arrangements; ``"monte carlo"`` samples even where exact enumeration would do.
    device : {"cpu", "cuda", "auto"}
        Where the Monte Carlo replicates are scored: ``"cuda"`` runs the kernel's CUDA twin on a GPU, the same keyed
        replicates, so the same answer bit for bit (an error naming ``device`` where there is no GPU); ``"auto"`` a
        GPU if one is visible, else the CPU.  The exact answer runs on the CPU.

    Returns
    -------
    MulticlassScoresTest

    Raises
    ------
    TablegenInputError
        Naming the argument: labels empty, with a missing value or a class not in ``classes``; probabilities not
        (n, K), holding NaN or a negative entry, or a row not summing to 1; labels' classes not matching the
        columns; a class without items (AUCs); k missing or out of range; a non-ranking or unknown metric; C,
        alpha, R, seed or method out of range.
    ResourceLimitError
        Where the Monte Carlo answer would take longer than the time limit (on the CPU: a GPU's time is not
        estimated, so ``device="cuda"`` is not refused by it) or more memory than the memory limit.

    Examples
    --------
    >>> P = [[0.5, 0.3, 0.2], [0.4, 0.4, 0.2], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4], [0.1, 0.3, 0.6], [0.3, 0.4, 0.3],
    ...      [0.6, 0.2, 0.2], [0.2, 0.2, 0.6]]
    >>> labels = ["cat", "cat", "dog", "fox", "fox", "dog", "cat", "fox"]
    >>> result = multiclass_scores_test(labels, P, metric="top_k_accuracy", k=1)
    >>> result.value, result.method, result.arrangements, round(result.p_value, 6), result.significant
    (0.9375, 'exact', 560, 0.001786, True)
    """
    metric = check_score_metric(metric)
    C = check_competitors(C)
    alpha = check_alpha("alpha", alpha)
    R = None if R is None else check_integer("R", R, 1)
    if R is not None and R > MAX_REPLICATES:
        raise TablegenInputError.naming(Argument("R"), f" must be at most 2**53 = {MAX_REPLICATES:,}, got {R:,}")
    seed = check_seed("seed", seed, allow_none=True)
    if method not in ("auto", "exact", "monte carlo"):
        raise TablegenInputError.naming(Argument("method"), f" must be 'auto', 'exact' or 'monte carlo', got "
                                        f"{method!r}")
    from tablegen.compute.kernels.cuda.device import resolve_device

    device = resolve_device(device)
    values = label_values("labels", labels)
    array = check_probabilities(probabilities, len(values))
    K = array.shape[1]
    if metric == "top_k_accuracy":
        if k is None:
            raise TablegenInputError.naming(Argument("k"), " is needed for metric='top_k_accuracy'")
        k = check_k(k, K)
    elif k is not None:
        raise TablegenInputError.naming(Argument("k"), f" applies to top_k_accuracy only, not to metric={metric!r}")
    class_order, codes = _encode(values, K, classes)
    absent = np.flatnonzero(np.bincount(codes, minlength=K) == 0)
    if absent.size and metric != "top_k_accuracy":
        raise TablegenInputError.naming(
            Argument("labels"), f" has no item of class {class_order[absent[0]]!r} (column {int(absent[0])} of "
            f"probabilities): the AUC of a class without items is undefined ({metric} needs every class)")
    codes, counts = check_codes(codes, K, every_class=metric != "top_k_accuracy")
    tables = score_tables(array, k)
    arrangements = _arrangements(counts)
    if method == "exact" and arrangements > EXACT_ARRANGEMENTS:
        raise TablegenInputError.naming(
            Argument("method", "exact"), f" scores every arrangement of the labels, and these {len(codes):,} items "
            f"have {arrangements:.3g} (at most {EXACT_ARRANGEMENTS:,}): use method='auto' (Monte Carlo)")
    column = ("hand_till_auc", "ovr_macro_auc", "top_k_accuracy").index(metric)
    hand_till = metric == "hand_till_auc"
    x = _observed(codes, tables, counts, hand_till, column)
    common = _common(metric, x, k, C, alpha, class_order, counts, tables[3])
    if method != "monte carlo" and arrangements <= EXACT_ARRANGEMENTS:
        return _exact(codes, tables, counts, hand_till, column, x, arrangements, common)
    return _monte_carlo(codes, tables, counts, hand_till, column, x, R, seed, common, device)


def _exact(codes, tables, counts, hand_till, column, x, arrangements, common) -> MulticlassScoresTest:
    """Every arrangement scored: the exact tail b / A."""
    from tablegen.compute.kernels.multiclass_scores import COLUMNS, enumeration_values

    out = np.empty((arrangements, len(COLUMNS)))
    enumeration_values(codes, *tables, counts, hand_till, out)
    return _verdict(out[:, column], common, exact=True)


def _monte_carlo(codes, tables, counts, hand_till, column, x, R, seed, common, device="cpu") -> MulticlassScoresTest:
    """R replicates from the keyed kernel (its CUDA twin with ``device="cuda"``): the tail (b + 1) / (R + 1) and its
    interval."""
    from tablegen.compute.cell import DEFAULT_SEED
    from tablegen.compute.kernels.cuda.device import twin
    from tablegen.compute.kernels.multiclass_scores import COLUMNS, multiclass_score_permutations, multiclass_scores_key

    n, K = codes.size, counts.size
    C, alpha = common["C"], common["alpha"]
    R = default_replicates(C, alpha) if R is None else R
    seed = DEFAULT_SEED if seed is None else seed
    what = f"the Monte Carlo multi-class scores null at n = {n:,}, K = {K}, R = {R:,}"
    per_replicate = n * (SECONDS_PER_ELEMENT_STEP + K * SECONDS_PER_CLASS_STEP
                         + (K * SECONDS_PER_WALK_STEP if hand_till else 0.0))
    if device == "cpu":  # a GPU's time is not estimated (no GPU cost model measured on hardware): not refused by it
        check_time(R * per_replicate, what, ("use fewer replicates (", Argument("R"), ") or fewer items (a random "
                   "subsample keeps the test valid), or raise TABLEGEN_TIME_LIMIT"))
    else:
        logger.info("%s on the GPU: its time is not estimated (about %.3g s if on one CPU core)", what,
                    R * per_replicate)
    check_memory(8.0 * R + 24.0 * min(R, _BLOCK) + 32.0 * n * K, what, ("use fewer replicates (", Argument("R"), ")"))
    key0, key1 = multiclass_scores_key(seed, n, K)
    values = np.empty(R)
    block = np.empty((min(R, _BLOCK), len(COLUMNS)))
    kernel = twin(multiclass_score_permutations, device)
    for first in range(0, R, _BLOCK):
        rows = block[:min(_BLOCK, R - first)]
        kernel(codes, *tables, counts, hand_till, key0, key1, first, rows)
        values[first:first + rows.shape[0]] = rows[:, column]
    return _verdict(values, common, exact=False, seed=seed)


def _common(metric, x, k, C, alpha, classes, counts, credit) -> dict:
    """The fields of a :class:`MulticlassScoresTest` that do not depend on the null."""
    return {"metric": metric, "value": x, "k": k, "C": C, "alpha": alpha, "n": int(np.sum(counts)),
            "classes": tuple(classes), "true_counts": tuple(int(c) for c in counts),
            "tail_probability": float(upper_tail_probability(C, alpha)),
            "expected_value": _expected(metric, credit, np.asarray(counts))}


def _verdict(values: np.ndarray, common: dict, exact: bool, seed: int | None = None) -> MulticlassScoresTest:
    """The verdict from the null's values: every arrangement once (``exact``: the tail b / A) or R keyed
    replicates under ``seed`` (the tail (b + 1) / (R + 1), its interval)."""
    from fractions import Fraction

    x, C, alpha = common["value"], common["C"], common["alpha"]
    size = values.size
    reaching = int(np.count_nonzero(values >= x * (1.0 - TIE_RTOL)))
    if exact:
        p_value = float(p_value_from_tail(float(Fraction(reaching, size)), C))
        ordered = np.sort(values)
        at_least = size - np.searchsorted(ordered, ordered * (1.0 - TIE_RTOL), side="left")
        significant = at_least / size <= common["tail_probability"] * (1.0 + TIE_RTOL)
        critical = float(ordered[np.argmax(significant)]) if significant.any() else None
        logger.debug("multiclass scores verdict (exact): n=%d A=%d b=%d p=%g", common["n"], size, reaching, p_value)
        return MulticlassScoresTest(**common, p_value=p_value, critical_value=critical, significant=p_value <= alpha,
                                    method="exact", reaching=reaching, arrangements=size)
    p_value = float(p_value_from_tail((reaching + 1) / (size + 1), C))
    low, high = clopper_pearson(reaching, reaching, size)
    p_interval = (float(p_value_from_tail(float(low), C)), float(p_value_from_tail(float(high), C)))
    logger.debug("multiclass scores verdict (Monte Carlo): n=%d R=%d b=%d p=%g", common["n"], size, reaching, p_value)
    critical = critical_from_replicates(values, common["tail_probability"])
    return MulticlassScoresTest(**common, p_value=p_value, critical_value=critical, significant=p_value <= alpha,
                                method="monte carlo", reaching=reaching, replicates=size, seed=seed,
                                p_interval=p_interval)


def verdict_from_null(metric: str, value: float, k: int | None, null_values: np.ndarray, classes, true_counts,
                      credit: np.ndarray | None, C: int, alpha: float, exact: bool,
                      seed: int | None = None) -> MulticlassScoresTest:
    """:func:`multiclass_scores_test`'s answer from the null's values already scored (the K-class report scores every
    model on one pass): ``null_values`` every distinct arrangement's value (``exact``) or R keyed replicates' (under
    ``seed``); ``credit`` the model's (n, K) top-k credit (top-k only: its null mean).

    Examples
    --------
    >>> result = verdict_from_null("hand_till_auc", 1.0, None, np.array([1.0, 0.5, 0.5, 0.0]), ("a", "b"), (2, 2),
    ...                            None, C=1, alpha=0.05, exact=True)
    >>> round(result.p_value, 12), result.reaching, result.method
    (0.25, 1, 'exact')
    """
    credit = np.zeros((int(np.sum(true_counts)), len(true_counts))) if credit is None else credit
    common = _common(metric, float(value), k, C, alpha, classes, np.asarray(true_counts, np.int64), credit)
    return _verdict(np.asarray(null_values, dtype=float), common, exact, seed)


def _observed(codes, tables, counts, hand_till, column) -> float:
    from tablegen.compute.kernels.multiclass_scores import COLUMNS, arrangement_values

    out = np.empty((1, len(COLUMNS)))
    arrangement_values(codes, *tables, counts, hand_till, out, 0)
    return float(out[0, column])


def _expected(metric: str, credit: np.ndarray, counts: np.ndarray) -> float:
    """The null mean: 1/2 for the AUCs; for top-k the mean over items of the prevalence-weighted credit."""
    if metric != "top_k_accuracy":
        return 0.5
    n = int(counts.sum())
    return math.fsum((credit @ counts).tolist()) / (n * n)


def _arrangements(counts) -> int:
    """n! / (n_1! ... n_K!), the distinct arrangements of the labels (Python integers: exact)."""
    total, n = 1, 0
    for count in counts.tolist():
        for i in range(1, count + 1):
            n += 1
            total = total * n // i
            if total > EXACT_ARRANGEMENTS * 10**6:  # far past the limit: the exact value is not needed
                return total
    return total


def _encode(values: list, K: int, classes) -> tuple[tuple, np.ndarray]:
    """The class of each column and each label's column index."""
    if classes is None:
        distinct = list(dict.fromkeys(values))
        try:
            order = tuple(sorted(distinct))
        except TypeError:  # labels of types that do not compare: first seen order
            order = tuple(distinct)
        if len(order) != K:
            raise TablegenInputError.naming(
                Argument("labels"), f" hold {len(order)} classes but ", Argument("probabilities"), f" has {K} "
                "columns: give classes=[...], the class of each column in order (a class may lack items for "
                "top-k only)")
    else:
        order = tuple(label_values("classes", classes))
        if len(order) != K or len(set(order)) != K:
            raise TablegenInputError.naming(Argument("classes"), f" must name {K} distinct classes, one per column "
                                            f"of probabilities, got {len(order)} ({len(set(order))} distinct)")
    index = {value: position for position, value in enumerate(order)}
    for position, value in enumerate(values):
        if value not in index:
            raise TablegenInputError.naming(
                Argument("labels", python=f"labels[{position}]", option=f"labels (item {position})"),
                f" = {value!r} is not one of the classes {list(order)!r}")
    return order, np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values))
