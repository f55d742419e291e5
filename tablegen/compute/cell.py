"""The cell engine: one (P, N) cell's numbers as numpy — Monte Carlo critical values with their
intervals, tail quantiles and exact values — and the one simulation pass a lookup needs.

No xarray here: the store writes these arrays as they are, and
:func:`tablegen.simulate_cell` (:mod:`tablegen.lookup.simulate`) labels them as a Dataset.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tablegen._version import __version__
from tablegen.compute.accumulator import Tail, critical_order_statistics, tail_upper_order
from tablegen.compute.kernels.cuda.device import resolve_device
from tablegen.compute.metric_nulls import exact_critical_value
from tablegen.compute.metrics import Metric
from tablegen.compute.stats import CI_LEVEL, tail_rank, upper_ranks
from tablegen.compute.validation import SimulateCellArgs

logger = logging.getLogger(__name__)

#: Root seed of a simulation when none is given: a lookup's simulated answer, ``tablegen simulate``
#: (the bundled table's seed; each cell's stream is keyed on it, so a question repeats its answer).
DEFAULT_SEED = 2005
#: How :attr:`CellValues.tail_quantile` is defined (recorded with every result).
TAIL_QUANTILE_DEFINITION = "the (floor(R t) + 1)-th largest of R samples; NaN where R t < 1"


@dataclass(frozen=True)
class CellValues:
    """One cell's numbers, shaped as the store holds them (numpy arrays, no labels).

    ``critical_value``, ``ci_low``, ``ci_high`` and ``exact_critical_value`` are over (metric,
    alpha, C) in the order of ``args``; ``tail_quantile`` over (metric, tail_probability).
    """

    args: SimulateCellArgs
    critical_value: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    exact_critical_value: np.ndarray
    tail_quantile: np.ndarray
    device: str

    @property
    def replicates(self) -> int:
        """R, the rankings sampled."""
        return self.args.R

    def arrays(self) -> dict[str, np.ndarray]:
        """The store's data variables of this cell (``replicates`` as a 0-d int64 array)."""
        return {"critical_value": self.critical_value, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "exact_critical_value": self.exact_critical_value, "tail_quantile": self.tail_quantile,
                "replicates": np.asarray(self.args.R, dtype=np.int64)}

    def provenance(self, rng: str) -> dict:
        """What produced these numbers: seed, random stream, version, device, interval level."""
        return {"ci_level": CI_LEVEL, "tail_quantile_definition": TAIL_QUANTILE_DEFINITION,
                "root_seed": self.args.seed, "rng": rng, "tablegen_version": __version__, "device": self.device}


def simulate_cell_values(args: SimulateCellArgs, *, exact: bool = True,
                         progress: Callable[[int, int], None] | None = None, device: str = "cpu") -> CellValues:
    """Simulate one cell: R rankings through the kernels, every metric in one pass (numpy out).

    ``args`` is taken as checked (:func:`~tablegen.compute.validation.validate_simulate_cell_args`
    or a loaded job config).  ``exact`` also fills the exact critical values where a metric has an
    exact routine (NaN elsewhere, and everywhere when False).

    Examples
    --------
    >>> from tablegen.compute.validation import validate_simulate_cell_args
    >>> args = validate_simulate_cell_args(20, 20, 20_000, 1, ["best_accuracy"], [10], [0.01], [0.01], 4096)
    >>> float(simulate_cell_values(args).exact_critical_value[0, 0, 0])
    0.775
    """
    from tablegen.compute.mc import simulate_tails, tail_capacity

    device = resolve_device(device)
    capacity = tail_capacity(args.R, args.Cs, args.alphas, args.tail_probabilities)
    tails = simulate_tails(args.P, args.N, args.R, args.seed, args.entries, capacity, args.block_size, progress,
                           device)
    estimate, low, high = critical_values_from_tails(args, tails)
    exact_values = (exact_critical_values(args.P, args.N, args.entries, args.Cs, args.alphas) if exact
                    else _nan((len(args.metrics), len(args.alphas), len(args.Cs))))
    return CellValues(args, estimate, low, high, exact_values, _tail_quantiles(args, tails), device)


def _nan(shape):
    return np.full(shape, np.nan)


