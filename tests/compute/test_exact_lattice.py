"""The lattice metrics (best F1, best balanced accuracy): the wavefront programme, the candidate
arithmetic and the bracketed search, against brute force, exact path counts, the row-by-row
programme it replaced and an exhaustive bisection over every candidate."""

import math
from fractions import Fraction

import numpy as np
import pytest

from tablegen.compute.exact.lattice import (
    BalancedAccuracyKeys,
    BestF1Keys,
    best_balanced_accuracy_null,
    best_f1_null,
    lattice_cost,
)
from tablegen.compute.exact.lattice_search import TRIM_RTOL, _run_probe, critical_key, tail_at_key
from tablegen.compute.exact.nulls import critical_index
from tablegen.compute.kernels.jit import jit_cached
from tablegen.compute.kernels.lattice import half_plane_hit_probability, half_plane_sweep
from tablegen.compute.stats import upper_tail_probability

BUILDERS = {"best_f1": best_f1_null, "best_balanced_accuracy": best_balanced_accuracy_null}
FAMILIES = {"best_f1": BestF1Keys, "best_balanced_accuracy": BalancedAccuracyKeys}
CS = (1, 2, 10, 100, 1000)
ALPHAS = (0.01, 0.05, 0.2, 0.5)


@jit_cached()
def row_programme(n_pos, n_neg, a, b, c):
    """The row-by-row programme the wavefront replaced, kept as a reference."""
    if c <= 0:
        return 1.0
    mass = np.zeros(n_neg + 1)
    mass[0] = 1.0
    hit = 0.0
    for t in range(n_pos + 1):
        carry = 0.0
        enters = a * (t + 1)
        for f in range(n_neg + 1):
            here = mass[f] + carry
            remaining = n_pos + n_neg - t - f
            if remaining == 0:
                mass[f] = here
                break
            share = here / remaining
            carry = share * (n_neg - f)
            up = share * (n_pos - t)
            if t < n_pos and enters - b * f >= c:
                hit += up
                up = 0.0
            mass[f] = up
    return hit


def path_count_touch(P, N, a, b, c) -> Fraction:
    """Fraction of the C(P+N, P) paths that touch a t - b f >= c, by integer path counting."""
    if c <= 0:
        return Fraction(1)
    avoid = [[0] * (N + 1) for _ in range(P + 1)]
    for t in range(P + 1):
        for f in range(N + 1):
            if a * t - b * f < c:
                avoid[t][f] = 1 if t == f == 0 else (avoid[t - 1][f] if t else 0) + (avoid[t][f - 1] if f else 0)
    return 1 - Fraction(avoid[P][N], math.comb(P + N, P))


def sweep(P, N, a, b, c, floor=0.0):
    not_kept = np.zeros(1), np.zeros(1), np.zeros(1, np.int64)
    return half_plane_sweep(P, N, a, b, c, floor, np.array([1, 0, 0, 0, 0, 1]), *not_kept)


# --- the programme ------------------------------------------------------------------------------

def test_wavefront_equals_row_programme_on_random_half_planes():
    rng = np.random.default_rng(14)
    for _ in range(400):
        P, N = (int(x) for x in rng.integers(1, 80, 2))
        a, b = int(rng.integers(1, 30)), int(rng.integers(0, 30))
        c = int(rng.integers(-3, a * P + 3))
        expected = row_programme(P, N, a, b, c)
        got = half_plane_hit_probability(P, N, a, b, c)
        assert got == pytest.approx(expected, rel=1e-12, abs=0.0), (P, N, a, b, c)


TILT_CELLS = [(1, 1), (0, 5), (5, 0), (2, 300), (300, 2), (37, 37), (120, 500), (500, 120), (1, 2000), (700, 1300)]


def _swept(kernel, P, N, a, b, c, floor, value):
    records = np.zeros(P + N + 1), np.zeros(P + N + 1), np.zeros(P + N + 1, np.int64)
    return kernel(P, N, a, b, c, floor, value, *records), records


