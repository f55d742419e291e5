"""Corruption suite of a sharded (schema 4) store: damage to a shard's index, a truncated or missing shard, one
inner chunk's bytes, the manifest chunk of a shard, the sharding metadata.  For each: ``tablegen verify`` exits
3 naming the inner chunk (shard file and ``[i,j]``) or the array; a lookup refuses (exit 3) or, where the damage
is not in what it reads, answers as from the intact store; a resume repairs the store bit for bit (rewriting the
damaged shard whole, which zarr's own read-modify-write of a shard could not) or refuses, writing nothing.
(The kinds that do not depend on the layout are in the unsharded suite beside this one.)
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import zarr
from jobtools import assert_stores_bit_identical, small_config

from tablegen.batch.job import run
from tablegen.cli.main import main
from tablegen.errors import StoreError
from tablegen.store.integrity import check_integrity

pytestmark = pytest.mark.slow

#: Shards of 2 x 2 inner chunks of 1 x 1 cell over P 5, 10, 15 x N 8, 16: shard (0, 0) holds P 5, 10 x N 8, 16.
SHARD, NEXT, DONE = "critical_value/c/0/0/0/0/0", "critical_value/c/0/0/0/1/0", "done/c/0/0"
ENTRY = "manifest/sha256/c/0/0/0/0"
INNER = f"{SHARD}[1,1]"  # P = 10, N = 16


def _config(store, seed=11):
    return small_config(store, grid={"P": [5, 10, 15], "N": [8, 16]}, replicates=2000, seed=seed,
                        metrics=["auc", "best_accuracy"], Cs=[10], alphas=[0.01, 0.05], chunks={"P": 1, "N": 1},
                        shard={"P": 2, "N": 2})


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("shard-corruption")
    run(_config(base / "ref.zarr"), executor="serial")
    run(_config(base / "other.zarr", seed=2006), executor="serial")
    return base / "ref.zarr", base / "other.zarr"


def _flip_at(key: str, where):
    """Flip a byte of a file at ``where(data)``."""
    def damage(store: Path, other: Path) -> None:
        data = bytearray((store / key).read_bytes())
        data[where(data)] ^= 0x10
        (store / key).write_bytes(bytes(data))
    return damage


def _inner_middle(data) -> int:
    """The middle byte of inner chunk (1, 1) of a shard of 2 x 2 inner chunks (its index: 4 x (offset, length)
    little-endian uint64 in C order, then a crc32c, at the end of the shard)."""
    offset, length = np.frombuffer(bytes(data[-68:-4]), "<u8").reshape(4, 2)[3].tolist()
    return offset + length // 2


def _edit(key: str, edit):
    def damage(store: Path, other: Path) -> None:
        document = json.loads((store / key).read_text())
        edit(document)
        (store / key).write_text(json.dumps(document))
    return damage


def _files_from_other(*keys):
    def damage(store: Path, other: Path) -> None:
        for key in keys:
            shutil.copyfile(other / key, store / key)
    return damage


def _swap(store: Path, other: Path) -> None:
    first, second = (store / SHARD).read_bytes(), (store / NEXT).read_bytes()
    (store / SHARD).write_bytes(second)
    (store / NEXT).write_bytes(first)


def _write(key: str, data: bytes):
    def damage(store: Path, other: Path) -> None:
        (store / key).parent.mkdir(parents=True, exist_ok=True)
        (store / key).write_bytes(data)
    return damage


def _sharding(document) -> dict:
    return document["codecs"][0]["configuration"]


LOOKUP = ["lookup", "auc", "--P", "10", "--N", "16", "--C", "10", "--alpha", "0.05", "--method", "table"]
SAME_SHARD = ["lookup", "auc", "--P", "5", "--N", "8", "--C", "10", "--alpha", "0.05", "--method", "table"]
BIT, REFUSE = "repaired bit for bit", "refused"
UNREADABLE, OTHER = "cannot be decoded", "holds other values than were written"
META = "metadata (zarr.json) differs from what was written"


@dataclass(frozen=True)
class Case:
    damage: object
    verify: str
    lookup: list
    refusal: str | None
    resume: str
    not_named: str = ""  # text verify must not print (an intact inner chunk of the damaged shard)


CASES = {
    "shard index damaged": Case(_flip_at(SHARD, lambda d: len(d) - 30), f"chunk {INNER}: {UNREADABLE}", LOOKUP,
                                f"chunk {INNER} {UNREADABLE}", BIT),
    "shard index checksum damaged": Case(_flip_at(SHARD, lambda d: len(d) - 2), f"chunk {INNER}: {UNREADABLE}",
                                         LOOKUP, f"chunk {INNER} {UNREADABLE}", BIT),
    "shard truncated": Case(lambda s, o: (s / SHARD).write_bytes((s / SHARD).read_bytes()[:40]),
                            f"chunk {INNER}: {UNREADABLE}", LOOKUP, f"chunk {INNER}", BIT),
    "shard deleted": Case(lambda s, o: (s / SHARD).unlink(), f"chunk {INNER}: is missing", LOOKUP,
                          f"chunk {INNER} is missing", BIT),
    "one inner chunk's bytes flipped": Case(_flip_at(SHARD, _inner_middle), f"chunk {INNER}: {UNREADABLE}", LOOKUP,
                                            f"chunk {INNER} {UNREADABLE}", BIT, not_named=f"{SHARD}[0,0]"),
    "one inner chunk's bytes flipped, another inner chunk of its shard read": Case(
        _flip_at(SHARD, _inner_middle), f"chunk {INNER}: {UNREADABLE}", SAME_SHARD, None, BIT,
        not_named=f"{SHARD}[0,1]"),
    "shard from another run": Case(_files_from_other(SHARD), f"chunk {INNER}: {OTHER}", LOOKUP,
                                   f"chunk {INNER} {OTHER}", BIT),
    "two shards swapped": Case(_swap, f"chunk {INNER}: {OTHER}", LOOKUP, f"chunk {INNER} {OTHER}", BIT),
    "value rewritten through zarr (read-modify-write of the shard)": Case(
        lambda s, o: zarr.open_group(str(s), mode="r+")["critical_value"].__setitem__((0, 1, 0, 1, 1), 0.5),
        f"chunk {INNER}: {OTHER}", LOOKUP, f"chunk {INNER} {OTHER}", BIT, not_named=f"{SHARD}[0,0]"),
    "done shard deleted": Case(lambda s, o: (s / DONE).unlink(), f"chunk {DONE}[1,1]: is missing", LOOKUP,
                               f"chunk {DONE}[1,1] is missing", BIT),
    "done shard index damaged": Case(_flip_at(DONE, lambda d: len(d) - 10), f"chunk {DONE}[1,1]: {UNREADABLE}",
                                     LOOKUP, f"chunk {DONE}[1,1] {UNREADABLE}", BIT),
    "manifest chunk of a shard bit flip": Case(_flip_at(ENTRY, lambda d: len(d) // 2),
                                               f"chunk {ENTRY}: manifest entry cannot be decoded", LOOKUP, None, BIT),
    "manifest chunk of a shard from another run": Case(_files_from_other(ENTRY), "the consolidated manifest disagrees",
                                                       LOOKUP, None, BIT),
    "inner chunk shape edited": Case(_edit("ci_low/zarr.json", lambda d: _sharding(d).update(
        chunk_shape=[2, 2, 1, 2, 1])), f"ci_low: {META}", LOOKUP, f"ci_low: {META}", REFUSE),
    "shard shape edited": Case(_edit("critical_value/zarr.json", lambda d: d["chunk_grid"]["configuration"].update(
        chunk_shape=[2, 2, 1, 1, 2])), f"critical_value: {META}", LOOKUP, f"critical_value: {META}", REFUSE),
    "index checksum codec removed": Case(_edit("done/zarr.json", lambda d: _sharding(d).update(
        index_codecs=_sharding(d)["index_codecs"][:1])), f"done: {META}", LOOKUP, f"done: {META}", REFUSE),
    "stray shard outside the grid": Case(_write("critical_value/c/0/0/0/5/0", b"x" * 100),
                                         "chunk critical_value/c/0/0/0/5/0: a chunk file outside its array's grid",
                                         LOOKUP, None, BIT),
    "leftover .partial shard": Case(_write(f"{SHARD}.0123456789abcdef0123456789abcdef.partial", b"half"),
                                    "a half-written file", LOOKUP, None, BIT),
}


def _files(store: Path) -> dict:
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("kind", CASES)
def test_shard_damage_is_named_refused_and_repaired_or_refused(kind, built, tmp_path, capsys):
    case, (reference, other) = CASES[kind], built
    store = tmp_path / "d.zarr"
    shutil.copytree(reference, store)
    case.damage(store, other)

    assert main(["verify", str(store)]) == 3, kind
    out = capsys.readouterr().out
    assert case.verify in out, out
    assert not case.not_named or case.not_named not in out, out

    code = main([*case.lookup, "--table", str(store)])
    captured = capsys.readouterr()
    if case.refusal is None:
        assert code == 0 and main([*case.lookup, "--table", str(reference)]) == 0, captured.err
        assert captured.out == capsys.readouterr().out.replace(str(reference), str(store))
    else:
        assert code == 3 and case.refusal in captured.err, captured.err

    if case.resume == BIT:
        assert run(_config(store), executor="serial").complete and check_integrity(str(store)).ok
        assert_stores_bit_identical(store, reference)
    else:
        before = _files(store)
        with pytest.raises(StoreError):
            run(_config(store), executor="serial")
        assert _files(store) == before
