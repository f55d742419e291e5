"""The Zarr store of a table: template, chunk-aligned region writes, done flags, lock, finalize.

The store knows templates, URLs and regions, not jobs (the batch job builds the template and the
provenance attributes from its config, and decides what a resume may reuse).  Life of a store::

    with StoreLock(url):                               # one writer at a time (tablegen.store.lock)
        create_store(template, url, attrs=provenance)  # schema + coordinates + attributes + manifest record
        write_chunk(url, (p_slice, n_slice), arrays)   # a chunk's data, its manifest entry, then its done flags
        mark_complete(url)                             # every cell done: manifest consolidated, complete = True
    open_store(url)                                    # an xarray Dataset; refuses other schemas and
                                                       # unfinished templates

Every variable is chunked (P, N) as the template says, and every write covers whole chunks, so no
two writers ever touch the same Zarr chunk (Zarr 3 has no locks).  Done flags are written after
the data of their chunk: a task killed half-way leaves its cells not done, and a resume rewrites
them whole.  Every chunk carries a crc32c checksum and is written even when all fill, and the
manifest holds each chunk's hash (:mod:`tablegen.store.integrity`), so damage is found and named.

Creation cannot strand a store: a marker beside it (``paper.zarr.creating``) exists while the template
is written, and the manifest's ``created`` record is written last; a store without that record is an
unfinished template, which the next run removes and writes again.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
from typing import TYPE_CHECKING

import numpy as np

from tablegen._version import __version__
from tablegen.errors import StoreError, StoreIntegrityError
from tablegen.store.integrity import (
    PARTIAL,
    check_integrity,
    clear_regions,
    consolidate,
    remove_stray_files,
    template_finished,
    write_shard_entry,
)
from tablegen.store.lock import LOCK_SUFFIX, StoreLock
from tablegen.store.manifest import CHAIN, MANIFEST, entry_key, shard_digests, start_manifest, version_of
from tablegen.store.migrate import migrate_store
from tablegen.store.report import store_report, verify_report
from tablegen.store.schema import (
    ALL_VARIABLES,
    CONVENTION_ATTRIBUTES,
    CREATING_SUFFIX,
    DATA_VARIABLES,
    READABLE_VERSIONS,
    SCHEMA_NAME,
    SCHEMA_VERSION,
    VARIABLES,
    WRITABLE_VERSIONS,
    WRITE_CONFIG,
    check_not_headless,
    data_variables,
    history_line,
    is_local,
    layout,
    not_a_store_error,
    open_group,
    source_attribute,
    store_fs,
    write_attributes,
)
from tablegen.store.shards import Durable, write_whole
from tablegen.store.template import StoreTemplate

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["DATA_VARIABLES", "LOCK_SUFFIX", "SCHEMA_NAME", "SCHEMA_VERSION", "VARIABLES", "StoreError",
           "StoreIntegrityError", "StoreLock", "StoreTemplate", "append_history", "check_integrity", "clear_regions",
           "create_store", "done_mask", "mark_complete", "migrate_store", "open_store", "open_store_group",
           "read_writable_attributes", "remove_partial_files", "remove_stray_files", "store_exists", "store_report",
           "store_state", "verify_report", "write_chunk"]

logger = logging.getLogger(__name__)

def store_exists(url: str, storage_options: dict | None = None) -> bool:
    """Whether ``url`` already holds a Zarr group (finished or not)."""
    try:
        fs, root = store_fs(url, storage_options)
        return fs.exists(f"{root}/zarr.json")
    except (PermissionError, NotADirectoryError, OSError) as error:
        raise StoreError(f"store {url!r} cannot be read ({getattr(error, 'strerror', None) or error})") from None


def store_state(url: str, storage_options: dict | None = None) -> str:
    """``"absent"``, ``"unfinished"`` (a template whose writing was interrupted) or ``"ready"``.

    While the creation marker is there, a store whose template is not finished is unfinished at every moment of
    its creation (its root document not yet written, or written without its attributes).  A folder that holds a
    store's arrays but no root document is damaged (:class:`StoreIntegrityError`, saying what to do).

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> store_state(bundled_table_path())
    'ready'
    """
    if not store_exists(url, storage_options):  # first: a store that cannot be reached is named here
        fs, root = store_fs(url, storage_options)
        if fs.exists(f"{root}{CREATING_SUFFIX}"):
            return "unfinished"
        check_not_headless(url, storage_options)
        return "absent"
    group = open_group(url, storage_options, "r")
    attrs = group.attrs.asdict()
    fs, root = store_fs(url, storage_options)
    if attrs.get("schema") in (None, SCHEMA_NAME) and fs.exists(f"{root}{CREATING_SUFFIX}") \
            and not template_finished(group):  # the root may not hold its attributes yet
        return "unfinished"
    if attrs.get("schema") == SCHEMA_NAME and attrs.get("schema_version") in WRITABLE_VERSIONS \
            and not template_finished(group):
        # no creation under way, yet no manifest record: a finished store whose record was lost (or a template
        # of a tablegen before the marker); never removed: ready, and its integrity check refuses it
        logger.warning("store %s has no manifest record and no creation marker; it is not removed", url)
    return "ready"


def remove_creation_marker(url: str, storage_options: dict | None = None) -> bool:
    """Remove a creation marker left beside a finished store (a run killed after its template was finished and
    before the marker went); whether there was one.  Call it holding the store's lock."""
    fs, root = store_fs(url, storage_options)
    if not fs.exists(f"{root}{CREATING_SUFFIX}") or not template_finished(open_group(url, storage_options, "r")):
        return False
    fs.rm(f"{root}{CREATING_SUFFIX}")
    return True


