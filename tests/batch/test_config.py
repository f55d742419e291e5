"""Job configs: the shipped ones load; bad ones fail naming the field; the hash covers results only."""

from pathlib import Path

import pytest

from tablegen import TablegenInputError
from tablegen.batch.config import config_from_mapping, load_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
APPENDIX = (20, 30, 40, 50, 60, 70, 80, 90, 100, 150, 200, 300, 400, 500, 600, 700, 800, 900, 1000)


def smoke_mapping(**changes):
    data = dict(grid={"P": [5, 10], "N": {"start": 10, "stop": 30, "step": 10}}, replicates=40_000, seed=1,
                Cs=[10, 100], alphas=[0.01], chunks={"P": 2, "N": 2}, store={"url": "x.zarr"})
    data.update(changes)
    return data


def test_shipped_configs_load():
    smoke, laptop, paper, full = (load_config(CONFIGS / f"{name}.yaml")
                                  for name in ("smoke", "laptop", "paper", "full"))
    assert laptop.P == laptop.N == APPENDIX and laptop.replicates == 100_000 and laptop.alphas == (0.01,)
    assert smoke.P == (5, 10, 20) and smoke.N == (10, 20, 30) and smoke.cells == 9
    assert paper.P == paper.N == APPENDIX and paper.replicates == 10_000_000 and paper.Cs == (10, 100, 1000)
    assert full.P == full.N == tuple(range(2, 1001)) and full.cluster == {"scheduler_file": "scheduler.json"}


def test_hash_covers_results_not_where_or_how_they_run():
    base = config_from_mapping(smoke_mapping())
    moved = config_from_mapping(smoke_mapping(store={"url": "s3://bucket/x.zarr"}, cluster={"workers": 8}))
    assert moved.result_hash == base.result_hash
    for change in (dict(seed=2), dict(replicates=50_000), dict(alphas=[0.05]), dict(chunks={"P": 1, "N": 2}),
                   dict(metrics=["auc"]), dict(exact=False)):
        assert config_from_mapping(smoke_mapping(**change)).result_hash != base.result_hash, change


def test_config_is_frozen():
    config = config_from_mapping(smoke_mapping())
    with pytest.raises(AttributeError):
        config.seed = 3


@pytest.mark.parametrize(
    "change,message",
    [
        (dict(grid={"P": [5, 0], "N": [3]}), r"grid.P\[1\]: value must be an integer >= 1, got 0"),
        (dict(grid={"P": [10, 5], "N": [3]}), "grid.P: must be strictly increasing"),
        (dict(grid={"P": {"start": 5}, "N": [3]}), "grid.P: a range needs start and stop"),
        (dict(grid={"P": [5]}), "grid: must be a mapping with keys P and N"),
        (dict(replicates=100, Cs=[1000]), "replicates: R = 100 is too small for C = 1000"),
        (dict(seed=-1), "seed: seed must be an integer >= 0"),
        (dict(metrics=["auc", "f2"]), r"metrics\[1\]: metric: unknown metric 'f2'"),
        (dict(alphas=[1.5]), r"alphas: alphas\[0\] must be in \(0, 1\)"),
        (dict(chunks={"P": 0, "N": 2}), "chunks.P: P must be an integer >= 1"),
        (dict(store={"path": "x"}), "store: must be a mapping with a non-empty url"),
        (dict(cluster={"workers": 2, "scheduler_file": "f"}), "cluster: must have exactly one of"),
        (dict(exact="yes"), "exact: must be true or false"),
        (dict(colour="red"), "colour: unknown field"),
    ],
)
def test_bad_fields_are_named(change, message):
    with pytest.raises(TablegenInputError, match=f"config field {message}"):
        config_from_mapping(smoke_mapping(**change))


@pytest.mark.parametrize(("text", "named"), [("?", "None"), ("? 1\n", "1"), ("null: 1\ngrid: 2\n", "None")])
def test_keys_that_are_not_strings_are_named_not_a_crash(tmp_path, text, named):
    """Found by the fuzz test: YAML ``?`` is a mapping whose one key is null (it raised TypeError)."""
    path = tmp_path / "odd_keys.yaml"
    path.write_text(text)
    with pytest.raises(TablegenInputError, match=f"config field {named}: unknown field"):
        load_config(path)


def test_missing_fields_and_files_are_reported(tmp_path):
    data = smoke_mapping()
    del data["seed"]
    with pytest.raises(TablegenInputError, match="config field seed: missing"):
        config_from_mapping(data)
    with pytest.raises(TablegenInputError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("grid: [1, 2\n")
    with pytest.raises(TablegenInputError, match="is not valid YAML"):
        load_config(broken)


def test_storage_options_need_an_fsspec_url():
    with pytest.raises(TablegenInputError, match=r"config field store.storage_options: only apply to an fsspec URL"):
        config_from_mapping(smoke_mapping(store={"url": "x.zarr", "storage_options": {"anon": True}}))
    assert config_from_mapping(smoke_mapping(store={"url": "s3://b/x.zarr", "storage_options": {"anon": True}}))
