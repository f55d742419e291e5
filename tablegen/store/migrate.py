"""Migrate a store of schema version 1 or 2 to version 3 (unsharded), values unchanged; add the CF/ACDD
attributes to a store written before stores carried them (:func:`add_conventions`, metadata only).

From version 1 (no checksums, no manifest): every array is copied value for value (raw Zarr reads and
writes, no xarray decoding, so NaN payloads and integer fills stay as they are) into a new store beside
the old one, re-encoded with the crc32c checksum codec and with every chunk written; the manifest is then
built from the copied values, and the new store takes the old one's place.  From version 2 (a manifest,
no hash chain): metadata only, after an integrity check: the manifest's record is written again in this
version's form (every array's metadata document as stored, the schema version) and the root records its
digest.  Re-runnable: a store already at version 3 or 4 is left alone, and a migration killed half-way
starts again or is finished (the manifest's new record is written in one write, then the root's attributes in
one write, so a kill leaves the store before, between, or after; between, the record must be exactly what the
migration writes, or nothing is done).  A store whose layout (sharded or not) or manifest does not match the
schema version its root claims is refused, naming the mismatch: a migration never rewrites such a record.
A store of version 3 keeps its layout (sharding a store means rewriting every chunk:
``tablegen run`` of its config with ``shard`` set writes a new one, bit for bit the same values).
"""

from __future__ import annotations

import datetime
import logging

import numpy as np

from tablegen._version import __version__
from tablegen.errors import StoreError, StoreIntegrityError
from tablegen.store.integrity import check_integrity, consolidate, write_region_entry
from tablegen.store.manifest import (
    CHAIN,
    MANIFEST,
    chain_digest,
    metadata_record,
    region_digests,
    start_manifest,
)
from tablegen.store.schema import (
    CONVENTION_ATTRIBUTES,
    COORDINATE_ATTRIBUTES,
    DATA_VARIABLES,
    POWER_VERSION,
    READABLE_VERSIONS,
    SCHEMA_NAME,
    SHARDED_VERSION,
    UNSHARDED_VERSION,
    WRITABLE_VERSIONS,
    WRITE_CONFIG,
    chunk_codecs,
    chunk_regions,
    history_line,
    open_group,
    source_attribute,
    store_fs,
    write_attributes,
)

logger = logging.getLogger(__name__)

MIGRATING_SUFFIX = ".migrating"
OLD_SUFFIX = ".v1"


def _copy_array(old, new_group, name: str) -> None:
    array = new_group.create_array(
        name, shape=old.shape, chunks=old.chunks, dtype=old.metadata.data_type, fill_value=old.fill_value,
        dimension_names=old.metadata.dimension_names, attributes=old.attrs.asdict(), **chunk_codecs())
    array.with_config(WRITE_CONFIG)[...] = old[...]


def _write_manifest(group, fs, root: str) -> None:
    done = np.asarray(group["done"][...], dtype=bool)
    chunks = group["done"].chunks
    start_manifest(group, chunks, fs, root, UNSHARDED_VERSION)
    for (i, j) in chunk_regions(done.shape, chunks):
        p, n = slice(i * chunks[0], (i + 1) * chunks[0]), slice(j * chunks[1], (j + 1) * chunks[1])
        if done[p, n].all():
            arrays = {name: np.asarray(group[name][..., p, n]) for name in DATA_VARIABLES}
            write_region_entry(group, i, j, region_digests(arrays, done[p, n].shape))
    if group.attrs.get("complete") is True:
        write_attributes(group, {CHAIN: consolidate(group)})


