"""Multiple-comparison adjustments of K p-values: family-wise (Bonferroni, Holm, Hommel) and false discovery
rate (Benjamini–Hochberg, Benjamini–Yekutieli).

With p₍₁₎ ≤ … ≤ p₍K₎ the sorted raw p-values (ties keep their input order), each adjusted value is the
smallest level at which the closed or step procedure rejects that hypothesis, capped at 1:

=============== ====================================================================================
``bonferroni``  min(1, K p_i)                                              (family-wise error)
``holm``        step-down: max_{j ≤ i} min(1, (K − j + 1) p₍j₎)             (family-wise error)
``hommel``      closed testing with Simes' test of every intersection:     (family-wise error,
                p̃_i = max over subsets I ∋ i of min_{k} |I| p_(k in I) / k  under positive dependence)
``bh``          step-up: min_{j ≥ i} min(1, K p₍j₎ / j)                     (false discovery rate)
``by``          ``bh`` times c(K) = Σ_{k ≤ K} 1/k, capped at 1              (false discovery rate, any
                                                                             dependence)
=============== ====================================================================================

Hommel's adjustment is computed exactly by the O(K²) recursion of Wright (1992) (as statsmodels'
``multipletests(method="hommel")`` and R's ``p.adjust``): for each subset size s = K, …, 2 the smallest
Simes value of the s largest p-values, c_s = min_{k ≤ s} s p₍K−s+k₎ / k, lifts the s largest to at
least c_s and the others to at least min(s p₍i₎, c_s).  The closed-testing definition is enumerated
over all 2^(K−1) subsets in the tests for K ≤ 10 and agrees.

Order relations that hold for any input (and are tested on random inputs): every adjusted value is ≥
its raw p; adjusted values keep the order of the raw ones; raw ≤ hommel ≤ holm ≤ bonferroni (Hommel's
closed test contains Holm's); bh ≤ holm and bh ≤ by.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tablegen.compare.datasets.validation import check_correction, check_p_values

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: Correction -> (name in words, the error rate it controls).
CORRECTIONS = {"holm": ("Holm", "family-wise"), "bonferroni": ("Bonferroni", "family-wise"),
               "hommel": ("Hommel", "family-wise"), "bh": ("Benjamini-Hochberg", "false discovery rate"),
               "by": ("Benjamini-Yekutieli", "false discovery rate")}


def _holm(p: np.ndarray) -> np.ndarray:
    K = p.size
    return np.maximum.accumulate(np.minimum(1.0, (K - np.arange(K)) * p))


def _hommel(p: np.ndarray) -> np.ndarray:
    """Wright's recursion on sorted p (see the module docstring)."""
    K = p.size
    adjusted = p.copy()
    for s in range(K, 1, -1):
        c = float(np.min(s * p[K - s:] / np.arange(1, s + 1)))
        adjusted[K - s:] = np.maximum(adjusted[K - s:], c)
        adjusted[:K - s] = np.maximum(adjusted[:K - s], np.minimum(s * p[:K - s], c))
    return np.minimum(1.0, np.maximum(adjusted, p))


def _bh(p: np.ndarray) -> np.ndarray:
    K = p.size
    stepped = np.minimum.accumulate((K * p / np.arange(1, K + 1))[::-1])[::-1]
    return np.minimum(1.0, stepped)


def _by(p: np.ndarray) -> np.ndarray:
    return np.minimum(1.0, _bh(p) * float(np.sum(1.0 / np.arange(1, p.size + 1))))


_SORTED = {"holm": _holm, "hommel": _hommel, "bh": _bh, "by": _by}


def adjust(p_values: ArrayLike, correction: str = "holm") -> np.ndarray:
    """Adjusted p-values by ``correction`` (one of :data:`CORRECTIONS`; see the module docstring).

    Examples
    --------
    >>> adjust([0.01, 0.04, 0.03, 0.005], "hommel").tolist()
    [0.03, 0.04, 0.04, 0.02]
    >>> adjust([0.01, 0.04, 0.03, 0.005], "bh").round(4).tolist()
    [0.02, 0.04, 0.04, 0.02]
    """
    check_correction(correction, CORRECTIONS)
    p = check_p_values(p_values)
    if correction == "bonferroni":
        return np.minimum(1.0, p.size * p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(p.size)
    adjusted[order] = _SORTED[correction](p[order]) if p.size else p
    return adjusted
