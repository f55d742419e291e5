"""Integrity of a store: per-chunk checksums, a content manifest, and a check that names what is wrong.

Three layers of evidence, each naming the array and chunk it concerns:

* every chunk ends in a crc32c checksum of its bytes (:func:`tablegen.store.schema.chunk_codecs`), so a
  flipped bit or a truncated file fails to decode instead of decoding into wrong numbers;
* the manifest (subgroup ``manifest``) records, when a task has written a region and before its
  done flags, the SHA-256 of each variable's decoded values over that region (array ``manifest/sha256``,
  one Zarr chunk per region, so tasks never share one), and at completion all of them in one
  attribute (``manifest/zarr.json``: ``chunks``); a chunk file that vanished, or holds other values, is
  found by comparing against it;
* the manifest's ``created`` attribute (written last when the template is made: its presence marks a
  finished template) holds digests of every array's metadata, of the coordinates and of the root
  attributes, so an edited ``zarr.json`` is named too.

:func:`check_integrity` returns an :class:`IntegrityReport`; :func:`read_variable` reads a variable for
lookups and says which cells could not be read; :func:`clear_regions` un-does damaged regions so a
resume recomputes exactly them.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field

import numpy as np
import zarr

from tablegen.errors import StoreIntegrityError
from tablegen.store.schema import (
    CHUNKED_VARIABLES,
    DATA_VARIABLES,
    VARIABLES,
    WRITE_CONFIG,
    chunk_codecs,
    chunk_key,
    chunk_regions,
    open_group,
    store_fs,
)

logger = logging.getLogger(__name__)

MANIFEST = "manifest"
DIGESTS = "sha256"
#: Root attributes a run changes after creation, or that say when and how a store was made rather than what
#: it holds (two stores of one job differ in them); left out of the metadata record.
VOLATILE_ATTRIBUTES = ("complete", "completed", "created", "command", "history")
#: Fields of the ``config`` attribute that say where a job ran, not what it computed.
_WHERE_FIELDS = ("store_url", "cluster", "name")
COORDINATES = ("metric", "alpha", "C", "P", "N", "tail_probability")


def digest(values, dtype) -> bytes:
    """SHA-256 of values as little-endian ``dtype`` in C order (what the chunk decodes to)."""
    array = np.ascontiguousarray(np.asarray(values, dtype=np.dtype(dtype).newbyteorder("<")))
    return hashlib.sha256(array.tobytes()).digest()


def _json_digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def metadata_record(group: zarr.Group) -> dict:
    """Digests of every array's metadata, of the coordinates' values and of each root attribute."""
    arrays = {name: _json_digest(group[name].metadata.to_dict()) for name in (*CHUNKED_VARIABLES, *COORDINATES)}
    coordinates = {name: _json_digest(np.asarray(group[name][...]).tolist()) for name in COORDINATES}
    return {"arrays": arrays, "coordinates": coordinates, "attributes": attribute_digests(group.attrs.asdict())}


def attribute_digests(attrs: dict) -> dict:
    """Digest of each root attribute that says what a store holds (config without where it ran)."""
    digests = {}
    for key, value in attrs.items():
        if key in VOLATILE_ATTRIBUTES:
            continue
        if key == "config":
            try:
                value = {k: v for k, v in json.loads(value).items() if k not in _WHERE_FIELDS}
            except (TypeError, ValueError, AttributeError):
                pass
        digests[key] = _json_digest(value)
    return digests


def start_manifest(group: zarr.Group, chunks: tuple[int, int]) -> None:
    """Create the manifest beside a freshly written template; its ``created`` record is written last."""
    shape = group["done"].shape
    grid = (-(-shape[0] // chunks[0]), -(-shape[1] // chunks[1]))
    manifest = group.create_group(MANIFEST, overwrite=True)
    manifest.create_array(DIGESTS, shape=(*grid, len(CHUNKED_VARIABLES), 32), chunks=(1, 1, len(CHUNKED_VARIABLES), 32),
                          dtype="uint8", fill_value=0, dimension_names=("P_chunk", "N_chunk", "variable", "byte"),
                          attributes={"variables": list(CHUNKED_VARIABLES)}, **chunk_codecs())
    manifest.attrs.update({"hash": "sha256 of each variable's decoded values over a chunk (little-endian, C order)",
                           "created": metadata_record(group)})


def template_finished(group: zarr.Group) -> bool:
    """Whether the template was written to the end (the manifest's ``created`` record exists)."""
    try:
        return "created" in group[MANIFEST].attrs
    except Exception:  # noqa: BLE001 - no manifest, or one that cannot be read: not finished
        return False


def region_digests(arrays: dict[str, np.ndarray], region_shape: tuple[int, int]) -> np.ndarray:
    """(variables, 32) digests of a region about to be written, done flags (all True) included."""
    rows = [np.frombuffer(digest(arrays[name], VARIABLES[name][1]), dtype=np.uint8) for name in DATA_VARIABLES]
    rows.append(np.frombuffer(digest(np.ones(region_shape, bool), "bool"), dtype=np.uint8))
    return np.stack(rows)


def write_region_entry(group: zarr.Group, i: int, j: int, digests: np.ndarray | None) -> None:
    """Record (or, with ``None``, clear) region (i, j)'s digests: its own Zarr chunk of the manifest."""
    array = group[MANIFEST][DIGESTS].with_config(WRITE_CONFIG)
    array[i, j] = np.zeros(array.shape[2:], np.uint8) if digests is None else digests


def consolidate(group: zarr.Group) -> None:
    """Gather every region's digests into the manifest's ``chunks`` attribute (at completion)."""
    manifest = group[MANIFEST]
    table = np.asarray(manifest[DIGESTS][...])
    chunks = {}
    for (i, j) in np.ndindex(table.shape[:2]):
        if table[i, j].any():
            for v, name in enumerate(CHUNKED_VARIABLES):
                chunks[chunk_key(name, group[name].ndim, i, j)] = table[i, j, v].tobytes().hex()
    manifest.attrs.update({"chunks": dict(sorted(chunks.items()))})


@dataclass
class Problem:
    """One thing wrong with a store: what, in which array and chunk, over which cells."""

    what: str
    array: str = ""
    chunk: str = ""
    cells: str = ""

    def __str__(self) -> str:
        where = f"chunk {self.chunk}: " if self.chunk else f"{self.array}: " if self.array else ""
        cells = f" (cells {self.cells})" if self.cells else ""
        return f"{where}{self.what}{cells}"

    def to_dict(self) -> dict:
        return {"what": self.what, "array": self.array, "chunk": self.chunk, "cells": self.cells}


@dataclass
class IntegrityReport:
    """What :func:`check_integrity` found.

    Attributes
    ----------
    problems : list of Problem
        Everything wrong, each naming its array and chunk.
    regions : set of (int, int)
        Chunk indices over (P, N) whose cells a resume must recompute.
    fatal : bool
        True when metadata is damaged: no resume can repair that (re-create the store).
    chunks_checked : int
        Chunk files read and compared with the manifest.
    unchecked : str
        Why nothing could be checked (a schema-1 store has no checksums or manifest), else "".
    """

    problems: list = field(default_factory=list)
    regions: set = field(default_factory=set)
    fatal: bool = False
    chunks_checked: int = 0
    unchecked: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        return {"ok": self.ok, "problems": [p.to_dict() for p in self.problems], "fatal": self.fatal,
                "chunks_to_recompute": sorted([list(r) for r in self.regions]), "chunks_checked": self.chunks_checked,
                "unchecked": self.unchecked}


def _present_keys(fs, root: str, name: str) -> set[str]:
    prefix = f"{root}/{name}/c"
    try:
        found = fs.find(prefix)
    except (FileNotFoundError, NotADirectoryError):
        return set()
    base = root.strip("/")
    return {path.strip("/")[len(base) + 1:] for path in found}


def read_block(array: zarr.Array, i: int, j: int) -> np.ndarray:
    """Decode chunk (…, i, j) of a variable (raises whatever the codecs raise on damage)."""
    return np.asarray(array.blocks[(0,) * (array.ndim - 2) + (i, j)])


def _cells_text(P, N, chunks, i, j) -> str:
    ps, ns = P[i * chunks[0]:(i + 1) * chunks[0]], N[j * chunks[1]:(j + 1) * chunks[1]]
    def span(v):
        return str(int(v[0])) if len(v) == 1 else f"{int(v[0])}..{int(v[-1])}"
    return f"P {span(ps)} x N {span(ns)}"


class _Checker:
    """State of one integrity check (kept small: one method per kind of evidence)."""

    def __init__(self, url: str, storage_options: dict | None):
        self.url, self.report = url, IntegrityReport()
        self.group = open_group(url, storage_options, "r")
        self.fs, self.root = store_fs(url, storage_options)
        self.arrays = {}

    def add(self, problem: Problem, region=None, fatal=False) -> None:
        self.report.problems.append(problem)
        if region is not None:
            self.report.regions.add(region)
        self.report.fatal |= fatal

    def open_arrays(self) -> bool:
        for name in (*CHUNKED_VARIABLES, *COORDINATES):
            try:
                self.arrays[name] = self.group[name]
            except Exception as error:  # noqa: BLE001 - any failure to parse metadata is damage to name
                self.add(Problem(f"metadata cannot be read ({type(error).__name__}: {error})", name), fatal=True)
        return not self.report.fatal

    def manifest(self):
        try:
            manifest = self.group[MANIFEST]
            created = manifest.attrs["created"]
            return manifest, created
        except Exception:  # noqa: BLE001
            self.add(Problem("the store has no finished manifest (an unfinished template, or a store written before "
                             "integrity manifests: migrate it with tablegen.store.migrate_store)"), fatal=True)
            return None, None

    def check_metadata(self, created: dict) -> None:
        now = metadata_record_safe(self.group, self.arrays)
        for kind in ("arrays", "coordinates"):
            for name, expected in created.get(kind, {}).items():
                if now[kind].get(name) != expected:
                    what = "metadata (zarr.json) differs from what was written" if kind == "arrays" else \
                        "coordinate values differ from what was written"
                    self.add(Problem(what, name), fatal=True)
        stored = created.get("attributes", {})
        changed = sorted(k for k in set(stored) | set(now["attributes"]) if stored.get(k) != now["attributes"].get(k))
        if changed:
            self.add(Problem(f"root attributes differ from what was written: {', '.join(changed)}", "zarr.json"),
                     fatal=True)

    def expected(self, manifest, regions) -> dict:
        """(i, j) -> digests (variables, 32) from the per-region manifest, checked against the consolidated one."""
        array, entries = manifest[DIGESTS], {}
        consolidated = manifest.attrs.get("chunks")
        for (i, j) in regions:
            try:
                entry = np.asarray(array.blocks[i, j, 0, 0]).reshape(len(CHUNKED_VARIABLES), 32)
            except Exception as error:  # noqa: BLE001
                self.add(Problem(f"manifest entry cannot be decoded ({type(error).__name__}: {error})",
                                 f"{MANIFEST}/{DIGESTS}", f"{MANIFEST}/{DIGESTS}/c/{i}/{j}/0/0"), region=(i, j))
                continue
            if entry.any():
                entries[(i, j)] = entry
                self._compare_consolidated(consolidated, entry, i, j)
        return entries

    def _compare_consolidated(self, consolidated, entry, i, j) -> None:
        if consolidated is None:
            return
        for v, name in enumerate(CHUNKED_VARIABLES):
            if consolidated.get(chunk_key(name, self.arrays[name].ndim, i, j)) != entry[v].tobytes().hex():
                self.add(Problem("the consolidated manifest disagrees with the region's manifest entry", name,
                                 chunk_key(name, self.arrays[name].ndim, i, j)), region=(i, j))
                return

    def check_region(self, i, j, entry, present, cells) -> None:
        for v, name in enumerate(CHUNKED_VARIABLES):
            array = self.arrays[name]
            key = chunk_key(name, array.ndim, i, j)
            if key not in present[name]:
                self.add(Problem("is missing", name, key, cells), region=(i, j))
                continue
            self.report.chunks_checked += 1
            try:
                values = read_block(array, i, j)
            except Exception as error:  # noqa: BLE001 - checksum, codec or truncation errors alike
                self.add(Problem(f"cannot be decoded ({type(error).__name__}: {error})", name, key, cells),
                         region=(i, j))
                continue
            if digest(values, VARIABLES[name][1]) != entry[v].tobytes():
                what = ("done flags are not all set although the region was written" if name == "done"
                        else "holds other values than were written (its hash differs from the manifest)")
                self.add(Problem(what, name, key, cells), region=(i, j))


def metadata_record_safe(group, arrays) -> dict:
    """:func:`metadata_record` over already opened arrays, unreadable coordinates recorded as None."""
    record = {"arrays": {}, "coordinates": {}, "attributes": {}}
    for name, array in arrays.items():
        record["arrays"][name] = _json_digest(array.metadata.to_dict())
    for name in COORDINATES:
        try:
            record["coordinates"][name] = _json_digest(np.asarray(arrays[name][...]).tolist())
        except Exception:  # noqa: BLE001
            record["coordinates"][name] = None
    record["attributes"] = attribute_digests(group.attrs.asdict())
    return record


def check_integrity(url: str, storage_options: dict | None = None) -> IntegrityReport:
    """Check every chunk of every written region against the manifest, and the metadata against its record.

    A region counts as written once its manifest entry exists (entries are written after the data and
    before the done flags), or once its done flags say so.  Regions never written are not checked.

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> check_integrity(bundled_table_path()).ok
    True
    """
    checker = _Checker(url, storage_options)
    if checker.group.attrs.get("schema_version") == 1:
        checker.report.unchecked = ("schema version 1: the store has no checksums or manifest to check against; "
                                    "migrate it with tablegen.store.migrate_store")
        return checker.report
    if not checker.open_arrays():
        return checker.report
    manifest, created = checker.manifest()
    if manifest is None:
        return checker.report
    checker.check_metadata(created)
    if checker.report.fatal:
        return checker.report
    done_array = checker.arrays["done"]
    chunks = done_array.chunks
    regions = chunk_regions(done_array.shape, chunks)
    P, N = np.asarray(checker.arrays["P"][...]), np.asarray(checker.arrays["N"][...])
    present = {name: _present_keys(checker.fs, checker.root, name) for name in CHUNKED_VARIABLES}
    entries = checker.expected(manifest, regions)
    for (i, j) in regions:
        cells = _cells_text(P, N, chunks, i, j)
        if (i, j) in entries:
            checker.check_region(i, j, entries[(i, j)], present, cells)
        elif (i, j) not in checker.report.regions:
            _check_unrecorded(checker, i, j, present, cells)
    return checker.report


def _check_unrecorded(checker: _Checker, i: int, j: int, present, cells: str) -> None:
    """A region without a manifest entry must not claim to be done."""
    key = chunk_key("done", 2, i, j)
    if key not in present["done"]:
        return
    try:
        done = read_block(checker.arrays["done"], i, j)
    except Exception as error:  # noqa: BLE001
        checker.add(Problem(f"cannot be decoded ({type(error).__name__}: {error})", "done", key, cells),
                    region=(i, j))
        return
    if done.any():
        checker.add(Problem("cells are marked done but the manifest has no entry for their chunk", "done", key, cells),
                    region=(i, j))


def clear_regions(url: str, storage_options: dict | None, regions) -> None:
    """Mark every cell of ``regions`` not done and drop their manifest entries (a resume then rewrites them)."""
    group = open_group(url, storage_options, "r+")
    done = group["done"].with_config(WRITE_CONFIG)
    chunks = done.chunks
    for (i, j) in sorted(regions):
        done[i * chunks[0]:(i + 1) * chunks[0], j * chunks[1]:(j + 1) * chunks[1]] = False
        write_region_entry(group, i, j, None)
    if regions:
        group.attrs.update({"complete": False})


def written_regions(group: zarr.Group) -> set[tuple[int, int]]:
    """Chunk indices (i, j) whose region was written (a manifest entry, or one that cannot be decoded)."""
    array = group[MANIFEST][DIGESTS]
    try:
        return {tuple(ij) for ij in np.argwhere(np.asarray(array[...]).any(axis=(2, 3))).tolist()}
    except Exception:  # noqa: BLE001 - damaged entries count as written: their cells are then checked
        pass
    written = set()
    for (i, j) in np.ndindex(array.shape[:2]):
        try:
            if np.asarray(array.blocks[i, j, 0, 0]).any():
                written.add((i, j))
        except Exception:  # noqa: BLE001
            written.add((i, j))
    return written


def read_variable(group: zarr.Group, fs, root: str, name: str, written: set) -> tuple[np.ndarray, dict]:
    """A whole variable for lookups, and ``{(i, j): reason}`` for every chunk that is missing or undecodable.

    A chunk of a region in ``written`` (:func:`written_regions`) must exist.  Damaged chunks read as the
    fill value in the array; callers must refuse the cells named in the dict.
    """
    array = group[name]
    present = _present_keys(fs, root, name)
    damaged, chunks = {}, array.chunks[-2:]
    for (i, j) in chunk_regions(array.shape[-2:], chunks):
        key = chunk_key(name, array.ndim, i, j)
        if key not in present and (i, j) in written:
            damaged[(i, j)] = f"{name}: chunk {key} is missing"
    try:
        return np.asarray(array[...]), damaged
    except Exception:  # noqa: BLE001 - find the undecodable chunks one by one
        pass
    values = np.full(array.shape, array.fill_value, dtype=array.dtype)
    for (i, j) in chunk_regions(array.shape[-2:], chunks):
        key = chunk_key(name, array.ndim, i, j)
        region = (..., slice(i * chunks[0], (i + 1) * chunks[0]), slice(j * chunks[1], (j + 1) * chunks[1]))
        try:
            values[region] = read_block(array, i, j)
        except Exception as error:  # noqa: BLE001
            damaged[(i, j)] = f"{name}: chunk {key} cannot be decoded ({type(error).__name__}: {error})"
    return values, damaged


def raise_if_damaged(report: IntegrityReport, url: str) -> None:
    """Raise :class:`StoreIntegrityError` listing the problems when the report is not clean."""
    if report.problems:
        shown = "; ".join(str(p) for p in report.problems[:10])
        more = f" and {len(report.problems) - 10} more" if len(report.problems) > 10 else ""
        raise StoreIntegrityError(f"store {url!r} is damaged: {shown}{more}")
