"""The Zarr store of a multi-class table: template, region writes, done flags, manifest, integrity check.

A multi-class table (schema :data:`SCHEMA_NAME`, version :data:`SCHEMA_VERSION`) holds, for balanced K-class
designs (K classes of ``n_per_class`` items), the exact critical values of every metric it was asked for::

    critical_hits   (alpha, C, K, n_per_class)          int64    the hits to exceed (-1: not written)
    critical_value  (metric, alpha, C, K, n_per_class)  float64  the metric's value there (NaN: not written)
    done            (K, n_per_class)                    bool     True once the cell's values are written

with coordinates ``metric``, ``alpha``, ``C``, ``K`` and ``n_per_class`` (the layout and the template:
:mod:`tablegen.store.multiclass_schema`, its names importable from here too).  The store gives the binary table's
guarantees with the binary store's own parts: one writer at a time (:class:`~tablegen.store.lock.StoreLock`),
every chunk crc32c-checksummed (:func:`~tablegen.store.schema.chunk_codecs`), each task's region written whole,
durable step by step (:mod:`tablegen.store.shards`), data first, then its manifest entry (the SHA-256 of each
variable's decoded values over the region, :func:`~tablegen.store.manifest.digest`), then its done flags; a
creation marker while the template is written and the manifest's ``created`` record (digests of the coordinates and
of the root attributes that say what the store holds) written last; at completion every region's digests gathered
into the manifest and the manifest's own digest recorded in the root (a hash chain).  :func:`check_multiclass_store`
names every damaged region (a resume recomputes exactly those) and any damaged metadata (fatal).

Life of a store (the batch job drives it, :mod:`tablegen.batch.multiclass_job`)::

    with StoreLock(url):
        create_multiclass_store(template, url, attrs=provenance)
        write_multiclass_region(url, (k_slice, n_slice), arrays)
        mark_multiclass_complete(url)
"""

from __future__ import annotations

import datetime
import json
import logging
import os
from dataclasses import dataclass, field

import numpy as np

from tablegen._version import __version__
from tablegen.errors import StoreError, StoreIntegrityError
from tablegen.store.manifest import attribute_digests, coordinate_digest, digest, json_digest
from tablegen.store.multiclass_schema import (
    AXES,
    CHAIN,
    CHUNKED_VARIABLES,
    COORDINATE_ATTRIBUTES,  # noqa: F401  (importable from here, as before the schema moved)
    COORDINATES,
    DATA_VARIABLES,
    DIGESTS,
    MANIFEST,
    SCHEMA_NAME,
    SCHEMA_VERSION,
    VARIABLES,
    MulticlassTemplate,
)
from tablegen.store.schema import (
    CREATING_SUFFIX,
    WRITE_CONFIG,
    chunk_codecs,
    history_line,
    is_local,
    open_group,
    store_fs,
    write_attributes,
)
from tablegen.store.shards import Durable, write_whole

__all__ = ["SCHEMA_NAME", "SCHEMA_VERSION", "MulticlassReport", "MulticlassTemplate", "check_multiclass_store",
           "create_multiclass_store", "is_multiclass_store", "mark_multiclass_complete", "multiclass_done_mask",
           "metadata_problems", "multiclass_state", "multiclass_store_report",
           "read_multiclass_attributes", "read_multiclass_region", "write_multiclass_region"]

logger = logging.getLogger(__name__)

#: Root attributes that change after creation (left out of the ``created`` record).
_VOLATILE = ("complete", "completed", "history", "command", CHAIN)




def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def is_multiclass_store(url: str, storage_options: dict | None = None) -> bool:
    """Whether ``url`` holds a Zarr group whose ``schema`` attribute names a multi-class table (cheap: one read).

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> is_multiclass_store(bundled_table_path())
    False
    """
    try:
        return open_group(url, storage_options, "r").attrs.get("schema") == SCHEMA_NAME
    except StoreError:
        return False


def _finished(group) -> bool:
    try:
        return "created" in group[MANIFEST].attrs
    except Exception:  # noqa: BLE001 - no manifest, or one that cannot be read
        return False


