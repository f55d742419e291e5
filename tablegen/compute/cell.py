"""One (P, N) cell as an xarray Dataset: Monte Carlo critical values with CIs, tail quantiles, exact values."""

from __future__ import annotations

import itertools
import logging
from typing import Callable, Sequence

import numpy as np
import xarray as xr

from tablegen._version import __version__
from tablegen.compute.accumulator import Tail, critical_order_statistics, tail_upper_order
from tablegen.compute.exact import exact_critical_value, null_distribution
from tablegen.compute.exact.auc import EXACT_AUC_BUDGET, auc_cost, auc_null_from_pmf, auc_pmf_sweep
from tablegen.compute.exact.auc_fft import TiltedAucNull
from tablegen.compute.kernels.cuda.device import resolve_device
from tablegen.compute.mc import DEFAULT_BLOCK_SIZE, RNG_NAME, simulate_tails, tail_capacity
from tablegen.compute.metrics import get_metric
from tablegen.compute.stats import CI_LEVEL, DEFAULT_TAIL_PROBABILITIES, tail_rank, upper_ranks
from tablegen.compute.validation import validate_simulate_cell_args

logger = logging.getLogger(__name__)



def simulate_cell(P, N, R, seed, metrics=None, Cs=(10, 100, 1000), alphas=(0.01,), *,
                  tail_probabilities: Sequence[float] = DEFAULT_TAIL_PROBABILITIES,
                  exact: bool = True, block_size: int = DEFAULT_BLOCK_SIZE,
                  progress: Callable[[int, int], None] | None = None, device: str = "cpu") -> xr.Dataset:
    """Monte Carlo critical values of every metric for one cell, in one pass per ranking.

    Parameters
    ----------
    P, N : int
        Positives and negatives in the test set (>= 1).
    R : int
        Random rankings to sample; at least :func:`tablegen.compute.stats.minimum_replicates` for every
        requested (C, alpha).
    seed : int
        Root seed; the cell's stream is keyed on (seed, P, N), replicate by replicate.
    metrics : sequence of str, optional
        Metric names (default: all base metrics and ``tp_at_10``).
    Cs, alphas : sequences
        Numbers of competitors and significance levels.
    tail_probabilities : sequence of float
        Where to keep the upper-tail quantile function (NaN where R t < 1).
    exact : bool
        Also compute the exact critical value where an exact routine exists (AUC by the recursion up
        to :data:`~tablegen.compute.exact.auc.EXACT_AUC_BUDGET` multiply-adds, by the tilted inversion above).
    block_size : int
        Replicates per kernel call; bounds memory, does not change the result.
    progress : callable, optional
        Called as ``progress(done, R)`` after each block.
    device : {"cpu", "cuda", "auto"}
        Where the rankings are scored: the CPU kernels, their numba-cuda twins on a GPU (same
        streams, same result bit for bit), or the GPU when one is available.  ``"cuda"`` without
        numba-cuda or without a GPU is an input error.

    Returns
    -------
    xarray.Dataset
        Variables ``critical_value``, ``ci_low``, ``ci_high`` and ``exact_critical_value`` over
        (metric, alpha, C); ``tail_quantile`` over (metric, tail_probability); ``replicates``.
        The estimate is the ceil(qR)-th smallest sample, q = (1 - alpha)**(1/C); the interval is the
        distribution-free 95% order-statistic interval (its upper end is the metric's maximum when R
        is too small for that order statistic to exist, e.g. R < 367,041 at C = 1000, alpha = 0.01).

    Examples
    --------
    >>> ds = simulate_cell(20, 20, R=20_000, seed=1, metrics=["best_accuracy"], Cs=[10])
    >>> float(ds.exact_critical_value.sel(metric="best_accuracy", C=10, alpha=0.01))
    0.775
    """
    args = validate_simulate_cell_args(P, N, R, seed, metrics, Cs, alphas, block_size)
    P, N, R, metrics = args["P"], args["N"], args["R"], args["metrics"]
    Cs, alphas, tail_probabilities = args["Cs"], args["alphas"], tuple(map(float, tail_probabilities))
    device = resolve_device(device)
    capacity = tail_capacity(R, Cs, alphas, tail_probabilities)
    tails = simulate_tails(P, N, R, args["seed"], metrics, capacity, args["block_size"], progress, device)
    ds = cell_dataset(P, N, tails, metrics, Cs, alphas, tail_probabilities)
    ds["exact_critical_value"] = (
        ("metric", "alpha", "C"),
        exact_critical_values(P, N, metrics, Cs, alphas) if exact else _nan((len(metrics), len(alphas), len(Cs))),
    )
    ds.attrs.update(root_seed=args["seed"], rng=RNG_NAME, tablegen_version=__version__, device=device)
    return ds


