"""Is model A better than model B on this test set? (``paired_test``), and every pair or the winner against
the rest with Holm's correction and the confidence set of the best (``pairwise_tests``).

Methods (``method="auto"``: McNemar where a threshold is given or both models give 0/1 predictions, else
DeLong for AUC and the swap permutation for the other metrics):

- ``"delong"`` (AUC): DeLong's asymptotic z test and the normal confidence interval of the difference
  (:mod:`.delong`).
- ``"mcnemar"`` (accuracy at ``threshold``, or 0/1 predictions): exact; ``mid_p=True`` for the mid-p.
- ``"permutation"`` (any metric from scores): swap the two models' values item by item (:mod:`.tests`);
  exact over every pattern for n <= 16 items, else R keyed random patterns with a 95% interval.

The confidence interval of the difference is DeLong's for ``"delong"``, and otherwise a bootstrap interval
(scipy's ``bootstrap``, items resampled in pairs within each class, seeded, 2,000 resamples; BCa up to 2,000
items, percentile beyond; NaN where the resamples' law is degenerate), computed only when it is first read
(``ci_low``, ``ci_high``, ``confidence_interval``, ``sentence()``, ``to_dict()``): the test itself does not
wait for it.  One model's interval (``bootstrap_interval``, and each model's in ``tablegen.evaluate``) and the
permutation test's interval of the difference come from the sorted bootstrap kernels instead
(:func:`sorted_bootstrap_intervals`, :func:`sorted_bootstrap_difference`): scipy's arithmetic on keyed resamples,
each scored in one pass along each model's fixed order; McNemar's stays scipy's own.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from tablegen.errors import Argument, TablegenInputError

logger = logging.getLogger(__name__)

#: Bootstrap resamples of a difference's BCa interval.
BOOTSTRAP_RESAMPLES = 2000
#: Bootstrap interval methods: "auto" is BCa up to :data:`~.validation.BCA_ITEMS` items, percentile beyond.
BOOTSTRAP_METHODS = ("auto", "BCa", "percentile", "basic")


@dataclass(frozen=True)
class PairedTestResult:
    """Model A against model B on one test set.

    Attributes
    ----------
    metric : str
    value_a, value_b : float
        Each model's value (for McNemar: its accuracy at the threshold).
    difference : float
        value_a - value_b.
    ci_low, ci_high : float
        The difference's ``confidence_level`` interval (DeLong's normal interval, else bootstrap BCa), not
        adjusted for multiplicity; a bootstrap interval is computed when first read, once
        (``confidence_interval`` is the pair).
    statistic : float
        DeLong's z; McNemar's b (items only A gets right, of b + c discordant); the permutation's difference.
    p_value : float
        Two-sided unless ``alternative`` says otherwise.
    method : str
        ``"delong"`` (asymptotic), ``"mcnemar"`` (exact, or mid-p), ``"permutation"`` (exact over every swap
        pattern, or Monte Carlo over ``replicates`` keyed patterns with ``p_interval``).
    alternative : str
    replicates, seed : int or None
        The Monte Carlo's patterns and root seed (None when exact).
    p_interval : tuple
        95% Clopper–Pearson interval of the exact permutation p-value (equal ends when exact).
    confidence_level : float
        Of ``ci_low``/``ci_high``: 1 - ``alpha`` of :func:`paired_test`.

    Examples
    --------
    >>> y = np.r_[np.ones(8), np.zeros(8)]
    >>> a = y + np.linspace(0, 0.9, 16)
    >>> paired_test(y, a, a[::-1], metric="auc").method
    'delong'
    """

    metric: str
    value_a: float
    value_b: float
    difference: float
    statistic: float
    p_value: float
    method: str
    alternative: str = "two-sided"
    replicates: int | None = None
    seed: int | None = None
    p_interval: tuple = field(default=(float("nan"), float("nan")))
    confidence_level: float = 0.95
    _interval: tuple | Callable[[], tuple] = field(default=(float("nan"), float("nan")), repr=False, compare=False)

    @property
    def confidence_interval(self) -> tuple[float, float]:
        """(ci_low, ci_high): a bootstrap interval is computed here, the first time it is read, then kept."""
        if callable(self._interval):
            object.__setattr__(self, "_interval", tuple(self._interval()))
        return self._interval

    @property
    def ci_low(self) -> float:
        """Low end of the difference's ``confidence_level`` interval."""
        return self.confidence_interval[0]

    @property
    def ci_high(self) -> float:
        """High end of the difference's ``confidence_level`` interval."""
        return self.confidence_interval[1]

    def significant(self, alpha: float = 0.05) -> bool:
        """Whether the p-value is at most ``alpha``."""
        return self.p_value <= alpha

    def sentence(self, names: tuple[str, str] = ("A", "B"), alpha: float | None = None) -> str:
        """The verdict in words, with the method (``alpha`` defaults to 1 - ``confidence_level``)."""
        a, b = names
        alpha = round(1.0 - self.confidence_level, 12) if alpha is None else alpha
        verdict = "differs significantly from" if self.significant(alpha) else "does not differ significantly from"
        how = {"delong": "DeLong's test, asymptotic", "mcnemar": "exact McNemar test"}.get(self.method)
        if how is None:
            how = ("permutation over every swap pattern, exact" if self.replicates is None else
                   f"{self.replicates:,} random swap patterns, seed {self.seed}; 95% interval "
                   f"[{self.p_interval[0]:.3g}, {self.p_interval[1]:.3g}]")
        return (f"{a}'s {self.metric} {self.value_a:.4g} {verdict} {b}'s {self.value_b:.4g} at alpha = {alpha:g}: "
                f"difference {self.difference:+.4g} ({100 * self.confidence_level:g}% CI "
                f"[{self.ci_low:.4g}, {self.ci_high:.4g}]), "
                f"p = {self.p_value:.3g} ({self.alternative}; {how})")

    def to_dict(self) -> dict:
        """Plain Python values, strict JSON: a number that does not exist (``p_interval`` of DeLong's or McNemar's
        p-value, which has no Monte Carlo interval; a degenerate bootstrap's ends) is None, never NaN."""
        from tablegen.common.outputs import json_ready

        return json_ready({"metric": self.metric, "value_a": self.value_a, "value_b": self.value_b,
                           "difference": self.difference, "ci_low": self.ci_low, "ci_high": self.ci_high,
                           "statistic": self.statistic, "p_value": self.p_value, "method": self.method,
                           "alternative": self.alternative, "replicates": self.replicates, "seed": self.seed,
                           "p_interval": list(self.p_interval), "confidence_level": self.confidence_level})