def multiclass_state(url: str, storage_options: dict | None = None) -> str:
    """``"absent"`` (nothing there, or an empty folder), ``"unfinished"`` (a template whose writing was interrupted:
    the creation marker is there) or ``"ready"`` (a group, of whatever schema: :func:`read_multiclass_attributes`
    refuses another)."""
    fs, root = store_fs(url, storage_options)
    marker = fs.exists(f"{root}{CREATING_SUFFIX}")
    if not fs.exists(f"{root}/zarr.json"):
        if marker:
            return "unfinished"
        if fs.isdir(root) and fs.ls(root, detail=False):
            raise StoreError(f"store {url!r} cannot be created there: the folder is not empty and holds no Zarr "
                             "group; choose another store path")
        return "absent"
    group = open_group(url, storage_options, "r")
    if marker and group.attrs.get("schema") in (None, SCHEMA_NAME) and not _finished(group):
        return "unfinished"
    return "ready"


def create_multiclass_store(template: MulticlassTemplate, url: str, storage_options: dict | None = None,
                            attrs: dict | None = None, *, command: str = "") -> None:
    """Write the template, coordinates and attributes of a multi-class store, then the manifest's ``created``
    record (last: its presence marks a finished template); an unfinished template is removed first.  Hold the
    store's lock.

    Raises
    ------
    StoreError
        If a store is already there (resume it instead) or the folder holds something else.
    """
    state = multiclass_state(url, storage_options)
    if state == "ready":
        raise StoreError(f"store {url!r} already exists")
    fs, root = store_fs(url, storage_options)
    if state == "unfinished" and fs.exists(root):
        logger.warning("store %s: its template was never finished (creation interrupted); writing it again", url)
        for entry in fs.ls(root, detail=False):
            fs.rm(entry, recursive=True)
    creating = {"config_hash": (attrs or {}).get("config_hash")}
    fs.pipe(f"{root}{CREATING_SUFFIX}", json.dumps(creating, allow_nan=False).encode())
    created = _now()
    root_attrs = {"schema": SCHEMA_NAME, "schema_version": SCHEMA_VERSION, "tablegen_version": __version__,
                  **(attrs or {}), "created": created, "command": command, "complete": False,
                  "history": history_line(created, f"{command or 'tablegen.run'}: created", __version__)}
    try:
        ds = template.dataset()
        ds.attrs.update(root_attrs)
        ds.to_zarr(url, mode="w-" if not fs.exists(f"{root}/zarr.json") else "w", compute=False, zarr_format=3,
                   consolidated=False, storage_options=storage_options or None, encoding=template.encoding())
        group = open_group(url, storage_options, "r+")
        manifest = group.create_group(MANIFEST)
        manifest.create_array(DIGESTS, shape=(*template.grid, len(CHUNKED_VARIABLES), 32),
                              chunks=(1, 1, len(CHUNKED_VARIABLES), 32), dtype="uint8", fill_value=0,
                              attributes={"variables": list(CHUNKED_VARIABLES)}, **chunk_codecs())
        write_attributes(manifest, {"schema_version": SCHEMA_VERSION, "created": _created_record(group)})
        fs.rm(f"{root}{CREATING_SUFFIX}")
    except OSError as error:
        raise StoreError(f"store {url!r} cannot be created there ({getattr(error, 'strerror', None) or error})") \
            from None
    logger.info("created multi-class store %s (%d cells, chunks %s)", url, template.cells, template.chunks)


def _created_record(group) -> dict:
    """Digests of the coordinates and of the root attributes that say what the store holds."""
    attrs = {k: v for k, v in group.attrs.asdict().items() if k not in _VOLATILE}
    return {"coordinates": {name: coordinate_digest(group[name][...]) for name in COORDINATES},
            "attributes": attribute_digests(attrs)}


def read_multiclass_attributes(url: str, storage_options: dict | None = None) -> dict:
    """The root attributes of a finished multi-class store of this schema version.

    Raises
    ------
    StoreError
        If ``url`` holds no tablegen multi-class store, one of another version, or an unfinished template.
    """
    group = open_group(url, storage_options, "r")
    attrs = group.attrs.asdict()
    if attrs.get("schema") != SCHEMA_NAME:
        raise StoreError(f"store {url!r} is not a multi-class table (attribute schema = {attrs.get('schema')!r}; "
                         f"a multi-class table has {SCHEMA_NAME!r})")
    if attrs.get("schema_version") != SCHEMA_VERSION:
        raise StoreError(f"store {url!r} has multi-class schema version {attrs.get('schema_version')!r}; this "
                         f"tablegen {__version__} reads and writes version {SCHEMA_VERSION}")
    if not _finished(group):
        raise StoreError(f"store {url!r} is an unfinished template (its creation was interrupted); the next "
                         "`tablegen run` of its config writes it again")
    return attrs


