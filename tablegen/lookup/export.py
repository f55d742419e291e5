"""A table's critical values in the paper's appendix layout (rows: positives, columns: negatives).

``appendix_grid`` picks the values; ``format_appendix`` writes them as Markdown, CSV or LaTeX with
the paper's corner label ``Pos \\ Neg``.  A multi-class table
(:class:`~tablegen.lookup.multiclass_table.MulticlassTable`) is exported the same way with rows K (classes) and
columns n_per_class (items of each class), its values all exact (:func:`multiclass_grid`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the table machinery (xarray, zarr) loads when a table is exported, not on import
    import xarray as xr

    from tablegen.lookup.multiclass_table import MulticlassTable
    from tablegen.lookup.table import Table
from tablegen.compute.validation import check_alpha, check_competitors, check_metric
from tablegen.errors import Argument, TablegenInputError

#: Which stored values to export: exact where stored else Monte Carlo, only Monte Carlo, only exact.
VALUE_CHOICES = ("best", "monte-carlo", "exact")
FORMATS = ("markdown", "csv", "latex")


#: The significance level a table's export or plot shows when none is given, if the table holds it.
DEFAULT_ALPHA = 0.01


def table_alpha(table: Table) -> float:
    """The significance level shown when none is given: :data:`DEFAULT_ALPHA` if ``table`` holds it, else the
    smallest it holds.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> table_alpha(SimpleNamespace(coordinate=lambda name: np.array([0.1, 0.05])))
    0.05
    """
    alphas = np.asarray(table.coordinate("alpha"), dtype=float)
    return DEFAULT_ALPHA if np.isclose(DEFAULT_ALPHA, alphas, rtol=1e-6, atol=0).any() else float(alphas.min())


def appendix_grid(table: Table, metric: str, C: int, alpha: float | None = None, values: str = "best"
                  ) -> xr.Dataset:
    """The (P, N) grid of critical values of one metric, C and alpha, as in the paper's appendix.

    Parameters
    ----------
    table : Table
    metric : str
    C : int
        Must be one of the table's C.
    alpha : float, optional
        Must be one of the table's alpha (default :func:`table_alpha`: 0.01 if the table holds it, else its
        smallest; the grid's ``alpha`` attribute says which).
    values : {"best", "monte-carlo", "exact"}
        ``"best"``: the exact value where the store has one, else the Monte Carlo estimate.

    Returns
    -------
    xarray.Dataset
        ``value`` (P, N), NaN where the cell is unfinished or (for ``"exact"``) has no exact value,
        and ``exact`` (P, N), True where ``value`` is exact.  For a multi-class table, :func:`multiclass_grid`'s
        (K, n_per_class) grid.
    """
    from tablegen.lookup.multiclass_table import MulticlassTable

    if isinstance(table, MulticlassTable):
        return multiclass_grid(table, metric, C, alpha, values)
    metric, C, alpha = _check_selection(table, metric, C, alpha, values, lambda m: check_metric("metric", m))
    metrics, Cs, alphas = [str(m) for m in table.coordinate("metric")], table.coordinate("C"), table.coordinate("alpha")
    P, N = table.coordinate("P"), table.coordinate("N")
    grid_P, grid_N = np.meshgrid(P, N, indexing="ij")
    done = np.asarray(table.read("done"), dtype=bool)
    if not done.any():
        raise TablegenInputError(f"{table.source} has no finished cell to export")
    k = metrics.index(metric)
    a = int(np.argmin(np.abs(alphas - alpha)))
    c = int(np.flatnonzero(Cs == C)[0])
    exact = np.asarray(table.read("exact_critical_value")[k, a, c], dtype=float)  # every chunk checked
    estimate = np.asarray(table.read("critical_value")[k, a, c], dtype=float)
    if values == "exact":
        if not np.isfinite(exact[done]).any():
            raise TablegenInputError(
                f"{table.source} holds no exact values of {metric}; use --values best or monte-carlo")
        value, is_exact = exact, np.isfinite(exact)
    elif values == "monte-carlo":
        value, is_exact = estimate, np.zeros_like(done)
    else:
        is_exact = np.isfinite(exact)
        value = np.where(is_exact, exact, estimate)
    value = np.where(done, value, np.nan)
    coords = {"P": grid_P[:, 0], "N": grid_N[0]}
    import xarray as xr

    return xr.Dataset({"value": (("P", "N"), value), "exact": (("P", "N"), is_exact & done)}, coords=coords,
                      attrs={"metric": metric, "C": C, "alpha": alpha, "values": values, "source": table.source,
                             "replicates": table.attrs.get("replicates")})


def _check_selection(table, metric: str, C: int, alpha: float | None, values: str, canonical
                     ) -> tuple[str, int, float]:
    """(metric, C, alpha) of an export, each checked against what ``table`` holds (errors name the argument);
    ``canonical(metric)`` is the metric's checked name."""
    if values not in VALUE_CHOICES:
        raise TablegenInputError(f"values must be one of {', '.join(VALUE_CHOICES)}, got {values!r}")
    C = check_competitors(C)
    alpha = table_alpha(table) if alpha is None else check_alpha("alpha", alpha)
    metrics = [str(m) for m in table.coordinate("metric")]
    metric = canonical(metric)
    if metric not in metrics:
        raise TablegenInputError(f"metric {metric!r} is not in {table.source} (it holds: {', '.join(metrics)})")
    Cs, alphas = np.asarray(table.coordinate("C")), np.asarray(table.coordinate("alpha"), dtype=float)
    if C not in Cs:
        raise TablegenInputError(f"C = {C} is not in {table.source} (C: {', '.join(map(str, Cs))})")
    if not np.isclose(alpha, alphas, rtol=1e-6, atol=0).any():
        listed = ", ".join(f"{a:g}" for a in alphas)
        raise TablegenInputError(f"alpha = {alpha:g} is not in {table.source} (alpha: {listed})")
    return metric, C, alpha


