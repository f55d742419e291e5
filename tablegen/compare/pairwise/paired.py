"""Is model A better than model B on this test set? (``paired_test``), and every pair or the winner against
the rest with Holm's correction and the confidence set of the best (``pairwise_tests``).

Methods (``method="auto"``: McNemar where a threshold is given or both models give 0/1 predictions, else
DeLong for AUC and the swap permutation for the other metrics):

- ``"delong"`` (AUC): DeLong's asymptotic z test and the normal confidence interval of the difference
  (:mod:`.delong`).
- ``"mcnemar"`` (accuracy at ``threshold``, or 0/1 predictions): exact; ``mid_p=True`` for the mid-p.
- ``"permutation"`` (any metric from scores): swap the two models' values item by item (:mod:`.tests`);
  exact over every pattern for n <= 16 items; else McDiarmid's bound on the exact p-value where it is below
  1/(R + 1) (method ``"bound"``), or up to R keyed random patterns, stopped at the 20th that reaches the
  difference (method ``"sequential permutation"``, with a 95% interval; :mod:`.sequential`).

The confidence interval of the difference is DeLong's for ``"delong"``, and otherwise a bootstrap interval
(scipy's ``bootstrap``, items resampled in pairs within each class, seeded, 2,000 resamples; BCa up to 2,000
items, percentile beyond; NaN where the resamples' law is degenerate), computed only when it is first read
(``ci_low``, ``ci_high``, ``confidence_interval``, ``sentence()``, ``to_dict()``): the test itself does not
wait for it.  One model's interval (``bootstrap_interval``, and each model's in ``tablegen.evaluate``) and the
permutation test's interval of the difference come from the sorted bootstrap kernels instead
(:mod:`.bootstrap`): scipy's arithmetic on keyed resamples,
each scored in one pass along each model's fixed order; McNemar's stays scipy's own.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from tablegen.compare.pairwise.bootstrap import scipy_bootstrap
from tablegen.compare.pairwise.results import PairedTestResult, PairwiseResult, PValueBound, adjusted_is_bound
from tablegen.errors import Argument, TablegenInputError

if TYPE_CHECKING:
    from tablegen.compare.pairwise.tests import SwapNulls

logger = logging.getLogger(__name__)

__all__ = ["PairedTestResult", "PairwiseResult", "PValueBound", "paired_test", "pairwise_tests"]


def paired_test(labels: ArrayLike, scores_a: ArrayLike, scores_b: ArrayLike, *, metric: str = "auc",
                method: str = "auto", alternative: str = "two-sided", threshold: float | None = None,
                mid_p: bool = False, R: int | None = None, seed: int | None = None,
                positive_label: object = None, alpha: float = 0.05, device: str = "cpu") -> PairedTestResult:
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
        The most random swap patterns (default 10,000; the sequential test stops earlier at its 20th pattern that
        reaches the difference) and root seed (default 2005) of a permutation test over 16 items.
    positive_label : optional
    alpha : float
        The difference's confidence interval is at level 1 - alpha (default 95%).
    device : {"cpu", "cuda", "auto"}
        Where the permutation test's swap patterns and its interval's bootstrap resamples are scored: ``"cuda"``
        runs the kernels' CUDA twins on a GPU, with the same patterns and resamples, so the same p-value and
        interval, bit for bit (an error naming ``device`` where there is no GPU); ``"auto"`` a GPU if one is
        visible, else the CPU.  DeLong's and McNemar's tests run on the CPU whatever the device.

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
    return _paired_test(labels, scores_a, scores_b, metric, method, alternative, threshold, mid_p, R, seed,
                        positive_label, alpha, None, device)


def _paired_test(labels, scores_a, scores_b, metric, method, alternative, threshold, mid_p, R, seed, positive_label,
                 alpha, swap_nulls, device="cpu", comparisons=None) -> PairedTestResult:
    """:func:`paired_test`, its permutation null from ``swap_nulls`` (a :class:`.tests.SwapNulls`) if given; with
    ``comparisons`` (one of that many pairs, ``R`` unset) its sequential permutation has an early look
    (:func:`.sequential.early_look`)."""
    from tablegen.compare.datasets.validation import check_flag
    from tablegen.compare.pairwise.validation import checked_pair
    from tablegen.compute.validation import check_alpha

    alpha = check_alpha("alpha", alpha)
    level = 1.0 - alpha
    q = checked_pair(labels, scores_a, scores_b, metric, method, alternative, threshold, R, seed, positive_label,
                     device)
    if check_flag("mid_p", mid_p) and q.method != "mcnemar":
        mid = Argument("mid_p", python="mid_p=True", option="--mid-p")
        raise TablegenInputError.naming(mid, f" is McNemar's mid-p; method={q.method!r} has none (leave mid_p "
                                        "False, or test accuracy at a threshold with ", Argument("method", "mcnemar"),
                                        ")")
    if q.method == "delong":
        return _delong(q, level, swap_nulls)
    if q.method == "mcnemar":
        return _mcnemar(q, mid_p, level)
    look = None
    if comparisons is not None and R is None:
        from tablegen.compare.pairwise.sequential import early_look

        look = early_look(alpha, comparisons, q.R)
    return _permutation(q, level, swap_nulls, look)


def _delong(q, level: float, swap_nulls=None) -> PairedTestResult:
    from scipy.special import ndtr  # what scipy.stats.norm's cdf and sf call: cdf(z) = ndtr(z), sf(z) = ndtr(-z)

    from tablegen.compare.pairwise.delong import delong_difference

    ranks = None if swap_nulls is None else tuple(swap_nulls.delong_ranks(q.labels, s) for s in (q.scores_a,
                                                                                                 q.scores_b))
    difference, se, z, (low, high) = delong_difference(q.labels, q.scores_a, q.scores_b, level, ranks)
    if q.alternative == "greater":
        p = float(ndtr(-z))
    elif q.alternative == "less":
        p = float(ndtr(z))
    else:
        p = float(2.0 * ndtr(-abs(z)))
    a, b = _values(q, swap_nulls)
    return PairedTestResult(q.spec.name, a, b, difference, z, min(p, 1.0), "delong", q.alternative,
                            confidence_level=level, _interval=(low, high))


def _values(q, swap_nulls) -> tuple[float, float]:
    """The two models' values of the metric: the report's, each computed once (a sort of the scores each), where
    ``swap_nulls`` keeps them."""
    if swap_nulls is None:
        return q.values()
    return tuple(swap_nulls.metric_value(q.labels, s, q.spec) for s in (q.scores_a, q.scores_b))


def _mcnemar(q, mid_p: bool, level: float) -> PairedTestResult:
    from tablegen.compare.pairwise.tests import mcnemar_p
    from tablegen.compare.pairwise.validation import right_at

    right_a, right_b = right_at(q.labels, q.scores_a, q.threshold), right_at(q.labels, q.scores_b, q.threshold)
    b, c = int(np.sum(right_a & ~right_b)), int(np.sum(~right_a & right_b))
    p = mcnemar_p(b, c, q.alternative, mid_p)
    accuracy_a, accuracy_b = float(right_a.mean()), float(right_b.mean())
    interval = functools.partial(scipy_bootstrap, lambda i: right_a[i].mean() - right_b[i].mean(), q.labels, q.seed,
                                 level)
    return PairedTestResult("accuracy", accuracy_a, accuracy_b, accuracy_a - accuracy_b, float(b), p,
                            "mcnemar" + (" (mid-p)" if mid_p else ""), q.alternative, confidence_level=level,
                            _interval=interval)


def _permutation(q, level: float, swap_nulls, look=None) -> PairedTestResult:
    """The swap permutation: exact over every pattern up to 16 items; else McDiarmid's bound where it is below
    1/(R + 1), or Besag & Clifford's sequential Monte Carlo, with the early ``look`` if given (:mod:`.sequential`,
    which proves the level)."""
    from fractions import Fraction

    from tablegen.compare.pairwise.sequential import SEQUENTIAL_HITS, rounded_up, sequential_p
    from tablegen.compare.pairwise.tests import EXACT_SWAP_ITEMS, p_bound, swap_counts
    from tablegen.compute.swap_bounds import has_swap_bound

    a, b = _values(q, swap_nulls)
    ranks = None if swap_nulls is None else (swap_nulls.ranks(q.scores_a), swap_nulls.ranks(q.scores_b))
    observed = a - b
    ci = functools.partial(scipy_bootstrap, q.metric_difference, q.labels, q.seed, level)
    tau = 1.0 / (q.R + 1)
    if q.labels.size > EXACT_SWAP_ITEMS:
        bound = p_bound(q.spec.name, q.labels, q.scores_a, q.scores_b, observed * q.divisor, q.alternative, ranks)
        if bound < tau:  # below any Monte Carlo p-value: no pattern drawn
            return PairedTestResult(q.spec.name, a, b, observed, observed, bound, "bound", q.alternative,
                                    p_interval=(0.0, bound), confidence_level=level, _interval=ci)
    if swap_nulls is None:
        counts, = swap_counts(q.labels, q.scores_a, q.scores_b, [q.column], [observed * q.divisor], q.k_cut, R=q.R,
                              key=q.key, device=q.device, look=look)
    else:
        counts = swap_nulls.counts(q.labels, q.scores_a, q.scores_b, q.column, q.k_cut, observed * q.divisor, R=q.R,
                                   key=q.key, device=q.device, look=look)
    hits, drawn = counts.of(q.alternative)
    if counts.exact:
        p = hits / drawn
        return PairedTestResult(q.spec.name, a, b, observed, observed, p, "permutation", q.alternative,
                                p_interval=(p, p), confidence_level=level, _interval=ci)
    early = counts.stopped_early(q.alternative)
    p, interval = sequential_p(hits, drawn, q.R, look=look, early=early)
    if has_swap_bound(q.spec.name):  # the price of the bound's early answers (:mod:`.sequential`)
        p = min(1.0, rounded_up(Fraction(p) + Fraction(1, q.R + 1)))
    return PairedTestResult(q.spec.name, a, b, observed, observed, float(p), "sequential permutation",
                            q.alternative, drawn, q.seed, interval, level, ci, max_replicates=q.R,
                            hits=min(hits, SEQUENTIAL_HITS), early_look=None if look is None else look.drawn,
                            stopped_early=early)


# -- many models -----------------------------------------------------------------------------------------
def pairwise_tests(labels: ArrayLike, scores: ArrayLike | Mapping[str, ArrayLike], *, metric: str = "auc",
                   method: str = "auto", against: str = "winner", alpha: float = 0.05,
                   threshold: float | None = None, R: int | None = None, seed: int | None = None,
                   positive_label: object = None, swap_nulls: SwapNulls | None = None,
                   device: str = "cpu") -> PairwiseResult:
    """The winner against each other model (``against="winner"``, one-sided: is the winner better?) or every
    pair (``"all"``, two-sided), each by :func:`paired_test`, Holm-adjusted; and the confidence set of the best.

    The winner is the model with the largest value of the metric tested: accuracy at ``threshold`` where the
    tests are McNemar's (a threshold given, ``metric="accuracy"``, ``method="mcnemar"``, or 0/1 predictions
    throughout), else ``metric``; ``method="auto"`` resolves once, for every pair alike.

    With ``R`` unset, each sequential permutation test has an early look fixed in advance (:mod:`.sequential`):
    with k pairs, a pair none of whose first l_e = ceil(2k / alpha) - 1 swap patterns reaches its difference stops
    there with p = 1/(l_e + 1) <= alpha / (2k) (plus 1/(R + 1) for a metric McDiarmid's bound could settle; with
    l_e <= R / 2 still at most alpha / k) — significant for Holm's first step and for the best set whatever the
    other pairs — and every other pair's p-value carries 1/(l_e + 1) more (which keeps the level exactly); no look
    where l_e would pass R / 2.  A clearly better winner then costs l_e patterns per pair instead of up to 10,000.
    ``R`` given: no look (Besag & Clifford's rule alone, up to R patterns).

    ``swap_nulls`` (a :class:`~tablegen.compare.pairwise.tests.SwapNulls`) shares the permutation tests' swap
    patterns with the other metrics of one report: each pair's patterns are scored once for every metric planned
    with it (the same p-values as without it, bit for bit).  ``device`` (``"cpu"``, ``"cuda"`` or ``"auto"``) is
    :func:`paired_test`'s: where the swap patterns and bootstrap resamples are scored, the same answers on either.

    Examples
    --------
    >>> y = np.r_[np.ones(10), np.zeros(10)]
    >>> s = np.arange(20.0)[::-1]
    >>> pairwise_tests(y, {"a": s, "b": s[::-1]}, metric="best_accuracy").winner
    'a'
    """
    from tablegen.compare.datasets.analysis import adjust_p_values
    from tablegen.compute.kernels.cuda.device import resolve_device
    from tablegen.compute.metrics_from_scores import check_binary_labels, check_model_scores

    device = resolve_device(device)
    if against not in ("winner", "all"):
        raise TablegenInputError.naming(Argument("against"), f" must be 'winner' or 'all', got {against!r}")
    y = check_binary_labels(labels, positive_label)
    models = check_model_scores(scores, y.size)
    if len(models) < 2:
        raise TablegenInputError.naming(Argument("scores"), " must hold at least two models to compare")
    from tablegen.compare.pairwise.tests import SwapNulls

    if swap_nulls is not None and not isinstance(swap_nulls, SwapNulls):
        raise TablegenInputError.naming(Argument("swap_nulls"), " must be a tablegen.compare.pairwise.tests.SwapNulls "
                                        f"or None, got {swap_nulls!r}")
    name, values, method = _tested_values(y, models, metric, method, threshold, swap_nulls)
    winner = max(values, key=values.get)
    if against == "winner":
        pairs = [(winner, m) for m in models if m != winner]
        alternative = "greater"
    else:
        names = list(models)
        pairs = [(a, b) if values[a] >= values[b] else (b, a) for i, a in enumerate(names) for b in names[i + 1:]]
        alternative = "two-sided"
    tests = {(a, b): _paired_test(y, models[a], models[b], metric, method, alternative, threshold, False, R, seed,
                                  None, alpha, swap_nulls, device, len(pairs)) for a, b in pairs}
    adjusted = dict(zip(tests, adjust_p_values([t.p_value for t in tests.values()], "holm").tolist()))
    bounds = adjusted_is_bound(tests)
    adjusted = {pair: PValueBound(p) if bounds[pair] else p for pair, p in adjusted.items()}
    beaten = {b for (a, b), t in tests.items() if a == winner and (len(models) - 1) * t.p_value <= alpha}
    best_set = tuple(m for m in models if m not in beaten)
    return PairwiseResult(name, winner, tests, adjusted, best_set, alpha)


def _tested_values(y: np.ndarray, models: dict, metric, method: str, threshold,
                   swap_nulls=None) -> tuple[str, dict, str]:
    """(the metric the paired tests test, each model's value of it, the method of every pair): accuracy at the
    threshold where the tests are McNemar's, else ``metric`` from the scores (kept in ``swap_nulls`` if given)."""
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
    if swap_nulls is not None:
        return spec.name, {name: swap_nulls.metric_value(y, s, spec) for name, s in models.items()}, method
    return spec.name, {name: float(spec.score_groups(threshold_groups(y, s))) for name, s in models.items()}, method
