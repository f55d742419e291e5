"""The store's schema: variables, codecs, errors, and opening a Zarr group with clear errors.

Shared by :mod:`tablegen.store.zarr_store` (template, writes, reports), :mod:`tablegen.store.integrity`
(checksums and the content manifest) and :mod:`tablegen.store.lock`; none of them imports another's
internals.
"""

from __future__ import annotations

import json
import socket
from importlib import resources

import fsspec
import numpy as np
import zarr
from zarr.codecs import Crc32cCodec, ZstdCodec

from tablegen.errors import StoreError, StoreIntegrityError, StoreUnreachableError

#: Bumped whenever a variable, dimension, codec or required attribute changes meaning.
#: 2: every chunk carries a crc32c checksum and the store holds a content manifest.
#: 3: the manifest also records its schema version and every array's metadata document as stored, and the
#: root records the manifest's own digest (a hash chain).
#: 4: every (P, N)-chunked array is sharded: one shard (one object) per task, holding the inner chunks that a
#: lookup reads one at a time; the manifest records each inner chunk's digest, one manifest chunk per shard.
#: 5: the store also holds the minimum detectable AUC (:data:`POWER_VARIABLES`, coordinate ``power``), in either
#: layout (sharded or not); a job with a ``power:`` section writes it, and
#: :func:`~tablegen.store.migrate.add_minimum_detectable` adds it to a store of version 3 or 4.
SCHEMA_VERSION = 5
#: The version of a sharded store without the minimum detectable AUC.
SHARDED_VERSION = 4
#: The version of a store holding the minimum detectable AUC (sharded or not).
POWER_VERSION = 5
#: The last unsharded version: what :func:`~tablegen.store.migrate_store` brings versions 1 and 2 to, and what
#: a store created without shards is (its layout is kept by every resume).
UNSHARDED_VERSION = 3
#: Versions a run writes into (creates, or resumes in the store's own layout).
WRITABLE_VERSIONS = (UNSHARDED_VERSION, SHARDED_VERSION, POWER_VERSION)
#: Schema versions this tablegen reads: 1 (no checksums, no manifest) only with ``allow_unverified``; 2 with
#: the checks its manifest allows (no hash chain); writes need 3 or 4 (:func:`~tablegen.store.migrate_store`).
READABLE_VERSIONS = (1, 2, *WRITABLE_VERSIONS)
SCHEMA_NAME = "tablegen-critical-values"

_CRITICAL = ("metric", "alpha", "C", "P", "N")
#: name -> (dims, dtype, fill value, description)
VARIABLES = {
    "critical_value": (_CRITICAL, "float64", np.nan,
                       "Monte Carlo critical value: the ceil(qR)-th smallest of R sampled values, "
                       "q = (1 - alpha)**(1/C)"),
    "ci_low": (_CRITICAL, "float64", np.nan, "low end of the 95% order-statistic interval"),
    "ci_high": (_CRITICAL, "float64", np.nan,
                "high end of the 95% order-statistic interval (the metric's maximum where R is too "
                "small for that order statistic)"),
    "exact_critical_value": (_CRITICAL, "float64", np.nan,
                             "exact critical value; NaN where the metric has no exact routine or it "
                             "was over budget"),
    "tail_quantile": (("metric", "tail_probability", "P", "N"), "float64", np.nan,
                      "the (floor(R t) + 1)-th largest of R samples; NaN where R t < 1"),
    "replicates": (("P", "N"), "int64", 0, "R, the random rankings sampled for the cell"),
    "done": (("P", "N"), "bool", False, "True once every variable of the cell is written"),
}
DATA_VARIABLES = tuple(name for name in VARIABLES if name != "done")
#: The variables of a store of :data:`POWER_VERSION` beside :data:`VARIABLES` (name -> dims, dtype, fill, description).
POWER_VARIABLES = {
    "minimum_detectable_auc": (
        ("metric", "power", "alpha", "C", "P", "N"), "float64", np.nan,
        "smallest AUC of a Lehmann alternative (positives' scores with CDF F**k, AUC = k/(k+1)) whose exact power "
        "against the best-of-C test at level alpha reaches the power level: the upper end of a bracket of width "
        "<= the attribute tolerance (the power there >= the level, below it < the level); 1 where no AUC below 1 "
        "reaches the level (the test detects nothing); NaN only where the metric has no exact Lehmann power at the "
        "cell (average precision beyond its enumeration, AUC beyond its exact programme's budget) or, where the "
        "attribute max_seconds is set, one exact power probability there is estimated over that many seconds"),
}
#: Every variable a store may hold, in the manifest's order: data variables, then the minimum detectable AUC, then
#: the done flags.
ALL_VARIABLES = {**{name: spec for name, spec in VARIABLES.items() if name != "done"}, **POWER_VARIABLES,
                 "done": VARIABLES["done"]}
