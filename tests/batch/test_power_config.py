"""The config's ``power:`` section: off when absent (old configs keep their hash, the bundled table's included),
part of the hash when given, bad values refused naming the key, nothing written."""

import json
from pathlib import Path

import pytest
import zarr

from tablegen import TablegenInputError
from tablegen.batch.config import config_from_mapping, load_config
from tablegen.batch.job import store_attributes, store_template
from tablegen.store.schema import POWER_VERSION, bundled_table_path

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def mapping(**changes):
    data = dict(grid={"P": [5, 10], "N": [10, 20]}, replicates=40_000, seed=1, Cs=[10], alphas=[0.01],
                chunks={"P": 1, "N": 2}, store={"url": "x.zarr"})
    data.update(changes)
    return data


def test_absent_power_leaves_every_shipped_config_and_the_bundled_store_hash_as_it_was():
    stored = zarr.open_group(bundled_table_path(), mode="r").attrs.asdict()
    paper = load_config(CONFIGS / "paper.yaml")
    assert paper.power_levels == () and paper.result_hash == stored["config_hash"]
    assert "power" not in json.loads(store_attributes(paper)["config"])  # the record as before
    record, bundled = json.loads(store_attributes(paper)["config"]), json.loads(stored["config"])
    assert set(record) ^ set(bundled) <= {"device"}  # (the bundled store predates the device field)
    assert all(record[k] == bundled[k] for k in set(record) & set(bundled) - {"store_url"})
    assert store_template(paper).version == 3


def test_power_levels_enter_the_hash_the_record_and_the_template():
    base = config_from_mapping(mapping())
    power = config_from_mapping(mapping(power={"levels": [0.5, 0.8, 0.9]}))
    assert power.power_levels == (0.5, 0.8, 0.9) and power.power_max_seconds is None
    assert power.result_hash != base.result_hash
    assert power.result_fields()["power"] == {"levels": [0.5, 0.8, 0.9]}
    assert json.loads(store_attributes(power)["config"])["power"] == {"levels": [0.5, 0.8, 0.9]}
    bounded = config_from_mapping(mapping(power={"levels": [0.5, 0.8, 0.9], "max_seconds": 0.01}))
    assert bounded.result_hash not in (power.result_hash, base.result_hash)
    assert store_template(power).version == POWER_VERSION and store_template(power).power_levels == (0.5, 0.8, 0.9)


@pytest.mark.parametrize(("power", "field"), [
    ([0.8], "power"),
    ({"level": [0.8]}, "power"),
    ({"levels": [0.8], "extra": 1}, "power"),
    ({"levels": []}, "power.levels"),
    ({"levels": 0.8}, "power.levels"),
    ({"levels": [0.8, 1.0]}, r"power.levels\[1\]"),
    ({"levels": [0.0]}, r"power.levels\[0\]"),
    ({"levels": ["0.8"]}, r"power.levels\[0\]"),
    ({"levels": [True]}, r"power.levels\[0\]"),
    ({"levels": [0.9, 0.8]}, "power.levels"),
    ({"levels": [0.8, 0.8]}, "power.levels"),
    ({"levels": [0.8], "max_seconds": 0}, "power.max_seconds"),
    ({"levels": [0.8], "max_seconds": "1"}, "power.max_seconds"),
    ({"levels": [0.8], "max_seconds": float("inf")}, "power.max_seconds"),
])
def test_bad_power_sections_are_refused_naming_the_key(power, field, tmp_path):
    with pytest.raises(TablegenInputError, match=rf"config field {field}:"):
        config_from_mapping(mapping(power=power, store={"url": str(tmp_path / "t.zarr")}))
    assert not (tmp_path / "t.zarr").exists()


def test_a_task_with_power_reports_the_search_as_one_step_and_ends_at_the_plans_estimate():
    from jobtools import small_config

    from tablegen.batch.plan import Chunk, chunk_seconds, format_plan, make_plan, power_seconds
    from tablegen.batch.tasks import compute_chunk

    config = small_config("memory://power-reports.zarr", grid={"P": [5, 10], "N": [8, 16]}, replicates=2000, Cs=[10],
                          power={"levels": [0.5, 0.8]})
    chunk = Chunk(0, 2, 0, 2)
    reports = []
    arrays = compute_chunk(config, chunk, lambda done, step: reports.append((done, step)), report_every=float("inf"))
    assert len(reports) == chunk.size + len(config.metrics) + 2  # cells, metrics' exact values, the search, the end
    assert reports[-2][1] == pytest.approx(power_seconds(config, chunk.cells(config))) and reports[-2][1] > 0
    assert reports[-1] == (pytest.approx(chunk_seconds(config, chunk)), 0.0)
    assert arrays["minimum_detectable_auc"].shape == (len(config.metrics), 2, 2, 1, 2, 2)
    plan = make_plan(config)
    assert plan.power_seconds == pytest.approx(power_seconds(config, [(p, n) for p in config.P for n in config.N]))
    assert "minimum detectable AUC:" in format_plan(config, plan)
    assert "minimum detectable AUC:" not in format_plan(replace_power(config), make_plan(replace_power(config)))


def replace_power(config):
    from dataclasses import replace

    return replace(config, power_levels=(), power_max_seconds=None)