def remove_partial_files(url: str, storage_options: dict | None = None) -> int:
    """Remove the half-written files a killed run left in a local store (``*.<uuid>.partial``); the number removed.

    Call it holding the store's lock (then no live writer has a partial file there).  Stores behind other
    filesystems write whole objects and have none.
    """
    fs, root = store_fs(url, storage_options)
    if not is_local(fs):
        return 0
    removed = 0
    for path in fs.find(root):
        if PARTIAL.search(path):
            fs.rm(path)
            removed += 1
    if removed:
        logger.warning("store %s: removed %d half-written file(s) a killed run left behind", url, removed)
    return removed


def _remove_unfinished(url: str, storage_options: dict | None) -> None:
    fs, root = store_fs(url, storage_options)
    logger.warning("store %s: its template was never finished (creation interrupted); writing it again", url)
    if fs.exists(root):  # its contents: the folder itself may be held by the writer's lock
        for entry in fs.ls(root, detail=False):
            fs.rm(entry, recursive=True)


def _write_marker(fs, path: str, payload: bytes) -> None:
    """Write the creation marker as a new file: a local one never through a symbolic link planted in its place."""
    if not is_local(fs):
        fs.pipe(path, payload)
        return
    if os.path.lexists(path):
        os.unlink(path)  # an earlier marker, or a link: removed, never followed
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(payload)


