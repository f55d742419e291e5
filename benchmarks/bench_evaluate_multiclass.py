"""What :func:`tablegen.evaluate` costs with more than two classes, and where the time goes, against the target.

    .venv/bin/python benchmarks/bench_evaluate_multiclass.py              # 20 models x 10^4 items x 10 classes
    .venv/bin/python benchmarks/bench_evaluate_multiclass.py --cases 5x1e3x5

Each case runs ``tablegen.evaluate(labels, predictions)`` (every multi-class metric, default C, R and seed) in
this process after a warm-up on a tiny input (numba compiles, or loads its cache, there), on synthetic predictions:
labels uniform over K classes, model j right with probability 0.3 + 0.4 j / M and otherwise a uniformly random
wrong class.  Reported: CPU seconds (``time.process_time``: the figure a loaded machine inflates least), wall
seconds, the report's own estimate (:func:`~tablegen.compare.report.multiclass.multiclass_cost`), and the CPU
seconds of each stage, timed by wrapping the stage's function of :mod:`tablegen.compare.report.multiclass_tests`:

- null pass: the label permutations scoring every model and metric (max-T and the Monte Carlo verdicts);
- bootstrap: the stratified resamples of every model;
- verdicts: each model against the best of C random classifiers (exact accuracy/kappa where cheap);
- max-T: the step-down p-values from the pass;
- paired: the winner against each other model (McNemar; the swap permutation for the other metrics);
- the rest: input checks, intervals (BCa from the resamples), building the report.

The target is the issue's (20 models x 10^4 items x 10 classes <= 30 s CPU); it is reported, not asserted.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import cpu_model, load_average, recording, vector_width  # noqa: E402

#: name -> (models, items, classes, target CPU seconds)
CASES = {"20x1e4x10": (20, 10_000, 10, 30.0), "5x1e3x5": (5, 1_000, 5, None)}
STAGES = [("null pass", "permutation_null"), ("bootstrap", "bootstrap"), ("verdicts", "versus_random"),
          ("max-T", "selection"), ("paired", "paired_tests")]


def _data(M: int, n: int, K: int):
    rng = np.random.default_rng(41)
    y = rng.integers(0, K, size=n)
    models = {}
    for j in range(M):
        right = rng.random(n) < 0.3 + 0.4 * j / M
        models[f"m{j:02d}"] = np.where(right, y, (y + rng.integers(1, K, size=n)) % K)
    return y, models


def _timed(spent: dict):
    from tablegen.compare.report import multiclass_tests

    for name, function in STAGES:
        original = getattr(multiclass_tests, function)

        @functools.wraps(original)
        def wrapper(*args, _original=original, _name=name, **kwargs):
            start = time.process_time()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[_name] = spent.get(_name, 0.0) + time.process_time() - start

        setattr(multiclass_tests, function, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["20x1e4x10"], choices=list(CASES))
    args = parser.parse_args()
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    import tablegen
    from tablegen.compare.report.multiclass import multiclass_cost
    from tablegen.compare.report.multiclass_input import multiclass_data

    spent: dict = {}
    _timed(spent)
    tablegen.evaluate(*_data(3, 400, 4))  # warm-up: compile or load every kernel
    print(f"CPU: {cpu_model()} ({vector_width()}); load average {load_average()} at the start")
    print()
    print("| case | CPU s | wall s | estimate s | target s | " + " | ".join(n for n, _ in STAGES) + " | rest |")
    print("|---|---:|---:|---:|---:|" + "---:|" * (len(STAGES) + 1))
    for case in args.cases:
        M, n, K, target = CASES[case]
        y, models = _data(M, n, K)
        spent.clear()
        from tablegen.compare.pairwise.bootstrap import BOOTSTRAP_RESAMPLES
        from tablegen.compare.pairwise.tests import DEFAULT_SWAPS
        from tablegen.compare.report.multiclass_tests import METRICS
        from tablegen.lookup.multiclass import default_replicates

        estimate = multiclass_cost(multiclass_data(y, models), METRICS, M, default_replicates(M, 0.05),
                                   DEFAULT_SWAPS, BOOTSTRAP_RESAMPLES).seconds
        cpu, wall = time.process_time(), time.perf_counter()
        tablegen.evaluate(y, models)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        stages = [spent.get(name, 0.0) for name, _ in STAGES]
        print(f"| {M} models x {n:,} items x {K} classes | {cpu:.1f} | {wall:.1f} | {estimate:.1f} | "
              f"{'–' if target is None else f'{target:g}'} | " + " | ".join(f"{s:.2f}" for s in stages)
              + f" | {cpu - sum(stages):.2f} |")
    print()
    print(f"load average {load_average()} at the end")


if __name__ == "__main__":
    with recording("evaluate_multiclass"):
        main()
