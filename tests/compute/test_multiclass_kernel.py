"""The multi-class permutation kernel against every distinct arrangement at tiny n, and its CUDA twin.

Enumeration: every distinct arrangement of the predicted labels is equally likely under the null (each is Π_k m_k!
of the n! equally likely orders), so the law of balanced accuracy and macro-F1 is the law of their exact
rationals (Fractions, written from the definitions) over the arrangements.  The kernel's score of an arrangement
(:func:`observed_values`, the arithmetic every replicate uses) is within a few ulps of the rational; every row
the kernel samples is one of the arrangements' rows, bit for bit; its tails are within 4 standard errors of the
enumerated ones.  The CUDA twin runs in numba-cuda's simulator in a child process (this file is the child's
script: ``python tests/compute/test_multiclass_kernel.py OUT.npz``).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve()
SEED = 2005
#: (true class of each item, predicted counts): several margins, a class only predicted, one never predicted.
MARGINS = [
    ([0, 0, 1, 1, 2, 2], (2, 2, 2)),
    ([0, 0, 1, 1, 2, 2, 2, 2], (3, 1, 4)),
    ([0, 0, 0, 1, 1, 2, 2, 3], (2, 2, 2, 2)),
    ([0, 0, 0, 0, 1, 1, 1], (1, 2, 4)),
    ([0, 0, 0, 1, 1, 1, 2, 2], (3, 3, 0, 2)),  # class 3 only predicted
    ([0, 1, 1, 2, 2, 2, 2, 2], (0, 4, 4)),  # class 0 never predicted
]
#: CUDA twin cases: (true codes, predicted codes, first replicate, replicates).
CUDA_CASES = [([0, 0, 1, 1, 2, 2, 2, 2], [0, 1, 1, 2, 2, 2, 0, 2], 0, 40),
              ([0, 1, 2, 3, 4] * 9, [4, 3, 2, 1, 0] * 9, 1000, 24),
              ([0, 0, 0, 1, 1, 1, 2, 2], [3, 3, 0, 0, 0, 1, 1, 1], 7, 32)]


def _arrangements(counts):
    """Every distinct arrangement of a multiset of class codes (counts[k] copies of k), lexicographic."""
    n = sum(counts)
    remaining = list(counts)
    current = []

    def walk():
        if len(current) == n:
            yield tuple(current)
            return
        for k, left in enumerate(remaining):
            if left:
                remaining[k] -= 1
                current.append(k)
                yield from walk()
                current.pop()
                remaining[k] += 1
    yield from walk()


def _exact(true, predicted, K):
    """(hits, balanced accuracy, macro-F1) as exact rationals, from the definitions."""
    n_k = [true.count(k) for k in range(K)]
    m_k = [predicted.count(k) for k in range(K)]
    tp = [sum(1 for t, p in zip(true, predicted) if t == p == k) for k in range(K)]
    with_items = [k for k in range(K) if n_k[k] > 0]
    balanced = sum(Fraction(tp[k], n_k[k]) for k in with_items) / len(with_items)
    macro = sum(Fraction(2 * tp[k], n_k[k] + m_k[k]) for k in range(K)) / K
    return sum(tp), balanced, macro


def _setup(true, counts):
    from tablegen.compute.kernels.multiclass import class_weights

    K = len(counts)
    true_counts = [true.count(k) for k in range(K)]
    return K, class_weights(true_counts, counts)


def _kernel_rows(true, predicted, weights, first, count, K, seed=SEED):
    from tablegen.compute.kernels.multiclass import multiclass_key, multiclass_permutations

    key0, key1 = multiclass_key(seed, len(true), K)
    out = np.empty((count, 3))
    multiclass_permutations(np.asarray(true, np.int32), np.asarray(predicted, np.int32), *weights, key0, key1, first,
                            out)
    return out


def _observed(true, arrangement, weights):
    from tablegen.compute.kernels.multiclass import observed_values

    out = np.empty((1, 3))
    observed_values(np.asarray(true, np.int32), np.asarray(arrangement, np.int32), *weights, out)
    return tuple(out[0])


@pytest.mark.parametrize(("true", "counts"), MARGINS)
def test_every_arrangement_scores_its_exact_rationals(true, counts):
    K, weights = _setup(true, counts)
    arrangements = list(_arrangements(counts))
    assert len(arrangements) == _multinomial(counts)
    for arrangement in arrangements:
        hits, balanced, macro = _exact(true, list(arrangement), K)
        got = _observed(true, arrangement, weights)
        assert got[0] == hits
        for value, rational in ((got[1], balanced), (got[2], macro)):
            assert abs(Fraction(value) - rational) <= 4 * 2.0**-52 * max(rational, Fraction(1, 2**60)), arrangement


def _multinomial(counts):
    from math import factorial, prod

    return factorial(sum(counts)) // prod(factorial(c) for c in counts)


@pytest.mark.parametrize(("true", "counts"), MARGINS)
def test_sampled_rows_are_arrangements_and_tails_match_the_enumerated_law(true, counts):
    """Every kernel row is one arrangement's row (bit for bit); tails within 4 SE of the enumerated law."""
    K, weights = _setup(true, counts)
    arrangements = list(_arrangements(counts))
    rows = Counter(_observed(true, arrangement, weights) for arrangement in arrangements)
    exact = [_exact(true, list(arrangement), K) for arrangement in arrangements]
    predicted = [k for k in range(K) for _ in range(counts[k])][::-1]  # any start: the shuffle is uniform
    R = 20_000
    sampled = _kernel_rows(true, predicted, weights, 0, R, K)
    assert all(tuple(row) in rows for row in sampled)
    for column in range(3):
        thresholds = sorted({float(v[column]) for v in exact})
        for threshold in thresholds:
            law = Fraction(sum(1 for v in exact if v[column] >= Fraction(threshold) - Fraction(1, 10**12)),
                           len(exact))
            estimate = float(np.mean(sampled[:, column] >= threshold * (1 - 1e-12)))
            se = max(float(law * (1 - law) / R) ** 0.5, 1 / R)
            assert abs(estimate - float(law)) <= 4 * se, (column, threshold, estimate, float(law))