@pytest.mark.parametrize("P,N", TILT_CELLS)
def test_tilted_programme_equals_the_probability_wavefront(P, N):
    """The tilted programme (one multiply-add a point, weights in double-double) against the probability-form
    wavefront it replaced (tests/compute/wavefront_reference.py): hit and dropped mass to 1e-12, the same first entry,
    entry and edge masses to 1e-12, the same edge points; cells past the rescaling period (32 diagonals), skewed both
    ways (a tiny tilt a / 2^s), empty sides, trimmed and untrimmed.  Where the highest live point's mass underflows
    (below 1e-290, untrimmed), either may name another point: the search's budget covers such mass
    (``UNDERFLOW_MASS``)."""
    from wavefront_reference import probability_wavefront

    rng = np.random.default_rng(P * 7919 + N)
    value = np.array([2, 0, 0, 1, 1, max(P, 1)], dtype=np.int64)  # F1's ranking of points
    for _ in range(8):
        a, b = int(rng.integers(1, 40)), int(rng.integers(0, 40))
        c = int(rng.integers(-1, a * P + 3))
        for floor in (0.0, 1e-300, 1e-30, 1e-9):
            got, (entry, edge, edge_t) = _swept(half_plane_sweep, P, N, a, b, c, floor, value)
            want, (entry0, edge0, edge_t0) = _swept(probability_wavefront, P, N, a, b, c, floor, value)
            where = (P, N, a, b, c, floor)
            assert got[0] == pytest.approx(want[0], rel=1e-12, abs=1e-300), where
            assert got[1] == pytest.approx(want[1], rel=1e-9, abs=1e-300), where
            assert got[2:] == want[2:], where
            assert np.allclose(entry, entry0, rtol=1e-12, atol=1e-300), where
            normal = (edge > 1e-290) & (edge0 > 1e-290)  # the highest point with mass may differ where it underflows
            assert np.array_equal(edge_t[normal], edge_t0[normal]), where
            assert np.allclose(edge[normal], edge0[normal], rtol=1e-12, atol=0), where
            assert np.all((edge <= 1e-290) == (edge0 <= 1e-290)), where


@pytest.mark.parametrize("P,N", [(2, 300), (300, 2), (1, 700), (60, 90)])
def test_tilted_programme_equals_exact_path_counts_on_skewed_cells(P, N):
    rng = np.random.default_rng(P + 1000 * N)
    for _ in range(6):
        a, b = int(rng.integers(1, 9)), int(rng.integers(0, 9))
        c = int(rng.integers(1, a * P + 2))
        hit, dropped, _, _ = sweep(P, N, a, b, c)
        assert dropped == 0.0 and hit == pytest.approx(float(path_count_touch(P, N, a, b, c)), rel=1e-12, abs=1e-300)


def test_weights_multiply_exactly_to_double_double_precision():
    """The weights' arithmetic (a product of exact ratios of doubles) against exact rationals over 3,000 factors,
    through the exponent's move past 2^-500 and 2^500."""
    from tablegen.compute.kernels.lattice import _times

    rng = np.random.default_rng(3)
    for scale in (1.0, 1e-3, 1e3):
        weight, exact = (1.0, 0.0, 0), Fraction(1)
        for _ in range(3000):
            num, den = float(rng.integers(1, 2**40)) * scale, float(rng.integers(1, 2**40))
            weight = _times(weight, num, den)
            exact *= Fraction(num) / Fraction(den)
        value = (Fraction(weight[0]) + Fraction(weight[1])) * Fraction(2) ** weight[2]
        assert weight[2] != 0 or scale == 1.0  # the exponent moved where the product left [2^-500, 2^500]
        assert abs(value / exact - 1) < Fraction(1, 10**28)


