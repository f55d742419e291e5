"""DeLong's test for two correlated AUCs on one test set, by the midrank algorithm of Sun & Xu (2014).

DeLong, DeLong & Clarke-Pearson (1988): each model's AUC is a two-sample U-statistic; its placement
values V10 (per positive: the share of negatives below it, ties ½) and V01 (per negative: the share of
positives above it) estimate the covariance of the two AUCs,
S = S10 / P + S01 / N with S10, S01 the sample covariance matrices (K x K) of the placement values.  Sun &
Xu compute the placement values from midranks in O(n log n): for positive i, V10_i = (T_i - T^X_i) / N with
T the midrank among all items and T^X among the positives; for negative j, V01_j = 1 - (T_j - T^Y_j) / P.

The difference of two AUCs is asymptotically normal with variance S_aa + S_bb - 2 S_ab: the z statistic,
its p-value and the confidence interval of the difference are asymptotic (not exact), as in R's pROC.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DelongEstimate:
    """The AUCs of K models and their estimated covariance matrix."""

    aucs: np.ndarray
    covariance: np.ndarray


def delong_midranks(labels: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One model's midranks (1-D ``scores``) that DeLong's placements need: among all items, among the positives,
    among the negatives (:func:`delong_covariance` computes them for each row; a report keeps them per model).

    Examples
    --------
    >>> [r.tolist() for r in delong_midranks(np.array([1, 0, 1]), np.array([0.3, 0.1, 0.2]))]
    [[3.0, 1.0, 2.0], [2.0, 1.0], [1.0]]
    """
    from tablegen.compute.kernels.orders import ascending_midranks, descending_order, subset_order
    from tablegen.compute.stats import midranks

    scores = np.asarray(scores, dtype=float)
    if np.isnan(scores).any():
        return midranks(scores), midranks(scores[labels == 1]), midranks(scores[labels == 0])
    order = descending_order(scores)  # one sort for the three (subsets keep the order: ties stay in item order)
    positive, negative = np.asarray(labels) == 1, np.asarray(labels) == 0
    return (ascending_midranks(scores, order), ascending_midranks(scores[positive], subset_order(order, positive)),
            ascending_midranks(scores[negative], subset_order(order, negative)))


def delong_covariance(labels: np.ndarray, scores: np.ndarray, ranks=None) -> DelongEstimate:
    """AUCs of the rows of ``scores`` (K, n) on 0/1 ``labels`` and DeLong's covariance, by midranks (``ranks``:
    each row's :func:`delong_midranks` where already known).

    Examples
    --------
    >>> y = np.array([1, 1, 0, 0, 1, 0])
    >>> est = delong_covariance(y, np.array([[0.9, 0.8, 0.3, 0.4, 0.2, 0.1], [0.9, 0.2, 0.3, 0.4, 0.8, 0.1]]))
    >>> est.aucs.round(4).tolist()
    [0.7778, 0.7778]
    """
    from tablegen.compute.stats import midranks

    positives, negatives = labels == 1, labels == 0
    P, N = int(positives.sum()), int(negatives.sum())
    if ranks is None:
        x, y = scores[:, positives], scores[:, negatives]
        ranks_all = midranks(scores, axis=1)
        tx, ty = midranks(x, axis=1), midranks(y, axis=1)
    else:
        ranks_all, tx, ty = (np.stack(kind) for kind in zip(*ranks))
    v10 = (ranks_all[:, positives] - tx) / N
    v01 = 1.0 - (ranks_all[:, negatives] - ty) / P
    aucs = v10.mean(axis=1)
    covariance = np.atleast_2d(np.cov(v10)) / P + np.atleast_2d(np.cov(v01)) / N
    return DelongEstimate(aucs, covariance)


def delong_difference(labels: np.ndarray, scores_a: np.ndarray, scores_b: np.ndarray, level: float, ranks=None):
    """(difference, its standard error, z, (low, high) CI at ``level``) of AUC_a - AUC_b (``ranks``: the two models'
    :func:`delong_midranks` where already known)."""
    from scipy.special import ndtri

    est = delong_covariance(labels, np.vstack([scores_a, scores_b]), ranks)
    difference = float(est.aucs[0] - est.aucs[1])
    variance = float(est.covariance[0, 0] + est.covariance[1, 1] - 2.0 * est.covariance[0, 1])
    se = math.sqrt(max(variance, 0.0))
    z = difference / se if se > 0 else (0.0 if difference == 0 else math.copysign(math.inf, difference))
    half = float(ndtri(0.5 + level / 2.0)) * se  # scipy.stats.norm.ppf's own ufunc
    return difference, se, z, (difference - half, difference + half)