def test_replicates_do_not_depend_on_the_block_split():
    true = [0, 1, 2, 3, 4] * 40
    predicted = [0, 0, 1, 2, 3] * 40
    K, weights = _setup(true, (80, 40, 40, 40, 0))
    whole = _kernel_rows(true, predicted, weights, 0, 300, K)
    parts = np.vstack([_kernel_rows(true, predicted, weights, first, count, K)
                       for first, count in ((0, 1), (1, 99), (100, 137), (237, 63))])
    assert whole.tobytes() == parts.tobytes()
    assert not np.array_equal(whole, _kernel_rows(true, predicted, weights, 0, 300, K, seed=SEED + 1))


def test_hits_are_the_exact_null_in_mean_and_accuracy_tail():
    """Moderate n: the kernel's accuracy tail within 4 SE of the exact rook-polynomial tail."""
    from tablegen.compute.exact.multiclass import accuracy_null

    rng = np.random.default_rng(3)
    true = list(rng.integers(0, 4, 300))
    predicted = list(rng.integers(0, 4, 300))
    true_counts = [true.count(k) for k in range(4)]
    predicted_counts = [predicted.count(k) for k in range(4)]
    K, weights = _setup(true, predicted_counts)
    R = 20_000
    hits = _kernel_rows(true, predicted, weights, 0, R, K)[:, 0]
    null = accuracy_null(true_counts, predicted_counts)
    for x in range(int(null.expected_hits) - 10, int(null.expected_hits) + 25, 3):
        tail = null.tail_ge(x)
        assert abs(np.mean(hits >= x) - tail) <= 4 * max((tail * (1 - tail) / R) ** 0.5, 1 / R), x


# --- the CUDA twin in the simulator ----------------------------------------------------------------------

def _cuda_case_rows(device: str) -> dict:
    from tablegen.compute.kernels.multiclass import class_weights, multiclass_key, multiclass_permutations

    results = {}
    for index, (true, predicted, first, count) in enumerate(CUDA_CASES):
        K = max(max(true), max(predicted)) + 1
        weights = class_weights(np.bincount(true, minlength=K), np.bincount(predicted, minlength=K))
        key0, key1 = multiclass_key(SEED, len(true), K)
        out = np.empty((count, 3))
        args = (np.asarray(true, np.int32), np.asarray(predicted, np.int32), *weights, key0, key1, first, out)
        if device == "cuda":
            from tablegen.compute.kernels.cuda.multiclass import multiclass_permutations_cuda

            multiclass_permutations_cuda(*args, threads=16)  # several launches
        else:
            multiclass_permutations(*args)
        results[f"case_{index}"] = out
    true, predicted, first, count = CUDA_CASES[0]  # launches cut by the scratch budget, not by threads
    if device == "cuda":
        from tablegen.compute.kernels.cuda import device as gpu
        from tablegen.compute.kernels.cuda.multiclass import multiclass_permutations_cuda

        K = max(max(true), max(predicted)) + 1
        weights = class_weights(np.bincount(true, minlength=K), np.bincount(predicted, minlength=K))
        out = np.empty((count, 3))
        gpu.SCRATCH_BYTES = 5 * (4 * len(true) + 8 * K)  # five replicates a launch
        assert gpu.replicates_per_launch(4096, count, 4 * len(true) + 8 * K) == min(5, count)
        multiclass_permutations_cuda(np.asarray(true, np.int32), np.asarray(predicted, np.int32), *weights,
                                     *multiclass_key(SEED, len(true), K), first, out)
        results["scratch_capped_0"] = out
    else:
        results["scratch_capped_0"] = results["case_0"]
    return results


def test_cuda_twin_is_bit_identical_in_the_simulator(tmp_path):
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: the CUDA multi-class kernel is NOT tested (pip install -e '.[test]')")
    out = tmp_path / "sim.npz"
    done = subprocess.run([sys.executable, str(HERE), str(out)], env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"},
                          capture_output=True, text=True, cwd=HERE.parents[2])
    assert done.returncode == 0, done.stderr[-4000:]
    cpu = _cuda_case_rows("cpu")
    with np.load(out) as sim:
        assert sorted(sim.files) == sorted(cpu)
        for name, values in cpu.items():
            assert sim[name].tobytes() == values.tobytes(), name


if __name__ == "__main__":
    import warnings

    warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)  # numpy uint64 scalars wrap
    np.savez(sys.argv[1], **_cuda_case_rows("cuda"))
