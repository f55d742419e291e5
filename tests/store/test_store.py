"""The Zarr store: its schema, aligned writes, done flags after data, lock, resume refusals."""

from __future__ import annotations

import dataclasses
import json
import os
import socket

import numpy as np
import pytest
import xarray as xr
import zarr
from jobtools import assert_stores_bit_identical, small_config

from tablegen.batch.job import create_job_store, run
from tablegen.batch.plan import Chunk
from tablegen.batch.tasks import compute_chunk
from tablegen.errors import StoreError
from tablegen.store import zarr_store as store
from tablegen.store.schema import UNSHARDED_VERSION
from tablegen.store.zarr_store import StoreLock


@pytest.fixture
def config(tmp_path):
    return small_config(tmp_path / "t.zarr")


def test_template_opens_with_xarray_in_the_design_schema(config):
    create_job_store(config, command="tablegen run test.yaml")
    ds = xr.open_zarr(config.store_url, consolidated=False)
    assert dict(ds.sizes) == {"metric": 4, "alpha": 2, "C": 2, "P": 4, "N": 3, "tail_probability": 19}
    for name in ("critical_value", "ci_low", "ci_high", "exact_critical_value"):
        assert ds[name].dims == ("metric", "alpha", "C", "P", "N")
        assert ds[name].encoding["chunks"] == (4, 2, 2, 2, 2)
    assert ds.tail_quantile.dims == ("metric", "tail_probability", "P", "N")
    assert ds.done.dims == ds.replicates.dims == ("P", "N")
    assert not ds.done.values.any() and np.isnan(ds.critical_value.values).all()
    assert list(ds.metric.values) == ["auc", "best_accuracy", "best_f1", "tp_at_3"]
    attrs = ds.attrs
    assert attrs["schema"] == store.SCHEMA_NAME and attrs["schema_version"] == UNSHARDED_VERSION  # no shard set
    assert attrs["config_hash"] == config.result_hash and attrs["complete"] is False
    assert attrs["replicates"] == 40_000 and attrs["root_seed"] == 11 and attrs["rng"].startswith("xoshiro256**")
    assert attrs["command"] == "tablegen run test.yaml" and attrs["tablegen_version"] and attrs["created"]
    assert json.loads(attrs["config"])["P"] == [5, 10, 15, 20]
    with pytest.raises(StoreError, match="already exists"):
        create_job_store(config)


def test_fsspec_url_with_storage_options_and_none_recorded():
    """A store at an fsspec URL (memory:// here) takes storage options; they are not recorded, as
    they may hold credentials."""
    config = dataclasses.replace(small_config("memory://tablegen-test/s.zarr"),
                                 storage_options={"skip_instance_cache": False})
    assert run(config, executor="serial").complete
    ds = store.open_store(config.store_url, config.storage_options)
    assert "storage_options" not in json.loads(ds.attrs["config"])
    assert ds.done.values.all() and np.isfinite(ds.critical_value.values).all()


def test_misaligned_region_is_refused_before_writing(config):
    create_job_store(config)
    arrays = compute_chunk(config, Chunk(0, 2, 0, 2))
    with pytest.raises(ValueError, match=r"region P\[1:3\] is not aligned with Zarr chunks of 2"):
        store.write_chunk(config.store_url, (slice(1, 3), slice(0, 2)), arrays)
    assert not store.done_mask(config.store_url).any()
    assert not os.path.exists(os.path.join(config.store_url, "critical_value", "c"))


def test_a_task_that_fails_mid_write_leaves_its_cells_not_done(config, monkeypatch):
    """Fault injection: the tail_quantile write of the second chunk raises after critical_value etc.
    were written.  Its cells stay not done; resuming rewrites them and the store equals a clean run."""
    real_setitem, calls = zarr.Array.__setitem__, []

    def failing_setitem(self, selection, value):
        if self.basename == "tail_quantile":
            calls.append(selection)
            if len(calls) == 2:
                raise OSError("disk full (injected)")
        return real_setitem(self, selection, value)

    monkeypatch.setattr(zarr.Array, "__setitem__", failing_setitem)
    with pytest.raises(OSError, match="injected"):
        run(config, executor="serial")
    done = store.done_mask(config.store_url)
    written = np.isfinite(zarr.open_group(config.store_url)["critical_value"][0, 0, 0])
    assert done.sum() == 4  # the first chunk (the plan runs the most expensive first) is done
    assert (written & ~done).sum() == 4  # the failed chunk's data is there, but not marked done
    assert not store.open_store(config.store_url).attrs["complete"]
    monkeypatch.setattr(zarr.Array, "__setitem__", real_setitem)
    summary = run(config, executor="serial")
    assert summary.cells_computed == 8 and summary.complete
    reference = small_config(config.store_url + ".ref")
    run(reference, executor="serial")
    assert_stores_bit_identical(config.store_url, reference.store_url)


def test_second_writer_is_refused_naming_the_holder(config):
    with StoreLock(config.store_url):
        with pytest.raises(StoreError, match=rf"locked by another tablegen run \(pid {os.getpid()} on "
                                             rf"{socket.gethostname()}"):
            run(config, executor="serial")
    assert not os.path.exists(config.store_url)  # refused before anything was written


