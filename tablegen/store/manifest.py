"""The integrity manifest of a store: what it records, and the checks of a store's root against it.

The manifest (subgroup ``manifest``) records everything a lookup reads:

* ``created`` (written last when the template is made: its presence marks a finished template): the
  SHA-256 of every array's metadata document (its ``zarr.json``: shape, chunking, codecs, fill value,
  dimension names, attributes), of every coordinate's values, and of each root attribute that says
  what the store holds (R, seed, config hash, schema version ...);
* ``sha256``, an array with one entry per region (an inner chunk over (P, N)): the SHA-256 of each
  variable's decoded values over the region (little-endian, C order), written after the data and before
  the done flags; one Zarr chunk per task (per region in schema 3, per shard's inner chunks in schema 4);
* ``chunks`` (at completion): all of those, one hex digest per chunk key;
* ``schema_version``: what the store really is, whatever its root says.

The root records the manifest's own digest (attribute ``manifest_sha256``, a hash chain): over
``created`` while the store is being written, over ``created`` and ``chunks`` once it is complete; so a
manifest swapped for, or rolled back to, another run's is found too.

Stores of schema 2 (before the chain) hold digests of the arrays' metadata as zarr parsed it; they are
read and checked with what they have.  Stores of schema 1 have no manifest at all.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import numpy as np

from tablegen.store.schema import (
    ALL_VARIABLES,
    CHUNKED_VARIABLES,
    CREATING_SUFFIX,
    POWER_VARIABLES,
    POWER_VERSION,
    chunk_codecs,
    chunk_key,
    chunked_variables,
    write_attributes,
)

MANIFEST = "manifest"
DIGESTS = "sha256"
#: Root attribute holding the manifest's own digest (the hash chain).
CHAIN = "manifest_sha256"
#: Root attributes a run changes after creation, or that say when and how a store was made rather than what
#: it holds (two stores of one job differ in them); left out of the metadata record.
VOLATILE_ATTRIBUTES = ("complete", "completed", "created", "command", "history", CHAIN)
#: Fields of the ``config`` attribute that say where a job ran, not what it computed (a store is the same bit for
#: bit on any device, so its manifest is too).
_WHERE_FIELDS = ("store_url", "cluster", "name", "device")
COORDINATES = ("metric", "alpha", "C", "P", "N", "tail_probability")
#: Every array of a store: the (P, N)-chunked variables, then the coordinates (a store of version 3 or 4).
ARRAYS = (*CHUNKED_VARIABLES, *COORDINATES)
#: Every array any store may hold (a store of :data:`~tablegen.store.schema.POWER_VERSION` adds these).
ALL_ARRAYS = (*ARRAYS, *POWER_VARIABLES, "power")


def coordinates_of(version: int | None) -> tuple[str, ...]:
    """The coordinates of a store of schema ``version`` (``power`` from version 5 on).

    Examples
    --------
    >>> coordinates_of(4)[-1], coordinates_of(5)[-1]
    ('tail_probability', 'power')
    """
    return (*COORDINATES, "power") if version == POWER_VERSION else COORDINATES


def arrays_of(version: int | None) -> tuple[str, ...]:
    """Every array of a store of schema ``version``: its (P, N)-chunked variables, then its coordinates."""
    return (*chunked_variables(version), *coordinates_of(version))


def version_of(group) -> int | None:
    """The schema version a store's manifest records (None without a manifest; 2 for one that records none)."""
    try:
        return group[MANIFEST].attrs.get("schema_version", 2)
    except Exception:  # noqa: BLE001 - no manifest
        return None


def digest(values, dtype) -> bytes:
    """SHA-256 of values as little-endian ``dtype`` in C order (what the chunk decodes to)."""
    array = np.ascontiguousarray(np.asarray(values, dtype=np.dtype(dtype).newbyteorder("<")))
    return hashlib.sha256(array.tobytes()).digest()


def json_digest(value) -> str:
    """Hex SHA-256 of a JSON value written canonically (sorted keys).

    Examples
    --------
    >>> json_digest({"b": 1, "a": [2]}) == json_digest({"a": [2], "b": 1})
    True
    """
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def coordinate_digest(values) -> str:
    """Digest of a coordinate's values (as JSON numbers and strings)."""
    return json_digest(np.asarray(values).tolist())


def metadata_document(fs, root: str, name: str) -> dict:
    """An array's metadata document as stored (its ``zarr.json``, parsed)."""
    return json.loads(fs.cat_file(f"{root}/{name}/zarr.json"))


def array_digest(fs, root: str, name: str, array, version: int) -> str:
    """Digest of an array's metadata: its stored document (schema 3), or zarr's reading of it (schema 2)."""
    if version >= 3:
        return json_digest(metadata_document(fs, root, name))
    return json_digest(array.metadata.to_dict())


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
        digests[key] = json_digest(value)
    return digests


