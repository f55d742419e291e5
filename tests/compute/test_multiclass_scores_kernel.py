"""The multi-class from-scores permutation kernel against exact rationals and every distinct arrangement at tiny n,
and its CUDA twin.

Reference: Hand–Till M, the one-vs-rest macro AUC and top-k accuracy as exact rationals (Fractions) written from
the definitions (every pair of items compared, a tie ½; top-k by counting the classes above and tied).  Under the
null (the rows dealt to the items at random, labels fixed; equivalently the labels dealt over the rows) every
distinct arrangement of the labels is equally likely, so the enumerated rows are the exact law.  The CUDA twin runs
in numba-cuda's simulator in a child process (this file is the child's script:
``python tests/compute/test_multiclass_scores_kernel.py OUT.npz``).
"""

from __future__ import annotations

import importlib.util
import math
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
COLUMNS = 3


def _grid_matrix(rng, n, K, steps):
    """Rows on a grid of 1 / steps: many ties within rows and within columns."""
    return rng.multinomial(steps, np.ones(K) / K, size=n) / steps


#: (labels, probabilities, k): tiny cases with ties in the columns and across the k-th place.
def _tiny_cases():
    rng = np.random.default_rng(7)
    return [
        ([0, 0, 1, 1, 2, 2], _grid_matrix(rng, 6, 3, 4), 1),
        ([0, 1, 1, 2, 2, 2, 0], _grid_matrix(rng, 7, 3, 5), 2),
        ([0, 0, 1, 2, 3, 3, 1, 2], _grid_matrix(rng, 8, 4, 6), 2),
        ([0, 1, 0, 1, 0, 2, 2], rng.dirichlet(np.ones(3), 7), 1),  # no ties
    ]


TINY = _tiny_cases()


def _reference(labels, probabilities, k):
    """(Hand–Till M, OvR macro AUC, top-k accuracy) as Fractions from the definitions."""
    P = [[Fraction(v) for v in row] for row in probabilities]
    n, K = len(P), len(P[0])
    members = [[i for i in range(n) if labels[i] == c] for c in range(K)]

    def pair_auc(column, positives, negatives):
        won = sum((P[a][column] > P[b][column]) + Fraction(P[a][column] == P[b][column], 2)
                  for a in positives for b in negatives)
        return won / (len(positives) * len(negatives))

    pairs = [(i, j) for i in range(K) for j in range(i + 1, K)]
    hand_till = sum((pair_auc(i, members[i], members[j]) + pair_auc(j, members[j], members[i])) / 2
                    for i, j in pairs) / len(pairs)
    ovr = sum(pair_auc(c, members[c], [i for i in range(n) if labels[i] != c]) for c in range(K)) / K
    credit = 0
    for i in range(n):
        c = labels[i]
        higher = sum(P[i][d] > P[i][c] for d in range(K))
        tied = sum(P[i][d] == P[i][c] for d in range(K))
        credit += min(Fraction(1), max(Fraction(0), Fraction(k - higher, tied)))
    return hand_till, ovr, credit / n


def _setup(labels, probabilities, k):
    from tablegen.compute.multiclass_scores import score_tables

    codes = np.asarray(labels, np.int32)
    counts = np.bincount(codes, minlength=probabilities.shape[1]).astype(np.int64)
    return codes, (*score_tables(np.asarray(probabilities, float), k), counts)


def _arrangements(counts):
    """Every distinct arrangement of counts[c] copies of each class c, lexicographic (a plain recursion)."""
    n = sum(counts)
    remaining = list(counts)
    current = []

    def walk():
        if len(current) == n:
            yield tuple(current)
            return
        for c, left in enumerate(remaining):
            if left:
                remaining[c] -= 1
                current.append(c)
                yield from walk()
                current.pop()
                remaining[c] += 1
    yield from walk()


def _close(value, rational):
    return abs(Fraction(value) - rational) <= 8 * 2.0**-53 * max(abs(rational), Fraction(1, 2**60))


