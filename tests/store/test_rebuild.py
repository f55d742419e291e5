"""A store whose manifest lost its record of what was written: every refusal names the command that rebuilds it;
``tablegen repair STORE --rebuild-manifest`` rebuilds it only where the metadata, coordinates and root attributes
match the config the store records (else it names what differs, says to re-create the store, and writes nothing);
damaged data chunks are named and left to the resume, which then recomputes exactly them (the undamaged regions are
kept); a rebuilt store verifies, answers bit for bit as the intact store did, and a resume finishes it without
recomputing a written cell.  The reference is the same job run without damage.
"""

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
from tablegen.errors import StoreIntegrityError

pytestmark = pytest.mark.slow

LOOKUP = ["lookup", "auc", "--P", "10", "--N", "16", "--C", "10", "--alpha", "0.05", "--method", "table"]
CV = "critical_value/c/0/0/0/1/1"


def _config(store, **shard):
    return small_config(store, grid={"P": [5, 10], "N": [8, 16]}, replicates=2000, seed=11,
                        metrics=["auc", "best_accuracy"], Cs=[10], alphas=[0.01, 0.05], chunks={"P": 1, "N": 1},
                        **shard)


class _Stop(Exception):
    pass


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("rebuild") / "ref.zarr"
    run(_config(store), executor="serial")
    return store


#: A sharded store (schema 4: shards of 2 x 1 chunks, one object per task and array) of the same job.
SHARDED = {"shard": {"P": 2, "N": 1}}