def metadata_record(group, fs, root: str, attrs: dict | None = None, version: int | None = None) -> dict:
    """The ``created`` record of a store of this schema: digests of metadata, coordinates and root attributes
    (``attrs``: the root attributes the store is about to have, where they are written after the record;
    ``version``: the schema version whose arrays are recorded, default the manifest's)."""
    version = version_of(group) if version is None else version
    arrays = {name: json_digest(metadata_document(fs, root, name)) for name in arrays_of(version)}
    coordinates = {name: coordinate_digest(group[name][...]) for name in coordinates_of(version)}
    attrs = group.attrs.asdict() if attrs is None else attrs
    return {"arrays": arrays, "coordinates": coordinates, "attributes": attribute_digests(attrs)}


def chain_digest(manifest_attrs: dict, complete: bool) -> str:
    """The manifest's own digest, as the root records it: every attribute but ``chunks``, which counts
    only once the store is complete (before, each region's entry is the record)."""
    record = {k: v for k, v in manifest_attrs.items() if k != "chunks"}
    if complete:
        record["chunks"] = manifest_attrs.get("chunks")
    return json_digest(record)


def entry_key(i: int, j: int) -> str:
    """The file of Zarr chunk (i, j) of the manifest's digest array (one task's entries).

    Examples
    --------
    >>> entry_key(3, 1)
    'manifest/sha256/c/3/1/0/0'
    """
    return f"{MANIFEST}/{DIGESTS}/c/{i}/{j}/0/0"


