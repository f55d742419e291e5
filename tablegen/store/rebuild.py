"""Rebuilding a store's lost manifest record from what can still be checked.

The manifest's ``created`` record (:mod:`tablegen.store.manifest`) holds the digests of every array's
metadata, of the coordinates and of the root attributes that say what the store holds.  A store that
lost it (``manifest/zarr.json`` rewritten without it) is refused by lookups, ``verify`` and a resume,
although its data may be intact.  :func:`rebuild_manifest_record` writes the record again, and only
after checking everything the record would vouch for against evidence the record does not hold:

* the root attributes against the job's provenance recomputed from the config the store records
  (``attrs``: config, its hash, seed, R ...) and against the schema's own attributes;
* every array's metadata document (shape, chunking, data type, codecs, fill value, dimension names,
  attributes) and every coordinate's values against a template made afresh from that config's grid
  (``template``), in memory;
* every written region: each variable's chunk must decode (its crc32c checksum) and hash to the
  region's own entry in the manifest (SHA-256), regions without an entry must have no cell marked
  done (a damaged chunk is data, not what the record vouches for: it is named in the report, the record
  is rebuilt all the same and a resume recomputes exactly those regions), and a complete store's
  consolidated record must agree with the entries;
* the record rebuilt so must give the manifest the digest the root recorded for it (the hash chain):
  the rebuilt record is then the lost one, bit for bit.

Anything else that does not match is named, nothing is written, and the refusal says to re-create the store.
The batch layer turns a store's config into ``template`` and ``attrs`` (``tablegen repair STORE
--rebuild-manifest`` does it).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tablegen.errors import StoreError, StoreIntegrityError
from tablegen.store.integrity import cells_text, read_block, template_finished
from tablegen.store.lock import StoreLock
from tablegen.store.manifest import (
    CHAIN,
    DIGESTS,
    MANIFEST,
    Problem,
    arrays_of,
    attribute_digests,
    chain_digest,
    consolidated_chunks,
    coordinate_digest,
    coordinates_of,
    digest,
    metadata_document,
    metadata_record,
    read_root,
)
from tablegen.store.schema import (
    ALL_VARIABLES,
    POWER_VERSION,
    SCHEMA_NAME,
    WRITABLE_VERSIONS,
    chunk_key,
    chunk_regions,
    chunked_variables,
    key_file,
    layout,
    open_group,
    source_attribute,
    store_fs,
)
from tablegen.store.zarr_store import CREATING_SUFFIX, StoreTemplate, append_history, create_store

__all__ = ["RebuildReport", "lost_record_message", "rebuild_command", "rebuild_manifest_record", "record_lost",
           "refuse_lost_record"]

logger = logging.getLogger(__name__)

#: Root attributes that name the tablegen that wrote a store (checked against each other, not against this one).
_VERSION_ATTRIBUTES = ("tablegen_version", "source")


def rebuild_command(source: str) -> str:
    """The command that rebuilds the lost record of store ``source``.

    Examples
    --------
    >>> rebuild_command("tables/paper.zarr")
    'tablegen repair tables/paper.zarr --rebuild-manifest'
    """
    return f"tablegen repair {source} --rebuild-manifest"


def lost_record_message(source: str) -> str:
    """How every refusal of a store whose manifest record was lost says so, and what to do."""
    return (f"{source}: its manifest's record of what was written is lost (manifest/zarr.json: created); "
            f"`{rebuild_command(source)}` rebuilds it after checking every written chunk against its own digest "
            "and the metadata against the config the store records (nothing is rebuilt over damage)")


def record_lost(url: str, storage_options: dict | None = None) -> bool:
    """Whether ``url`` is a tablegen store of this schema whose manifest lost its ``created`` record (not a
    template whose creation is under way or was interrupted: those have a creation marker beside them).

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> record_lost(bundled_table_path())
    False
    """
    try:
        group = open_group(url, storage_options, "r")
        fs, root = store_fs(url, storage_options)
        attrs = group.attrs.asdict()
        lost = _header_lost(fs, root) or "created" not in group[MANIFEST].attrs
    except Exception:  # noqa: BLE001 - no store, or no manifest at all: not this case
        return False
    version = attrs.get("schema_version")
    return (attrs.get("schema") == SCHEMA_NAME and isinstance(version, int) and version >= 3 and lost
            and not fs.exists(f"{root}{CREATING_SUFFIX}"))


def _header_lost(fs, root: str) -> bool:
    """Whether the manifest's own document (``manifest/zarr.json``: its header, record and list of chunk digests)
    is gone while its region table, the per-region digests, is still there."""
    return not fs.exists(f"{root}/{MANIFEST}/zarr.json") and fs.exists(f"{root}/{MANIFEST}/{DIGESTS}/zarr.json")


def refuse_lost_record(url: str, storage_options: dict | None = None, source: str | None = None) -> None:
    """Raise :class:`StoreIntegrityError` naming the rebuild command if the store's manifest record was lost."""
    if record_lost(url, storage_options):
        raise StoreIntegrityError(lost_record_message(source or url))


