"""Exact AUC by the tilted Fourier inversion against independent references.

- exact integer counts of U (Python integers, the Mann–Whitney recursion on counts) for P, N <= 60;
- brute-force enumeration of every ranking for P + N <= 12;
- the floating-point recursion (its own tests hold it to exact rationals) on cells up to (1000, 100);
- the bundled table's exact critical values, which the recursion computed, over the appendix grid.

the tolerance is :data:`tablegen.compute.exact.auc_fft.RELATIVE_ERROR_BOUND` (1e-12).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from tablegen.compute.exact.auc import auc_null, auc_null_from_pmf, auc_pmf_sweep
from tablegen.compute.exact.auc_fft import RELATIVE_ERROR_BOUND, TiltedAuc, TiltedAucNull, snapped_u
from tablegen.compute.exact.auc_fft_band import _pgf
from tablegen.compute.exact.nulls import critical_index
from tablegen.compute.metric_nulls import exact_critical_value, exact_p_value, null_distribution
from tablegen.compute.stats import upper_tail_probability

TAILS = (0.5, 0.2, 1e-2, 1e-3, 1e-5, 1e-7, 1e-9, 1e-12)


def integer_counts(max_cells: int) -> dict[tuple[int, int], list[int]]:
    """{(P, N): [c_0, ..., c_PN]} for 1 <= P <= N <= max_cells: c_{m,n}(u) = c_{m-1,n}(u-n) + c_{m,n-1}(u)."""
    counts = {(0, n): [1] for n in range(max_cells + 1)}
    counts.update({(m, 0): [1] for m in range(max_cells + 1)})
    for m in range(1, max_cells + 1):
        for n in range(1, max_cells + 1):
            shifted, left = counts[(m - 1, n)], counts[(m, n - 1)]
            row = [0] * (m * n + 1)
            for u, c in enumerate(shifted):
                row[u + n] += c
            for u, c in enumerate(left):
                row[u] += c
            counts[(m, n)] = row
    return {cell: row for cell, row in counts.items() if 1 <= cell[0] <= cell[1]}


@pytest.fixture(scope="module")
def counts_to_60():
    return integer_counts(60)


def exact_upper_tails(row: list[int]) -> list[Fraction]:
    total, tails, running = sum(row), [], 0
    for c in reversed(row):
        running += c
        tails.append(Fraction(running, total))
    return tails[::-1]


def probe_points(cell: TiltedAuc, tails: list[Fraction]) -> set[int]:
    """u at every tail level of TAILS (and its neighbours), plus both ends and the centre."""
    points = {0, 1, cell.PN // 2, cell.PN - 1, cell.PN}
    for level in TAILS:
        u = next((u for u in range(cell.PN + 1) if tails[u] <= level), cell.PN)
        points |= {max(u - 1, 0), u, min(u + 1, cell.PN)}
    return points


def assert_tails_match_integers(P: int, N: int, row: list[int]) -> None:
    tails = exact_upper_tails(row)
    cell = TiltedAuc(P, N)
    for u in sorted(probe_points(cell, tails)):
        expected = tails[u]
        assert cell.upper_tail(u) == pytest.approx(float(expected), rel=RELATIVE_ERROR_BOUND, abs=0), (P, N, u)


@pytest.mark.parametrize("P,N", [(1, 1), (1, 60), (2, 3), (7, 60), (13, 17), (30, 50), (60, 60)])
def test_tails_equal_exact_integer_counts(P, N, counts_to_60):
    assert_tails_match_integers(P, N, counts_to_60[(min(P, N), max(P, N))])


@pytest.mark.slow
def test_tails_equal_exact_integer_counts_for_every_cell_to_60(counts_to_60):
    for (P, N), row in counts_to_60.items():
        cell, tails = TiltedAuc(P, N), exact_upper_tails(row)
        for level in (1e-3, 1e-9):  # the tails a critical value lives in, every cell
            u = next((u for u in range(cell.PN + 1) if tails[u] <= level), cell.PN)
            assert cell.upper_tail(u) == pytest.approx(float(tails[u]), rel=RELATIVE_ERROR_BOUND), (P, N, level)
        assert cell.upper_tail(P * N) == pytest.approx(math.exp(-cell.log_total), rel=RELATIVE_ERROR_BOUND)


def test_critical_values_and_tails_equal_brute_force(brute_force_distributions):
    for (P, N), per_metric in brute_force_distributions.items():
        distribution, null = per_metric["auc"], TiltedAucNull(P, N)
        total = sum(distribution.values())
        for value in distribution:
            expected = Fraction(sum(c for v, c in distribution.items() if v >= value), total)
            assert null.tail_ge_score(float(value)) == pytest.approx(float(expected), rel=RELATIVE_ERROR_BOUND)
        tabulated = null_distribution("auc", P, N)  # the recursion, itself checked against brute force
        for C in (1, 2, 10, 1000):
            for alpha in (0.01, 0.05, 0.5):
                assert exact_critical_value("auc", P, N, C, alpha, null=null) == \
                    exact_critical_value("auc", P, N, C, alpha, null=tabulated), (P, N, C, alpha)


def recursion_null(P: int, N: int):
    ((_, pmf),) = auc_pmf_sweep([(P, N)])
    return auc_null_from_pmf(P, N, pmf)


def assert_agrees_with_recursion(P: int, N: int) -> None:
    reference, cell = recursion_null(P, N), TiltedAuc(P, N)
    for t in TAILS:
        u = critical_index(reference, t)
        assert cell.critical_u(t) == u, (P, N, t)
        for v in range(max(u - 3, 0), min(u + 4, P * N + 1)):
            assert cell.upper_tail(v) == pytest.approx(reference.tail_ge[v], rel=RELATIVE_ERROR_BOUND), (P, N, t, v)


@pytest.mark.parametrize("P,N", [(100, 300), (20, 1000), (97, 61)])
def test_tails_and_critical_values_equal_the_recursion(P, N):
    assert_agrees_with_recursion(P, N)


@pytest.mark.slow
@pytest.mark.parametrize("P,N", [(300, 300), (1000, 100), (40, 1000), (500, 150), (3, 1000)])
def test_tails_and_critical_values_equal_the_recursion_on_larger_cells(P, N):
    assert_agrees_with_recursion(P, N)


@pytest.mark.slow
def test_critical_values_equal_the_bundled_tables_recursion_values_on_the_appendix_grid():
    from tablegen.compute.exact.auc import EXACT_AUC_BUDGET, auc_cost
    from tablegen.lookup.table import open_table

    ds = open_table().ds
    stored = ds.exact_critical_value.sel(metric="auc").load()
    compared = 0
    for P in ds.P.values:
        for N in ds.N.values:
            if auc_cost(int(P), int(N))[0] > EXACT_AUC_BUDGET:
                continue  # the table's value there came from the inversion itself
            null = TiltedAucNull(int(P), int(N))
            for alpha in ds.alpha.values:
                for C in ds.C.values:
                    expected = float(stored.sel(P=P, N=N, alpha=alpha, C=C))
                    assert null.critical_value(float(upper_tail_probability(int(C), float(alpha)))) == expected
                    compared += 1
    assert compared >= 318 * 6


def test_tails_near_the_centre_and_far_out():
    cell, reference = TiltedAuc(40, 50), recursion_null(40, 50)
    for u in (999, 1000, 1001, 1200, 1990, 2000):  # centre (P N / 2 = 1000), far tail, the maximum
        assert cell.upper_tail(u) == pytest.approx(reference.tail_ge[u], rel=RELATIVE_ERROR_BOUND), u
    assert cell.upper_tail(0) == 1.0 and cell.upper_tail(2001) == 0.0 and cell.lower_tail(-1) == 0.0


@pytest.mark.parametrize("C,alpha", [(1, 0.5), (1, 0.7), (1, 0.99), (3, 0.9)])
def test_critical_values_for_large_tail_probabilities(C, alpha):
    reference, null = recursion_null(30, 40), TiltedAucNull(30, 40)
    t = float(upper_tail_probability(C, alpha))
    assert null.critical_value(t) == reference.values[critical_index(reference, t)]


def test_scores_snap_like_the_tabulated_support():
    PN = 300 * 100
    for u in (0, 1, 17_000, PN - 1, PN):
        assert snapped_u(u / PN, PN) == u
        assert snapped_u(u / PN - 5e-10, PN) == u            # within 1e-9: the value itself
        assert snapped_u(u / PN + 2e-9, PN) == min(u + 1, PN + 1)  # above it: the next value
    huge = 10**6 * 10**6                                       # at P N = 1e12 the snap shrinks to a quarter step
    assert snapped_u(0.7, huge) == 7 * 10**11 and snapped_u(0.7 + 1e-12, huge) == 7 * 10**11 + 1


def test_p_value_and_critical_value_are_consistent_at_a_large_cell():
    P, N, C, alpha = 3000, 5000, 100, 0.01
    critical = exact_critical_value("auc", P, N, C, alpha)
    assert exact_p_value("auc", critical, P, N, C) > alpha  # the critical value itself is not significant
    assert exact_p_value("auc", critical + 1 / (P * N), P, N, C) <= alpha  # one step above it is


def test_auc_null_takes_the_recursion_where_it_is_faster():
    assert type(auc_null(30, 30)).__name__ == "TabulatedNull"
    assert isinstance(auc_null(2000, 3000), TiltedAucNull)


@pytest.mark.slow
def test_p_value_critical_value_consistency_at_random_cells_up_to_ten_thousand():
    rng = np.random.default_rng(14)
    for _ in range(6):
        P, N = (int(x) for x in rng.integers(1, 10_000, size=2))
        C, alpha = int(rng.choice([1, 10, 100, 1000])), float(rng.choice([0.01, 0.05]))
        for metric in ("auc", "best_accuracy", "tp_at_10", "precision_at_10"):
            critical = exact_critical_value(metric, P, N, C, alpha)
            assert exact_p_value(metric, critical, P, N, C) > alpha, (metric, P, N, C, alpha)
            step = 1 / (P * N) if metric == "auc" else None
            if step is not None:
                assert exact_p_value(metric, critical + step, P, N, C) <= alpha, (metric, P, N, C, alpha)


def test_bundled_table_has_exact_auc_everywhere_and_no_local_path():
    import json
    import re

    from tablegen.lookup.table import open_table

    ds = open_table().ds
    exact = ds.exact_critical_value.load()
    for metric in ds.metric.values:
        missing = int(np.isnan(exact.sel(metric=metric)).sum())
        assert missing == (exact.sel(metric=metric).size if metric == "average_precision" else 0), metric
    for P, N in [(1000, 1000), (700, 900)]:  # filled by the inversion (over the recursion's budget)
        stored = float(exact.sel(metric="auc", P=P, N=N, C=1000, alpha=0.01))
        assert stored == TiltedAucNull(P, N).critical_value(float(upper_tail_probability(1000, 0.01)))
    assert json.loads(ds.attrs["config"])["store_url"] == "paper.zarr"
    for name, value in ds.attrs.items():
        assert not re.search(r'(^|[\s"\'=])/(work|home|tmp|root|Users)\b', str(value)), name


@pytest.mark.parametrize("P,N", [(2, 100_000), (3, 30_000), (10, 100_000), (10, 1_000_000), (29, 5000), (30, 10_000),
                                 (1000, 1000)])
def test_the_band_stays_within_what_the_cost_estimate_assumes(P, N):
    """The cost estimate (time and memory) bounds the band the inversion really builds."""
    from tablegen.compute.exact.auc import tilted_auc_cost
    from tablegen.compute.exact.auc_fft import BYTES_PER_FREQUENCY

    null = TiltedAucNull(P, N)
    null.critical_value(float(upper_tail_probability(1000, 0.01)))
    band = max(tilt.band.size for tilt in null.cell._tilts.values())
    assert BYTES_PER_FREQUENCY * band <= tilted_auc_cost(P, N)[1]


def test_one_positive_is_the_uniform_law_at_any_size():
    for P, N in [(1, 7), (9, 1), (1, 10**9)]:
        cell, L = TiltedAuc(P, N), max(P, N)
        assert cell.upper_tail(L) == 1 / (L + 1) and cell.upper_tail(0) == 1.0
        for t in (0.5, 1e-3, 1e-8):
            u = cell.critical_u(t)
            assert cell.upper_tail(u) > t * (1 + 1e-12) >= (cell.upper_tail(u + 1) if u < L else 0.0)


def test_a_band_beyond_the_memory_limit_is_refused(monkeypatch):
    from tablegen.errors import ResourceLimitError

    monkeypatch.setenv("TABLEGEN_MEMORY_LIMIT", "1MB")
    with pytest.raises(ResourceLimitError, match=r"exact auc at min\(P, N\) = 10, max\(P, N\) = 100000 \(a band of"
                       ) as refused:
        TiltedAucNull(10, 100_000).critical_value(1e-5)
    # the way out names the argument as each caller spells it
    assert str(refused.value).endswith("use method='simulate' or method='auto'")
    assert refused.value.option_message().endswith("use --method simulate or --method auto")


# -- one tilted law for nearby points; tails below every double without a transform -----------------------------
def _own_tilt_tail(cell: TiltedAuc, v: int) -> float:
    """Pr(U <= v) by the tilt whose mean is v itself (the route before tilts were shared)."""
    return cell.tilted(cell._floored(cell.solve_mu(min(max(v, 0.5), cell.PN / 2.0)))).lower_tail(v)


@pytest.mark.parametrize("P,N", [(300, 700), pytest.param(1000, 1000, marks=pytest.mark.slow),
                                 pytest.param(2994, 7006, marks=pytest.mark.slow)])
def test_points_near_a_grid_tilt_share_it_and_keep_their_accuracy(P, N):
    cell = TiltedAuc(P, N)
    sd = math.sqrt(cell.var0)
    points = [int(cell.PN / 2 - z * sd) for z in np.linspace(0.3, 12.0, 40)]
    shared = [cell.lower_tail(v) for v in points]
    built = len(cell._tilts)
    assert built <= len(points) / 3  # 40 points 0.3 sd apart: a tilted law per 1.5 sd of the grid, about
    assert all(cell.tilt_at(v) == TiltedAuc(P, N).tilt_at(v) for v in points)  # whatever was asked before
    for v, tail in zip(points, shared):
        assert tail == pytest.approx(_own_tilt_tail(cell, v), rel=RELATIVE_ERROR_BOUND)


@pytest.mark.parametrize("P,N", [(1500, 3500), pytest.param(2994, 7006, marks=pytest.mark.slow)])  # Pr(U = 0) < e^-3000
def test_a_tail_below_every_double_is_zero_without_a_transform(P, N):
    cell = TiltedAuc(P, N)
    v = next(v for v in range(0, cell.PN // 2, max(cell.PN // 2000, 1))
             if cell.lam(cell.solve_mu(max(v, 0.5))) + cell.solve_mu(max(v, 0.5)) * v > -700)
    far = [0, 1, 2, v // 4, v // 2]  # v: about e^-700, a normal double
    assert [cell.lower_tail(u) for u in far] == [0.0] * len(far)
    assert cell._tilts == {}  # no tilted law was built
    assert [_own_tilt_tail(cell, u) for u in far[1:]] == [0.0] * (len(far) - 1)  # the inversion's own answer
    assert cell.lower_tail(v) > 0.0
    assert TiltedAucNull(P, N).tail_ge_score(1.0) == 0.0


@pytest.mark.parametrize("cells", [[(120, 380), (600, 1400)], pytest.param([(1500, 3500)], marks=pytest.mark.slow)])
def test_critical_values_and_p_values_are_those_of_the_tilt_at_each_point(monkeypatch, cells):
    """Before/after: every tail within RELATIVE_ERROR_BOUND and every critical value equal to the route that tilts
    at each point itself (the one before the grid)."""
    levels = [float(upper_tail_probability(C, alpha)) for C in (1, 10, 100, 1000) for alpha in (0.05, 0.01, 1e-4)]
    shared = {(P, N): ([TiltedAucNull(P, N).critical_value(t) for t in levels],
                       [TiltedAucNull(P, N).tail_ge_score(x) for x in np.linspace(0.5, 0.75, 26)]) for P, N in cells}
    monkeypatch.setattr(TiltedAuc, "tilt_at", lambda self, v: self._floored(self.solve_mu(min(max(v, 0.5),
                                                                                           self.PN / 2.0))))
    monkeypatch.setattr(TiltedAuc, "_negligible", lambda self, a, v: False)
    for (P, N), (critical, tails) in shared.items():
        assert critical == [TiltedAucNull(P, N).critical_value(t) for t in levels]
        own = [TiltedAucNull(P, N).tail_ge_score(x) for x in np.linspace(0.5, 0.75, 26)]
        assert tails == pytest.approx(own, rel=RELATIVE_ERROR_BOUND, abs=0.0)


def decimal_log_chernoff(cell: TiltedAuc, a: float, v: int) -> Decimal:
    """Lambda(a) + a v to 40 digits (stdlib decimal, the float a taken exactly), factor by factor as
    Lambda(a) = sum_i log((1 - e^{-a (L + i)}) / (L + i)) - log((1 - e^{-a i}) / i)."""
    with localcontext() as context:
        context.prec = 40
        tilt, one, total = Decimal(a), Decimal(1), Decimal(0)
        for i in range(1, cell.small + 1):
            j = cell.large + i
            total += ((one - (-tilt * j).exp()) / j).ln() - ((one - (-tilt * i).exp()) / i).ln()
        return total + tilt * v


@pytest.mark.parametrize("P,N,z", [(5000, 5000, 30.0), pytest.param(50000, 50000, 30.0, marks=pytest.mark.slow),
                                   (20, 2000, 3.0), (60, 60, 8.0), (60, 60, 9.4)])  # (5e4, 5e4): 4 s, full suite
def test_the_untilting_exponent_keeps_its_digits_where_lambda_and_a_v_cancel(P, N, z):
    """e^{Lambda(a) + a v} multiplies every tail: Lambda(a) (-7800 at (5e4, 5e4), z = 30) and a v cancel to
    about -z^2 / 2, so formed apart the exponent carried |Lambda(a)| 2^-53 absolutely (measured 14 ulp of
    -451 there, 5 at (5000, 5000); 3.8e-12 of the tail at (5e5, 5e5), z = 20, past the bound).  Built from
    small terms it is within 4 ulp of its own size, against 40-digit decimal arithmetic; (60, 60) at
    v = 9 is a large tilt (a = 0.40, a (L + i) > 8), where psi(x) - x / 2 are the terms."""
    cell = TiltedAuc(P, N)
    v = int(cell.PN / 2 - z * math.sqrt(cell.var0))
    law = cell.tilted_at(v)
    exact = decimal_log_chernoff(cell, law.a, v)
    assert abs(float(Decimal(law.log_untilt(v)) - exact)) <= 4 * 2.0**-53 * abs(float(exact)), (P, N, v)


@pytest.mark.parametrize("k", [1, 3, 10])
def test_the_characteristic_function_at_a_million_items_is_summed_to_an_ulp(k):
    """F_k = prod_i A_{L+i}(k) / A_i(k) at (5e5, 5e5), z = 20: the phase of F_3 is 660 rad from 10^6 terms adding
    to 3.8e4 in modulus; a BLAS dot product of the terms with +-1 left it 2e-12 to 3e-11 off (and log |F_10|
    1.6e-12), errors the tail inherits relatively.  Summed pair by pair both are within an ulp or so of the same
    terms, arg(1 - q e^{iy}) = atan2(-q sin y, (1 - q) + 2 q sin^2(y/2)) with q = e^{-a j}, summed exactly
    (math.fsum).  M = 3^20 is the window's length there (any M gives the same F_k = G(s w^k) / G(s))."""
    cell = TiltedAuc(500000, 500000)
    a, M = cell.solve_mu(int(cell.PN / 2 - 20 * math.sqrt(cell.var0))), 3**20
    F = _pgf(cell, a, M, np.array([k]))[0]
    i = np.arange(1, cell.small + 1, dtype=np.int64)
    j, sign = np.concatenate([i + cell.large, i]), np.repeat([1.0, -1.0], cell.small)
    y, q = 2 * np.pi * (((j * k) % M) / M), np.exp(-a * j)
    one_minus = -np.expm1(-a * j) + 2 * q * np.sin(0.5 * y) ** 2
    phase = math.fsum(sign * np.arctan2(-q * np.sin(y), one_minus))
    log_modulus = math.fsum(sign * 0.5 * np.log1p(4 * q * np.sin(0.5 * y) ** 2 / np.expm1(-a * j) ** 2))  # |1-qe^iy|^2
    assert abs(math.remainder(np.angle(F) - phase, 2 * math.pi)) <= 1e-12
    assert abs(math.log(abs(F)) - log_modulus) <= 2e-13