#: CF ``long_name`` and ``units`` of each coordinate (units "1": a count or a probability; metric names have none).
COORDINATE_ATTRIBUTES = {
    "metric": {"long_name": "performance metric of the ranking"},
    "alpha": {"long_name": "significance level", "units": "1"},
    "C": {"long_name": "number of competing classifiers (the winner is the best of C)", "units": "1"},
    "P": {"long_name": "positives in the test set", "units": "1"},
    "N": {"long_name": "negatives in the test set", "units": "1"},
    "tail_probability": {"long_name": "upper-tail probability t of the stored quantile", "units": "1"},
}
#: The coordinate a store of :data:`POWER_VERSION` adds, with its CF attributes.
POWER_COORDINATE_ATTRIBUTES = {"power": {"long_name": "target power of the minimum detectable AUC", "units": "1"}}
#: CF-1.10 / ACDD-1.3 global attributes of every store (``source`` and ``history`` are added per store).
CONVENTION_ATTRIBUTES = {
    "Conventions": "CF-1.10, ACDD-1.3",
    "title": "Critical values of classifier performance metrics for the best of C random classifiers",
    "summary": "For each metric, number of positives P and negatives N, number of competing classifiers C and "
               "significance level alpha: the critical value that the best of C random rankings exceeds with "
               "probability alpha (Monte Carlo, with its 95% order-statistic interval, and exact where an exact "
               "routine exists), and the upper-tail quantiles of one random ranking's score.",
    "references": "G. Forman and I. Cohen, Beware the null hypothesis: critical value tables for evaluating "
                  "classifiers, ECML 2005, LNCS 3720, https://doi.org/10.1007/11564096_17; tablegen (this "
                  "package; the table is described in its documentation, docs/reference/store.md)",
}


def source_attribute(version: str) -> str:
    """The ACDD ``source`` of a store written by tablegen ``version``.

    Examples
    --------
    >>> source_attribute("0.1.0")
    'tablegen 0.1.0: Monte Carlo simulation of random rankings, and exact distributions where available'
    """
    return f"tablegen {version}: Monte Carlo simulation of random rankings, and exact distributions where available"


def history_line(timestamp: str, what: str, version: str) -> str:
    """One line of the CF ``history`` attribute: ISO timestamp, what was done, by which tablegen.

    Examples
    --------
    >>> history_line("2026-11-21T12:56:31+00:00", "tablegen run configs/paper.yaml", "0.1.0")
    '2026-11-21T12:56:31+00:00: tablegen run configs/paper.yaml (tablegen 0.1.0)'
    """
    return f"{timestamp}: {what} (tablegen {version})"
#: Every variable chunked over (P, N), in the manifest's order (a store of version 3 or 4).
CHUNKED_VARIABLES = tuple(VARIABLES)


def chunked_variables(version: int | None) -> tuple[str, ...]:
    """The (P, N)-chunked variables of a store of schema ``version``, in the manifest's order.

    Examples
    --------
    >>> chunked_variables(3)[-1], chunked_variables(POWER_VERSION)[-2:]
    ('done', ('minimum_detectable_auc', 'done'))
    """
    return tuple(ALL_VARIABLES) if version == POWER_VERSION else CHUNKED_VARIABLES


def data_variables(version: int | None) -> tuple[str, ...]:
    """The data variables (every chunked variable but the done flags) of a store of schema ``version``."""
    return tuple(name for name in chunked_variables(version) if name != "done")


def chunk_codecs() -> dict:
    """Zarr encoding of every variable: zstd (level 0, as before) then a crc32c checksum of the bytes.

    A chunk whose bytes changed after writing fails to decode ("Stored and computed checksum do not
    match") instead of decoding into wrong numbers.
    """
    return {"compressors": (ZstdCodec(level=0), Crc32cCodec())}


#: Arrays are opened for writing with every chunk written, even an all-fill one: a chunk file that is
#: missing from a done region is then damage, never a legitimately empty chunk.
WRITE_CONFIG = {"write_empty_chunks": True}
#: Marker beside a store while its template is being written (``paper.zarr.creating``).
CREATING_SUFFIX = ".creating"


