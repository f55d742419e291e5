"""The ``shard`` key of a job config: chunks per shard, the cells of a task, the hash and the plan."""

from __future__ import annotations

import json

import pytest

from tablegen import TablegenInputError
from tablegen.batch.config import config_from_mapping, load_config
from tablegen.batch.job import store_attributes, store_template
from tablegen.batch.plan import format_plan, make_plan


def _mapping(**changes):
    data = dict(grid={"P": {"start": 2, "stop": 11}, "N": [10, 20, 30]}, replicates=2000, seed=1, Cs=[10],
                alphas=[0.01], chunks={"P": 1, "N": 3}, store={"url": "x.zarr"})
    return data | changes


def test_a_shard_is_a_task_and_a_store_of_version_4():
    config = config_from_mapping(_mapping(shard={"P": 4, "N": 1}))
    assert config.shard == (4, 1) and config.task_cells == (4, 3)
    plan = make_plan(config)
    assert [(c.p_start, c.p_stop) for c in plan.chunks] == [(0, 4), (4, 8), (8, 10)]  # 10 values of P
    assert "3 chunks of up to 4 x 3 cells (shards of 4 x 1 Zarr chunks)" in format_plan(config, plan)
    template = store_template(config)
    assert (template.chunks, template.shard, template.outer, template.version) == ((1, 3), (4, 1), (4, 3), 4)


def test_without_a_shard_the_store_and_the_hash_are_as_before_shards():
    plain, one = config_from_mapping(_mapping()), config_from_mapping(_mapping(shard={"P": 1, "N": 1}))
    assert plain.shard == (1, 1) and "shard" not in plain.result_fields()
    assert plain.result_hash == one.result_hash
    assert store_template(plain).shard is None and store_template(plain).version == 3
    sharded = config_from_mapping(_mapping(shard={"P": 2, "N": 1}))
    assert sharded.result_hash != plain.result_hash
    assert "shard" not in json.loads(store_attributes(plain)["config"])  # recorded as before shards
    assert json.loads(store_attributes(sharded)["config"])["shard"] == [2, 1]
    assert load_config("configs/paper.yaml").shard == (1, 1)  # the bundled table's config keeps its hash


@pytest.mark.parametrize("shard,message", [
    ({"P": 0, "N": 1}, "shard.P: P must be an integer >= 1"),
    ({"P": 2}, "shard: must be a mapping with keys P and N"),
    ([2, 2], "shard: must be a mapping with keys P and N"),
    ({"P": 1.5, "N": 1}, "shard.P"),
])
def test_a_bad_shard_is_named(shard, message):
    with pytest.raises(TablegenInputError, match=f"config field {message}"):
        config_from_mapping(_mapping(shard=shard))