@pytest.mark.parametrize("case", range(len(TINY)))
def test_enumeration_visits_every_arrangement_once_and_scores_its_exact_rationals(case):
    from tablegen.compute.kernels.multiclass_scores import enumeration_values

    labels, probabilities, k = TINY[case]
    codes, tables = _setup(labels, probabilities, k)
    counts = tables[-1].tolist()
    expected = list(_arrangements(counts))
    assert len(expected) == math.factorial(len(labels)) // math.prod(math.factorial(c) for c in counts)
    out = np.empty((len(expected) + 3, COLUMNS))  # room to spare: the enumeration stops after the last
    assert enumeration_values(codes, *tables, True, out) == len(expected)
    for row, arrangement in zip(out, expected):
        for value, rational in zip(row, _reference(list(arrangement), probabilities, k)):
            assert _close(value, rational), (arrangement, value, rational)


@pytest.mark.parametrize("case", range(len(TINY)))
def test_sampled_rows_are_arrangements_and_tails_match_the_enumerated_law(case):
    """Every kernel row is one arrangement's row (bit for bit); every tail within 4 SE of the enumerated law."""
    from tablegen.compute.kernels.multiclass_scores import (
        enumeration_values,
        multiclass_score_permutations,
        multiclass_scores_key,
    )

    labels, probabilities, k = TINY[case]
    codes, tables = _setup(labels, probabilities, k)
    total = math.factorial(len(labels)) // math.prod(math.factorial(c) for c in tables[-1].tolist())
    law = np.empty((total, COLUMNS))
    enumeration_values(codes, *tables, True, law)
    rows = Counter(tuple(row) for row in law)
    R = 20_000
    sampled = np.empty((R, COLUMNS))
    multiclass_score_permutations(codes, *tables, True, *multiclass_scores_key(SEED, len(labels), len(tables[-1])), 0,
                                  sampled)
    assert all(tuple(row) in rows for row in sampled)
    for column in range(COLUMNS):
        for threshold in np.unique(law[:, column]):
            exact = float(np.mean(law[:, column] >= threshold))
            estimate = float(np.mean(sampled[:, column] >= threshold))
            se = max((exact * (1 - exact) / R) ** 0.5, 1 / R)
            assert abs(estimate - exact) <= 4 * se, (column, threshold, estimate, exact)


def test_observed_values_are_the_reference_on_larger_tied_matrices():
    from tablegen.compute.kernels.multiclass_scores import arrangement_values

    rng = np.random.default_rng(11)
    for n, K, k in ((30, 3, 1), (40, 5, 3)):
        labels = list(rng.permutation(np.arange(n) % K))
        probabilities = _grid_matrix(rng, n, K, 7)
        codes, tables = _setup(labels, probabilities, k)
        out = np.empty((1, COLUMNS))
        arrangement_values(codes, *tables, True, out, 0)
        for value, rational in zip(out[0], _reference(labels, probabilities, k)):
            assert _close(value, rational)


def test_hand_till_skipped_is_nan_and_the_other_columns_unchanged():
    from tablegen.compute.kernels.multiclass_scores import multiclass_score_permutations, multiclass_scores_key

    labels, probabilities, k = TINY[2]
    codes, tables = _setup(labels, probabilities, k)
    key = multiclass_scores_key(SEED, len(labels), 4)
    both, without = np.empty((50, COLUMNS)), np.empty((50, COLUMNS))
    multiclass_score_permutations(codes, *tables, True, *key, 0, both)
    multiclass_score_permutations(codes, *tables, False, *key, 0, without)
    assert np.isnan(without[:, 0]).all() and not np.isnan(both[:, 0]).any()
    assert without[:, 1:].tobytes() == both[:, 1:].tobytes()


def test_a_class_without_items_leaves_top_k_defined_and_one_vs_rest_nan():
    from tablegen.compute.kernels.multiclass_scores import (
        arrangement_values,
        multiclass_score_permutations,
        multiclass_scores_key,
    )

    labels = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0]
    probabilities = _grid_matrix(np.random.default_rng(3), 10, 4, 5)
    codes, tables = _setup(labels, probabilities, 2)
    assert tables[-1].tolist() == [4, 3, 3, 0]
    observed = np.empty((1, COLUMNS))
    arrangement_values(codes, *tables, False, observed, 0)
    P = [[Fraction(v) for v in row] for row in probabilities]
    top_k = sum(min(Fraction(1), max(Fraction(0), Fraction(2 - sum(r[d] > r[c] for d in range(4)),
                                                            sum(r[d] == r[c] for d in range(4)))))
                for r, c in zip(P, labels)) / len(labels)
    assert np.isnan(observed[0, 1]) and _close(observed[0, 2], top_k)
    out = np.empty((2000, COLUMNS))
    multiclass_score_permutations(codes, *tables, False, *multiclass_scores_key(SEED, 10, 4), 0, out)
    assert np.isnan(out[:, :2]).all()
    mean = float((tables[3] @ (tables[-1] / 10)).mean())
    assert abs(out[:, 2].mean() - mean) <= 4 * out[:, 2].std() / len(out) ** 0.5