def start_manifest(group, chunks: tuple[int, int], fs, root: str, version: int,
                   per_shard: tuple[int, int] = (1, 1)) -> None:
    """Create the manifest beside a freshly written template: the region table (one entry per inner chunk
    ``chunks``, one Zarr chunk per shard of ``per_shard`` inner chunks), the root's chain digest, and the
    ``created`` record last (its presence marks a finished template).  ``version``: the store's schema version."""
    shape = group["done"].shape
    grid = (-(-shape[0] // chunks[0]), -(-shape[1] // chunks[1]))
    manifest = group.create_group(MANIFEST, overwrite=True)
    create_digests(manifest, grid, per_shard, chunked_variables(version))
    header = {"hash": "sha256 of each variable's decoded values over a chunk (little-endian, C order)",
              "schema_version": version}
    write_attributes(manifest, header)
    created = metadata_record(group, fs, root)
    write_attributes(group, {CHAIN: chain_digest({**header, "created": created}, complete=False)})
    write_attributes(manifest, {"created": created})  # last: the record marks a finished template


def create_digests(manifest, grid: tuple[int, int], per_shard: tuple[int, int], variables: tuple[str, ...]):
    """The manifest's region table: (regions along P, along N, variables, 32) digests, one Zarr chunk per shard."""
    return manifest.create_array(DIGESTS, shape=(*grid, len(variables), 32), chunks=(*per_shard, len(variables), 32),
                                 dtype="uint8", fill_value=0,
                                 dimension_names=("P_chunk", "N_chunk", "variable", "byte"),
                                 attributes={"variables": list(variables)}, **chunk_codecs(), overwrite=True)


def consolidated_chunks(table: np.ndarray, ndims: dict, per_shard: tuple[int, int] = (1, 1)) -> dict:
    """Every written region's digests (the ``sha256`` array's values) as ``{chunk key: hex digest}``; ``ndims``:
    each chunked variable's number of dimensions, in the manifest's order."""
    chunks = {}
    for (i, j) in np.ndindex(table.shape[:2]):
        if table[i, j].any():
            for v, name in enumerate(ndims):
                chunks[chunk_key(name, ndims[name], i, j, per_shard)] = table[i, j, v].tobytes().hex()
    return dict(sorted(chunks.items()))


def region_digests(arrays: dict[str, np.ndarray], region_shape: tuple[int, int]) -> np.ndarray:
    """(variables, 32) digests of a region about to be written (every data variable of ``arrays``, in the
    manifest's order), done flags (all True) included."""
    rows = [np.frombuffer(digest(arrays[name], ALL_VARIABLES[name][1]), dtype=np.uint8)
            for name in ALL_VARIABLES if name != "done" and name in arrays]
    rows.append(np.frombuffer(digest(np.ones(region_shape, bool), "bool"), dtype=np.uint8))
    return np.stack(rows)


def shard_digests(arrays: dict[str, np.ndarray], inner: tuple[int, int]) -> np.ndarray:
    """(inner chunks along P, along N, variables, 32) digests of a task's region (a shard, or in schema 3 one
    chunk) about to be written: :func:`region_digests` of each inner chunk of ``inner`` cells it holds."""
    shape = next(iter(arrays.values())).shape[-2:]
    grid = (-(-shape[0] // inner[0]), -(-shape[1] // inner[1]))
    table = np.zeros((*grid, len(arrays) + 1, 32), np.uint8)
    for (a, b) in np.ndindex(grid):
        p, n = slice(a * inner[0], (a + 1) * inner[0]), slice(b * inner[1], (b + 1) * inner[1])
        part = {name: values[..., p, n] for name, values in arrays.items()}
        table[a, b] = region_digests(part, next(iter(part.values())).shape[-2:])
    return table


@dataclass
class Problem:
    """One thing wrong with a store: what, in which array and chunk (or file), over which cells."""

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


def _has_checksums(document: dict) -> bool:
    return "crc32c" in json.dumps(document.get("codecs", []))


@dataclass
class RootCheck:
    """What a store's root and manifest header say, checked against each other (:func:`check_root`).

    ``version`` is what the store really is (its manifest's record, else 2 where it has a manifest or
    checksummed chunks, else the root's word); ``manifest`` the manifest's attributes ({} if none);
    ``problems`` what is wrong (each fatal: metadata that no resume can repair).
    """

    attrs: dict
    version: int
    manifest: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.attrs.get("complete") is True

    @property
    def created(self) -> dict:
        return self.manifest.get("created") or {}

    def expected_chunk(self, key: str) -> str | None:
        """The consolidated hex digest of a chunk (complete stores), else None."""
        return (self.manifest.get("chunks") or {}).get(key) if self.complete else None


def read_root(group, fs, root: str) -> RootCheck:
    """Read the root attributes and the manifest header, decide what the store is, and check the chain,
    the root attributes and the schema version against the manifest (a store cannot downgrade itself)."""
    attrs = group.attrs.asdict()
    try:
        manifest = group[MANIFEST].attrs.asdict()
    except Exception:  # noqa: BLE001 - no manifest (schema 1, or lost): decided below
        manifest = None
    said = attrs.get("schema_version")
    if (manifest is None or "created" not in manifest) and fs.exists(f"{root}{CREATING_SUFFIX}"):
        check = RootCheck(attrs, said if isinstance(said, int) else 0, manifest or {})
        check.problems.append(Problem("an unfinished template: its creation was interrupted (the next `tablegen "
                                      "run` of its config writes it again)", MANIFEST))
        return check
    if manifest is not None:
        version = manifest.get("schema_version", 2)
    else:
        version = 2 if any(_has_checksums(_document_or_empty(fs, root, name)) for name in CHUNKED_VARIABLES) \
            else said
    check = RootCheck(attrs, version if isinstance(version, int) else 0, manifest or {})
    if manifest is None:
        if check.version >= 2:
            check.problems.append(Problem(f"the manifest is missing, yet the chunks carry checksums: the store was "
                                          f"written as schema version {check.version} or later", MANIFEST))
        return check
    if isinstance(said, int) and said != check.version:
        check.problems.append(Problem(f"root attribute schema_version = {said!r}, but the manifest records schema "
                                      f"version {check.version}: the attribute was changed", "zarr.json"))
    if "created" not in manifest:
        return check  # an unfinished template, or a lost record: the caller says which
    if check.version >= 3:
        expected = chain_digest(manifest, check.complete)
        if attrs.get(CHAIN) != expected:
            state = "complete" if check.complete else "unfinished"
            what = ("has no record of its manifest's digest" if CHAIN not in attrs else
                    f"records another manifest than the one it holds (a manifest swapped or rolled back, or a "
                    f"{state} flag changed)")
            check.problems.append(Problem(f"the root {what}", "manifest/zarr.json"))
        if check.complete and not isinstance(manifest.get("chunks"), dict):
            check.problems.append(Problem("the store is marked complete but its manifest has no record of its "
                                          "chunks", "manifest/zarr.json"))
    stored, now = check.created.get("attributes", {}), attribute_digests(attrs)
    changed = sorted(k for k in set(stored) | set(now) if stored.get(k) != now.get(k))
    if changed:
        check.problems.append(Problem(f"root attributes differ from what was written: {', '.join(changed)}",
                                      "zarr.json"))
    return check


def _document_or_empty(fs, root: str, name: str) -> dict:
    try:
        return metadata_document(fs, root, name)
    except Exception:  # noqa: BLE001 - unreadable: no evidence either way
        return {}


def check_array_metadata(check: RootCheck, fs, root: str, name: str, array) -> Problem | None:
    """A problem if an array's metadata differs from the manifest's record (or cannot be digested)."""
    expected = check.created.get("arrays", {}).get(name)
    try:
        actual = array_digest(fs, root, name, array, check.version)
    except Exception as error:  # noqa: BLE001
        return Problem(f"metadata cannot be read ({type(error).__name__}: {error})", name)
    if actual != expected:
        return Problem("metadata (zarr.json) differs from what was written (its shape, chunking, codecs, fill "
                       "value, dimension names or attributes)", name)
    return None


def check_coordinate(check: RootCheck, name: str, values) -> Problem | None:
    """A problem if a coordinate's values differ from the manifest's record."""
    if coordinate_digest(values) != check.created.get("coordinates", {}).get(name):
        return Problem("coordinate values differ from what was written", name)
    return None