# -- the band check: a bound on |F_k| decides most check points -------------------------------------------------
def _law_parameters(P: int, N: int, z: float):
    from tablegen.compute.exact.auc_fft_band import _window

    cell = TiltedAuc(P, N)
    a = cell._floored(cell.solve_mu(max(cell.PN / 2 - z * math.sqrt(cell.var0), 0.5)))
    return cell, a, _window(cell, a)[1], math.sqrt(cell.var(a))


@pytest.mark.parametrize("P,N,z", [(2, 3, 0.5), (3, 1000, 2.0), (13, 17, 1.0), (30, 70, 3.0), (120, 380, 8.0),
                                   (300, 700, 20.0), (20, 2000, 3.0)])
def test_a_band_check_point_the_bound_decides_is_below_half_the_tolerance(P, N, z):
    """Brute force: |F_k| itself at every k of a law's spectrum (or 4,000 spread ones and every secondary peak),
    against tolerances from above the largest |F_k| down to the band's own: every point the bound leaves out has
    |F_k| < tolerance / 2, and the bound decides some points and not others (the test could fail)."""
    from tablegen.compute.exact.auc_fft_band import _secondary_peaks, _undecided

    cell, a, M, _ = _law_parameters(P, N, z)
    ks = np.arange(1, M // 2 + 1) if M <= 8000 else np.union1d(np.linspace(1, M // 2, 4000).astype(np.int64),
                                                                 _secondary_peaks(M))
    modulus = _pgf(cell, a, M, ks, magnitude_only=True)
    decided_some = undecided_some = False
    for tolerance in np.geomspace(4 * modulus.max(), max(modulus.min(), 1e-300), 12):
        left = _undecided(cell, a, M, ks, tolerance)
        decided = ~np.isin(ks, left)
        assert np.all(modulus[decided] < tolerance / 2), (P, N, z, tolerance)
        decided_some, undecided_some = decided_some or decided.any(), undecided_some or (~decided).any()
    assert decided_some and undecided_some


