"""Host side of the CUDA kernels: one cell's device arrays, launches, and tail filtering on the device.

:class:`CudaCell` holds what every block of a cell needs on the device (cut-offs, 1/k, harmonic
numbers, the minority kernel's bitmap scratch, the score and candidate buffers), chooses the
kernel by the same rule as the CPU engine (:func:`~tablegen.compute.kernels.minority.uses_minority_sampling`),
and offers two things per block of replicates:

- :meth:`CudaCell.scores`: every ranking's scores, shaped like the CPU kernels' output (tests,
  bit-identity checks);
- :meth:`CudaCell.candidates`: per metric, only the samples that can change the accumulator's
  tail, i.e. those strictly above the tail's floor (the floor is passed in by the host; where a tail
  is not yet full every sample is a candidate and its column is copied whole), plus the number of
  samples at or above a threshold.  The filter runs on the device (:func:`filter_kernel`); the
  candidates are a sub-multiset of the block that contains its upper tail, so the host's
  :func:`tablegen.compute.accumulator.tail_add` ends with exactly the CPU path's tail.  The order in which
  atomics place candidates varies from run to run; the tail, a multiset, does not.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda

from tablegen.compute.kernels.cuda.minority import minority_kernel
from tablegen.compute.kernels.cuda.ranking import sequential_kernel
from tablegen.compute.kernels.minority import harmonic_numbers, uses_minority_sampling
from tablegen.compute.kernels.ranking import TP_COLUMN, mcc_weights

#: Replicates per launch on a GPU (bounds device memory: about 8 bytes x (2 x columns) per replicate).
DEVICE_BLOCK_SIZE = 1 << 21
#: Threads per CUDA block.
THREADS_PER_BLOCK = 128
#: Device memory for the minority kernel's bitmaps; it caps that kernel's threads per launch.
MINORITY_SCRATCH_BYTES = 1 << 28
N_BASE_COLUMNS = TP_COLUMN


@cuda.jit
def filter_kernel(scores, columns, floors, thresholds, candidates, n_candidates, n_at_least):
    """Per metric c: append samples > floors[c] to candidates[c], count samples >= thresholds[c]."""
    i = cuda.grid(1)
    if i >= scores.shape[1]:
        return
    for c in range(columns.shape[0]):
        x = scores[columns[c], i]
        if x > floors[c]:
            slot = cuda.atomic.add(n_candidates, c, 1)
            candidates[c, slot] = x
        if x >= thresholds[c]:
            cuda.atomic.add(n_at_least, c, 1)


def _inverse(n: int) -> np.ndarray:
    """1.0 / k for k = 0..n (0 at k = 0), as the CPU kernels tabulate it."""
    inverse = np.zeros(n + 1)
    inverse[1:] = 1.0 / np.arange(1, n + 1, dtype=np.float64)
    return inverse


def _grid(count: int) -> int:
    return max(1, math.ceil(count / THREADS_PER_BLOCK))


class CudaCell:
    """Device state of one cell (P, N) with cell key ``key`` and tp_at_k cut-offs ``ks``.

    Parameters
    ----------
    P, N : int
        The cell.
    key : tuple of np.uint64
        The cell key (:func:`tablegen.compute.mc.cell_key`).
    ks : int64 array
        Strictly increasing cut-offs (as in :class:`tablegen.compute.mc.KernelLayout`).
    block_size : int
        The largest number of replicates one call will be asked for.
    with_mcc : bool
        Whether to score best MCC (as the CPU kernels' ``with_mcc``; its column is NaN otherwise).

    Examples
    --------
    >>> from tablegen.compute.mc import cell_key
    >>> cell = CudaCell(3, 4, cell_key(1, 3, 4), np.array([2], np.int64), block_size=4)  # doctest: +SKIP
    >>> cell.scores(0, 4).shape  # doctest: +SKIP
    (4, 7)
    """

    def __init__(self, P: int, N: int, key, ks: np.ndarray, block_size: int, with_mcc: bool = False):
        self.P, self.N, self.key0, self.key1 = int(P), int(N), np.uint64(key[0]), np.uint64(key[1])
        self.block_size = int(block_size)
        self.n_columns = N_BASE_COLUMNS + ks.size
        n = self.P + self.N
        self.minority = uses_minority_sampling(self.P, self.N)
        self.ks = cuda.to_device(np.ascontiguousarray(ks, dtype=np.int64))
        self.inverse = cuda.to_device(_inverse(n))
        self.with_mcc = bool(with_mcc)
        self.mcc_w = cuda.to_device(mcc_weights(self.P, self.N, n + 1 if self.with_mcc else 1))
        self.d_scores = cuda.device_array((self.n_columns, self.block_size), dtype=np.float64)
        self.d_candidates = None
        if self.minority:
            self.harmonic = cuda.to_device(harmonic_numbers(n))
            words = (n + 63) >> 6
            threads = min(self.block_size, max(THREADS_PER_BLOCK, MINORITY_SCRATCH_BYTES // (8 * words)))
            threads = _grid(threads) * THREADS_PER_BLOCK
            self.bitmap = cuda.to_device(np.zeros((words, threads), dtype=np.uint64))

    def launch(self, first: int, count: int):
        """Score replicates first .. first + count - 1 into the device buffer (asynchronously); returns its view."""
        if not 0 < count <= self.block_size:
            raise ValueError(f"count must be in 1..{self.block_size}, got {count}")
        scores = self.d_scores[:, :count] if count < self.block_size else self.d_scores
        if self.minority:
            threads = self.bitmap.shape[1]
            minority_kernel[threads // THREADS_PER_BLOCK, THREADS_PER_BLOCK](
                self.P, self.N, self.key0, self.key1, first, self.ks, self.inverse, self.harmonic,
                self.mcc_w, self.with_mcc, self.bitmap, scores)
        else:
            sequential_kernel[_grid(count), THREADS_PER_BLOCK](
                self.P, self.N, self.key0, self.key1, first, self.ks, self.inverse, self.mcc_w, self.with_mcc, scores)
        return scores

    def scores(self, first: int, count: int) -> np.ndarray:
        """Every metric of replicates ``first .. first + count - 1``: (count, TP_COLUMN + len(ks)), as on the CPU."""
        self.launch(first, count)
        return self.d_scores.copy_to_host()[:, :count].T.copy()

    def candidates(self, first: int, count: int, columns, floors, thresholds
                   ) -> tuple[list[np.ndarray], list[int]]:
        """Per metric: the samples above ``floors`` (all where the floor is -inf) and the count >= thresholds.

        ``columns[c]`` is metric c's kernel column; ``thresholds[c]`` is +inf where no count is wanted.
        """
        scores = self.launch(first, count)
        columns = np.asarray(columns, dtype=np.int64)
        floors = np.asarray(floors, dtype=np.float64)
        copy_whole = np.isneginf(floors)
        if self.d_candidates is None or self.d_candidates.shape[0] < columns.size:
            self.d_candidates = cuda.device_array((columns.size, self.block_size), dtype=np.float64)
        n_candidates = cuda.to_device(np.zeros(columns.size, np.int64))
        n_at_least = cuda.to_device(np.zeros(columns.size, np.int64))
        filter_kernel[_grid(count), THREADS_PER_BLOCK](
            scores, cuda.to_device(columns), cuda.to_device(np.where(copy_whole, np.inf, floors)),
            cuda.to_device(np.asarray(thresholds, dtype=np.float64)), self.d_candidates, n_candidates, n_at_least)
        sizes = n_candidates.copy_to_host()
        kept = []
        for c, column in enumerate(int(column) for column in columns):
            source, size = (self.d_scores[column], count) if copy_whole[c] else (self.d_candidates[c], sizes[c])
            kept.append(source[:size].copy_to_host() if size else np.empty(0))
        return kept, [int(x) for x in n_at_least.copy_to_host()]