def rerecord(group, fs, root: str, version: int | None = None, attrs: dict | None = None) -> None:
    """Write the manifest's record of the metadata again (schema ``version``'s form, 3 or 4; default: the
    version the manifest records), then the root's attributes ``attrs`` (default: as they are) with the chain
    digest, each in one write: after a metadata-only change checked first."""
    manifest = group[MANIFEST]
    version = manifest.attrs.get("schema_version", UNSHARDED_VERSION) if version is None else version
    attrs = group.attrs.asdict() if attrs is None else attrs
    write_attributes(manifest, {"schema_version": version,
                                "created": metadata_record(group, fs, root, attrs, version=version)})
    write_attributes(group, {**attrs, CHAIN: chain_digest(manifest.attrs.asdict(), attrs.get("complete") is True)})


def _manifest_version(group) -> int | None:
    try:
        return group[MANIFEST].attrs.get("schema_version", 2)
    except Exception:  # noqa: BLE001 - no manifest
        return None


#: What older tablegens wrote in ``references`` after the paper; stores migrated get today's words.
_OLD_REFERENCES_TAIL = "tablegen (this package, its README and DESIGN.md)"


def _migrated_attributes(attrs: dict) -> dict:
    """The root attributes a version-2 store has once migrated (its history gains a line)."""
    update = {"schema_version": UNSHARDED_VERSION}
    references = attrs.get("references")
    if isinstance(references, str) and references.endswith(_OLD_REFERENCES_TAIL):
        update["references"] = CONVENTION_ATTRIBUTES["references"]
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    line = history_line(now, f"migrated to schema version {UNSHARDED_VERSION} (tablegen.store.migrate_store), "
                             "values untouched", __version__)
    update["history"] = f"{attrs['history']}\n{line}" if attrs.get("history") else line
    return {**attrs, **update}


def _interrupted(group, fs, root: str) -> bool:
    """Whether a version-2 store is one whose migration was killed between its two writes: the manifest holds
    exactly the record the migration writes (version 3, over these arrays and the migrated root attributes),
    the root still says version 2 and records no chain digest."""
    attrs = group.attrs.asdict()
    manifest = group[MANIFEST].attrs.asdict()
    return (attrs.get("schema_version") == 2 and CHAIN not in attrs and manifest.get("schema_version")
            == UNSHARDED_VERSION and manifest.get("created") == metadata_record(group, fs, root,
                                                                              _migrated_attributes(attrs)))


def _migrate_metadata(url: str, storage_options: dict | None, group, fs, root: str) -> None:
    """Version 2 to this version in place: metadata only, once the store passes its version-2 check (or, where
    a migration was killed between its record and its root, once that record is exactly the migration's)."""
    if not _interrupted(group, fs, root):
        before = check_integrity(url, storage_options)
        if before.unchecked or before.being_written or not before.ok:
            raise StoreIntegrityError(f"store {url!r} cannot be migrated: " + (
                before.unchecked or before.being_written and f"it is being written ({before.being_written})"
                or "; ".join(str(p) for p in before.problems[:5])) + "; repair it first (tablegen run on its config)")
    group = open_group(url, storage_options, "r+")
    rerecord(group, fs, root, UNSHARDED_VERSION, _migrated_attributes(group.attrs.asdict()))


def _check_claims(group, url: str) -> None:
    """Refuse a store whose layout or manifest does not match the schema version its root claims (one a
    migration would relabel, blessing whatever changed the attribute): name the mismatch."""
    said, recorded = group.attrs.get("schema_version"), _manifest_version(group)
    try:
        sharded = bool(group["done"].shards)
    except Exception:  # noqa: BLE001 - no readable done flags: no layout to migrate
        raise StoreIntegrityError(f"store {url!r} cannot be migrated: its done flags' metadata cannot be read; "
                                  "re-create the store (`tablegen run CONFIG --store NEW`)") from None
    layout_version = SHARDED_VERSION if sharded and said != POWER_VERSION else None
    problem = None
    if layout_version is not None and said != layout_version:
        problem = (f"its arrays are sharded (schema version {SHARDED_VERSION}'s layout), but its root says "
                   f"schema_version = {said!r}")
    elif recorded is None and said != 1:
        problem = (f"its root says schema_version = {said!r}, but it has no manifest (only a version-1 store has "
                   "none: its manifest was lost)")
    elif recorded is not None and recorded != said and not (said == 2 and recorded == UNSHARDED_VERSION):
        problem = (f"its root says schema_version = {said!r}, but its manifest records schema version "
                   f"{recorded!r}")
    if problem is not None:
        raise StoreIntegrityError(
            f"store {url!r} cannot be migrated: {problem}; the attribute or the manifest was changed, and a "
            "migration never rewrites the record of a store whose layout does not match the schema it claims; "
            f"`tablegen verify {url}` names the damage; re-create the store (`tablegen run CONFIG --store NEW`)")