@pytest.mark.parametrize("P,N", [(40, 40), (40, 7), (3, 40), (25, 33), (1, 40), (40, 1)])
def test_trimmed_programme_brackets_exact_path_counts(P, N):
    """hit <= exact <= hit + dropped for every floor; untrimmed equals the exact count to 1e-12."""
    rng = np.random.default_rng(P * 100 + N)
    for _ in range(12):
        a, b = int(rng.integers(1, 12)), int(rng.integers(0, 12))
        c = int(rng.integers(1, a * P + 2))
        exact = float(path_count_touch(P, N, a, b, c))
        hit, dropped, _, _ = sweep(P, N, a, b, c)
        assert dropped == 0.0 and hit == pytest.approx(exact, rel=1e-12, abs=1e-300)
        for floor in (1e-30, 1e-12, 1e-4):
            hit, dropped, _, _ = sweep(P, N, a, b, c, floor)
            assert hit * (1 - 1e-12) <= exact <= (hit + dropped) * (1 + 1e-12) + 1e-300, (a, b, c, floor)


def test_first_entry_bounds_the_flat_stretch_of_the_tail(brute_force_distributions):
    """The lowest first-entry point v of Pr(X >= key): key <= v <= the next attained value, and
    Pr(X >= v) = Pr(X >= key) (every path reaching key enters H at a point worth >= v)."""
    for metric in BUILDERS:
        for P, N in [(4, 6), (5, 5), (7, 3), (1, 9)]:
            family, distribution = FAMILIES[metric](P, N), brute_force_distributions[(P, N)][metric]
            for raw in family.all_keys()._raw:
                key = Fraction(int(raw[0]), int(raw[1])) if metric == "best_f1" else int(raw)
                value = key if metric == "best_f1" else Fraction(key + P * N, 2 * P * N)
                _, _, following, _ = family.sweep(key, 0.0)
                above = [v for v in distribution if v >= value]
                if following is None:  # no path reaches key, or every path starts there (key 0)
                    assert not above or _tail(distribution, value) == 1
                    continue
                entry = following if metric == "best_f1" else Fraction(following + P * N, 2 * P * N)
                assert value <= entry <= min(above)
                assert _tail(distribution, entry) == _tail(distribution, value)


@pytest.mark.parametrize("metric", BUILDERS)
@pytest.mark.parametrize("P,N", [(30, 30), (12, 40), (40, 9)])
def test_what_a_probe_reads_off_holds_in_exact_arithmetic(metric, P, N):
    """Flat stretch, atom and edge bounds of one programme, checked with exact path counts."""
    family = FAMILIES[metric](P, N)

    def exact(key):
        return path_count_touch(P, N, *family.half_plane(key))

    every = family.all_keys()
    rng = np.random.default_rng(P * N)
    for index in rng.choice(len(every), 25, replace=False):
        key = every.key(int(index))
        tail = exact(key)
        if tail in (0, 1):
            continue
        for target in (float(tail) * 0.7, float(tail) * 1.3, float(tail) * 3.0, float(tail) / 3.0):
            probe = _run_probe(family, key, target, family.min_key, None)
            assert probe.qualifies == (tail <= target)
            if probe.qualifies and probe.below is not None:
                assert probe.below <= key and exact(probe.below) <= Fraction(target) * (1 + Fraction(1, 10**12))
            if not probe.qualifies:
                assert probe.flat is None or exact(probe.flat) == tail
                assert probe.atom is None or exact(probe.atom) > Fraction(target) * (1 - Fraction(1, 10**12))


# --- candidates ---------------------------------------------------------------------------------

def _all_candidates(metric, P, N) -> list:
    if metric == "best_f1":
        return sorted({Fraction(2 * t, P + t + f) for t in range(1, P + 1) for f in range(N + 1)})
    return sorted({t * N - f * P for t in range(P + 1) for f in range(N + 1) if t * N - f * P >= 0})


