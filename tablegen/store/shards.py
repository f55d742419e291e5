"""Writing a task's region whole, and making what a resume relies on durable, in order.

A task writes one region of every (P, N)-chunked array: one chunk of a schema-3 store, one shard of a
schema-4 store.  zarr writes part of a shard by reading the shard, merging and writing it back
(read-modify-write); a task always covers its shard whole, so :func:`write_whole` first removes the
shard's file: zarr then writes it from the task's values alone, never reading it (a damaged shard from an
earlier run cannot stop its repair, and no read is paid).  No two tasks ever write one shard.

On a local filesystem :class:`Durable` makes each step of a task durable before the next begins: the
region's data files, then its manifest entry, then its done flags, each followed by the folders whose
entries the writes renamed into place (zarr writes a file as ``<name>.<uuid>.partial`` and renames it).
A done flag that survives a power cut then never claims data that did not; the integrity check that every
resume runs finds anything else.  Other filesystems (object stores) write whole objects and are left alone.
"""

from __future__ import annotations

import os

import numpy as np

from tablegen.store.schema import chunk_key, is_local

__all__ = ["Durable", "region_files", "write_whole"]


def region_files(array, region: tuple[slice, slice]) -> list[str]:
    """The files (keys inside the store) of ``array``'s outer chunks (its shards, or its chunks) that a
    region over (P, N) touches, every leading dimension whole."""
    outer = (array.shards or array.chunks)[-2:]
    ranges = [range(part.indices(size)[0] // c, -(-part.indices(size)[1] // c))
              for part, size, c in zip(region, array.shape[-2:], outer)]
    return [chunk_key(array.path, array.ndim, i, j) for i in ranges[0] for j in ranges[1]]


def write_whole(array, region: tuple[slice, slice], values: np.ndarray, fs, root: str) -> list[str]:
    """Write ``values`` over a region made of whole shards (or chunks) of ``array``; returns the files written.

    A sharded array's files there are removed first, so that zarr encodes each shard from ``values`` alone
    instead of reading the old one (read-modify-write).  An unsharded array's whole chunks are written
    without a read by zarr itself.
    """
    files = region_files(array, region)
    if array.shards:
        for key in files:
            try:
                fs.rm_file(f"{root}/{key}")
            except FileNotFoundError:
                pass
    array[(Ellipsis, *region)] = values
    return files


class Durable:
    """fsync of a store's files and of the folders holding them (local filesystems only; elsewhere nothing).

    Examples
    --------
    >>> import fsspec
    >>> Durable(fsspec.filesystem("memory"), "/t.zarr").sync(["done/c/0/0"])  # not local: nothing to do
    0
    """

    def __init__(self, fs, root: str):
        self.root, self.local = root, is_local(fs)

    def sync(self, keys) -> int:
        """fsync each file of ``keys`` (inside the store), then each folder holding one; the number of fsyncs."""
        if not self.local:
            return 0
        paths = [os.path.join(self.root, key) for key in keys]
        folders = list(dict.fromkeys(os.path.dirname(path) for path in paths))
        count = 0
        for path, directory in [(path, False) for path in paths] + [(folder, True) for folder in folders]:
            try:
                fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
            except FileNotFoundError:  # a chunk zarr did not write (an all-fill chunk of an unsharded array)
                continue
            try:
                os.fsync(fd)
                count += 1
            finally:
                os.close(fd)
        return count