def _entry_key(i: int, j: int) -> str:
    return f"{MANIFEST}/{DIGESTS}/c/{i}/{j}/0/0"


def region_digests(arrays: dict) -> np.ndarray:
    """(variables, 32) bytes: the SHA-256 of each chunked variable's values over one region (``done`` all True)."""
    rows = [np.frombuffer(digest(arrays[name], VARIABLES[name][1]), dtype=np.uint8) for name in CHUNKED_VARIABLES]
    return np.stack(rows)


def write_multiclass_region(url: str, region: tuple[slice, slice], arrays: dict,
                            storage_options: dict | None = None) -> None:
    """Write one task's region (one chunk of every variable), whole: the data, its manifest entry, then its done
    flags, each made durable before the next (local filesystems).

    ``arrays``: one array per name in :data:`DATA_VARIABLES`, shaped as the variable over the region.
    """
    group = open_group(url, storage_options, "r+")
    done = group["done"].with_config(WRITE_CONFIG)
    chunks, shape = tuple(done.chunks), tuple(done.shape)
    for part, size, chunk, axis in zip(region, shape, chunks, AXES):
        if part.start % chunk or (part.stop % chunk and part.stop != size) or part.stop > size \
                or part.stop - part.start > chunk:
            raise ValueError(f"region {axis}[{part.start}:{part.stop}] is not one Zarr chunk of {chunk}")
    missing = set(DATA_VARIABLES) - set(arrays)
    if missing:
        raise ValueError(f"write_multiclass_region needs every data variable; missing {sorted(missing)}")
    values = {name: np.asarray(arrays[name], dtype=VARIABLES[name][1]) for name in DATA_VARIABLES}
    cells = (region[0].stop - region[0].start, region[1].stop - region[1].start)
    values["done"] = np.ones(cells, bool)
    fs, root = store_fs(url, storage_options)
    durable, written = Durable(fs, root), []
    for name in DATA_VARIABLES:
        written += write_whole(group[name].with_config(WRITE_CONFIG), region, values[name], fs, root)
    durable.sync(written)
    i, j = region[0].start // chunks[0], region[1].start // chunks[1]
    group[MANIFEST][DIGESTS].with_config(WRITE_CONFIG)[i, j] = region_digests(values)
    durable.sync([_entry_key(i, j)])
    durable.sync(write_whole(done, region, values["done"], fs, root))


def multiclass_done_mask(url: str, storage_options: dict | None = None) -> np.ndarray:
    """(len(K), len(n_per_class)) booleans: which cells are written."""
    return np.asarray(open_group(url, storage_options, "r")["done"][...], dtype=bool)


def mark_multiclass_complete(url: str, storage_options: dict | None = None) -> bool:
    """Gather every region's digests into the manifest, record the manifest's digest in the root and set
    ``complete = True``, once every cell is done (checked); a store already complete is left as it is.
    Returns whether it wrote."""
    mask = multiclass_done_mask(url, storage_options)
    if not mask.all():
        raise RuntimeError(f"{int((~mask).sum())} cells are not done; the store is not complete")
    group = open_group(url, storage_options, "r+")
    if group.attrs.get("complete") is True:
        return False
    manifest = group[MANIFEST]
    table = np.asarray(manifest[DIGESTS][...])
    chunks = {f"{i},{j}": {name: bytes(table[i, j, v]).hex() for v, name in enumerate(CHUNKED_VARIABLES)}
              for i in range(table.shape[0]) for j in range(table.shape[1])}
    write_attributes(manifest, {"chunks": chunks})
    chain = json_digest({k: v for k, v in manifest.attrs.asdict().items()})
    write_attributes(group, {"complete": True, "completed": _now(), CHAIN: chain})
    Durable(*store_fs(url, storage_options)).sync([f"{MANIFEST}/zarr.json", "zarr.json"])
    return True


def append_multiclass_history(url: str, what: str, storage_options: dict | None = None) -> None:
    """Append a line to the store's ``history`` attribute (hold the lock)."""
    group = open_group(url, storage_options, "r+")
    earlier, line = group.attrs.get("history"), history_line(_now(), what, __version__)
    write_attributes(group, {"history": f"{earlier}\n{line}" if earlier else line})


