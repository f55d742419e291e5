"""A table's critical values in the paper's appendix layout (rows: positives, columns: negatives).

``appendix_grid`` picks the values; ``format_appendix`` writes them as Markdown, CSV or LaTeX with
the paper's corner label ``Pos \\ Neg``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the table machinery (xarray, zarr) loads when a table is exported, not on import
    import xarray as xr

    from tablegen.lookup.table import Table
from tablegen.compute.validation import check_alpha, check_competitors, check_metric
from tablegen.errors import TablegenInputError

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
        and ``exact`` (P, N), True where ``value`` is exact.
    """
    if values not in VALUE_CHOICES:
        raise TablegenInputError(f"values must be one of {', '.join(VALUE_CHOICES)}, got {values!r}")
    C = check_competitors(C)
    alpha = table_alpha(table) if alpha is None else check_alpha("alpha", alpha)
    metrics = [str(m) for m in table.coordinate("metric")]
    metric = check_metric("metric", metric)
    if metric not in metrics:
        raise TablegenInputError(f"metric {metric!r} is not in {table.source} (it holds: {', '.join(metrics)})")
    Cs, alphas = table.coordinate("C"), table.coordinate("alpha")
    if C not in Cs:
        raise TablegenInputError(f"C = {C} is not in {table.source} (C: {', '.join(map(str, Cs))})")
    if not np.isclose(alpha, alphas, rtol=1e-6, atol=0).any():
        listed = ", ".join(f"{a:g}" for a in alphas)
        raise TablegenInputError(f"alpha = {alpha:g} is not in {table.source} (alpha: {listed})")
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


def grid_to_dict(grid: xr.Dataset) -> dict:
    """An :func:`appendix_grid` as JSON-ready values (``tablegen export --json`` prints it).

    ``value[i][j]`` is the critical value at ``P[i]``, ``N[j]`` (``None`` where the grid is empty) and
    ``exact[i][j]`` whether it is an exact value; the grid's attributes (metric, C, alpha, values,
    source, replicates) come first.

    Examples
    --------
    >>> from tablegen.lookup.table import open_table
    >>> record = grid_to_dict(appendix_grid(open_table(), "best_accuracy", C=10))
    >>> record["P"][0], record["N"][0], record["value"][0][0], record["exact"][0][0]
    (20, 20, 0.775, True)
    """
    value = np.asarray(grid.value.values, dtype=float)
    return {**{k: (v.item() if isinstance(v, np.generic) else v) for k, v in grid.attrs.items()},
            "P": [int(p) for p in grid.P.values], "N": [int(n) for n in grid.N.values],
            "value": [[float(v) if np.isfinite(v) else None for v in row] for row in value],
            "exact": np.asarray(grid.exact.values, dtype=bool).tolist()}


def _cell_text(value: float, exact: bool, digits: int, mark_estimates: bool) -> str:
    if not np.isfinite(value):
        return "–"
    text = f"{value:.{digits}f}"
    return text + ("*" if mark_estimates and not exact else "")


def _caption(grid: xr.Dataset) -> str:
    a = grid.attrs
    kind = {"best": "exact where known, else Monte Carlo", "monte-carlo": "Monte Carlo",
            "exact": "exact"}[a["values"]]
    return (f"Critical values of {a['metric']} for the best of C = {a['C']} random classifiers, "
            f"alpha = {a['alpha']:g} ({kind}; {a['source']}, R = {a['replicates']:,} per cell)")


def format_appendix(grid: xr.Dataset, fmt: str = "markdown", digits: int | None = None) -> str:
    """Write an :func:`appendix_grid` as Markdown, CSV or LaTeX (rows P, columns N, corner ``Pos \\ Neg``).

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
    P, N = [int(p) for p in grid.P.values], [int(n) for n in grid.N.values]
    mixed = grid.attrs["values"] == "best" and bool(exact.any()) and bool((~exact & np.isfinite(value)).any())
    cells = [[_cell_text(value[i, j], exact[i, j], digits, mixed and fmt != "csv") for j in range(len(N))]
             for i in range(len(P))]
    note = "* Monte Carlo estimate (no exact value stored)" if mixed else ""
    if fmt == "csv":
        rows = ["Pos\\Neg," + ",".join(map(str, N))]
        rows += [f"{p}," + ",".join("" if c == "–" else c for c in row) for p, row in zip(P, cells)]
        return "\n".join(rows) + "\n"
    if fmt == "markdown":
        rows = [_caption(grid), "", "| Pos \\ Neg | " + " | ".join(map(str, N)) + " |",
                "|---:|" + "---:|" * len(N)]
        rows += [f"| **{p}** | " + " | ".join(row) + " |" for p, row in zip(P, cells)]
        return "\n".join(rows + ([" ", note] if note else [])) + "\n"
    rows = [f"% {_caption(grid)}", "\\begin{tabular}{r|" + "r" * len(N) + "}",
            "Pos $\\backslash$ Neg & " + " & ".join(map(str, N)) + " \\\\", "\\hline"]
    rows += [f"{p} & " + " & ".join(c.replace("–", "--").replace("*", "$^*$") for c in row) + " \\\\"
             for p, row in zip(P, cells)]
    rows.append("\\end{tabular}")
    if note:
        rows.append("% $^*$ Monte Carlo estimate (no exact value stored)")
    return "\n".join(rows) + "\n"