@pytest.mark.parametrize("metric", BUILDERS)
@pytest.mark.parametrize("P,N", [(1, 1), (3, 7), (7, 3), (12, 12), (9, 30), (30, 4)])
def test_candidate_ranges_count_list_and_step_exactly(metric, P, N):
    family = FAMILIES[metric](P, N)
    every = _all_candidates(metric, P, N)
    assert every[0] == family.min_key and every[-1] == family.max_key
    rng = np.random.default_rng(P + 7 * N)
    for _ in range(30):
        i, j = sorted(int(x) for x in rng.integers(0, len(every), 2))
        listed = family.keys_between(every[i], every[j])
        inside = every[i + 1:j]
        assert [listed.key(k) for k in range(len(listed))] == inside
        assert family.count_between(every[i], every[j]) >= len(inside)
        assert family.successor(every[i]) == (every[i + 1] if i + 1 < len(every) else None)
        x = float(every[i]) if metric == "best_f1" else family.value(every[i])
        assert family.ceil_key(x) == every[i] and family.floor_key(x) == every[i]
        assert family.ceil_key(np.nextafter(x, 2)) == (every[i + 1] if i + 1 < len(every) else None)
    np.testing.assert_array_equal(family.all_keys().values, [family.value(k) for k in every])


# --- against brute force (P + N <= 12) -----------------------------------------------------------

def _tail(distribution, value) -> Fraction:
    return Fraction(sum(c for v, c in distribution.items() if v >= value), sum(distribution.values()))


def _brute_critical(distribution, C, alpha):
    t = Fraction(str(alpha)) if C == 1 else Fraction(float(upper_tail_probability(C, alpha)))
    for x in sorted(distribution):
        if Fraction(sum(c for v, c in distribution.items() if v > x), sum(distribution.values())) <= t:
            return x
    raise AssertionError("unreachable")


@pytest.mark.parametrize("metric", BUILDERS)
def test_search_and_score_tails_equal_brute_force(metric, brute_force_distributions):
    for (P, N), per_metric in brute_force_distributions.items():
        distribution, null = per_metric[metric], BUILDERS[metric](P, N)
        for value in distribution:
            assert null.tail_ge_score(float(value)) == pytest.approx(float(_tail(distribution, value)), rel=1e-12)
            assert null.tail_ge_score(float(value) + 1e-12) == null.tail_ge_score(float(value))  # snapped
        assert null.tail_ge_score(float(max(distribution)) + 1e-6) == 0.0
        for C in CS:
            for alpha in ALPHAS:
                expected = float(_brute_critical(distribution, C, alpha))
                assert null.critical_value(float(upper_tail_probability(C, alpha))) == expected, (P, N, C, alpha)


# --- against the exhaustive bisection over every candidate -----------------------------------------

SPREAD = [(20, 20), (50, 300), (300, 50), (200, 200), (3, 3000), (20, 20000), (1000, 5), (2, 2), (1, 500),
          (500, 1), (97, 1003)]


@pytest.mark.parametrize("metric", BUILDERS)
@pytest.mark.parametrize("P,N", SPREAD)
def test_search_equals_exhaustive_bisection(metric, P, N):
    """Same m* as bisecting all P (N + 1) candidates with the index interface (the old routine)."""
    for C, alpha in [(1, 0.5), (10, 0.01), (1000, 0.05), (100, 0.2)]:
        tail = float(upper_tail_probability(C, alpha))
        exhaustive = BUILDERS[metric](P, N)
        assert BUILDERS[metric](P, N).critical_value(tail) == exhaustive.values[critical_index(exhaustive, tail)]


def test_search_takes_few_programmes_where_atoms_dominate():
    """F1 at P << N: the critical value is an atom 2t/(P + k); the atom jump finds it in a few runs."""
    null = best_f1_null(20, 20000)
    null.critical_value(float(upper_tail_probability(1000, 0.05)))
    assert null.programmes <= 8


