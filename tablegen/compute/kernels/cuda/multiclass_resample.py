"""CUDA twins of the K-class report's resampling kernels (``tablegen.compute.kernels.multiclass_resample``).

One thread per replicate (resample, permutation or swap pattern), each drawing from the replicate's own stream
exactly as the CPU kernel does (``replicate_state`` of the key and the replicate's index; Lemire's multiply-shift
of the upper 32 bits of a fresh xoshiro256** output, a rejected draw redrawn from the next outputs' upper halves;
the swap bits low bit first), with per-thread scratch rows for the class counts.  The four columns are the CPU
kernel's arithmetic: the sums in class order with every product and addition rounded separately
(:func:`~tablegen.compute.kernels.cuda.rng.mul_rn` / ``add_rn``, never fused), each division once.  Checked bit
for bit against the CPU kernels under the simulator by ``tests/compute/test_multiclass_resample_kernel.py``.
"""

import math

import numpy as np
from numba import cuda

from tablegen.compute.kernels.cuda import device
from tablegen.compute.kernels.cuda.ranking import draw_below
from tablegen.compute.kernels.cuda.rng import ONE, ZERO, add_rn, mul_rn, replicate_state, xoshiro_next

#: Threads per CUDA block.
THREADS_PER_BLOCK = 128


@cuda.jit(device=True, inline=True)
def scores4(tp, pc, true_counts, weights, recall_classes, f1_classes, n):
    """(accuracy, kappa, balanced accuracy, macro-F1) from the diagonal ``tp`` and predicted counts ``pc``."""
    hits = 0
    chance = 0
    recall = 0.0
    f1 = 0.0
    for k in range(tp.shape[0]):
        count = tp[k]
        hits += count
        chance += true_counts[k] * pc[k]
        recall = add_rn(recall, mul_rn(float(count), weights[k]))
        total = true_counts[k] + pc[k]
        if total > 0:
            f1 = add_rn(f1, mul_rn(float(count), 2.0 / total))
    accuracy = hits / n
    kappa = (n * hits - chance) / (n * n - chance)
    return accuracy, kappa, recall / recall_classes, f1 / f1_classes


@cuda.jit
def stratified_kernel(order, starts, predicted, true_counts, weights, recall_classes, f1_classes, key0, key1, first,
                      tp, pc, out):
    """Resample ``first + i``: out[i, m] the four columns of model m."""
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    K = true_counts.shape[0]
    M = predicted.shape[1]
    n = order.shape[0]
    s0, s1, s2, s3 = replicate_state(key0, key1, first + i)
    for m in range(M):
        for k in range(K):
            tp[i, m, k] = 0
            pc[i, m, k] = 0
    for k in range(K):
        size = starts[k + 1] - starts[k]
        for _ in range(size):
            j, s0, s1, s2, s3 = draw_below(np.uint64(size), s0, s1, s2, s3)
            item = order[starts[k] + int(j)]
            for m in range(M):
                p = predicted[item, m]
                pc[i, m, p] += 1
                if p == k:
                    tp[i, m, k] += 1
    for m in range(M):
        a, b, c, d = scores4(tp[i, m], pc[i, m], true_counts, weights, recall_classes, f1_classes[m], n)
        out[i, m, 0] = a
        out[i, m, 1] = b
        out[i, m, 2] = c
        out[i, m, 3] = d


@cuda.jit
def permutation_kernel(true_codes, predicted, predicted_counts, true_counts, weights, recall_classes, f1_classes,
                       key0, key1, first, work, tp, out):
    """Replicate ``first + i`` of the label permutations: out[i, m] the four columns of model m."""
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    n = true_codes.shape[0]
    K = true_counts.shape[0]
    M = predicted.shape[1]
    s0, s1, s2, s3 = replicate_state(key0, key1, first + i)
    for item in range(n):
        work[i, item] = true_codes[item]
    for m in range(M):
        for k in range(K):
            tp[i, m, k] = 0
    for item in range(n - 1, -1, -1):
        if item > 0:
            j, s0, s1, s2, s3 = draw_below(np.uint64(item + 1), s0, s1, s2, s3)
            label = work[i, j]
            work[i, j] = work[i, item]
        else:
            label = work[i, 0]
        for m in range(M):
            if predicted[item, m] == label:
                tp[i, m, label] += 1
    for m in range(M):
        a, b, c, d = scores4(tp[i, m], predicted_counts[m], true_counts, weights, recall_classes, f1_classes[m], n)
        out[i, m, 0] = a
        out[i, m, 1] = b
        out[i, m, 2] = c
        out[i, m, 3] = d