def migrate_store(url: str, storage_options: dict | None = None) -> bool:
    """Rewrite a version-1 or version-2 store as version 3 (unsharded); values bit for bit the same.

    Parameters
    ----------
    url : str
        Store path or fsspec URL.  Hold no lock on it elsewhere while this runs.
    storage_options : dict, optional

    Returns
    -------
    bool
        True if the store was migrated, False if it already was at version 3 or 4.

    Raises
    ------
    StoreError
        If the store is not a tablegen store of a version this tablegen reads.
    StoreIntegrityError
        If a version-2 store fails its integrity check (repair it first: its record is not rewritten over
        damage).

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> migrate_store(bundled_table_path())  # already migrated
    False
    """
    fs, root = store_fs(url, storage_options)
    if not fs.exists(root) and fs.exists(f"{root}{OLD_SUFFIX}"):  # killed between the two moves below
        fs.mv(f"{root}{OLD_SUFFIX}", root, recursive=True)
    old = open_group(url, storage_options, "r")
    attrs = old.attrs.asdict()
    if attrs.get("schema") != SCHEMA_NAME or attrs.get("schema_version") not in READABLE_VERSIONS:
        raise StoreError(f"store {url!r} is not a tablegen store of schema version "
                         f"{', '.join(map(str, READABLE_VERSIONS))}")
    _check_claims(old, url)
    if attrs["schema_version"] in WRITABLE_VERSIONS and _manifest_version(old) == attrs["schema_version"]:
        return False
    if _manifest_version(old) is not None:
        _migrate_metadata(url, storage_options, old, fs, root)
        logger.info("migrated %s to schema version %d (metadata only)", url, UNSHARDED_VERSION)
        return True
    target = f"{root}{MIGRATING_SUFFIX}"
    if fs.exists(target):
        fs.rm(target, recursive=True)
    new = open_group(_url_for(url, target), storage_options, "w")
    write_attributes(new, {**attrs, "schema_version": UNSHARDED_VERSION})
    for name in sorted(old.array_keys()):
        _copy_array(old[name], new, name)
    _write_manifest(new, fs, target)
    fs.mv(root, f"{root}{OLD_SUFFIX}", recursive=True)
    fs.mv(target, root, recursive=True)
    fs.rm(f"{root}{OLD_SUFFIX}", recursive=True)
    logger.info("migrated %s to schema version %d", url, UNSHARDED_VERSION)
    return True


def _url_for(url: str, path: str) -> str:
    """``path`` (a filesystem path) as a URL of the same protocol as ``url``."""
    return f"{url.split('://', 1)[0]}://{path.lstrip('/')}" if "://" in url else path