def create_store(template: StoreTemplate, url: str, storage_options: dict | None = None, attrs: dict | None = None,
                 *, command: str = "", state: str | None = None) -> None:
    """Write the schema, coordinates, attributes and manifest record of a store at ``url``; no data.

    ``attrs`` are the writer's provenance (e.g. the job's config, its hash, root seed and R), stored
    between the schema's attributes and the creation record.  An unfinished template (creation
    interrupted) is removed and written again.  Call it holding the store's lock.  ``state`` is the
    store's :func:`store_state` if the caller has just read it under that lock (it is read here otherwise).

    Raises
    ------
    StoreError
        If the store already exists (resume it instead) or cannot be written there.
    """
    state = store_state(url, storage_options) if state is None else state
    if state == "ready":
        raise StoreError(f"store {url!r} already exists")
    fs, root = store_fs(url, storage_options)
    if fs.isfile(root):
        raise StoreError(f"store {url!r} cannot be created there: it is a file, not a folder")
    held = sorted(path.rstrip("/").rsplit("/", 1)[-1] for path in fs.ls(root, detail=False)) \
        if state == "absent" and fs.isdir(root) else []
    if held:  # (a store's own arrays without its root document are refused by store_state as damage)
        raise StoreError(f"store {url!r} cannot be created there: the folder is not empty and holds no Zarr group "
                         f"({', '.join(held[:4])}); choose another store path")
    try:
        if state == "unfinished":
            _remove_unfinished(url, storage_options)
        _write_marker(fs, f"{root}{CREATING_SUFFIX}",
                      json.dumps({"config_hash": (attrs or {}).get("config_hash")}, allow_nan=False).encode())
        _write_template(template, url, storage_options, attrs or {}, command)
        fs.rm(f"{root}{CREATING_SUFFIX}")
    except OSError as error:
        if not fs.exists(root) and fs.exists(f"{root}{CREATING_SUFFIX}"):  # nothing of the store was written
            fs.rm(f"{root}{CREATING_SUFFIX}")
        raise StoreError(f"store {url!r} cannot be created there "
                         f"({getattr(error, 'strerror', None) or error})") from None
    logger.info("created store %s (%d cells, chunks %s, shards of %s chunks)", url, template.cells, template.chunks,
                template.shard)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _write_template(template: StoreTemplate, url: str, storage_options: dict | None, attrs: dict,
                    command: str) -> None:
    ds = template.dataset()
    created = _now()
    ds.attrs.update(
        schema=SCHEMA_NAME, schema_version=template.version, tablegen_version=__version__, **attrs, created=created,
        command=command, complete=False, **CONVENTION_ATTRIBUTES, source=source_attribute(__version__),
        history=history_line(created, f"{command or 'tablegen.run'}: created", __version__),
    )
    ds.to_zarr(url, mode="w-", compute=False, zarr_format=3, consolidated=False,
               storage_options=storage_options or None, encoding=template.encoding())
    start_manifest(open_group(url, storage_options, "r+"), template.chunks, *store_fs(url, storage_options),
                   template.version, template.shard or (1, 1))


def check_schema(attrs: dict, url: str, write: bool = True) -> None:
    """Refuse a group that is not a tablegen store of a version this tablegen writes (3, unsharded, or 4,
    sharded: each resumed in its own layout) or, to read, of an older version."""
    if attrs.get("schema") != SCHEMA_NAME:
        raise not_a_store_error(url, attrs)
    readable = attrs.get("schema_version") in READABLE_VERSIONS
    if attrs.get("schema_version") not in WRITABLE_VERSIONS and (write or not readable):
        hint = ("; migrate it (values unchanged) with tablegen.store.migrate_store(path)"
                if attrs.get("schema_version") in READABLE_VERSIONS else "")
        raise StoreError(f"store {url!r} has schema version {attrs.get('schema_version')!r}; this tablegen "
                         f"{__version__} writes versions {', '.join(map(str, WRITABLE_VERSIONS))}{hint}")


def _check_finished(group, url: str, storage_options: dict | None = None) -> None:
    if template_finished(group):
        return
    fs, root = store_fs(url, storage_options)
    if fs.exists(f"{root}{CREATING_SUFFIX}"):
        raise StoreError(f"store {url!r} is an unfinished template (its creation was interrupted); "
                         "the next `tablegen run` of its config writes it again")
    # no creation under way: a finished store that lost its manifest (a lost record alone is refused before,
    # naming `tablegen repair --rebuild-manifest`); the next run would not write it again
    raise StoreIntegrityError(f"store {url!r} is damaged: its integrity manifest (manifest/) is missing or cannot "
                              "be read, so nothing it holds can be checked, and its record cannot be rebuilt "
                              f"without it; re-create it (remove it, then `tablegen run CONFIG --store {url}`)")


def append_history(url: str, what: str, storage_options: dict | None = None) -> None:
    """Append a line (now, ``what``, this tablegen's version) to the store's ``history`` attribute; hold the lock."""
    group = open_group(url, storage_options, "r+")
    earlier = group.attrs.get("history")
    line = history_line(_now(), what, __version__)
    write_attributes(group, {"history": f"{earlier}\n{line}" if earlier else line})


def read_writable_attributes(url: str, storage_options: dict | None = None) -> dict:
    """The root attributes of a finished store of this schema version, which may be written to.

    Raises
    ------
    StoreError
        If it is not a tablegen store of this schema version, or an unfinished template.
    """
    group = open_group(url, storage_options, "r")
    attrs = group.attrs.asdict()
    check_schema(attrs, url)
    _check_finished(group, url, storage_options)
    return attrs