def paired_test(labels: ArrayLike, scores_a: ArrayLike, scores_b: ArrayLike, *, metric: str = "auc",
                method: str = "auto", alternative: str = "two-sided", threshold: float | None = None,
                mid_p: bool = False, R: int | None = None, seed: int | None = None,
                positive_label: object = None, alpha: float = 0.05) -> PairedTestResult:
    """Is model A better than model B on this test set?

    Parameters
    ----------
    labels : array_like
        The test items' true classes (two values; see ``positive_label``).
    scores_a, scores_b : array_like
        The two models' scores on the same items (higher = more likely positive), or 0/1 predictions.
    metric : str
        Any metric computable from scores (``auc``, ``best_f1``, ``average_precision``, ...), or ``"accuracy"``
        (at ``threshold``, by McNemar's test).  McNemar tests accuracy at ``threshold`` whatever the metric named,
        and its result says ``metric='accuracy'``.
    method : {"auto", "delong", "permutation", "mcnemar"}
    alternative : {"two-sided", "greater", "less"}
        ``"greater"``: A better than B.
    threshold : float, optional
        McNemar: an item is predicted positive when its score is >= threshold (0/1 predictions need none).
    mid_p : bool
        McNemar's mid-p instead of the exact p (McNemar only: refused with DeLong or the permutation test).  With
        no discordant item (b + c = 0), or b = c two-sided, the p-value is 1, mid-p too: the data hold no evidence
        either way, and the mid-p's half point mass (which would give 0.5 one-sided) is not taken there.
    R, seed : int, optional
        Random swap patterns (default 10,000) and root seed (default 2005) of a permutation test over 16 items.
    positive_label : optional
    alpha : float
        The difference's confidence interval is at level 1 - alpha (default 95%).

    Returns
    -------
    PairedTestResult

    Examples
    --------
    >>> rng = np.random.default_rng(4)
    >>> y = np.r_[np.ones(40), np.zeros(60)]
    >>> good, weak = 2 * y + rng.normal(size=100), 0.3 * y + rng.normal(size=100)
    >>> result = paired_test(y, good, weak, metric="auc")
    >>> result.method, result.difference > 0, result.p_value < 0.05
    ('delong', True, True)
    """
    from tablegen.compare.datasets.validation import check_flag
    from tablegen.compare.pairwise.validation import checked_pair
    from tablegen.compute.validation import check_alpha

    level = 1.0 - check_alpha("alpha", alpha)
    q = checked_pair(labels, scores_a, scores_b, metric, method, alternative, threshold, R, seed, positive_label)
    if check_flag("mid_p", mid_p) and q.method != "mcnemar":
        mid = Argument("mid_p", python="mid_p=True", option="--mid-p")
        raise TablegenInputError.naming(mid, f" is McNemar's mid-p; method={q.method!r} has none (leave mid_p "
                                        "False, or test accuracy at a threshold with ", Argument("method", "mcnemar"),
                                        ")")
    if q.method == "delong":
        return _delong(q, level)
    if q.method == "mcnemar":
        return _mcnemar(q, mid_p, level)
    return _permutation(q, level)


