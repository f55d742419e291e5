"""The K-class report's resampling kernels: what every replicate keeps fixed, the bootstrap's mean, block
independence, and the CUDA twins bit for bit in numba-cuda's simulator (a child process: this file is the
child's script, ``python tests/compute/test_multiclass_resample_kernel.py OUT.npz``).

The permutation and swap kernels' laws are checked against enumeration and brute force in
``tests/compare/test_report_multiclass_exact.py``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve()


def _case(n=40, K=3, M=3, seed=1):
    from tablegen.compute.kernels import multiclass_resample as kernels

    rng = np.random.default_rng(seed)
    true = rng.integers(0, K, n).astype(np.int32)
    predicted = np.stack([np.where(rng.random(n) < 0.6, true, rng.integers(0, K + 1, n)) for _ in range(M)],
                         axis=1).astype(np.int32)  # class K only predicted
    classes = K + 1
    true_counts = np.bincount(true, minlength=classes).astype(np.int64)
    predicted_counts = np.stack([np.bincount(predicted[:, m], minlength=classes) for m in range(M)]).astype(np.int64)
    weights, with_items = kernels.recall_weights(true_counts)
    f1_classes = np.count_nonzero((true_counts + predicted_counts) > 0, axis=1).astype(np.int64)
    order = np.argsort(true, kind="stable")
    starts = np.r_[0, np.cumsum(true_counts)].astype(np.int64)
    return dict(true=true, predicted=predicted, true_counts=true_counts, predicted_counts=predicted_counts,
                weights=weights, with_items=with_items, f1_classes=f1_classes, order=order, starts=starts,
                key=kernels.resample_key(2005, n, classes, kernels.BOOTSTRAP_TAG))


def _rows(device: str) -> dict:
    from tablegen.compute.kernels import multiclass_resample as kernels

    c = _case()
    M = c["predicted"].shape[1]
    strat = (c["order"], c["starts"], c["predicted"], c["true_counts"], c["weights"], c["with_items"],
             c["f1_classes"], *c["key"], 3)
    perm = (c["true"], c["predicted"], c["predicted_counts"], c["true_counts"], c["weights"], c["with_items"],
            c["f1_classes"], *c["key"], 7)
    a, b = c["predicted"][:, 0], c["predicted"][:, 1]
    differ = a != b
    same = ~differ
    base_tp = np.bincount(c["true"][same & (a == c["true"])], minlength=c["true_counts"].size).astype(np.int64)
    base_pc = np.bincount(a[same], minlength=c["true_counts"].size).astype(np.int64)
    swap = (c["true"][differ].copy(), a[differ].copy(), b[differ].copy(), base_tp, base_pc, c["true_counts"],
            c["weights"], c["with_items"], 4, c["true"].size, *c["key"], 11)
    outs = {"stratified": np.empty((37, M, 4)), "permutations": np.empty((29, M, 4)),
            "swaps_random": np.empty((33, 4)), "swaps_exact": np.empty((16, 4))}
    if device == "cuda":
        from tablegen.compute.kernels.cuda import multiclass_resample as cuda_kernels

        cuda_kernels.stratified_resamples_cuda(*strat, outs["stratified"], threads=8)
        cuda_kernels.label_permutations_cuda(*perm, outs["permutations"], threads=8)
        cuda_kernels.swap_differences_cuda(*swap, False, outs["swaps_random"], threads=8)
        cuda_kernels.swap_differences_cuda(*swap, True, outs["swaps_exact"], threads=8)
    else:
        kernels.stratified_resamples(*strat, outs["stratified"])
        kernels.label_permutations(*perm, outs["permutations"])
        kernels.swap_differences(*swap, False, outs["swaps_random"])
        kernels.swap_differences(*swap, True, outs["swaps_exact"])
    return outs


def test_replicates_do_not_depend_on_the_blocks():
    from tablegen.compute.kernels import multiclass_resample as kernels

    c = _case()
    M = c["predicted"].shape[1]
    args = (c["order"], c["starts"], c["predicted"], c["true_counts"], c["weights"], c["with_items"],
            c["f1_classes"], *c["key"])
    whole, parts = np.empty((30, M, 4)), np.empty((30, M, 4))
    kernels.stratified_resamples(*args, 0, whole)
    kernels.stratified_resamples(*args, 0, parts[:13])
    kernels.stratified_resamples(*args, 13, parts[13:])
    assert whole.tobytes() == parts.tobytes()


def test_permutations_keep_each_models_predicted_counts_and_the_class_counts():
    """Under a label permutation a model right on every item of the labels it was given stays at most as good;
    a model predicting one class only scores that class's share, whatever the arrangement."""
    from tablegen.compute.kernels import multiclass_resample as kernels

    true = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2], np.int32)
    predicted = np.stack([true, np.full(9, 2, np.int32)], axis=1).astype(np.int32)
    counts = np.stack([np.bincount(predicted[:, m], minlength=3) for m in range(2)]).astype(np.int64)
    weights, with_items = kernels.recall_weights(np.bincount(true))
    out = np.empty((200, 2, 4))
    kernels.label_permutations(true, predicted, counts, np.bincount(true).astype(np.int64), weights, with_items,
                               np.array([3, 3]), *kernels.resample_key(5, 9, 3, kernels.PERMUTATION_TAG), 0, out)
    assert np.all(out[:, 1, 0] == 4 / 9) and np.all(out[:, 1, 1] == 0.0)  # all "2": accuracy n_2/n, kappa 0
    assert np.all(out[:, 0, 0] <= 1.0) and np.any(out[:, 0, 0] < 1.0)


def test_bootstrap_mean_is_the_observed_value_within_four_standard_errors():
    from tablegen.compute.kernels import multiclass_resample as kernels

    c = _case(n=400, K=4, M=2, seed=3)
    R = 4000
    out = np.empty((R, 2, 4))
    kernels.stratified_resamples(c["order"], c["starts"], c["predicted"], c["true_counts"], c["weights"],
                                 c["with_items"], c["f1_classes"], *c["key"], 0, out)
    observed = np.empty((2, 4))
    K = c["true_counts"].size
    matrices = np.stack([np.bincount(c["true"].astype(np.int64) * K + c["predicted"][:, m], minlength=K * K)
                         .reshape(K, K) for m in range(2)])
    kernels.confusion_scores(matrices, c["f1_classes"], observed)
    # accuracy and balanced accuracy are linear in the resampled counts: their bootstrap mean is unbiased
    for column in (0, 2):
        values = out[:, :, column]
        assert np.all(np.abs(values.mean(axis=0) - observed[:, column]) <= 4 * values.std(axis=0) / np.sqrt(R))


def test_cuda_twins_are_bit_identical_in_the_simulator(tmp_path):
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: the CUDA resampling kernels are NOT tested "
                    "(pip install -e '.[test]')")
    out = tmp_path / "sim.npz"
    done = subprocess.run([sys.executable, str(HERE), str(out)], env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"},
                          capture_output=True, text=True, cwd=HERE.parents[2])
    assert done.returncode == 0, done.stderr[-4000:]
    cpu = _rows("cpu")
    with np.load(out) as sim:
        assert sorted(sim.files) == sorted(cpu)
        for name, values in cpu.items():
            assert sim[name].tobytes() == values.tobytes(), name


if __name__ == "__main__":
    import warnings

    sys.path.insert(0, str(HERE.parents[2]))
    warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)  # numpy uint64 scalars wrap
    np.savez(sys.argv[1], **_rows("cuda"))
