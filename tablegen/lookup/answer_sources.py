"""The answers of :mod:`tablegen.lookup.api` from each source that computes: exact (or its bracket), simulated in
one pass, or simulated sequentially, and the default R of a simulated answer.

Which source answers a question is the policy of :mod:`tablegen.lookup.api` (its module docstring); this module
only computes the answer once the source is chosen.  The names here are importable from :mod:`tablegen.lookup.api`
as before (``simulation_replicates``, ``lookup_null``, ``SIMULATION_SECONDS`` ...).
"""

from __future__ import annotations

import functools
import logging
import math
from typing import TYPE_CHECKING

import numpy as np

from tablegen.compute.exact import null_critical_bracket, null_tail_ge_bracket
from tablegen.compute.exact.nulls import SNAP_TOLERANCE
from tablegen.compute.limits import check_time
from tablegen.compute.metric_nulls import null_distribution
from tablegen.compute.stats import minimum_replicates, p_value_from_tail, upper_tail_probability
from tablegen.compute.validation import check_alpha, check_class_size, check_competitors
from tablegen.lookup.answers import Answer, divided_answer, simulated_p_value

if TYPE_CHECKING:
    from tablegen.lookup._iv import LookupArgs

logger = logging.getLogger(__name__)

#: A p-value bracket narrower than this relative width is reported as exact.
P_PRECISION = 1e-9
#: The default R of a simulated answer aims at this many seconds on one core (cost model) ...
SIMULATION_SECONDS = 5.0
#: ... within these bounds (the upper one is the tables' R).
MIN_SIMULATION_REPLICATES, MAX_SIMULATION_REPLICATES = 100_000, 10_000_000
#: The smallest positive double: an exact p-value that underflows is reported as "< this".
SMALLEST_P = float(np.finfo(float).tiny)


@functools.lru_cache(maxsize=16)
def cached_null(metric: str, P: int, N: int):
    """Exact null objects, cached: a critical value then a p-value at one cell build one null."""
    return null_distribution(metric, P, N)


def lookup_null(metric: str, P: int, N: int):
    """The exact null the lookups answer from at (P, N), cached (the object
    :func:`~tablegen.lookup.api.significance_test` asks): :func:`tablegen.lookup.from_scores.question_nulls` builds
    on it, so that a report's other questions share it.

    Examples
    --------
    >>> lookup_null("best_accuracy", 20, 20) is lookup_null("best_accuracy", 20, 20)
    True
    """
    return cached_null(metric, P, N)


def simulation_replicates(P: int, N: int, C: int, alpha: float | None = None) -> int:
    """Default R of a simulated answer: about :data:`SIMULATION_SECONDS` on one core, 1-2-5 rounded.

    At least 4x the R a critical value's order statistic needs (C, alpha) and 100,000; at most
    10,000,000.  It depends on (P, N, C, alpha) only, so a question repeats its answer anywhere.

    Examples
    --------
    >>> simulation_replicates(100, 300, C=10, alpha=0.01), simulation_replicates(1000, 1000, C=10)
    (10000000, 2000000)
    """
    from tablegen.compute.cost import SECONDS_PER_REPLICATE, sampling_seconds

    P, N, C = check_class_size("P", P), check_class_size("N", N), check_competitors(C)
    alpha = check_alpha("alpha", alpha) if alpha is not None else None
    budget = SIMULATION_SECONDS / (sampling_seconds(P, N) + SECONDS_PER_REPLICATE)
    floor = max(MIN_SIMULATION_REPLICATES, 4 * minimum_replicates(C, alpha) if alpha is not None else 0)
    return int(max(min(round_down_125(budget), MAX_SIMULATION_REPLICATES), floor))


def round_down_125(x: float) -> int:
    """The largest 1, 2 or 5 times a power of ten that is <= x (x >= 1)."""
    power = 10 ** math.floor(math.log10(x))
    return int(max(m for m in (1, 2, 5, 10) if m * power <= x) * power)


def simulation_seconds(a: LookupArgs) -> float:
    from tablegen.compute.cost import SECONDS_PER_REPLICATE, sampling_seconds

    return replicates_of(a) * (sampling_seconds(a.P, a.N, (a.spec,)) + SECONDS_PER_REPLICATE)


