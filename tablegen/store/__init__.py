"""The Zarr store: schema, region writes, done flags, integrity, lock, migration.

Below the batch job and the lookups; provenance is passed in by the caller.  The public entry point
:func:`open_store` and the maintenance routines :func:`migrate_store`, :func:`add_conventions`,
:func:`add_minimum_detectable` and :func:`check_integrity` resolve on first use, so importing a submodule (the
lock, say) does not load zarr.
"""

from __future__ import annotations

from tablegen._lazy import attach

_LAZY = {
    "open_store": "tablegen.store.zarr_store",
    "store_state": "tablegen.store.zarr_store",
    "check_integrity": "tablegen.store.integrity",
    "migrate_store": "tablegen.store.migrate",
    "add_conventions": "tablegen.store.migrate",
    "add_minimum_detectable": "tablegen.store.migrate",
}

__getattr__, __dir__, __all__ = attach(__name__, _LAZY)