@pytest.mark.parametrize("P,N,z", [(3, 4, 0.0), (2, 100, 1.0), (7, 60, 3.0), (60, 60, 8.0), (300, 700, 3.0),
                                   (300, 700, 20.0), (1000, 1000, 10.0), (29, 5000, 2.0)])
def test_the_band_is_the_one_the_exact_check_gives_bit_for_bit(monkeypatch, P, N, z):
    """The band checked by the bound first is the band checked by |F_k| at every check point (the route before)."""
    import tablegen.compute.exact.auc_fft_band as band_module

    cell, a, M, sd = _law_parameters(P, N, z)
    fast = band_module._band(cell, a, M, sd)
    monkeypatch.setattr(band_module, "_all_below", lambda cell, a, M, checks, tolerance: bool(
        np.max(_pgf(cell, a, M, checks, magnitude_only=True)) < tolerance))
    exact = band_module._band(cell, a, M, sd)
    assert fast.size == exact.size and np.array_equal(fast, exact)


@pytest.mark.parametrize("P,N", [(2, 3), (3, 1000), (13, 17), (60, 60), (300, 700), (29, 5000), (2994, 7006)])
def test_the_window_from_coarser_chernoff_tilts_is_the_one_from_exact_tilts(monkeypatch, P, N):
    """Solving mu(b) = x to 1e-7 instead of 1e-13 for the window's Chernoff bounds leaves every window as it was
    (176 (cell, tilt) cases measured, these checked), so the laws are those of before bit for bit."""
    import tablegen.compute.exact.auc_fft_band as band_module

    cell = TiltedAuc(P, N)
    for z in (0.0, 1.0, 3.0, 8.0, 20.0, 40.0):
        a = cell._floored(cell.solve_mu(max(cell.PN / 2 - z * math.sqrt(cell.var0), 0.5)))
        coarse = band_module._window(cell, a)
        monkeypatch.setattr(band_module, "_WINDOW_RTOL", 1e-13)
        assert band_module._window(cell, a) == coarse, (P, N, z)
        monkeypatch.undo()


