"""The minimum detectable AUC in a store (schema version 5): written by a job with a ``power:`` section, added to a
finished store of version 3 or 4 by ``add_minimum_detectable`` (values equal to a job's, every other file
untouched), checked by the integrity check and by ``verify`` (recomputed at sample cells), damage refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import zarr
from jobtools import small_config, store_files

from tablegen.batch.job import run
from tablegen.errors import StoreError, StoreIntegrityError, TablegenInputError
from tablegen.store.integrity import check_integrity
from tablegen.store.migrate import add_minimum_detectable, migrate_store
from tablegen.store.report import detectable_report
from tablegen.store.zarr_store import open_store

LEVELS = [0.5, 0.8]


def _config(store, **changes):
    return small_config(store, **{"grid": {"P": [5, 10], "N": [8, 16]}, "replicates": 2000,
                                  "metrics": ["auc", "best_accuracy", "average_precision"], "Cs": [10],
                                  "alphas": [0.01, 0.05], "chunks": {"P": 1, "N": 2}, **changes})


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("detectable")
    made = {"plain": base / "plain.zarr", "power": base / "power.zarr", "sharded": base / "sharded.zarr",
            "sharded_power": base / "sharded_power.zarr"}
    run(_config(made["plain"]), executor="serial")
    run(_config(made["power"], power={"levels": LEVELS}), executor="serial")
    run(_config(made["sharded"], chunks={"P": 1, "N": 1}, shard={"P": 2, "N": 1}), executor="serial")
    run(_config(made["sharded_power"], chunks={"P": 1, "N": 1}, shard={"P": 2, "N": 1}, power={"levels": LEVELS}),
        executor="serial")
    return made


def _copy(stores, tmp_path, name) -> Path:
    target = tmp_path / "t.zarr"
    shutil.copytree(stores[name], target)
    return target


def test_a_job_with_power_writes_a_schema_5_store_that_checks(stores):
    ds = open_store(str(stores["power"]))
    assert ds.attrs["schema_version"] == 5 and ds.power.values.tolist() == LEVELS
    assert ds.power.attrs["long_name"] == "target power of the minimum detectable AUC"
    values = ds.minimum_detectable_auc.sel(metric="average_precision").values
    assert not np.isnan(values[..., 0, 0]).any()  # (5, 8): the enumeration runs, exact power exists
    assert np.isnan(ds.minimum_detectable_auc.sel(metric="average_precision", P=10, N=16).values).all()  # it does not
    assert not np.isnan(ds.minimum_detectable_auc.sel(metric=["auc", "best_accuracy"]).values).any()
    report = check_integrity(str(stores["power"]))
    assert report.ok and report.chunks_checked == 2 * 8  # 2 regions x 8 chunked variables
    assert open_store(str(stores["plain"])).attrs["schema_version"] == 3
    assert "minimum_detectable_auc" not in open_store(str(stores["plain"])).data_vars


def test_max_seconds_leaves_nan_only_where_one_probability_is_estimated_over_it(stores, tmp_path):
    from tablegen.compute.metrics import get_metric

    run(_config(tmp_path / "b.zarr", metrics=["auc", "best_accuracy"], power={"levels": LEVELS, "max_seconds": 1e-5}),
        executor="serial")
    ds = open_store(str(tmp_path / "b.zarr"))
    assert ds.minimum_detectable_auc.attrs["max_seconds"] == 1e-5
    assert "max_seconds" not in open_store(str(stores["power"])).minimum_detectable_auc.attrs
    for metric in ("auc", "best_accuracy"):
        for P in (5, 10):
            for N in (8, 16):
                over = get_metric(metric).power_cost(P, N)[0] > 1e-5
                values = ds.minimum_detectable_auc.sel(metric=metric, P=P, N=N).values
                assert np.isnan(values).all() == over and (over or not np.isnan(values).any()), (metric, P, N)


@pytest.mark.parametrize(("plain", "with_power"), [("plain", "power"), ("sharded", "sharded_power")])
def test_adding_the_array_to_a_finished_store_gives_a_jobs_values_and_leaves_every_other_file(
        stores, tmp_path, plain, with_power):
    store = _copy(stores, tmp_path, plain)
    before = store_files(store)
    assert add_minimum_detectable(str(store), LEVELS) is True
    after = store_files(store)
    kept = {name for name in before if not name.startswith("manifest/")}
    assert all(after[name] == before[name] for name in kept)  # every other array's bytes as they were
    written = zarr.open_group(str(stores[with_power]), mode="r")
    added = zarr.open_group(str(store), mode="r")
    assert np.asarray(added["minimum_detectable_auc"][...]).tobytes() == \
        np.asarray(written["minimum_detectable_auc"][...]).tobytes()
    assert added["minimum_detectable_auc"].chunks == written["minimum_detectable_auc"].chunks
    assert added["minimum_detectable_auc"].shards == written["minimum_detectable_auc"].shards
    for name in ("power", "minimum_detectable_auc"):  # the metadata the job's template writes, byte for byte
        assert (store / name / "zarr.json").read_bytes() == (stores[with_power] / name / "zarr.json").read_bytes()
    assert added.attrs["schema_version"] == 5 and "minimum detectable AUC added" in added.attrs["history"]
    assert added.attrs["config_hash"] == zarr.open_group(str(stores[plain]), mode="r").attrs["config_hash"]
    assert check_integrity(str(store)).ok
    assert add_minimum_detectable(str(store), LEVELS) is False and migrate_store(str(store)) is False
    assert run(_config(store, **({"chunks": {"P": 1, "N": 1}, "shard": {"P": 2, "N": 1}} if "sharded" in plain
                                else {})), executor="serial").cells_computed == 0  # its own config still resumes it


def test_adding_refuses_bad_levels_and_damaged_or_unfinished_stores_writing_nothing(stores, tmp_path):
    store = _copy(stores, tmp_path, "plain")
    before = store_files(store)
    for levels in ([], [0.8, 0.5], [1.0], "x"):
        with pytest.raises(TablegenInputError, match="levels"):
            add_minimum_detectable(str(store), levels)
    key = next(name for name in before if name.startswith("critical_value/c/"))
    (store / key).write_bytes(b"\0" + (store / key).read_bytes()[1:])
    with pytest.raises(StoreIntegrityError, match="cannot take the minimum detectable AUC"):
        add_minimum_detectable(str(store), LEVELS)
    assert "minimum_detectable_auc" not in zarr.open_group(str(store), mode="r")
    with pytest.raises(StoreError):
        add_minimum_detectable(str(tmp_path / "absent.zarr"), LEVELS)


def test_verify_recomputes_sample_cells_and_finds_a_wrong_value(stores, tmp_path):
    report = detectable_report(open_store(str(stores["power"])), samples=2)
    assert report["checked"] == report["agree"] == 2 * 3 * 2 * 2 * 1 and report["cells"] == [[5, 8], [10, 16]]
    store = _copy(stores, tmp_path, "power")
    group = zarr.open_group(str(store), mode="r+")
    values = np.asarray(group["minimum_detectable_auc"][...])
    values[1, 0, 0, 0, 0, 0] += 1e-3  # best_accuracy, power 0.5, alpha 0.01, C 10, at (5, 8): a wrong value
    group["minimum_detectable_auc"][...] = values
    report = detectable_report(open_store(str(store)), samples=2)
    assert report["agree"] == report["checked"] - 1 and report["largest_difference"] > 9e-4
    assert not check_integrity(str(store)).ok  # (and its hash no longer matches the manifest)
    from tablegen.cli.main import main
    from tablegen.store.report import verify_report

    assert "minimum_detectable" in verify_report(open_store(str(stores["power"])))  # what `tablegen verify` prints
    assert main(["verify", str(stores["power"])]) == 0
    assert main(["verify", str(store), "--no-integrity", "--json"]) == 3  # the recomputation alone finds it


def test_a_damaged_or_missing_array_is_named_by_the_integrity_check_and_refused_by_a_lookup(stores, tmp_path):
    from tablegen import minimum_detectable

    store = _copy(stores, tmp_path, "power")
    chunk = store / "minimum_detectable_auc" / "c" / "0" / "0" / "0" / "0" / "1" / "0"
    chunk.write_bytes(chunk.read_bytes()[:-1] + bytes([chunk.read_bytes()[-1] ^ 1]))
    report = check_integrity(str(store))
    assert any(p.array == "minimum_detectable_auc" for p in report.problems) and (1, 0) in report.regions
    with pytest.raises(StoreIntegrityError, match="minimum_detectable_auc"):
        minimum_detectable("auc", 10, 8, C=10, alpha=0.01, power=0.5, table=str(store))
    assert minimum_detectable("auc", 5, 8, C=10, alpha=0.01, power=0.5, table=str(store)).method == "table"
    store = tmp_path / "missing.zarr"  # (a table once opened keeps what it checked: a fresh store)
    shutil.copytree(stores["power"], store)
    shutil.rmtree(store / "minimum_detectable_auc")
    report = check_integrity(str(store))
    assert report.fatal and any(p.array == "minimum_detectable_auc" for p in report.problems)
    with pytest.raises(StoreIntegrityError, match="minimum_detectable_auc"):
        minimum_detectable("auc", 5, 8, C=10, alpha=0.01, power=0.5, table=str(store))


def test_a_job_written_schema_5_store_with_a_lost_record_is_rebuilt_bit_for_bit(stores, tmp_path):
    import json

    from tablegen.cli.main import main

    store = _copy(stores, tmp_path, "sharded_power")
    reference = store_files(store)
    document = json.loads((store / "manifest/zarr.json").read_text())
    del document["attributes"]["created"]
    (store / "manifest/zarr.json").write_text(json.dumps(document))
    assert main(["verify", str(store)]) == 3
    assert main(["repair", str(store), "--rebuild-manifest"]) == 0  # the template from its recorded power: section
    assert main(["verify", str(store)]) == 0
    assert store_files(store) == reference


@pytest.mark.parametrize("plain", ["plain", "sharded"])
def test_a_store_given_the_array_afterwards_with_a_lost_record_is_rebuilt_bit_for_bit(stores, tmp_path, plain):
    """The config such a store records has no power: section; the template takes the levels (and max_seconds) from
    the array the store holds, which the per-region digests then vouch for."""
    import json

    from tablegen.cli.main import main

    store = _copy(stores, tmp_path, plain)
    assert add_minimum_detectable(str(store), LEVELS) is True
    reference = store_files(store)
    document = json.loads((store / "manifest/zarr.json").read_text())
    del document["attributes"]["created"]
    (store / "manifest/zarr.json").write_text(json.dumps(document))
    assert main(["verify", str(store)]) == 3
    assert main(["repair", str(store), "--rebuild-manifest"]) == 0
    assert main(["verify", str(store)]) == 0
    assert store_files(store) == reference
