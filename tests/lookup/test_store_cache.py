"""A store opens once per lookup, and finished stores are kept open across lookups — never past a rewrite."""

from __future__ import annotations

import shutil

import pytest
import xarray as xr
from jobtools import small_config

import tablegen
from tablegen.batch.job import run
from tablegen.lookup import table as table_module
from tablegen.store import reader, schema, zarr_store


def _config(store, seed):
    return small_config(store, grid={"P": [12, 13], "N": [12]}, replicates=2000, seed=seed,  # AP: Monte Carlo only
                        metrics=["average_precision"], Cs=[10], alphas=[0.05], chunks={"P": 1, "N": 1})


@pytest.fixture
def opens(monkeypatch):
    """Counts of the store openers: tablegen's zarr group opener and xarray's (which lookups never use)."""
    counts = {"open_group": 0, "open_zarr": 0}

    def counted(name, original):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return original(*args, **kwargs)
        return wrapper

    group_opener = counted("open_group", schema.open_group)
    monkeypatch.setattr(schema, "open_group", group_opener)
    monkeypatch.setattr(zarr_store, "open_group", group_opener)
    monkeypatch.setattr(reader, "open_group", group_opener)
    monkeypatch.setattr(xr, "open_zarr", counted("open_zarr", xr.open_zarr))
    monkeypatch.setattr(table_module, "_OPENED", type(table_module._OPENED)())
    return counts


def test_a_lookup_opens_its_store_once_and_repeated_lookups_reuse_it(tmp_path, opens):
    store = str(tmp_path / "s.zarr")
    run(_config(store, seed=1), executor="serial")
    opens.update(open_group=0, open_zarr=0)
    first = tablegen.critical_value("average_precision", 12, 12, C=10, alpha=0.05, method="table", table=store)
    assert opens == {"open_group": 1, "open_zarr": 0}
    for _ in range(3):
        again = tablegen.critical_value("average_precision", 12, 12, C=10, alpha=0.05, method="table", table=store)
        assert again.value == first.value
    assert opens == {"open_group": 1, "open_zarr": 0}
    assert tablegen.open_table(store) is tablegen.open_table(store, allow_incomplete=True)
    assert opens == {"open_group": 1, "open_zarr": 0}


def test_a_rewritten_store_is_read_again(tmp_path, opens):
    store, other = str(tmp_path / "s.zarr"), str(tmp_path / "other.zarr")
    run(_config(store, seed=1), executor="serial")
    run(_config(other, seed=2), executor="serial")
    before = tablegen.critical_value("average_precision", 13, 12, C=10, alpha=0.05, method="table", table=store)
    expected = tablegen.open_table(other).critical_value("average_precision", 13, 12, C=10, alpha=0.05)
    assert before.value != expected.value  # another seed, another estimate
    shutil.rmtree(store)
    shutil.copytree(other, store)  # the same path now holds another store
    after = tablegen.critical_value("average_precision", 13, 12, C=10, alpha=0.05, method="table", table=store)
    assert after.value == expected.value and after.ci_low == expected.ci_low


def test_a_store_changed_by_a_resume_is_read_again(tmp_path, opens):
    store = str(tmp_path / "s.zarr")
    config = _config(store, seed=1)
    run(config, executor="serial")
    kept = tablegen.open_table(store)
    assert tablegen.open_table(store) is kept
    from tablegen.store.integrity import clear_regions

    clear_regions(store, None, [(0, 0)])  # a repair in progress: the store is no longer complete
    with pytest.raises(tablegen.errors.StoreError, match="incomplete"):
        tablegen.open_table(store)
    assert tablegen.open_table(store, allow_incomplete=True) is not kept
    run(config, executor="serial")  # recomputed and complete again
    assert tablegen.open_table(store) is not kept


def test_unfinished_stores_and_other_storage_options_are_not_shared(tmp_path, opens):
    store = str(tmp_path / "s.zarr")
    run(_config(store, seed=1), executor="serial")
    memory = "memory://store-cache/s.zarr"
    run(_config(memory, seed=1), executor="serial")
    try:
        plain = tablegen.open_table(memory)
        assert tablegen.open_table(memory, storage_options={"skip_instance_cache": True}) is not plain
        assert tablegen.open_table(memory) is plain
    finally:
        import fsspec

        fsspec.filesystem("memory").rm("/store-cache", recursive=True)


def test_reports_open_the_store_afresh(tmp_path, opens):
    store = str(tmp_path / "s.zarr")
    run(_config(store, seed=1), executor="serial")
    kept = tablegen.open_table(store)
    fresh = tablegen.open_table(store, reuse=False)
    assert fresh is not kept and tablegen.open_table(store) is fresh  # the fresh one is kept from then on
    opens.update(open_group=0, open_zarr=0)
    from tablegen.cli.main import main

    assert main(["info", store, "--json"]) == 0
    assert opens["open_zarr"] == 1
