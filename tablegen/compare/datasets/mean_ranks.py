"""The mean-ranks post-hoc test (Nemenyi's, or the Bonferroni z test), and how its verdicts depend on the pool.

Shown only to expose the paper's point (Benavoli, Corani & Mangili, JMLR 2016): in a pool of m
algorithms on n data sets, A and B differ when

    z = |R̄_A − R̄_B| / sqrt(m (m + 1) / (6 n))  >  critical z,

by one of two laws (``law``):

* ``"nemenyi"`` (default), Nemenyi's test as Demšar (JMLR 7, 2006) gives it: critical z = q_α(m, ∞) / √2,
  q_α the upper α quantile of the studentized range of m independent standard normals (infinite degrees of
  freedom, ``scipy.stats.studentized_range``); the critical difference of mean ranks is
  CD = q_α(m, ∞) / √2 · sqrt(m (m + 1) / (6 n)) (1.483 for m = 4, n = 10, α = 0.05), and a pair's
  family-wise p-value is Pr(Q_m > √2 z), as scikit-posthocs' ``posthoc_nemenyi_friedman`` computes it;
* ``"bonferroni"``: the same z against the two-sided normal quantile z_{α / (m (m − 1))}, Bonferroni over the
  m(m − 1)/2 pairs (adjusted p = min(1, m(m − 1)/2 · 2 (1 − Φ(z)))); more conservative than Nemenyi's
  (CD 1.523 at m = 4, n = 10).  Not Bonferroni–Dunn, which compares each algorithm with one control
  (m − 1 comparisons).

The mean ranks R̄ are computed over the whole pool, so the verdict on A vs B moves with the *other*
algorithms.  For each pair we recompute it in every sub-pool {A, B} ∪ S, S ⊆ the other m − 2
algorithms (2^(m−2) pools, the full one included), each against the critical z of its own size, and count
the pools whose verdict differs from the full pool's.

The count is exact and cheap: in a pool Q, the mean rank of A is 1 + Σ_{j ∈ Q, j ≠ A} W[A, j] with
W[A, j] = the share of data sets on which j beats A (a tie counting ½) — ties share their average
rank — so R̄_A − R̄_B over Q is a sum over the members of S of W[A, j] − W[B, j].
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from tablegen.errors import TablegenInputError

#: Largest m for which the flips are counted (2^(m−2) sub-pools per pair).
MAX_ALGORITHMS_FOR_FLIPS = 18
#: The laws of the mean-ranks test, and their names in words.
LAWS = {"nemenyi": "Nemenyi (studentized range)", "bonferroni": "Bonferroni z (all pairs)"}


@dataclass(frozen=True)
class MeanRanksComparison:
    """One pair by the mean-ranks test in the full pool, and its verdict across sub-pools.

    Attributes
    ----------
    a, b : str
    mean_rank_difference : float
        R̄_a − R̄_b in the full pool (negative: ``a`` ranks better).
    z, critical_z : float
        The statistic and the critical value it must exceed in the full pool: q_α(m, ∞) / √2 (Nemenyi) or
        z_{α / (m(m − 1))} (Bonferroni).
    p_value, adjusted_p_value : float
        The unadjusted two-sided normal p-value 2 (1 − Φ(z)), and the family-wise one of ``law``:
        Pr(Q_m > √2 z) for Nemenyi (studentized range, ∞ degrees of freedom), min(1, m(m − 1)/2 · p_value)
        for Bonferroni.
    significant : bool
        z > critical_z in the full pool (equivalently adjusted_p_value < alpha).
    flips, subpools : int
        Sub-pools {a, b} ∪ S (of ``subpools`` in all) whose verdict differs from the full pool's.
    example_pool : tuple of str or None
        The other algorithms of one smallest sub-pool whose verdict differs.
    by_pool_size : tuple of (int, int, int)
        ``(size, significant, pools)`` for each pool size 2..m: of the ``pools`` sub-pools of that size
        holding the pair, in how many the test calls it significant (the paper's Table 1 layout: the
        verdict on each pair by the number of algorithms compared).
    law : str
        ``"nemenyi"`` or ``"bonferroni"`` (module docstring).

    Examples
    --------
    >>> X = np.array([[3, 2, 1, 0], [3, 1, 2, 0], [3, 2, 0, 1], [2, 3, 1, 0.]] * 5)
    >>> mean_ranks_test(X, list("ABCD"))[0].by_pool_size   # A vs B: significant alone and in 1 of 2 triples
    ((2, 1, 1), (3, 1, 2), (4, 0, 1))
    >>> mean_ranks_test(X, list("ABCD"), law="bonferroni")[0].by_pool_size   # alone only
    ((2, 1, 1), (3, 0, 2), (4, 0, 1))
    """

    a: str
    b: str
    mean_rank_difference: float
    z: float
    critical_z: float
    p_value: float
    adjusted_p_value: float
    significant: bool
    flips: int
    subpools: int
    example_pool: tuple | None
    by_pool_size: tuple = ()
    law: str = "nemenyi"

    def to_dict(self) -> dict:
        """Plain Python values, strict JSON."""
        from tablegen.common.outputs import json_ready

        data = json_ready(asdict(self))
        data["example_pool"] = None if self.example_pool is None else list(self.example_pool)
        data["by_pool_size"] = [{"size": size, "significant": hits, "pools": pools}
                                for size, hits, pools in self.by_pool_size]
        return data


def beat_shares(X: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """W[a, j]: share of data sets on which algorithm j beats algorithm a (ties ½); W[a, a] = 0."""
    Y = X if higher_is_better else -X
    beats = (Y[:, None, :] > Y[:, :, None]).mean(axis=0)
    ties = (Y[:, None, :] == Y[:, :, None]).mean(axis=0)
    W = beats + 0.5 * ties
    np.fill_diagonal(W, 0.0)
    return W


def critical_z(m: int, alpha: float, law: str = "nemenyi") -> float:
    """The critical value of z = |R̄_A − R̄_B| / sqrt(m (m + 1) / (6 n)) in a pool of m: q_α(m, ∞) / √2
    (Nemenyi) or z_{α/(m(m−1))} (Bonferroni).

    Examples
    --------
    >>> round(critical_z(4, 0.05), 4), round(critical_z(4, 0.05, "bonferroni"), 4)
    (2.569, 2.6383)
    """
    from scipy.stats import norm, studentized_range

    if m < 2:
        raise TablegenInputError(f"the mean-ranks test needs m >= 2 algorithms, got m = {m}")
    if law == "nemenyi":
        return float(studentized_range.isf(alpha, m, np.inf)) / math.sqrt(2.0)
    return float(norm.isf(alpha / (m * (m - 1))))


def critical_difference(m: int, n: int, alpha: float, law: str = "nemenyi") -> float:
    """The critical difference of mean ranks in a pool of m algorithms on n data sets (Demšar 2006 for Nemenyi).

    Examples
    --------
    >>> round(critical_difference(4, 10, 0.05), 3), round(critical_difference(4, 10, 0.05, "bonferroni"), 3)
    (1.483, 1.523)
    """
    return critical_z(m, alpha, law) * math.sqrt(m * (m + 1) / (6.0 * n))


def adjusted_p(z: float, m: int, law: str = "nemenyi") -> float:
    """The family-wise p-value of z in a pool of m: Pr(Q_m > √2 z) (Nemenyi), min(1, m(m−1)/2 · 2(1 − Φ(z)))
    (Bonferroni).

    Examples
    --------
    >>> round(adjusted_p(1.5 / math.sqrt(4 * 5 / 60), 4), 4)   # Δ mean rank 1.5, m = 4, n = 10
    0.0463
    """
    from scipy.stats import norm, studentized_range

    if law == "nemenyi":
        return float(min(1.0, studentized_range.sf(math.sqrt(2.0) * z, m, np.inf)))
    return float(min(1.0, m * (m - 1) / 2 * 2.0 * norm.sf(z)))


def check_law(law) -> str:
    """``law`` if it is one of :data:`LAWS`, else an input error naming ``mean_ranks_law``."""
    from tablegen.compare.datasets.validation import check_choice

    return check_choice("mean_ranks_law", law, tuple(LAWS))


def _verdicts_over_subpools(W, a, b, n, cuts):
    """Verdicts of the pair (a, b) in every sub-pool, the other algorithms and the bit masks; ``cuts[k - 2]``
    the critical z of a pool of k."""
    m = W.shape[0]
    others = [j for j in range(m) if j not in (a, b)]
    masks = (np.arange(2 ** len(others))[:, None] >> np.arange(len(others))) & 1
    difference = (W[a, b] - W[b, a]) + masks @ (W[a, others] - W[b, others])
    size = masks.sum(axis=1) + 2
    z = np.abs(difference) / np.sqrt(size * (size + 1) / (6.0 * n))
    return z > cuts[size - 2], others, masks


def _by_pool_size(verdicts: np.ndarray, masks: np.ndarray) -> tuple:
    """((size, significant pools, pools), ...) for sizes 2..m from the verdicts of every sub-pool."""
    size = masks.sum(axis=1) + 2
    return tuple((int(k), int(np.count_nonzero(verdicts[size == k])), int(np.count_nonzero(size == k)))
                 for k in range(2, int(size.max()) + 1))


def mean_ranks_test(X: np.ndarray, names, alpha: float = 0.05, higher_is_better: bool = True,
                    law: str = "nemenyi"):
    """The mean-ranks test (``law`` ``"nemenyi"`` or ``"bonferroni"``) on every pair of an (n, m) table, with
    the sub-pool flip counts.

    Examples
    --------
    >>> X = np.array([[3, 2, 1, 0], [3, 1, 2, 0], [3, 2, 0, 1], [2, 3, 1, 0.]] * 5)
    >>> [(c.a, c.b, c.significant, c.flips) for c in mean_ranks_test(X, list("ABCD"))][:2]
    [('A', 'B', False, 2), ('A', 'C', True, 0)]
    """
    from scipy.stats import norm

    law = check_law(law)
    n, m = X.shape
    if m > MAX_ALGORITHMS_FOR_FLIPS:
        raise TablegenInputError(f"mean_ranks_posthoc: counting sub-pools needs m <= {MAX_ALGORITHMS_FOR_FLIPS} "
                                 f"algorithms (2^(m-2) pools per pair), got m = {m}")
    W = beat_shares(X, higher_is_better)
    mean_ranks = 1.0 + W.sum(axis=1)
    se = np.sqrt(m * (m + 1) / (6.0 * n))
    cuts = np.array([critical_z(k, alpha, law) for k in range(2, m + 1)])
    out = []
    for a in range(m):
        for b in range(a + 1, m):
            verdicts, others, masks = _verdicts_over_subpools(W, a, b, n, cuts)
            full = bool(verdicts[-1])
            differ = np.flatnonzero(verdicts != full)
            example = None
            if differ.size:
                smallest = differ[np.argmin(masks[differ].sum(axis=1))]
                example = tuple(names[others[k]] for k in np.flatnonzero(masks[smallest]))
            z = float(abs(mean_ranks[a] - mean_ranks[b]) / se)
            out.append(MeanRanksComparison(names[a], names[b], float(mean_ranks[a] - mean_ranks[b]), z,
                                           float(cuts[-1]), float(2 * norm.sf(z)), adjusted_p(z, m, law), full,
                                           int(differ.size), int(verdicts.size), example,
                                           _by_pool_size(verdicts, masks), law))
    return tuple(out)