def _delong(q, level: float) -> PairedTestResult:
    from scipy.stats import norm

    from tablegen.compare.pairwise.delong import delong_difference

    difference, se, z, (low, high) = delong_difference(q.labels, q.scores_a, q.scores_b, level)
    if q.alternative == "greater":
        p = float(norm.sf(z))
    elif q.alternative == "less":
        p = float(norm.cdf(z))
    else:
        p = float(2.0 * norm.sf(abs(z)))
    a, b = q.values()
    return PairedTestResult(q.spec.name, a, b, difference, z, min(p, 1.0), "delong", q.alternative,
                            confidence_level=level, _interval=(low, high))


def _mcnemar(q, mid_p: bool, level: float) -> PairedTestResult:
    from tablegen.compare.pairwise.tests import mcnemar_p
    from tablegen.compare.pairwise.validation import right_at

    right_a, right_b = right_at(q.labels, q.scores_a, q.threshold), right_at(q.labels, q.scores_b, q.threshold)
    b, c = int(np.sum(right_a & ~right_b)), int(np.sum(~right_a & right_b))
    p = mcnemar_p(b, c, q.alternative, mid_p)
    accuracy_a, accuracy_b = float(right_a.mean()), float(right_b.mean())
    interval = functools.partial(_bootstrap, lambda i: right_a[i].mean() - right_b[i].mean(), q.labels, q.seed,
                                 level)
    return PairedTestResult("accuracy", accuracy_a, accuracy_b, accuracy_a - accuracy_b, float(b), p,
                            "mcnemar" + (" (mid-p)" if mid_p else ""), q.alternative, confidence_level=level,
                            _interval=interval)


def _permutation(q, level: float) -> PairedTestResult:
    from tablegen.compare.pairwise.tests import swap_null, swap_p
    from tablegen.compute.stats import CI_LEVEL, clopper_pearson

    a, b = q.values()
    observed = a - b
    differences, exact = swap_null(q.labels, q.scores_a, q.scores_b, q.column, q.k_cut, R=q.R, key=q.key)
    hits = swap_p(differences, observed * q.divisor, q.alternative)
    M = differences.size
    if exact:
        p, interval = hits / M, (hits / M, hits / M)
    else:
        low, high = clopper_pearson(hits, hits, M, CI_LEVEL)
        p, interval = (hits + 1) / (M + 1), (float(low), float(high))
    ci = functools.partial(_bootstrap, q.metric_difference, q.labels, q.seed, level)
    return PairedTestResult(q.spec.name, a, b, observed, observed, float(p), "permutation", q.alternative,
                            None if exact else M, None if exact else q.seed, interval, level, ci)


