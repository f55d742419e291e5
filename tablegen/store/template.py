"""What a store holds: its coordinates, its (P, N) chunking and its shards (:class:`StoreTemplate`).

The batch job builds one from its config (:func:`tablegen.batch.job.store_template`);
:func:`tablegen.store.zarr_store.create_store` writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tablegen.store.schema import (
    ALL_VARIABLES,
    COORDINATE_ATTRIBUTES,
    POWER_COORDINATE_ATTRIBUTES,
    POWER_VERSION,
    SHARDED_VERSION,
    UNSHARDED_VERSION,
    chunk_codecs,
    chunked_variables,
)

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["StoreTemplate"]


@dataclass(frozen=True)
class StoreTemplate:
    """What a store holds: its coordinates, its (P, N) chunking and its shards.

    ``chunks`` are the cells of an inner chunk (what a lookup reads) and ``shard`` the inner chunks per shard
    along P and N (what a task writes, one object per array): a schema-4 store.  ``shard=None`` makes an
    unsharded schema-3 store (one object per chunk per array), as tablegen wrote before shards.
    ``power_levels`` (target powers, none by default) add the minimum detectable AUC over a ``power`` coordinate:
    a schema-5 store, in either layout (``power_max_seconds``: the bound its values were computed under, recorded
    in its attributes).

    Examples
    --------
    >>> template = StoreTemplate(("auc",), (0.01,), (10,), (20, 30), (40,), (0.1,), chunks=(1, 1), shard=(2, 1))
    >>> template.cells, dict(template.dataset().sizes)["P"], template.outer, template.version
    (2, 2, (2, 1), 4)
    >>> StoreTemplate(("auc",), (0.01,), (10,), (20,), (40,), (0.1,), chunks=(1, 1), power_levels=(0.8,)).version
    5
    """

    metrics: tuple
    alphas: tuple
    Cs: tuple
    P: tuple
    N: tuple
    tail_probabilities: tuple
    chunks: tuple[int, int]
    shard: tuple[int, int] | None = None
    power_levels: tuple = ()
    power_max_seconds: float | None = None

    @property
    def cells(self) -> int:
        return len(self.P) * len(self.N)

    @property
    def outer(self) -> tuple[int, int]:
        """Cells of a shard (of a chunk, unsharded) along P and N: the region one task writes."""
        shard = self.shard or (1, 1)
        return self.chunks[0] * shard[0], self.chunks[1] * shard[1]

    @property
    def version(self) -> int:
        """The schema version of the store: 5 with the minimum detectable AUC, else 4 sharded, 3 not."""
        if self.power_levels:
            return POWER_VERSION
        return SHARDED_VERSION if self.shard else UNSHARDED_VERSION

    @property
    def variables(self) -> dict:
        """The store's (P, N)-chunked variables (name -> dims, dtype, fill value, description)."""
        return {name: ALL_VARIABLES[name] for name in chunked_variables(self.version)}

    def encoding(self) -> dict:
        """Each variable's Zarr encoding: codecs, and inner chunks and shards over (P, N) where sharded."""
        if not self.shard:
            return {name: chunk_codecs() for name in self.variables}
        sizes = self.dataset_sizes()
        encoding = {}
        for name, (dims, *_) in self.variables.items():
            inner = tuple({"P": self.chunks[0], "N": self.chunks[1]}.get(d, sizes[d]) for d in dims)
            outer = tuple({"P": self.outer[0], "N": self.outer[1]}.get(d, sizes[d]) for d in dims)
            encoding[name] = {**chunk_codecs(), "chunks": inner, "shards": outer}
        return encoding

    def dataset_sizes(self) -> dict:
        return {"metric": len(self.metrics), "alpha": len(self.alphas), "C": len(self.Cs),
                "P": len(self.P), "N": len(self.N), "tail_probability": len(self.tail_probabilities),
                "power": len(self.power_levels)}

    def dataset(self) -> xr.Dataset:
        """The Dataset with every variable lazily at its fill value (nothing is computed from it)."""
        import dask.array as da
        import xarray as xr

        sizes = self.dataset_sizes()
        chunk_of = {"P": self.outer[0], "N": self.outer[1]}
        variables = {}
        for name, (dims, dtype, fill, description) in self.variables.items():
            shape = tuple(sizes[d] for d in dims)
            chunks = tuple(chunk_of.get(d, sizes[d]) for d in dims)
            attrs = {"description": description}
            if name == "minimum_detectable_auc":
                from tablegen.compute.exact.detectable import AUC_TOLERANCE

                attrs["tolerance"] = AUC_TOLERANCE
                if self.power_max_seconds is not None:
                    attrs["max_seconds"] = self.power_max_seconds
            variables[name] = xr.Variable(dims, da.full(shape, fill, dtype=dtype, chunks=chunks), attrs=attrs)
        values = {"metric": np.array(self.metrics, dtype=object), "alpha": list(self.alphas),
                  "C": list(self.Cs), "P": list(self.P), "N": list(self.N),
                  "tail_probability": list(self.tail_probabilities)}
        if self.power_levels:
            values["power"] = list(self.power_levels)
        attributes = {**COORDINATE_ATTRIBUTES, **POWER_COORDINATE_ATTRIBUTES}
        coords = {name: xr.Variable(name, value, attrs=attributes[name]) for name, value in values.items()}
        return xr.Dataset(variables, coords=coords)
