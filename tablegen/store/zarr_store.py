"""The Zarr store of a job (DESIGN §4): template, chunk-aligned region writes, done flags, lock, finalize.

Life of a store::

    with StoreLock(url):          # one writer at a time (tablegen.store.lock)
        create_store(config)      # schema + coordinates + attributes + manifest record, no data
        write_chunk(...)          # every data variable of a chunk, its manifest entry, then its done flags
        mark_complete(config)     # once every cell is done: manifest consolidated, complete = True
    open_store(url)               # an xarray Dataset; refuses other schemas and unfinished templates

Every variable is chunked (P, N) exactly as the job's tasks are, and every write covers whole chunks,
so no two tasks ever touch the same Zarr chunk (Zarr 3 has no locks).  Done flags are written after
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
import os
import logging
from dataclasses import asdict

import dask.array as da
import numpy as np
import xarray as xr

from tablegen._version import __version__
from tablegen.store.lock import LOCK_SUFFIX, StoreLock
from tablegen.compute.mc import RNG_NAME
from tablegen.compute.stats import CI_LEVEL
from tablegen.store.integrity import (check_integrity, clear_regions, consolidate, region_digests, start_manifest,
                                      template_finished, write_region_entry)
from tablegen.store.migrate import migrate_store
from tablegen.store.report import store_report, verify_report
from tablegen.store.schema import (CONVENTION_ATTRIBUTES, COORDINATE_ATTRIBUTES, DATA_VARIABLES, SCHEMA_NAME,
                                   SCHEMA_VERSION, VARIABLES, WRITE_CONFIG, chunk_codecs, history_line, open_group,
                                   source_attribute, store_fs)
from tablegen.errors import StoreError, StoreIntegrityError

__all__ = ["DATA_VARIABLES", "LOCK_SUFFIX", "SCHEMA_NAME", "SCHEMA_VERSION", "VARIABLES", "StoreError",
           "StoreIntegrityError", "StoreLock", "append_history", "check_integrity", "clear_regions", "create_store",
           "done_mask", "mark_complete", "migrate_store", "open_store", "open_store_group", "store_exists",
           "store_report", "store_state", "verify_report", "write_chunk"]

logger = logging.getLogger(__name__)

#: Marker beside a store while its template is being written.
CREATING_SUFFIX = ".creating"


def store_exists(url: str, storage_options: dict | None = None) -> bool:
    """Whether ``url`` already holds a Zarr group (finished or not)."""
    try:
        fs, root = store_fs(url, storage_options)
        return fs.exists(f"{root}/zarr.json")
    except (PermissionError, NotADirectoryError, OSError) as error:
        raise StoreError(f"store {url!r} cannot be read ({getattr(error, 'strerror', None) or error})") from None


def store_state(url: str, storage_options: dict | None = None) -> str:
    """``"absent"``, ``"unfinished"`` (a template whose writing was interrupted) or ``"ready"``.

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> store_state(bundled_table_path())
    'ready'
    """
    if not store_exists(url, storage_options):  # first: a store that cannot be reached is named here
        fs, root = store_fs(url, storage_options)
        return "unfinished" if fs.exists(f"{root}{CREATING_SUFFIX}") else "absent"
    group = open_group(url, storage_options, "r")
    attrs = group.attrs.asdict()
    if attrs.get("schema") == SCHEMA_NAME and attrs.get("schema_version") == SCHEMA_VERSION \
            and not template_finished(group):
        return "unfinished"
    return "ready"


def _config_record(config) -> str:
    """The config as JSON, without storage options (they may hold credentials) and without any local
    path of this machine (DESIGN §4): a local store or scheduler file is recorded by its name."""
    record = asdict(config)
    record.pop("storage_options", None)
    record["store_url"] = _local_name(record["store_url"])
    if "scheduler_file" in record.get("cluster", {}):
        record["cluster"] = {**record["cluster"], "scheduler_file": _local_name(record["cluster"]["scheduler_file"])}
    return json.dumps(record, sort_keys=True)


def _local_name(location: str) -> str:
    """A local path's last component (``/home/me/t/paper.zarr`` -> ``paper.zarr``); URLs unchanged."""
    if "://" in location:
        return location
    return os.path.basename(os.path.normpath(location))


