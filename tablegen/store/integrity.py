"""Integrity of a store: per-chunk checksums, the content manifest, and a check that names what is wrong.

Four layers of evidence, each naming the array, chunk or file it concerns:

* every chunk ends in a crc32c checksum of its bytes (:func:`tablegen.store.schema.chunk_codecs`), so a
  flipped bit or a truncated file fails to decode instead of decoding into wrong numbers;
* the manifest (:mod:`tablegen.store.manifest`) holds the SHA-256 of each variable's decoded values per
  region, so a chunk that vanished, was swapped with another or holds other values is found;
* its ``created`` record holds digests of every array's metadata, of the coordinates and of the root
  attributes that say what the store holds, so an edited ``zarr.json`` or coordinate is named too; and
  the root holds the manifest's own digest, so a manifest swapped or rolled back is found;
* every file of the store must be one the manifest knows (a stray chunk or a ``*.partial`` file a killed
  run left is listed), and done flags must agree with the manifest's entries.

:func:`check_integrity` returns an :class:`IntegrityReport`; :func:`clear_regions` un-does damaged regions
so a resume recomputes exactly them; :func:`remove_stray_files` removes what a resume may remove.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import numpy as np
import zarr

from tablegen.store.lock import live_holder
from tablegen.store.manifest import (
    ALL_ARRAYS,
    CHAIN,
    DIGESTS,
    MANIFEST,
    Problem,
    RootCheck,
    arrays_of,
    chain_digest,
    check_array_metadata,
    check_coordinate,
    consolidated_chunks,
    coordinates_of,
    digest,
    entry_key,
    read_root,
    version_of,
)
from tablegen.store.schema import (
    ALL_VARIABLES,
    CREATING_SUFFIX,
    SCHEMA_NAME,
    WRITE_CONFIG,
    chunk_key,
    chunk_regions,
    chunked_variables,
    key_file,
    layout,
    not_a_store_error,
    open_group,
    store_fs,
    write_attributes,
)

__all__ = ["IntegrityReport", "Problem", "check_integrity", "clear_regions", "consolidate", "read_block",
           "remove_stray_files", "template_finished", "write_region_entry"]

logger = logging.getLogger(__name__)

#: zarr's local store writes each file to ``<name>.<32 hex digits>.partial`` and renames it into place; a run
#: killed in between leaves that file behind.
PARTIAL = re.compile(r"\.[0-9a-f]{32}\.partial$")


def template_finished(group: zarr.Group) -> bool:
    """Whether the template was written to the end (the manifest's ``created`` record exists)."""
    try:
        return "created" in group[MANIFEST].attrs
    except Exception:  # noqa: BLE001 - no manifest, or one that cannot be read: not finished
        return False


def write_region_entry(group: zarr.Group, i: int, j: int, digests: np.ndarray | None) -> None:
    """Record (or, with ``None``, clear) region (i, j)'s digests (an unsharded store: its own Zarr chunk)."""
    array = group[MANIFEST][DIGESTS].with_config(WRITE_CONFIG)
    array[i, j] = np.zeros(array.shape[2:], np.uint8) if digests is None else digests


def write_shard_entry(group: zarr.Group, i: int, j: int, table: np.ndarray) -> None:
    """Record the digests of a task's regions from inner chunk (i, j) on (``table``: (along P, along N,
    variables, 32), :func:`~tablegen.store.manifest.shard_digests`): one whole Zarr chunk of the manifest."""
    array = group[MANIFEST][DIGESTS].with_config(WRITE_CONFIG)
    array[i:i + table.shape[0], j:j + table.shape[1]] = table


def consolidate(group: zarr.Group) -> str:
    """Gather every region's digests into the manifest's ``chunks`` attribute (at completion); returns the
    chain digest the root must then record with ``complete = True``."""
    manifest = group[MANIFEST]
    ndims = {n: group[n].ndim for n in chunked_variables(version_of(group))}
    chunks = consolidated_chunks(np.asarray(manifest[DIGESTS][...]), ndims, layout(group["done"])[1])
    write_attributes(manifest, {"chunks": chunks})
    return chain_digest(manifest.attrs.asdict(), complete=True)


@dataclass
class IntegrityReport:
    """What :func:`check_integrity` found.

    Attributes
    ----------
    problems : list of Problem
        Everything wrong, each naming its array and chunk (or file).
    regions : set of (int, int)
        Chunk indices over (P, N) whose cells a resume must recompute.
    stray : list of str
        Chunk files outside their array's grid and ``*.partial`` files a killed run left (relative paths):
        problems, which a resume removes.
    foreign : list of str
        Other files inside the store that the manifest does not know (a user's notes, say): listed, not
        problems, and never removed.
    fatal : bool
        True when metadata is damaged: no resume can repair that (re-create the store).
    chunks_checked : int
        Chunk files read and compared with the manifest.
    unchecked : str
        Why nothing could be checked (a schema-1 store has no checksums or manifest), else "".
    being_written : str
        The live run writing the store now, in words ("" if none): nothing was checked.
    """

    problems: list = field(default_factory=list)
    regions: set = field(default_factory=set)
    stray: list = field(default_factory=list)
    foreign: list = field(default_factory=list)
    fatal: bool = False
    chunks_checked: int = 0
    unchecked: str = ""
    being_written: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        return {"ok": self.ok, "problems": [p.to_dict() for p in self.problems], "fatal": self.fatal,
                "chunks_to_recompute": sorted([list(r) for r in self.regions]), "stray_files": list(self.stray),
                "foreign_files": list(self.foreign),
                "chunks_checked": self.chunks_checked, "unchecked": self.unchecked,
                "being_written": self.being_written}


def _present_keys(fs, root: str, name: str) -> set[str]:
    prefix = f"{root}/{name}/c"
    try:
        found = fs.find(prefix)
    except (FileNotFoundError, NotADirectoryError):
        return set()
    base = root.strip("/")
    return {path.strip("/")[len(base) + 1:] for path in found}


def read_block(array: zarr.Array, i: int, j: int) -> np.ndarray:
    """Decode inner chunk (…, i, j) of a variable, every leading dimension whole (raises whatever the codecs
    raise on damage); of a sharded array, only that inner chunk is read, through its shard's index."""
    cp, cn = array.chunks[-2:]
    return np.asarray(array[..., i * cp:(i + 1) * cp, j * cn:(j + 1) * cn])


def cells_text(P, N, chunks, i, j) -> str:
    """The cells of region (i, j), as ``P 15..20 x N 8..16``."""
    ps, ns = P[i * chunks[0]:(i + 1) * chunks[0]], N[j * chunks[1]:(j + 1) * chunks[1]]
    def span(v):
        return "?" if len(v) == 0 else str(v[0]) if len(v) == 1 else f"{v[0]}..{v[-1]}"
    return f"P {span(ps)} x N {span(ns)}"


def expected_files(arrays: dict, manifest_grid: tuple) -> set[str]:
    """Every file a store of these arrays holds: metadata documents and each array's chunk (or shard) keys;
    ``manifest_grid``: the manifest's Zarr chunks along P and N."""
    files = {"zarr.json", f"{MANIFEST}/zarr.json", f"{MANIFEST}/{DIGESTS}/zarr.json"}
    for name, array in arrays.items():
        files.add(f"{name}/zarr.json")
        grid = [-(-s // c) for s, c in zip(array.shape, array.shards or array.chunks)]
        files.update("/".join([name, "c", *map(str, index)]) for index in np.ndindex(*grid))
    files.update(entry_key(i, j) for i in range(manifest_grid[0]) for j in range(manifest_grid[1]))
    return files


def stray_files(fs, root: str, arrays: dict, manifest_grid: tuple) -> list[str]:
    """Files inside the store that the manifest does not know (relative paths, sorted)."""
    base = root.strip("/")
    try:
        found = {path.strip("/")[len(base) + 1:] for path in fs.find(root)}
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(found - expected_files(arrays, manifest_grid))


def stray_problem(path: str) -> Problem:
    """How verify names a stray file (:func:`removable`)."""
    if PARTIAL.search(path):
        return Problem("a half-written file a killed run left behind (a resume removes it)", chunk=path)
    return Problem("a chunk file outside its array's grid, unknown to the manifest (a resume removes it)", chunk=path)


def removable(path: str) -> bool:
    """Whether a file the manifest does not know is tablegen's or zarr's, so a resume removes it: a half-written
    file (``*.<uuid>.partial``), or a chunk key of one of the store's arrays outside its grid."""
    return bool(PARTIAL.search(path)) or ("/c/" in path and path.split("/", 1)[0] in (*ALL_ARRAYS, MANIFEST))


class _Checker:
    """State of one integrity check (kept small: one method per kind of evidence)."""

    def __init__(self, url: str, storage_options: dict | None):
        self.url, self.report = url, IntegrityReport()
        self.group = open_group(url, storage_options, "r")
        self.fs, self.root = store_fs(url, storage_options)
        self.arrays = {}
        self.variables = chunked_variables(None)  # the store's chunked variables, once its version is read
        self.coordinates = coordinates_of(None)
        self.per_shard = (1, 1)
        self._shards = {}  # name -> ((shard index along P, along N), its decoded values): the last shard read

    def add(self, problem: Problem, region=None, fatal=False) -> None:
        self.report.problems.append(problem)
        if region is not None:
            self.report.regions.add(region)
        self.report.fatal |= fatal

    def open_arrays(self, version: int) -> None:
        self.variables, self.coordinates = chunked_variables(version), coordinates_of(version)
        for name in arrays_of(version):
            try:
                self.arrays[name] = self.group[name]
            except Exception as error:  # noqa: BLE001 - any failure to parse metadata is damage to name
                self.add(Problem(f"metadata cannot be read ({type(error).__name__}: {error})", name), fatal=True)

    def check_metadata(self, root: RootCheck) -> None:
        for problem in root.problems:
            self.add(problem, fatal=True)
        if "created" not in root.manifest:
            self.add(Problem("the store has no finished manifest (an unfinished template, or its record was lost)",
                             f"{MANIFEST}/zarr.json"), fatal=True)
            return
        for name, array in self.arrays.items():
            problem = check_array_metadata(root, self.fs, self.root, name, array)
            if problem is not None:
                self.add(problem, fatal=True)
        for name in self.coordinates:
            if name not in self.arrays:
                continue
            try:
                problem = check_coordinate(root, name, self.arrays[name][...])
            except Exception as error:  # noqa: BLE001 - a coordinate chunk missing or undecodable
                problem = Problem(f"coordinate values cannot be read ({type(error).__name__}: {error})", name)
            if problem is not None:
                self.add(problem, fatal=True)

    def entries(self, manifest: zarr.Group, regions, root: RootCheck) -> dict:
        """(i, j) -> digests (variables, 32) from the per-region manifest, checked against the consolidated one
        (read one manifest chunk at a time: a task's entries, those of one region or of one shard)."""
        array, entries, tables = manifest[DIGESTS], {}, {}
        a, b = array.chunks[:2]
        for (i, j) in regions:
            if (i // a, j // b) not in tables:
                try:
                    p, n = i // a * a, j // b * b
                    tables[(i // a, j // b)] = np.asarray(array[p:p + a, n:n + b])
                except Exception as error:  # noqa: BLE001
                    tables[(i // a, j // b)] = error
            table = tables[(i // a, j // b)]
            if isinstance(table, Exception):
                self.add(Problem(f"manifest entry cannot be decoded ({type(table).__name__}: {table})",
                                 f"{MANIFEST}/{DIGESTS}", entry_key(i // a, j // b)),
                         region=(i, j))
                continue
            entry = table[i % a, j % b].reshape(len(self.variables), 32)
            if entry.any():
                entries[(i, j)] = entry
            self._compare_consolidated(root, entry, i, j)
        return entries

    def _compare_consolidated(self, root: RootCheck, entry, i, j) -> None:
        consolidated = root.manifest.get("chunks")
        if not isinstance(consolidated, dict) or not (root.complete or entry.any()):
            return  # an unfinished store's regions not yet written: nothing consolidated to agree with
        for v, name in enumerate(self.variables):
            key = chunk_key(name, self.arrays[name].ndim, i, j, self.per_shard)
            if consolidated.get(key) != (entry[v].tobytes().hex() if entry.any() else None):
                what = ("the region's manifest entry is missing although the consolidated manifest records it"
                        if not entry.any() else "the consolidated manifest disagrees with the region's manifest entry")
                self.add(Problem(what, name, key), region=(i, j))
                return

    def check_region(self, i, j, entry, present, cells) -> None:
        for v, name in enumerate(self.variables):
            array = self.arrays[name]
            key = chunk_key(name, array.ndim, i, j, self.per_shard)
            if key_file(key) not in present[name]:
                self.add(Problem("is missing", name, key, cells), region=(i, j))
                continue
            self.report.chunks_checked += 1
            try:
                values = self.inner_block(name, i, j)
            except Exception as error:  # noqa: BLE001 - checksum, codec or truncation errors alike
                self.add(Problem(f"cannot be decoded ({type(error).__name__}: {error})", name, key, cells),
                         region=(i, j))
                continue
            if digest(values, ALL_VARIABLES[name][1]) != entry[v].tobytes():
                what = ("done flags are not all set although the region was written" if name == "done"
                        else "holds other values than were written (its hash differs from the manifest)")
                self.add(Problem(what, name, key, cells), region=(i, j))

    def inner_block(self, name: str, i: int, j: int) -> np.ndarray:
        """Inner chunk (i, j) of a variable: cut from its shard, read and decoded whole once (the one read per
        shard a check needs); where the shard as a whole cannot be decoded, the inner chunk read on its own (so
        that the damage is named by inner chunk)."""
        array, (a, b) = self.arrays[name], self.per_shard
        if (a, b) == (1, 1):
            return read_block(array, i, j)
        shard = (i // a, j // b)
        if self._shards.get(name, (None,))[0] != shard:
            (cp, cn), p, n = array.chunks[-2:], i // a * a, j // b * b
            try:
                self._shards[name] = (shard, np.asarray(array[..., p * cp:(p + a) * cp, n * cn:(n + b) * cn]))
            except Exception:  # noqa: BLE001 - damaged somewhere: each inner chunk is then read alone
                self._shards[name] = (shard, None)
        values = self._shards[name][1]
        if values is None:
            return read_block(array, i, j)
        (cp, cn), p, n = array.chunks[-2:], i % a, j % b
        return values[..., p * cp:(p + 1) * cp, n * cn:(n + 1) * cn]

    def check_unrecorded(self, i: int, j: int, present, cells: str) -> None:
        """A region without a manifest entry must not claim to be done."""
        key = chunk_key("done", 2, i, j, self.per_shard)
        if key_file(key) not in present["done"]:
            return
        try:
            done = read_block(self.arrays["done"], i, j)
        except Exception as error:  # noqa: BLE001
            self.add(Problem(f"cannot be decoded ({type(error).__name__}: {error})", "done", key, cells),
                     region=(i, j))
            return
        if done.any():
            self.add(Problem("cells are marked done but the manifest has no entry for their chunk", "done", key,
                             cells), region=(i, j))

    def check_stray(self, manifest: zarr.Group) -> None:
        digests = manifest[DIGESTS]
        grid = tuple(-(-s // c) for s, c in zip(digests.shape[:2], digests.chunks[:2]))
        unknown = stray_files(self.fs, self.root, self.arrays, grid)
        self.report.stray = [path for path in unknown if removable(path)]
        self.report.foreign = [path for path in unknown if not removable(path)]
        for path in self.report.stray:
            self.add(stray_problem(path))


def check_integrity(url: str, storage_options: dict | None = None) -> IntegrityReport:
    """Check the store against its manifest: the root and its chain, every array's metadata, the
    coordinates, every chunk of every written region, the done flags, and the files present.

    A region counts as written once its manifest entry exists (entries are written after the data and
    before the done flags), or once its done flags say so.  Regions never written are not checked.  A
    store that a live run is writing is not checked (``being_written`` says who writes it).

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> check_integrity(bundled_table_path()).ok
    True
    """
    holder = live_holder(url, storage_options)
    if holder is not None:
        return IntegrityReport(being_written=holder)
    checker = _Checker(url, storage_options)
    attrs = checker.group.attrs.asdict()
    if attrs.get("schema") != SCHEMA_NAME and not checker.fs.exists(f"{checker.root}{CREATING_SUFFIX}"):
        raise not_a_store_error(url, attrs)  # as every other command says it: not damage, not this tool's store
    root = read_root(checker.group, checker.fs, checker.root)
    if root.version == 1 and not root.manifest:
        checker.report.unchecked = ("schema version 1: the store has no checksums or manifest to check against; "
                                    "migrate it with tablegen.store.migrate_store")
        return checker.report
    checker.open_arrays(root.version)
    checker.check_metadata(root)
    if checker.report.fatal:
        return checker.report
    manifest = checker.group[MANIFEST]
    try:
        manifest[DIGESTS]
    except Exception as error:  # noqa: BLE001 - the region table's metadata missing or unreadable
        checker.add(Problem(f"the manifest's region table cannot be read ({type(error).__name__}: {error})",
                            f"{MANIFEST}/{DIGESTS}"), fatal=True)
        return checker.report
    if manifest[DIGESTS].shape[2] != len(checker.variables):
        checker.add(Problem(f"the manifest's region table records {manifest[DIGESTS].shape[2]} variables per region, "
                            f"but a store of schema version {root.version} has {len(checker.variables)}",
                            f"{MANIFEST}/{DIGESTS}"), fatal=True)
        return checker.report
    done_array = checker.arrays["done"]
    chunks, checker.per_shard = layout(done_array)
    a, b = checker.per_shard
    regions = sorted(chunk_regions(done_array.shape, chunks), key=lambda r: (r[0] // a, r[1] // b, r))  # by shard
    P, N = np.asarray(checker.arrays["P"][...]).tolist(), np.asarray(checker.arrays["N"][...]).tolist()
    present = {name: _present_keys(checker.fs, checker.root, name) for name in checker.variables}
    entries = checker.entries(manifest, regions, root)
    for (i, j) in regions:
        cells = cells_text(P, N, chunks, i, j)
        if (i, j) in entries:
            checker.check_region(i, j, entries[(i, j)], present, cells)
        elif (i, j) not in checker.report.regions:
            checker.check_unrecorded(i, j, present, cells)
    checker.check_stray(manifest)
    return checker.report


def remove_stray_files(url: str, storage_options: dict | None, stray) -> int:
    """Remove stray files (:attr:`IntegrityReport.stray`: ``*.partial``, chunks outside the grid); the number
    removed.  Any other path given is left alone."""
    stray = [path for path in stray if removable(path)]
    fs, root = store_fs(url, storage_options)
    for path in stray:
        try:
            fs.rm(f"{root}/{path}")
        except FileNotFoundError:  # already gone (remove_partial_files, say)
            pass
    if stray:
        logger.warning("store %s: removed %d file(s) its manifest does not know: %s", url, len(stray),
                       ", ".join(stray[:5]))
    return len(stray)


def clear_regions(url: str, storage_options: dict | None, regions) -> None:
    """Mark every cell of ``regions`` not done and drop their manifest entries (a resume then rewrites them);
    the store is then incomplete, and its root's chain digest says so."""
    from tablegen.store.shards import write_whole

    group = open_group(url, storage_options, "r+")
    done = group["done"].with_config(WRITE_CONFIG)
    (cp, cn), (a, b) = layout(done)
    fs, root = store_fs(url, storage_options)
    entries = group[MANIFEST][DIGESTS].with_config(WRITE_CONFIG)
    for (i, j) in sorted({(i // a, j // b) for (i, j) in regions}):  # every shard holding one: a task rewrites it
        p, n = slice(i * a * cp, (i + 1) * a * cp), slice(j * b * cn, (j + 1) * b * cn)
        cells = [len(range(*part.indices(size))) for part, size in zip((p, n), done.shape)]
        write_whole(done, (p, n), np.zeros(cells, bool), fs, root)
        grid = [len(range(*slice(k * c, (k + 1) * c).indices(size))) for k, c, size in
                zip((i, j), (a, b), entries.shape[:2])]
        entries[i * a:(i + 1) * a, j * b:(j + 1) * b] = np.zeros((*grid, *entries.shape[2:]), np.uint8)
    if regions:
        update = {"complete": False}
        manifest = group[MANIFEST].attrs.asdict()
        if CHAIN in group.attrs and "created" in manifest:
            update[CHAIN] = chain_digest(manifest, complete=False)
        write_attributes(group, update)  # one write: the flag and the chain digest that counts it, together