def count_question(a: LookupArgs):
    """The question in the tables' and the engine's terms: precision_at_k becomes tp_at_k."""
    spec = a.spec
    divisor = spec.count_divisor(a.P, a.N)
    metric = spec.counted_entry()
    score = a.score
    return metric, a.P, a.N, a.C, a.alpha, None if score is None else score * divisor, divisor


def replicates_of(a: LookupArgs) -> int:
    return a.R if a.R is not None else simulation_replicates(a.P, a.N, a.C, a.alpha)


def seed_of(a: LookupArgs) -> int:
    from tablegen.compute.cell import DEFAULT_SEED  # the simulation engine, imported by the answers that simulate

    return DEFAULT_SEED if a.seed is None else a.seed


def exact_critical(a: LookupArgs) -> Answer:
    """The exact critical value, or a bracket's conservative (high) end with the bracket as its interval:
    method "exact" only when the bracket is within :data:`SNAP_TOLERANCE`, where values count as equal."""
    low, high = null_critical_bracket(cached_null(a.metric, a.P, a.N), float(upper_tail_probability(a.C, a.alpha)))
    return Answer(high, low, high, "exact" if high - low <= SNAP_TOLERANCE else "bracket")


def exact_p(a: LookupArgs) -> Answer:
    """The exact p-value, or a bracket's high end: method "exact" only within a relative :data:`P_PRECISION`."""
    tail_low, tail_high = null_tail_ge_bracket(cached_null(a.metric, a.P, a.N), a.score)
    low, high = (float(p_value_from_tail(tail, a.C)) for tail in (tail_low, tail_high))
    method = "exact" if high - low <= P_PRECISION * high else "bracket"
    if high <= 0.0:  # underflow: the tail is below 2.2e-308
        return Answer(SMALLEST_P, 0.0, SMALLEST_P, method, bound="<")
    return Answer(high, low, high, method)


def simulate(a: LookupArgs, critical: bool, p: bool, progress, device: str = "cpu"
              ) -> tuple[Answer | None, Answer | None]:
    """One pass of R rankings (the cell engine) answering the critical value and/or the p-value."""
    from tablegen.compute.cell import simulate_answer

    metric, P, N, C, alpha, score, divisor = count_question(a)
    R, seed = replicates_of(a), seed_of(a)
    guard_simulation(simulation_seconds(a), f"simulating {metric.name} at P = {P}, N = {N} with R = {R:,}",
                     device)
    logger.info("simulating %s at P = %d, N = %d: R = %d, seed %d", metric.name, P, N, R, seed)
    simulated = simulate_answer(metric, P, N, R, seed, C=C, alpha=alpha if critical else None,
                                threshold=score - SNAP_TOLERANCE if p else None, progress=progress, device=device)
    cv = divided_answer(Answer(simulated.estimate, simulated.low, simulated.high, "simulate", R, seed), divisor) \
        if critical else None
    pv = simulated_p_value(C, R, seed, simulated.hits) if p else None
    return cv, pv


def guard_simulation(seconds: float, what: str, device: str) -> None:
    """Hold a simulation's estimate (CPU seconds on one core) against the time limit where it runs on the CPU; on a
    GPU (``device="cuda"``) the CPU estimate says nothing of its time, so it is logged, not held."""
    if device == "cuda":
        logger.info("%s on the GPU: the CPU estimate (about %.3g s on one core) is not held against the time limit",
                    what, seconds)
        return
    check_time(seconds, what, "pass a smaller R (the minimum is ceil(1 / (1 - (1 - alpha)**(1/C))) for a critical "
               "value), or compute a table on a cluster (tablegen run)")


def resolved_device(device: str) -> str:
    """``"cpu"`` or ``"cuda"`` for ``device`` (refused, naming it, where it cannot be had)."""
    from tablegen.compute.kernels.cuda.device import resolve_device

    return resolve_device(device)


def simulate_sequentially(a: LookupArgs, progress, device: str = "cpu") -> tuple[Answer, Answer, str]:
    """A verdict simulated at the default R, stopped at the first decided look
    (:mod:`tablegen.lookup.sequential`): (critical value, p-value, the note saying where it stopped and why)."""
    from tablegen.lookup.sequential import sequential_verdict

    R = replicates_of(a)
    guard_simulation(simulation_seconds(a), f"simulating {a.metric} at P = {a.P}, N = {a.N} with R = {R:,} at most",
                     device)
    return sequential_verdict(a, count_question(a), R, seed_of(a), progress, device)
