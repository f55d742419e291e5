"""What :func:`tablegen.evaluate` costs with more than two classes, and where the time goes, against the target.

    .venv/bin/python benchmarks/bench_evaluate_multiclass.py   # 20 models x 10^4 items x 10 classes, both forms
    .venv/bin/python benchmarks/bench_evaluate_multiclass.py --cases 5x1e3x5 5x1e3x5-probabilities

Each case runs ``tablegen.evaluate(labels, predictions)`` (every multi-class metric, default C, R and seed) in
this process after a warm-up on a tiny input (numba compiles, or loads its cache, there), on synthetic predictions:
labels uniform over K classes, model j right with probability 0.3 + 0.4 j / M and otherwise a uniformly random
wrong class.  The ``-probabilities`` cases give each model a probability matrix instead (softmax of standard normal
logits plus 0.2 + 1.6 j / M on the true class) and ask for the probability metrics too (Hand–Till AUC, one-vs-rest
macro AUC, top-2 accuracy: their pass, bootstrap and paired tests,
:mod:`tablegen.compare.report.multiclass_probabilities`).  Reported: CPU seconds (``time.process_time``: the figure
a loaded machine inflates least), wall seconds, the report's own estimate
(:func:`~tablegen.compare.report.multiclass.multiclass_cost`), and the CPU seconds of each stage, timed by wrapping
the stage's function of :mod:`tablegen.compare.report` (``STAGES``):

- null pass: the label permutations scoring every model and metric (max-T and the Monte Carlo verdicts);
- bootstrap: the stratified resamples of every model;
- verdicts: each model against the best of C random classifiers (exact accuracy/kappa where cheap);
- max-T: the step-down p-values from the pass;
- paired: the winner against each other model (McNemar; the swap permutation for the other metrics);
- scores pass, scores bootstrap, scores verdicts, scores paired: the same for the probability metrics (the max-T
  step of both is in "max-T"; a pair's swap patterns are drawn when its first metric is asked);
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
CASES = {"20x1e4x10": (20, 10_000, 10, 30.0), "5x1e3x5": (5, 1_000, 5, None),
         "20x1e4x10-probabilities": (20, 10_000, 10, 30.0), "5x1e3x5-probabilities": (5, 1_000, 5, None)}
#: The probability metrics asked for in the ``-probabilities`` cases.
SCORE_METRICS = ("hand_till_auc", "ovr_macro_auc", "top_2_accuracy")
#: (column, module under tablegen.compare.report, function) of each timed stage.
STAGES = [("null pass", "multiclass_tests", "permutation_null"), ("bootstrap", "multiclass_resampling", "bootstrap"),
          ("verdicts", "multiclass_tests", "versus_random"), ("max-T", "multiclass_tests", "selection"),
          ("paired", "multiclass_resampling", "paired_tests"),
          ("scores pass", "multiclass_probabilities", "score_null"),
          ("scores bootstrap", "multiclass_probabilities", "score_bootstrap"),
          ("scores verdicts", "multiclass_probabilities", "score_verdicts"),
          ("scores paired", "multiclass_probabilities", "score_paired_tests")]


def _data(M: int, n: int, K: int, probabilities: bool = False):
    rng = np.random.default_rng(41)
    y = rng.integers(0, K, size=n)
    models = {}
    for j in range(M):
        if probabilities:
            logits = rng.normal(size=(n, K)) + (0.2 + 1.6 * j / M) * np.eye(K)[y]
            models[f"m{j:02d}"] = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
            continue
        right = rng.random(n) < 0.3 + 0.4 * j / M
        models[f"m{j:02d}"] = np.where(right, y, (y + rng.integers(1, K, size=n)) % K)
    return y, models


def _timed(spent: dict):
    import importlib

    for name, module_name, function in STAGES:
        module = importlib.import_module(f"tablegen.compare.report.{module_name}")
        original = getattr(module, function)

        @functools.wraps(original)
        def wrapper(*args, _original=original, _name=name, **kwargs):
            start = time.process_time()
            try:
                return _original(*args, **kwargs)
            finally:
                spent[_name] = spent.get(_name, 0.0) + time.process_time() - start

        setattr(module, function, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=["20x1e4x10", "20x1e4x10-probabilities"], choices=list(CASES))
    args = parser.parse_args()
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    import tablegen
    from tablegen.compare.pairwise.bootstrap import BOOTSTRAP_RESAMPLES
    from tablegen.compare.pairwise.tests import DEFAULT_SWAPS
    from tablegen.compare.report.multiclass import multiclass_cost
    from tablegen.compare.report.multiclass_input import multiclass_data
    from tablegen.compare.report.multiclass_tests import METRICS
    from tablegen.lookup.multiclass import default_replicates

    spent: dict = {}
    _timed(spent)
    tablegen.evaluate(*_data(3, 400, 4))  # warm-up: compile or load every kernel
    tablegen.evaluate(*_data(3, 400, 4, True), metrics=[*METRICS, *SCORE_METRICS], R=200)
    print(f"CPU: {cpu_model()} ({vector_width()}); load average {load_average()} at the start")
    print()
    print("| case | CPU s | wall s | estimate s | target s | " + " | ".join(n for n, _, _ in STAGES) + " | rest |")
    print("|---|---:|---:|---:|---:|" + "---:|" * (len(STAGES) + 1))
    for case in args.cases:
        M, n, K, target = CASES[case]
        probabilities = case.endswith("probabilities")
        y, models = _data(M, n, K, probabilities)
        scores = SCORE_METRICS if probabilities else ()
        spent.clear()
        estimate = multiclass_cost(multiclass_data(y, models), METRICS, M, default_replicates(M, 0.05),
                                   DEFAULT_SWAPS, BOOTSTRAP_RESAMPLES, scores).seconds
        cpu, wall = time.process_time(), time.perf_counter()
        tablegen.evaluate(y, models, metrics=[*METRICS, *scores])
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        stages = [spent.get(name, 0.0) for name, _, _ in STAGES]
        what = " (probabilities; + " + ", ".join(scores) + ")" if probabilities else ""
        print(f"| {M} models x {n:,} items x {K} classes{what} | {cpu:.1f} | {wall:.1f} | {estimate:.1f} | "
              f"{'–' if target is None else f'{target:g}'} | " + " | ".join(f"{s:.2f}" for s in stages)
              + f" | {cpu - sum(stages):.2f} |")
    print()
    print(f"load average {load_average()} at the end")


if __name__ == "__main__":
    with recording("evaluate_multiclass"):
        main()
