"""The schema of a multi-class table's Zarr store: its name and version, variables, coordinates and template.

The layout :mod:`tablegen.store.multiclass_store` writes and checks (a multi-class table holds, for balanced
K-class designs, the exact critical values of every metric it was asked for); the names here are importable from
there too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tablegen.store.schema import chunk_codecs

__all__ = ["AXES", "CHAIN", "CHUNKED_VARIABLES", "COORDINATES", "COORDINATE_ATTRIBUTES", "DATA_VARIABLES", "DIGESTS",
           "MANIFEST", "SCHEMA_NAME", "SCHEMA_VERSION", "VARIABLES", "MulticlassTemplate"]

SCHEMA_NAME = "tablegen-multiclass-critical-values"
#: Bumped whenever a variable, dimension, codec or required attribute changes meaning.
SCHEMA_VERSION = 1
#: The grid's two axes, every chunked variable's trailing dimensions.
AXES = ("K", "n_per_class")
_CRITICAL = ("alpha", "C", *AXES)
#: name -> (dims, dtype, fill value, description)
VARIABLES = {
    "critical_hits": (_CRITICAL, "int64", -1,
                      "exact critical number of hits: the largest attainable x whose best-of-C p-value "
                      "1 - Pr(X < x)**C is above alpha (n where none is significant); a model is significant iff "
                      "its hits exceed it"),
    "critical_value": (("metric", *_CRITICAL), "float64", np.nan,
                       "exact critical value of the metric (the value to exceed) at critical_hits: accuracy, balanced "
                       "accuracy and macro-F1 hits / n (equal on a balanced design), kappa (K x - n) / (n (K - 1))"),
    "done": (AXES, "bool", False, "True once every variable of the cell is written"),
}
DATA_VARIABLES = ("critical_hits", "critical_value")
CHUNKED_VARIABLES = (*DATA_VARIABLES, "done")
COORDINATES = ("metric", "alpha", "C", *AXES)
COORDINATE_ATTRIBUTES = {
    "metric": {"long_name": "performance metric of the K-class classifier"},
    "alpha": {"long_name": "significance level", "units": "1"},
    "C": {"long_name": "number of competing classifiers (the winner is the best of C)", "units": "1"},
    "K": {"long_name": "number of classes", "units": "1"},
    "n_per_class": {"long_name": "items of each class (and predictions of each class)", "units": "1"},
}
MANIFEST, DIGESTS = "manifest", "sha256"
#: Root attribute holding the manifest's own digest once the store is complete.
CHAIN = "manifest_sha256"


@dataclass(frozen=True)
class MulticlassTemplate:
    """What a multi-class store holds: coordinates and the (K, n_per_class) chunking (one task's region).

    Examples
    --------
    >>> template = MulticlassTemplate(("accuracy",), (0.05,), (1, 10), (2, 3, 5), (5, 10), chunks=(2, 1))
    >>> template.cells, template.grid
    (6, (2, 2))
    """

    metrics: tuple
    alphas: tuple
    Cs: tuple
    K: tuple
    n_per_class: tuple
    chunks: tuple[int, int]

    @property
    def cells(self) -> int:
        return len(self.K) * len(self.n_per_class)

    @property
    def grid(self) -> tuple[int, int]:
        """Chunks along K and n_per_class."""
        return -(-len(self.K) // self.chunks[0]), -(-len(self.n_per_class) // self.chunks[1])

    def sizes(self) -> dict:
        return {"metric": len(self.metrics), "alpha": len(self.alphas), "C": len(self.Cs), "K": len(self.K),
                "n_per_class": len(self.n_per_class)}

    def dataset(self):
        """The xarray Dataset with every variable lazily at its fill value (nothing is computed from it)."""
        import dask.array as da
        import xarray as xr

        sizes, chunk_of = self.sizes(), dict(zip(AXES, self.chunks))
        variables = {}
        for name, (dims, dtype, fill, description) in VARIABLES.items():
            shape = tuple(sizes[d] for d in dims)
            chunks = tuple(chunk_of.get(d, sizes[d]) for d in dims)
            variables[name] = xr.Variable(dims, da.full(shape, fill, dtype=dtype, chunks=chunks),
                                          attrs={"description": description})
        values = {"metric": np.array(self.metrics, dtype=object), "alpha": list(self.alphas), "C": list(self.Cs),
                  "K": list(self.K), "n_per_class": list(self.n_per_class)}
        coords = {name: xr.Variable(name, value, attrs=COORDINATE_ATTRIBUTES[name]) for name, value in values.items()}
        return xr.Dataset(variables, coords=coords)

    def encoding(self) -> dict:
        """Each variable's Zarr encoding: the checksummed codecs, chunked over (K, n_per_class)."""
        sizes, chunk_of = self.sizes(), dict(zip(AXES, self.chunks))
        return {name: {**chunk_codecs(), "chunks": tuple(chunk_of.get(d, sizes[d]) for d in dims)}
                for name, (dims, *_) in VARIABLES.items()}
