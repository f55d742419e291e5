"""CF-1.10 / ACDD-1.3 attributes on every store: coordinates' long_name and units, Conventions, title,
summary, references, source, and a history that a resume appends to; the bundled table carries them too
(a metadata-only update: its values and integrity unchanged)."""

from __future__ import annotations

import datetime
import json
import shutil
from pathlib import Path

import pytest
import xarray as xr
import zarr
from jobtools import assert_store_values_identical, assert_stores_bit_identical, small_config

from tablegen._version import __version__
from tablegen.batch import tasks
from tablegen.batch.job import run
from tablegen.cli.main import main
from tablegen.errors import StoreIntegrityError
from tablegen.store.integrity import check_integrity
from tablegen.store.migrate import add_conventions, rerecord
from tablegen.store.schema import CONVENTION_ATTRIBUTES, COORDINATE_ATTRIBUTES, bundled_table_path, store_fs


def _config(store, **changes):
    return small_config(store, grid={"P": [5, 10], "N": [8, 16]}, replicates=2000, metrics=["auc", "tp_at_3"],
                        Cs=[10], alphas=[0.05], chunks={"P": 1, "N": 2}, **changes)


def _assert_conventions(ds: xr.Dataset) -> None:
    for name, wanted in COORDINATE_ATTRIBUTES.items():
        assert {k: ds[name].attrs.get(k) for k in wanted} == wanted, name
    assert ds.P.attrs["units"] == "1" and "units" not in ds.metric.attrs
    assert ds.attrs["Conventions"] == "CF-1.10, ACDD-1.3"
    for key in ("title", "summary", "references"):
        assert ds.attrs[key] == CONVENTION_ATTRIBUTES[key]
    assert "Forman" in ds.attrs["references"] and "10.1007/11564096_17" in ds.attrs["references"]
    assert ds.attrs["source"].startswith(f"tablegen {ds.attrs['tablegen_version']}: Monte Carlo")


def _history(store) -> list[str]:
    return zarr.open_group(str(store), mode="r").attrs["history"].split("\n")


def test_a_new_store_carries_cf_and_acdd_attributes(tmp_path):
    store = tmp_path / "s.zarr"
    run(_config(store), executor="serial", command="tablegen run job.yaml")
    ds = xr.open_zarr(store, consolidated=False)
    _assert_conventions(ds)
    (line,) = _history(store)
    assert line == f"{ds.attrs['created']}: tablegen run job.yaml: created (tablegen {__version__})"
    datetime.datetime.fromisoformat(line.split(": ", 1)[0])  # an ISO timestamp
    assert check_integrity(str(store)).ok