def template(config) -> xr.Dataset:
    """The job's Dataset with every variable lazily at its fill value (nothing is computed from it)."""
    sizes = {"metric": len(config.metrics), "alpha": len(config.alphas), "C": len(config.Cs),
             "P": len(config.P), "N": len(config.N), "tail_probability": len(config.tail_probabilities)}
    chunk_of = {"P": config.chunks[0], "N": config.chunks[1]}
    variables = {}
    for name, (dims, dtype, fill, description) in VARIABLES.items():
        shape = tuple(sizes[d] for d in dims)
        chunks = tuple(chunk_of.get(d, sizes[d]) for d in dims)
        variables[name] = xr.Variable(dims, da.full(shape, fill, dtype=dtype, chunks=chunks),
                                      attrs={"description": description})
    values = {"metric": np.array(config.metrics, dtype=object), "alpha": list(config.alphas),
              "C": list(config.Cs), "P": list(config.P), "N": list(config.N),
              "tail_probability": list(config.tail_probabilities)}
    coords = {name: xr.Variable(name, value, attrs=COORDINATE_ATTRIBUTES[name]) for name, value in values.items()}
    return xr.Dataset(variables, coords=coords)


def _remove_unfinished(config) -> None:
    fs, root = store_fs(config.store_url, config.storage_options)
    logger.warning("store %s: its template was never finished (creation interrupted); writing it again",
                   config.store_url)
    if fs.exists(root):
        fs.rm(root, recursive=True)


def create_store(config, command: str = "", state: str | None = None) -> None:
    """Write the schema, coordinates, provenance attributes and manifest record of ``config``'s store; no data.

    An unfinished template (creation interrupted) is removed and written again.  Call it holding the
    store's lock.  ``state`` is the store's :func:`store_state` if the caller has just read it under
    that lock (it is read here otherwise).

    Raises
    ------
    StoreError
        If the store already exists (resume it instead) or cannot be written there.
    """
    state = store_state(config.store_url, config.storage_options) if state is None else state
    if state == "ready":
        raise StoreError(f"store {config.store_url!r} already exists")
    fs, root = store_fs(config.store_url, config.storage_options)
    if fs.isfile(root):
        raise StoreError(f"store {config.store_url!r} cannot be created there: it is a file, not a folder")
    try:
        if state == "unfinished":
            _remove_unfinished(config)
        fs.pipe(f"{root}{CREATING_SUFFIX}", json.dumps({"config_hash": config.result_hash}).encode())
        _write_template(config, command)
        fs.rm(f"{root}{CREATING_SUFFIX}")
    except OSError as error:
        if not fs.exists(root) and fs.exists(f"{root}{CREATING_SUFFIX}"):  # nothing of the store was written
            fs.rm(f"{root}{CREATING_SUFFIX}")
        raise StoreError(f"store {config.store_url!r} cannot be created there "
                         f"({getattr(error, 'strerror', None) or error})") from None
    logger.info("created store %s (%d cells, chunks %s)", config.store_url, config.cells, config.chunks)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _write_template(config, command: str) -> None:
    ds = template(config)
    created = _now()
    ds.attrs.update(
        schema=SCHEMA_NAME, schema_version=SCHEMA_VERSION, tablegen_version=__version__,
        config=_config_record(config), config_hash=config.result_hash, root_seed=config.seed,
        rng=RNG_NAME, replicates=config.replicates, ci_level=CI_LEVEL, created=created,
        command=command, complete=False, **CONVENTION_ATTRIBUTES, source=source_attribute(__version__),
        history=history_line(created, f"{command or 'tablegen.run'}: created", __version__),
    )
    ds.to_zarr(config.store_url, mode="w-", compute=False, zarr_format=3, consolidated=False,
               storage_options=config.storage_options or None,
               encoding={name: chunk_codecs() for name in VARIABLES})
    start_manifest(open_group(config.store_url, config.storage_options, "r+"), config.chunks)


