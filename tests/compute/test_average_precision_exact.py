"""Average precision's exact null (enumeration) checked against exact rationals, and its use by runs and lookups.

The independent reference: every arrangement scored in exact integer arithmetic, AP = K / (L P) with
L = lcm(1 .. P + N) and K = sum_j j L / r_j, counted with a Counter (Python integers, no float).
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from progresstools import pace_factor

import tablegen
from tablegen.compare.selection.maxt import FOLD_TAIL_WIDTH
from tablegen.compute.cell import exact_critical_values_for_cells
from tablegen.compute.cost import cell_seconds
from tablegen.compute.exact import null_critical_bracket, null_critical_value, null_tail_ge, null_tail_ge_bracket
from tablegen.compute.exact.average_precision import (
    VALUE_RESOLUTION,
    BracketedAveragePrecisionNull,
    _tail_bracket,
    average_precision_cost,
    average_precision_null,
    bracket_cost,
    enumerable,
    grouped_support,
)
from tablegen.compute.metrics import get_metric, metric_entries
from tablegen.compute.stats import upper_tail_probability

AP = get_metric("average_precision")


def exact_law(P: int, N: int) -> tuple[list[Fraction], list[Fraction]]:
    """Ascending distinct values of AP and Pr(AP >= value), as exact fractions, over every arrangement."""
    n = P + N
    L = math.lcm(*range(1, n + 1))
    quotient = [L // r for r in range(1, n + 1)]
    counts = Counter(sum((j + 1) * quotient[r] for j, r in enumerate(ranks))
                     for ranks in itertools.combinations(range(n), P))
    keys = sorted(counts)
    total = math.comb(n, P)
    above = list(itertools.accumulate(counts[k] for k in reversed(keys)))[::-1]
    return [Fraction(k, L * P) for k in keys], [Fraction(a, total) for a in above]


def check_against_exact(P: int, N: int) -> None:
    values, tails = exact_law(P, N)
    gaps = [b - a for a, b in zip(values, values[1:])]
    assert not gaps or min(gaps) > VALUE_RESOLUTION  # each exact value is its own support point
    null = average_precision_null(P, N)
    assert len(null.values) == len(values), (P, N)
    bound = (2 * P + 1) * 2.0 ** -53  # the module's float bound on AP
    assert max(abs(Fraction(float(v)) - x) for v, x in zip(null.values, values)) <= bound, (P, N)
    assert null.tail_ge.tolist() == [float(t) for t in tails], (P, N)  # count / total: one rounding


def test_enumerated_null_equals_exact_rationals_for_every_cell_up_to_16_items():
    for n in range(2, 17):
        for P in range(1, n):
            check_against_exact(P, n - P)


def test_enumerated_null_at_34_items_within_the_float_bound():
    check_against_exact(4, 30)


def test_critical_values_and_tails_match_exact_rationals():
    P, N = 5, 9
    values, tails = exact_law(P, N)
    null = average_precision_null(P, N)
    for C, alpha in [(1, 0.05), (10, 0.01), (100, 0.001)]:
        t = Fraction(upper_tail_probability(C, alpha))
        # m* = smallest x with Pr(X > x) <= t: the value just below the first whose tail is <= t
        first = next((i for i, tail in enumerate(tails) if tail <= t), len(values))
        assert null_critical_value(null, float(t)) == pytest.approx(float(values[first - 1]), abs=1e-15)
    for i in (0, 7, len(values) // 2, len(values) - 1):
        score = float(values[i])
        assert null_tail_ge(null, score) == float(tails[i])
        assert null_tail_ge(null, score + 5e-10) == float(tails[i])  # within the snap tolerance
        assert null_tail_ge_bracket(null, score) == (float(tails[i]), float(tails[i]))


def test_grouping_merges_values_closer_than_the_resolution():
    null = grouped_support(np.array([0.2, 0.2 + 0.9 * VALUE_RESOLUTION, 0.2 + 2.5 * VALUE_RESOLUTION, 0.7]))
    assert null.values.tolist() == [0.2, 0.2 + 2.5 * VALUE_RESOLUTION, 0.7]
    assert null.tail_ge.tolist() == [1.0, 0.5, 0.25]


def test_budget_and_refusal():
    assert enumerable(3, 5) and enumerable(2, 1998) and not enumerable(5, 45) and not enumerable(20, 20)
    assert AP.exact_at(3, 5) and not AP.exact_at(20, 20)
    assert average_precision_cost(20, 20) == (math.inf, math.inf) and AP.exact_cost(20, 20) == bracket_cost(20, 20)
    with pytest.raises(tablegen.TablegenInputError, match="P, N"):
        average_precision_null(20, 20)
    bracketed = AP.exact_null(20, 20)  # lookups only: bounds, never a silent exact-looking number
    with pytest.raises(tablegen.TablegenInputError, match="null_critical_bracket"):
        null_critical_value(bracketed, 0.01)
    with pytest.raises(tablegen.TablegenInputError, match="null_tail_ge_bracket"):
        null_tail_ge(bracketed, 0.5)


def test_runs_store_exact_values_only_at_enumerable_cells_and_plans_stay_finite():
    values = exact_critical_values_for_cells([(3, 5), (20, 20)], metric_entries(["average_precision"]), [10], [0.01])
    null = average_precision_null(3, 5)
    assert values[3, 5][0, 0, 0] == null_critical_value(null, float(upper_tail_probability(10, 0.01)))
    assert np.isnan(values[20, 20][0, 0, 0])
    assert math.isfinite(cell_seconds(20, 20, 1000, metric_entries(["average_precision"]), True, 4))
    assert AP.cells_exact_seconds([(3, 5), (20, 20)], 1) == pytest.approx(AP.exact_cost(3, 5)[0])


def test_lookups_answer_exactly_and_at_once_at_small_cells():
    start = time.perf_counter()
    answer = tablegen.critical_value("average_precision", 3, 5, C=10)
    took = time.perf_counter() - start
    assert took < 2.0 * pace_factor(), took  # 0.46 s quiet in a fresh process (imports included)
    null = average_precision_null(3, 5)
    expected = null_critical_value(null, float(upper_tail_probability(10, 0.01)))
    assert answer.method == "exact" and answer.value == answer.ci_low == answer.ci_high == expected
    assert null_critical_bracket(null, float(upper_tail_probability(10, 0.01))) == (expected, expected)
    top = tablegen.p_value("average_precision", 3, 5, C=10, score=1.0)
    assert top.method == "exact" and top.value == pytest.approx(1 - (1 - 1 / 56) ** 10, rel=1e-14) and top.value > 0
    result = tablegen.significance_test("average_precision", 3, 5, C=10, score=1.0)
    assert result.method == "exact" and not result.significant


@pytest.mark.slow  # compiles the programme kernel: ~6 s from a cold numba cache
@pytest.mark.parametrize("P,N", [(3, 5), (4, 7), (6, 6), (2, 12)])
def test_bracket_holds_the_exact_law_at_every_support_point(P, N):
    """The bracket route forced where enumeration checks it (a coarse fine grid keeps it quick)."""
    exact = average_precision_null(P, N)
    bracket = BracketedAveragePrecisionNull(P, N, fine_grid=1000)
    for value, tail in zip(exact.values, exact.tail_ge):
        low, high = bracket.tail_ge_bracket(float(value))
        assert low <= tail <= high and high - low < 0.5, (value, low, tail, high)
    for t in (0.3, 0.05, 0.01, 1e-3):
        low, high = bracket.critical_bracket(t)
        assert low <= null_critical_value(exact, t) <= high and high - low <= 2e-3, (t, low, high)


@pytest.mark.slow  # compiles the programme kernel: ~6 s from a cold numba cache
def test_a_bracket_answer_at_a_larger_cell_off_the_table():
    P, N, C = 21, 100, 10
    start = time.perf_counter()
    answer = tablegen.critical_value("average_precision", P, N, C=C)
    took = time.perf_counter() - start
    assert took < 5 * pace_factor(), took  # 0.2 s quiet with the kernels compiled
    assert answer.method == "bracket" and answer.ci_low < answer.ci_high == answer.value
    assert answer.ci_high - answer.ci_low < 2e-4
    pv = tablegen.p_value("average_precision", P, N, C=C, score=answer.value)
    assert pv.method == "bracket" and 0 < pv.ci_low <= pv.value == pv.ci_high <= 0.0105
    result = tablegen.significance_test("average_precision", P, N, C=C, score=0.5 * (answer.ci_low + answer.ci_high))
    assert result.method == "bracket" and not result.settled and "bracket" in result.sentence()


@pytest.mark.slow  # compiles the programme kernel: ~6 s from a cold numba cache
def test_bracket_overlaps_the_bundled_tables_monte_carlo_interval():
    """The bundled table (R = 10^7 Monte Carlo) against the bracket; and the study's bracket at (20, 100),
    C = 10, alpha = 0.01, w = 1e-4 (the rounded-programme study behind this route): [0.40656, 0.40663]."""
    table = tablegen.open_table()
    for P, N, C, alpha in [(20, 100, 10, 0.01), (20, 1000, 100, 0.05), (40, 60, 1000, 0.01)]:
        low, high = BracketedAveragePrecisionNull(P, N).critical_bracket(float(upper_tail_probability(C, alpha)))
        mc = table.critical_value("average_precision", P, N, C, alpha=alpha)
        assert high - low < 1.2e-4 and low <= mc.ci_high and high >= mc.ci_low, (P, N, low, high, mc)
        if (P, N, C, alpha) == (20, 100, 10, 0.01):
            assert low <= 0.40663 and high >= 0.40656


@pytest.mark.slow  # the programme kernel (shared compile with the tests above)
def test_cli_prints_and_serialises_a_bracket(capsys):
    from tablegen.cli.main import main

    assert main(["lookup", "average_precision", "--P", "21", "--N", "100", "--C", "10"]) == 0
    assert "exact bounds (rounded lattice programmes), within [" in capsys.readouterr().out
    assert main(["p-value", "average_precision", "0.4", "--P", "21", "--N", "100", "--C", "10", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)["p_value"]
    assert answer["method"] == "bracket" and 0 < answer["ci_low"] < answer["ci_high"] == answer["value"]


@pytest.mark.slow  # the programme kernel (shared compile with the tests above)
@pytest.mark.parametrize("P,N", [(4, 7), (6, 6)])
def test_kept_programmes_answer_inside_their_window_and_still_hold_the_exact_law(P, N):
    """One prepared pair of fine programmes answers every question inside its window without another programme,
    each answer still around the exact law; the coarse view's brackets hold the fine ones and note their windows."""
    exact = average_precision_null(P, N)
    bracket = BracketedAveragePrecisionNull(P, N, fine_grid=1000)
    view = bracket.coarse_view()
    tails = (0.3, 0.05, 0.01, 1e-3)
    coarse_critical = [view.critical_bracket(t) for t in tails]
    coarse_tails = [view.tail_ge_bracket(float(v)) for v in exact.values]
    assert bracket.programmes == 2  # the coarse pair only, run once
    bracket.prepare(view.span())
    assert bracket.programmes == 4
    for t, (c_low, c_high) in zip(tails, coarse_critical):
        low, high = bracket.critical_bracket(t)
        assert c_low <= low <= null_critical_value(exact, t) <= high <= c_high, (t, c_low, low, high, c_high)  # grid
        # values: exact nesting
    for value, tail, (c_low, c_high) in zip(exact.values, exact.tail_ge, coarse_tails):
        low, high = bracket.tail_ge_bracket(float(value))
        assert low <= tail <= high, (value, low, tail, high)
        assert c_low <= low * (1 + 1e-12) and high <= c_high * (1 + 1e-12)  # sums of the same mass: rounding apart
    assert bracket.programmes == 4  # every question above came from the kept programmes