def multiclass_grid(table: MulticlassTable, metric: str, C: int, alpha: float | None = None, values: str = "best"
                    ) -> xr.Dataset:
    """The (K, n_per_class) grid of a multi-class table's critical values of one metric, C and alpha.

    Every region read is checked against the store's manifest first: a damaged one is refused, named
    (:class:`~tablegen.errors.StoreIntegrityError`), never exported as numbers.

    Parameters
    ----------
    table : MulticlassTable
    metric : str
        One of the table's metrics (accuracy, kappa, balanced_accuracy, macro_f1).
    C : int
        Must be one of the table's C.
    alpha : float, optional
        Must be one of the table's alpha (default :func:`table_alpha`).
    values : {"best", "exact"}
        The table's values are all exact, so both give them; ``"monte-carlo"`` is refused (it holds none).

    Returns
    -------
    xarray.Dataset
        ``value`` (K, n_per_class), the critical value to exceed, NaN where the cell is unfinished; ``exact``
        (K, n_per_class), True where ``value`` is there (every stored value is exact); ``critical_hits``
        (K, n_per_class), the hits to exceed (-1 where unfinished).  Attributes ``kind`` ("multiclass"),
        ``metric``, ``C``, ``alpha``, ``values``, ``source`` and ``method`` ("exact").

    Examples
    --------
    >>> from tablegen.batch.config import config_from_mapping
    >>> from tablegen.batch.multiclass_job import run_multiclass
    >>> from tablegen.lookup.multiclass_table import open_multiclass_table
    >>> config = config_from_mapping({"kind": "multiclass", "grid": {"K": [3, 5], "n_per_class": [5, 40]},
    ...                               "Cs": [100], "alphas": [0.05], "chunks": {"K": 1, "n_per_class": 1},
    ...                               "store": {"url": "memory://multiclass-grid-example.zarr"}})
    >>> _ = run_multiclass(config, executor="serial")
    >>> grid = multiclass_grid(open_multiclass_table(config.store_url), "accuracy", C=100)
    >>> grid.critical_hits.values.tolist()  # of n = 15, 120, 25 and 200 items
    [[11, 57], [12, 60]]
    >>> grid.value.values.round(4).tolist()  # = hits / n: critical_value(..., method="exact") gives the same
    [[0.7333, 0.475], [0.48, 0.3]]
    """
    from tablegen.compute.exact.balanced_multiclass import check_balanced_metric, value_from_hits

    if values == "monte-carlo":
        raise TablegenInputError.naming(Argument("values", "monte-carlo"), f": {table.source} is a multi-class table, "
                                        "whose values are all exact (it holds no Monte Carlo values); use ",
                                        Argument("values", "best"), " or ", Argument("values", "exact"))
    metric, C, alpha = _check_selection(table, metric, C, alpha, values, check_balanced_metric)
    if not table.done().any():
        raise TablegenInputError(f"{table.source} has no finished cell to export")
    stored = np.asarray(table.coordinate("alpha"), dtype=float)
    hits = table.hits_grid(C, float(stored[int(np.argmin(np.abs(stored - alpha)))]))  # within rtol 1e-6 of alpha
    K, n_per_class = (np.asarray(table.coordinate(name), dtype=np.int64) for name in ("K", "n_per_class"))
    value = np.array([[value_from_hits(metric, int(h), int(k), int(n)) if h >= 0 else np.nan
                       for h, n in zip(row, n_per_class)] for row, k in zip(hits, K)], dtype=float)
    import xarray as xr

    dims = ("K", "n_per_class")
    return xr.Dataset({"value": (dims, value), "exact": (dims, hits >= 0), "critical_hits": (dims, hits)},
                      coords={"K": K, "n_per_class": n_per_class},
                      attrs={"kind": "multiclass", "metric": metric, "C": C, "alpha": alpha, "values": values,
                             "source": table.source, "method": "exact"})


