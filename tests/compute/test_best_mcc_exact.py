"""Exact best MCC (the lattice programme with a per-diagonal boundary) against independent references:
enumeration of every ranking with exact rationals (P + N <= 16), exact integer path counts (random
boundaries; (200, 300) with the boundary found by scanning integer comparisons), and the Monte Carlo
engine; the lookups now answer it exactly."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

import tablegen
from tablegen.compute.exact.best_mcc import BestMccKeys, best_mcc_cost, best_mcc_null
from tablegen.compute.exact.lattice_search import critical_key, tail_at_key
from tablegen.compute.exact.nulls import critical_index
from tablegen.compute.kernels.lattice import column_boundary_sweep
from tablegen.compute.metrics import get_metric
from tablegen.compute.stats import upper_tail_probability

MCC = get_metric("best_mcc")
CS = (1, 2, 10, 100, 1000)
ALPHAS = (0.01, 0.05, 0.2, 0.5)


def _rankings(P: int, N: int) -> np.ndarray:
    rows = np.zeros((math.comb(P + N, P), P + N), dtype=np.int64)
    for row, top in enumerate(itertools.combinations(range(P + N), P)):
        rows[row, list(top)] = 1
    return rows


def brute_distribution(P: int, N: int):
    """{exact q = max_k G_k^2 / (k (n - k)) over G_k > 0 (0 if none): (count, kernel floats of it)}.

    Every ranking is enumerated.  Row maxima are taken on the doubles of q: distinct q = a/b, c/d with
    b, d <= 64 differ by >= 1/4096 while q <= 64, far more than a rounding, and equal rationals round
    to equal doubles, so the doubles order them exactly; each is then replaced by its exact fraction.
    """
    n, labels = P + N, _rankings(P, N)
    tp = np.cumsum(labels, axis=1)[:, :-1]
    k = np.arange(1, n)
    g = n * tp - k * P
    q = np.where(g > 0, g.astype(float) ** 2 / (k * (n - k)), 0.0)
    where = q.argmax(axis=1)
    best_g, best_k = g[np.arange(len(g)), where], k[where]
    floats = MCC.reference_scores(labels.astype(np.uint8), P, N)
    out = {}
    for gi, ki, row_q, value in zip(best_g.tolist(), best_k.tolist(), q.max(axis=1).tolist(), floats.tolist()):
        exact = Fraction(gi * gi, ki * (n - ki)) if row_q > 0 else Fraction(0)
        count, seen = out.get(exact, (0, set()))
        out[exact] = (count + 1, seen | {value})
    return out


def _tail(distribution, q) -> Fraction:
    return Fraction(sum(c for v, (c, _) in distribution.items() if v >= q), sum(c for c, _ in distribution.values()))


def _brute_critical(distribution, C, alpha):
    t = Fraction(str(alpha)) if C == 1 else Fraction(float(upper_tail_probability(C, alpha)))
    total = sum(c for c, _ in distribution.values())
    for x in sorted(distribution):
        if Fraction(sum(c for v, (c, _) in distribution.items() if v > x), total) <= t:
            return x
    raise AssertionError("unreachable")


def _check_cell(P: int, N: int) -> None:
    distribution, null = brute_distribution(P, N), best_mcc_null(P, N)
    getcontext().prec = 40
    for q, (count, floats) in distribution.items():
        exact = Decimal(q.numerator) / Decimal(q.denominator * P * N)
        exact = exact.sqrt()
        for value in floats:  # the kernels' floats are within 3 ulp of the exact value (module claim)
            assert abs(Decimal(value) - exact) <= 3 * Decimal(math.ulp(value)) + Decimal(0), (P, N, q)
            assert null.tail_ge_score(value) == pytest.approx(float(_tail(distribution, q)), rel=1e-12)
    # the whole tail function on the candidate list (a superset: a candidate not attained has the
    # tail of the next attained value)
    attained = sorted(distribution)
    for index in range(len(null.values)):
        key = null._listed.key(index)
        above = [q for q in attained if q >= key.square]
        expected = float(_tail(distribution, above[0])) if above else 0.0
        assert null.tail_ge_at(index) == pytest.approx(expected, rel=1e-12, abs=0.0), (P, N, key)
    assert null.tail_ge_score(1.0 + 1e-6) == 0.0
    for C in CS:
        for alpha in ALPHAS:
            expected = _brute_critical(distribution, C, alpha)
            got = null.critical_value(float(upper_tail_probability(C, alpha)))
            assert got in distribution[expected][1], (P, N, C, alpha)  # the float the kernels give for it


FAST_CELLS = [(P, n - P) for n in range(2, 11) for P in range(1, n)]
SLOW_CELLS = [(P, n - P) for n in range(11, 17) for P in range(1, n)]


def test_tail_function_and_critical_values_equal_enumeration_up_to_ten_items():
    for P, N in FAST_CELLS:
        _check_cell(P, N)


@pytest.mark.slow
def test_tail_function_and_critical_values_equal_enumeration_up_to_sixteen_items():
    for P, N in SLOW_CELLS:
        _check_cell(P, N)


@pytest.mark.parametrize(("P", "N"), [(6, 7), (3, 10), (9, 4)])
def test_what_a_probe_reads_off_holds_in_exact_arithmetic(P, N):
    """flat: Pr(X >= flat) = Pr(X >= key); atom: Pr(X >= atom) > target (the search's jumps)."""
    distribution, family = brute_distribution(P, N), BestMccKeys(P, N)
    listed = family.all_keys()
    for index in range(1, len(listed)):
        key = listed.key(index)
        hit, _, flat, record = family.sweep(key, 0.0)
        assert hit == pytest.approx(float(_tail(distribution, key.square)), rel=1e-12)
        assert flat is not None and _tail(distribution, flat.square) == _tail(distribution, key.square)
        for target in (0.5 * hit, 0.1 * hit, 0.01 * hit):
            atom = family.atom_bound(record, target, None)
            assert atom is not None and float(_tail(distribution, atom.square)) > target


# --- the kernel against exact path counts ---------------------------------------------------------

def path_count_hit(P: int, N: int, threshold) -> Fraction:
    """Share of the C(P+N, P) paths reaching t >= threshold[t + f] somewhere, by integer path counts."""
    avoid = [[0] * (N + 1) for _ in range(P + 1)]
    for t in range(P + 1):
        for f in range(N + 1):
            if t < threshold[t + f]:
                avoid[t][f] = 1 if t == f == 0 else (avoid[t - 1][f] if t else 0) + (avoid[t][f - 1] if f else 0)
    return 1 - Fraction(avoid[P][N], math.comb(P + N, P))


NOT_KEPT = (np.empty(1, dtype=np.int64), np.empty(1))


def test_column_boundary_programme_equals_path_counts_on_random_boundaries():
    """Boundaries that jump up and fall by several rows between diagonals; trimmed ones bracket the count."""
    rng = np.random.default_rng(24)
    for _ in range(40):
        P, N = (int(v) for v in rng.integers(1, 25, 2))
        threshold = rng.integers(1, P + 3, P + N + 1).astype(np.int64)
        threshold[rng.random(P + N + 1) < 0.5] = P + 1  # no boundary on about half of the diagonals
        exact = float(path_count_hit(P, N, threshold.tolist()))
        hit, dropped = column_boundary_sweep(P, N, threshold, 0.0, *NOT_KEPT)
        assert dropped == 0.0 and hit == pytest.approx(exact, rel=1e-12, abs=1e-300)
        hit, dropped = column_boundary_sweep(P, N, threshold, 1e-4, *NOT_KEPT)
        assert hit <= exact * (1 + 1e-12) and exact <= (hit + dropped) * (1 + 1e-12)


def _scanned_threshold(P: int, N: int, g0: int, k0: int) -> list:
    """Per diagonal the smallest t with M(k, t) >= M(k0, g0), by scanning t and comparing
    G^2 k0 (n - k0) >= g0^2 k (n - k) in integers (independent of the module's isqrt formula)."""
    n, out = P + N, [P + 1] * (P + N + 1)
    for k in range(1, n):
        for t in range(max(0, k - N), min(k, P) + 1):
            g = n * t - k * P
            if g > 0 and g * g * k0 * (n - k0) >= g0 * g0 * k * (n - k):
                out[k] = t
                break
    return out


def _check_by_path_counts(P: int, N: int, C: int, alpha: float) -> None:
    """Pr(X >= m*) > t >= Pr(X >= next candidate) in exact integers, and the tail to 1e-12."""
    family, t = BestMccKeys(P, N), float(upper_tail_probability(C, alpha))
    key, _ = critical_key(family, t * (1 + 1e-12))
    above = family.successor(key)
    at_key = path_count_hit(P, N, _scanned_threshold(P, N, key.g, key.k))
    at_above = path_count_hit(P, N, _scanned_threshold(P, N, above.g, above.k))
    assert at_key > Fraction(t) >= at_above, (P, N, C, alpha)
    assert tail_at_key(family, key) == pytest.approx(float(at_key), rel=1e-12)
    assert best_mcc_null(P, N).critical_value(t) == family.value(key)


def test_mid_size_cell_critical_value_by_exact_path_counts():
    """(200, 300): at C = 10, alpha = 0.01 the two tails around t are 0.0010046 and 0.0010026
    (t = 0.00100453): a wrong step would show."""
    for C, alpha in [(10, 0.01), (1, 0.05), (1000, 0.05)]:
        _check_by_path_counts(200, 300, C, alpha)


@pytest.mark.slow
@pytest.mark.parametrize(("P", "N"), [(700, 1300), (1000, 1000), (30, 3000), (3000, 20)])
def test_larger_cells_critical_value_by_exact_path_counts(P, N):
    for C, alpha in [(100, 0.05), (10, 0.01)]:
        _check_by_path_counts(P, N, C, alpha)


# --- search, candidates, Monte Carlo, lookups -------------------------------------------------------

@pytest.mark.parametrize("P,N", [(20, 20), (3, 300), (300, 5), (97, 103)])
def test_search_equals_exhaustive_bisection(P, N):
    """The bracketed search gives the m* of bisecting every candidate with the index interface."""
    exhaustive = best_mcc_null(P, N)
    for C, alpha in [(1, 0.5), (10, 0.01), (1000, 0.05)]:
        tail = float(upper_tail_probability(C, alpha))
        assert best_mcc_null(P, N).critical_value(tail) == exhaustive.values[critical_index(exhaustive, tail)]


def test_candidate_counts_and_steps_are_exact():
    family = BestMccKeys(7, 9)
    listed = family.all_keys()
    keys = [listed.key(i) for i in range(len(listed))]
    assert keys == sorted(set(keys)) and keys[0] == family.min_key and keys[-1] == family.max_key
    for low, high in itertools.combinations(keys[::3], 2):
        inside = family.keys_between(low, high)
        assert [inside.key(i) for i in range(len(inside))] == [k for k in keys if low < k < high]
        assert family.successor(low) == keys[keys.index(low) + 1]
    assert family.successor(family.max_key) is None


def _inside_monte_carlo_interval(P: int, N: int) -> None:
    ds = tablegen.simulate_cell(P, N, R=40_000, seed=5, metrics=["best_mcc"], Cs=[1, 10], alphas=[0.05])
    for C in (1, 10):
        cell = ds.sel(metric="best_mcc", C=C, alpha=0.05)
        exact = best_mcc_null(P, N).critical_value(float(upper_tail_probability(C, 0.05)))
        assert float(cell.exact_critical_value) == exact
        assert float(cell.ci_low) <= exact <= float(cell.ci_high)


def test_exact_critical_value_lies_in_the_monte_carlo_interval():
    _inside_monte_carlo_interval(12, 400)  # the minority-class kernel


@pytest.mark.slow
@pytest.mark.parametrize(("P", "N"), [(30, 50), (200, 300)])
def test_exact_critical_value_lies_in_the_monte_carlo_interval_of_the_lane_kernel(P, N):
    _inside_monte_carlo_interval(P, N)


def test_lookups_answer_exactly_and_the_cost_is_charged():
    answer = tablegen.critical_value("best_mcc", 30, 50, C=10, alpha=0.01)
    assert answer.method == "exact" and answer.ci_low == answer.value == answer.ci_high
    assert answer.value == best_mcc_null(30, 50).critical_value(float(upper_tail_probability(10, 0.01)))
    p = tablegen.p_value("best_mcc", 30, 50, C=10, score=answer.value)  # m* carries Pr(X >= m*) > t: p > alpha
    assert p.method == "exact" and p.value > 0.01
    assert p.value == pytest.approx(1 - (1 - best_mcc_null(30, 50).tail_ge_score(answer.value)) ** 10, rel=1e-12)
    seconds, memory = MCC.exact_cost(1000, 1000)
    assert (seconds, memory) == best_mcc_cost(1000, 1000) and seconds < 1.0 and memory < 1e7
    assert best_mcc_cost(20, 10_000)[0] < best_mcc_cost(10_000, 10_000)[0]
