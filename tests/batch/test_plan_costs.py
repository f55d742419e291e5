"""The plan of a grid: its chunks' costs (computed over the whole grid at once) are the cost model's
cell by cell, and it says which regime each cell is in."""

import numpy as np
import pytest

from tablegen.batch.config import config_from_mapping
from tablegen.batch.plan import chunk_seconds, format_plan, make_plan
from tablegen.compute import cost
from tablegen.compute.kernels.minority import uses_minority_sampling
from tablegen.compute.metrics import metric_entries


def _config(exact=True, metrics=("auc", "best_f1", "average_precision", "best_mcc", "tp_at_10")):
    return config_from_mapping({
        "name": "costs", "grid": {"P": [1, 20, 300, 1000, 30_000], "N": [4, 20, 40, 5000, 30_000]},
        "replicates": 200_000, "seed": 1, "metrics": list(metrics), "Cs": [10], "alphas": [0.01, 0.05],
        "exact": exact, "chunks": {"P": 2, "N": 3}, "store": {"url": "unused.zarr"}, "cluster": {"workers": 2}})


@pytest.mark.parametrize("exact", [True, False])
def test_chunk_costs_over_the_grid_equal_the_cell_by_cell_model(exact):
    config = _config(exact)
    plan = make_plan(config)
    for chunk in plan.chunks:
        assert plan.chunk_seconds[chunk] == pytest.approx(chunk_seconds(config, chunk), rel=1e-9)
    costs = [plan.chunk_seconds[chunk] for chunk in plan.remaining]
    assert costs == sorted(costs, reverse=True)  # the long tasks start first
    assert plan.startup_seconds == cost.startup_seconds(2, exact)


def test_each_cell_is_in_the_regime_its_costs_say_and_the_dry_run_names_them():
    config = _config(exact=False, metrics=("auc", "best_f1"))
    plan = make_plan(config)
    entries = metric_entries(["auc", "best_f1"])
    expected = {}
    for P in config.P:
        for N in config.N:
            bookkeeping = cost.SECONDS_PER_REPLICATE * 2
            lane = cost.SECONDS_PER_LANE_RANKING + cost.SECONDS_PER_ELEMENT_STEP * (P + N)
            regime = ("skewed" if uses_minority_sampling(P, N) else "small" if lane <= bookkeeping
                      else "large" if P + N >= cost.LARGE_CELL else "lane")
            cells, seconds = expected.get(regime, (0, 0.0))
            expected[regime] = (cells + 1, seconds + cost.cell_seconds(P, N, config.replicates, entries, False, 0))
    assert plan.regimes.keys() == expected.keys() == {"small", "lane", "large", "skewed"}
    for regime, (cells, seconds) in expected.items():
        assert plan.regimes[regime][0] == cells and plan.regimes[regime][1] == pytest.approx(seconds, rel=1e-12)
    text = format_plan(config, plan)
    for regime in expected:
        assert cost.REGIME_TEXT[regime] in text
    assert "start-up (this process and a LocalCluster of 2 workers)" in text
    assert np.isclose(sum(s for _, s in plan.regimes.values()), plan.core_seconds)
