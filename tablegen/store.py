"""The Zarr store of a job (DESIGN §4): template, chunk-aligned region writes, done flags, lock, finalize.

Life of a store::

    create_store(config)          # schema + coordinates + attributes, no data (complete = False)
    with StoreLock(config):       # one writer at a time
        write_chunk(...)          # every data variable of a chunk, then its done flags
        mark_complete(config)     # once every cell is done
    open_store(url)               # an xarray Dataset; refuses other schemas

Every variable is chunked (P, N) exactly as the job's tasks are, and every write covers whole chunks,
so no two tasks ever touch the same Zarr chunk (Zarr 3 has no locks).  Done flags are written after
the data of their chunk: a task killed half-way leaves its cells not done, and a resume rewrites
them whole.  Chunk files are not a resume marker (``write_empty_chunks=False`` leaves no file for an
all-NaN chunk); the ``done`` variable is.  Stores are written unconsolidated, everywhere.
"""

from __future__ import annotations

import datetime
import getpass
import json
import logging
import os
import socket
import uuid
from dataclasses import asdict

import dask.array as da
import fsspec
import numpy as np
import xarray as xr
import zarr

from tablegen import __version__
from tablegen.mc import RNG_NAME
from tablegen.stats import CI_LEVEL
from tablegen.validation import TablegenInputError

logger = logging.getLogger(__name__)

#: Bumped whenever a variable, dimension or required attribute changes meaning.
SCHEMA_VERSION = 1
SCHEMA_NAME = "tablegen-critical-values"
#: The lock is a file beside the store (``paper.zarr.lock``): inside it, Zarr would warn about it.
LOCK_SUFFIX = ".lock"

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


class StoreError(TablegenInputError):
    """A store that is missing, locked, of another schema or written by another config."""


def _group(url: str, storage_options: dict | None, mode: str) -> zarr.Group:
    try:
        return zarr.open_group(url, mode=mode, storage_options=storage_options or None, zarr_format=3)
    except (FileNotFoundError, zarr.errors.GroupNotFoundError):
        raise StoreError(f"store {url!r} does not exist (or holds no Zarr group)") from None


def store_exists(url: str, storage_options: dict | None = None) -> bool:
    """Whether ``url`` already holds a Zarr group."""
    fs, path = fsspec.core.url_to_fs(url, **(storage_options or {}))
    return fs.exists(f"{path.rstrip('/')}/zarr.json")


def _config_record(config) -> str:
    """The config as JSON, without storage options (they may hold credentials)."""
    record = asdict(config)
    record.pop("storage_options", None)
    return json.dumps(record, sort_keys=True)


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
    coords = {"metric": np.array(config.metrics, dtype=object), "alpha": list(config.alphas),
              "C": list(config.Cs), "P": list(config.P), "N": list(config.N),
              "tail_probability": list(config.tail_probabilities)}
    return xr.Dataset(variables, coords=coords)


def create_store(config, command: str = "") -> None:
    """Write the schema, coordinates and provenance attributes of ``config``'s store; no data.

    Raises
    ------
    StoreError
        If the store already exists (resume it instead).
    """
    if store_exists(config.store_url, config.storage_options):
        raise StoreError(f"store {config.store_url!r} already exists")
    ds = template(config)
    ds.attrs.update(
        schema=SCHEMA_NAME, schema_version=SCHEMA_VERSION, tablegen_version=__version__,
        config=_config_record(config), config_hash=config.result_hash, root_seed=config.seed,
        rng=RNG_NAME, replicates=config.replicates, ci_level=CI_LEVEL,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        command=command, complete=False,
    )
    ds.to_zarr(config.store_url, mode="w-", compute=False, zarr_format=3, consolidated=False,
               storage_options=config.storage_options or None)
    logger.info("created store %s (%d cells, chunks %s)", config.store_url, config.cells, config.chunks)


def check_schema(attrs: dict, url: str) -> None:
    """Refuse a group that is not a tablegen store of this schema version."""
    if attrs.get("schema") != SCHEMA_NAME:
        raise StoreError(f"store {url!r} is not a tablegen store (attribute schema = {attrs.get('schema')!r})")
    if attrs.get("schema_version") != SCHEMA_VERSION:
        raise StoreError(f"store {url!r} has schema version {attrs.get('schema_version')!r}; this tablegen "
                         f"{__version__} reads version {SCHEMA_VERSION}")