def bootstrap_interval(labels: ArrayLike, scores: ArrayLike, *, metric: str = "auc", level: float = 0.95,
                       resamples: int = BOOTSTRAP_RESAMPLES, method: str = "auto", seed: int | None = None,
                       positive_label: object = None) -> tuple[float, float]:
    """The bootstrap interval of one model's metric on this test set (positives and negatives resampled apart,
    so every resample keeps P and N, as R's pROC does; seeded; NaN ends where the resamples' law is degenerate).

    The model is sorted once and every resample scored by one weighted pass along that order (O(n) per resample,
    :mod:`tablegen.compute.kernels.resample`); resample r comes from its own xoshiro256** stream keyed by
    ``seed``, P, N and r.  The interval is scipy's ``bootstrap``'s arithmetic on those values: fed scipy's own
    draws it is scipy's interval to the last bit (``tests/compute/test_resample.py``).  The stream is not scipy's
    (``default_rng(seed)``), which these intervals used before: the same seed gives other resamples, an interval
    that differs by its Monte Carlo error, with the same coverage (docs/explanation/paired-tests.md).

    Parameters
    ----------
    labels, scores : array_like
        The test items' true classes and the model's scores (higher = more likely positive).
    metric : str
        Any metric computable from scores.
    level : float
        Confidence level, in (0, 1) (default 0.95).
    resamples : int
        Bootstrap resamples, >= 100 (default 2,000).
    method : {"auto", "BCa", "percentile", "basic"}
        scipy's interval methods; ``"auto"`` is BCa up to 2,000 items (its jackknife scores every
        leave-one-out sample, each by an O(1) update after one pass) and percentile beyond.
    seed : int, optional
        Root seed of the resamples (default 2005).
    positive_label : optional

    Returns
    -------
    (float, float)

    Examples
    --------
    >>> rng = np.random.default_rng(3)
    >>> y = np.r_[np.ones(30), np.zeros(40)]
    >>> low, high = bootstrap_interval(y, y + rng.normal(size=70), metric="auc")
    >>> bool(0.5 < low < high < 1.0)
    True
    >>> narrow = bootstrap_interval(y, y + rng.normal(size=70), level=0.8, resamples=500, method="percentile")
    >>> bool(narrow[0] < narrow[1])
    True
    """
    from tablegen.compute.cell import DEFAULT_SEED
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.metrics_from_scores import check_binary_labels, check_model_scores, check_score_metric
    from tablegen.compute.validation import check_seed

    y = check_binary_labels(labels, positive_label)
    s = check_model_scores({"scores": scores}, y.size)["scores"]
    spec = get_metric(check_score_metric(metric))
    seed = DEFAULT_SEED if seed is None else check_seed("seed", seed, allow_none=False)
    level, resamples, method = _bootstrap_options(level, resamples, method)
    return _sorted_bootstrap(y, s, spec, seed, level, resamples, method)


def _bootstrap_options(level, resamples, method) -> tuple[float, int, str]:
    """``level``, ``resamples`` and ``method`` of :func:`bootstrap_interval`, checked."""
    from tablegen.compute.validation import check_alpha, check_integer

    level, resamples = check_alpha("level", level), check_integer("resamples", resamples, 100)
    if not isinstance(method, str) or method not in BOOTSTRAP_METHODS:
        raise TablegenInputError.naming(Argument("method"), " must be one of "
                                        f"{', '.join(map(repr, BOOTSTRAP_METHODS))}, got {method!r}")
    return level, resamples, method


