"""CPU time of reading a K-class predictions CSV as ``tablegen evaluate`` does
(:func:`tablegen.cli.multiclass_csv.read_multiclass_predictions`), by layout.

    .venv/bin/python benchmarks/bench_multiclass_csv.py               # about half a minute on one core
    .venv/bin/python benchmarks/bench_multiclass_csv.py --rows 100000 # a quick look

Each case writes a file of ``--rows`` items, K = 10 classes: predicted labels (text classes ``class0`` ...
``class9``, and integers 0 ... 9) for 5 models, and class probabilities (MODEL:CLASS columns, 6 decimals) for 2
models; then reads and checks it (classes matched, rows summing to 1), timed in CPU seconds
(``time.process_time``, this process) and wall seconds.  The issue asks for 10^6 rows of K = 10 labels read without
a Python step per row: the figures are reported, not asserted (the test suite checks that the row-by-row reader is
not used: tests/cli/test_cli_evaluate_multiclass.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tablegen.cli.multiclass_csv import read_multiclass_predictions

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import recording  # noqa: E402

K = 10


def _write_labels(path: str, rows: int, models: int, text: bool, rng) -> None:
    y = rng.integers(0, K, rows)
    columns = [y] + [np.where(rng.random(rows) < 0.5, y, rng.integers(0, K, rows)) for _ in range(models)]
    names = np.array([f"class{k}" if text else str(k) for k in range(K)])
    table = np.column_stack([names[c] for c in columns])
    with open(path, "w") as handle:
        handle.write("label," + ",".join(f"m{j}" for j in range(models)) + "\n")
        np.savetxt(handle, table, fmt="%s", delimiter=",")


def _write_probabilities(path: str, rows: int, models: int, rng) -> None:
    y = rng.integers(0, K, rows)
    blocks = []
    for _ in range(models):
        logits = rng.normal(size=(rows, K))
        logits[np.arange(rows), y] += 2.0
        p = np.round(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), 6)
        p[:, -1] = np.round(1.0 - p[:, :-1].sum(axis=1), 6)
        blocks.append(p)
    with open(path, "w") as handle:
        handle.write("label," + ",".join(f"m{j}:{k}" for j in range(models) for k in range(K)) + "\n")
        np.savetxt(handle, np.column_stack([y, *blocks]), fmt=["%d"] + ["%.6f"] * (K * models), delimiter=",")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    rng = np.random.default_rng(2005)
    folder = tempfile.mkdtemp()
    cases = [("labels, text classes", 5, lambda p: _write_labels(p, args.rows, 5, True, rng)),
             ("labels, integer classes", 5, lambda p: _write_labels(p, args.rows, 5, False, rng)),
             ("probabilities", 2, lambda p: _write_probabilities(p, args.rows, 2, rng))]
    print(f"{args.rows:,} rows, K = {K} classes; CPU and wall seconds of read_multiclass_predictions")
    print("")
    print("| layout | models | file size | CPU s | wall s |")
    print("|---|---|---|---|---|")
    for name, models, write in cases:
        path = os.path.join(folder, "preds.csv")
        write(path)
        start, wall = time.process_time(), time.perf_counter()
        read = read_multiclass_predictions(path, "label")
        cpu, wall = time.process_time() - start, time.perf_counter() - wall
        assert read.labels.size == args.rows and len(read.classes) == K
        print(f"| {name} | {models} | {os.path.getsize(path) / 1e6:.0f} MB | {cpu:.2f} | {wall:.2f} |")
        os.remove(path)
    os.rmdir(folder)
    return 0


if __name__ == "__main__":
    with recording("multiclass_csv"):
        status = main()
    raise SystemExit(status)
