"""Lookups in a multi-class table: open_table recognises it, its answers equal the exact routine's, a missing cell
or a damaged region is named, and a binary lookup refuses it."""

from __future__ import annotations

import pytest

import tablegen
from tablegen.batch.config import config_from_mapping
from tablegen.batch.multiclass_job import run_multiclass
from tablegen.errors import StoreError, StoreIntegrityError, TablegenInputError
from tablegen.lookup.multiclass_table import MulticlassTable


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("multiclass") / "t.zarr"
    run_multiclass(config_from_mapping({
        "kind": "multiclass", "grid": {"K": [3, 5], "n_per_class": [4, 40]}, "Cs": [1, 100], "alphas": [0.05],
        "chunks": {"K": 1, "n_per_class": 1}, "store": {"url": str(path)}}), executor="serial")
    return str(path)


def test_open_table_recognises_a_multiclass_store(store):
    table = tablegen.open_table(store)
    assert isinstance(table, MulticlassTable) and table.K == (3, 5) and table.n_per_class == (4, 40)


@pytest.mark.parametrize("metric", ["accuracy", "kappa", "balanced_accuracy", "macro_f1"])
def test_answers_from_the_table_equal_the_exact_routine(store, metric):
    for K in (3, 5):
        for n in (4, 40):
            for C in (1, 100):
                stored = tablegen.critical_value(metric, K=K, n_per_class=n, C=C, alpha=0.05, table=store,
                                                 method="table")
                exact = tablegen.critical_value(metric, K=K, n_per_class=n, C=C, alpha=0.05, method="exact")
                assert stored.value == exact.value and stored.method == "exact" and stored.source == store
    assert tablegen.critical_value("accuracy", K=5, n_per_class=40, C=100, alpha=0.05, table=store,
                                   method="table").value == 0.3


def test_what_the_table_lacks_is_named(store):
    with pytest.raises(TablegenInputError, match=r"does not hold K = 4\b"):
        tablegen.critical_value("accuracy", K=4, n_per_class=40, C=100, alpha=0.05, table=store, method="table")
    with pytest.raises(TablegenInputError, match=r"does not hold alpha = 0.01"):
        tablegen.critical_value("accuracy", K=5, n_per_class=40, C=100, alpha=0.01, table=store, method="table")
    # auto answers exactly where the table lacks the question
    assert tablegen.critical_value("accuracy", K=4, n_per_class=40, C=100, alpha=0.05, table=store).method == "exact"


def test_a_binary_lookup_refuses_a_multiclass_table(store):
    with pytest.raises(StoreError, match="table=.*a multi-class table answers K-class questions"):
        tablegen.critical_value("auc", 20, 20, C=10, table=store)


def test_a_multiclass_lookup_refuses_a_binary_table():
    with pytest.raises(StoreError, match="table=.*is not a multi-class table"):
        tablegen.critical_value("accuracy", K=5, n_per_class=40, C=100, alpha=0.05,
                                table=tablegen.store.schema.bundled_table_path())


def test_a_damaged_region_is_named_not_read(tmp_path):
    path = tmp_path / "d.zarr"
    run_multiclass(config_from_mapping({
        "kind": "multiclass", "grid": {"K": [3], "n_per_class": [4]}, "Cs": [1], "alphas": [0.05],
        "chunks": {"K": 1, "n_per_class": 1}, "store": {"url": str(path)}}), executor="serial")
    chunk = path / "critical_hits" / "c" / "0" / "0" / "0" / "0"
    data = bytearray(chunk.read_bytes())
    data[-6] ^= 0x01
    chunk.write_bytes(bytes(data))
    with pytest.raises(StoreIntegrityError, match="K = 3, n_per_class = 4 is damaged"):
        tablegen.critical_value("accuracy", K=3, n_per_class=4, C=1, alpha=0.05, table=str(path), method="table")


def _small_store(path) -> str:
    run_multiclass(config_from_mapping({
        "kind": "multiclass", "grid": {"K": [3, 5], "n_per_class": [4, 40]}, "Cs": [1, 100], "alphas": [0.05, 0.01],
        "chunks": {"K": 1, "n_per_class": 1}, "store": {"url": str(path)}}), executor="serial")
    return str(path)


def test_multiclass_table_is_public_and_critical_value_takes_it(store):
    table = tablegen.MulticlassTable(store)
    assert tablegen.MulticlassTable is MulticlassTable and "MulticlassTable" in dir(tablegen)
    answer = tablegen.critical_value("accuracy", K=5, n_per_class=40, C=100, alpha=0.05, table=table, method="table")
    assert answer.value == 0.3 and answer.source == store
    assert table.critical_value("accuracy", 5, 40, C=100, alpha=0.05) == 0.3
    assert table.holds(5, 40, C=100, alpha=0.05) and not table.holds(5, 40, C=10, alpha=0.05)
    with pytest.raises(TablegenInputError, match=r"\balpha\b"):
        table.holds(5, 40, C=100, alpha="x")
    with pytest.raises(TablegenInputError, match="url"):
        tablegen.MulticlassTable(None)
    with pytest.raises(TablegenInputError, match="storage_options"):
        tablegen.MulticlassTable(store, storage_options=[1])


def test_an_edited_coordinate_is_refused_on_open_not_answered(tmp_path):
    """Regression: an alpha rewritten from 0.01 to 0.02 was answered with the 0.01 value (the coordinates were not
    checked against the manifest when the table opened)."""
    import zarr

    path = _small_store(tmp_path / "c.zarr")
    zarr.open_group(path, mode="r+")["alpha"][...] = [0.05, 0.02]
    with pytest.raises(StoreIntegrityError, match="coordinate alpha differs from the manifest's record"):
        tablegen.critical_value("accuracy", K=5, n_per_class=40, C=100, alpha=0.02, table=path, method="table")
    with pytest.raises(StoreIntegrityError, match="coordinate alpha differs"):
        tablegen.open_table(path)


def test_lost_done_flags_of_a_complete_store_are_damage(tmp_path):
    """A complete store whose done flags were cleared is damaged (verify names the region; a lookup there refuses),
    and a resume recomputes it."""
    import zarr

    from tablegen.store.multiclass_store import check_multiclass_store

    path = _small_store(tmp_path / "f.zarr")
    zarr.open_group(path, mode="r+")["done"][1, 1] = False
    report = check_multiclass_store(path)
    assert report.regions == {(1, 1)} and "lost its done flags" in report.problems[0]
    with pytest.raises(StoreIntegrityError, match="K = 5, n_per_class = 40 is damaged.*lost its done flags"):
        tablegen.critical_value("accuracy", K=5, n_per_class=40, C=100, alpha=0.05, table=path, method="table")
    config = config_from_mapping({
        "kind": "multiclass", "grid": {"K": [3, 5], "n_per_class": [4, 40]}, "Cs": [1, 100], "alphas": [0.05, 0.01],
        "chunks": {"K": 1, "n_per_class": 1}, "store": {"url": path}})
    assert run_multiclass(config, executor="serial").cells_computed == 1
    assert check_multiclass_store(path).ok
