"""A run killed at any moment leaves a store the next run finishes: deterministic kills, no timing.

Every write of a local store goes through zarr's ``LocalStore`` (each one a whole file, written aside and
renamed into place) or is the creation marker beside it.  The recording run below serialises those writes and
copies the store (and its marker) after each one: each copy is exactly what a ``kill -9`` right after that write
leaves on disk.  From every copy a resume must finish the job, and the store must then hold, bit for bit, what
an uninterrupted run writes, and pass its integrity check.  This covers every moment of creation (the root
document written before its attributes, the manifest's header, chain and record), every task's data, entry and
done flags, and completion (the manifest's list of chunks, then the root's ``complete``, ``completed`` and chain
digest, which must be one write: a kill between them once left a store marked complete beside its old digest).
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from jobtools import assert_store_values_identical, small_config
from zarr.storage import LocalStore

from tablegen.batch.job import run
from tablegen.store import zarr_store
from tablegen.store.integrity import check_integrity
from tablegen.store.schema import CREATING_SUFFIX

pytestmark = pytest.mark.slow  # about 60 resumes per layout

#: Two cells (P 5, 10 x N 8), one metric, tiny R: about 60 writes; unsharded (a task per chunk) or sharded (one
#: task writes both chunks as one shard).
LAYOUTS = {"unsharded": {}, "sharded": {"shard": {"P": 2, "N": 1}}}


def _config(store, layout):
    return small_config(store, grid={"P": [5, 10], "N": [8]}, replicates=200, metrics=["auc"], Cs=[10],
                        alphas=[0.05], chunks={"P": 1, "N": 1}, **LAYOUTS[layout])


def _record_moments(monkeypatch, store: Path, layout: str, moments: Path) -> list[tuple[str, Path]]:
    """Run the job into ``store`` with every write serialised and the store copied after each; the copies,
    each with the write it follows."""
    copies: list[tuple[str, Path]] = []

    def copy(what: str) -> None:
        target = moments / f"{len(copies):03d}" / store.name
        target.parent.mkdir(parents=True)
        if store.exists():
            shutil.copytree(store, target)
        marker = Path(f"{store}{CREATING_SUFFIX}")
        if marker.exists():
            shutil.copyfile(marker, f"{target}{CREATING_SUFFIX}")
        copies.append((what, target))

    lock = asyncio.Lock()
    original_set, original_delete = LocalStore._set, LocalStore.delete

    async def set_then_copy(self, key, value, exclusive=False):
        async with lock:
            await original_set(self, key, value, exclusive=exclusive)
            copy(f"write {key}")

    async def delete_then_copy(self, key):
        async with lock:
            await original_delete(self, key)
            copy(f"delete {key}")

    original_marker = zarr_store._write_marker

    def marker_then_copy(fs, path, payload):
        original_marker(fs, path, payload)
        copy("creation marker")

    monkeypatch.setattr(LocalStore, "_set", set_then_copy)
    monkeypatch.setattr(LocalStore, "delete", delete_then_copy)
    monkeypatch.setattr(zarr_store, "_write_marker", marker_then_copy)
    try:
        run(_config(store, layout), executor="serial")
    finally:
        monkeypatch.undo()
    return copies


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_resume_finishes_the_store_after_a_kill_at_every_write(layout, tmp_path, monkeypatch):
    reference = tmp_path / "reference" / "t.zarr"
    run(_config(reference, layout), executor="serial")
    store = tmp_path / "killed" / "t.zarr"
    copies = _record_moments(monkeypatch, store, layout, tmp_path / "moments")
    writes = [what for what, _ in copies]
    # the moments the issue names are among them: the root document at creation, and completion's root write once
    assert writes[0] == "creation marker" and writes.count("write zarr.json") >= 3, writes
    assert writes[-1] == "write zarr.json" and writes[-2] == "write manifest/zarr.json", writes[-4:]
    _resume_each(copies, layout, reference)


def _resume_each(copies, layout: str, reference: Path) -> None:
    failures = []
    for k, (what, copy) in enumerate(copies):
        try:
            summary = run(_config(copy, layout), executor="serial")
            report = check_integrity(str(copy))
            assert summary.complete and report.ok, [str(p) for p in report.problems]
            assert_store_values_identical(copy, reference)
        except Exception as error:  # noqa: BLE001 - every moment is tried, then the failures are listed
            failures.append(f"kill after write {k} ({what}): {type(error).__name__}: {error}")
    assert not failures, "\n".join(failures)


def test_a_resume_that_repairs_a_damaged_store_can_itself_be_killed_at_every_write(tmp_path, monkeypatch):
    """The repair path: a complete store with a damaged chunk; its resume un-does the chunk (done flags, manifest
    entry, then the root's complete flag and chain digest in one write), recomputes it and completes again."""
    reference = tmp_path / "reference" / "t.zarr"
    run(_config(reference, "unsharded"), executor="serial")
    store = tmp_path / "killed" / "t.zarr"
    shutil.copytree(reference, store)
    data = bytearray((store / "critical_value/c/0/0/0/1/0").read_bytes())
    data[len(data) // 2] ^= 0x10
    (store / "critical_value/c/0/0/0/1/0").write_bytes(bytes(data))
    copies = _record_moments(monkeypatch, store, "unsharded", tmp_path / "moments")
    writes = [what for what, _ in copies]
    assert "write done/c/1/0" in writes and writes.count("write zarr.json") >= 3, writes  # history, un-done, done
    _resume_each(copies, "unsharded", reference)
