"""Wall seconds from a new process to its first answer: `tablegen --version`, `--help`, and exact lookups.

Each case runs ``--repeat`` times as a fresh process (the median is reported, beside the fastest),
after one untimed run that fills numba's on-disk cache.  The lookups run the public Python API
(imports included); the process also reports which heavy modules it imported, which must not
include dask, distributed, zarr or xarray .  Prints the load average: on a
shared machine every figure is inflated.

Usage::

    python benchmarks/bench_startup.py
    python benchmarks/bench_startup.py --repeat 9
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from machine import recording

TABLEGEN = str(Path(sys.executable).with_name("tablegen"))
HEAVY = ("dask", "distributed", "zarr", "xarray", "scipy.stats", "numba")
LOOKUP = """
import sys, tablegen
answer = tablegen.{function}({arguments})
print(float(answer), answer.method, ' '.join(m for m in {heavy!r} if m in sys.modules))
"""
CASES = [
    ("tablegen --version", [TABLEGEN, "--version"]),
    ("tablegen --help", [TABLEGEN, "--help"]),
    ("tablegen lookup auc --P 1000 --N 1000 --C 10", [TABLEGEN, "lookup", "auc", "--P", "1000", "--N", "1000",
                                                       "--C", "10"]),
]
for function, arguments in [
    ("critical_value", "'auc', 1000, 1000, C=10"),
    ("p_value", "'auc', 0.55, 1000, 1000, C=10"),
    ("critical_value", "'best_f1', 1000, 1000, C=10"),
    ("critical_value", "'best_balanced_accuracy', 1000, 1000, C=10"),
    ("critical_value", "'best_accuracy', 1000, 1000, C=10"),
    ("critical_value", "'tp_at_10', 1000, 1000, C=10"),
    ("p_value", "'precision_at_10', 0.5, 1000, 1000, C=10"),
]:
    code = LOOKUP.format(function=function, arguments=arguments, heavy=HEAVY)
    CASES.append((f"tablegen.{function}({arguments})", [sys.executable, "-c", code]))


def timed(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f}; {args.repeat} fresh processes per case, after one untimed\n")
    print("| case | median s | fastest s | last line printed |")
    print("|---|---:|---:|---|")
    for name, command in CASES:
        timed(command)  # fills numba's cache, warms the page cache
        runs = [timed(command) for _ in range(args.repeat)]
        seconds = [s for s, _ in runs]
        print(f"| `{name}` | {statistics.median(seconds):.2f} | {min(seconds):.2f} | {runs[-1][1][:70]} |", flush=True)


if __name__ == "__main__":
    with recording("startup"):
        main()