def test_lock_of_a_dead_process_on_this_host_is_taken_over(config, caplog):
    lock_path = config.store_url + store.LOCK_SUFFIX
    with open(lock_path, "w") as f:
        json.dump({"token": "x", "host": socket.gethostname(), "pid": 2**22 + 12345, "started": "then"}, f)
    run(config, executor="serial")
    assert "that process no longer exists" in caplog.text
    assert not os.path.exists(lock_path)


def test_lock_from_another_host_needs_break_lock(config):
    lock_path = config.store_url + store.LOCK_SUFFIX
    with open(lock_path, "w") as f:
        json.dump({"token": "x", "host": "elsewhere", "pid": 1, "user": "u", "started": "then"}, f)
    with pytest.raises(StoreError, match="on elsewhere.*rerun with --break-lock"):
        run(config, executor="serial")
    assert run(config, executor="serial", break_lock=True).complete


def test_resuming_with_another_config_is_refused_naming_the_fields(config):
    run(config, executor="serial")
    other = dataclasses.replace(config, replicates=50_000, seed=12)
    with pytest.raises(StoreError, match="different config .*differing fields: replicates, seed"):
        run(other, executor="serial")
    assert store.open_store(config.store_url).attrs["replicates"] == 40_000


def test_other_schemas_and_missing_stores_are_refused(tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        store.open_store(str(tmp_path / "nothing.zarr"))
    xr.Dataset({"x": ("a", [1, 2])}).to_zarr(tmp_path / "other.zarr", zarr_format=3, consolidated=False)
    with pytest.raises(StoreError, match="is not a tablegen store"):
        store.open_store(str(tmp_path / "other.zarr"))
    config = small_config(tmp_path / "old.zarr")
    create_job_store(config)
    zarr.open_group(config.store_url, mode="r+").attrs["schema_version"] = 0
    with pytest.raises(StoreError, match="schema version 0"):
        store.open_store(config.store_url)
    with pytest.raises(StoreError, match="schema version 0"):
        run(config, executor="serial")


def test_complete_is_only_marked_when_every_cell_is_done(config):
    create_job_store(config)
    with pytest.raises(RuntimeError, match="12 cells are not done"):
        store.mark_complete(config.store_url)


def test_info_reports_provenance_completeness_and_missing_cells(config, capsys):
    from tablegen.cli.main import main

    create_job_store(config, command="tablegen run t.yaml")
    arrays = compute_chunk(config, Chunk(0, 2, 0, 2))
    store.write_chunk(config.store_url, (slice(0, 2), slice(0, 2)), arrays)
    assert main(["info", config.store_url]) == 0
    out = capsys.readouterr().out
    assert f"{config.store_url}: INCOMPLETE, 4 of 12 cells done" in out
    assert "R = 40,000 per cell, root seed 11" in out and "command: tablegen run t.yaml" in out
    assert "missing cells (P, N): (5, 24), (10, 24), (15, 8), (15, 16)" in out
    # best_f1 and best_accuracy always have exact values; AUC does at these sizes
    assert "exact values: auc 100%, best_accuracy 100%, best_f1 100%, tp_at_3 100%" in out
    assert main(["info", config.store_url, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cells_done"] == 4 and len(report["missing"]) == 8 and report["missing"][0] == [5, 24]
    assert main(["info", config.store_url + ".nothing"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_verify_reports_ci_coverage_and_flags_a_wrong_cell(config, capsys):
    from tablegen.cli.main import main

    run(config, executor="serial")
    assert main(["verify", config.store_url, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # auc, best_accuracy, best_f1 and tp_at_3 all have exact values: 4 metrics x 2 alphas x 2 Cs x 12 cells
    assert report["checked"] == 192 and report["coverage"] >= 0.9
    assert set(report["by_metric"]) == {"auc", "best_accuracy", "best_f1", "tp_at_3"}
    # corrupt one cell's Monte Carlo interval: verify must single it out as the worst, outside
    group = zarr.open_group(config.store_url, mode="r+")
    cell = (1, 0, 1, 2, 0)
    exact = group["exact_critical_value"][cell]
    was_inside = bool(group["ci_low"][cell] <= exact <= group["ci_high"][cell])
    for name, value in (("critical_value", 0.2), ("ci_low", 0.19), ("ci_high", 0.21)):
        values = group[name][...]
        values[1, 0, 1, 2, 0] = value  # best_accuracy, alpha 0.01, C 100, P 15, N 8
        group[name][...] = values
    assert main(["verify", config.store_url]) == 3  # the integrity check names the three rewritten chunks
    damaged = capsys.readouterr().out
    for name in ("critical_value", "ci_low", "ci_high"):
        assert f"chunk {name}/c/0/0/0/1/0: holds other values than were written" in damaged
    assert main(["verify", config.store_url, "--worst", "3", "--no-integrity"]) == 0
    lines = capsys.readouterr().out.splitlines()
    worst = lines[lines.index("  worst (|Monte Carlo - exact| / CI half-width):") + 1]
    assert worst.split()[:9] == ["best_accuracy", "alpha", "0.01", "C", "100", "P", "15", "N", "8"]
    assert worst.endswith("OUTSIDE") and len(lines) == 1 + 4 + 1 + 3
    assert main(["verify", config.store_url, "--json", "--no-integrity"]) == 0
    corrupted = json.loads(capsys.readouterr().out)
    assert corrupted["worst"][0]["critical_value"] == 0.2 and not corrupted["worst"][0]["inside"]
    assert corrupted["inside"] == report["inside"] - was_inside and corrupted["checked"] == 192
