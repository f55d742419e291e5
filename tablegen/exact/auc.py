"""Exact null of AUC = U/(P N) by the stable Mann–Whitney recursion, per cell or for a whole grid."""

from __future__ import annotations

import logging
from typing import Iterable, Iterator

import numpy as np

from tablegen.exact.closed_form import _tail_from_pmf
from tablegen.exact.nulls import TabulatedNull
from tablegen.kernels.mann_whitney import advance_row, slot_offsets

logger = logging.getLogger(__name__)


def auc_cost(P: int, N: int) -> tuple[float, float]:
    """(multiply-adds, bytes) of the recursion up to (P, N): P^2 N^2 / 4 and 8 max(P,N) min(P,N)^2 / 2."""
    small, large = sorted((P, N))
    return P * P * N * N / 4.0, 8.0 * large * (small * small / 2.0 + small + 1)


def auc_pmf_sweep(cells: Iterable[tuple[int, int]]) -> Iterator[tuple[tuple[int, int], np.ndarray]]:
    """Yield ((P, N), pmf of U) for every requested cell, from one pass of the recursion.

    The recursion to (I, J) passes through every (i, j) with i <= I, j <= J, so all requested cells
    come from a single sweep over the bounding rectangle (I = max P, J = max N after orienting by
    the symmetry U_{P,N} ~ U_{N,P}: the shorter side is the slot axis, which sets the memory).

    Parameters
    ----------
    cells : iterable of (P, N)
        Cells wanted (P, N >= 1).

    Yields
    ------
    (P, N), pmf
        ``pmf[u] = Pr(U = u)``, u = 0..P N, in sweep order (by min(P, N)... rows ascending).
    """
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
    for row in range(1, max_rows + 1):
        advance_row(buffer, offsets, row, max_cols)
        for col in range(1, min(row, max_cols) + 1):
            for cell in oriented.get((row, col), ()):
                yield cell, buffer[offsets[col]:offsets[col] + row * col + 1].copy()


def auc_null_from_pmf(P: int, N: int, pmf: np.ndarray) -> TabulatedNull:
    """The :class:`TabulatedNull` of AUC from the pmf of U."""
    return TabulatedNull(values=np.arange(P * N + 1) / (P * N), tail_ge=_tail_from_pmf(pmf))


def auc_null(P: int, N: int) -> TabulatedNull:
    """Exact null of AUC for one cell (cost: see :func:`auc_cost`; ~1 ns per multiply-add here)."""
    ((_, pmf),) = auc_pmf_sweep([(P, N)])
    return auc_null_from_pmf(P, N, pmf)
