"""What ``tablegen info`` and ``tablegen verify`` print about a store: provenance, completeness, CI coverage."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import xarray as xr


def _read(ds: xr.Dataset, names: list[str]) -> xr.Dataset:
    """``names`` of ``ds`` read into memory in this thread (dask's synchronous scheduler when the Dataset is
    dask-backed): a report never waits on whatever scheduler a process left as dask's default (a closed
    ``distributed`` client waits for ever)."""
    import dask

    with dask.config.set(scheduler="synchronous"):
        return ds[names].compute()


def store_report(ds: xr.Dataset) -> dict:
    """Provenance and completeness of a store (what ``tablegen info`` prints).

    Returns
    -------
    dict
        ``provenance`` (the store's attributes but the full config), ``cells``, ``cells_done``,
        ``missing`` (the (P, N) of every cell not done, P-major), ``exact_available`` (per metric,
        the share of done cells with an exact value at every (C, alpha)) and ``grid`` (axes).
    """
    ds = _read(ds, ["done", "exact_critical_value"])
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
    full, ds = ds, _read(ds, ["done", "exact_critical_value", "critical_value", "ci_low", "ci_high"])
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
    report = {"checked": total, "inside": hits, "coverage": hits / total if total else float("nan"),
              "by_metric": by_metric, "worst": worst_entries}
    if "minimum_detectable_auc" in full.data_vars:
        report["minimum_detectable"] = detectable_report(full)
    return report


#: Cells at which ``tablegen verify`` recomputes the stored minimum detectable AUC (spread evenly over the done cells).
DETECTABLE_SAMPLES = 3


def sample_cells(done: np.ndarray, samples: int) -> list[tuple[int, int]]:
    """Up to ``samples`` done cells (i, j), evenly spread over the done cells in P-major order, first and last
    included.

    Examples
    --------
    >>> sample_cells(np.ones((3, 3), bool), 3)
    [(0, 0), (1, 1), (2, 2)]
    """
    cells = list(zip(*(axis.tolist() for axis in np.nonzero(done))))
    if len(cells) <= samples:
        return cells
    return [cells[round(k * (len(cells) - 1) / (samples - 1))] for k in range(samples)] if samples > 1 else cells[:1]


def detectable_report(ds: xr.Dataset, samples: int = DETECTABLE_SAMPLES) -> dict:
    """The stored minimum detectable AUC against its exact search recomputed at ``samples`` done cells (every
    metric, power level, alpha and C there): ``checked`` values, ``agree`` (within the array's ``tolerance``, NaN
    where the recomputation is NaN too), ``cells`` (the (P, N) recomputed) and ``largest_difference``.

    Examples
    --------
    >>> from tablegen.store.zarr_store import open_store
    >>> from tablegen.store.schema import bundled_table_path
    >>> report = detectable_report(open_store(bundled_table_path()), samples=1)
    >>> report["checked"] == report["agree"], report["cells"]
    (True, [[20, 20]])
    """
    from tablegen.store.migrate import detectable_array

    stored_ds = _read(ds, ["done", "minimum_detectable_auc"])
    done = np.asarray(stored_ds.done.values, dtype=bool)
    cells = sample_cells(done, samples)
    variable = stored_ds.minimum_detectable_auc
    tolerance = float(variable.attrs.get("tolerance", 0.0))
    recomputed = detectable_array(_CoordinateView(ds), ds.power.values.tolist(), variable.attrs.get("max_seconds"),
                                  cells)
    stored = variable.values
    checked = agree = 0
    largest = 0.0
    for i, j in cells:
        a, b = stored[..., i, j], recomputed[..., i, j]
        both_nan = np.isnan(a) & np.isnan(b)
        with np.errstate(invalid="ignore"):
            close = np.abs(a - b) <= tolerance
        checked += a.size
        agree += int((both_nan | close).sum())
        finite = np.isfinite(a) & np.isfinite(b)
        largest = max(largest, float(np.abs(a - b)[finite].max()) if finite.any() else 0.0)
    return {"checked": checked, "agree": agree, "cells": [[int(ds.P.values[i]), int(ds.N.values[j])] for i, j in cells],
            "largest_difference": largest, "tolerance": tolerance}


class _CoordinateView:
    """A Dataset's coordinates as :func:`~tablegen.store.migrate.detectable_array` reads a Zarr group's."""

    def __init__(self, ds: xr.Dataset):
        self._ds = ds

    def __getitem__(self, name: str) -> np.ndarray:
        return np.asarray(self._ds[name].values)