def write_attributes(node, changes: dict) -> None:
    """Merge ``changes`` into the attributes of a Zarr group or array in ONE write of its ``zarr.json``.

    zarr's ``node.attrs.update(mapping)`` writes the document once per key, so a run killed between two of
    those writes leaves some keys new and some old (a store marked complete beside its old manifest digest).
    Every attribute change of the store goes through here: a kill leaves the document before or after.

    Examples
    --------
    >>> group = zarr.open_group("memory://write-attributes-example.zarr", mode="w")
    >>> write_attributes(group, {"a": 1, "b": 2}); sorted(group.attrs.asdict().items())
    [('a', 1), ('b', 2)]
    """
    node.update_attributes({**node.attrs.asdict(), **changes})


def not_a_store_error(url: str, attrs: dict) -> StoreError:
    """How every command refuses a Zarr group that is not a tablegen store (one message, exit code 2).

    Examples
    --------
    >>> print(not_a_store_error("x.zarr", {}))
    store 'x.zarr' is not a tablegen store (attribute schema = None)
    """
    return StoreError(f"store {url!r} is not a tablegen store (attribute schema = {attrs.get('schema')!r})")


#: The table shipped inside the package (written by ``tablegen run configs/paper.yaml``).
BUNDLED_TABLE_NAME = "paper.zarr"


def bundled_table_path() -> str:
    """Filesystem path of the bundled table (the appendix grid, every metric, R = 10⁷)."""
    return str(resources.files("tablegen") / "data" / BUNDLED_TABLE_NAME)


def check_protocol(url: str) -> None:
    """Refuse a store URL whose fsspec protocol is unknown, or whose backend package is not installed, before
    anything is opened: an input error naming the protocol, and the package to install.

    Examples
    --------
    >>> check_protocol("tables/paper.zarr"); check_protocol("memory://t.zarr")
    >>> try:
    ...     check_protocol("bogus://bucket/t.zarr")
    ... except StoreError as error:
    ...     print(error)
    store 'bogus://bucket/t.zarr': unknown protocol 'bogus' (fsspec knows file, memory, s3, gs, http, ...)
    """
    from fsspec.core import split_protocol
    from fsspec.registry import get_filesystem_class

    if not isinstance(url, str) or not url:
        raise StoreError(f"a store is a non-empty path or fsspec URL, got {url!r}")
    for piece in url.split("::"):  # a chained URL (simplecache::s3://...): every protocol in the chain
        protocol = split_protocol(piece)[0]
        if protocol is None:
            continue
        try:
            get_filesystem_class(protocol)
        except ImportError as error:
            raise StoreError(f"store {url!r}: the {protocol}:// protocol needs a package that is not installed "
                             f"({error}); install it, or use a local path") from None
        except ValueError:
            raise StoreError(f"store {url!r}: unknown protocol {protocol!r} "
                             "(fsspec knows file, memory, s3, gs, http, ...)") from None


def check_storage_options(url: str, storage_options: dict | None) -> None:
    """Refuse storage options for a local path (they are fsspec options of a URL's backend).

    Examples
    --------
    >>> try:
    ...     check_storage_options("tables/paper.zarr", {"anon": True})
    ... except StoreError as error:
    ...     print(str(error)[:64])
    storage options apply to an fsspec URL (s3://..., memory://...);
    """
    if storage_options and "://" not in url:
        raise StoreError(f"storage options apply to an fsspec URL (s3://..., memory://...); {url!r} is a local "
                         "path")


def _unreachable(url: str, error: BaseException) -> StoreUnreachableError:
    return StoreUnreachableError(f"store {url!r} could not be reached ({type(error).__name__}: "
                                 f"{getattr(error, 'strerror', None) or error}); check the address and the "
                                 "network, then run the same command again")


#: What a store out of reach raises through fsspec (refused, reset or timed-out connections, unknown hosts).
UNREACHABLE_ERRORS = (ConnectionError, TimeoutError, socket.gaierror, socket.herror)


def open_group(url: str, storage_options: dict | None, mode: str) -> zarr.Group:
    """``zarr.open_group`` with every way it can fail on a bad path or store turned into :class:`StoreError`
    (a store out of reach: :class:`StoreUnreachableError`)."""
    check_protocol(url)
    check_storage_options(url, storage_options)
    try:
        return zarr.open_group(url, mode=mode, storage_options=storage_options or None, zarr_format=3)
    except (FileNotFoundError, zarr.errors.GroupNotFoundError, zarr.errors.NodeTypeValidationError):
        fs, root = store_fs(url, storage_options)
        if mode in ("r", "r+") and not fs.exists(f"{root}{CREATING_SUFFIX}"):
            check_not_headless(url, storage_options)  # a store whose root document was deleted: damaged
        raise StoreError(f"store {url!r} does not exist (or holds no Zarr group)") from None
    except UNREACHABLE_ERRORS as error:
        raise _unreachable(url, error) from None
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as error:
        raise StoreIntegrityError(f"store {url!r}: its metadata (zarr.json) cannot be read ({type(error).__name__}: "
                                  f"{error}); the store is damaged") from None
    except (NotADirectoryError, IsADirectoryError, PermissionError, OSError) as error:
        raise StoreError(f"store {url!r} cannot be opened ({error.strerror or error})") from None