def test_a_probe_near_the_target_does_not_send_the_search_to_the_middle(monkeypatch):
    """Best F1 at (1000, 100000), C = 1000: a probe whose tail lands within 2% of the target cuts the bracket
    little only because the crossing lies near its end; the search keeps to its corrected model there (10
    programmes), where running the middle candidate after every small cut took 14.  The same critical value."""
    from tablegen.compute.exact import lattice_search

    tail = float(upper_tail_probability(1000, 0.05))
    null = best_f1_null(1000, 100_000)
    value = null.critical_value(tail)
    monkeypatch.setattr(lattice_search, "NEAR_LOG", -1.0)  # never near: every small cut a stall
    plain = best_f1_null(1000, 100_000)
    assert plain.critical_value(tail) == value and null.programmes <= 10 < plain.programmes


# --- tail probabilities -----------------------------------------------------------------------------

@pytest.mark.parametrize("metric", BUILDERS)
@pytest.mark.parametrize("P,N", [(300, 300), (40, 3000), (1500, 70)])
def test_trimmed_tails_equal_untrimmed_and_row_programme(metric, P, N):
    family = FAMILIES[metric](P, N)
    for x in (0.52, 0.6, 0.7, 0.8, 0.95) if metric == "best_balanced_accuracy" else (0.05, 0.2, 0.5, 0.7, 0.9):
        key = family.ceil_key(x)
        if key is None:
            continue
        exact, _, _, _ = family.sweep(key, 0.0)
        assert tail_at_key(family, key) == pytest.approx(exact, rel=10 * TRIM_RTOL, abs=0.0)
        a, b, c = family.half_plane(key)
        assert exact == pytest.approx(row_programme(P, N, a, b, c), rel=1e-12, abs=1e-300)


def _consistent(metric, P, N, C, alpha):
    """p-value of m* > alpha >= p-value of the next candidate (the critical value's defining step)."""
    family, tail = FAMILIES[metric](P, N), float(upper_tail_probability(C, alpha))
    key, _ = critical_key(family, tail * (1 + 1e-12))
    above = family.successor(key)
    assert tail_at_key(family, key) > tail * (1 - 1e-12)
    assert above is None or tail_at_key(family, above) <= tail * (1 + 1e-12)


@pytest.mark.parametrize("metric", BUILDERS)
def test_critical_value_and_tail_are_consistent_at_random_cells(metric):
    rng = np.random.default_rng(2026)
    for _ in range(6):
        P, N = (int(x) for x in np.exp(rng.uniform(0, np.log(400), 2)).round())
        _consistent(metric, P, N, int(rng.choice(CS)), float(rng.choice(ALPHAS)))


@pytest.mark.slow
@pytest.mark.parametrize("metric", BUILDERS)
def test_critical_value_and_tail_are_consistent_at_large_random_cells(metric):
    rng = np.random.default_rng(14)
    for _ in range(6):
        P, N = (int(x) for x in np.exp(rng.uniform(np.log(50), np.log(10_000), 2)).round())
        _consistent(metric, P, N, int(rng.choice(CS)), float(rng.choice(ALPHAS)))
    _consistent(metric, 10_000, 10_000, 10, 0.01)


@pytest.mark.slow
def test_bundled_table_exact_values_are_reproduced():
    """Every stored exact critical value of the lattice metrics (computed by the old routine)."""
    from tablegen.lookup.table import open_table  # noqa: PLC0415 - a lookup-layer helper, only for this check

    ds = open_table().ds
    for metric, build in BUILDERS.items():
        stored = ds.exact_critical_value.sel(metric=metric).values  # (alpha, C, P, N)
        for i, P in enumerate(int(p) for p in ds.P.values):
            for j, N in enumerate(int(n) for n in ds.N.values):
                null = build(P, N)
                for a, alpha in enumerate(ds.alpha.values):
                    for c, C in enumerate(ds.C.values):
                        value = null.critical_value(float(upper_tail_probability(int(C), float(alpha))))
                        assert value == stored[a, c, i, j], (metric, P, N, C, alpha)