def test_a_law_at_ten_thousand_items_gets_few_check_points_by_the_full_product(monkeypatch):
    """The band check of a law at (2994, 7006) (bench_evaluate's 10^4 items): the bound decides the ~740 check points,
    so |F_k| itself (a product over 2 min(P, N) factors) is evaluated at few of them (before the bound: all)."""
    import tablegen.compute.exact.auc_fft_band as band_module

    exact_points = []
    real = band_module._pgf

    def counted(cell, a, M, ks, magnitude_only=False):
        if magnitude_only:
            exact_points.append(len(ks))
        return real(cell, a, M, ks, magnitude_only)

    monkeypatch.setattr(band_module, "_pgf", counted)
    cell = TiltedAuc(2994, 7006)
    for z in (3.0, 10.0, 30.0):
        band_module.TiltedLaw.build(cell, cell.solve_mu(cell.PN / 2 - z * math.sqrt(cell.var0)))
    assert sum(exact_points) <= 0.05 * 3 * 700


def test_a_tail_asked_again_of_one_auc_null_is_not_searched_again(monkeypatch):
    """The critical U of a tail is searched once per null object (the selection test asks the verdict's level and
    its own again): the second answer is the first, without a search, and both are a fresh null's."""
    tails = [float(upper_tail_probability(C, 0.05)) for C in (100, 90, 1)]
    null = TiltedAucNull(300, 700)
    first = [null.critical_value(t) for t in tails]
    monkeypatch.setattr(null.cell, "critical_u", lambda t: pytest.fail("searched again"))
    assert [null.critical_value(t) for t in tails] == first
    monkeypatch.undo()
    assert first == [TiltedAucNull(300, 700).critical_value(t) for t in tails]
