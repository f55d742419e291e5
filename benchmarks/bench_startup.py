"""CPU and wall seconds from a new process to its first answer: `tablegen --version`, `--help`, table and
exact lookups, and what checking the store against its manifest costs in a cold table lookup.

Each case runs ``--repeat`` times as a fresh process (medians are reported, beside the fastest wall
time), after one untimed run that fills numba's on-disk cache and the page cache.  CPU seconds are the
child's user + system time (``resource.getrusage(RUSAGE_CHILDREN)`` around each run), which a shared
machine inflates far less than wall time; the load average is printed before and after.  The Python
lookups report which heavy modules they imported.

The cold-start targets come first: a lookup that runs a lattice programme (``critical_value("best_f1", 300,
900, C=10)``, target 1 s of CPU) and a bundled-table lookup (``critical_value("average_precision", 100, 300,
C=10, method="table")``, target 0.5 s), each in a new process, with numba's cache warm (filled by an untimed
run) and cold (an empty ``NUMBA_CACHE_DIR`` per run, so the kernels compile), with numba generating code for
this CPU and, on an AVX-512 CPU, for AVX2 as well (``NUMBA_CPU_NAME=haswell`` and Haswell's features in
``NUMBA_CPU_FEATURES``: the code an AVX2 machine gets, whose cache entries are its own).  A table of stages
says where a warm lookup's CPU goes (each stage's imports, the call, and the interpreter's exit: the child's
total less its own clock at the end).

``--before SRC`` runs the targets and the cold table lookup from another tablegen source tree (for example
the previous commit: ``git archive HEAD~1 tablegen | tar -x -C /tmp/before``) beside this one, same
interpreter and environment, so the two are measured side by side.  The verification cost is the CPU time
spent in the reader's checks (root and chain, metadata, coordinates, chunk digests) inside a cold lookup,
timed by wrapping them in the child.

Usage::

    python benchmarks/bench_startup.py
    python benchmarks/bench_startup.py --repeat 9 --before /tmp/before
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import child_environment, load_average, recording, shown_path, vector_width

TABLEGEN = str(Path(sys.executable).with_name("tablegen"))
HERE = str(Path(__file__).resolve().parent.parent)
HEAVY = ("dask", "distributed", "pandas", "zarr", "xarray", "scipy.stats", "scipy.linalg", "numba", "psutil")
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
#: The cold-start targets: (what it is, the call, CPU seconds allowed in a new process with numba's cache warm).
TARGETS = [
    ("lattice programme", "tablegen.critical_value('best_f1', 300, 900, C=10)", 1.0),
    ("bundled table", "tablegen.critical_value('average_precision', 100, 300, C=10, method='table')", 0.5),
]
#: numba's code for an AVX2 machine (Haswell: AVX2 and FMA, no AVX-512), generated on any x86-64 CPU that runs it.
AVX2_CODEGEN = {"NUMBA_CPU_NAME": "haswell",
                "NUMBA_CPU_FEATURES": "+64bit,+avx,+avx2,+bmi,+bmi2,+cmov,+cx16,+cx8,+f16c,+fma,+fxsr,+lzcnt,+mmx,"
                                      "+movbe,+pclmul,+popcnt,+sahf,+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave"}
#: One target in a new process (from the source tree ``{tree}``, or the installed one where it is empty): its
#: answer, the CPU numba generated code for (or "-": numba not imported), the heavy modules imported, and the
#: process's CPU seconds at each stage (its imports, the call) for the stage table.
TARGET = """
import time
marks = [("interpreter and site", time.process_time())]
import json, sys
if {tree!r}:
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__module__", "")]
    sys.path.insert(0, {tree!r})
for module in {stages!r}:
    __import__(module)
    marks.append(("import " + module, time.process_time()))
import tablegen
answer = {call}
marks.append(("the call", time.process_time()))
cpu = "-"
if "numba" in sys.modules:
    import llvmlite.binding, numba
    cpu = numba.config.CPU_NAME or llvmlite.binding.get_host_cpu_name()