def test_replicates_do_not_depend_on_the_block_split():
    from tablegen.compute.kernels.multiclass_scores import multiclass_score_permutations, multiclass_scores_key

    rng = np.random.default_rng(5)
    labels = list(rng.permutation(np.arange(60) % 4))
    probabilities = _grid_matrix(rng, 60, 4, 9)
    codes, tables = _setup(labels, probabilities, 2)

    def rows(first, count, seed=SEED):
        out = np.empty((count, COLUMNS))
        multiclass_score_permutations(codes, *tables, True, *multiclass_scores_key(seed, 60, 4), first, out)
        return out

    whole = rows(0, 300)
    parts = np.vstack([rows(first, count) for first, count in ((0, 1), (1, 99), (100, 137), (237, 63))])
    assert whole.tobytes() == parts.tobytes()
    assert not np.array_equal(whole, rows(0, 300, seed=SEED + 1))


def test_null_means_at_moderate_n():
    """Under the null E[A(i|j)] = 1/2 exactly (the labels exchangeable, ties ½), so both AUCs average 1/2;
    top-k averages (1/n) sum_i sum_c (n_c / n) credit(i, c).  Means within 4 SE of R = 4,000 replicates."""
    from tablegen.compute.kernels.multiclass_scores import multiclass_score_permutations, multiclass_scores_key

    rng = np.random.default_rng(8)
    n, K, k = 300, 5, 2
    labels = list(rng.choice(K, n, p=[0.1, 0.15, 0.2, 0.25, 0.3]))
    probabilities = rng.dirichlet(np.ones(K), n)
    codes, tables = _setup(labels, probabilities, k)
    out = np.empty((4000, COLUMNS))
    multiclass_score_permutations(codes, *tables, True, *multiclass_scores_key(SEED, n, K), 0, out)
    credit, counts = tables[3], tables[-1]
    means = (0.5, 0.5, float((credit @ (counts / n)).mean()))
    for column, mean in enumerate(means):
        se = out[:, column].std() / len(out) ** 0.5
        assert abs(out[:, column].mean() - mean) <= 4 * se, column


# --- the CUDA twin in the simulator ----------------------------------------------------------------------

def _cuda_case_rows(device: str) -> dict:
    from tablegen.compute.kernels.multiclass_scores import multiclass_score_permutations, multiclass_scores_key

    rng = np.random.default_rng(13)
    cases = [(TINY[1], 0, 40, True), (TINY[2], 1000, 24, True),
             ((list(rng.permutation(np.arange(25) % 5)), _grid_matrix(rng, 25, 5, 6), 3), 7, 20, False),
             (([0, 1, 2, 0, 1, 2, 0, 1, 2, 0], _grid_matrix(rng, 10, 4, 5), 2), 3, 20, False)]  # class 3 no items
    results = {}
    for index, ((labels, probabilities, k), first, count, hand_till) in enumerate(cases):
        codes, tables = _setup(labels, probabilities, k)
        if index == 3:
            tables = (*tables[:-1], np.bincount(codes, minlength=4).astype(np.int64))
        key0, key1 = multiclass_scores_key(SEED, len(labels), len(tables[-1]))
        out = np.empty((count, COLUMNS))
        if device == "cuda":
            from tablegen.compute.kernels.cuda.multiclass_scores import multiclass_score_permutations_cuda

            multiclass_score_permutations_cuda(codes, *tables, hand_till, key0, key1, first, out, threads=16)
        else:
            multiclass_score_permutations(codes, *tables, hand_till, key0, key1, first, out)
        results[f"case_{index}"] = out
    return results


def test_cuda_twin_is_bit_identical_in_the_simulator(tmp_path):
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: the CUDA multi-class scores kernel is NOT tested "
                    "(pip install -e '.[test]')")
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