@pytest.mark.slow  # the programme kernel (shared compile with the tests above)
def test_a_negligible_tail_comes_from_the_coarse_programmes():
    """Past enumeration (P, N = 20, 200), asked within 1e-15 (as the max-T fold asks): a score far above the law
    gets the coarse bracket, at most 1e-15 wide and around the fine one, without a fine programme; a score inside
    it gets the fine pair; asked without ``within`` (a lookup), the fine pair always."""
    bracket = BracketedAveragePrecisionNull(20, 200)
    low, high = bracket.tail_ge_bracket(0.999, within=FOLD_TAIL_WIDTH)
    assert 0.0 <= low <= high <= 1e-15 and bracket.programmes == 2
    y_low, y_high = bracket._thresholds(0.999, bracket.fine_grid)  # the fine answer it stands for
    pair = BracketedAveragePrecisionNull(20, 200)._fine_pair(y_high, y_low)
    fine_low, fine_high = _tail_bracket(*pair, y_low, y_high)
    assert low <= fine_low * (1 + 1e-12) and fine_high <= high * (1 + 1e-12)
    middle = bracket.tail_ge_bracket(0.2, within=FOLD_TAIL_WIDTH)
    assert bracket.programmes == 4 and 0.01 < middle[0] <= middle[1] < 0.99 and middle[1] - middle[0] < 0.05
    assert bracket.tail_ge_bracket(0.999) == (fine_low, fine_high) and bracket.programmes == 6