def critical_values_from_tails(args: SimulateCellArgs, tails: dict[str, Tail]):
    """(estimate, low, high) over (metric, alpha, C) from a cell's retained tails: the ceil(qR)-th
    smallest sample and its distribution-free 95% order-statistic interval, q = (1 - alpha)**(1/C)."""
    shape = (len(args.metrics), len(args.alphas), len(args.Cs))
    estimate, low, high = _nan(shape), _nan(shape), _nan(shape)
    ranks = {(alpha, C): upper_ranks(args.R, C, alpha) for alpha in args.alphas for C in args.Cs}  # scipy: once each
    for (i, spec), (j, alpha), (k, C) in itertools.product(
        enumerate(args.entries), enumerate(args.alphas), enumerate(args.Cs)
    ):
        estimate[i, j, k], low[i, j, k], high[i, j, k] = critical_order_statistics(
            tails[spec.name], ranks[alpha, C], spec.range(args.P, args.N)[1])
    return estimate, low, high


def _tail_quantiles(args: SimulateCellArgs, tails: dict[str, Tail]) -> np.ndarray:
    quantiles = _nan((len(args.metrics), len(args.tail_probabilities)))
    for i, metric in enumerate(args.metrics):
        for j, t in enumerate(args.tail_probabilities):
            rank = tail_rank(args.R, t)
            if rank:
                quantiles[i, j] = tail_upper_order(tails[metric], rank)
    return quantiles


@dataclass(frozen=True)
class SimulatedAnswer:
    """What one simulation pass says about one question: the critical value's order statistics
    (``estimate``, ``low``, ``high``; NaN if not asked) and how many rankings reached the score
    (``hits``; None if not asked)."""

    estimate: float
    low: float
    high: float
    hits: int | None


def simulate_answer(metric: Metric, P: int, N: int, R: int, seed: int, *, C: int, alpha: float | None,
                    threshold: float | None, progress: Callable[[int, int], None] | None = None,
                    device: str = "cpu") -> SimulatedAnswer:
    """One pass of R rankings for one metric (its registry entry): the critical value at (C, alpha) if
    ``alpha`` is given, and the count of rankings scoring at least ``threshold`` if that is given.  ``device``: where
    the rankings are scored (:func:`tablegen.compute.mc.simulate_tails_and_counts`; the same answer bit for bit).

    Examples
    --------
    >>> from tablegen.compute.metrics import get_metric
    >>> answer = simulate_answer(get_metric("best_accuracy"), 20, 20, 20_000, 1, C=10, alpha=0.01, threshold=0.8)
    >>> answer.low <= answer.estimate <= answer.high, answer.hits > 0
    (True, True)
    """
    from tablegen.compute.mc import simulate_tails_and_counts, tail_capacity

    capacity = tail_capacity(R, (C,), (alpha,), ()) if alpha is not None else 1
    thresholds = {metric.name: threshold} if threshold is not None else {}
    tails, counts = simulate_tails_and_counts(P, N, R, seed, [metric], capacity, thresholds, progress=progress,
                                              device=device)
    estimate = low = high = float("nan")
    if alpha is not None:
        estimate, low, high = critical_order_statistics(tails[metric.name], upper_ranks(R, C, alpha),
                                                        metric.range(P, N)[1])
    return SimulatedAnswer(estimate, low, high, counts[metric.name] if threshold is not None else None)


def exact_critical_values(P, N, metrics: Sequence[Metric], Cs, alphas) -> np.ndarray:
    """Exact critical values over (metric, alpha, C) for the registry entries ``metrics``; NaN where there is
    none (or AUC over budget)."""
    return exact_critical_values_for_cells([(P, N)], metrics, Cs, alphas)[(P, N)]


def exact_critical_values_for_cells(cells, metrics: Sequence[Metric], Cs, alphas,
                                    progress: Callable[[float, float], None] | None = None
                                    ) -> dict[tuple[int, int], np.ndarray]:
    """Exact critical values over (metric, alpha, C) for several cells (registry entries ``metrics``); NaN
    where a metric has none.

    Each metric's nulls come from its registry entry (:meth:`~tablegen.compute.metrics.Metric.exact_nulls`):
    cell by cell, or from one whole-grid pass where the metric has one (AUC: one recursion sweep for
    the cells within :data:`~tablegen.compute.exact.auc.EXACT_AUC_BUDGET` multiply-adds, the tilted
    inversion for the others).  ``progress(done, total)``, if given, hears of a whole-grid pass as it goes
    (:meth:`~tablegen.compute.metrics.Metric.exact_nulls`; a progress line's hook, no number changes).
    """
    cells = [(int(P), int(N)) for P, N in cells]
    values = {cell: _nan((len(metrics), len(alphas), len(Cs))) for cell in cells}
    for i, spec in enumerate(metrics):
        for (P, N), null in spec.exact_nulls(cells, progress):
            for j, alpha in enumerate(alphas):
                for k, C in enumerate(Cs):
                    values[P, N][i, j, k] = exact_critical_value(spec.name, P, N, C, alpha, null=null)
    return values