def add_conventions(url: str, storage_options: dict | None = None) -> bool:
    """Add the CF-1.10/ACDD-1.3 attributes to a store written without them; metadata only, values untouched.

    The coordinates get ``long_name`` (and ``units``), the root ``Conventions``, ``title``, ``summary``,
    ``references``, ``source`` (the tablegen that wrote the values) and ``history`` (its creation, then this
    update); the manifest's record of the metadata is written again so that ``tablegen verify`` still
    checks it.  Only an intact store is updated (its integrity is checked first and after).  Hold no lock
    on it elsewhere while this runs.

    Returns
    -------
    bool
        True if attributes were added, False if the store already had them all.

    Raises
    ------
    StoreIntegrityError
        If the store fails its integrity check (repair it first: ``tablegen run`` on its config).

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> add_conventions(bundled_table_path())  # the bundled table has them
    False
    """
    before = check_integrity(url, storage_options)
    if before.unchecked or before.being_written or not before.ok:
        raise StoreIntegrityError(f"store {url!r} cannot take new attributes: "
                                  + (before.unchecked or "; ".join(str(p) for p in before.problems[:5])))
    group = open_group(url, storage_options, "r+")
    if _manifest_version(group) not in WRITABLE_VERSIONS:
        raise StoreError(f"store {url!r} has schema version {_manifest_version(group)}; migrate it first "
                         "(tablegen.store.migrate_store: values unchanged)")
    attrs = group.attrs.asdict()
    missing_coordinates = {name: wanted for name, wanted in COORDINATE_ATTRIBUTES.items()
                           if any(group[name].attrs.get(k) != v for k, v in wanted.items())}
    root = {**CONVENTION_ATTRIBUTES, "source": source_attribute(attrs.get("tablegen_version", "unknown"))}
    missing_root = {k: v for k, v in root.items() if k not in attrs}
    if not missing_coordinates and not missing_root and "history" in attrs:
        return False
    for name, wanted in missing_coordinates.items():
        group[name].update_attributes(wanted)
    history = attrs.get("history") or history_line(attrs.get("created", "unknown time"),
                                                    f"{attrs.get('command') or 'tablegen.run'}: created",
                                                    attrs.get("tablegen_version", "unknown"))
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    history += "\n" + history_line(now, "CF/ACDD attributes added (tablegen.store.add_conventions), values "
                                         "untouched", __version__)
    rerecord(group, *store_fs(url, storage_options), attrs={**attrs, **missing_root, "history": history})
    after = check_integrity(url, storage_options)
    if not after.ok:  # cannot happen unless the store changed meanwhile: say so
        raise StoreIntegrityError(f"store {url!r} fails its integrity check after the update: "
                                  + "; ".join(str(p) for p in after.problems[:5]))
    logger.info("added CF/ACDD attributes to %s", url)
    return True


#: The target powers :func:`add_minimum_detectable` tabulates by default.
DEFAULT_POWER_LEVELS = (0.5, 0.8, 0.9)


def _check_levels(levels) -> tuple[float, ...]:
    from tablegen.errors import Argument, TablegenInputError

    try:
        values = [float(level) for level in levels]
    except (TypeError, ValueError):
        values = None
    if not values or any(not 0.0 < v < 1.0 for v in values) or values != sorted(set(values)):
        raise TablegenInputError.naming(Argument("levels", levels), " must be strictly increasing target powers "
                                        "in (0, 1)")
    return tuple(values)


def detectable_array(group, levels, max_seconds: float | None = None, cells=None) -> np.ndarray:
    """The minimum detectable AUC of a store's grid (metric, power, alpha, C, P, N), computed exactly
    (:func:`~tablegen.compute.exact.detectable.cell_detectable_aucs`) for every cell, or only at ``cells``
    ((i, j) indices along P and N; the others NaN)."""
    from tablegen.compute.exact.detectable import cell_detectable_aucs
    from tablegen.compute.metrics import get_metric

    metrics = [get_metric(str(m)) for m in group["metric"][...]]
    alphas, Cs = group["alpha"][...].tolist(), group["C"][...].tolist()
    P, N = group["P"][...].tolist(), group["N"][...].tolist()
    out = np.full((len(metrics), len(levels), len(alphas), len(Cs), len(P), len(N)), np.nan)
    for i, j in (np.ndindex(len(P), len(N)) if cells is None else cells):
        for m, spec in enumerate(metrics):
            out[m, ..., i, j] = cell_detectable_aucs(spec, P[i], N[j], Cs, alphas, levels, max_seconds)
    return out


#: How xarray records a float64 NaN fill value in an array's attributes (base64 of its little-endian bytes).
_XARRAY_NAN_FILL = "AAAAAAAA+H8="


