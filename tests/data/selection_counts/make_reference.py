"""The label-permutation null counts of the max-T test as the one-metric kernel of tablegen 5f9b0d4 gave them.

Before the max-T test scored every metric of a report in one pass (``engine.null_counts_all``), each metric ran its
own pass (``engine.null_counts`` over ``kernels.permutation.permutation_counts`` / ``enumeration_counts``, a walk
per metric and model).  This script records that kernel's answers on the cases of :data:`CASES` (each metric
column, TP at k inside, at and past n; untied scores, ties, and ties so heavy that the old kernel took its
branching walk; random arrangements and every arrangement): each case's maxima as the SHA-256 of their bytes, and
its hit counts.  ``tests/compare/test_selection_fused.py`` checks today's one-metric and fused passes against them,
bit for bit.  Written by running this file from the tree of commit 5f9b0d4::

    git worktree add /tmp/before 5f9b0d4
    cd tests/data/selection_counts && ../../../.venv/bin/python make_reference.py /tmp/before > expected.json
"""

from __future__ import annotations

import hashlib
import json
import sys

import numpy as np

#: (n, P, models, R (0: every arrangement), decimals of the scores (None: untied; 0 of scores x 0.3: heavy ties))
CASES = [(14, 5, 3, 300, 1), (40, 12, 4, 500, None), (31, 9, 5, 400, 0), (12, 5, 3, 0, 1), (16, 8, 4, 0, None),
         (60, 30, 6, 300, 2), (25, 3, 3, 300, 1), (25, 22, 3, 300, 1), (96, 40, 3, 200, -1)]


def columns(n: int) -> list[tuple[int, int]]:
    """(kernel column, k) of every case: AUC .. best MCC, and TP at k = 4, n, n + 3."""
    return [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 4), (6, n), (6, n + 3)]


def case_inputs(index: int):
    """The sorted models, thresholds and ranking of case ``index``: (scores, P, thresholds by column, ranked)."""
    n, P, K, R, decimals = CASES[index]
    rng = np.random.default_rng(index)
    scores = rng.normal(size=(K, n))
    if decimals == -1:  # two levels: about one group end in 48 items
        scores = (scores > 0).astype(float)
    elif decimals is not None:
        scores = np.round(scores * (0.3 if decimals == 0 else 1), max(decimals, 0))
    ranked = rng.permutation(K).astype(np.int64)
    return scores, P, ranked


def thresholds(K: int, P: int, column: int) -> np.ndarray:
    return np.linspace(0.5, 0.8, K) * (P if column == 6 else 1)


def reference(engine, mcc_weights) -> dict:
    """Every case's answer by ``engine.null_counts`` (the module of the tree run)."""
    found = {}
    for index, (n, P, K, R, _) in enumerate(CASES):
        scores, P, ranked = case_inputs(index)
        sorted_models = engine.models_sorted(scores)
        for column, k_cut in columns(n):
            counts = engine.null_counts(sorted_models, P, column, k_cut, mcc_weights(P, n - P, n + 1),
                                        thresholds(K, P, column), ranked, exact=R == 0, R=R,
                                        key=(np.uint64(n), np.uint64(index)))
            found[f"{index}/{column}/{k_cut}"] = {
                "maxima_sha256": hashlib.sha256(np.ascontiguousarray(counts.maxima).tobytes()).hexdigest(),
                "raw_hits": counts.raw_hits.tolist(), "step_hits": counts.step_hits.tolist(),
                "arrangements": int(counts.arrangements)}
    return found


if __name__ == "__main__":
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__module__", "")]
    sys.path.insert(0, sys.argv[1])
    from tablegen.compare.selection import engine
    from tablegen.compute.kernels.ranking import mcc_weights

    print(f"# {engine.__file__}", file=sys.stderr)
    json.dump(reference(engine, mcc_weights), sys.stdout, indent=0, sort_keys=True)
    print()