def _nan(shape):
    return np.full(shape, np.nan)


def cell_dataset(P, N, tails: dict[str, Tail], metrics, Cs, alphas, tail_probabilities) -> xr.Dataset:
    """Finalize the tails of one cell into its Dataset (estimates, CIs, tail quantile function)."""
    R = next(iter(tails.values())).seen
    shape = (len(metrics), len(alphas), len(Cs))
    estimate, low, high = _nan(shape), _nan(shape), _nan(shape)
    for (i, metric), (j, alpha), (k, C) in itertools.product(
        enumerate(metrics), enumerate(alphas), enumerate(Cs)
    ):
        estimate[i, j, k], low[i, j, k], high[i, j, k] = critical_order_statistics(
            tails[metric], upper_ranks(R, C, alpha), get_metric(metric).range(P, N)[1])
    quantiles = _nan((len(metrics), len(tail_probabilities)))
    for i, metric in enumerate(metrics):
        for j, t in enumerate(tail_probabilities):
            rank = tail_rank(R, t)
            if rank:
                quantiles[i, j] = tail_upper_order(tails[metric], rank)
    return xr.Dataset(
        {
            "critical_value": (("metric", "alpha", "C"), estimate),
            "ci_low": (("metric", "alpha", "C"), low),
            "ci_high": (("metric", "alpha", "C"), high),
            "tail_quantile": (("metric", "tail_probability"), quantiles),
            "replicates": ((), R),
        },
        coords={"metric": list(metrics), "alpha": list(alphas), "C": list(Cs),
                "tail_probability": list(tail_probabilities), "P": P, "N": N},
        attrs={"ci_level": CI_LEVEL,
               "tail_quantile_definition": "the (floor(R t) + 1)-th largest of R samples; NaN where R t < 1"},
    )


def exact_critical_values(P, N, metrics, Cs, alphas) -> np.ndarray:
    """Exact critical values over (metric, alpha, C); NaN where there is none (or AUC over budget)."""
    return exact_critical_values_for_cells([(P, N)], metrics, Cs, alphas)[(P, N)]


def exact_critical_values_for_cells(cells, metrics, Cs, alphas) -> dict[tuple[int, int], np.ndarray]:
    """Exact critical values over (metric, alpha, C) for several cells, AUC from one shared sweep.

    AUC comes from one recursion sweep for the cells within :data:`EXACT_AUC_BUDGET` multiply-adds
    and from the tilted inversion for the others; every metric with an exact routine is computed.
    """
    cells = [(int(P), int(N)) for P, N in cells]
    values = {cell: _nan((len(metrics), len(alphas), len(Cs))) for cell in cells}
    auc_nulls = _auc_nulls(cells) if "auc" in metrics else {}
    for i, metric in enumerate(metrics):
        if not get_metric(metric).has_exact:
            continue
        for P, N in cells:
            null = auc_nulls.get((P, N)) if metric == "auc" else null_distribution(metric, P, N)
            if null is None:
                continue
            for j, alpha in enumerate(alphas):
                for k, C in enumerate(Cs):
                    values[P, N][i, j, k] = exact_critical_value(metric, P, N, C, alpha, null=null)
    return values


def _auc_nulls(cells) -> dict:
    """Exact AUC nulls: one recursion sweep for the cells within :data:`EXACT_AUC_BUDGET`, the
    tilted inversion (:class:`~tablegen.compute.exact.auc_fft.TiltedAucNull`) for the rest."""
    affordable = [(P, N) for P, N in cells if auc_cost(P, N)[0] <= EXACT_AUC_BUDGET]
    nulls = {cell: TiltedAucNull(*cell) for cell in cells if cell not in affordable}
    nulls.update({cell: auc_null_from_pmf(*cell, pmf) for cell, pmf in auc_pmf_sweep(affordable)})
    return nulls
