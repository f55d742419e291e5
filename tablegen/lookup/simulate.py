"""One cell simulated now, as a labelled xarray Dataset (:func:`simulate_cell`, public).

The numbers come from the cell engine (:func:`tablegen.compute.cell.simulate_cell_values`, numpy);
this module only checks the arguments once and puts names on the axes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import xarray as xr

from tablegen.compute.cell import CellValues, simulate_cell_values
from tablegen.compute.mc import DEFAULT_BLOCK_SIZE, RNG_NAME
from tablegen.compute.stats import DEFAULT_TAIL_PROBABILITIES
from tablegen.compute.validation import validate_simulate_cell_args


def simulate_cell(P: int, N: int, R: int, seed: int, metrics: Sequence[str] | None = None,
                  Cs: Sequence[int] = (10, 100, 1000), alphas: Sequence[float] = (0.01,), *,
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
        Root seed; the cell's stream is keyed on (seed, P, N), replicate by replicate
        (``tablegen simulate`` and simulated lookups default to
        :data:`~tablegen.compute.cell.DEFAULT_SEED`).
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
    args = validate_simulate_cell_args(P, N, R, seed, metrics, Cs, alphas, tail_probabilities, block_size)
    return cell_values_dataset(simulate_cell_values(args, exact=exact, progress=progress, device=device))


def cell_values_dataset(values: CellValues) -> xr.Dataset:
    """The engine's numbers for one cell as a Dataset with named axes and provenance attributes."""
    args, critical = values.args, ("metric", "alpha", "C")
    return xr.Dataset(
        {
            "critical_value": (critical, values.critical_value),
            "ci_low": (critical, values.ci_low),
            "ci_high": (critical, values.ci_high),
            "tail_quantile": (("metric", "tail_probability"), values.tail_quantile),
            "replicates": ((), args.R),
            "exact_critical_value": (critical, values.exact_critical_value),
        },
        coords={"metric": list(args.metrics), "alpha": list(args.alphas), "C": list(args.Cs),
                "tail_probability": list(args.tail_probabilities), "P": args.P, "N": args.N},
        attrs=values.provenance(RNG_NAME),
    )