def check_resumable(config) -> None:
    """Refuse to resume a store written by another config (result hash), schema or random stream."""
    attrs = dict(_group(config.store_url, config.storage_options, "r").attrs)
    check_schema(attrs, config.store_url)
    if attrs.get("rng") != RNG_NAME:
        raise StoreError(
            f"store {config.store_url!r} was sampled with another random stream (rng = {attrs.get('rng')!r}); "
            f"this tablegen {__version__} samples with {RNG_NAME!r}, so resuming would mix the two; "
            "use a new store"
        )
    if attrs.get("config_hash") != config.result_hash:
        stored = json.loads(attrs.get("config", "{}"))
        differing = sorted(k for k, v in config.result_fields().items()
                           if json.loads(json.dumps(v)) != stored.get(k))
        raise StoreError(
            f"store {config.store_url!r} was written by a different config (hash "
            f"{str(attrs.get('config_hash'))[:12]}…, this config {config.result_hash[:12]}…; "
            f"differing fields: {', '.join(differing) or 'unknown'}); use another store or the same config"
        )


def done_mask(config) -> np.ndarray:
    """(len(P), len(N)) booleans: which cells are written."""
    return np.asarray(_group(config.store_url, config.storage_options, "r")["done"][...], dtype=bool)


def _check_aligned(config, p_slice: slice, n_slice: slice) -> None:
    for axis, part, size, chunk in (("P", p_slice, len(config.P), config.chunks[0]),
                                    ("N", n_slice, len(config.N), config.chunks[1])):
        if part.start % chunk or (part.stop % chunk and part.stop != size):
            raise ValueError(f"region {axis}[{part.start}:{part.stop}] is not aligned with Zarr chunks of {chunk}")


