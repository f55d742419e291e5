"""Reading a store's chunks for lookups: every chunk checked as it is read, damaged ones remembered.

:class:`ChunkReader` reads whole variables through :func:`tablegen.store.integrity.read_variable` (each
chunk against its checksum and the manifest) and refuses a lookup whose cell falls in a damaged chunk;
:func:`store_fingerprint` says when a store kept open has been written since.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from tablegen.errors import StoreIntegrityError
from tablegen.store.integrity import read_variable, written_regions
from tablegen.store.schema import open_group, store_fs

if TYPE_CHECKING:
    import zarr

__all__ = ["ChunkReader", "store_fingerprint"]


class ChunkReader:
    """Reads a store's variables for lookups and remembers which chunks are missing or undecodable.

    ``source`` names the store in errors (its path, or "bundled table").
    """

    def __init__(self, url: str, storage_options: dict | None, source: str, group: zarr.Group | None = None):
        self.group = open_group(url, storage_options, "r") if group is None else group
        self.fs, self.root = store_fs(url, storage_options)
        self.source, self.damaged = source, {}
        self.written = written_regions(self.group)

    def read(self, name: str) -> np.ndarray:
        values, self.damaged[name] = read_variable(self.group, self.fs, self.root, name, self.written)
        self.chunks = self.group[name].chunks[-2:]
        return values

    def refuse_damaged(self, name: str, p_index, n_index) -> None:
        """Raise :class:`StoreIntegrityError` if a (P, N) index falls in a damaged chunk of ``name``."""
        damaged = self.damaged.get(name)
        if not damaged:
            return
        regions = set(zip(np.ravel(np.asarray(p_index) // self.chunks[0]).tolist(),
                          np.ravel(np.asarray(n_index) // self.chunks[1]).tolist()))
        for region in sorted(regions & set(damaged)):
            raise StoreIntegrityError(f"{self.source}: cannot answer from a damaged cell: {damaged[region]}; "
                                      "`tablegen verify` lists every damaged chunk and `tablegen run` on its config "
                                      "recomputes them")


def store_fingerprint(url: str, storage_options: dict | None):
    """What changes whenever a store is written: its root metadata and manifest header, bytes and times
    (None if they cannot be read: the store is then opened afresh, and its opening names the problem)."""
    try:
        fs, root = store_fs(url, storage_options)
        parts = []
        for name in ("zarr.json", "manifest/zarr.json"):
            path = f"{root}/{name}"
            info = fs.info(path)
            parts.append((fs.cat_file(path), info.get("mtime"), info.get("LastModified"), info.get("ETag")))
        return repr(parts)
    except Exception:  # noqa: BLE001 - any failure: no fingerprint, no reuse
        return None