def _power_arrays(group, levels, values: np.ndarray, max_seconds: float | None) -> None:
    """Create the ``power`` coordinate and the minimum detectable AUC (its chunks and shards over (P, N) as the
    done flags'), every chunk written."""
    from zarr.codecs import ZstdCodec

    from tablegen.compute.exact.detectable import AUC_TOLERANCE
    from tablegen.store.schema import ALL_VARIABLES, POWER_COORDINATE_ATTRIBUTES, layout

    # the metadata a job's template writes through xarray (its coordinates without the data's checksum codec,
    # the fill value also as xarray's attribute), so that a store given the array later has the metadata its
    # config with this power: section makes (what `tablegen repair --rebuild-manifest` checks it against)
    group.create_array("power", shape=(len(levels),), chunks=(len(levels),), dtype="float64", fill_value=np.nan,
                       dimension_names=("power",), attributes={**POWER_COORDINATE_ATTRIBUTES["power"],
                                                               "_FillValue": _XARRAY_NAN_FILL},
                       overwrite=True, compressors=(ZstdCodec(level=0),)).with_config(WRITE_CONFIG)[...] = \
        np.asarray(levels)
    done = group["done"]
    (cp, cn), (a, b) = layout(done)
    dims, dtype, fill, description = ALL_VARIABLES["minimum_detectable_auc"]
    attrs = {"description": description, "tolerance": AUC_TOLERANCE}
    if max_seconds is not None:
        attrs["max_seconds"] = max_seconds
    attrs["_FillValue"] = _XARRAY_NAN_FILL
    lead = values.shape[:-2]
    array = group.create_array(
        "minimum_detectable_auc", shape=values.shape, chunks=(*lead, cp, cn), dtype=dtype, fill_value=fill,
        dimension_names=dims, attributes=attrs, overwrite=True,
        shards=(*lead, cp * a, cn * b) if done.shards else None, **chunk_codecs())
    array.with_config(WRITE_CONFIG)[...] = values


def _power_digests(group, values: np.ndarray) -> np.ndarray:
    """The region table of the store with the minimum detectable AUC's digests inserted before the done flags'."""
    from tablegen.store.manifest import DIGESTS, digest
    from tablegen.store.schema import layout

    old = np.asarray(group[MANIFEST][DIGESTS][...])
    (cp, cn), _ = layout(group["done"])
    table = np.zeros((*old.shape[:2], old.shape[2] + 1, 32), np.uint8)
    table[:, :, :-2], table[:, :, -1] = old[:, :, :-1], old[:, :, -1]
    for i, j in np.ndindex(old.shape[:2]):
        if old[i, j].any():
            block = values[..., i * cp:(i + 1) * cp, j * cn:(j + 1) * cn]
            table[i, j, -2] = np.frombuffer(digest(block, "float64"), np.uint8)
    return table


def added_power_section(url: str, storage_options: dict | None = None) -> tuple[tuple[float, ...], float | None] | None:
    """The power levels and ``max_seconds`` of the minimum detectable AUC a store holds though the config it records
    has no ``power:`` section (the array added by :func:`add_minimum_detectable`), or None where it holds none.

    What the array's own coordinate and attributes say: the template of the store's manifest is that of its config
    with this section (the region digests then vouch for the values).

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> levels, max_seconds = added_power_section(bundled_table_path())
    >>> levels
    (0.5, 0.8, 0.9)
    """
    group = open_group(url, storage_options, "r")
    if "power" not in group or "minimum_detectable_auc" not in group:
        return None
    levels = tuple(float(level) for level in np.asarray(group["power"][...]))
    max_seconds = group["minimum_detectable_auc"].attrs.get("max_seconds")
    return levels, None if max_seconds is None else float(max_seconds)


