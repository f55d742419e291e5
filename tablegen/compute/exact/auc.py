"""Exact null of AUC = U/(P N): the stable Mann–Whitney recursion (small cells, whole grids in one
sweep) and, at any size, the tilted Fourier inversion of :mod:`tablegen.compute.exact.auc_fft`.

:func:`auc_null` picks the faster of the two for one cell (:func:`auc_seconds`); both give the same
critical values (``tests/compute/test_exact_auc.py``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Iterator

import numpy as np

from tablegen.compute.exact.auc_fft import BLOCK_ELEMENTS, BYTES_PER_FREQUENCY, TiltedAucNull
from tablegen.compute.exact.nulls import TabulatedNull, tail_from_pmf

logger = logging.getLogger(__name__)

#: The batch job computes exact AUC by the recursion sweep for cells up to this many multiply-adds
#: (~20 s, ~1 GB for a whole task's rectangle) and by the tilted inversion above it.
EXACT_AUC_BUDGET = 2e10
#: Seconds per multiply-add of the recursion on one core (benchmarks/bench_exact.py).
SECONDS_PER_AUC_MADD = 9.7e-10


def auc_cost(P: int, N: int) -> tuple[float, float]:
    """(multiply-adds, bytes) of the recursion up to (P, N): P^2 N^2 / 4 and 8 max(P,N) min(P,N)^2 / 2."""
    small, large = sorted((P, N))
    return P * P * N * N / 4.0, 8.0 * large * (small * small / 2.0 + small + 1)


def auc_pmf_sweep(cells: Iterable[tuple[int, int]], progress: Callable[[float, float], None] | None = None
                  ) -> Iterator[tuple[tuple[int, int], np.ndarray]]:
    """Yield ((P, N), pmf of U) for every requested cell, from one pass of the recursion.

    The recursion to (I, J) passes through every (i, j) with i <= I, j <= J, so all requested cells
    come from a single sweep over the bounding rectangle (I = max P, J = max N after orienting by
    the symmetry U_{P,N} ~ U_{N,P}: the shorter side is the slot axis, which sets the memory).

    Parameters
    ----------
    cells : iterable of (P, N)
        Cells wanted (P, N >= 1).
    progress : callable, optional
        ``progress(done, total)`` after each row of the sweep, in multiply-adds (a progress line's hook).

    Yields
    ------
    (P, N), pmf
        ``pmf[u] = Pr(U = u)``, u = 0..P N, in sweep order (by min(P, N)... rows ascending).
    """
    from tablegen.compute.kernels.mann_whitney import advance_row, slot_offsets

    wanted = {(int(P), int(N)) for P, N in cells}
    if not wanted:
        return
    # Orient every cell as (rows, cols) with cols <= rows for the memory bound; U's law is symmetric.
    oriented: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for P, N in wanted:
        oriented.setdefault((max(P, N), min(P, N)), []).append((P, N))
    max_rows = max(r for r, _ in oriented)
    max_cols = max(c for _, c in oriented)
    offsets, length = slot_offsets(max_rows, max_cols)
    logger.debug("AUC sweep to (%d, %d): %.1f MB", max_rows, max_cols, 8 * length / 1e6)
    buffer = np.zeros(length)
    buffer[offsets] = 1.0  # p_{0, j} = [1]
    rows = np.arange(1, max_rows + 1, dtype=float)
    work = np.cumsum(rows * np.minimum(rows, max_cols))  # a row's multiply-adds grow with its slots
    for row in range(1, max_rows + 1):
        advance_row(buffer, offsets, row, max_cols)
        if progress is not None:
            progress(float(work[row - 1]), float(work[-1]))
        for col in range(1, min(row, max_cols) + 1):
            for cell in oriented.get((row, col), ()):
                yield cell, buffer[offsets[col]:offsets[col] + row * col + 1].copy()


def auc_null_from_pmf(P: int, N: int, pmf: np.ndarray) -> TabulatedNull:
    """The :class:`TabulatedNull` of AUC from the pmf of U."""
    return TabulatedNull(values=np.arange(P * N + 1) / (P * N), tail_ge=tail_from_pmf(pmf))


def recursion_seconds(P: int, N: int) -> float:
    """Estimated single-core seconds of the recursion up to (P, N)."""
    return SECONDS_PER_AUC_MADD * auc_cost(P, N)[0]


def auc_exact_cost(P: int, N: int) -> tuple[float, float]:
    """Estimated (single-core seconds, peak bytes) of one exact AUC answer by the route :func:`auc_null` takes.

    The tilted inversion holds O(min(P, N) + K) numbers; its band K reaches the whole window only for
    tiny min(P, N), bounded here by the window, about 24 sd of U.
    """
    if recursion_seconds(P, N) <= tilted_auc_seconds(P, N):
        return recursion_seconds(P, N), auc_cost(P, N)[1]
    return tilted_auc_cost(P, N)


#: Exact answers' worth of work in a max-T search's questions of AUC's null (its critical value, the ends of its
#: interval, the models' tails): the null keeps its recursion's table or each tilted law it builds, and a question
#: near one already answered is a geometric sum over the kept band (at P, N = 3e5, 7e5 one law built, 4.7 s, and
#: every later question 0.1-0.5 s), rounded up.
AUC_SEARCH_ANSWERS = 2


def auc_search_seconds(P: int, N: int) -> float:
    """Estimated seconds of a max-T search's questions of AUC's null: :data:`AUC_SEARCH_ANSWERS` exact answers.

    Examples
    --------
    >>> auc_search_seconds(300, 700) == AUC_SEARCH_ANSWERS * auc_exact_cost(300, 700)[0]
    True
    """
    return AUC_SEARCH_ANSWERS * auc_exact_cost(P, N)[0]


def auc_null(P: int, N: int):
    """Exact null of AUC for one cell: the tabulated recursion where it is faster, else the tilted inversion.

    Examples
    --------
    >>> type(auc_null(20, 20)).__name__, type(auc_null(1000, 1000)).__name__
    ('TabulatedNull', 'TiltedAucNull')
    """
    if recursion_seconds(P, N) <= tilted_auc_seconds(P, N):
        ((_, pmf),) = auc_pmf_sweep([(P, N)])
        return auc_null_from_pmf(P, N, pmf)
    return TiltedAucNull(P, N)


def tilted_auc_cost(P: int, N: int) -> tuple[float, float]:
    """Estimated (single-core seconds, peak bytes) of one critical value or tail, an upper bound.

    The band K is ~130 frequencies from min(P, N) = 30 up (measured: 96-128); below, the
    characteristic function decays slowly and K may reach the half window, 12 sd(U) or (P N + 1) / 2
    (bound used here).  Per frequency: ~0.13 us per factor pair and ~2.5 us over a critical value's
    probes; fit on one AVX-512 core under load (idle runs take about half: 0.063 s at (1000, 1000)).
    """
    small = min(P, N)
    if small == 1:
        return 1e-4, 1e3
    band = 130.0 if small >= 30 else min(12.0 * math.sqrt(P * N * (P + N + 1) / 12.0), (P * N + 1) / 2.0)
    seconds = 0.01 + 1.25e-7 * small * (band + 750) + 2.5e-6 * band
    block = min(float(BLOCK_ELEMENTS), 2.0 * small * (band + 750))  # factor evaluations in one numpy block
    factors = 64.0 * small  # i, j and ~6 temporaries of min(P, N) float64s in each cumulant evaluation
    return seconds, BYTES_PER_FREQUENCY * band + 8.0 * 6 * block + factors  # ~6 float64 temporaries per element


def tilted_auc_seconds(P: int, N: int) -> float:
    """Estimated single-core seconds of :func:`tilted_auc_cost`."""
    return tilted_auc_cost(P, N)[0]


def auc_tabulated_null(P: int, N: int) -> TabulatedNull:
    """The whole exact null of AUC at (P, N) from the recursion, whatever :func:`auc_null` would pick.

    Examples
    --------
    >>> null = auc_tabulated_null(2, 2)
    >>> null.values.tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    ((_, pmf),) = auc_pmf_sweep([(P, N)])
    return auc_null_from_pmf(P, N, pmf)


def auc_nulls_for_cells(cells, progress: Callable[[float, float], None] | None = None) -> dict:
    """Exact AUC nulls of several cells: one recursion sweep for the cells within
    :data:`EXACT_AUC_BUDGET` multiply-adds, the tilted inversion (:class:`TiltedAucNull`) for the rest
    (``progress``: told of the sweep's rows, :func:`auc_pmf_sweep`)."""
    cells = [(int(P), int(N)) for P, N in cells]
    affordable = [(P, N) for P, N in cells if auc_cost(P, N)[0] <= EXACT_AUC_BUDGET]
    nulls = {cell: TiltedAucNull(*cell) for cell in cells if cell not in affordable}
    nulls.update({cell: auc_null_from_pmf(*cell, pmf) for cell, pmf in auc_pmf_sweep(affordable, progress)})
    return nulls


def auc_sweep_seconds(cells, critical_pairs: int = 1) -> float:
    """Estimated seconds of :func:`auc_nulls_for_cells` and ``critical_pairs`` critical values per cell:
    one recursion sweep over the cells within the budget (over their bounding rectangle, each oriented
    (max, min)), the tilted inversion for the others."""
    affordable = [(max(P, N), min(P, N)) for P, N in cells if auc_cost(P, N)[0] <= EXACT_AUC_BUDGET]
    seconds = critical_pairs * sum(tilted_auc_seconds(P, N) for P, N in cells
                                   if auc_cost(P, N)[0] > EXACT_AUC_BUDGET)
    if affordable:
        rows, cols = max(r for r, _ in affordable), max(c for _, c in affordable)
        seconds += SECONDS_PER_AUC_MADD * auc_cost(rows, cols)[0]
    return seconds