def test_cost_estimate_grows_with_the_cell():
    small, large = lattice_cost(100, 100), lattice_cost(10_000, 10_000)
    assert 0 < small[0] < large[0] and 0 < small[1] < large[1]
    assert large[0] < 5 and large[1] < 1e8  # a critical value at P N = 1e8: about a second, a few MB


def test_the_union_bound_is_above_every_exact_tail_and_spares_the_programme_beyond_every_double(monkeypatch):
    """Pr(X >= key) <= sum over diagonals of Hoeffding's bound (lattice_search.union_log_bound), checked against the
    programme on every 50th candidate of small cells; a key whose bound is below e^-746 is 0.0 without a programme
    (at (3000, 7000) the programme on such a key runs in subnormal arithmetic, seconds)."""
    from tablegen.compute.exact import lattice_search
    from tablegen.compute.exact.lattice import BalancedAccuracyKeys, BestF1Keys

    for P, N in ((5, 7), (20, 30), (60, 40)):
        for family in (BalancedAccuracyKeys(P, N), BestF1Keys(P, N)):
            listed = family.all_keys()
            for i in range(0, len(listed.values), 50):
                tail = lattice_search.tail_at_key(family, listed.key(i))
                assert tail == 0.0 or math.log(tail) <= lattice_search.union_log_bound(family, listed.key(i))
    family = BestF1Keys(3000, 7000)
    key = family.ceil_key(0.7)
    assert lattice_search.union_log_bound(family, key) < lattice_search.LOG_BELOW_DOUBLES
    monkeypatch.setattr(family, "sweep", lambda *args: pytest.fail("a programme ran"))
    assert lattice_search.tail_at_key(family, key) == 0.0


@pytest.mark.parametrize("builder", ["best_f1_null", "best_balanced_accuracy_null"])
def test_a_tail_asked_again_of_one_null_runs_no_programme_and_gives_the_same_value(monkeypatch, builder):
    """One null per question: the verdict's level is asked again by the selection test (evaluate at 10^4 items asked
    best_f1's and best_balanced_accuracy's at C - K = 90 eight times each); the second answer is the first, with no
    programme, and both are a fresh null's."""
    from tablegen.compute.exact import lattice

    tails = [float(upper_tail_probability(C, alpha)) for C, alpha in ((100, 0.05), (90, 0.05), (1, 0.01))]
    null = getattr(lattice, builder)(300, 700)
    first = [null.critical_value(t) for t in tails]
    programmes = null.programmes
    assert programmes > 0
    monkeypatch.setattr(null.family, "sweep", lambda *args: pytest.fail("a programme ran"))
    assert [null.critical_value(t) for t in tails] == first and null.programmes == programmes
    monkeypatch.undo()
    assert first == [getattr(lattice, builder)(300, 700).critical_value(t) for t in tails]


@pytest.mark.parametrize("builder,P,N", [("best_f1_null", 300, 700), ("best_balanced_accuracy_null", 300, 700),
                                         ("best_f1_null", 40, 2000), ("best_balanced_accuracy_null", 25, 25),
                                         ("best_f1_null", 12, 9), ("best_mcc_null", 30, 70)])