print(json.dumps(marks))
print(float(answer), answer.method, cpu, " ".join(m for m in {heavy!r} if m in sys.modules) or "none")
"""
#: The imports timed as stages before each target's call (the lattice lookup's numba: the kernels' jit module).
STAGES = {"lattice programme": ("numpy", "tablegen.lookup.api", "tablegen.compute.kernels.jit"),
          "bundled table": ("numpy", "tablegen.lookup.api", "zarr")}
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
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=child_environment())
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


def timed_target(call: str, *, tree: str = "", stages: tuple[str, ...] = (), env: dict | None = None,
                 cache: str | None = None) -> tuple[float, float, list, str]:
    """One target in a new process: (CPU s, wall s, its stage marks, its last line).  ``cache``: numba's cache
    directory (None: a new empty one, a cold cache)."""
    code = TARGET.format(tree=tree, stages=stages, call=call, heavy=HEAVY)
    with tempfile.TemporaryDirectory() as empty:
        environment = child_environment(**(env or {}), NUMBA_CACHE_DIR=cache or empty)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env=environment)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    marks, last = done.stdout.strip().splitlines()[-2:]
    return cpu, wall, json.loads(marks), last


def codegens() -> list[tuple[str, dict]]:
    """(name, environment) of each code generation measured: this CPU's, and AVX2's where this CPU has AVX-512."""
    width = vector_width()
    return [(f"this CPU ({width})", {}), *([("AVX2 (haswell)", AVX2_CODEGEN)] if width == "AVX-512" else [])]


def targets(repeat: int, before: str | None) -> None:
    """The cold-start targets: median CPU and wall seconds of ``repeat`` new processes per row, warm and cold
    numba cache, each code generation, this tree (and ``before``); then where a warm lookup's CPU goes."""
    trees = [("this tree", ""), *([(f"before: `{shown_path(before)}`", before)] if before else [])]
    print(f"cold-start targets ({repeat} new processes per row; warm: numba's cache filled by one untimed run "
          "first; cold: an empty cache each run, the kernels compile):\n")
    print("| lookup | tree | numba code for | numba cache | median CPU s | median wall s | target CPU s | "
          "answer, method, numba's CPU, heavy modules imported |")
    print("|---|---|---|---|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as warm:
        for (name, call, target), (tree_name, tree), (codegen, env), cache in [
                (t, r, g, c) for t in TARGETS for r in trees for g in codegens() for c in ("warm", "cold")]:
            directory = warm if cache == "warm" else None
            if cache == "warm":
                timed_target(call, tree=tree, env=env, cache=directory)
            runs = [timed_target(call, tree=tree, env=env, cache=directory) for _ in range(repeat)]
            cpu, wall = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
            verdict = f"{target:.1f}" + (" (met)" if cpu <= target else " (**not met**)") if cache == "warm" else "-"
            print(f"| {name} | {tree_name} | {codegen} | {cache} | {cpu:.2f} | {wall:.2f} | {verdict} | "
                  f"{runs[-1][3]} |", flush=True)
        print(f"\nwhere a warm lookup's CPU goes (numba's code for this CPU; median CPU s of {repeat} new processes, "
              "each stage's imports timed in turn, then the call; exit: the process's total less its clock at "
              "the end):\n")
        print("| lookup | tree | " + " | ".join(["stage", "CPU s"]) + " |")
        print("|---|---|---|---:|")
        for name, call, _ in TARGETS:
            for tree_name, tree in trees:
                timed_target(call, tree=tree, stages=STAGES[name], cache=warm)
                runs = [timed_target(call, tree=tree, stages=STAGES[name], cache=warm) for _ in range(repeat)]
                labels = [label for label, _ in runs[0][2]]
                spent = [[marks[0][1]] + [b - a for (_, a), (_, b) in zip(marks, marks[1:])] + [cpu - marks[-1][1]]
                         for cpu, _, marks, _ in runs]
                for index, label in enumerate([*labels, "exit (finalisation)"]):
                    print(f"| {name} | {tree_name} | {label} | {statistics.median(s[index] for s in spent):.3f} |")
                print(f"| {name} | {tree_name} | **total** | {statistics.median(r[0] for r in runs):.3f} |",
                      flush=True)
    print()


def side_by_side(before: str, repeat: int) -> None:
    """The cold table lookup from another source tree and from this one, alternating runs."""
    print(f"\ncold table lookup, side by side (`tablegen {' '.join(COLD)}`, {repeat} fresh processes each):\n")
    print("| tree | median CPU s | median wall s | heavy modules imported |")
    print("|---|---:|---:|---|")
    for name, tree in (("before", before), ("after (this tree)", HERE)):
        command = [sys.executable, "-c", FROM_TREE.format(heavy=HEAVY), tree, *COLD]
        timed(command)
        runs = [timed(command) for _ in range(repeat)]
        imported = subprocess.run(command, capture_output=True, text=True, check=True,
                                  env=child_environment()).stderr.strip().splitlines()[-1]
        print(f"| {name}: `{shown_path(tree)}` | {statistics.median(c for _, c, _ in runs):.2f} | "
              f"{statistics.median(w for w, _, _ in runs):.2f} | {imported.removeprefix('imported: ')} |", flush=True)


def verification_cost(repeat: int) -> None:
    """CPU seconds in the reader's checks within a cold table lookup, and their share of the process's CPU."""
    command = [sys.executable, "-c", VERIFY_COST.format(cold=COLD)]
    subprocess.run(command, capture_output=True, check=True, env=child_environment())
    shares = []
    for _ in range(repeat):
        line = subprocess.run(command, capture_output=True, text=True, check=True,
                              env=child_environment()).stdout.strip().splitlines()[-1]
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
    parser.add_argument("--before", default=None, help="an earlier tablegen source tree to run the targets and "
                                                       "the cold table lookup from, beside this one")
    parser.add_argument("--targets-only", action="store_true", help="only the cold-start targets (not recorded)")
    args = parser.parse_args(argv)
    print(f"load average {load_average()} at the start; CPU = user + system seconds of the child (getrusage)\n")
    targets(args.repeat, os.path.abspath(args.before) if args.before else None)
    if args.targets_only:
        return
    print(f"{args.repeat} fresh processes per case, after one untimed:\n")
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
    if "--targets-only" in sys.argv:
        main()
    else:
        with recording("startup"):
            main()