def _chunking(group) -> tuple[tuple[int, int], tuple[int, int]]:
    """((cells along P, along N), (inner chunk along P, along N)) of a store, from its done flags."""
    done = group["done"]
    return tuple(done.shape), layout(done)[0]


def repair_plan_mask(url: str, storage_options: dict | None = None) -> tuple[np.ndarray, object]:
    """Done flags with every cell of a damaged chunk counted not done, and the integrity report (no writes).

    Raises
    ------
    StoreIntegrityError
        If metadata is damaged (no resume can repair that).
    """
    report = check_integrity(url, storage_options)
    if report.fatal:
        raise StoreIntegrityError(f"store {url!r} is damaged beyond a resume: "
                                  + "; ".join(str(p) for p in report.problems[:10]) + "; re-create it")
    mask = done_mask(url, storage_options)
    _, (cp, cn) = _chunking(open_group(url, storage_options, "r"))
    for (i, j) in report.regions:
        mask[i * cp:(i + 1) * cp, j * cn:(j + 1) * cn] = False
    return mask, report


def repair(url: str, storage_options: dict | None = None) -> int:
    """Un-do every damaged chunk's cells so that a resume recomputes exactly them; returns how many chunks."""
    _, report = repair_plan_mask(url, storage_options)
    for problem in report.problems:
        logger.warning("store %s: %s; recomputing its cells", url, problem)
    clear_regions(url, storage_options, report.regions)
    return len(report.regions)