def write_chunk(config, p_slice: slice, n_slice: slice, arrays: dict[str, np.ndarray]) -> None:
    """Write one chunk-aligned region: every data variable, then the done flags.

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
    group = _group(config.store_url, config.storage_options, "r+")
    for name in DATA_VARIABLES:
        group[name][..., p_slice, n_slice] = arrays[name]
    group["done"][p_slice, n_slice] = True


def mark_complete(config) -> None:
    """Set ``complete = True`` once every cell is done (checked here, not assumed)."""
    mask = done_mask(config)
    if not mask.all():
        raise RuntimeError(f"{int((~mask).sum())} cells are not done; the store is not complete")
    group = _group(config.store_url, config.storage_options, "r+")
    group.attrs.update({"complete": True,
                        "completed": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")})


def open_store(url: str, storage_options: dict | None = None) -> xr.Dataset:
    """Open a tablegen store as an xarray Dataset (lazy), refusing other schemas.

    Raises
    ------
    StoreError
        If ``url`` holds no Zarr group or one that is not a tablegen store of this schema version.
    """
    attrs = dict(_group(url, storage_options, "r").attrs)
    check_schema(attrs, url)
    return xr.open_zarr(url, consolidated=False, storage_options=storage_options or None)


class StoreLock:
    """An exclusive lock file beside the store: one ``tablegen run`` writes a store at a time.

    The file is created with exclusive-create semantics (``open(..., "xb")``), atomic on local and
    POSIX shared filesystems; object stores give it on a best-effort basis.  It records host, pid,
    user and start time.  A lock left by a dead process on this host (SIGKILL, power cut) is
    recognised and taken over; one from another host needs ``break_lock=True`` after checking.
    """

    def __init__(self, url: str, storage_options: dict | None = None, break_lock: bool = False):
        self.fs, root = fsspec.core.url_to_fs(url, **(storage_options or {}))
        self.path = f"{root.rstrip('/')}{LOCK_SUFFIX}"
        self.url, self.break_lock = url, break_lock
        self.record = {"token": uuid.uuid4().hex, "host": socket.gethostname(), "pid": os.getpid(),
                       "user": getpass.getuser(),
                       "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}

    def _holder(self) -> dict | None:
        try:
            with self.fs.open(self.path, "rb") as f:
                return json.loads(f.read() or b"{}")
        except FileNotFoundError:
            return None

    def _stale(self, holder: dict) -> bool:
        if holder.get("host") != socket.gethostname():
            return False
        try:
            os.kill(int(holder.get("pid", -1)), 0)
        except ProcessLookupError:
            return True
        except (PermissionError, ValueError, OverflowError):
            return False
        return False

    def acquire(self) -> None:
        """Take the lock, or raise :class:`StoreError` naming its holder."""
        self.fs.makedirs(self.path.rsplit("/", 1)[0], exist_ok=True)
        holder = self._holder()
        if holder is not None and (self.break_lock or self._stale(holder)):
            logger.warning("removing the lock of %s (pid %s on %s, started %s): %s", self.url, holder.get("pid"),
                           holder.get("host"), holder.get("started"),
                           "--break-lock given" if self.break_lock else "that process no longer exists")
            self.fs.rm(self.path)
        try:
            with self.fs.open(self.path, "xb") as f:
                f.write(json.dumps(self.record).encode())
        except FileExistsError:
            holder = self._holder() or {}
            raise StoreError(
                f"store {self.url!r} is locked by another tablegen run (pid {holder.get('pid')} on "
                f"{holder.get('host')}, user {holder.get('user')}, started {holder.get('started')}); wait for it "
                "to finish, or if it is dead and ran on another host, rerun with --break-lock"
            ) from None
        if (self._holder() or {}).get("token") != self.record["token"]:
            raise StoreError(f"store {self.url!r}: lost the race for its lock to another run")

    def release(self) -> None:
        """Remove the lock if it is still ours."""
        if (self._holder() or {}).get("token") == self.record["token"]:
            self.fs.rm(self.path)

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc):
        self.release()
        return False


def store_report(ds: xr.Dataset) -> dict:
    """Provenance and completeness of a store (what ``tablegen info`` prints).

    Returns
    -------
    dict
        ``provenance`` (the store's attributes but the full config), ``cells``, ``cells_done``,
        ``missing`` (the (P, N) of every cell not done, P-major), ``exact_available`` (per metric,
        the share of done cells with an exact value at every (C, alpha)) and ``grid`` (axes).
    """
    done = np.asarray(ds.done.values, dtype=bool)
    P, N = ds.P.values, ds.N.values
    missing = [(int(P[i]), int(N[j])) for i, j in zip(*np.nonzero(~done))]
    exact = np.isfinite(ds.exact_critical_value.values).all(axis=(1, 2))  # (metric, P, N)
    exact_share = {str(m): float(exact[k][done].mean()) if done.any() else 0.0
                   for k, m in enumerate(ds.metric.values)}
    provenance = {k: v for k, v in ds.attrs.items() if k != "config"}
    grid = {"P": [int(v) for v in P], "N": [int(v) for v in N], "metric": [str(m) for m in ds.metric.values],
            "C": [int(c) for c in ds.C.values], "alpha": [float(a) for a in ds.alpha.values]}
    return {"provenance": provenance, "cells": int(done.size), "cells_done": int(done.sum()),
            "missing": missing, "exact_available": exact_share, "grid": grid}


def verify_report(ds: xr.Dataset, worst: int = 10) -> dict:
    """Monte Carlo against exact over every done cell of a store (what ``tablegen verify`` prints).

    For each (metric, alpha, C, P, N) with an exact value, the check is whether the exact critical
    value lies inside the stored 95% interval [ci_low, ci_high].  About 95% or more should (the
    interval is conservative for discrete metrics); far fewer points at a bug or a mislabelled store.

    Returns
    -------
    dict
        ``checked`` and ``inside`` counts overall and ``by_metric``; ``coverage`` (inside / checked);
        ``worst``: up to ``worst`` entries with the largest |critical_value - exact| relative to the
        interval's half-width, each with metric, alpha, C, P, N, Monte Carlo and exact values, CI.
    """
    done = np.asarray(ds.done.values, dtype=bool)
    exact = ds.exact_critical_value.values
    estimate, low, high = ds.critical_value.values, ds.ci_low.values, ds.ci_high.values
    checked = np.isfinite(exact) & done[None, None, None]
    inside = checked & (exact >= low - 1e-12) & (exact <= high + 1e-12)
    by_metric = {str(m): {"checked": int(checked[k].sum()), "inside": int(inside[k].sum())}
                 for k, m in enumerate(ds.metric.values) if checked[k].any()}
    half_width = np.maximum((high - low) / 2, 1e-12)
    with np.errstate(invalid="ignore"):
        badness = np.where(checked, np.abs(estimate - exact) / half_width, -np.inf)
    order = np.argsort(badness, axis=None)[::-1][:worst]
    worst_entries = []
    for flat in order:
        if not np.isfinite(badness.flat[flat]):
            break
        k, a, c, i, j = np.unravel_index(flat, badness.shape)
        worst_entries.append({
            "metric": str(ds.metric.values[k]), "alpha": float(ds.alpha.values[a]), "C": int(ds.C.values[c]),
            "P": int(ds.P.values[i]), "N": int(ds.N.values[j]), "critical_value": float(estimate[k, a, c, i, j]),
            "exact": float(exact[k, a, c, i, j]), "ci_low": float(low[k, a, c, i, j]),
            "ci_high": float(high[k, a, c, i, j]), "inside": bool(inside[k, a, c, i, j]),
        })
    total, hits = int(checked.sum()), int(inside.sum())
    return {"checked": total, "inside": hits, "coverage": hits / total if total else float("nan"),
            "by_metric": by_metric, "worst": worst_entries}