#: Schema versions this tablegen reads; version 1 (no checksums, no manifest) for lookups only.
READABLE_VERSIONS = (1, SCHEMA_VERSION)


def check_schema(attrs: dict, url: str, write: bool = True) -> None:
    """Refuse a group that is not a tablegen store of this schema version (or, to read, of version 1)."""
    if attrs.get("schema") != SCHEMA_NAME:
        raise StoreError(f"store {url!r} is not a tablegen store (attribute schema = {attrs.get('schema')!r})")
    readable = attrs.get("schema_version") in READABLE_VERSIONS
    if attrs.get("schema_version") != SCHEMA_VERSION and (write or not readable):
        hint = ("; migrate it (values unchanged) with tablegen.store.migrate_store(path)"
                if attrs.get("schema_version") == 1 else "")
        raise StoreError(f"store {url!r} has schema version {attrs.get('schema_version')!r}; this tablegen "
                         f"{__version__} reads version {SCHEMA_VERSION}{hint}")


def _check_finished(group, url: str) -> None:
    if not template_finished(group):
        raise StoreError(f"store {url!r} is an unfinished template (its creation was interrupted); "
                         "the next `tablegen run` of its config writes it again")


def append_history(config, what: str) -> None:
    """Append a line (now, ``what``, this tablegen's version) to the store's ``history`` attribute; hold the lock."""
    group = open_group(config.store_url, config.storage_options, "r+")
    earlier = group.attrs.get("history")
    line = history_line(_now(), what, __version__)
    group.attrs.update({"history": f"{earlier}\n{line}" if earlier else line})


def check_resumable(config) -> None:
    """Refuse to resume a store written by another config (result hash), schema or random stream."""
    group = open_group(config.store_url, config.storage_options, "r")
    attrs = group.attrs.asdict()
    check_schema(attrs, config.store_url)
    _check_finished(group, config.store_url)
    if attrs.get("rng") != RNG_NAME:
        raise StoreError(
            f"store {config.store_url!r} was sampled with another random stream (rng = {attrs.get('rng')!r}); "
            f"this tablegen {__version__} samples with {RNG_NAME!r}, so resuming would mix the two; "
            "use a new store"
        )
    if attrs.get("config_hash") != config.result_hash:
        try:
            stored = json.loads(attrs.get("config", "{}"))
        except (TypeError, json.JSONDecodeError):
            stored = {}
        differing = sorted(k for k, v in config.result_fields().items()
                           if json.loads(json.dumps(v)) != stored.get(k))
        raise StoreError(
            f"store {config.store_url!r} was written by a different config (hash "
            f"{str(attrs.get('config_hash'))[:12]}…, this config {config.result_hash[:12]}…; "
            f"differing fields: {', '.join(differing) or 'unknown'}); use another store or the same config"
        )


def repair_plan_mask(config) -> tuple[np.ndarray, object]:
    """Done flags with every cell of a damaged chunk counted not done, and the integrity report (no writes).

    Raises
    ------
    StoreIntegrityError
        If metadata is damaged (no resume can repair that).
    """
    report = check_integrity(config.store_url, config.storage_options)
    if report.fatal:
        raise StoreIntegrityError(f"store {config.store_url!r} is damaged beyond a resume: "
                                  + "; ".join(str(p) for p in report.problems[:10]) + "; re-create it")
    mask = done_mask(config)
    for (i, j) in report.regions:
        mask[i * config.chunks[0]:(i + 1) * config.chunks[0], j * config.chunks[1]:(j + 1) * config.chunks[1]] = False
    return mask, report


