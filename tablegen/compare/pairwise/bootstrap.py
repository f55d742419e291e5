"""Bootstrap intervals of one model's metric and of two models' difference on one test set.

Items are resampled within each class (every resample keeps P and N, as R's pROC does), seeded.  One model's
interval (:func:`bootstrap_interval`, and each model's in ``tablegen.evaluate``) and the swap permutation test's
interval of a difference come from the sorted bootstrap kernels (:mod:`tablegen.compute.kernels.resample`): each
model sorted once, every resample a keyed stream of multiplicities scored in one weighted pass along that order,
with scipy's percentile, basic and BCa arithmetic (:func:`interval_from_resamples`); McNemar's interval of a
difference is scipy's ``bootstrap`` itself (:func:`scipy_bootstrap`).  NaN ends where the resamples' law is
degenerate.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import ArrayLike

from tablegen.compute.stats import linear_quantile
from tablegen.errors import Argument, TablegenInputError

logger = logging.getLogger(__name__)

#: Bootstrap resamples of a difference's BCa interval.
BOOTSTRAP_RESAMPLES = 2000
#: Bootstrap interval methods: "auto" is BCa up to :data:`~.validation.BCA_ITEMS` items, percentile beyond.
BOOTSTRAP_METHODS = ("auto", "BCa", "percentile", "basic")


def bootstrap_interval(labels: ArrayLike, scores: ArrayLike, *, metric: str = "auc", level: float = 0.95,
                       resamples: int = BOOTSTRAP_RESAMPLES, method: str = "auto", seed: int | None = None,
                       positive_label: object = None, device: str = "cpu") -> tuple[float, float]:
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
    device : {"cpu", "cuda", "auto"}
        Where the resamples are scored: ``"cuda"`` runs the kernel's CUDA twin on a GPU (the same values, so the
        same interval, bit for bit; an error naming ``device`` where there is no GPU); ``"auto"`` a GPU if one is
        visible, else the CPU.  BCa's jackknife runs on the CPU.

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
    from tablegen.compute.kernels.cuda.device import resolve_device
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.metrics_from_scores import check_binary_labels, check_model_scores, check_score_metric
    from tablegen.compute.validation import check_seed

    y = check_binary_labels(labels, positive_label)
    s = check_model_scores({"scores": scores}, y.size)["scores"]
    spec = get_metric(check_score_metric(metric))
    seed = DEFAULT_SEED if seed is None else check_seed("seed", seed, allow_none=False)
    level, resamples, method = _bootstrap_options(level, resamples, method)
    return _sorted_bootstrap(y, s, spec, seed, level, resamples, method, resolve_device(device))


def _bootstrap_options(level, resamples, method) -> tuple[float, int, str]:
    """``level``, ``resamples`` and ``method`` of :func:`bootstrap_interval`, checked."""
    from tablegen.compute.validation import check_alpha, check_integer

    level, resamples = check_alpha("level", level), check_integer("resamples", resamples, 100)
    if not isinstance(method, str) or method not in BOOTSTRAP_METHODS:
        raise TablegenInputError.naming(Argument("method"), " must be one of "
                                        f"{', '.join(map(repr, BOOTSTRAP_METHODS))}, got {method!r}")
    return level, resamples, method


def scipy_bootstrap(statistic, labels: np.ndarray, seed: int, level: float = 0.95,
                    resamples: int = BOOTSTRAP_RESAMPLES, method: str = "auto") -> tuple[float, float]:
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
                                           seed, level, resamples, method, question.device)
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
                      resamples: int = BOOTSTRAP_RESAMPLES, method: str = "auto",
                      device: str = "cpu") -> tuple[float, float]:
    """The ``level`` bootstrap interval of one model's ``spec`` on (``labels``, ``scores``), from the sorted kernels
    (:func:`sorted_bootstrap_intervals` of that one model)."""
    return sorted_bootstrap_intervals(labels, np.atleast_2d(scores), spec, seed, level, resamples, method, device)[0]


def sorted_bootstrap_intervals(labels: np.ndarray, scores: np.ndarray, spec, seed: int, level: float = 0.95,
                               resamples: int = BOOTSTRAP_RESAMPLES, method: str = "auto",
                               device: str = "cpu") -> list[tuple[float, float]]:
    """The ``level`` bootstrap interval of ``spec`` for each row of ``scores`` (models, n), on the same resamples.

    Each model is sorted once; resample r's multiplicities come from its own keyed stream
    (:func:`~tablegen.compute.kernels.resample.bootstrap_key` of ``seed``, P and N, and r, whatever the model) and
    each model's value from one weighted pass along its fixed order (:mod:`tablegen.compute.kernels.resample`);
    BCa's jackknife leaves each item out by O(n) updates.  The interval is scipy's ``bootstrap``'s, computed from
    those values (:func:`interval_from_resamples`): with the same resamples, the same interval.  NaN ends where
    scipy has none: fewer than 2 positives or negatives, or a degenerate law.  Several metrics of the same models
    share one pass per (model, resample): :class:`BootstrapValues`.  ``device`` (``"cpu"`` or ``"cuda"``) scores the
    resamples with the kernel or its CUDA twin: the same values.

    Examples
    --------
    >>> from tablegen.compute.metrics import get_metric
    >>> y = np.r_[np.ones(20), np.zeros(30)].astype(np.int64)
    >>> s = y + np.random.default_rng(1).normal(size=(2, 50))
    >>> both = sorted_bootstrap_intervals(y, s, get_metric("auc"), 5)
    >>> both[1] == sorted_bootstrap_intervals(y, s[1:], get_metric("auc"), 5)[0]
    True
    """
    return BootstrapValues(labels, scores, [spec], seed, resamples, method, device).intervals(spec, level)


def sorted_bootstrap_difference(labels: np.ndarray, scores: np.ndarray, spec, seed: int, level: float = 0.95,
                                resamples: int = BOOTSTRAP_RESAMPLES, method: str = "auto",
                                device: str = "cpu") -> tuple[float, float]:
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
    values = BootstrapValues(labels, scores, [spec], seed, resamples, method, device)
    if values.degenerate:
        return float("nan"), float("nan")
    observed, resampled, jackknife = values.values(spec)
    left_out = None if jackknife is None else tuple(a - b for a, b in zip(*jackknife))
    with np.errstate(invalid="ignore"):
        return interval_from_resamples(observed[0] - observed[1], resampled[:, 0] - resampled[:, 1], left_out, level,
                                       values.method)


def _resample_kernel(want, cuts, device: str):
    """The bootstrap kernel for these columns: on the CPU 64 resamples per walk where the lanes score every column
    asked (:mod:`tablegen.compute.kernels.resample_lanes`), else the one-resample kernel (or its CUDA twin); the same
    values, bit for bit."""
    from tablegen.compute.kernels import resample as kernels
    from tablegen.compute.kernels.cuda.device import twin

    if device == "cpu":
        from tablegen.compute.kernels.resample_lanes import lane_resample_metrics, resample_lanes_apply

        if resample_lanes_apply(want, cuts):
            return lambda *arguments: lane_resample_metrics(*arguments, np.int64(kernels.NARROW_LIMIT))
    return twin(kernels.resample_metrics, device)


class BootstrapValues:
    """Every model's value of several metrics on the items, on each keyed bootstrap resample and (BCa) on each
    leave-one-out sample: one weighted pass per (model, resample) scores every metric asked
    (:func:`~tablegen.compute.kernels.resample.resample_metrics`), so a report's metrics share their resamples as
    its models do.  The values of one metric are those a call for that metric alone gives, bit for bit.

    Parameters
    ----------
    labels : ndarray
        0/1 per item.
    scores : ndarray or list of ndarray
        (models, n), or one score vector per model.
    specs : list of Metric
        The metrics whose values are kept (any metric computable from scores).
    seed, resamples, method :
        As :func:`sorted_bootstrap_intervals`; ``method="auto"`` is BCa up to 2,000 items, percentile beyond.
    device : {"cpu", "cuda"}
        Where the resamples are scored (resolved: :func:`~tablegen.compute.kernels.cuda.device.resolve_device`):
        the kernel or its CUDA twin, the same values bit for bit.

    Examples
    --------
    >>> from tablegen.compute.metrics import get_metric
    >>> y = np.r_[np.ones(20), np.zeros(30)].astype(np.int64)
    >>> s = y + np.random.default_rng(1).normal(size=(2, 50))
    >>> auc, f1 = get_metric("auc"), get_metric("best_f1")
    >>> both = BootstrapValues(y, s, [auc, f1], 5)
    >>> both.intervals(f1) == sorted_bootstrap_intervals(y, s, f1, 5)
    True
    """

    def __init__(self, labels: np.ndarray, scores: np.ndarray, specs, seed: int,
                 resamples: int = BOOTSTRAP_RESAMPLES, method: str = "auto", device: str = "cpu"):
        from tablegen.compare.pairwise.validation import BCA_ITEMS

        self.device = device
        y = np.ascontiguousarray(labels, dtype=np.int64)
        self.labels, self.models = y, len(scores)
        self.positives, self.negatives = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
        self.degenerate = self.positives.size < 2 or self.negatives.size < 2  # scipy needs two items per class
        self.method = ("BCa" if y.size <= BCA_ITEMS else "percentile") if method == "auto" else method
        self._columns = self._column_map(specs)
        if self.degenerate or not self.models:  # nothing to resample
            return
        self._sorted = self._sort(scores)
        self._observed, self._resampled = self._score(seed, resamples)
        self._sorted = self._sorted[1:]  # the jackknife's orders and group ends (BCa alone: n <= 2,000 with "auto")

    def _column_map(self, specs) -> dict:
        """metric name -> (the pass's output column, the kernel column, k, the count's divisor)."""
        from tablegen.compute.kernels.ranking import BASE_COLUMNS, TP_COLUMN
        from tablegen.compute.kernels.resample import METRIC_COLUMNS

        columns, cuts = {}, []
        for spec in specs:
            entry = spec.counted_entry()
            divisor = spec.count_divisor(self.positives.size, self.negatives.size)
            if entry.k is None:
                column = BASE_COLUMNS.index(entry.kernel_column)
                columns[spec.name] = (column, column, 0, divisor)
                continue
            if int(entry.k) not in cuts:
                cuts.append(int(entry.k))
            columns[spec.name] = (METRIC_COLUMNS + cuts.index(int(entry.k)), TP_COLUMN, int(entry.k), divisor)
        self._cuts = cuts
        return columns

    def _sort(self, scores: np.ndarray) -> tuple:
        """(each model's pass codes by slot, and for BCa's jackknife its order and group ends), sorting one model at
        a time."""
        from tablegen.compute.kernels.resample import pass_codes, sorted_models

        codes, orders, ends = None, [], []
        for m in range(self.models):
            order, end = sorted_models(np.asarray(scores[m], float)[None, :])  # one model's temporaries at a time
            row = pass_codes(order, end, self.labels)
            codes = np.empty((self.models, self.labels.size), row.dtype) if m == 0 else codes
            codes[m] = row[0]
            if self.method == "BCa":
                orders.append(order[0])
                ends.append(end[0])
        return codes, orders, ends

    def _score(self, seed: int, resamples: int) -> tuple[np.ndarray, np.ndarray]:
        """(the observed values (models, columns), the resampled ones (resamples, models, columns))."""
        from tablegen.compute.kernels import resample as kernels

        codes, width = self._sorted[0], kernels.METRIC_COLUMNS + len(self._cuts)
        want, cuts = kernels.metric_choice({c for _, c, _, _ in self._columns.values() if c < kernels.METRIC_COLUMNS},
                                           self._cuts)
        P, N = self.positives.size, self.negatives.size
        observed = np.empty((self.models, width))
        kernels.observed_metrics(codes, P, N, want, cuts, observed)
        resampled = np.empty((resamples, self.models, width))
        _resample_kernel(want, cuts, self.device)(codes, P, N, want, cuts, *kernels.bootstrap_key(seed, P, N), 0,
                                                  resampled)
        return observed, resampled

    def values(self, spec) -> tuple[np.ndarray, np.ndarray, list | None]:
        """(observed values (models,), resampled values (resamples, models), each model's jackknife (positives' and
        negatives' leave-one-out values) for BCa, else None) of ``spec``, one of the metrics asked."""
        from tablegen.compute.kernels.jackknife import jackknife_values

        at, column, k_cut, divisor = self._columns[spec.name]
        jackknife = None
        if self.method == "BCa":
            jackknife = []
            for m in range(self.models):
                left_out = np.empty(self.labels.size)
                jackknife_values(self._sorted[0][m], self._sorted[1][m], self.labels, column, k_cut, left_out)
                jackknife.append((left_out[self.positives] / divisor, left_out[self.negatives] / divisor))
        return self._observed[:, at] / divisor, self._resampled[:, :, at] / divisor, jackknife

    def intervals(self, spec, level: float = 0.95) -> list[tuple[float, float]]:
        """The ``level`` interval of ``spec`` for each model (:func:`sorted_bootstrap_intervals`)."""
        if self.degenerate or not self.models:
            return [(float("nan"), float("nan"))] * self.models
        observed, resampled, jackknife = self.values(spec)
        return [interval_from_resamples(observed[m], resampled[:, m], None if jackknife is None else jackknife[m],
                                        level, self.method) for m in range(self.models)]


class ReportResamples:
    """A report's bootstrap values, shared by its metrics: the first metric asked scores every metric of the report
    in one pass per (model, resample) (:class:`BootstrapValues`), the next ones read theirs.

    Parameters
    ----------
    labels : ndarray
        0/1 per item.
    metrics : list of str
        Every metric the report will ask for.
    seed : int
        Root seed of the resamples.
    device : {"cpu", "cuda"}
        Where the resamples are scored (resolved), as :class:`BootstrapValues`.

    Examples
    --------
    >>> y = np.r_[np.ones(20), np.zeros(30)].astype(np.int64)
    >>> s = y + np.random.default_rng(1).normal(size=50)
    >>> shared = ReportResamples(y, ["auc", "best_f1"], 5)
    >>> shared.intervals({"a": s}, "best_f1") == {"a": bootstrap_interval(y, s, metric="best_f1", seed=5)}
    True
    """

    def __init__(self, labels: np.ndarray, metrics, seed: int, device: str = "cpu"):
        self.labels, self.metrics, self.seed, self.device = labels, list(metrics), seed, device
        self._models: tuple = ()
        self._values: BootstrapValues | None = None

    def intervals(self, scores: dict, metric: str) -> dict:
        """Each model's 95% interval of ``metric`` (one of the report's), ``scores`` {name: scores}: scored on the
        first call for these models, read on the next."""
        from tablegen.compute.metrics import get_metric

        if self._values is None or tuple(scores) != self._models:
            names = list(dict.fromkeys([*self.metrics, metric]))
            self._values = BootstrapValues(self.labels, list(scores.values()), [get_metric(m) for m in names],
                                           self.seed, device=self.device)
            self._models = tuple(scores)
        return dict(zip(scores, self._values.intervals(get_metric(metric))))


def interval_from_resamples(observed: float, values: np.ndarray, jackknife: tuple | None, level: float,
                            method: str) -> tuple[float, float]:
    """The two-sided ``level`` interval of scipy's ``bootstrap`` from its ingredients, with scipy's operations.

    ``observed`` is the statistic on the data, ``values`` its bootstrap distribution, ``jackknife`` (BCa only)
    the leave-one-out values of each sample (positives, then negatives, each in item order); ``method`` one of
    ``"BCa"``, ``"percentile"``, ``"basic"``.  BCa as scipy computes it (Efron & Tibshirani 14.3, 15.4): the bias
    z0 from the share of values below (ties half) the observed one, the acceleration from the jackknife of every
    sample, the quantiles by ``scipy.stats.quantile``'s arithmetic (:func:`~tablegen.compute.stats
    .linear_quantile`).  NaN ends where scipy has none (a degenerate law).

    Examples
    --------
    >>> low, high = interval_from_resamples(0.5, np.linspace(0.0, 1.0, 101), None, 0.9, "percentile")
    >>> round(low, 12), round(high, 12)
    (0.05, 0.95)
    """
    alpha = (1 - level) / 2
    with np.errstate(all="ignore"):  # a degenerate law: NaN, as in scipy
        if method == "BCa":
            interval = _bca_levels(observed, values, jackknife, alpha)
        else:
            interval = np.stack([np.float64(alpha), 1 - np.float64(alpha)])
        low, high = linear_quantile(values, interval)
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
