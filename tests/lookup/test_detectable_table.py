"""The minimum detectable AUC: the batch job's shared search against the planner's bisection, and the answer read
from a table (``minimum_detectable(..., table=...)``) against the exact computation, refusals naming ``table``."""

from __future__ import annotations

import pytest
from jobtools import small_config

from tablegen import TablegenInputError, minimum_detectable
from tablegen.batch.job import run
from tablegen.compute.exact.detectable import AUC_TOLERANCE, HIGHEST_AUC, UNDETECTABLE, detectable_aucs
from tablegen.compute.exact.power import lehmann_k
from tablegen.compute.metrics import get_metric
from tablegen.compute.stats import upper_tail_probability
from tablegen.lookup.power import lehmann_power_at

LEVELS = [0.5, 0.8, 0.9]


@pytest.mark.parametrize(("metric", "P", "N", "C", "alpha"), [
    ("best_accuracy", 20, 20, 10, 0.01), ("best_f1", 100, 100, 100, 0.05),
    ("best_balanced_accuracy", 30, 200, 1000, 0.01),
    ("tp_at_10", 50, 50, 10, 0.01), ("auc", 30, 25, 10, 0.01), ("best_mcc", 40, 60, 100, 0.05),
    ("average_precision", 6, 8, 10, 0.05)])
def test_the_shared_search_brackets_the_same_root_as_the_bisection(metric, P, N, C, alpha):
    event = get_metric(metric).lehmann_event(P, N, float(upper_tail_probability(C, alpha)))
    calls = []
    found = detectable_aucs(lambda k: calls.append(k) or event.probability(k), LEVELS)
    assert len(calls) < 3 * 25  # shared between the levels: fewer than a bisection per level
    for level, auc in zip(LEVELS, found, strict=True):
        exact = minimum_detectable(metric, P, N, C=C, alpha=alpha, power=level)
        assert abs(auc - exact.auc) <= AUC_TOLERANCE
        power = lambda a: lehmann_power_at(metric, P, N, C, alpha, lehmann_k(a), 1)[0]  # noqa: E731
        assert power(auc) >= level > power(auc - AUC_TOLERANCE)  # a rigorous bracket of the smallest AUC


def test_a_test_that_detects_nothing_is_stored_as_one_and_the_null_reaching_the_level_as_one_half():
    assert detectable_aucs(lambda k: 0.0, [0.8]).tolist() == [UNDETECTABLE]  # m* at the maximum: power 0
    assert detectable_aucs(lambda k: 0.3, [0.2, 0.8]).tolist() == [0.5, UNDETECTABLE]
    assert HIGHEST_AUC < UNDETECTABLE


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    base = tmp_path_factory.mktemp("detectable-table")
    common = dict(grid={"P": [10, 20], "N": [12, 24]}, replicates=2000, metrics=["auc", "best_f1", "tp_at_3"],
                  Cs=[10, 100], alphas=[0.05], chunks={"P": 1, "N": 2})
    run(small_config(base / "power.zarr", power={"levels": LEVELS}, **common), executor="serial")
    run(small_config(base / "plain.zarr", **common), executor="serial")
    return {"power": str(base / "power.zarr"), "plain": str(base / "plain.zarr")}


@pytest.mark.parametrize(("metric", "P", "N", "C", "level"), [
    ("auc", 10, 12, 10, 0.8), ("best_f1", 20, 24, 100, 0.5), ("best_f1", 10, 24, 10, 0.9), ("auc", 20, 24, 100, 0.9)])
def test_the_table_answers_as_the_exact_computation_to_its_tolerance(stores, metric, P, N, C, level):
    stored = minimum_detectable(metric, P, N, C=C, alpha=0.05, power=level, table=stores["power"])
    exact = minimum_detectable(metric, P, N, C=C, alpha=0.05, power=level)
    assert stored.method == "table" and exact.method == "exact"
    assert abs(stored.auc - exact.auc) <= AUC_TOLERANCE
    assert stored.power >= level and stored.critical_value == exact.critical_value
    assert stored.auc - stored.auc_below <= AUC_TOLERANCE + 1e-15


def test_a_test_that_detects_nothing_is_refused_by_the_table_as_by_the_computation(stores):
    for table in (None, stores["power"]):  # m* = 3 of the top 3 (its maximum): nothing exceeds it
        with pytest.raises(TablegenInputError, match=r"no model of AUC below 1 reaches power 0.9.*power=0.9"):
            minimum_detectable("tp_at_3", 20, 12, C=10, alpha=0.05, power=0.9, table=table)


@pytest.mark.parametrize(("changes", "what"), [
    ({"P": 15}, "P = 15 is not in this table"), ({"C": 1000}, "C = 1000 is not in this table"),
    ({"alpha": 0.01}, "alpha = 0.01 is not in this table"), ({"power": 0.7}, "power = 0.7 is not in this table"),
    ({"metric": "best_accuracy"}, "metric 'best_accuracy' is not in this table"),
    ({"winners": 2}, "winners = 1"), ({"model": "binormal"}, "Lehmann alternative")])
def test_the_table_refuses_what_it_does_not_hold_naming_table(stores, changes, what):
    question = {"metric": "auc", "P": 10, "N": 12, "C": 10, "alpha": 0.05, "power": 0.8, **changes}
    with pytest.raises(TablegenInputError, match=r"table") as error:
        minimum_detectable(question.pop("metric"), question.pop("P"), question.pop("N"), table=stores["power"],
                           **question)
    assert what in str(error.value)


def test_a_store_without_the_array_and_a_bad_table_are_refused_naming_table(stores, tmp_path):
    with pytest.raises(TablegenInputError, match=r"table=.*holds no minimum detectable AUC.*add_minimum_detectable"):
        minimum_detectable("auc", 10, 12, C=10, alpha=0.05, table=stores["plain"])
    with pytest.raises(TablegenInputError, match=r"table=.*does not exist"):
        minimum_detectable("auc", 10, 12, C=10, alpha=0.05, table=str(tmp_path / "absent.zarr"))
    with pytest.raises(TablegenInputError, match=r"table=3 must be True"):
        minimum_detectable("auc", 10, 12, C=10, alpha=0.05, table=3)


@pytest.mark.parametrize(("metric", "P", "N"), [("best_f1", 60, 90), ("tp_at_10", 40, 40), ("auc", 25, 30)])
def test_a_cells_search_over_its_cs_with_hints_brackets_every_root_the_bisection_finds(metric, P, N):
    from tablegen.compute.exact.detectable import cell_detectable_aucs

    Cs, alphas = [10, 100, 1000], [0.01, 0.05]
    values = cell_detectable_aucs(get_metric(metric), P, N, Cs, alphas, LEVELS)  # hints from the smaller C
    for (p, a, c), auc in zip(((p, a, c) for p in range(3) for a in range(2) for c in range(3)), values.ravel(),
                              strict=True):
        try:
            exact = minimum_detectable(metric, P, N, C=Cs[c], alpha=alphas[a], power=LEVELS[p]).auc
        except TablegenInputError:  # the test detects nothing at that power
            assert auc == UNDETECTABLE
            continue
        assert abs(auc - exact) <= AUC_TOLERANCE, (p, a, c)
