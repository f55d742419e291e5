"""Sharded stores (schema 4): one shard per task and array, inner chunks read one at a time and recorded one by
one in the manifest, the same values as an unsharded (schema 3) store, whole-shard writes that never read
the old shard, and the order in which a task's writes are made durable."""

from __future__ import annotations

import json
import os

import fsspec
import numpy as np
import pytest
import zarr
from jobtools import assert_store_values_identical, small_config

from tablegen.batch.job import create_job_store, run
from tablegen.batch.plan import make_plan
from tablegen.errors import StoreError
from tablegen.store import shards
from tablegen.store.integrity import check_integrity
from tablegen.store.reader import StoreReader
from tablegen.store.schema import SHARDED_VERSION, UNSHARDED_VERSION, VARIABLES
from tablegen.store.zarr_store import write_chunk

GRID = {"grid": {"P": [5, 10, 15], "N": [8, 16, 24]}, "replicates": 2000, "metrics": ["auc", "best_accuracy"],
        "Cs": [10], "alphas": [0.05], "chunks": {"P": 1, "N": 1}}
SHARD = {"P": 2, "N": 2}


def _objects(store) -> list[str]:
    """Chunk and shard files of the (P, N)-chunked arrays (metadata and coordinates left out)."""
    return sorted(str(p.relative_to(store)) for name in VARIABLES for p in (store / name / "c").rglob("*")
                  if p.is_file())


def test_a_sharded_store_holds_the_values_of_an_unsharded_one_in_one_object_per_task(tmp_path):
    plain, sharded = tmp_path / "plain.zarr", tmp_path / "sharded.zarr"
    run(small_config(plain, **GRID), executor="serial")
    config = small_config(sharded, shard=SHARD, **GRID)
    assert len(make_plan(config).chunks) == 4  # 3 x 3 cells in shards of 2 x 2 (edges shorter)
    run(config, executor="serial")
    assert_store_values_identical(plain, sharded)  # every array, NaN payloads included
    assert json.loads((plain / "zarr.json").read_text())["attributes"]["schema_version"] == UNSHARDED_VERSION
    assert json.loads((sharded / "zarr.json").read_text())["attributes"]["schema_version"] == SHARDED_VERSION
    assert len(_objects(plain)) == 7 * 9 and len(_objects(sharded)) == 7 * 4
    report = check_integrity(str(sharded))
    assert report.ok and report.chunks_checked == 7 * 9  # every inner chunk checked against its own digest
    recorded = json.loads((sharded / "manifest/zarr.json").read_text())["attributes"]["chunks"]
    assert "critical_value/c/0/0/0/0/1[1,2]" in recorded and len(recorded) == 7 * 9
    reader = StoreReader(str(sharded), None, "s")
    value = reader.block("critical_value", 1, 2)  # inner chunk (1, 2): P = 10, N = 24, in shard (0, 1)
    assert value.tobytes() == np.asarray(zarr.open_group(str(plain))["critical_value"][..., 1:2, 2:3]).tobytes()
    assert list(reader.digests) == ["critical_value/c/0/0/0/0/1[1,2]"]


def test_a_store_keeps_its_layout_a_config_with_other_shards_is_refused(tmp_path):
    store = tmp_path / "plain.zarr"
    create_job_store(small_config(store, **GRID))
    with pytest.raises(StoreError, match="differing fields: shard"):
        run(small_config(store, shard=SHARD, **GRID), executor="serial")


def test_a_whole_shard_is_written_without_reading_the_old_one(tmp_path):
    array = zarr.create_array(str(tmp_path / "a.zarr"), shape=(4, 4), chunks=(1, 2), shards=(2, 4), dtype="f8",
                              fill_value=np.nan)
    fs, root = fsspec.filesystem("file"), str(tmp_path / "a.zarr")
    (tmp_path / "a.zarr/c/0").mkdir(parents=True)
    (tmp_path / "a.zarr/c/0/0").write_bytes(b"not a shard")  # zarr's read-modify-write would fail on it
    values = np.arange(8.0).reshape(2, 4)
    assert shards.write_whole(array, (slice(0, 2), slice(0, 4)), values, fs, root) == ["c/0/0"]
    assert np.asarray(array[0:2]).tolist() == values.tolist()


def _values(config) -> dict:
    sizes = {"metric": len(config.metrics), "alpha": len(config.alphas), "C": len(config.Cs),
             "tail_probability": len(config.tail_probabilities), "P": 2, "N": 2}
    return {name: np.zeros([sizes[d] for d in dims], dtype) for name, (dims, dtype, *_) in VARIABLES.items()
            if name != "done"}


def _stage(store, path: str) -> tuple[int, str]:
    relative = os.path.relpath(path, store)
    kind = "directory" if os.path.isdir(path) else "file"
    step = 2 if relative.startswith("done") else 1 if relative.startswith("manifest") else 0
    return step, kind


def test_a_task_makes_data_then_manifest_then_done_flags_durable_each_with_its_folders(tmp_path, monkeypatch):
    store = tmp_path / "s.zarr"
    config = small_config(store, shard=SHARD, **GRID)
    create_job_store(config)
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real(fd))[1])
    write_chunk(str(store), (slice(0, 2), slice(0, 2)), _values(config))
    stages = [_stage(store, path) for path in synced]
    assert [step for step, _ in stages] == sorted(step for step, _ in stages)  # data < manifest < done
    for step in (0, 1, 2):  # within each step: its files, then the folders holding them
        kinds = [kind for s, kind in stages if s == step]
        assert kinds == sorted(kinds, key=lambda k: k == "directory") and kinds[-1] == "directory", kinds
    files = {os.path.relpath(p, store) for p in synced if os.path.isfile(p)}
    assert files == {*(f"{n}/c/{'0/' * (len(VARIABLES[n][0]) - 2)}0/0" for n in VARIABLES),
                     "manifest/sha256/c/0/0/0/0"}
    assert {os.path.dirname(f) for f in files} <= {os.path.relpath(p, store) for p in synced if os.path.isdir(p)}


def test_a_store_elsewhere_than_a_local_disk_is_not_synced(monkeypatch):
    config = small_config("memory://fsync.zarr", shard=SHARD, **GRID)
    create_job_store(config)
    monkeypatch.setattr(os, "fsync", lambda fd: pytest.fail("fsync on a memory:// store"))
    write_chunk(config.store_url, (slice(0, 2), slice(0, 2)), _values(config))
