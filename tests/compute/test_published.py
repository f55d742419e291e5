"""Our exact values against the published C = 10 tables of Forman & Cohen (2005).

Source: G. Forman, I. Cohen, "Beware the Null Hypothesis: Critical Value Tables for Evaluating
Classifiers", ECML 2005 / HPL-2005-70, appendix tables, alpha = 0.01, C = 10 (``tests/data``).
The published values are Monte Carlo estimates printed to three places.
"""

import csv

import numpy as np
import pytest
from conftest import DATA

from tablegen.compute.exact import auc_null_from_pmf, auc_pmf_sweep
from tablegen.compute.metric_nulls import exact_critical_value

PRINTED = 0.0005 + 1e-9  # half a unit in the third place

#: Cells where the published best accuracy is one lattice step (1/(P+N)) above the exact value:
#: a Monte Carlo slip at a knife edge.  Pinned so that any change in our exact values shows here.
ONE_STEP_SLIPS = {("best_accuracy", 90, 100)}


def published(metric):
    with open(DATA / "forman_cohen_2005_C10.csv", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["metric"] == metric]
    assert all(r["C"] == "10" and r["alpha"] == "0.01" for r in rows)
    return [(int(r["P"]), int(r["N"]), float(r["published_value"])) for r in rows]


def test_reference_file_has_the_1444_cells():
    assert sum(len(published(m)) for m in ("best_accuracy", "tp_at_10", "best_f1", "auc")) == 1444


@pytest.mark.parametrize("metric,step", [("best_accuracy", lambda P, N: 1 / (P + N)), ("tp_at_10", lambda P, N: 1.0)])
def test_exact_equals_every_published_cell_but_one_step_slips(metric, step):
    slips = set()
    for P, N, value in published(metric):
        exact = exact_critical_value(metric, P, N, C=10, alpha=0.01)
        if abs(exact - value) <= PRINTED:
            continue
        assert min(abs(exact + s - value) for s in (step(P, N), -step(P, N))) <= PRINTED, (P, N, value, exact)
        slips.add((metric, P, N))
    assert slips == {s for s in ONE_STEP_SLIPS if s[0] == metric}


def differences(metric, exact_values):
    return np.array([value - exact_values[(P, N)] for P, N, value in published(metric) if P <= 200 and N <= 200])


def summarise(diff):
    return dict(cells=int(diff.size), mean=float(diff.mean()), max_abs=float(np.abs(diff).max()),
                equal_to_three_places=float(np.mean(np.abs(diff) <= PRINTED)))


def test_best_f1_differences_are_unbiased_and_small(record_property):
    exact = {(P, N): exact_critical_value("best_f1", P, N, C=10, alpha=0.01)
             for P, N, _ in published("best_f1") if P <= 200 and N <= 200}
    summary = summarise(differences("best_f1", exact))
    record_property("best_f1", summary)
    assert summary["cells"] == 121
    assert abs(summary["mean"]) < 0.0005 and summary["max_abs"] < 0.005, summary


def test_auc_differences_are_unbiased_and_small(record_property):
    cells = [(P, N) for P, N, _ in published("auc") if P <= 200 and N <= 200]
    exact = {cell: exact_critical_value("auc", *cell, C=10, alpha=0.01, null=auc_null_from_pmf(*cell, pmf))
             for cell, pmf in auc_pmf_sweep(cells)}
    summary = summarise(differences("auc", exact))
    record_property("auc", summary)
    assert summary["cells"] == 121
    assert abs(summary["mean"]) < 0.0005 and summary["max_abs"] < 0.005, summary
