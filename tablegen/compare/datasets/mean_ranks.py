"""The mean-ranks (Nemenyi-type) post-hoc test, and how its verdicts depend on the pool.

Shown only to expose the paper's point (Benavoli, Corani & Mangili, JMLR 2016): in a pool of m
algorithms on n data sets, A and B differ when

    z = |R̄_A − R̄_B| / sqrt(m (m + 1) / (6 n))  >  z_{α / (m (m − 1))}

(the upper quantile of the standard normal, Bonferroni over the m(m − 1)/2 pairs, two-sided).  The
mean ranks R̄ are computed over the whole pool, so the verdict on A vs B moves with the *other*
algorithms.  For each pair we recompute it in every sub-pool {A, B} ∪ S, S ⊆ the other m − 2
algorithms (2^(m−2) pools, the full one included), and count the pools whose verdict differs from the
full pool's.

The count is exact and cheap: in a pool Q, the mean rank of A is 1 + Σ_{j ∈ Q, j ≠ A} W[A, j] with
W[A, j] = the share of data sets on which j beats A (a tie counting ½) — ties share their average
rank — so R̄_A − R̄_B over Q is a sum over the members of S of W[A, j] − W[B, j].
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from tablegen.errors import TablegenInputError

#: Largest m for which the flips are counted (2^(m−2) sub-pools per pair).
MAX_ALGORITHMS_FOR_FLIPS = 18


@dataclass(frozen=True)
class MeanRanksComparison:
    """One pair by the mean-ranks test in the full pool, and its verdict across sub-pools.

    Attributes
    ----------
    a, b : str
    mean_rank_difference : float
        R̄_a − R̄_b in the full pool (negative: ``a`` ranks better).
    z, critical_z : float
        The statistic and the Bonferroni-corrected normal quantile it must exceed.
    p_value, adjusted_p_value : float
        2 (1 − Φ(z)), and that times m(m − 1)/2 (capped at 1).
    significant : bool
        z > critical_z in the full pool.
    flips, subpools : int
        Sub-pools {a, b} ∪ S (of ``subpools`` in all) whose verdict differs from the full pool's.
    example_pool : tuple of str or None
        The other algorithms of one smallest sub-pool whose verdict differs.
    by_pool_size : tuple of (int, int, int)
        ``(size, significant, pools)`` for each pool size 2..m: of the ``pools`` sub-pools of that size
        holding the pair, in how many the test calls it significant (the paper's Table 1 layout: the
        verdict on each pair by the number of algorithms compared).

    Examples
    --------
    >>> X = np.array([[3, 2, 1, 0], [3, 1, 2, 0], [3, 2, 0, 1], [2, 3, 1, 0.]] * 5)
    >>> mean_ranks_test(X, list("ABCD"))[0].by_pool_size   # A vs B: significant alone, in no larger pool
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

    def to_dict(self) -> dict:
        data = asdict(self)
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


def critical_z(m: int, alpha: float) -> float:
    """z_{α/(m(m−1))}: the normal quantile the mean-ranks statistic must exceed in a pool of m."""
    from scipy.stats import norm

    return float(norm.isf(alpha / (m * (m - 1))))


def _verdicts_over_subpools(W, a, b, n, alpha):
    """Verdicts of the pair (a, b) in every sub-pool, the other algorithms and the bit masks."""
    m = W.shape[0]
    others = [j for j in range(m) if j not in (a, b)]
    masks = (np.arange(2 ** len(others))[:, None] >> np.arange(len(others))) & 1
    difference = (W[a, b] - W[b, a]) + masks @ (W[a, others] - W[b, others])
    size = masks.sum(axis=1) + 2
    z = np.abs(difference) / np.sqrt(size * (size + 1) / (6.0 * n))
    cut = np.array([critical_z(k, alpha) for k in range(2, m + 1)])[size - 2]
    return z > cut, others, masks


def _by_pool_size(verdicts: np.ndarray, masks: np.ndarray) -> tuple:
    """((size, significant pools, pools), ...) for sizes 2..m from the verdicts of every sub-pool."""
    size = masks.sum(axis=1) + 2
    return tuple((int(k), int(np.count_nonzero(verdicts[size == k])), int(np.count_nonzero(size == k)))
                 for k in range(2, int(size.max()) + 1))


def mean_ranks_test(X: np.ndarray, names, alpha: float = 0.05, higher_is_better: bool = True):
    """The mean-ranks test on every pair of an (n, m) table, with the sub-pool flip counts.

    Examples
    --------
    >>> X = np.array([[3, 2, 1, 0], [3, 1, 2, 0], [3, 2, 0, 1], [2, 3, 1, 0.]] * 5)
    >>> [(c.a, c.b, c.significant, c.flips) for c in mean_ranks_test(X, list("ABCD"))][:2]
    [('A', 'B', False, 1), ('A', 'C', True, 0)]
    """
    from scipy.stats import norm

    n, m = X.shape
    if m > MAX_ALGORITHMS_FOR_FLIPS:
        raise TablegenInputError(f"mean_ranks_posthoc: counting sub-pools needs m <= {MAX_ALGORITHMS_FOR_FLIPS} "
                                 f"algorithms (2^(m-2) pools per pair), got m = {m}")
    W = beat_shares(X, higher_is_better)
    mean_ranks = 1.0 + W.sum(axis=1)
    se = np.sqrt(m * (m + 1) / (6.0 * n))
    pairs = m * (m - 1) // 2
    out = []
    for a in range(m):
        for b in range(a + 1, m):
            verdicts, others, masks = _verdicts_over_subpools(W, a, b, n, alpha)
            full = bool(verdicts[-1])
            differ = np.flatnonzero(verdicts != full)
            example = None
            if differ.size:
                smallest = differ[np.argmin(masks[differ].sum(axis=1))]
                example = tuple(names[others[k]] for k in np.flatnonzero(masks[smallest]))
            z = abs(mean_ranks[a] - mean_ranks[b]) / se
            p = float(2 * norm.sf(z))
            out.append(MeanRanksComparison(names[a], names[b], float(mean_ranks[a] - mean_ranks[b]), float(z),
                                           critical_z(m, alpha), p, min(1.0, pairs * p), full, int(differ.size),
                                           int(verdicts.size), example, _by_pool_size(verdicts, masks)))
    return tuple(out)