def _bootstrap(statistic, labels: np.ndarray, seed: int, level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES,
               method: str = "auto") -> tuple[float, float]:
    """The ``level`` bootstrap interval of ``statistic(items)`` (scipy, seeded), resampling the positives and the
    negatives apart (stratified, as R's pROC does: every resample keeps P and N, so every metric is defined):
    ``method="auto"`` is BCa up to :data:`~.validation.BCA_ITEMS` items (its jackknife scores every leave-one-out
    sample), the percentile interval beyond; NaN where the resamples' law is degenerate.

    The difference of two models' metric (``statistic`` a question's
    :meth:`~.validation.PairQuestion.metric_difference`) is the sorted kernels' instead
    (:func:`sorted_bootstrap_difference`): the same statistic on every resample, scored in one pass along each
    model's order, on the keyed resamples."""
    import warnings

    from scipy.stats import bootstrap

    from tablegen.compare.pairwise.validation import BCA_ITEMS, PairQuestion

    question = getattr(statistic, "__self__", None)
    if isinstance(question, PairQuestion) and statistic.__func__ is PairQuestion.metric_difference:
        return sorted_bootstrap_difference(labels, np.stack([question.scores_a, question.scores_b]), question.spec,
                                           seed, level, resamples, method)
    positives, negatives = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    if method == "auto":
        method = "BCa" if labels.size <= BCA_ITEMS else "percentile"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns of a degenerate law, which NaN ends say here
        try:
            result = bootstrap((positives, negatives),
                               lambda p, n: statistic(np.concatenate([p, n]).astype(np.int64)), vectorized=False,
                               n_resamples=resamples, method=method, confidence_level=level,
                               random_state=np.random.default_rng(seed))
        except (ValueError, TablegenInputError):  # a degenerate law
            return float("nan"), float("nan")
    low, high = result.confidence_interval
    return float(low), float(high)


def _sorted_bootstrap(labels: np.ndarray, scores: np.ndarray, spec, seed: int, level: float = 0.95,
                      resamples: int = BOOTSTRAP_RESAMPLES, method: str = "auto") -> tuple[float, float]:
    """The ``level`` bootstrap interval of one model's ``spec`` on (``labels``, ``scores``), from the sorted kernels
    (:func:`sorted_bootstrap_intervals` of that one model)."""
    return sorted_bootstrap_intervals(labels, np.atleast_2d(scores), spec, seed, level, resamples, method)[0]


def sorted_bootstrap_intervals(labels: np.ndarray, scores: np.ndarray, spec, seed: int, level: float = 0.95,
                               resamples: int = BOOTSTRAP_RESAMPLES, method: str = "auto") -> list[tuple[float, float]]:
    """The ``level`` bootstrap interval of ``spec`` for each row of ``scores`` (models, n), on the same resamples.

    Each model is sorted once; resample r's multiplicities come from its own keyed stream
    (:func:`~tablegen.compute.kernels.resample.bootstrap_key` of ``seed``, P and N, and r, whatever the model) and
    each model's value from one weighted pass along its fixed order (:mod:`tablegen.compute.kernels.resample`);
    BCa's jackknife leaves each item out by the same pass (AUC: by each item's placement).  The interval is
    scipy's ``bootstrap``'s, computed from those values (:func:`interval_from_resamples`): with the same
    resamples, the same interval.  NaN ends where scipy has none: fewer than 2 positives or negatives, or a
    degenerate law.

    Examples
    --------
    >>> from tablegen.compute.metrics import get_metric
    >>> y = np.r_[np.ones(20), np.zeros(30)].astype(np.int64)
    >>> s = y + np.random.default_rng(1).normal(size=(2, 50))
    >>> both = sorted_bootstrap_intervals(y, s, get_metric("auc"), 5)
    >>> both[1] == sorted_bootstrap_intervals(y, s[1:], get_metric("auc"), 5)[0]
    True
    """
    values = _sorted_values(labels, scores, spec, seed, resamples, method)
    if values is None:  # scipy's bootstrap needs two items in each class
        return [(float("nan"), float("nan"))] * scores.shape[0]
    observed, resampled, jackknife, method = values
    return [interval_from_resamples(observed[m], resampled[:, m], None if jackknife is None else jackknife[m], level,
                                    method) for m in range(scores.shape[0])]


