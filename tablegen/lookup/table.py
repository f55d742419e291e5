"""Lookups in a finished store: critical values, p-values and significance tests by metric / P / N / C / α.

``open_table()`` opens the table bundled with the package (the paper's appendix grid at R = 10⁷,
``configs/paper.yaml``); ``open_table(path)`` opens any complete tablegen store, local or fsspec URL.
Lookups never interpolate between grid cells: a (P, N), C or α that is not in the table is an error
that says which methods can answer instead.

Critical values come from the store's exact values where it has them, otherwise from its Monte
Carlo estimates with their 95% order-statistic intervals.  p-values come from the stored upper-tail
quantile function Q(t) (t = 1e-7 … 0.1): the quantiles that straddle the score bound the number of
sampled rankings that reached it, so a table p-value is a bound resolved to that grid of t (reported
with ``bound="<"`` as the upper end of its 95% interval), never a point interpolated between values.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from tablegen.compute.exact.nulls import SNAP_TOLERANCE
from tablegen.compute.metrics import get_metric
from tablegen.compute.stats import clopper_pearson, exceedance_bounds, p_value_from_tail
from tablegen.compute.validation import check_integer_array, check_real_array, check_scores_in_range
from tablegen.errors import Argument, StoreError, StoreIntegrityError, TablegenInputError
from tablegen.lookup._call_order import score_by_keyword
from tablegen.lookup.answers import Answer, SignificanceResult, verdict
from tablegen.lookup.table_grid import TableGrid, shown_values
from tablegen.store.reader import StoreReader, store_fingerprint
from tablegen.store.schema import ALL_VARIABLES, VARIABLES, bundled_table_path

if TYPE_CHECKING:
    import os

    import xarray as xr
    from numpy.typing import ArrayLike

logger = logging.getLogger(__name__)


class Table(TableGrid):
    """A finished tablegen store, for lookups (see :func:`open_table`).

    Every lookup takes one metric and broadcasts the other arguments: scalars give scalar answers,
    arrays give arrays of the broadcast shape.

    Everything a lookup reads (coordinates, metadata, the chunks of the cells asked) is checked
    against the store's manifest before it answers (:class:`~tablegen.store.reader.StoreReader`); a
    damaged piece is refused with :class:`~tablegen.errors.StoreIntegrityError` naming it.

    Attributes
    ----------
    attrs : dict
        The store's root attributes (provenance: ``replicates``, ``root_seed``, ``config_hash`` ...).
    source : str
        The store's path or URL (``"bundled table"`` for the package's own).

    Examples
    --------
    >>> table = open_table()
    >>> table.contains("auc", 20, 20, C=10, alpha=0.01), table.contains("auc", 25, 20)  # N = 25: off the grid
    (True, False)
    >>> answer = table.critical_value("average_precision", [20, 30, 40], 20, C=10)  # arrays broadcast
    >>> answer.value.round(4).tolist(), answer.method.tolist(), answer.replicates.tolist()
    ([0.8035, 0.8358, 0.8601], ['table', 'table', 'table'], [10000000, 10000000, 10000000])
    >>> table.significance_test("best_f1", 50, 50, C=100, score=[0.7, 0.8]).significant.tolist()
    [False, True]
    """

    @property
    def ds(self) -> xr.Dataset:
        """The store as a lazy xarray Dataset, opened on first use (it imports xarray); its values are read as
        stored, not checked against the manifest: lookups, :meth:`read` and ``tablegen verify`` check them."""
        if self._ds is None:
            import xarray as xr

            for name in self._store.variables:  # every array's metadata checked first: damage is named, not a traceback
                self._store.array(name)
            try:
                self._ds = xr.open_zarr(self._store.group.store, consolidated=False, zarr_format=3)
            except Exception as error:  # noqa: BLE001 - metadata xarray cannot read
                raise StoreIntegrityError(f"{self.source}: its metadata cannot be read ({type(error).__name__}: "
                                          f"{error}); run `tablegen verify` on it to see what is damaged") from None
        return self._ds

    @property
    def digests(self) -> dict:
        """What this table has checked against the manifest so far: key -> hex SHA-256 (kept while it is open)."""
        return dict(self._store.digests)

    def coordinate(self, name: str) -> np.ndarray:
        """A coordinate's values (checked against the manifest when the table opened).

        Examples
        --------
        >>> open_table().coordinate("alpha").tolist()
        [0.01, 0.05]
        """
        if name not in ("metric", "alpha", "C", "P", "N", "tail_probability", "power"):
            raise TablegenInputError(f"name must be a coordinate (metric, alpha, C, P, N, tail_probability), "
                                     f"got {name!r}")
        return self._store.coordinate(name)

    def read(self, name: str) -> np.ndarray:
        """A whole variable of the store, every chunk checked against the manifest (for exports over the grid).

        Examples
        --------
        >>> open_table().read("done").all()
        np.True_
        """
        if name not in VARIABLES:
            raise TablegenInputError(f"name must be one of {', '.join(VARIABLES)}, got {name!r}")
        return self._store.variable(name)

    def __repr__(self) -> str:
        return (f"<tablegen.Table {self.source}: {len(self._metrics)} metrics, P {shown_values(self._P)}, "
                f"N {shown_values(self._N)}, C {shown_values(self._C)}, alpha {shown_values(self._alpha)}, "
                f"R = {self.attrs.get('replicates', '?'):,}>")

    # -- what the table holds -------------------------------------------------------------------
    def contains(self, metric: str, P: ArrayLike, N: ArrayLike, C: ArrayLike | None = None,
                 alpha: ArrayLike | None = None) -> bool:
        """Whether every (P, N) [and C, alpha] given is a finished cell of this table (no error)."""
        try:
            self._indices(metric, P, N, C, alpha)
        except TablegenInputError:
            return False
        return True

    def variable_attributes(self, name: str) -> dict:
        """A variable's attributes (``description``, and the minimum detectable AUC's ``tolerance``), its metadata
        checked against the manifest.

        Examples
        --------
        >>> open_table().variable_attributes("replicates")["description"]
        'R, the random rankings sampled for the cell'
        """
        if name not in ALL_VARIABLES or not self._store.holds(name):
            raise TablegenInputError(f"name must be a variable of {self.source} ({', '.join(self._store.variables)}), "
                                     f"got {name!r}")
        return self._store.array(name).attrs.asdict()

    # -- lookups --------------------------------------------------------------------------------
    def minimum_detectable_auc(self, metric: str, P: ArrayLike, N: ArrayLike, C: ArrayLike, alpha: ArrayLike = 0.01,
                               power: ArrayLike = 0.8) -> np.ndarray:
        """The stored minimum detectable AUC (exact Lehmann power; a store of schema version 5, written by a job
        with a ``power:`` section): the upper end of a bracket of width ``tolerance`` (the array's attribute); 1.0
        where no AUC below 1 reaches the power; NaN where the metric has no exact Lehmann power at the cell (or
        its job's ``power.max_seconds`` left it out).

        Raises
        ------
        TablegenInputError
            If the store holds no minimum detectable AUC, or not the metric, cell, C, alpha or power level asked.

        Examples
        --------
        >>> round(float(open_table().minimum_detectable_auc("best_f1", 100, 100, C=100, alpha=0.05, power=0.8)), 6)
        0.669469
        """
        if not self._store.holds("minimum_detectable_auc"):
            raise TablegenInputError(f"{self.source} holds no minimum detectable AUC (a store of schema version "
                                     f"{self._store.root_check.version}; a job with a power: section writes it, and "
                                     "tablegen.store.add_minimum_detectable(path) adds it to a finished store)")
        if C is None or alpha is None:
            raise TablegenInputError(f"{'C' if C is None else 'alpha'} must be given for a minimum detectable AUC")
        k, index, _ = self._indices(metric, P, N, C, alpha)
        levels = self._store.coordinate("power")
        index["power"] = self._axis("power", np.asarray(power, dtype=float), levels, lambda: ())
        return self._at("minimum_detectable_auc", k, index)

    def critical_value(self, metric: str, P: ArrayLike, N: ArrayLike, C: ArrayLike, alpha: ArrayLike = 0.01) -> Answer:
        """Critical value m* for the best of C random classifiers at level alpha, from the table.

        The stored exact value where there is one (``method="exact"``), else the Monte Carlo
        estimate and its 95% interval (``method="table"``, ``replicates`` = the cell's R).

        Examples
        --------
        >>> table = open_table()
        >>> answer = table.critical_value("best_accuracy", 20, 20, C=10)
        >>> float(answer), answer.method
        (0.775, 'exact')
        """
        if C is None or alpha is None:
            raise TablegenInputError(f"{'C' if C is None else 'alpha'} must be given for a critical value")
        return self._critical_answer(*self._indices(metric, P, N, C, alpha, "critical value")[:2])

    def _critical_answer(self, k: int, index: dict) -> Answer:
        exact = self._gather("exact_critical_value", k, index)
        estimate, low, high = (self._gather(v, k, index) for v in ("critical_value", "ci_low", "ci_high"))
        has_exact = np.isfinite(exact)
        if not (has_exact | np.isfinite(estimate)).all():  # a done cell always holds a value: never answer NaN
            raise StoreIntegrityError(f"{self.source} holds no critical value for a requested cell although it is "
                                      "marked done; the store is damaged: run `tablegen verify` on it")
        replicates = self._at("replicates", None, index)
        return self._answer(value=np.where(has_exact, exact, estimate), ci_low=np.where(has_exact, exact, low),
                            ci_high=np.where(has_exact, exact, high),
                            method=np.where(has_exact, "exact", "table"),
                            replicates=np.where(has_exact, 0, replicates), bound=np.full(exact.shape, ""))

    @score_by_keyword
    def p_value(self, metric: str, P: ArrayLike, N: ArrayLike, C: ArrayLike, *, score: ArrayLike) -> Answer:
        """p-value 1 - F(score-)**C of a winner's score, from the stored tail quantiles (any C >= 1).

        The arguments come in :meth:`critical_value`'s order (metric, P, N, C), ``score`` by keyword, as in
        :func:`tablegen.p_value`; the old order ``p_value(metric, score, P, N, C)`` still works, with a
        DeprecationWarning.

        The count of the cell's R rankings that reached the score is bounded by the two stored
        quantiles that straddle it; the 95% interval [``ci_low``, ``ci_high``] covers that whole
        bracket plus the sampling error (Clopper–Pearson on its ends).  ``value`` is the interval's
        upper end with ``bound="<"``: the true p-value is at most ``value`` (at 97.5% confidence),
        so a verdict read from it is never too generous.  A score at or below the shallowest
        quantile (t = 0.1) gets ``value = ci_low`` with ``bound=">"`` instead.

        Examples
        --------
        >>> answer = open_table().p_value("auc", 100, 300, C=1000, score=0.65)
        >>> answer.formatted(2), answer.method
        ('< 0.0066', 'table')
        """
        k, index, (P_, N_) = self._indices(metric, P, N, None, None, "p-value")
        score, C_ = check_real_array("score", score), check_integer_array("C", C)
        try:
            score, C_, P_, N_ = np.broadcast_arrays(score, C_, P_, N_)
        except ValueError:
            raise TablegenInputError("P, N, C and score must broadcast to one shape") from None
        index = {dim: np.broadcast_to(i, score.shape) for dim, i in index.items()}
        check_scores_in_range(self._metrics[k], score, P_, N_)
        return self._p_answer(k, index, score, C_)

    def _p_answer(self, k: int, index: dict, score, C_) -> Answer:
        quantiles = self._gather("tail_quantile", k, index)  # (..., tail_probability)
        R = self._at("replicates", None, index)
        low_hits, high_hits = exceedance_bounds(quantiles, self._tail_probabilities, R, score,
                                                tolerance=SNAP_TOLERANCE)
        ci_low_tail, ci_high_tail = clopper_pearson(low_hits, high_hits, R)
        ci_low, ci_high = p_value_from_tail(ci_low_tail, C_), p_value_from_tail(ci_high_tail, C_)
        unresolved_low = high_hits >= R  # no stored quantile below the score: only a lower bound
        certain = unresolved_low & (ci_low >= 1.0)  # p >= 1 - (1 - 0.1)**C rounds to 1: p = 1 to double precision
        return self._answer(value=np.where(unresolved_low, ci_low, ci_high), ci_low=ci_low, ci_high=ci_high,
                            method=np.full(ci_low.shape, "table"), replicates=R,
                            bound=np.where(certain, "", np.where(unresolved_low, ">", "<")))

    @score_by_keyword
    def significance_test(self, metric: str, P: ArrayLike, N: ArrayLike, C: ArrayLike, alpha: ArrayLike = 0.01, *,
                          score: ArrayLike) -> SignificanceResult:
        """Is a winner's score significant against the best of C random classifiers? From the table.

        The verdict is score > critical value (:meth:`critical_value`); the p-value is
        :meth:`p_value`.  ``settled`` is False where a Monte Carlo critical value's interval holds
        the score.  The arguments come in :meth:`critical_value`'s order (metric, P, N, C, alpha), ``score`` by
        keyword, as in :func:`tablegen.significance_test`; the old order ``significance_test(metric, score, P, N, C,
        alpha)`` still works, with a DeprecationWarning.

        Examples
        --------
        >>> result = open_table().significance_test("average_precision", 1000, 1000, C=1000, score=0.70)
        >>> bool(result.significant), str(result.method)
        (True, 'table')
        """
        try:
            shape = np.broadcast_shapes(*(np.shape(v) for v in (score, P, N, C, alpha)))
        except ValueError:
            raise TablegenInputError("P, N, C, alpha and score must broadcast to one shape") from None
        if shape:  # every answer takes the full shape, even where it does not depend on the score
            score, P, N, C, alpha = (np.broadcast_to(v, shape) for v in (score, P, N, C, alpha))
        cv = self.critical_value(metric, P, N, C, alpha)
        pv = self.p_value(metric, P, N, C, score=score)
        return verdict(metric, score, P, N, C, alpha, cv, pv)

    def answer_checked(self, metric: str, P: int, N: int, C: int, *, alpha: float | None = None,
                       score: float | None = None, required: bool = False) -> Answer | None:
        """One scalar question whose arguments are already checked (:class:`~tablegen.lookup._iv.LookupArgs`):
        the critical value if ``alpha`` is given, else the p-value of ``score``.

        Nothing is checked again.  Where the table does not hold the metric, cell (or C and alpha):
        None, or with ``required`` the error naming what is missing.  :func:`tablegen.critical_value`
        and friends read tables through this.

        Examples
        --------
        >>> table = open_table()
        >>> float(table.answer_checked("best_accuracy", 20, 20, 10, alpha=0.01))
        0.775
        >>> table.answer_checked("best_accuracy", 21, 20, 10, alpha=0.01) is None
        True
        """
        what = "critical value" if alpha is not None else "p-value"
        if metric not in self._metrics:
            return self._metric_index(metric) if required else None  # raises: not in this table
        k = self._metrics.index(metric)
        try:
            k, index, _ = self._locate(k, P, N, C if alpha is not None else None, alpha,
                                       lambda: self._instead(metric, what, P, N))
        except StoreIntegrityError:
            raise  # damage where the question falls is never "not in this table" (the caller decides)
        except TablegenInputError:
            if required:
                raise
            return None
        if alpha is not None:
            return self._critical_answer(k, index)
        return self._p_answer(k, index, np.asarray(score, dtype=float), np.asarray(C))

    def _answer(self, **fields) -> Answer:
        scalar = np.ndim(fields["value"]) == 0
        def unwrap(v):
            return np.asarray(v).item() if scalar else np.asarray(v)
        replicates = fields.pop("replicates")
        replicates = np.asarray(replicates)
        replicates = (None if int(replicates) == 0 else int(replicates)) if scalar else replicates
        return Answer(**{k: unwrap(v) for k, v in fields.items()}, replicates=replicates, source=self.source)

    def _instead(self, metric: str, what: str, P, N) -> tuple:
        """The end of a not-in-this-table message: the methods that answer off the grid (message parts)."""
        spec = get_metric(metric)
        exact = spec.has_exact and all(spec.exact_at(int(p), int(n))  # every (P, N) asked, paired or not
                                       for p in np.unique(P) for n in np.unique(N))
        options = (Argument("method", "exact"), " or ", Argument("method", "simulate")) if exact else \
            (Argument("method", "simulate"),)
        return (f"; for a {what} off this grid use ", *options)


#: Tables opened by :func:`open_table`, most recent last: (URL, storage options) -> (fingerprint, Table).
_OPENED: OrderedDict = OrderedDict()
#: How many finished stores :func:`open_table` keeps open.
OPEN_TABLES = 8


def open_table(path: str | os.PathLike[str] | None = None, storage_options: dict | None = None,
               allow_incomplete: bool = False, reuse: bool = True, allow_unverified: bool = False) -> Table:
    """Open a tablegen store for lookups; ``None`` opens the table bundled with the package.

    The store is read with zarr alone (no xarray, dask or pandas; :attr:`Table.ds` opens a Dataset on
    demand), and everything a lookup reads is checked against the store's manifest first: the root
    attributes and the manifest's own digest when the table opens, each array's metadata, the coordinates
    and each chunk when first read.  A finished store is opened once and kept (up to
    :data:`OPEN_TABLES` of them, keyed by URL and storage options): repeated lookups in the same store,
    such as ``tablegen.critical_value(..., table="x.zarr")`` in a loop, reuse it with what it has
    checked.  Each call still reads the store's root metadata and manifest header (two small files) and
    opens the store afresh if either changed: whatever tablegen writes into a store (written again,
    resumed, repaired) changes them, so a kept table never answers from replaced data.  A chunk damaged
    behind tablegen's back after a kept table has read it is not seen by that table (it answers with the
    values it checked); reports on the store itself (``tablegen verify``, ``info``, ``export``, ``plot``)
    pass ``reuse=False``.

    Parameters
    ----------
    path : str or os.PathLike, optional
        Store path or fsspec URL; default the bundled table (appendix grid 19 × 19, every metric,
        C = 10/100/1000, alpha = 0.01/0.05, R = 10⁷, exact values where they exist).
    storage_options : dict, optional
        fsspec options for a remote store.
    allow_incomplete : bool
        Open a store whose job has not finished (lookups in unfinished cells still fail).
    reuse : bool
        Return the table kept open for this store if it is unchanged (default); False opens the store
        afresh (and keeps that one).
    allow_unverified : bool
        Read a store of schema version 1, which has no checksums or manifest (nothing can be checked), with
        a warning; migrate it instead with :func:`tablegen.store.migrate_store` (values unchanged).

    Returns
    -------
    Table
        Or, for the store of a ``kind: multiclass`` job, a :class:`~tablegen.lookup.multiclass_table.MulticlassTable`.

    Raises
    ------
    StoreError
        Missing store, another schema, an unfinished store without ``allow_incomplete``, or a schema-1
        store without ``allow_unverified``.
    StoreIntegrityError
        The store's root disagrees with its manifest (later lookups name damaged chunks the same way).

    Examples
    --------
    >>> table = open_table()
    >>> table.attrs["replicates"], table.attrs["command"]
    (10000000, 'tablegen run configs/paper.yaml')
    >>> open_table() is table  # kept open
    True
    """
    source = "bundled table" if path is None else str(path)
    url = bundled_table_path() if path is None else str(path)
    from tablegen.store.multiclass_store import is_multiclass_store

    if path is not None and is_multiclass_store(url, storage_options):  # a kind: multiclass job's table
        from tablegen.lookup.multiclass_table import open_multiclass_table

        return open_multiclass_table(url, storage_options)
    key = (url, json.dumps(storage_options or {}, sort_keys=True, default=repr))
    fingerprint = store_fingerprint(url, storage_options)
    kept = _OPENED.get(key)
    if reuse and kept is not None and fingerprint is not None and kept[0] == fingerprint \
            and kept[1].source == source:
        _OPENED.move_to_end(key)
        return kept[1]
    try:
        reader = StoreReader(url, storage_options, source, allow_unverified=allow_unverified)
    except StoreIntegrityError:
        from tablegen.store.rebuild import refuse_lost_record

        refuse_lost_record(url, storage_options, source)  # a lost manifest record: name the command that rebuilds it
        raise
    complete = reader.attrs.get("complete") is True
    if not complete and not allow_incomplete:
        done = reader.variable("done")
        raise StoreError(f"{source} is incomplete ({int(done.sum()):,} of {done.size:,} cells done); resume it with "
                         "`tablegen run CONFIG`, or pass allow_incomplete=True to look up the finished cells")
    table = Table(reader)
    _OPENED.pop(key, None)
    if complete and fingerprint is not None:  # an unfinished store changes as it runs: not kept
        _OPENED[key] = (fingerprint, table)
        while len(_OPENED) > OPEN_TABLES:
            _OPENED.popitem(last=False)
    return table