@dataclass
class RebuildReport:
    """What :func:`rebuild_manifest_record` checked and wrote.

    Attributes
    ----------
    regions_checked : int
        Written regions whose every chunk was decoded and hashed against the region's manifest entry.
    chunks_checked : int
        Chunk files read.
    record : dict
        The rebuilt ``created`` record.
    written : bool
        Whether it was written (False for a dry run).
    damaged : list of Problem
        Written regions whose chunks are damaged (missing, undecodable, other values than their own entry):
        data, not what the record vouches for, so the record is rebuilt all the same and ``tablegen run`` on
        the store's config recomputes exactly those regions afterwards.
    """

    regions_checked: int = 0
    chunks_checked: int = 0
    record: dict = field(default_factory=dict)
    written: bool = False
    damaged: list = field(default_factory=list)


class _Rebuild:
    """State of one rebuild: the store, its template made afresh, and what does not match."""

    def __init__(self, url: str, storage_options: dict | None):
        self.url, self.options = url, storage_options
        self.group = open_group(url, storage_options, "r")
        self.fs, self.root = store_fs(url, storage_options)
        self.problems: list[Problem] = []
        self.report = RebuildReport()
        self.per_shard = (1, 1)  # inner chunks per shard along P and N (schema 4), read from the done flags
        self.header_lost = False  # the manifest's document is gone, not only its record (see _header_lost)

    @property
    def version(self):
        """The schema version the store's root says (its record is what is rebuilt; checked against the template)."""
        return self.group.attrs.get("schema_version")

    def check_state(self) -> dict:
        """The manifest's attributes, once the store is known to be one whose record was lost."""
        check = read_root(self.group, self.fs, self.root)
        attrs = check.attrs
        if attrs.get("schema") != SCHEMA_NAME or attrs.get("schema_version") not in WRITABLE_VERSIONS:
            raise StoreError(f"store {self.url!r} is not a tablegen store of schema version "
                             f"{' or '.join(map(str, WRITABLE_VERSIONS))} (schema {attrs.get('schema')!r}, version "
                             f"{attrs.get('schema_version')!r}); only such a store's manifest record can be rebuilt")
        self.header_lost = _header_lost(self.fs, self.root)
        if not check.manifest and not self.header_lost:
            raise StoreIntegrityError(f"store {self.url!r}: its manifest is missing altogether (manifest/zarr.json "
                                      "and the per-region digests); its record cannot be rebuilt: re-create the store")
        if self.fs.exists(f"{self.root}{CREATING_SUFFIX}"):
            raise StoreError(f"store {self.url!r} is an unfinished template (its creation was interrupted); the "
                             "next `tablegen run` of its config writes it again")
        if template_finished(self.group):
            raise StoreError(f"store {self.url!r}: its manifest record is present, nothing to rebuild; "
                             "`tablegen verify` checks the store against it")
        if check.problems and not self.header_lost:  # (lost, the header's one problem is that it is missing)
            raise StoreIntegrityError(f"store {self.url!r}: cannot rebuild its manifest record: "
                                      + "; ".join(map(str, check.problems)))
        return check.manifest

    def check_attributes(self, expected: dict, reference: dict) -> None:
        """Root attributes: the provenance recomputed from the stored config (its record compared without where
        the job ran), then the schema's own attributes against the template's."""
        stored = self.group.attrs.asdict()
        have, given, schema = attribute_digests(stored), attribute_digests(expected), attribute_digests(reference)
        for key in expected:
            if have.get(key) != given.get(key):
                self.problems.append(Problem(f"root attribute {key} is not what the config the store records "
                                             "gives", "zarr.json"))
        for key in sorted((set(have) | set(schema)) - {*_VERSION_ATTRIBUTES, *expected}):
            if have.get(key) != schema.get(key):
                self.problems.append(Problem(f"root attribute {key} differs from the schema's", "zarr.json"))
        if stored.get("source") != source_attribute(str(stored.get("tablegen_version"))):
            self.problems.append(Problem("root attributes source and tablegen_version disagree", "zarr.json"))

    def check_arrays(self, reference_url: str) -> None:
        """Every array's metadata document and every coordinate against the template made afresh."""
        reference = open_group(reference_url, None, "r")
        fs, root = store_fs(reference_url, None)
        for name in (*arrays_of(self.version), f"{MANIFEST}/{DIGESTS}"):
            try:
                same = _comparable(name, metadata_document(self.fs, self.root, name)) == \
                    _comparable(name, metadata_document(fs, root, name))
            except Exception as error:  # noqa: BLE001 - missing or unreadable: named
                self.problems.append(Problem(f"metadata cannot be read ({type(error).__name__}: {error})", name))
                continue
            if not same:
                self.problems.append(Problem("metadata (zarr.json) differs from what the config the store records "
                                             "gives (shape, chunking, data type, codecs, fill value, dimension "
                                             "names or attributes)", name))
        for name in coordinates_of(self.version):
            try:
                values = self.group[name][...]
            except Exception as error:  # noqa: BLE001
                self.problems.append(Problem(f"coordinate values cannot be read ({type(error).__name__}: {error})",
                                             name))
                continue
            if coordinate_digest(values) != coordinate_digest(reference[name][...]):
                self.problems.append(Problem("coordinate values differ from the config's grid", name))

    def check_data(self, manifest: dict) -> None:
        """Every written region against its own manifest entry; unwritten regions hold no done cell."""
        done = self.group["done"]
        inner, self.per_shard = layout(done)
        table = np.asarray(self.group[f"{MANIFEST}/{DIGESTS}"][...])
        P, N = self.group["P"][...].tolist(), self.group["N"][...].tolist()
        complete = self.group.attrs.get("complete") is True
        for (i, j) in chunk_regions(done.shape, inner):
            cells = cells_text(P, N, inner, i, j)
            entry = table[i, j]
            if entry.any():
                self._check_region(i, j, entry, cells, complete)
            elif complete:
                self.report.damaged.append(Problem("the store is marked complete but the region has no manifest "
                                                   "entry", "done", chunk_key("done", 2, i, j, self.per_shard),
                                                   cells))
            else:
                self._check_unwritten(i, j, cells)
        if complete:
            ndims = {name: self.group[name].ndim for name in chunked_variables(self.version)}
            if self.header_lost:  # gone with the document: the entries' list, checked with the rest by the chain
                manifest["chunks"] = consolidated_chunks(table, ndims, self.per_shard)
            if manifest.get("chunks") != consolidated_chunks(table, ndims, self.per_shard):
                self.problems.append(Problem("the consolidated record of the chunks disagrees with the regions' "
                                             "entries", f"{MANIFEST}/zarr.json"))

    def _check_region(self, i: int, j: int, entry: np.ndarray, cells: str, complete: bool) -> None:
        self.report.regions_checked += 1
        for v, name in enumerate(chunked_variables(self.version)):
            array = self.group[name]
            key = chunk_key(name, array.ndim, i, j, self.per_shard)
            if not self.fs.exists(f"{self.root}/{key_file(key)}"):
                if name != "done" or complete:  # done flags not yet written: a run killed just before them
                    self.report.damaged.append(Problem("is missing", name, key, cells))
                continue
            try:
                values = read_block(array, i, j)
            except Exception as error:  # noqa: BLE001 - checksum, codec or truncation errors alike
                self.report.damaged.append(Problem(f"cannot be decoded ({type(error).__name__}: {error})", name, key,
                                                   cells))
                continue
            self.report.chunks_checked += 1
            if digest(values, ALL_VARIABLES[name][1]) == entry[v].tobytes() or (name == "done" and not complete
                                                                              and not values.any()):
                continue
            self.report.damaged.append(Problem("holds other values than its manifest entry records", name, key,
                                               cells))

    def _check_unwritten(self, i: int, j: int, cells: str) -> None:
        key = chunk_key("done", 2, i, j, self.per_shard)
        if not self.fs.exists(f"{self.root}/{key_file(key)}"):
            return
        try:
            marked = read_block(self.group["done"], i, j).any()
        except Exception as error:  # noqa: BLE001
            self.report.damaged.append(Problem(f"cannot be decoded ({type(error).__name__}: {error})", "done", key,
                                               cells))
            return
        if marked:
            self.report.damaged.append(Problem("cells are marked done but the manifest has no entry for their chunk",
                                               "done", key, cells))

    def check_chain(self, manifest: dict, record: dict) -> None:
        """The rebuilt record must give the manifest the digest its root recorded (then it is the lost one)."""
        recorded = self.group.attrs.get(CHAIN)
        complete = self.group.attrs.get("complete") is True
        if recorded is None:
            self.problems.append(Problem("the root has no record of its manifest's digest either, so a rebuilt "
                                         "record cannot be checked against it", "zarr.json"))
        elif chain_digest({**manifest, "created": record}, complete) != recorded:
            self.problems.append(Problem("the rebuilt record does not give the manifest the digest its root "
                                         "recorded: something the record covers differs from what was written",
                                         f"{MANIFEST}/zarr.json"))