def sorted_bootstrap_difference(labels: np.ndarray, scores: np.ndarray, spec, seed: int, level: float = 0.95,
                                resamples: int = BOOTSTRAP_RESAMPLES, method: str = "auto") -> tuple[float, float]:
    """The ``level`` bootstrap interval of metric(model 0) - metric(model 1), ``scores`` (2, n), on the resamples of
    :func:`sorted_bootstrap_intervals`: each resample's and each leave-one-out sample's difference of the two
    models' values on it.

    Examples
    --------
    >>> from tablegen.compute.metrics import get_metric
    >>> y = np.r_[np.ones(20), np.zeros(30)].astype(np.int64)
    >>> s = y + np.random.default_rng(1).normal(size=(2, 50))
    >>> low, high = sorted_bootstrap_difference(y, s, get_metric("best_f1"), 5)
    >>> bool(low < high)
    True
    """
    values = _sorted_values(labels, scores, spec, seed, resamples, method)
    if values is None:
        return float("nan"), float("nan")
    observed, resampled, jackknife, method = values
    left_out = None if jackknife is None else tuple(a - b for a, b in zip(*jackknife))
    with np.errstate(invalid="ignore"):
        return interval_from_resamples(observed[0] - observed[1], resampled[:, 0] - resampled[:, 1], left_out, level,
                                       method)


def _sorted_values(labels: np.ndarray, scores: np.ndarray, spec, seed: int, resamples: int, method: str):
    """(observed values (models,), resampled values (resamples, models), each model's jackknife (positives' and
    negatives' leave-one-out values) or None, the method), or None with fewer than 2 items of a class."""
    from tablegen.compare.pairwise.validation import BCA_ITEMS
    from tablegen.compute.kernels.ranking import BASE_COLUMNS, TP_COLUMN
    from tablegen.compute.kernels.resample import bootstrap_key, jackknife_values, resample_values, sorted_models

    y = np.ascontiguousarray(labels, dtype=np.int64)
    positives, negatives = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    models = scores.shape[0]
    if positives.size < 2 or negatives.size < 2:
        return None
    if method == "auto":
        method = "BCa" if y.size <= BCA_ITEMS else "percentile"
    entry = spec.counted_entry()
    column = TP_COLUMN if entry.k is not None else BASE_COLUMNS.index(entry.kernel_column)
    k_cut, divisor = int(entry.k or 0), spec.count_divisor(positives.size, negatives.size)
    orders, ends = sorted_models(scores)
    key0, key1 = bootstrap_key(seed, positives.size, negatives.size)
    values = np.empty((resamples, models))
    resample_values(orders, ends, y, positives, negatives, column, k_cut, key0, key1, 0, values)
    observed = np.empty((1, models))
    _weighted(orders, ends, y, np.ones((1, y.size), np.int64), column, k_cut, observed)
    jackknife = None
    if method == "BCa":
        jackknife = []
        for m in range(models):
            left_out = np.empty(y.size)
            jackknife_values(orders[m], ends[m], y, column, k_cut, left_out)
            jackknife.append((left_out[positives] / divisor, left_out[negatives] / divisor))
    return observed[0] / divisor, values / divisor, jackknife, method


def _weighted(orders, ends, labels, weights, column, k_cut, out) -> None:
    from tablegen.compute.kernels.resample import weighted_values

    weighted_values(orders, ends, labels, weights, column, k_cut, out)


