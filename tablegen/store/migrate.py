"""Migrate a store of schema version 1 (no checksums, no manifest) to version 2, values unchanged; add the
CF/ACDD attributes to a store written before stores carried them (:func:`add_conventions`, metadata only).

Every array is copied value for value (raw Zarr reads and writes, no xarray decoding, so NaN payloads
and integer fills stay as they are) into a new store beside the old one, re-encoded with the crc32c
checksum codec and with every chunk written; the manifest is then built from the copied values, and
the new store takes the old one's place.  Re-runnable: a store already at version 2 is left alone, and
a migration killed half-way starts again from the old store.
"""

from __future__ import annotations

import datetime
import logging

import numpy as np

from tablegen._version import __version__
from tablegen.errors import StoreError, StoreIntegrityError
from tablegen.store.integrity import (
    MANIFEST,
    check_integrity,
    consolidate,
    metadata_record,
    region_digests,
    start_manifest,
    write_region_entry,
)
from tablegen.store.schema import (
    CONVENTION_ATTRIBUTES,
    COORDINATE_ATTRIBUTES,
    DATA_VARIABLES,
    SCHEMA_NAME,
    SCHEMA_VERSION,
    WRITE_CONFIG,
    chunk_codecs,
    chunk_regions,
    history_line,
    open_group,
    source_attribute,
    store_fs,
)

logger = logging.getLogger(__name__)

MIGRATING_SUFFIX = ".migrating"
OLD_SUFFIX = ".v1"


def _copy_array(old, new_group, name: str) -> None:
    array = new_group.create_array(
        name, shape=old.shape, chunks=old.chunks, dtype=old.metadata.data_type, fill_value=old.fill_value,
        dimension_names=old.metadata.dimension_names, attributes=old.attrs.asdict(), **chunk_codecs())
    array.with_config(WRITE_CONFIG)[...] = old[...]


def _write_manifest(group) -> None:
    done = np.asarray(group["done"][...], dtype=bool)
    chunks = group["done"].chunks
    start_manifest(group, chunks)
    for (i, j) in chunk_regions(done.shape, chunks):
        p, n = slice(i * chunks[0], (i + 1) * chunks[0]), slice(j * chunks[1], (j + 1) * chunks[1])
        if done[p, n].all():
            arrays = {name: np.asarray(group[name][..., p, n]) for name in DATA_VARIABLES}
            write_region_entry(group, i, j, region_digests(arrays, done[p, n].shape))
    if group.attrs.get("complete") is True:
        consolidate(group)


def migrate_store(url: str, storage_options: dict | None = None) -> bool:
    """Rewrite a version-1 store as version 2 (checksummed chunks and a manifest); values bit for bit the same.

    Parameters
    ----------
    url : str
        Store path or fsspec URL.  Hold no lock on it elsewhere while this runs.
    storage_options : dict, optional

    Returns
    -------
    bool
        True if the store was migrated, False if it already was at version 2.

    Raises
    ------
    StoreError
        If the store is not a tablegen store of version 1 or 2.

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
    if attrs.get("schema") != SCHEMA_NAME or attrs.get("schema_version") not in (1, SCHEMA_VERSION):
        raise StoreError(f"store {url!r} is not a tablegen store of schema version 1 or {SCHEMA_VERSION}")
    if attrs["schema_version"] == SCHEMA_VERSION:
        return False
    target = f"{root}{MIGRATING_SUFFIX}"
    if fs.exists(target):
        fs.rm(target, recursive=True)
    new = open_group(_url_for(url, target), storage_options, "w")
    new.attrs.update({**attrs, "schema_version": SCHEMA_VERSION})
    for name in sorted(old.array_keys()):
        _copy_array(old[name], new, name)
    _write_manifest(new)
    fs.mv(root, f"{root}{OLD_SUFFIX}", recursive=True)
    fs.mv(target, root, recursive=True)
    fs.rm(f"{root}{OLD_SUFFIX}", recursive=True)
    logger.info("migrated %s to schema version %d", url, SCHEMA_VERSION)
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
    if before.unchecked or not before.ok:
        raise StoreIntegrityError(f"store {url!r} cannot take new attributes: "
                                  + (before.unchecked or "; ".join(str(p) for p in before.problems[:5])))
    group = open_group(url, storage_options, "r+")
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
    group.attrs.update({**missing_root, "history": history})
    group[MANIFEST].attrs.update({"created": metadata_record(group)})
    after = check_integrity(url, storage_options)
    if not after.ok:  # cannot happen unless the store changed meanwhile: say so
        raise StoreIntegrityError(f"store {url!r} fails its integrity check after the update: "
                                  + "; ".join(str(p) for p in after.problems[:5]))
    logger.info("added CF/ACDD attributes to %s", url)
    return True
