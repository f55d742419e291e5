"""CPU and wall seconds from a new process to its first answer: `tablegen --version`, `--help`, table and
exact lookups, and what checking the store against its manifest costs in a cold table lookup.

Each case runs ``--repeat`` times as a fresh process (medians are reported, beside the fastest wall
time), after one untimed run that fills numba's on-disk cache and the page cache.  CPU seconds are the
child's user + system time (``resource.getrusage(RUSAGE_CHILDREN)`` around each run), which a shared
machine inflates far less than wall time; the load average is printed before and after.  The Python
lookups report which heavy modules they imported.

``--before SRC`` runs the cold table lookup from another tablegen source tree (for example the previous
commit: ``git archive HEAD~1 tablegen | tar -x -C /tmp/before``) beside this one, same interpreter and
environment, so the two are measured side by side.  The verification cost is the CPU time spent in the
reader's checks (root and chain, metadata, coordinates, chunk digests) inside a cold lookup, timed by
wrapping them in the child.

Usage::

    python benchmarks/bench_startup.py
    python benchmarks/bench_startup.py --repeat 9 --before /tmp/before
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from machine import load_average, recording

TABLEGEN = str(Path(sys.executable).with_name("tablegen"))
HERE = str(Path(__file__).resolve().parent.parent)
HEAVY = ("dask", "distributed", "pandas", "zarr", "xarray", "scipy.stats", "numba")
COLD = ["lookup", "average_precision", "--P", "100", "--N", "300", "--C", "10"]
LOOKUP = """
import sys, tablegen
answer = tablegen.{function}({arguments})
print(float(answer), answer.method, ' '.join(m for m in {heavy!r} if m in sys.modules))
"""
#: Runs ``tablegen ARGS`` from the source tree SRC (the editable install's finder set aside), then says which
#: heavy modules it imported (on stderr).
FROM_TREE = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__module__", "")]
sys.path.insert(0, sys.argv[1])
sys.argv = ["tablegen", *sys.argv[2:]]
import runpy
try:
    runpy.run_module("tablegen", run_name="__main__", alter_sys=True)
finally:
    print("imported:", " ".join(m for m in {heavy!r} if m in sys.modules) or "none", file=sys.stderr)
"""
#: A cold table lookup with the reader's checks timed (CPU seconds in them, and in the whole process).
VERIFY_COST = """
import resource, sys, time
from tablegen.store import reader
spent = [0.0]
def timed(function):
    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - start
    return wrapper
for name in ("read_root", "check_array_metadata", "check_coordinate", "digest"):
    setattr(reader, name, timed(getattr(reader, name)))
from tablegen.cli.main import main
main({cold!r})
usage = resource.getrusage(resource.RUSAGE_SELF)
print(f"verification {{spent[0]:.4f}} total {{usage.ru_utime + usage.ru_stime:.4f}}")
"""
CASES = [
    ("tablegen --version", [TABLEGEN, "--version"]),
    ("tablegen --help", [TABLEGEN, "--help"]),
    ("tablegen " + " ".join(COLD), [TABLEGEN, *COLD]),
    ("tablegen lookup auc --P 1000 --N 1000 --C 10", [TABLEGEN, "lookup", "auc", "--P", "1000", "--N", "1000",
                                                       "--C", "10"]),
]
for function, arguments in [
    ("critical_value", "'average_precision', 100, 300, C=10, method='table'"),
    ("critical_value", "'auc', 1000, 1000, C=10"),
    ("p_value", "'auc', 1000, 1000, C=10, score=0.55"),
    ("critical_value", "'best_f1', 1000, 1000, C=10"),
    ("critical_value", "'best_balanced_accuracy', 1000, 1000, C=10"),
    ("critical_value", "'best_accuracy', 1000, 1000, C=10"),
    ("critical_value", "'tp_at_10', 1000, 1000, C=10"),
    ("p_value", "'precision_at_10', 1000, 1000, C=10, score=0.5"),
]:
    code = LOOKUP.format(function=function, arguments=arguments, heavy=HEAVY)
    CASES.append((f"tablegen.{function}({arguments})", [sys.executable, "-c", code]))


def timed(command: list[str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, last line it printed on stdout, or on stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    text = (done.stdout.strip() or done.stderr.strip()).splitlines()
    return wall, cpu, text[-1] if text else ""


def repeated(command: list[str], repeat: int) -> tuple[float, float, float, str]:
    """(median CPU s, median wall s, fastest wall s, last line) over ``repeat`` fresh processes, after one untimed."""
    timed(command)  # fills numba's cache, warms the page cache
    runs = [timed(command) for _ in range(repeat)]
    walls, cpus = [w for w, _, _ in runs], [c for _, c, _ in runs]
    return statistics.median(cpus), statistics.median(walls), min(walls), runs[-1][2]


def side_by_side(before: str, repeat: int) -> None:
    """The cold table lookup from another source tree and from this one, alternating runs."""
    print(f"\ncold table lookup, side by side (`tablegen {' '.join(COLD)}`, {repeat} fresh processes each):\n")
    print("| tree | median CPU s | median wall s | heavy modules imported |")
    print("|---|---:|---:|---|")
    for name, tree in (("before", before), ("after (this tree)", HERE)):
        command = [sys.executable, "-c", FROM_TREE.format(heavy=HEAVY), tree, *COLD]
        timed(command)
        runs = [timed(command) for _ in range(repeat)]
        imported = subprocess.run(command, capture_output=True, text=True, check=True).stderr.strip().splitlines()[-1]
        print(f"| {name}: `{tree}` | {statistics.median(c for _, c, _ in runs):.2f} | "
              f"{statistics.median(w for w, _, _ in runs):.2f} | {imported.removeprefix('imported: ')} |", flush=True)


def verification_cost(repeat: int) -> None:
    """CPU seconds in the reader's checks within a cold table lookup, and their share of the process's CPU."""
    command = [sys.executable, "-c", VERIFY_COST.format(cold=COLD)]
    subprocess.run(command, capture_output=True, check=True)
    shares = []
    for _ in range(repeat):
        line = subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
        _, spent, _, total = line.split()
        shares.append((float(spent), float(total)))
    spent, total = statistics.median(s for s, _ in shares), statistics.median(t for _, t in shares)
    print(f"\nverification in a cold table lookup (root attributes and the manifest's digest; then the metadata, "
          f"values or chunk digest of all it reads: 12 arrays' metadata, 6 coordinates, 6 chunks): median "
          f"{1000 * spent:.1f} ms CPU of {total:.3f} s CPU for the whole process ({100 * spent / total:.1f}%; "
          f"{repeat} fresh processes)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", default=None, help="an earlier tablegen source tree to run the cold table "
                                                       "lookup from, beside this one")
    args = parser.parse_args(argv)
    print(f"load average {load_average()} at the start; {args.repeat} fresh processes per case, after one "
          f"untimed; CPU = user + system seconds of the child (getrusage)\n")
    print("| case | median CPU s | median wall s | fastest wall s | last line printed |")
    print("|---|---:|---:|---:|---|")
    for name, command in CASES:
        cpu, wall, fastest, last = repeated(command, args.repeat)
        print(f"| `{name}` | {cpu:.2f} | {wall:.2f} | {fastest:.2f} | {last[:70]} |", flush=True)
    if args.before:
        side_by_side(os.path.abspath(args.before), args.repeat)
    verification_cost(args.repeat)
    print(f"\nload average {load_average()} at the end")


if __name__ == "__main__":
    with recording("startup"):
        main()
