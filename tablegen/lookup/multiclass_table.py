"""Lookups in a multi-class table: the store ``tablegen run`` writes from a ``kind: multiclass`` config.

:func:`open_multiclass_table` (or :func:`tablegen.open_table`, which recognises the schema) opens it; every
region a lookup reads is checked against the store's manifest first (a damaged chunk is named, never read
as numbers), and the root attributes and coordinates when the table opens
(:func:`~tablegen.store.multiclass_store.check_multiclass_store` does the whole store).  The values are exact:
:func:`tablegen.critical_value` with ``K``, ``n_per_class`` and ``table=`` answers from here where computing is
slower than reading.
"""

from __future__ import annotations

import os

import numpy as np

from tablegen.compute.exact.balanced_multiclass import check_balanced_metric, check_design, value_from_hits
from tablegen.compute.validation import check_alpha, check_competitors
from tablegen.errors import Argument, StoreError, StoreIntegrityError, TablegenInputError
from tablegen.store.multiclass_store import (
    MulticlassReport,
    check_multiclass_store,
    metadata_problems,
    read_multiclass_attributes,
    region_problem,
)
from tablegen.store.schema import open_group

__all__ = ["MulticlassTable", "open_multiclass_table"]


class MulticlassTable:
    """An open multi-class table: exact critical values of balanced K-class designs, written by ``tablegen run`` of a
    ``kind: multiclass`` config (:func:`tablegen.run`).

    :func:`tablegen.open_table` returns one for such a store; :func:`tablegen.critical_value` with ``K``,
    ``n_per_class`` and ``table=`` (this object or the store's path) reads from it.  Opening checks the root
    attributes and coordinates against the store's manifest (damage: :class:`~tablegen.errors.StoreIntegrityError`);
    each region a lookup reads is checked before its values are used.

    Parameters
    ----------
    url : str
        The store's path or fsspec URL.
    storage_options : dict, optional
        fsspec options of a remote store.

    Attributes
    ----------
    source : str
        The store's path or URL.
    attrs : dict
        Its root attributes (config, config hash, ``complete``, history ...).
    K, n_per_class, Cs, alphas, metrics : tuple
        Its coordinates.

    Raises
    ------
    StoreError
        If ``url`` holds no multi-class table (another schema, an unfinished template, nothing).
    StoreIntegrityError
        If its metadata disagrees with its manifest.

    Examples
    --------
    >>> import tablegen
    >>> from tablegen.batch.config import config_from_mapping
    >>> config = config_from_mapping({"kind": "multiclass", "grid": {"K": [3, 5], "n_per_class": [5, 40]},
    ...                               "Cs": [1, 100], "alphas": [0.05], "chunks": {"K": 1, "n_per_class": 1},
    ...                               "store": {"url": "memory://multiclass-table-example.zarr"}})
    >>> _ = tablegen.run(config, executor="serial")
    >>> table = tablegen.MulticlassTable(config.store_url)
    >>> table.K, table.n_per_class, table.metrics
    ((3, 5), (5, 40), ('accuracy', 'kappa', 'balanced_accuracy', 'macro_f1'))
    >>> table.critical_value("accuracy", 5, 40, C=100, alpha=0.05)
    0.3
    >>> tablegen.critical_value("kappa", K=5, n_per_class=40, C=100, alpha=0.05, table=table, method="table").value
    0.125
    """

    def __init__(self, url: str, storage_options: dict | None = None):
        if not isinstance(url, (str, os.PathLike)) or not str(url):
            raise TablegenInputError.naming(Argument("url"), f" must be the path of a multi-class table, got {url!r}")
        if storage_options is not None and not isinstance(storage_options, dict):
            raise TablegenInputError.naming(Argument("storage_options"), " must be a dict of fsspec options or None, "
                                            f"got {type(storage_options).__name__}")
        self.source, self._options = os.fspath(url), storage_options
        self.attrs = read_multiclass_attributes(self.source, storage_options)
        self._group = open_group(self.source, storage_options, "r")
        problems = metadata_problems(self._group, self.attrs)
        if problems:
            raise StoreIntegrityError(f"store {self.source!r} is damaged: {'; '.join(problems[:5])}; re-create it "
                                      "(`tablegen verify` names every problem)")
        self.K, self.n_per_class = (tuple(int(v) for v in self._group[a][...]) for a in ("K", "n_per_class"))
        self.Cs = tuple(int(v) for v in self._group["C"][...])
        self.alphas = tuple(float(v) for v in self._group["alpha"][...])
        self.metrics = tuple(str(v) for v in self._group["metric"][...])
        self._checked: dict = {}

    def __repr__(self) -> str:
        return (f"MulticlassTable({self.source!r}: K {self.K[0]}..{self.K[-1]} x n_per_class {self.n_per_class[0]}.."
                f"{self.n_per_class[-1]}, C {list(self.Cs)}, alpha {list(self.alphas)})")

    def holds(self, K: int, n_per_class: int, C: int, alpha: float = 0.01) -> bool:
        """Whether the table's grid has the cell, C and alpha (done or not; ``alpha`` default 0.01 as
        :func:`tablegen.critical_value`); arguments that cannot describe a cell are refused, named."""
        K, n_per_class = check_design(K, n_per_class)
        C, alpha = check_competitors(C), check_alpha("alpha", alpha)
        return K in self.K and n_per_class in self.n_per_class and C in self.Cs and _alpha_index(self.alphas,
                                                                                                 alpha) is not None

    def critical_hits(self, K: int, n_per_class: int, C: int, alpha: float = 0.01, required: bool = False
                      ) -> int | None:
        """The stored hits to exceed at the cell, C and alpha; None where the table does not hold them (an error
        naming what is missing if ``required``).

        Raises
        ------
        StoreIntegrityError
            If the region holding the cell fails its check against the manifest.
        """
        K, n_per_class = check_design(K, n_per_class)
        C, alpha = check_competitors(C), check_alpha("alpha", alpha)
        a = _alpha_index(self.alphas, alpha)
        missing = [text for text, absent in ((f"K = {K}", K not in self.K),
                                             (f"n_per_class = {n_per_class}", n_per_class not in self.n_per_class),
                                             (f"C = {C}", C not in self.Cs), (f"alpha = {alpha:g}", a is None))
                   if absent]
        if not missing:
            k, n = self.K.index(K), self.n_per_class.index(n_per_class)
            hits = self._region(k, n)
            if hits is not None:
                return int(hits[a, self.Cs.index(C), k % self._chunks[0], n % self._chunks[1]])
            missing = [f"the cell K = {K}, n_per_class = {n_per_class} (not computed yet: resume the run)"]
        if required:
            raise TablegenInputError.naming(
                Argument("table", self.source), f" does not hold {', '.join(missing)}; it holds K in {list(self.K)}, "
                f"n_per_class in {list(self.n_per_class)}, C in {list(self.Cs)}, alpha in {list(self.alphas)}")
        return None

    def critical_value(self, metric: str, K: int, n_per_class: int, C: int, alpha: float = 0.01) -> float:
        """The stored critical value (the value to exceed) of ``metric``; an error where the table lacks it
        (``alpha`` default 0.01 as :func:`tablegen.critical_value`)."""
        metric = check_balanced_metric(metric)
        hits = self.critical_hits(K, n_per_class, C, alpha, required=True)
        return value_from_hits(metric, hits, K, n_per_class)

    @property
    def _chunks(self) -> tuple[int, int]:
        return tuple(self._group["done"].chunks)

    def _region(self, k: int, n: int):
        """The critical hits of the region holding cell (k, n), checked against the manifest once; None where the
        region is not done."""
        done, hits = self._checked_region(k // self._chunks[0], n // self._chunks[1])
        return hits if done[k % self._chunks[0], n % self._chunks[1]] else None

    def _checked_region(self, i: int, j: int) -> tuple[np.ndarray, np.ndarray]:
        """(done flags, critical hits) of region (i, j), read once its check against the manifest has passed."""
        if (i, j) not in self._checked:
            problem = region_problem(self._group, i, j, self.attrs.get("complete") is True)
            if problem is not None:
                ck, cn = self._chunks
                raise StoreIntegrityError(
                    f"store {self.source!r}: the region of K = {_span(self.K[i * ck:(i + 1) * ck])}, n_per_class = "
                    f"{_span(self.n_per_class[j * cn:(j + 1) * cn])} is damaged ({problem}); `tablegen run CONFIG` "
                    "recomputes it")
            ck, cn = self._chunks
            done = np.asarray(self._group["done"][i * ck:(i + 1) * ck, j * cn:(j + 1) * cn])
            hits = np.asarray(self._group["critical_hits"][..., i * ck:(i + 1) * ck, j * cn:(j + 1) * cn])
            self._checked[(i, j)] = (done, hits)
        return self._checked[(i, j)]

    def verify(self) -> MulticlassReport:
        """The whole store checked against its manifest
        (:func:`~tablegen.store.multiclass_store.check_multiclass_store`)."""
        return check_multiclass_store(self.source, self._options)

    def coordinate(self, name: str) -> np.ndarray:
        """The coordinate ``name`` (metric, alpha, C, K or n_per_class) as an array, as
        :meth:`tablegen.Table.coordinate` gives a binary table's."""
        values = {"metric": self.metrics, "alpha": self.alphas, "C": self.Cs, "K": self.K,
                  "n_per_class": self.n_per_class}
        if name not in values:
            raise TablegenInputError.naming(Argument("name"), f" must be one of {', '.join(values)}, got {name!r}")
        return np.array(values[name], dtype=object if name == "metric" else None)

    def done(self) -> np.ndarray:
        """(len(K), len(n_per_class)) booleans: which cells are written; every region is checked against the manifest
        first (damage: StoreIntegrityError, naming it)."""
        ck, cn = self._chunks
        grid_k, grid_n = -(-len(self.K) // ck), -(-len(self.n_per_class) // cn)
        return np.block([[self._checked_region(i, j)[0] for j in range(grid_n)] for i in range(grid_k)]).astype(bool)

    def hits_grid(self, C: int, alpha: float = 0.01) -> np.ndarray:
        """(len(K), len(n_per_class)) stored critical hits at ``C`` and ``alpha``, -1 where the cell is not done;
        every region read is checked against the manifest first (damage: StoreIntegrityError, naming it)."""
        C, alpha = check_competitors(C), check_alpha("alpha", alpha)
        a = _alpha_index(self.alphas, alpha)
        if C not in self.Cs or a is None:
            raise TablegenInputError.naming(Argument("table", self.source), f" does not hold C = {C}, alpha = "
                                            f"{alpha:g}; it holds C in {list(self.Cs)}, alpha in {list(self.alphas)}")
        c = self.Cs.index(C)
        grid = np.full((len(self.K), len(self.n_per_class)), -1, dtype=np.int64)
        for k in range(len(self.K)):
            for n in range(len(self.n_per_class)):
                hits = self._region(k, n)
                if hits is not None:
                    grid[k, n] = hits[a, c, k % self._chunks[0], n % self._chunks[1]]
        return grid


def _span(values: tuple) -> str:
    """One value, or the first and last of a region's: ``5`` or ``2..3``."""
    return str(values[0]) if len(values) == 1 else f"{values[0]}..{values[-1]}"


def _alpha_index(alphas: tuple, alpha: float) -> int | None:
    matches = [i for i, value in enumerate(alphas) if abs(value - alpha) <= 1e-12 * max(1.0, alpha)]
    return matches[0] if matches else None


def open_multiclass_table(path: str | os.PathLike, storage_options: dict | None = None,
                          argument: str | None = None) -> MulticlassTable:
    """Open a multi-class table; a store of another schema, or none, is refused (naming ``argument`` if given).

    Examples
    --------
    >>> from tablegen.store.schema import bundled_table_path
    >>> try:
    ...     open_multiclass_table(bundled_table_path())
    ... except StoreError as error:
    ...     print(str(error).split("(")[0].endswith("is not a multi-class table "))
    True
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise TablegenInputError.naming(Argument(argument or "path"), f" must be the path of a multi-class table, "
                                        f"got {path!r}")
    try:
        return MulticlassTable(os.fspath(path), storage_options)
    except StoreError as error:
        if argument is None:
            raise
        raise type(error).naming(Argument(argument, os.fspath(path)), ": ", str(error)) from None