def interval_from_resamples(observed: float, values: np.ndarray, jackknife: tuple | None, level: float,
                            method: str) -> tuple[float, float]:
    """The two-sided ``level`` interval of scipy's ``bootstrap`` from its ingredients, with scipy's operations.

    ``observed`` is the statistic on the data, ``values`` its bootstrap distribution, ``jackknife`` (BCa only)
    the leave-one-out values of each sample (positives, then negatives, each in item order); ``method`` one of
    ``"BCa"``, ``"percentile"``, ``"basic"``.  BCa as scipy computes it (Efron & Tibshirani 14.3, 15.4): the bias
    z0 from the share of values below (ties half) the observed one, the acceleration from the jackknife of every
    sample, the quantiles by ``scipy.stats.quantile``.  NaN ends where scipy has none (a degenerate law).

    Examples
    --------
    >>> low, high = interval_from_resamples(0.5, np.linspace(0.0, 1.0, 101), None, 0.9, "percentile")
    >>> round(low, 12), round(high, 12)
    (0.05, 0.95)
    """
    from scipy import stats

    alpha = (1 - level) / 2
    with np.errstate(all="ignore"):  # a degenerate law: NaN, as in scipy
        if method == "BCa":
            interval = _bca_levels(observed, values, jackknife, alpha)
        else:
            interval = np.stack([np.float64(alpha), 1 - np.float64(alpha)])
        try:
            low, high = stats.quantile(values, interval)
        except ValueError:  # a degenerate law
            return float("nan"), float("nan")
    if method == "basic":
        low, high = 2 * observed - high, 2 * observed - low
    return float(low), float(high)


def _bca_levels(observed: float, values: np.ndarray, jackknife: tuple, alpha: float) -> np.ndarray:
    """BCa's two quantile levels, scipy's ``_bca_interval`` operation for operation: the bias z0 from the share of
    ``values`` below ``observed`` (ties half), the acceleration from each sample's leave-one-out values."""
    from scipy.special import ndtr, ndtri

    below = np.count_nonzero(values < observed) + np.count_nonzero(values <= observed)
    z0 = ndtri(np.float64(below) / (2 * values.size))
    nums, dens = [], []
    for left_out in jackknife:
        n = float(left_out.size)
        u = (n - 1) * (np.mean(left_out) - left_out)
        nums.append(np.sum(u ** 3) / n ** 3)
        dens.append(np.sum(u ** 2) / n ** 2)
    a_hat = 1 / 6 * sum(nums) / sum(dens) ** (3 / 2)
    z_alpha = float(ndtri(alpha))
    num1, num2 = z0 + z_alpha, z0 - z_alpha
    return np.stack([ndtr(z0 + num1 / (1 - a_hat * num1)), ndtr(z0 + num2 / (1 - a_hat * num2))])


# -- many models -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PairwiseResult:
    """Paired tests between models, Holm-adjusted; the confidence set of the best.

    Attributes
    ----------
    metric : str
        The metric tested, by which the winner is chosen: ``"accuracy"`` (at the threshold) where the tests are
        McNemar's, whatever metric was named.
    winner : str
        The model with the largest value of ``metric``.
    tests : dict
        (model A, model B) -> :class:`PairedTestResult` (A the better of the two, or the winner).
    adjusted_p_values : dict
        (model A, model B) -> Holm-adjusted p-value over the pairs tested.
    best_set : tuple of str
        The confidence set of the best: the winner and every model m the winner does not beat at level
        alpha / (K - 1), K models (Bonferroni over the winner's K - 1 comparisons; Hsu's multiple comparisons
        with the best, single-step).  It holds the best model m* (largest expected value) with probability
        >= 1 - alpha: m* is left out only if some j != m* beats it at alpha / (K - 1), each such test has that
        level when j is not better than m*, and there are K - 1 of them.  A superset of the models not beaten
        after Holm (step-down, which has no such proof for a data-chosen winner); from the same p-values for
        ``against="winner"`` (one-sided) or ``"all"`` (the two-sided p of the pair; conservative).
    alpha : float

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> y = np.r_[np.ones(40), np.zeros(60)]
    >>> models = {"good": y + rng.normal(size=100), "also good": y + rng.normal(size=100),
    ...           "noise": rng.normal(size=100)}
    >>> result = pairwise_tests(y, models, metric="auc")
    >>> result.winner in result.best_set, "noise" in result.best_set
    (True, False)
    """

    metric: str
    winner: str
    tests: dict
    adjusted_p_values: dict
    best_set: tuple
    alpha: float

    def to_dict(self) -> dict:
        """Plain Python values, strict JSON (None where a number does not exist)."""
        from tablegen.common.outputs import json_ready

        return json_ready({"metric": self.metric, "winner": self.winner, "alpha": self.alpha,
                           "best_set": list(self.best_set),
                           "tests": [{"a": a, "b": b, **t.to_dict(), "adjusted_p_value": self.adjusted_p_values[a, b]}
                                     for (a, b), t in self.tests.items()]})