@cuda.jit
def swap_kernel(true_codes, predicted_a, predicted_b, base_tp, base_pc, true_counts, weights, recall_classes,
                f1_classes, n, key0, key1, first, exact, tp_a, tp_b, pc_a, pc_b, out):
    """Swap pattern ``first + i``: out[i] the four columns of A less B's."""
    i = cuda.grid(1)
    if i >= out.shape[0]:
        return
    d = true_codes.shape[0]
    K = true_counts.shape[0]
    pattern = first + i
    s0, s1, s2, s3 = replicate_state(key0, key1, pattern)
    bits = ZERO
    left = 0
    for k in range(K):
        tp_a[i, k] = base_tp[k]
        tp_b[i, k] = base_tp[k]
        pc_a[i, k] = base_pc[k]
        pc_b[i, k] = base_pc[k]
    for item in range(d):
        if exact:
            swap = (pattern >> item) & 1
        else:
            if left == 0:
                bits, s0, s1, s2, s3 = xoshiro_next(s0, s1, s2, s3)
                left = 64
            swap = int(bits & ONE)
            bits >>= ONE
            left -= 1
        a = predicted_a[item]
        b = predicted_b[item]
        if swap:
            a, b = b, a
        k = true_codes[item]
        pc_a[i, a] += 1
        pc_b[i, b] += 1
        if a == k:
            tp_a[i, k] += 1
        if b == k:
            tp_b[i, k] += 1
    a0, a1, a2, a3 = scores4(tp_a[i], pc_a[i], true_counts, weights, recall_classes, f1_classes, n)
    b0, b1, b2, b3 = scores4(tp_b[i], pc_b[i], true_counts, weights, recall_classes, f1_classes, n)
    out[i, 0] = a0 - b0
    out[i, 1] = a1 - b1
    out[i, 2] = a2 - b2
    out[i, 3] = a3 - b3


def launch_rows(kernel, inputs, extra, scratch, out, first, threads):
    """Run ``kernel`` over ``out``'s rows, ``threads`` at a time (fewer where the scratch would pass
    :data:`~tablegen.compute.kernels.cuda.device.SCRATCH_BYTES`): ``inputs`` the arrays and scalars before and
    including (key0, key1), ``extra`` the scalars after ``first``, ``scratch`` (shape, dtype) of each per-thread
    array.  The launch helper of the K-class report's twins (:mod:`tablegen.compute.kernels.cuda.multiclass_scores`
    and ``multiclass_scores_resample`` use it too)."""
    row_bytes = sum(int(np.prod(shape)) * np.dtype(dtype).itemsize for shape, dtype in scratch)
    rows = device.replicates_per_launch(threads, out.shape[0], row_bytes)
    devices = [cuda.to_device(np.ascontiguousarray(v)) if isinstance(v, np.ndarray) else v for v in inputs[:-2]]
    key0, key1 = inputs[-2], inputs[-1]
    d_scratch = [cuda.device_array((rows, *shape), dtype) for shape, dtype in scratch]
    d_out = cuda.device_array((rows, *out.shape[1:]), np.float64)
    for start in range(0, out.shape[0], rows):
        count = min(rows, out.shape[0] - start)
        target = d_out[:count]
        grid = max(1, math.ceil(count / THREADS_PER_BLOCK))
        kernel[grid, THREADS_PER_BLOCK](*devices, key0, key1, first + start, *extra, *d_scratch, target)
        out[start:start + count] = target.copy_to_host()


def stratified_resamples_cuda(order, starts, predicted, true_counts, weights, recall_classes, f1_classes, key0, key1,
                              first, out, threads: int = 4096):
    """:func:`~tablegen.compute.kernels.multiclass_resample.stratified_resamples` on the GPU (out (rows, M, 4))."""
    M, K = predicted.shape[1], true_counts.size
    launch_rows(stratified_kernel, (order, starts, predicted, true_counts, weights, recall_classes, f1_classes, key0,
                                    key1), (), [((M, K), np.int64), ((M, K), np.int64)], out, first, threads)


def label_permutations_cuda(true_codes, predicted, predicted_counts, true_counts, weights, recall_classes,
                            f1_classes, key0, key1, first, out, threads: int = 4096):
    """:func:`~tablegen.compute.kernels.multiclass_resample.label_permutations` on the GPU (out (rows, M, 4))."""
    n, M, K = true_codes.size, predicted.shape[1], true_counts.size
    launch_rows(permutation_kernel, (true_codes, predicted, predicted_counts, true_counts, weights, recall_classes,
                                     f1_classes, key0, key1), (), [((n,), np.int32), ((M, K), np.int64)], out, first,
                threads)


def swap_differences_cuda(true_codes, predicted_a, predicted_b, base_tp, base_pc, true_counts, weights,
                          recall_classes, f1_classes, n, key0, key1, first, exact, out, threads: int = 4096):
    """:func:`~tablegen.compute.kernels.multiclass_resample.swap_differences` on the GPU (out (rows, 4))."""
    K = true_counts.size
    launch_rows(swap_kernel, (true_codes, predicted_a, predicted_b, base_tp, base_pc, true_counts, weights,
                              recall_classes, f1_classes, n, key0, key1), (exact,), [((K,), np.int64)] * 4, out, first,
                threads)
