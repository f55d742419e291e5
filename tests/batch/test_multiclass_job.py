"""The multi-class table job: every stored value equals the exact routine's, resumes are byte-identical whatever
the split of the work, a store of another config or schema is refused, damage is found and recomputed, verify
recomputes cells, one writer at a time, and an interrupted creation is written again."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import zarr
from jobtools import assert_store_values_identical, assert_stores_bit_identical

from tablegen.batch.config import config_from_mapping
from tablegen.batch.job import run
from tablegen.batch.multiclass_job import (
    chunk_grid,
    make_multiclass_plan,
    prepare_multiclass_store,
    run_multiclass,
    run_multiclass_chunk,
    verify_multiclass_store,
)
from tablegen.compute.exact.balanced_multiclass import balanced_critical_hits, value_from_hits
from tablegen.errors import StoreError, StoreLockedError
from tablegen.store.lock import StoreLock
from tablegen.store.multiclass_store import check_multiclass_store, write_multiclass_region


def config_at(store, **changes):
    data = {"kind": "multiclass", "grid": {"K": [2, 3, 4], "n_per_class": [3, 5, 8]}, "Cs": [1, 10],
            "alphas": [0.05, 0.01], "chunks": {"K": 2, "n_per_class": 2}, "store": {"url": str(store)}}
    return config_from_mapping(data | changes)


def test_every_stored_value_is_the_exact_routines(tmp_path):
    config = config_at(tmp_path / "a.zarr")
    summary = run(config, executor="serial")
    assert summary.cells_computed == 9 and summary.complete
    group = zarr.open_group(str(tmp_path / "a.zarr"), mode="r")
    hits, values = np.asarray(group["critical_hits"][...]), np.asarray(group["critical_value"][...])
    assert np.asarray(group["done"][...]).all()
    for a, alpha in enumerate(config.alphas):
        for c, C in enumerate(config.Cs):
            for k, K in enumerate(config.K):
                for j, n in enumerate(config.n_per_class):
                    expected = balanced_critical_hits(K, n, C, alpha)
                    assert hits[a, c, k, j] == expected
                    for m, metric in enumerate(config.metrics):
                        assert values[m, a, c, k, j] == value_from_hits(metric, expected, K, n)
    assert check_multiclass_store(str(tmp_path / "a.zarr")).ok


def test_a_run_in_two_halves_is_byte_identical_to_one_run(tmp_path):
    """Half the chunks, then a resume (as after a kill), give the same files byte for byte as one run; another
    store chunking gives the same values."""
    whole, halves = config_at(tmp_path / "whole.zarr"), config_at(tmp_path / "halves.zarr")
    run_multiclass(whole, executor="serial")
    with StoreLock(halves.store_url):
        plan = prepare_multiclass_store(halves)
        for chunk in plan.remaining[: len(plan.remaining) // 2]:
            run_multiclass_chunk(halves, chunk)
    resumed = run_multiclass(halves, executor="serial")
    assert 0 < resumed.cells_computed < resumed.cells
    assert_stores_bit_identical(tmp_path / "whole.zarr", tmp_path / "halves.zarr")
    other = config_at(tmp_path / "other.zarr", chunks={"K": 1, "n_per_class": 3})
    run_multiclass(other, executor="serial")
    group_a, group_b = (zarr.open_group(str(tmp_path / name), mode="r") for name in ("whole.zarr", "other.zarr"))
    for name in ("critical_hits", "critical_value", "done", "K", "n_per_class", "C", "alpha"):
        assert np.asarray(group_a[name][...]).tobytes() == np.asarray(group_b[name][...]).tobytes(), name


def test_a_resume_by_another_config_is_refused_naming_the_fields(tmp_path):
    run_multiclass(config_at(tmp_path / "a.zarr"), executor="serial")
    with pytest.raises(StoreError, match="differing fields: Cs"):
        run_multiclass(config_at(tmp_path / "a.zarr", Cs=[1, 100]), executor="serial")
    with pytest.raises(StoreError, match="differing fields: chunks"):
        run_multiclass(config_at(tmp_path / "a.zarr", chunks={"K": 1, "n_per_class": 1}), executor="serial")


def test_a_store_of_another_schema_is_refused(tmp_path):
    group = zarr.open_group(str(tmp_path / "binary.zarr"), mode="w")
    group.attrs.update({"schema": "tablegen-critical-values", "schema_version": 4})
    with pytest.raises(StoreError, match="is not a multi-class table"):
        run_multiclass(config_at(tmp_path / "binary.zarr"), executor="serial")
    group.attrs.update({"schema": "tablegen-multiclass-critical-values", "schema_version": 99})
    with pytest.raises(StoreError, match="schema version 99"):
        run_multiclass(config_at(tmp_path / "binary.zarr"), executor="serial")


def test_a_damaged_chunk_is_named_and_recomputed_by_the_resume(tmp_path):
    config = config_at(tmp_path / "a.zarr")
    run_multiclass(config, executor="serial")
    run_multiclass(config_at(tmp_path / "b.zarr"), executor="serial")
    chunk_file = tmp_path / "a.zarr" / "critical_hits" / "c" / "0" / "0" / "1" / "0"
    data = bytearray(chunk_file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    chunk_file.write_bytes(bytes(data))
    report = check_multiclass_store(config.store_url)
    assert not report.ok and report.regions == {(1, 0)} and "K 4..4 x n_per_class 3..5" in report.problems[0]
    assert not verify_multiclass_store(config.store_url).ok
    assert run_multiclass(config, executor="serial").cells_computed == 2
    assert verify_multiclass_store(config.store_url).ok
    assert_store_values_identical(tmp_path / "a.zarr", tmp_path / "b.zarr")


def test_verify_recomputes_cells_exactly(tmp_path):
    """A region rewritten with wrong values and a matching manifest entry passes the manifest check; the exact
    recomputation of verify finds it."""
    config = config_at(tmp_path / "a.zarr", grid={"K": [3], "n_per_class": [4]}, chunks={"K": 1, "n_per_class": 1})
    run_multiclass(config, executor="serial")
    group = zarr.open_group(config.store_url, mode="r")
    wrong = {name: np.asarray(group[name][...]) for name in ("critical_hits", "critical_value")}
    wrong["critical_hits"][0, 0, 0, 0] += 1
    write_multiclass_region(config.store_url, (slice(0, 1), slice(0, 1)), wrong)
    result = verify_multiclass_store(config.store_url)
    assert check_multiclass_store(config.store_url).ok and not result.ok
    assert result.recomputed == ((3, 4, False),)


def test_one_writer_at_a_time(tmp_path):
    config = config_at(tmp_path / "a.zarr")
    with StoreLock(config.store_url):
        with pytest.raises(StoreLockedError):
            run_multiclass(config, executor="serial")


def test_an_interrupted_creation_is_written_again(tmp_path):
    config = config_at(tmp_path / "a.zarr")
    run_multiclass(config, executor="serial")
    root = Path(config.store_url)
    manifest = json.loads((root / "manifest" / "zarr.json").read_text())
    del manifest["attributes"]["created"]
    (root / "manifest" / "zarr.json").write_text(json.dumps(manifest))
    Path(f"{root}.creating").write_text("{}")
    assert run_multiclass(config, executor="serial").cells_computed == 9
    assert verify_multiclass_store(config.store_url).ok


def test_the_plan_estimates_and_orders_the_chunks(tmp_path):
    config = config_at(tmp_path / "a.zarr")
    plan = make_multiclass_plan(config)
    assert len(plan.chunks) == len(chunk_grid(config)) == 4 and plan.cells == 9 and plan.core_seconds > 0
    done = np.zeros((3, 3), bool)
    done[:2, :2] = True
    assert len(make_multiclass_plan(config, done).remaining) == 3


def test_the_dask_executor_writes_the_same_store(tmp_path):
    config = replace(config_at(tmp_path / "dask.zarr"), cluster={"workers": 1})
    run_multiclass(config, executor="dask")
    run_multiclass(config_at(tmp_path / "serial.zarr"), executor="serial")
    assert_stores_bit_identical(tmp_path / "dask.zarr", tmp_path / "serial.zarr")


@pytest.mark.slow
def test_a_run_killed_mid_way_resumes_byte_identical(tmp_path):
    """tablegen run killed with SIGKILL once a chunk is written (the other long chunk under way), then run again:
    the store equals one written in one go, byte for byte."""
    import os
    import signal
    import subprocess
    import sys

    import yaml
    from progresstools import tree_state, wait_while_progressing

    data = {"kind": "multiclass", "grid": {"K": [2, 3], "n_per_class": [5, 700]}, "Cs": [1, 10],
            "alphas": [0.05], "chunks": {"K": 1, "n_per_class": 1}}
    for name in ("killed", "whole"):
        store = {"store": {"url": str(tmp_path / f"{name}.zarr")}}
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(data | store))
    command = [str(Path(sys.executable).with_name("tablegen")), "run", str(tmp_path / "killed.yaml"), "--executor",
               "serial"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def one_chunk_done() -> bool:
        try:
            flags = np.asarray(zarr.open_group(str(tmp_path / "killed.zarr"), mode="r")["done"][...])
        except Exception:  # noqa: BLE001 - not created yet, or being written
            return False
        return 0 < flags.sum() < flags.size

    status = wait_while_progressing(process, tree_state(tmp_path), until=one_chunk_done, poll=0.05)
    if status is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    done = np.asarray(zarr.open_group(str(tmp_path / "killed.zarr"), mode="r")["done"][...])
    assert subprocess.run(command, capture_output=True).returncode == 0
    run(str(tmp_path / "whole.yaml"), executor="serial")
    assert_stores_bit_identical(tmp_path / "killed.zarr", tmp_path / "whole.zarr")
    assert status is not None or not done.all()  # killed before the end (or, on a fast machine, it finished)