def pairwise_tests(labels: ArrayLike, scores: ArrayLike | Mapping[str, ArrayLike], *, metric: str = "auc",
                   method: str = "auto", against: str = "winner", alpha: float = 0.05,
                   threshold: float | None = None, R: int | None = None, seed: int | None = None,
                   positive_label: object = None) -> PairwiseResult:
    """The winner against each other model (``against="winner"``, one-sided: is the winner better?) or every
    pair (``"all"``, two-sided), each by :func:`paired_test`, Holm-adjusted; and the confidence set of the best.

    The winner is the model with the largest value of the metric tested: accuracy at ``threshold`` where the
    tests are McNemar's (a threshold given, ``metric="accuracy"``, ``method="mcnemar"``, or 0/1 predictions
    throughout), else ``metric``; ``method="auto"`` resolves once, for every pair alike.

    Examples
    --------
    >>> y = np.r_[np.ones(10), np.zeros(10)]
    >>> s = np.arange(20.0)[::-1]
    >>> pairwise_tests(y, {"a": s, "b": s[::-1]}, metric="best_accuracy").winner
    'a'
    """
    from tablegen.compare.datasets.analysis import adjust_p_values
    from tablegen.compute.metrics_from_scores import check_binary_labels, check_model_scores

    if against not in ("winner", "all"):
        raise TablegenInputError.naming(Argument("against"), f" must be 'winner' or 'all', got {against!r}")
    y = check_binary_labels(labels, positive_label)
    models = check_model_scores(scores, y.size)
    if len(models) < 2:
        raise TablegenInputError.naming(Argument("scores"), " must hold at least two models to compare")
    name, values, method = _tested_values(y, models, metric, method, threshold)
    winner = max(values, key=values.get)
    if against == "winner":
        pairs = [(winner, m) for m in models if m != winner]
        alternative = "greater"
    else:
        names = list(models)
        pairs = [(a, b) if values[a] >= values[b] else (b, a) for i, a in enumerate(names) for b in names[i + 1:]]
        alternative = "two-sided"
    tests = {(a, b): paired_test(y, models[a], models[b], metric=metric, method=method, alternative=alternative,
                                 threshold=threshold, R=R, seed=seed, alpha=alpha) for a, b in pairs}
    adjusted = dict(zip(tests, adjust_p_values([t.p_value for t in tests.values()], "holm").tolist()))
    beaten = {b for (a, b), t in tests.items() if a == winner and (len(models) - 1) * t.p_value <= alpha}
    best_set = tuple(m for m in models if m not in beaten)
    return PairwiseResult(name, winner, tests, adjusted, best_set, alpha)


def _tested_values(y: np.ndarray, models: dict, metric, method: str, threshold) -> tuple[str, dict, str]:
    """(the metric the paired tests test, each model's value of it, the method of every pair): accuracy at the
    threshold where the tests are McNemar's, else ``metric`` from the scores."""
    from tablegen.compare.pairwise.validation import (
        checked_metric,
        is_accuracy,
        mcnemar_threshold,
        resolved_method,
        right_at,
    )
    from tablegen.compute.metrics_from_scores import threshold_groups

    spec = None if is_accuracy(metric) else checked_metric(metric)
    method = resolved_method(spec, method, threshold, models.values())  # one method for every pair
    if method == "mcnemar":
        t = mcnemar_threshold(threshold, *models.values())
        return "accuracy", {name: float(right_at(y, s, t).mean()) for name, s in models.items()}, method
    return spec.name, {name: float(spec.score_groups(threshold_groups(y, s))) for name, s in models.items()}, method
