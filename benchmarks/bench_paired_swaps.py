"""The paired swap-permutation tests of one report, from an earlier tree and this one (the bound, the sequential rule
and, since it came, its early look): each pair's p-value, method and patterns drawn, and the CPU seconds, on
``bench_evaluate``'s synthetic predictions.

Runs ``pairwise_tests(labels, models, metric=m, against="winner", swap_nulls=...)`` for the four metrics the report
tests by the swap permutation (best accuracy, best F1, best balanced accuracy, average precision), sharing one
``SwapNulls`` as ``tablegen.evaluate`` does, in a fresh process per tree (``--before SRC``: a tablegen source tree
from before the change, e.g. ``git archive <commit> tablegen | tar -x -C /tmp/before``), one numba thread; the
kernels are compiled by a small warm-up call first, outside the time.

    .venv/bin/python benchmarks/bench_paired_swaps.py --before /tmp/before --models 10 --items 10000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from machine import load_average, recording

CHILD = r"""
import json, sys, time
tree, models, items = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if tree:
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__module__", "")]
    sys.path.insert(0, tree)
import numpy as np
from tablegen.compare import pairwise_tests
from tablegen.compare.pairwise.tests import SwapNulls

def data(models, items):
    rng = np.random.default_rng(20261128)
    y = (rng.random(items) < 0.3).astype(np.int64)
    y[:2] = (1, 0)
    lift = 0.1 + 0.9 * np.arange(1, models + 1) / models
    return y, {f"m{j:03d}": lift[j] * y + rng.normal(size=items) for j in range(models)}

metrics = ["best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision"]
def run(y, scores):
    from tablegen.compare.pairwise.validation import kernel_column
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.metrics_from_scores import threshold_groups
    nulls = SwapNulls()  # planned as tablegen.evaluate plans it: each metric with its winner
    for m in metrics:
        spec = get_metric(m)
        values = {k: spec.score_groups(threshold_groups(y, s)) for k, s in scores.items()}
        nulls.plan(kernel_column(spec)[0], scores[max(values, key=values.get)])
    return {m: pairwise_tests(y, scores, metric=m, method="permutation", against="winner", swap_nulls=nulls)
            for m in metrics}

run(*data(3, 40))  # compile
y, scores = data(models, items)
start = time.process_time()
results = run(y, scores)
seconds = time.process_time() - start
rows = [{"metric": m, "b": b, "p": t.p_value, "method": t.method, "drawn": t.replicates,
         "early": getattr(t, "stopped_early", False)}
        for m, r in results.items() for (a, b), t in r.tests.items()]
print(json.dumps({"seconds": seconds, "rows": rows}))
"""


def run(tree: str, models: int, items: int) -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               TABLEGEN_TIME_LIMIT=str(10**9))
    out = subprocess.run([sys.executable, "-c", CHILD, tree, str(models), str(items)], capture_output=True, text=True,
                         env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="a tablegen source tree from before the change")
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--items", type=int, default=10_000)
    args = parser.parse_args(argv)
    print(f"load average {load_average()} at the start; {args.models} models x "
          f"{args.items:,} items, 30% positives; R unset (at most 10,000 patterns), seed 2005\n")
    old, new = run(os.path.abspath(args.before), args.models, args.items), run("", args.models, args.items)
    print(f"CPU seconds of the four metrics' paired tests: before {old['seconds']:.2f}, after {new['seconds']:.2f} "
          f"({old['seconds'] / new['seconds']:.2f}x)\n")
    print("| metric | winner vs | p before (the --before tree) | p after | method after | patterns drawn after |")
    print("|---|---|---:|---:|---|---:|")
    for b, a in zip(old["rows"], new["rows"]):
        assert (b["metric"], b["b"]) == (a["metric"], a["b"])
        p = ("<= " if a["method"] == "bound" else "") + f"{a['p']:.3g}"
        drawn = "0" if a["drawn"] is None else f"{a['drawn']:,}"
        method = a["method"] + (" (early look)" if a["early"] else "")
        print(f"| {a['metric']} | {a['b']} | {b['p']:.3g} | {p} | {method} | {drawn} |")
    print(f"\nload average {load_average()} at the end")


if __name__ == "__main__":
    with recording("paired_swaps"):
        main()
