"""The store's last dead ends: every refusal says what the store is and names a command that gets further (and
that command, run, does); a store the user names is always checked; damage a lookup steps around is reported.

Each dead end a damaged store once led to is a test here, on a tiny store (two cells, R = 200) copied per test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import zarr
from jobtools import assert_store_values_identical, small_config

import tablegen
from tablegen.batch.job import run
from tablegen.cli.main import main
from tablegen.errors import StoreError, StoreIntegrityError
from tablegen.lookup.table import open_table
from tablegen.store.integrity import check_integrity
from tablegen.store.migrate import migrate_store
from tablegen.store.schema import CREATING_SUFFIX

SHARDED = {"shard": {"P": 2, "N": 1}}


def _config(store, **layout):
    return small_config(store, grid={"P": [5, 10], "N": [20]}, replicates=200, metrics=["auc", "average_precision"],
                        Cs=[10], alphas=[0.05], chunks={"P": 1, "N": 1}, **layout)


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("dead-ends")
    built = {}
    for name, layout in (("unsharded", {}), ("sharded", SHARDED)):
        built[name] = base / name / "t.zarr"
        run(_config(built[name], **layout), executor="serial")
    return built


def _copy(stores, tmp_path, name="unsharded") -> Path:
    store = tmp_path / "t.zarr"
    shutil.copytree(stores[name], store)
    return store


def _files(store: Path) -> dict:
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def _set_root(store: Path, **changes) -> None:
    document = json.loads((store / "zarr.json").read_text())
    document["attributes"].update(changes)
    (store / "zarr.json").write_text(json.dumps(document))


# -- a migration never blesses a store whose layout or manifest does not match the schema it claims ----------

def test_migrate_refuses_a_sharded_store_whose_root_claims_schema_1_and_writes_nothing(stores, tmp_path):
    store = _copy(stores, tmp_path, "sharded")
    _set_root(store, schema_version=1)
    before = _files(store)
    with pytest.raises(StoreIntegrityError, match=r"sharded \(schema version 4's layout\), but its root says "
                                                  r"schema_version = 1.*re-create the store"):
        migrate_store(str(store))
    assert _files(store) == before
    assert main(["verify", str(store)]) == 3  # the tampering stays visible


def test_migrate_refuses_a_root_that_disagrees_with_its_manifest(stores, tmp_path):
    store = _copy(stores, tmp_path)
    _set_root(store, schema_version=2)  # the manifest records 3 and the root its chain: not a migration under way
    before = _files(store)
    with pytest.raises(StoreIntegrityError, match="cannot be migrated"):
        migrate_store(str(store))
    assert _files(store) == before


# -- a store whose root document was deleted is a damaged store, said so, with what to do ---------------------

@pytest.mark.parametrize("name", ["unsharded", "sharded"])
def test_a_deleted_root_document_is_named_as_damage_by_verify_run_and_lookups(name, stores, tmp_path, capsys):
    store = _copy(stores, tmp_path, name)
    (store / "zarr.json").unlink()
    before = _files(store)
    assert main(["verify", str(store)]) == 3
    err = capsys.readouterr().err
    assert "is damaged: its root metadata (zarr.json) is missing" in err and "re-create it" in err, err
    config = _config(store, **(SHARDED if name == "sharded" else {}))
    with pytest.raises(StoreIntegrityError, match="root metadata .zarr.json. is missing") as refused:
        run(config, executor="serial")
    assert "already contains data" not in str(refused.value)
    with pytest.raises(StoreIntegrityError, match=r"table='.*': store .* is damaged"):
        tablegen.critical_value("auc", 10, 20, C=10, table=str(store))
    assert _files(store) == before
    shutil.rmtree(store)  # what the message says: remove it, then run
    assert run(config, executor="serial").complete
    assert_store_values_identical(store, stores[name])


# -- a store that lost its manifest: no "the next run writes it again" loop -----------------------------------

def test_a_store_without_its_manifest_is_refused_naming_a_re_creation_that_works(stores, tmp_path, capsys):
    store = _copy(stores, tmp_path)
    shutil.rmtree(store / "manifest")
    config = _config(store)
    for _ in range(2):  # the same answer each time, and not "the next run writes it again"
        with pytest.raises(StoreIntegrityError) as refused:
            run(config, executor="serial")
        assert "re-create it" in str(refused.value) and "writes it again" not in str(refused.value)
    assert main(["verify", str(store)]) == 3
    assert "re-create the store" in capsys.readouterr().out
    assert main(["info", str(store)]) == 3
    assert "`tablegen verify` names what is damaged" in capsys.readouterr().err  # which says: re-create
    shutil.rmtree(store)
    assert run(config, executor="serial").complete and check_integrity(str(store)).ok


# -- one answer for a Zarr group that is not a tablegen store --------------------------------------------------

def test_verify_info_and_lookups_give_one_answer_for_a_zarr_group_that_is_not_a_store(tmp_path, capsys):
    other = tmp_path / "other.zarr"
    zarr.open_group(str(other), mode="w").attrs["title"] = "someone else's"
    answers = []
    for command in (["verify", str(other)], ["info", str(other)],
                    ["lookup", "auc", "--P", "10", "--N", "20", "--C", "10", "--method", "table", "--table",
                     str(other)]):
        code = main(command)
        answers.append((code, "is not a tablegen store (attribute schema = None)" in capsys.readouterr().err))
    assert answers == [(2, True)] * 3


# -- an interrupted creation is unfinished at every moment: the root written without its attributes -----------

def test_a_root_written_without_its_attributes_beside_the_marker_is_an_unfinished_template(tmp_path, capsys):
    store = tmp_path / "t.zarr"
    zarr.open_group(str(store), mode="w")  # what to_zarr writes first: a root without attributes
    Path(f"{store}{CREATING_SUFFIX}").write_text("{}")
    assert main(["info", str(store)]) == 0
    assert "unfinished template" in capsys.readouterr().out
    with pytest.raises(StoreError, match="unfinished template"):
        open_table(str(store), allow_incomplete=True)
    assert run(_config(store), executor="serial").complete
    assert not Path(f"{store}{CREATING_SUFFIX}").exists() and check_integrity(str(store)).ok


# -- a store the user names is checked, and damage a lookup steps around is reported ---------------------------

@pytest.mark.parametrize("kind", ["missing", "not a store"])
def test_a_table_path_that_is_not_a_store_is_refused_even_where_the_answer_is_exact(kind, tmp_path):
    path = tmp_path / "none.zarr"
    if kind == "not a store":
        path.mkdir()
        (path / "notes.txt").write_text("mine")
    assert tablegen.critical_value("auc", 10, 20, C=10).method == "exact"  # the route that ignored the path
    for call in (lambda: tablegen.critical_value("auc", 10, 20, C=10, table=str(path)),
                 lambda: tablegen.p_value("auc", P=10, N=20, C=10, score=0.8, table=path),
                 lambda: tablegen.significance_test("auc", P=10, N=20, C=10, alpha=0.05, score=0.8, table=str(path))):
        with pytest.raises(StoreError, match=r"^table=.*does not exist"):
            call()


def test_a_damaged_cell_answered_from_another_source_warns_and_notes_the_damage(stores, tmp_path):
    store = _copy(stores, tmp_path)
    (store / "done/c/1/0").unlink()  # the cell P 10, N 20, the one asked below
    intact = tablegen.significance_test("average_precision", P=10, N=20, C=10, alpha=0.05, score=0.8,
                                        table=str(stores["unsharded"]))
    assert not intact.notes
    with pytest.warns(UserWarning, match=r"damaged .*done/c/1/0 is missing") as caught:
        result = tablegen.significance_test("average_precision", P=10, N=20, C=10, alpha=0.05, score=0.8,
                                            table=str(store))
    assert caught[0].filename == __file__  # the warning points at the caller
    assert result.method in ("exact", "bracket") and result.notes and "done/c/1/0" in result.notes[0]
    with pytest.warns(UserWarning):
        answer = tablegen.critical_value("average_precision", 10, 20, C=10, alpha=0.05, table=str(store))
    assert "done/c/1/0" in answer.notes[0] and answer.to_dict()["notes"] == list(answer.notes)
    with pytest.raises(StoreIntegrityError, match="done/c/1/0"):  # asked of the table alone: refused, as before
        tablegen.critical_value("average_precision", 10, 20, C=10, alpha=0.05, method="table", table=str(store))