def test_a_search_over_tails_on_one_null_finds_each_fresh_nulls_critical_value_with_fewer_programmes(builder, P, N):
    """What earlier searches' programmes showed starts later brackets (a bisection over tails, as the selection test
    runs for the competitors not given, and random tails): every critical value is a fresh null's, with fewer
    programmes in all."""
    from tablegen.compute.exact import best_mcc, lattice

    lattice = best_mcc if builder == "best_mcc_null" else lattice
    rng = np.random.default_rng(P * N)
    low, high = 2e-4, 6e-4
    tails = []
    for _ in range(12):  # a bisection toward an arbitrary level
        middle = 0.5 * (low + high)
        tails.append(middle)
        low, high = (middle, high) if rng.random() < 0.5 else (low, middle)
    tails += list(10.0 ** rng.uniform(-8, -0.5, 10)) + [float(upper_tail_probability(1, 0.01))]
    shared = getattr(lattice, builder)(P, N)
    fresh_programmes, fresh_values = 0, []
    for tail in tails:
        null = getattr(lattice, builder)(P, N)
        fresh_values.append(null.critical_value(tail))
        fresh_programmes += null.programmes
    assert [shared.critical_value(tail) for tail in tails] == fresh_values
    assert shared.programmes < fresh_programmes


@pytest.mark.parametrize("builder", ["best_f1_null", "best_balanced_accuracy_null", "best_mcc_null"])
def test_a_tail_bracket_within_a_width_holds_the_exact_tail(builder, monkeypatch):
    """``tail_ge_bracket(score, within)``: a trimmed programme's [hit, hit + dropped] where it is that narrow (one
    programme where the exact tail reruns), holding the exact tail; without ``within`` the exact tail twice."""
    from tablegen.compute.exact import best_mcc, lattice

    module = best_mcc if builder == "best_mcc_null" else lattice
    null = getattr(module, builder)(60, 140)
    calls = []
    family_type = type(null.family)
    original = family_type.sweep
    monkeypatch.setattr(family_type, "sweep",
                        lambda self, key, floor: (calls.append(floor), original(self, key, floor))[1])
    programmes = []
    for score in (0.55, 0.62, 0.7, 0.8, 0.95):
        exact = null.tail_ge_score(score)
        assert null.tail_ge_bracket(score) == (exact, exact)
        calls.clear()
        low, high = null.tail_ge_bracket(score, within=1e-15)
        assert low <= exact * (1 + 1e-12) and exact <= high * (1 + 1e-12) + 1e-300 and high - low <= 1e-15
        assert len(calls) <= 1 or high == low  # one programme, or the exact tail where its bracket was too wide
        programmes.append(len(calls))
    assert 1 in programmes  # the trimmed bracket was taken somewhere


@pytest.mark.parametrize("builder", ["best_f1_null", "best_balanced_accuracy_null"])
def test_the_tail_at_a_searched_key_comes_from_the_search_without_a_programme(builder, monkeypatch):
    """After a critical-value search, the tail at a key it ran a programme at (the critical value itself where the
    search ran one there, as at 10^6 items) is bracketed by that programme (a decision's trimmed programme: about
    1e-9 wide), so a caller content with a relative width (the effective C) gets it without a programme, around the
    untrimmed programme's tail; an exact tail (1e-15) and a key no search ran each run one."""
    from tablegen.compute.exact import lattice, null_tail_ge_bracket

    null = getattr(lattice, builder)(300, 700)
    null.critical_value(0.0005)
    key = next(known for known, low, high in null._known if high > low)  # a programme the search ran
    critical = null.family.value(key)
    assert null.snap(critical) == key
    exact = tail_at_key(type(null.family)(300, 700), key)
    ran = []
    original = type(null.family).sweep
    monkeypatch.setattr(type(null.family), "sweep", lambda self, k, floor: (ran.append(k), original(self, k, floor))[1])
    low, high = null_tail_ge_bracket(null, critical, rtol=1e-6)
    assert ran == [] and low <= exact * (1 + 1e-15) and exact <= high * (1 + 1e-15)
    assert high - low <= 1e-6 * low and high - low > 1e-15 * low  # a decision's bracket, not a tail's
    assert null.tail_ge_score(critical) == pytest.approx(exact, rel=2e-15, abs=0.0) and len(ran) >= 1
    ran.clear()
    null.tail_ge_bracket(critical + 0.01)  # a key no search ran: a programme
    assert len(ran) >= 1