def grid_to_dict(grid: xr.Dataset) -> dict:
    """An :func:`appendix_grid` as JSON-ready values (``tablegen export --json`` prints it).

    ``value[i][j]`` is the critical value at ``P[i]``, ``N[j]`` (``None`` where the grid is empty) and
    ``exact[i][j]`` whether it is an exact value; the grid's attributes (metric, C, alpha, values,
    source, replicates) come first.  A multi-class grid (:func:`multiclass_grid`) has ``K`` and ``n_per_class`` in
    place of P and N, and also ``critical_hits[i][j]`` and ``method[i][j]`` (``"exact"``; ``None`` where empty).

    Examples
    --------
    >>> from tablegen.lookup.table import open_table
    >>> record = grid_to_dict(appendix_grid(open_table(), "best_accuracy", C=10))
    >>> record["P"][0], record["N"][0], record["value"][0][0], record["exact"][0][0]
    (20, 20, 0.775, True)
    """
    rows, columns = grid.value.dims
    value = np.asarray(grid.value.values, dtype=float)
    per_value = "critical_hits" in grid  # a multi-class grid: its method is given value by value, last
    record = {**{k: (v.item() if isinstance(v, np.generic) else v) for k, v in grid.attrs.items()
                 if not (per_value and k == "method")},
              rows: [int(p) for p in grid[rows].values], columns: [int(n) for n in grid[columns].values],
              "value": [[float(v) if np.isfinite(v) else None for v in row] for row in value],
              "exact": np.asarray(grid.exact.values, dtype=bool).tolist()}
    if per_value:
        hits = np.asarray(grid.critical_hits.values)
        record["critical_hits"] = [[int(h) if h >= 0 else None for h in row] for row in hits]
        record["method"] = [[grid.attrs["method"] if h >= 0 else None for h in row] for row in hits]
    return record


def _cell_text(value: float, exact: bool, digits: int, mark_estimates: bool) -> str:
    if not np.isfinite(value):
        return "–"
    text = f"{value:.{digits}f}"
    return text + ("*" if mark_estimates and not exact else "")