def read_multiclass_region(group, i: int, j: int) -> dict:
    """Every chunked variable's values over region (i, j), decoded (a damaged chunk raises what its codecs raise)."""
    ck, cn = group["done"].chunks
    return {name: np.asarray(group[name][..., i * ck:(i + 1) * ck, j * cn:(j + 1) * cn])
            for name in CHUNKED_VARIABLES}


def region_problem(group, i: int, j: int, complete: bool = False) -> str | None:
    """What is wrong with region (i, j) (a chunk that cannot be decoded, or whose values are not those its manifest
    entry records), or None; a region not done is not checked, except in a store marked ``complete``, where every
    region is done (one that is not lost its done flags)."""
    try:
        values = read_multiclass_region(group, i, j)
    except Exception as error:  # noqa: BLE001 - the codecs' own errors (checksum, truncation, missing chunk)
        return f"a chunk cannot be decoded ({type(error).__name__}: {error})"
    done = values["done"]
    if not done.any():
        return "the store is marked complete, but the region lost its done flags" if complete else None
    if not done.all():
        return "its done flags are partly set (a task writes its region whole)"
    entry = np.asarray(group[MANIFEST][DIGESTS][i, j])
    for v, name in enumerate(CHUNKED_VARIABLES):
        if digest(values[name], VARIABLES[name][1]) != entry[v].tobytes():
            return f"{name} holds values other than those its manifest entry records"
    return None


@dataclass
class MulticlassReport:
    """What :func:`check_multiclass_store` found: ``problems`` (text, each naming its region or array),
    ``regions`` (chunk indices over (K, n_per_class) a resume recomputes), ``fatal`` (metadata damaged: re-create
    the store) and ``chunks_checked``."""

    problems: list = field(default_factory=list)
    regions: set = field(default_factory=set)
    fatal: bool = False
    chunks_checked: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        return {"ok": self.ok, "problems": list(self.problems), "fatal": self.fatal,
                "chunks_to_recompute": sorted([list(r) for r in self.regions]), "chunks_checked": self.chunks_checked}


def cells_text(group, i: int, j: int) -> str:
    """The cells of region (i, j), as ``K 2..3 x n_per_class 5..10``."""
    ck, cn = group["done"].chunks
    ks, ns = group["K"][i * ck:(i + 1) * ck].tolist(), group["n_per_class"][j * cn:(j + 1) * cn].tolist()
    return f"K {ks[0]}..{ks[-1]} x n_per_class {ns[0]}..{ns[-1]}"


def metadata_problems(group, attrs: dict) -> list[str]:
    """What is wrong with a multi-class store's metadata (each fatal: re-create the store): the manifest or a
    coordinate that cannot be read, the root attributes or coordinates against the manifest's ``created`` record,
    and (complete stores) the manifest against the root's chain digest.  Cheap: no chunk of data is read.

    Examples
    --------
    >>> from tablegen.store.schema import open_group
    >>> template = MulticlassTemplate(("accuracy",), (0.05,), (1,), (3,), (5,), chunks=(1, 1))
    >>> create_multiclass_store(template, "memory://metadata-problems-example.zarr")
    >>> group = open_group("memory://metadata-problems-example.zarr", None, "r")
    >>> metadata_problems(group, group.attrs.asdict())
    []
    """
    try:
        manifest = group[MANIFEST]
        record = manifest.attrs["created"]
        found = _created_record(group)
    except Exception as error:  # noqa: BLE001 - a coordinate or the manifest unreadable: metadata damage
        return [f"metadata cannot be read ({type(error).__name__}: {error})"]
    problems = [f"{kind[:-1]} {name} differs from the manifest's record" for kind in ("coordinates", "attributes")
                for name in sorted(set(record[kind]) | set(found[kind]))
                if record[kind].get(name) != found[kind].get(name)]
    if attrs.get("complete") is True and attrs.get(CHAIN) != json_digest(dict(manifest.attrs.asdict())):
        problems.append("the manifest differs from the digest the root records (swapped or rolled back)")
    return problems


