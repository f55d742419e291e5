"""The max-T crossing decided by one programme per level (lattice nulls' ``critical_at_most``): the same answers as
comparing each level with the critical value its search finds, with fewer programmes."""

from __future__ import annotations

import numpy as np
import pytest

from tablegen.compare.selection import maxt
from tablegen.compute.exact.best_mcc import best_mcc_null
from tablegen.compute.exact.lattice import best_balanced_accuracy_null, best_f1_null

BUILDERS = {"best_f1": best_f1_null, "best_balanced_accuracy": best_balanced_accuracy_null, "best_mcc": best_mcc_null}


class _SearchOnly:
    """A lattice null seen without its decision: the crossing then compares levels with searched critical values."""

    def __init__(self, null):
        self._null = null

    def critical_value(self, tail):
        return self._null.critical_value(tail)


@pytest.mark.parametrize("metric", BUILDERS)
def test_critical_at_most_is_the_comparison_with_the_searched_critical_value(metric):
    rng = np.random.default_rng(11)
    for P, N in [(15, 25), (40, 30), (60, 140)]:
        for tail in (0.2, 0.01, 1e-4):
            critical = BUILDERS[metric](P, N).critical_value(tail)
            for x in [critical, np.nextafter(critical, -np.inf), np.nextafter(critical, np.inf),
                      *rng.uniform(critical - 0.05, critical + 0.05, 6)]:
                assert BUILDERS[metric](P, N).critical_at_most(float(x), tail) == (critical <= x), (P, N, tail, x)


@pytest.mark.parametrize("metric", BUILDERS)
def test_the_crossing_is_the_same_with_decisions_and_with_searches(metric):
    """Random maxima (levels drawn from the metric's own candidates and between them) and distribution functions:
    ``_critical_at`` with the decisions equals it with searches, for competitors not given 1, 5 and 90."""
    rng = np.random.default_rng(23)
    P, N = (30, 60) if metric == "best_mcc" else (60, 140)  # best MCC's programmes cost more a cell
    for trial in range(8):
        size = int(rng.integers(2, 40))
        levels = np.sort(rng.uniform(0.3, 0.9, size))
        if trial % 2:
            levels = np.unique([BUILDERS[metric](P, N).critical_value(t) for t in rng.uniform(1e-4, 0.3, size)])
        cdf = np.sort(rng.uniform(0.5, 1.0, levels.size))
        cdf[-1] = 1.0
        for extra in (1, 5, 90):
            decided = maxt._critical_at(levels, cdf, 0.05, extra, BUILDERS[metric](P, N))
            searched = maxt._critical_at(levels, cdf, 0.05, extra, _SearchOnly(BUILDERS[metric](P, N)))
            assert decided == searched, (trial, extra)


def test_the_crossing_runs_fewer_programmes_with_decisions():
    rng = np.random.default_rng(5)
    levels = np.sort(rng.uniform(0.55, 0.75, 150))
    cdf = np.linspace(0.9, 1.0, levels.size)
    decided, searched = best_f1_null(300, 700), best_f1_null(300, 700)
    assert maxt._critical_at(levels, cdf, 0.05, 90, decided) == maxt._critical_at(levels, cdf, 0.05, 90,
                                                                                  _SearchOnly(searched))
    assert decided.programmes < searched.programmes