def _comparable(name: str, document: dict) -> dict:
    """What of an array's metadata document must match the template's: all of it, but a coordinate's codecs (its
    values are compared decoded; a store migrated from schema 2 checksums its coordinates, a new one does not)."""
    return {k: v for k, v in document.items() if not (name in coordinates_of(POWER_VERSION) and k == "codecs")}


def _reference_template(template: StoreTemplate, attrs: dict) -> str:
    """The URL of the store's template written afresh into memory (no data: metadata and coordinates)."""
    url = f"memory://tablegen-rebuild-{uuid.uuid4().hex}.zarr"
    create_store(template, url, attrs=attrs, state="absent")
    return url


def rebuild_manifest_record(url: str, expected: Callable[[dict], tuple[StoreTemplate, dict]],
                            storage_options: dict | None = None, *, dry_run: bool = False) -> RebuildReport:
    """Check a store whose manifest record was lost against its config and its own per-region digests, then
    write the record again (holding the store's lock).

    Parameters
    ----------
    url : str
        The store.
    expected : callable
        ``expected(root attributes) -> (template, provenance)``: the store the config it records makes (grid,
        coordinates, chunking) and the provenance attributes that config gives (config record, its hash, seed,
        random stream, R ...); called once the store is known to have lost its record.
    storage_options : dict, optional
        fsspec options of ``url``.
    dry_run : bool
        Check only; write nothing.

    Raises
    ------
    StoreIntegrityError
        If anything the record vouches for does not match (each mismatch named); nothing is written.
    StoreError
        If the store is not one whose record was lost (its record is present, it is an unfinished
        template, or of another schema).

    Examples
    --------
    >>> template = StoreTemplate(("auc",), (0.01,), (10,), (20, 30), (40,), (0.1,), chunks=(1, 1))
    >>> url = "memory://rebuild-example.zarr"
    >>> create_store(template, url, attrs={"replicates": 1000})
    >>> manifest = open_group(url, None, "r+")["manifest"]
    >>> manifest.attrs.put({k: v for k, v in manifest.attrs.items() if k != "created"})  # the record lost
    >>> record_lost(url)
    True
    >>> report = rebuild_manifest_record(url, lambda attrs: (template, {"replicates": 1000}))
    >>> report.written, record_lost(url)
    (True, False)
    """
    _Rebuild(url, storage_options).check_state()  # first without the lock: a store with its record is left alone
    with StoreLock(url, storage_options):
        rebuild = _Rebuild(url, storage_options)
        manifest = rebuild.check_state()
        try:
            template, attrs = expected(rebuild.group.attrs.asdict())
            reference = _reference_template(template, attrs)
        except StoreIntegrityError:
            raise
        except Exception as error:  # noqa: BLE001 - a config record edited into one no store has
            raise StoreIntegrityError(f"store {url!r}: the config it records does not make a store "
                                      f"({type(error).__name__}: {error}); its manifest record cannot be "
                                      "rebuilt") from None
        fs, root = store_fs(reference, None)
        try:
            rebuild.check_attributes(attrs, open_group(reference, None, "r").attrs.asdict())
            rebuild.check_arrays(reference)
            document = metadata_document(fs, root, MANIFEST)  # the manifest's document as a new store has it
        finally:
            fs.rm(root, recursive=True)
        if rebuild.header_lost:  # its header as creation writes it (what it says is checked by the chain)
            manifest = {k: v for k, v in document["attributes"].items() if k not in ("created", "chunks")}
        if not rebuild.problems:
            rebuild.check_data(manifest)
        if not rebuild.problems:
            rebuild.report.record = metadata_record(rebuild.group, rebuild.fs, rebuild.root, version=rebuild.version)
            rebuild.check_chain(manifest, rebuild.report.record)
        if rebuild.problems:
            shown = "; ".join(map(str, rebuild.problems[:20]))
            more = f"; and {len(rebuild.problems) - 20} more" if len(rebuild.problems) > 20 else ""
            raise StoreIntegrityError(f"store {url!r}: its manifest record was not rebuilt (nothing was written): "
                                      f"{shown}{more}; that is metadata no resume repairs: re-create the store "
                                      "(`tablegen run CONFIG --store NEW`)")
        if not dry_run:
            _write_record(url, storage_options, manifest, rebuild.report.record,
                          document if rebuild.header_lost else None)
            rebuild.report.written = True
    return rebuild.report


