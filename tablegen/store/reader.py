"""Reading a store for lookups: what a lookup reads is checked against the manifest before it is used.

:class:`StoreReader` opens a store with zarr alone (no xarray, dask or pandas), checks its root against
the manifest (the hash chain, the root attributes that change an answer, the schema version: a store
cannot downgrade itself), then checks each array's metadata, each coordinate and each chunk the moment it
is first read: a chunk must decode (crc32c) and hash (SHA-256) to what the manifest recorded.  The
digests of what was checked are kept for the reader's life (:attr:`StoreReader.digests`), and the values
with them, so nothing is read or hashed twice.  :func:`store_fingerprint` says when a store kept open
has been written since.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np

from tablegen.errors import StoreError, StoreIntegrityError
from tablegen.store.integrity import cells_text, read_block
from tablegen.store.manifest import (
    DIGESTS,
    MANIFEST,
    check_array_metadata,
    check_coordinate,
    digest,
    entry_key,
    read_root,
)
from tablegen.store.schema import (
    ALL_VARIABLES,
    CREATING_SUFFIX,
    READABLE_VERSIONS,
    SCHEMA_NAME,
    chunk_key,
    chunked_variables,
    key_file,
    layout,
    not_a_store_error,
    open_group,
    store_fs,
)

__all__ = ["StoreReader", "store_fingerprint"]

logger = logging.getLogger(__name__)

_REPAIR = "`tablegen verify` lists every damaged chunk and `tablegen run` on its config recomputes them"


class StoreReader:
    """A tablegen store opened for lookups, every piece checked against its manifest as it is first read.

    Parameters
    ----------
    url : str
        Store path or fsspec URL.
    storage_options : dict, optional
        fsspec options of ``url``.
    source : str
        How errors name the store (its path, or "bundled table").
    allow_unverified : bool
        Read a store of schema version 1 (no checksums, no manifest: nothing can be checked), with a warning.

    Raises
    ------
    StoreError
        Not a tablegen store, of a schema this tablegen does not read, an unfinished template, or a
        schema-1 store without ``allow_unverified``.
    StoreIntegrityError
        The root disagrees with the manifest (attributes, chain digest, schema version).

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> reader = StoreReader(bundled_table_path(), None, "bundled table")
    >>> reader.coordinate("C").tolist(), reader.block("replicates", 0, 0)[0, :3].tolist()
    ([10, 100, 1000], [10000000, 10000000, 10000000])
    >>> sorted(reader.digests)[:2]  # what was checked, kept: chunk keys and coordinates
    ['C', 'replicates/c/0/0']
    """

    def __init__(self, url: str, storage_options: dict | None, source: str, allow_unverified: bool = False):
        self.url, self.source = url, source
        self.group = open_group(url, storage_options, "r")
        self.fs, self.root = store_fs(url, storage_options)
        self.root_check = check = read_root(self.group, self.fs, self.root)
        self.attrs = check.attrs
        if "created" not in check.manifest and self.attrs.get("schema") in (None, SCHEMA_NAME) \
                and self.fs.exists(f"{self.root}{CREATING_SUFFIX}"):  # at any moment of creation, root included
            raise StoreError(f"store {url!r} is an unfinished template (its creation was interrupted); "
                             "the next `tablegen run` of its config writes it again")
        self._check_schema(allow_unverified)
        self.verified = bool(check.manifest) or check.version != 1
        if self.verified:
            if check.problems:
                raise StoreIntegrityError(f"{source} is damaged: " + "; ".join(map(str, check.problems))
                                          + "; `tablegen verify` names what is damaged")
            if "created" not in check.manifest:
                raise StoreIntegrityError(f"{source} is damaged: its manifest has no record of what was written "
                                          "(manifest/zarr.json: created); `tablegen verify` names what is damaged")
        #: key (chunk key, or array name for metadata and coordinates) -> hex digest of what was checked
        self.digests: dict[str, str] = {}
        self._arrays: dict = {}
        self._blocks: dict = {}
        self._entries: dict = {}

    def _check_schema(self, allow_unverified: bool) -> None:
        attrs = self.attrs
        if attrs.get("schema") != SCHEMA_NAME:
            raise not_a_store_error(self.url, attrs)
        version = attrs.get("schema_version")
        if version not in READABLE_VERSIONS:
            raise StoreError(f"store {self.url!r} has schema version {version!r}; this tablegen reads versions "
                             f"{', '.join(map(str, READABLE_VERSIONS))}")
        if self.root_check.version == 1 and not self.root_check.manifest:
            text = (f"store {self.url!r} has schema version 1: no checksums or manifest, so nothing it holds can be "
                    "checked; migrate it with tablegen.store.migrate_store(path) (values unchanged)")
            if not allow_unverified:
                raise StoreError(f"{text}, or pass allow_unverified=True to read it as it is")
            warnings.warn(f"{text}; read as it is (allow_unverified=True)", UserWarning, stacklevel=4)

    @property
    def complete(self) -> bool:
        return self.root_check.complete

    @property
    def variables(self) -> tuple[str, ...]:
        """The store's (P, N)-chunked variables, as its schema version (the manifest's record) says."""
        return chunked_variables(self.root_check.version)

    def holds(self, name: str) -> bool:
        """Whether the store holds variable ``name`` (the minimum detectable AUC: a store of schema version 5)."""
        return name in self.variables

    def _damaged(self, what: str) -> StoreIntegrityError:
        return StoreIntegrityError(f"{self.source} is damaged: {what}; `tablegen verify` names what is damaged")

    def array(self, name: str):
        """The zarr array ``name``, its metadata checked against the manifest the first time."""
        if name not in self._arrays:
            try:
                array = self.group[name]
            except Exception as error:  # noqa: BLE001 - unreadable or missing metadata
                raise self._damaged(f"{name}: metadata cannot be read ({type(error).__name__}: {error})") from None
            if self.verified:
                problem = check_array_metadata(self.root_check, self.fs, self.root, name, array)
                if problem is not None:
                    raise self._damaged(str(problem))
            self._arrays[name] = array
        return self._arrays[name]

    def coordinate(self, name: str) -> np.ndarray:
        """A coordinate's values, checked against the manifest's record."""
        if name not in self._blocks:
            array = self.array(name)
            try:
                values = np.asarray(array[...])
            except Exception as error:  # noqa: BLE001
                raise self._damaged(f"{name}: coordinate values cannot be read ({type(error).__name__}: "
                                    f"{error})") from None
            if self.verified:
                problem = check_coordinate(self.root_check, name, values)
                if problem is not None:
                    raise self._damaged(str(problem))
                self.digests[name] = self.root_check.created["coordinates"][name]
            self._blocks[name] = values
        return self._blocks[name]

    def chunks(self, name: str) -> tuple[int, int]:
        """A variable's (inner) chunk shape over (P, N)."""
        return layout(self.array(name))[0]

    def _key(self, name: str, i: int, j: int) -> str:
        return chunk_key(name, len(ALL_VARIABLES[name][0]), i, j, layout(self.array(name))[1])

    def block(self, name: str, i: int, j: int) -> np.ndarray:
        """Region (i, j) of variable ``name`` (every leading dimension whole), checked against the manifest.

        Raises
        ------
        StoreIntegrityError
            If the chunk is missing, cannot be decoded, or holds other values than the manifest records
            (naming the chunk and its cells).
        """
        key = self._key(name, i, j)
        if key in self._blocks:
            return self._blocks[key]
        array = self.array(name)
        try:
            values = read_block(array, i, j)
        except Exception as error:  # noqa: BLE001 - checksum, codec or truncation errors alike
            raise self._refused(key, i, j, f"cannot be decoded ({type(error).__name__}: {error})") from None
        if self.verified:
            expected, actual = self._expected(name, key, i, j), digest(values, ALL_VARIABLES[name][1]).hex()
            if expected is None:  # a region never written (unfinished store): it must not claim to be done
                if name == "done" and values.any():
                    raise self._refused(key, i, j, "marks cells done but the manifest has no entry for them")
            elif actual != expected:
                missing = not self.fs.exists(f"{self.root}/{key_file(key)}")
                raise self._refused(key, i, j, "is missing" if missing else
                                    "holds other values than were written (its hash differs from the manifest)")
            self.digests[key] = actual
        self._blocks[key] = values
        return values

    def _refused(self, key: str, i: int, j: int, what: str) -> StoreIntegrityError:
        try:
            chunks = self.chunks("done")
            cells = f" (cells {cells_text(self.coordinate('P').tolist(), self.coordinate('N').tolist(), chunks, i, j)})"
        except StoreIntegrityError:
            cells = ""
        return StoreIntegrityError(f"{self.source}: cannot answer from a damaged cell: chunk {key} {what}{cells}; "
                                   f"{_REPAIR}")

    def _expected(self, name: str, key: str, i: int, j: int) -> str | None:
        """The manifest's digest of a chunk: consolidated (complete store), else its region's entry (None: the
        region was never written)."""
        if self.complete:
            expected = self.root_check.expected_chunk(key)
            if expected is None:
                raise self._refused(key, i, j, "is not in the manifest although the store is complete")
            return expected
        if (i, j) not in self._entries:
            table = self.group[MANIFEST][DIGESTS]
            try:
                entry = np.asarray(table[i, j])
            except Exception as error:  # noqa: BLE001
                a, b = table.chunks[:2]
                raise self._refused(entry_key(i // a, j // b), i, j,
                                    f"(the region's manifest entry) cannot be decoded ({type(error).__name__}: "
                                    f"{error})") from None
            self._entries[(i, j)] = entry.reshape(len(self.variables), 32)
        entry = self._entries[(i, j)]
        if not entry.any():
            return None
        return entry[self.variables.index(name)].tobytes().hex()

    def variable(self, name: str) -> np.ndarray:
        """A whole variable, every region read and checked (for exports and reports over the grid)."""
        array = self.array(name)
        values = np.empty(array.shape, dtype=array.dtype)
        cp, cn = self.chunks(name)
        for i in range(-(-array.shape[-2] // cp)):
            for j in range(-(-array.shape[-1] // cn)):
                values[..., i * cp:(i + 1) * cp, j * cn:(j + 1) * cn] = self.block(name, i, j)
        return values


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