def done_mask(url: str, storage_options: dict | None = None) -> np.ndarray:
    """(len(P), len(N)) booleans: which cells are written (a done chunk that cannot be decoded counts not done)."""
    done = open_group(url, storage_options, "r")["done"]
    try:
        return np.asarray(done[...], dtype=bool)
    except Exception:  # noqa: BLE001 - damaged flags: read them chunk by chunk
        from tablegen.store.integrity import read_block
        mask = np.zeros(done.shape, bool)
        cp, cn = done.chunks
        for i in range(-(-done.shape[0] // cp)):
            for j in range(-(-done.shape[1] // cn)):
                try:
                    mask[i * cp:(i + 1) * cp, j * cn:(j + 1) * cn] = read_block(done, i, j)
                except Exception:  # noqa: BLE001
                    pass
        return mask


def _check_aligned(shape: tuple[int, int], outer: tuple[int, int], p_slice: slice, n_slice: slice,
                   what: str) -> None:
    for axis, part, size, chunk in (("P", p_slice, shape[0], outer[0]), ("N", n_slice, shape[1], outer[1])):
        if part.start % chunk or (part.stop % chunk and part.stop != size) or part.stop > size:
            raise ValueError(f"region {axis}[{part.start}:{part.stop}] is not aligned with Zarr {what} of {chunk}")


def write_chunk(url: str, region: tuple[slice, slice], arrays: dict[str, np.ndarray],
                storage_options: dict | None = None) -> None:
    """Write one task's region (one shard of a schema-4 store, one chunk of a schema-3 store), whole: every
    data variable, its manifest entry (the digests of each inner chunk), then the done flags.

    On a local filesystem each step is made durable (fsync of its files, then of their folders) before the
    next begins (:class:`~tablegen.store.shards.Durable`).

    Parameters
    ----------
    url : str
        The store.
    region : (slice, slice)
        Index ranges along P and N, aligned with the store's shards (or chunks): a task's is one.
    arrays : dict
        One array per data variable of the store (:data:`DATA_VARIABLES`, and the minimum detectable AUC in a
        store of schema version 5), shaped as the variable over the region.
    storage_options : dict, optional
        fsspec options of ``url``.
    """
    p_slice, n_slice = region
    group = open_group(url, storage_options, "r+")
    done = group["done"].with_config(WRITE_CONFIG)
    (inner, per_shard), shape = layout(done), tuple(done.shape)
    i, j = p_slice.start // inner[0], n_slice.start // inner[1]
    _check_aligned(shape, (inner[0] * per_shard[0], inner[1] * per_shard[1]), p_slice, n_slice,
                   "shards" if done.shards else "chunks")
    names = data_variables(version_of(group))
    missing, extra = set(names) - set(arrays), set(arrays) - set(names)
    if missing or extra:
        raise ValueError(f"write_chunk needs every data variable of the store and no other; missing "
                         f"{sorted(missing)}, not in the store {sorted(extra)}")
    arrays = {name: np.asarray(arrays[name], dtype=ALL_VARIABLES[name][1]) for name in names}
    fs, root = store_fs(url, storage_options)
    durable = Durable(fs, root)
    written = []
    for name in names:
        written += write_whole(group[name].with_config(WRITE_CONFIG), region, arrays[name], fs, root)
    durable.sync(written)
    table = shard_digests(arrays, inner)
    write_shard_entry(group, i, j, table)
    durable.sync([entry_key(i // per_shard[0], j // per_shard[1])])  # a task's entries: one manifest chunk
    cells = (p_slice.stop - p_slice.start, n_slice.stop - n_slice.start)
    durable.sync(write_whole(done, region, np.ones(cells, bool), fs, root))


def mark_complete(url: str, storage_options: dict | None = None) -> bool:
    """Consolidate the manifest and set ``complete = True`` once every cell is done (checked, not assumed).

    A store already complete is left as it is (a no-op rerun rewrites nothing).  Returns whether it wrote.
    """
    mask = done_mask(url, storage_options)
    if not mask.all():
        raise RuntimeError(f"{int((~mask).sum())} cells are not done; the store is not complete")
    group = open_group(url, storage_options, "r+")
    if group.attrs.get("complete") is True and "chunks" in group["manifest"].attrs:
        return False
    chain = consolidate(group)  # the manifest first: until the root says complete, its chain leaves chunks out
    write_attributes(group, {"complete": True, "completed": _now(), CHAIN: chain})  # one write: never half
    Durable(*store_fs(url, storage_options)).sync([f"{MANIFEST}/zarr.json", "zarr.json"])
    return True


def open_store(url: str, storage_options: dict | None = None) -> xr.Dataset:
    """Open a tablegen store as an xarray Dataset (lazy), refusing other schemas and unfinished templates.

    A store is also plain Zarr (format 3): ``xarray.open_zarr(path, consolidated=False)`` opens it without
    tablegen, and without a warning.  Say ``consolidated=False``: stores carry no consolidated metadata
    (their integrity manifest checks each array's own metadata), so a bare ``xarray.open_zarr(path)``
    looks for it first and warns (``RuntimeWarning``) before reading the arrays' metadata one by one.

    Raises
    ------
    StoreError
        If ``url`` holds no Zarr group, one that is not a tablegen store of this schema version, an
        unfinished template, or metadata that cannot be read (:class:`StoreIntegrityError`).

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> open_store(bundled_table_path()).attrs["complete"]
    True
    >>> import xarray as xr
    >>> xr.open_zarr(bundled_table_path(), consolidated=False).sizes["metric"]
    6
    """
    return open_store_group(url, storage_options)[1]


def open_store_group(url: str, storage_options: dict | None = None) -> tuple:
    """(Zarr group, xarray Dataset) of a tablegen store, opened once: the Dataset reads through the group's
    store, so the store's filesystem and root metadata are opened a single time.  Refuses as :func:`open_store`.
    """
    try:
        group = open_group(url, storage_options, "r")
    except StoreIntegrityError:
        raise
    except StoreError:  # no group: an interrupted creation leaves only its marker
        if store_state(url, storage_options) == "unfinished":
            raise StoreError(f"store {url!r} is an unfinished template (its creation was interrupted); "
                             "the next `tablegen run` of its config writes it again") from None
        raise
    attrs = group.attrs.asdict()
    if attrs.get("schema") == SCHEMA_NAME and attrs.get("schema_version") in WRITABLE_VERSIONS:
        _check_finished(group, url, storage_options)
    check_schema(attrs, url, write=False)
    if attrs.get("schema_version") == 1:
        logger.warning("store %s has schema version 1: no checksums or manifest, so damage cannot be detected; "
                       "migrate it with tablegen.store.migrate_store", url)
    import xarray as xr

    try:
        return group, xr.open_zarr(group.store, consolidated=False, zarr_format=3)
    except Exception as error:  # noqa: BLE001 - an array's zarr.json damaged: name it, no traceback
        raise StoreIntegrityError(f"store {url!r}: its metadata cannot be read ({type(error).__name__}: {error}); "
                                  "run `tablegen verify` on it to see what is damaged") from None