def _group_document(document: dict) -> bytes:
    """A group's ``zarr.json`` as zarr itself writes it (same bytes)."""
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.group import GroupMetadata

    return GroupMetadata.from_dict(document).to_buffer_dict(default_buffer_prototype())["zarr.json"].to_bytes()


def _write_record(url: str, storage_options: dict | None, manifest: dict, record: dict,
                  document: dict | None = None) -> None:
    """Put the record back where creation wrote it: after the header, before the consolidated chunks (so the
    manifest's document is byte for byte the one the store had), in one write; where the manifest's document
    itself was lost, ``document`` (as creation writes it) with those attributes, in one write too."""
    header = {key: value for key, value in manifest.items() if key != "chunks"}
    rest = {"chunks": manifest["chunks"]} if "chunks" in manifest else {}
    attributes = {**header, "created": record, **rest}
    if document is not None:
        fs, root = store_fs(url, storage_options)
        fs.pipe(f"{root}/{MANIFEST}/zarr.json", _group_document({**document, "attributes": attributes}))
    else:
        open_group(url, storage_options, "r+")[MANIFEST].attrs.put(attributes)
    append_history(url, "manifest record rebuilt from the data (tablegen repair --rebuild-manifest)",
                   storage_options)
    logger.warning("store %s: its manifest record was rebuilt (its metadata matched its config and the hash chain)",
                   url)