def test_a_resume_appends_to_the_history_and_a_no_op_rerun_does_not(tmp_path, monkeypatch):
    clean, resumed = tmp_path / "clean.zarr", tmp_path / "resumed.zarr"
    run(_config(clean), executor="serial")
    original = tasks.write_chunk
    calls = []

    def dies_on_the_second_chunk(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt("killed (injected)")
        return original(*args, **kwargs)

    monkeypatch.setattr(tasks, "write_chunk", dies_on_the_second_chunk)
    with pytest.raises(KeyboardInterrupt):
        run(_config(resumed), executor="serial", command="tablegen run a.yaml")
    monkeypatch.setattr(tasks, "write_chunk", original)
    assert len(_history(resumed)) == 1
    run(_config(resumed), executor="serial", command="tablegen run b.yaml")
    first, second = _history(resumed)
    assert first.endswith(f"tablegen run a.yaml: created (tablegen {__version__})")
    assert second.endswith(f"tablegen run b.yaml: resumed, 2 of 4 cells to compute (tablegen {__version__})")
    before = (resumed / "zarr.json").read_bytes()
    run(_config(resumed), executor="serial", command="tablegen run c.yaml")  # nothing to do: nothing written
    assert (resumed / "zarr.json").read_bytes() == before
    assert_stores_bit_identical(clean, resumed)  # history is a per-run attribute, like created and command
    assert check_integrity(str(resumed)).ok


def test_conventions_are_recorded_in_the_manifest_and_history_is_not(tmp_path, capsys):
    store = tmp_path / "s.zarr"
    run(_config(store), executor="serial")
    group = zarr.open_group(str(store), mode="r+")
    group.attrs.update({"history": group.attrs["history"] + "\n2030-01-01T00:00:00+00:00: edited by hand"})
    assert main(["verify", str(store), "--json"]) == 0  # history may grow
    capsys.readouterr()
    group.attrs.update({"title": "something else"})
    assert main(["verify", str(store)]) == 3
    assert "root attributes differ from what was written: title" in capsys.readouterr().out


def test_the_bundled_table_carries_them_with_its_values_and_integrity_unchanged():
    ds = xr.open_zarr(bundled_table_path(), consolidated=False)
    _assert_conventions(ds)
    created, added, migrated, detectable = ds.attrs["history"].split("\n")
    assert created == "2026-11-21T12:56:31+00:00: tablegen run configs/paper.yaml: created (tablegen 0.1.0)"
    assert "CF/ACDD attributes added" in added and "values untouched" in added
    assert "migrated to schema version 3" in migrated and "values untouched" in migrated
    assert "minimum detectable AUC added at power 0.5, 0.8, 0.9" in detectable
    assert "other values untouched" in detectable
    assert "docs/reference/store.md" in ds.attrs["references"] and "DESIGN" not in ds.attrs["references"]
    assert check_integrity(bundled_table_path()).ok
    assert add_conventions(bundled_table_path()) is False  # already there: nothing written


def _strip_conventions(store: Path) -> None:
    """Make ``store`` look written before the attributes existed (its manifest record made to match)."""
    group = zarr.open_group(str(store), mode="r+")
    attrs = {k: v for k, v in group.attrs.asdict().items() if k not in (*CONVENTION_ATTRIBUTES, "source", "history")}
    root = json.loads((store / "zarr.json").read_text())
    root["attributes"] = attrs
    (store / "zarr.json").write_text(json.dumps(root))
    for name in COORDINATE_ATTRIBUTES:
        meta = json.loads((store / name / "zarr.json").read_text())
        meta["attributes"] = {}
        (store / name / "zarr.json").write_text(json.dumps(meta))
    group = zarr.open_group(str(store), mode="r+")
    rerecord(group, *store_fs(str(store), None))
    assert check_integrity(str(store)).ok and "Conventions" not in group.attrs


def test_add_conventions_updates_an_older_store_metadata_only(tmp_path):
    store, copy = tmp_path / "s.zarr", tmp_path / "copy.zarr"
    run(_config(store), executor="serial", command="tablegen run old.yaml")
    _strip_conventions(store)
    shutil.copytree(store, copy)
    assert add_conventions(str(store)) is True
    _assert_conventions(xr.open_zarr(store, consolidated=False))
    created, added = _history(store)
    assert created.endswith(f"tablegen run old.yaml: created (tablegen {__version__})")
    assert "CF/ACDD attributes added" in added
    assert_store_values_identical(store, copy)  # every array bit for bit
    chunk_files = sorted(p.relative_to(store) for p in store.rglob("*") if p.name != "zarr.json" and p.is_file())
    assert chunk_files and all((store / p).read_bytes() == (copy / p).read_bytes() for p in chunk_files)
    assert check_integrity(str(store)).ok
    assert add_conventions(str(store)) is False


def test_add_conventions_refuses_a_damaged_store(tmp_path):
    store = tmp_path / "s.zarr"
    run(_config(store), executor="serial")
    _strip_conventions(store)
    victim = next(p for p in sorted((store / "critical_value").rglob("*")) if p.is_file() and p.name != "zarr.json")
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    before = (store / "zarr.json").read_bytes()
    with pytest.raises(StoreIntegrityError, match="cannot take new attributes"):
        add_conventions(str(store))
    assert (store / "zarr.json").read_bytes() == before  # nothing written
