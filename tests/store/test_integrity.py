"""Store integrity: damage to a chunk, a done flag or metadata is detected and named; lookups refuse the
damaged cells; a resume recomputes exactly the damaged chunks, bit for bit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import zarr
from jobtools import assert_stores_bit_identical, small_config

from tablegen.batch.job import run
from tablegen.cli.main import main
from tablegen.errors import StoreError, StoreIntegrityError
from tablegen.lookup.table import open_table
from tablegen.store.zarr_store import check_integrity, migrate_store, open_store

#: Region (1, 0) of the small job (chunks 2 x 2): P 15, 20 x N 8, 16.
CHUNK = "critical_value/c/0/0/0/1/0"


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    config = small_config(tmp_path_factory.mktemp("integrity") / "ref.zarr")
    run(config, executor="serial")
    return config


@pytest.fixture
def damaged(reference, tmp_path):
    """A fresh copy of the finished reference store, to damage."""
    shutil.copytree(reference.store_url, tmp_path / "d.zarr")
    return small_config(tmp_path / "d.zarr")


def _flip_bit(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))


DAMAGE = {
    "delete": (CHUNK, lambda p: p.unlink(), "is missing"),
    "truncate": (CHUNK, lambda p: p.write_bytes(p.read_bytes()[:9]), "cannot be decoded"),
    "bit flip": (CHUNK, _flip_bit, "cannot be decoded (ValueError: Stored and computed checksum do not match"),
    "tail chunk deleted": ("tail_quantile/c/0/0/1/0", lambda p: p.unlink(), "is missing"),
    "done flags deleted": ("done/c/1/0", lambda p: p.unlink(), "is missing"),
}


@pytest.mark.parametrize("kind", DAMAGE)
def test_damaged_chunk_is_named_refused_by_lookups_and_repaired_bit_for_bit(kind, reference, damaged, capsys):
    key, damage, what = DAMAGE[kind]
    damage(Path(damaged.store_url) / key)
    report = check_integrity(damaged.store_url)
    assert not report.ok and not report.fatal and report.regions == {(1, 0)}
    assert any(p.chunk == key and what in p.what for p in report.problems), [str(p) for p in report.problems]
    assert main(["verify", damaged.store_url]) == 3
    out = capsys.readouterr().out
    assert f"chunk {key}: {what}" in out and "(cells P 15..20 x N 8..16)" in out

    table = open_table(damaged.store_url, allow_incomplete=True)
    with pytest.raises(StoreIntegrityError, match=rf"damaged cell: .*chunk {key}"):
        if key.startswith("tail"):
            table.p_value("auc", 15, 8, C=10, score=0.9)
        else:
            table.critical_value("auc", 20, 16, C=10)
    assert np.isfinite(float(table.critical_value("auc", 5, 8, C=10)))  # undamaged cells still answer
    if key.startswith("done"):  # a lost done flag is not a finished cell: info says the store is damaged
        assert main(["info", damaged.store_url]) == 0
        assert "DAMAGED (marked complete" in capsys.readouterr().out

    summary = run(damaged, executor="serial")
    assert summary.cells_computed == 4 and summary.complete  # exactly the damaged chunk's cells
    assert check_integrity(damaged.store_url).ok
    assert_stores_bit_identical(damaged.store_url, reference.store_url)


def test_cli_lookup_in_a_damaged_cell_exits_3_naming_the_chunk(damaged, capsys):
    _flip_bit(Path(damaged.store_url) / CHUNK)
    code = main(["test", "auc", "0.9", "--P", "20", "--N", "16", "--C", "10", "--method", "table",
                 "--table", damaged.store_url])
    err = capsys.readouterr().err
    assert code == 3 and f"chunk {CHUNK} cannot be decoded" in err


def _edit_json(path: Path, edit) -> None:
    meta = json.loads(path.read_text())
    edit(meta)
    path.write_text(json.dumps(meta))


@pytest.mark.parametrize("target, edit, named", [
    ("critical_value/zarr.json", lambda m: m.update(fill_value=0.0), "critical_value: metadata (zarr.json) differs"),
    ("zarr.json", lambda m: m["attributes"].update(replicates=10), "root attributes differ from what was written: "
                                                                   "replicates"),
    ("P/zarr.json", lambda m: m.update(shape=[3]), "P: metadata (zarr.json) differs"),
])
def test_edited_metadata_is_named_and_refused_on_resume(damaged, target, edit, named, capsys):
    _edit_json(Path(damaged.store_url) / target, edit)
    report = check_integrity(damaged.store_url)
    assert report.fatal and any(named in str(p) for p in report.problems), [str(p) for p in report.problems]
    assert main(["verify", damaged.store_url]) == 3
    assert "re-create the store" in capsys.readouterr().out
    if target != "zarr.json":  # an edited config attribute is already refused as another config
        with pytest.raises(StoreIntegrityError, match="damaged beyond a resume"):
            run(damaged, executor="serial")


def test_unreadable_metadata_is_a_message_not_a_traceback(damaged, capsys):
    (Path(damaged.store_url) / "critical_value" / "zarr.json").write_bytes(b"\xff{not json")
    assert main(["info", damaged.store_url]) == 3
    assert "metadata cannot be read" in capsys.readouterr().err
    assert main(["verify", damaged.store_url]) == 3
    assert "critical_value: metadata cannot be read" in capsys.readouterr().out


def test_corrupted_manifest_entry_recomputes_its_region(reference, damaged):
    _flip_bit(Path(damaged.store_url) / "manifest" / "sha256" / "c" / "0" / "1" / "0" / "0")
    report = check_integrity(damaged.store_url)
    assert report.regions == {(0, 1)} and "manifest entry cannot be decoded" in str(report.problems[0])
    assert run(damaged, executor="serial").cells_computed == 2  # region (0, 1): P 5, 10 x N 24
    assert_stores_bit_identical(damaged.store_url, reference.store_url)


def test_no_op_rerun_rewrites_nothing(damaged):
    before = (Path(damaged.store_url) / "zarr.json").read_bytes()
    assert run(damaged, executor="serial").cells_computed == 0
    assert (Path(damaged.store_url) / "zarr.json").read_bytes() == before


def _as_version_1(config, path: Path) -> None:
    """Rewrite a finished store as a schema-1 store: plain zstd chunks, all-fill chunks absent, no manifest."""
    group = zarr.open_group(config.store_url, mode="r")
    old = zarr.open_group(str(path), mode="w", zarr_format=3)
    old.attrs.update({**group.attrs.asdict(), "schema_version": 1})
    for name in group.array_keys():
        source = group[name]
        target = old.create_array(name, shape=source.shape, chunks=source.chunks, dtype=source.metadata.data_type,
                                  fill_value=source.fill_value, dimension_names=source.metadata.dimension_names,
                                  attributes=source.attrs.asdict())
        target[...] = source[...]


def test_migration_keeps_every_value_and_adds_checksums(reference, tmp_path):
    old = tmp_path / "v1.zarr"
    _as_version_1(reference, old)
    before = {name: np.asarray(a[...]) for name, a in zarr.open_group(str(old), mode="r").arrays()}
    assert check_integrity(str(old)).unchecked.startswith("schema version 1")
    with pytest.raises(StoreError, match="schema version 1: no checksums or manifest.*allow_unverified=True"):
        open_table(str(old))
    with pytest.warns(UserWarning, match="read as it is"):  # version 1 answers lookups only when asked to
        assert open_table(str(old), allow_unverified=True).critical_value("auc", 5, 8, C=10).value
    assert migrate_store(str(old)) is True and migrate_store(str(old)) is False
    after = zarr.open_group(str(old), mode="r")
    for name, values in before.items():
        assert np.array_equal(np.asarray(after[name][...]), values, equal_nan=values.dtype.kind == "f"), name
        if values.dtype.kind == "f":
            assert np.asarray(after[name][...]).tobytes() == values.tobytes(), name
    report = check_integrity(str(old))
    assert report.ok and report.chunks_checked == 4 * 7
    assert open_store(str(old)).attrs["schema_version"] == 3
    assert [c["name"] for c in after["critical_value"].metadata.to_dict()["codecs"]] == ["bytes", "zstd", "crc32c"]
