"""Migrate a store of schema version 1 (no checksums, no manifest) to version 2, values unchanged.

Every array is copied value for value (raw Zarr reads and writes, no xarray decoding, so NaN payloads
and integer fills stay as they are) into a new store beside the old one, re-encoded with the crc32c
checksum codec and with every chunk written; the manifest is then built from the copied values, and
the new store takes the old one's place.  Re-runnable: a store already at version 2 is left alone, and
a migration killed half-way starts again from the old store.
"""

from __future__ import annotations

import logging

import numpy as np

from tablegen.store.integrity import consolidate, region_digests, start_manifest, write_region_entry
from tablegen.store.schema import (DATA_VARIABLES, SCHEMA_NAME, SCHEMA_VERSION, WRITE_CONFIG, chunk_codecs,
                                   chunk_regions, open_group, store_fs)
from tablegen.errors import StoreError

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
