"""CUDA twin of the multi-class permutation kernel (``tablegen.compute.kernels.multiclass``).

One thread per replicate.  Thread i shuffles a fresh copy of the predicted codes into its row of ``work`` exactly
as the CPU kernel does (Fisher–Yates from the top, each draw Lemire's multiply-shift of the upper 32 bits of a
fresh xoshiro256** output, a rejected draw redrawn from the upper half of the next output), adds each settled
position's hit to its row of the diagonal counts ``tp``, and writes the three columns as the CPU kernel does:
the sums in class order with every product and addition rounded separately
(:func:`~tablegen.compute.kernels.cuda.rng.mul_rn` / ``add_rn``, never fused), then one division.  Checked bit
for bit against the CPU kernel under the simulator by ``tests/compute/test_multiclass_kernel.py``.
"""

import math

import numpy as np
from numba import cuda

from tablegen.compute.kernels.cuda import device
from tablegen.compute.kernels.cuda.ranking import draw_below
from tablegen.compute.kernels.cuda.rng import add_rn, mul_rn, replicate_state

#: Threads per CUDA block.
THREADS_PER_BLOCK = 128


@cuda.jit
def multiclass_kernel(true_codes, predicted_codes, recall_weights, f1_weights, recall_classes, f1_classes, key0,
                      key1, first, work, tp, out):
    """Replicate ``first + i`` for i < out.shape[0]: its shuffle and its three columns in ``out[i]``."""
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    n = true_codes.shape[0]
    K = recall_weights.shape[0]
    s0, s1, s2, s3 = replicate_state(key0, key1, first + i)
    for item in range(n):
        work[i, item] = predicted_codes[item]
    for k in range(K):
        tp[i, k] = 0
    for item in range(n - 1, 0, -1):
        j, s0, s1, s2, s3 = draw_below(np.uint64(item + 1), s0, s1, s2, s3)
        label = work[i, j]
        work[i, j] = work[i, item]
        if label == true_codes[item]:
            tp[i, label] += 1
    label = work[i, 0]
    if label == true_codes[0]:
        tp[i, label] += 1
    hits = 0
    recall = 0.0
    f1 = 0.0
    for k in range(K):
        count = tp[i, k]
        hits += count
        recall = add_rn(recall, mul_rn(float(count), recall_weights[k]))
        f1 = add_rn(f1, mul_rn(float(count), f1_weights[k]))
    out[i, 0] = hits
    out[i, 1] = recall / recall_classes
    out[i, 2] = f1 / f1_classes


def multiclass_permutations_cuda(true_codes, predicted_codes, recall_weights, f1_weights, recall_classes,
                                 f1_classes, key0, key1, first, out, threads: int = 4096):
    """:func:`~tablegen.compute.kernels.multiclass.multiclass_permutations` on the GPU, ``threads`` replicates per
    launch (scratch: a row of codes and a row of counts per thread).  Fills ``out`` (rows, 3)."""
    n, K = true_codes.size, recall_weights.size
    d_true, d_predicted = cuda.to_device(true_codes), cuda.to_device(predicted_codes)
    d_recall, d_f1 = cuda.to_device(recall_weights), cuda.to_device(f1_weights)
    rows = device.replicates_per_launch(threads, out.shape[0], 4 * n + 8 * K)
    d_work = cuda.device_array((rows, n), np.int32)
    d_tp = cuda.device_array((rows, K), np.int64)
    d_out = cuda.device_array((rows, out.shape[1]), np.float64)
    for start in range(0, out.shape[0], rows):
        count = min(rows, out.shape[0] - start)
        target = d_out[:count]
        grid = max(1, math.ceil(count / THREADS_PER_BLOCK))
        multiclass_kernel[grid, THREADS_PER_BLOCK](d_true, d_predicted, d_recall, d_f1, recall_classes, f1_classes,
                                                   key0, key1, first + start, d_work, d_tp, target)
        out[start:start + count] = target.copy_to_host()