def _caption(grid: xr.Dataset) -> str:
    a = grid.attrs
    if a.get("kind") == "multiclass":
        return (f"Critical values of {a['metric']} for the best of C = {a['C']} random classifiers, "
                f"alpha = {a['alpha']:g}, balanced designs of K classes (rows) of n items each (columns) "
                f"(exact; {a['source']})")
    kind = {"best": "exact where known, else Monte Carlo", "monte-carlo": "Monte Carlo",
            "exact": "exact"}[a["values"]]
    return (f"Critical values of {a['metric']} for the best of C = {a['C']} random classifiers, "
            f"alpha = {a['alpha']:g} ({kind}; {a['source']}, R = {a['replicates']:,} per cell)")


#: Corner labels by format: the binary appendix's ``Pos \\ Neg`` and the multi-class grid's ``K \\ n``.
_CORNERS = {"P": {"csv": "Pos\\Neg", "markdown": "Pos \\ Neg", "latex": "Pos $\\backslash$ Neg"},
            "K": {"csv": "K\\n_per_class", "markdown": "K \\ n", "latex": "$K \\backslash n$"}}


def format_appendix(grid: xr.Dataset, fmt: str = "markdown", digits: int | None = None) -> str:
    """Write an :func:`appendix_grid` as Markdown, CSV or LaTeX (rows P, columns N, corner ``Pos \\ Neg``; a
    multi-class grid: rows K, columns n_per_class, corner ``K \\ n``).

    Parameters
    ----------
    grid : xarray.Dataset
        From :func:`appendix_grid`.
    fmt : {"markdown", "csv", "latex"}
    digits : int, optional
        Decimals; default 3 (as the paper), 0 for count metrics such as ``tp_at_10``.

    Returns
    -------
    str
        In Markdown and LaTeX a caption comes first and, where exact and Monte Carlo values are
        mixed, Monte Carlo ones carry ``*``; CSV holds the bare numbers (empty where missing).
    """
    if fmt not in FORMATS:
        raise TablegenInputError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    value, exact = grid.value.values, grid.exact.values
    finite = value[np.isfinite(value)]
    if digits is None:
        digits = 0 if finite.size and np.all(finite == np.round(finite)) else 3
    row_dim, column_dim = grid.value.dims
    corner = _CORNERS[row_dim]
    P, N = [int(p) for p in grid[row_dim].values], [int(n) for n in grid[column_dim].values]
    mixed = grid.attrs["values"] == "best" and bool(exact.any()) and bool((~exact & np.isfinite(value)).any())
    cells = [[_cell_text(value[i, j], exact[i, j], digits, mixed and fmt != "csv") for j in range(len(N))]
             for i in range(len(P))]
    note = "* Monte Carlo estimate (no exact value stored)" if mixed else ""
    if fmt == "csv":
        rows = [f"{corner['csv']}," + ",".join(map(str, N))]
        rows += [f"{p}," + ",".join("" if c == "–" else c for c in row) for p, row in zip(P, cells)]
        return "\n".join(rows) + "\n"
    if fmt == "markdown":
        rows = [_caption(grid), "", f"| {corner['markdown']} | " + " | ".join(map(str, N)) + " |",
                "|---:|" + "---:|" * len(N)]
        rows += [f"| **{p}** | " + " | ".join(row) + " |" for p, row in zip(P, cells)]
        return "\n".join(rows + ([" ", note] if note else [])) + "\n"
    rows = [f"% {_caption(grid)}", "\\begin{tabular}{r|" + "r" * len(N) + "}",
            f"{corner['latex']} & " + " & ".join(map(str, N)) + " \\\\", "\\hline"]
    rows += [f"{p} & " + " & ".join(c.replace("–", "--").replace("*", "$^*$") for c in row) + " \\\\"
             for p, row in zip(P, cells)]
    rows.append("\\end{tabular}")
    if note:
        rows.append("% $^*$ Monte Carlo estimate (no exact value stored)")
    return "\n".join(rows) + "\n"