@pytest.fixture(scope="module")
def sharded(tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("rebuild") / "ref.zarr"
    run(_config(store, **SHARDED), executor="serial")
    return store


def _lose_record(store: Path) -> None:
    document = json.loads((store / "manifest/zarr.json").read_text())
    del document["attributes"]["created"]
    (store / "manifest/zarr.json").write_text(json.dumps(document))


def _files(store: Path) -> dict:
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def _rebuild_command(store: Path) -> str:
    return f"tablegen repair {store} --rebuild-manifest"


def _lose_document(store: Path) -> None:
    (store / "manifest/zarr.json").unlink()


@pytest.mark.parametrize("lose", [_lose_record, _lose_document], ids=["record lost", "manifest document deleted"])
def test_a_lost_record_is_refused_naming_the_rebuild_then_rebuilt_bit_for_bit(lose, reference, tmp_path, capsys):
    store = tmp_path / "d.zarr"
    shutil.copytree(reference, store)
    lose(store)
    before = _files(store)

    assert main(["verify", str(store)]) == 3
    assert _rebuild_command(store) in capsys.readouterr().out
    assert main([*LOOKUP, "--table", str(store)]) == 3
    assert _rebuild_command(store) in capsys.readouterr().err
    with pytest.raises(StoreIntegrityError, match="--rebuild-manifest"):
        run(_config(store), executor="serial")
    assert _files(store) == before  # nothing written, nothing deleted

    assert main(["repair", str(store), "--rebuild-manifest", "--dry-run"]) == 0
    assert _files(store) == before
    assert main(["repair", str(store), "--rebuild-manifest"]) == 0
    assert "4 written regions (28 chunks) match their digests" in capsys.readouterr().out
    assert main(["verify", str(store)]) == 0
    capsys.readouterr()
    assert main([*LOOKUP, "--table", str(store)]) == 0
    answer = capsys.readouterr().out
    assert main([*LOOKUP, "--table", str(reference)]) == 0
    assert answer == capsys.readouterr().out.replace(str(reference), str(store))
    assert_stores_bit_identical(store, reference)  # the manifest's document too, byte for byte


@pytest.mark.parametrize("layout", [{}, SHARDED], ids=["one object per chunk", "sharded"])
def test_an_interrupted_store_rebuilt_resumes_without_recomputing_written_cells(layout, reference, sharded,
                                                                                 tmp_path):
    store = tmp_path / "d.zarr"

    def stop_after_two(done, total, chunk):
        if chunk is not None and done >= 2:
            raise _Stop

    with pytest.raises(_Stop):
        run(_config(store, **layout), executor="serial", progress=stop_after_two)
    written = int(np.asarray(zarr.open_group(str(store), mode="r")["done"][...]).sum())
    assert written == 2
    _lose_record(store)
    assert main(["repair", str(store), "--rebuild-manifest"]) == 0

    summary = run(_config(store, **layout), executor="serial")
    assert summary.complete and summary.cells_computed == summary.cells - written  # written cells: none again
    assert_stores_bit_identical(store, sharded if layout else reference)


def test_a_sharded_store_with_a_lost_record_is_rebuilt_bit_for_bit_even_beside_a_flipped_shard(sharded,
                                                                                                   tmp_path,
                                                                                                   capsys):
    store, damaged = tmp_path / "d.zarr", tmp_path / "e.zarr"
    for copy in (store, damaged):
        shutil.copytree(sharded, copy)
        _lose_record(copy)
    assert main(["repair", str(store), "--rebuild-manifest"]) == 0
    assert "4 written regions (28 chunks) match their digests" in capsys.readouterr().out
    assert main(["verify", str(store)]) == 0
    assert_stores_bit_identical(store, sharded)

    _flip(damaged, "critical_value/c/0/0/0/0/1")  # the shard of P 5, 10 x N 16
    assert main(["repair", str(damaged), "--rebuild-manifest"]) == 3  # record rebuilt; the shard left to the run
    out = capsys.readouterr().out
    assert "critical_value/c/0/0/0/0/1[" in out and f"tablegen run CONFIG --store {damaged}" in out, out
    summary = run(_config(damaged, **SHARDED), executor="serial")  # the command named gets to the end
    assert summary.cells_computed == 1  # the damaged inner chunk's cell only (its task rewrites the shard)
    assert_stores_bit_identical(damaged, sharded)


def _flip(store: Path, key: str = CV) -> None:
    data = bytearray((store / key).read_bytes())
    data[len(data) // 2] ^= 0x10
    (store / key).write_bytes(bytes(data))


def _edit(key: str, edit):
    def damage(store: Path) -> None:
        document = json.loads((store / key).read_text())
        edit(document)
        (store / key).write_text(json.dumps(document))
    return damage


def _rewrite_P(store: Path) -> None:
    zarr.open_group(str(store), mode="r+")["P"][1] = 11


#: damage to data (besides the lost record) -> what the rebuild names (it rebuilds the record, the run the data)
DATA_DAMAGE = {
    "a data chunk's bytes flipped": (_flip, f"chunk {CV}: cannot be decoded"),
    "a data chunk deleted": (lambda s: (s / CV).unlink(), f"chunk {CV}: is missing"),
    "a data chunk from another region": (lambda s: shutil.copyfile(s / "critical_value/c/0/0/0/0/0", s / CV),
                                         f"chunk {CV}: holds other values"),
}


@pytest.mark.parametrize("kind", DATA_DAMAGE)
def test_a_lost_record_beside_damaged_data_is_rebuilt_and_the_run_it_names_recomputes_only_the_damage(
        kind, reference, tmp_path, capsys):
    damage, named = DATA_DAMAGE[kind]
    store = tmp_path / "d.zarr"
    shutil.copytree(reference, store)
    _lose_record(store)
    damage(store)
    assert main(["repair", str(store), "--rebuild-manifest"]) == 3  # rebuilt, but still damaged: exit 3
    out = capsys.readouterr().out
    assert "manifest record rebuilt" in out and named in out and f"tablegen run CONFIG --store {store}" in out, out
    summary = run(_config(store), executor="serial")
    assert summary.cells_computed == 1  # the damaged chunk's cell (P 10, N 16) only
    assert main(["verify", str(store)]) == 0
    assert_stores_bit_identical(store, reference)


#: damage to metadata (besides the lost record) -> what the refusal names
DAMAGE = {
    "fill value edited": (_edit("critical_value/zarr.json", lambda d: d.update(fill_value=0.0)),
                          "critical_value: metadata (zarr.json) differs"),
    "coordinate P rewritten": (_rewrite_P, "P: coordinate values differ from the config's grid"),
    "R edited": (_edit("zarr.json", lambda d: d["attributes"].update(replicates=10)), "root attribute replicates"),
    "title edited": (_edit("zarr.json", lambda d: d["attributes"].update(title="mine")), "root attribute title"),
    "chain digest edited": (_edit("zarr.json", lambda d: d["attributes"].update(manifest_sha256="0" * 64)),
                            "does not give the manifest the digest its root recorded"),
    "consolidated record edited": (_edit("manifest/zarr.json", lambda d: d["attributes"]["chunks"].update(
        {CV: "00" * 32})), "the consolidated record of the chunks disagrees"),
}


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_rebuild_over_damage_is_refused_naming_it_and_writes_nothing(kind, reference, tmp_path, capsys):
    damage, named = DAMAGE[kind]
    store = tmp_path / "d.zarr"
    shutil.copytree(reference, store)
    _lose_record(store)
    damage(store)
    before = _files(store)
    assert main(["repair", str(store), "--rebuild-manifest"]) == 3
    err = capsys.readouterr().err
    assert "its manifest record was not rebuilt (nothing was written)" in err and named in err, err
    assert "re-create the store" in err, err  # a way further: the refusal names it
    assert _files(store) == before and not Path(f"{store}.lock").exists()


def test_a_store_whose_record_is_present_is_not_rebuilt(reference, capsys):
    before = _files(reference)
    assert main(["repair", str(reference), "--rebuild-manifest"]) == 2
    assert "nothing to rebuild" in capsys.readouterr().err
    assert _files(reference) == before