def check_multiclass_store(url: str, storage_options: dict | None = None) -> MulticlassReport:
    """Check a multi-class store against its manifest: the root attributes and coordinates against the ``created``
    record, the manifest against the root's chain digest (complete stores), every done region's chunks, and (complete
    stores) that no region lost its done flags.

    Raises
    ------
    StoreError
        If ``url`` holds no multi-class store of this version (:func:`read_multiclass_attributes`).
    """
    attrs = read_multiclass_attributes(url, storage_options)
    group = open_group(url, storage_options, "r")
    report = MulticlassReport()
    report.problems = metadata_problems(group, attrs)
    report.fatal = bool(report.problems)
    if report.fatal:
        return report
    grid_k, grid_n = group[MANIFEST][DIGESTS].shape[:2]
    complete = attrs.get("complete") is True
    for i in range(grid_k):
        for j in range(grid_n):
            problem = region_problem(group, i, j, complete)
            report.chunks_checked += 1
            if problem is not None:
                report.problems.append(f"region {i},{j} ({cells_text(group, i, j)}): {problem}")
                report.regions.add((i, j))
    return report


def multiclass_store_report(url: str, storage_options: dict | None = None) -> dict:
    """What ``tablegen info`` prints about a multi-class store, after checking all of it against its manifest
    (:func:`check_multiclass_store`): a damaged store is refused, naming what is damaged.

    Returns
    -------
    dict
        ``kind`` ("multiclass"), ``schema`` and ``schema_version``, ``method`` ("exact": every value is, so there
        is no R or seed), ``provenance`` (the root attributes but the full config), ``grid`` (K, n_per_class, metric,
        C, alpha), ``cells``, ``cells_done``, ``missing`` (the (K, n_per_class) of every cell not done, K-major),
        ``chunks_checked`` and ``size_bytes`` (the store's files, as its filesystem counts them).

    Raises
    ------
    StoreIntegrityError
        If the check finds damage (the first problems named; ``tablegen verify`` lists them all).

    Examples
    --------
    >>> template = MulticlassTemplate(("accuracy",), (0.05,), (1,), (3, 5), (5,), chunks=(1, 1))
    >>> create_multiclass_store(template, "memory://multiclass-report-example.zarr")
    >>> report = multiclass_store_report("memory://multiclass-report-example.zarr")
    >>> report["cells"], report["cells_done"], report["missing"], report["grid"]["K"]
    (2, 0, [(3, 5), (5, 5)], [3, 5])
    """
    attrs = read_multiclass_attributes(url, storage_options)
    check = check_multiclass_store(url, storage_options)
    if not check.ok:
        shown = "; ".join(check.problems[:5]) + (f"; and {len(check.problems) - 5:,} more" if len(check.problems) > 5
                                                 else "")
        what = "re-create the store (its metadata is damaged)" if check.fatal else \
            f"`tablegen run CONFIG --store {url}` recomputes the damaged regions"
        raise StoreIntegrityError(f"store {url!r} is damaged: {shown}; `tablegen verify` names every problem; {what}")
    group = open_group(url, storage_options, "r")
    grid = {name: [str(v) if name == "metric" else float(v) if name == "alpha" else int(v)
                   for v in group[name][...].tolist()] for name in ("K", "n_per_class", "metric", "C", "alpha")}
    done = np.asarray(group["done"][...], dtype=bool)
    fs, root = store_fs(url, storage_options)
    return {"kind": "multiclass", "schema": attrs.get("schema"), "schema_version": attrs.get("schema_version"),
            "method": "exact", "provenance": {k: v for k, v in attrs.items() if k != "config"}, "grid": grid,
            "cells": int(done.size), "cells_done": int(done.sum()),
            "missing": [(grid["K"][i], grid["n_per_class"][j]) for i, j in zip(*np.nonzero(~done))],
            "chunks_checked": check.chunks_checked, "size_bytes": int(fs.du(root, total=True))}


def clear_multiclass_regions(url: str, storage_options: dict | None, regions) -> None:
    """Un-do damaged regions (done flags False, manifest entries cleared) so that a resume recomputes them."""
    group = open_group(url, storage_options, "r+")
    done, entries = group["done"].with_config(WRITE_CONFIG), group[MANIFEST][DIGESTS].with_config(WRITE_CONFIG)
    ck, cn = done.chunks
    for i, j in sorted(regions):
        done[i * ck:(i + 1) * ck, j * cn:(j + 1) * cn] = False
        entries[i, j] = 0


def remove_local_partials(url: str, storage_options: dict | None = None) -> int:
    """Remove the half-written files (``*.partial``) a killed run left in a local store; how many."""
    fs, root = store_fs(url, storage_options)
    if not is_local(fs) or not fs.exists(root):
        return 0
    removed = [path for path in fs.find(root) if path.endswith(".partial")]
    for path in removed:
        os.remove(path)
    return len(removed)