def repair(config) -> int:
    """Un-do every damaged chunk's cells so that the run recomputes exactly them; returns how many chunks."""
    _, report = repair_plan_mask(config)
    for problem in report.problems:
        logger.warning("store %s: %s; recomputing its cells", config.store_url, problem)
    clear_regions(config.store_url, config.storage_options, report.regions)
    return len(report.regions)


def done_mask(config) -> np.ndarray:
    """(len(P), len(N)) booleans: which cells are written (a done chunk that cannot be decoded counts not done)."""
    done = open_group(config.store_url, config.storage_options, "r")["done"]
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


def _check_aligned(config, p_slice: slice, n_slice: slice) -> None:
    for axis, part, size, chunk in (("P", p_slice, len(config.P), config.chunks[0]),
                                    ("N", n_slice, len(config.N), config.chunks[1])):
        if part.start % chunk or (part.stop % chunk and part.stop != size):
            raise ValueError(f"region {axis}[{part.start}:{part.stop}] is not aligned with Zarr chunks of {chunk}")


def write_chunk(config, p_slice: slice, n_slice: slice, arrays: dict[str, np.ndarray]) -> None:
    """Write one chunk-aligned region: every data variable, its manifest entry, then the done flags.

    Parameters
    ----------
    config : JobConfig
    p_slice, n_slice : slice
        Index ranges along P and N, aligned with the store's chunks.
    arrays : dict
        One array per name in :data:`DATA_VARIABLES`, shaped as the variable over the region.
    """
    _check_aligned(config, p_slice, n_slice)
    missing = set(DATA_VARIABLES) - set(arrays)
    if missing:
        raise ValueError(f"write_chunk needs every data variable; missing {sorted(missing)}")
    group = open_group(config.store_url, config.storage_options, "r+")
    arrays = {name: np.asarray(arrays[name], dtype=VARIABLES[name][1]) for name in DATA_VARIABLES}
    for name in DATA_VARIABLES:
        group[name].with_config(WRITE_CONFIG)[..., p_slice, n_slice] = arrays[name]
    region_shape = (p_slice.stop - p_slice.start, n_slice.stop - n_slice.start)
    write_region_entry(group, p_slice.start // config.chunks[0], n_slice.start // config.chunks[1],
                       region_digests(arrays, region_shape))
    group["done"].with_config(WRITE_CONFIG)[p_slice, n_slice] = True


def mark_complete(config) -> bool:
    """Consolidate the manifest and set ``complete = True`` once every cell is done (checked, not assumed).

    A store already complete is left as it is (a no-op rerun rewrites nothing).  Returns whether it wrote.
    """
    mask = done_mask(config)
    if not mask.all():
        raise RuntimeError(f"{int((~mask).sum())} cells are not done; the store is not complete")
    group = open_group(config.store_url, config.storage_options, "r+")
    if group.attrs.get("complete") is True and "chunks" in group["manifest"].attrs:
        return False
    consolidate(group)
    group.attrs.update({"complete": True, "completed": _now()})
    return True


def open_store(url: str, storage_options: dict | None = None) -> xr.Dataset:
    """Open a tablegen store as an xarray Dataset (lazy), refusing other schemas and unfinished templates.

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
    if attrs.get("schema") == SCHEMA_NAME and attrs.get("schema_version") == SCHEMA_VERSION:
        _check_finished(group, url)
    check_schema(attrs, url, write=False)
    if attrs.get("schema_version") != SCHEMA_VERSION:
        logger.warning("store %s has schema version %s: no checksums or manifest, so damage cannot be detected; "
                       "migrate it with tablegen.store.migrate_store", url, attrs.get("schema_version"))
    try:
        return group, xr.open_zarr(group.store, consolidated=False, zarr_format=3)
    except Exception as error:  # noqa: BLE001 - an array's zarr.json damaged: name it, no traceback
        raise StoreIntegrityError(f"store {url!r}: its metadata cannot be read ({type(error).__name__}: {error}); "
                                  "run `tablegen verify` on it to see what is damaged") from None