def check_not_headless(url: str, storage_options: dict | None = None) -> None:
    """Refuse a folder that holds a store's arrays or manifest but no root document (``zarr.json`` deleted), no
    creation under way: a damaged store, named so, with what to do (never taken for an absent one)."""
    fs, root = store_fs(url, storage_options)
    try:
        names = {entry.rstrip("/").rsplit("/", 1)[-1] for entry in fs.ls(root, detail=False)}
    except (FileNotFoundError, NotADirectoryError):
        return
    known = sorted(names & {*VARIABLES, "metric", "alpha", "C", "P", "N", "tail_probability", "manifest"})
    if known:
        raise StoreIntegrityError(
            f"store {url!r} is damaged: its root metadata (zarr.json) is missing, though the folder holds a store's "
            f"arrays ({', '.join(known[:4])}{', ...' if len(known) > 4 else ''}); with it went the record of the "
            "config, the random stream and the hash chain, so it can neither be checked nor resumed: re-create it "
            f"(remove the folder, then `tablegen run CONFIG --store {url}`)")


def store_fs(url: str, storage_options: dict | None):
    """(filesystem, root path without a trailing slash) of a store path or fsspec URL; a protocol that is
    unknown or not installed, or options the backend refuses: :class:`StoreError`; a store out of reach:
    :class:`StoreUnreachableError`."""
    check_protocol(url)
    check_storage_options(url, storage_options)
    try:
        fs, root = fsspec.core.url_to_fs(url, **(storage_options or {}))
    except UNREACHABLE_ERRORS as error:
        raise _unreachable(url, error) from None
    except (TypeError, ValueError) as error:  # e.g. storage options the backend does not take
        raise StoreError(f"store {url!r} cannot be opened with these storage options ({error})") from None
    return fs, root.rstrip("/")


def is_local(fs) -> bool:
    """Whether an fsspec filesystem is the local one (files that can be fsynced, locked and opened without
    following links).

    Examples
    --------
    >>> is_local(fsspec.filesystem("file")), is_local(fsspec.filesystem("memory"))
    (True, False)
    """
    return "file" in (fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,))


def chunk_regions(shape_pn: tuple[int, int], chunks: tuple[int, int]) -> list[tuple[int, int]]:
    """Every (i, j) chunk index over (P, N), P-major."""
    return [(i, j) for i in range(-(-shape_pn[0] // chunks[0])) for j in range(-(-shape_pn[1] // chunks[1]))]


def chunk_key(name: str, ndim: int, i: int, j: int, per_shard: tuple[int, int] = (1, 1)) -> str:
    """The key of inner chunk (i, j) over (P, N): its file inside the store (default chunk key encoding, P and N
    trailing; an array at a store's root, ``name`` empty, has no folder), followed, where a shard holds more
    than one inner chunk, by ``[i,j]``.

    Examples
    --------
    >>> chunk_key("critical_value", 5, 3, 1), chunk_key("done", 2, 3, 1, per_shard=(2, 2))
    ('critical_value/c/0/0/0/3/1', 'done/c/1/0[3,1]')
    """
    folder = [name] if name else []
    file = "/".join([*folder, "c", *["0"] * (ndim - 2), str(i // per_shard[0]), str(j // per_shard[1])])
    return file if tuple(per_shard) == (1, 1) else f"{file}[{i},{j}]"


def key_file(key: str) -> str:
    """The file of a chunk key (:func:`chunk_key`): the key without its inner-chunk index."""
    return key.split("[", 1)[0]


def layout(array) -> tuple[tuple[int, int], tuple[int, int]]:
    """((inner chunk along P, along N), (inner chunks per shard along P, along N)) of a (P, N)-chunked array;
    (1, 1) inner chunks per shard for an unsharded one."""
    inner = tuple(array.chunks[-2:])
    outer = tuple(array.shards[-2:]) if getattr(array, "shards", None) else inner
    return inner, (outer[0] // inner[0], outer[1] // inner[1])