def add_minimum_detectable(url: str, levels=DEFAULT_POWER_LEVELS, storage_options: dict | None = None,
                           max_seconds: float | None = None) -> bool:
    """Bring a finished store of schema version 3 or 4 to version 5: compute the minimum detectable AUC (exact
    Lehmann power) of every cell, metric, C and alpha at each target power of ``levels``, and add it, with its
    ``power`` coordinate, its manifest entries and a new metadata record; every other value untouched (its layout
    and its config hash too: it stays the store of the job that wrote it).

    Only an intact, complete store is changed (its integrity is checked first and after); it is held locked
    meanwhile.  Without it, a store keeps answering every other lookup, and ``minimum_detectable(..., table=...)``
    refuses it, naming this function.

    Parameters
    ----------
    url : str
        Store path or fsspec URL.
    levels : sequence of float
        Target powers in (0, 1), strictly increasing (default 0.5, 0.8, 0.9).
    storage_options : dict, optional
    max_seconds : float, optional
        Leave NaN where one exact power probability is estimated over this many seconds (the config's
        ``power.max_seconds``); default: every cell where the metric has exact Lehmann power.

    Returns
    -------
    bool
        True if the array was added, False if the store already had it.

    Raises
    ------
    StoreIntegrityError
        If the store fails its integrity check.
    StoreError
        If it is not complete, or of a version other than 3, 4 or 5.

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> add_minimum_detectable(bundled_table_path())  # the bundled table has it
    False
    """
    from tablegen.store.lock import StoreLock
    from tablegen.store.manifest import consolidated_chunks, create_digests, version_of
    from tablegen.store.schema import chunked_variables, layout

    levels = _check_levels(levels)
    fs, root = store_fs(url, storage_options)
    group = open_group(url, storage_options, "r")
    if version_of(group) == POWER_VERSION and group.attrs.get("schema_version") == POWER_VERSION:
        return False  # (checked before the lock: a read-only store that has it is left alone)
    with StoreLock(url, storage_options):
        before = check_integrity(url, storage_options)
        if before.unchecked or before.being_written or not before.ok:
            raise StoreIntegrityError(f"store {url!r} cannot take the minimum detectable AUC: " + (
                before.unchecked or before.being_written and f"it is being written ({before.being_written})"
                or "; ".join(str(p) for p in before.problems[:5])) + "; repair it first")
        if version_of(group) not in WRITABLE_VERSIONS[:2]:
            raise StoreError(f"store {url!r} has schema version {version_of(group)}; migrate it first "
                             "(tablegen.store.migrate_store)")
        if group.attrs.get("complete") is not True:
            raise StoreError(f"store {url!r} is not complete; finish it first (`tablegen run` on its config)")
        values = detectable_array(group, levels, max_seconds)
        group = open_group(url, storage_options, "r+")
        table = _power_digests(group, values)
        _power_arrays(group, levels, values, max_seconds)
        variables = chunked_variables(POWER_VERSION)
        digests = create_digests(group[MANIFEST], table.shape[:2], layout(group["done"])[1], variables)
        digests.with_config(WRITE_CONFIG)[...] = table
        chunks = consolidated_chunks(table, {n: group[n].ndim for n in variables}, layout(group["done"])[1])
        attrs = group.attrs.asdict()
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        line = history_line(now, f"minimum detectable AUC added at power {', '.join(map(str, levels))} "
                                 "(tablegen.store.add_minimum_detectable), other values untouched", __version__)
        attrs = {**attrs, "schema_version": POWER_VERSION,
                 "history": f"{attrs['history']}\n{line}" if attrs.get("history") else line}
        write_attributes(group[MANIFEST], {"chunks": chunks})
        rerecord(group, fs, root, POWER_VERSION, attrs)
    after = check_integrity(url, storage_options)
    if not after.ok:  # cannot happen unless the store changed meanwhile: say so
        raise StoreIntegrityError(f"store {url!r} fails its integrity check after the update: "
                                  + "; ".join(str(p) for p in after.problems[:5]))
    logger.info("added the minimum detectable AUC to %s", url)
    return True
