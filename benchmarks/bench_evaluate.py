"""What :func:`tablegen.evaluate` costs on predictions at scale, and where the time goes, against the targets.

Every case runs ``tablegen.evaluate(labels, scores, C=C)`` with all default metrics (AUC, best accuracy, best
F1, best balanced accuracy, average precision) in a fresh process, one numba thread, on synthetic predictions:
30% positives, model j's scores ``0.1 + 0.9 j / K`` times the label plus standard normal noise (no ties, a
clear winner).  C = 100 (or the number of models where that is larger: 200 models need C >= 200).  Reported:
CPU seconds of the child (user + system: the figure a loaded machine inflates least), wall seconds, its peak
RSS, and the CPU seconds of each stage, timed by wrapping the stage's function in the child:

- values: each model's threshold groups and metric values (``from_scores.threshold_groups``, ``_values``);
- best-of-C verdict: the winner against C random classifiers (``from_scores._verdict``);
- max-T selection test: the winner against the models given (``selection_tests_noting``: every metric from one
  pass; ``selection_test`` per metric in a tree from before it);
- paired tests: the winner against each other model (``report.evaluate._paired_tests``);
- bootstrap intervals: each model's BCa interval (``report.evaluate._intervals``);
- the rest: imports, input checks, building the report.

A case that runs past ``--max-seconds`` CPU seconds (counted once its data is built) is stopped (the child's
``RLIMIT_CPU``; on a loaded machine a wall-clock cap of four times that, plus a minute, may stop it first) and
reported as "over N s" (N: the CPU seconds it had run), with the seconds its stages had run until then: partial
figures (a stage may be called again later, per metric or per model), marked so and given no ratio.  Evaluate's
own time guard is lifted (``TABLEGEN_TIME_LIMIT``), so that a case is measured up to the cap rather than refused by
its estimate.
The targets are the issue's; they are reported beside the figures, not asserted.  The ``csv`` case times reading a
10^6-row, 10-model predictions CSV as ``tablegen evaluate`` does (``tablegen.cli.scores.read_predictions``);
``--tree SRC`` runs every case from another tablegen source tree (``git archive HEAD~1 tablegen | tar -x -C
/tmp/before``), to measure a change before and after; ``--before SRC`` runs each case from SRC and then from this
tree, one after the other (the same load on both), and adds a table of both with the ratio per stage.

    .venv/bin/python benchmarks/bench_evaluate.py                      # every case, 120 s CPU each at most
    .venv/bin/python benchmarks/bench_evaluate.py --cases 10x1e4 csv --max-seconds 60
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from machine import child_environment, load_average, recording

#: name -> (models, items, target CPU seconds, what the issue asks)
CASES = {
    "10x1e4": (10, 10_000, 2.0, "10 models x 10^4 items <= 2 s"),
    "10x1e6": (10, 1_000_000, 60.0, "10 models x 10^6 items <= 60 s, memory <= 2 GB"),
    "100x1e4": (100, 10_000, 30.0, "100 models x 10^4 items <= 30 s"),
    "200x60": (200, 60, 10.0, "200 models x 60 items <= 10 s"),
    "csv": (10, 1_000_000, None, "read a 10^6-row, 10-model CSV (no target of its own)"),
}
MEMORY_TARGET = 2e9
STAGES = [  # (name, module, function)
    ("values", "tablegen.lookup.from_scores", "threshold_groups"),
    ("values", "tablegen.lookup.from_scores", "_values"),
    ("best-of-C verdict", "tablegen.lookup.from_scores", "_verdict"),
    ("max-T selection test", "tablegen.compare.selection.maxt", "selection_test"),
    ("max-T selection test", "tablegen.compare.selection.maxt", "selection_tests_noting"),  # every metric, one pass
    ("paired tests", "tablegen.compare.report.evaluate", "_paired_tests"),
    ("bootstrap intervals", "tablegen.compare.report.evaluate", "_intervals"),
]
STAGE_NAMES = list(dict.fromkeys(name for name, _, _ in STAGES))

#: The child: builds the data, wraps the stages, runs the case, and prints one JSON line per finished stage call
#: (so a stopped case still tells what it finished) and one at the end.
CHILD = r"""
import json, resource, sys, time
tree, case, models, items, C, stages, cap = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
    int(sys.argv[5]), json.loads(sys.argv[6]), float(sys.argv[7])
if tree:
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__module__", "")]
    sys.path.insert(0, tree)
import importlib
import numpy as np

def capped():  # the case's CPU seconds from here on, past which the kernel stops the process (SIGXCPU)
    used = resource.getrusage(resource.RUSAGE_SELF)
    limit = int(used.ru_utime + used.ru_stime + cap) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))

def say(**fields):
    fields["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    fields["cpu"] = time.process_time()
    print(json.dumps(fields), flush=True)

rng = np.random.default_rng(20261128)
y = (rng.random(items) < 0.3).astype(np.int64)
y[:2] = (1, 0)  # both classes, whatever the draw
lift = 0.1 + 0.9 * np.arange(1, models + 1) / models
scores = {f"m{j:03d}": lift[j] * y + rng.normal(size=items) for j in range(models)}
if case == "csv":
    import os, tempfile
    from tablegen.cli.scores import read_predictions
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "predictions.csv")
    with open(path, "w") as handle:
        handle.write("label," + ",".join(scores) + "\n")
        np.savetxt(handle, np.column_stack([y, *scores.values()]), fmt=["%d"] + ["%.17g"] * models, delimiter=",")
    del scores, y
    capped()
    say(event="start", size=os.path.getsize(path))
    start, wall = time.process_time(), time.perf_counter()
    labels, read, _ = read_predictions(path, "label", option="PREDS.csv")
    say(event="done", seconds=time.process_time() - start, wall=time.perf_counter() - wall, rows=len(labels))
    os.remove(path)
    sys.exit(0)
spent, depth = {}, [0]
def timed(name, function):
    def wrapper(*args, **kwargs):
        outer = depth[0] == 0
        depth[0] += 1
        if outer:
            say(event="enter", name=name)
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            depth[0] -= 1
            if outer:
                spent[name] = spent.get(name, 0.0) + time.process_time() - start
                say(event="stage", name=name, seconds=spent[name])
    return wrapper
missing = []
for name, module, function in stages:
    owner = importlib.import_module(module)
    if hasattr(owner, function):
        setattr(owner, function, timed(name, getattr(owner, function)))
    else:
        missing.append(f"{module}.{function}")
import tablegen
import tablegen.errors
capped()
say(event="start", missing=missing)
start, wall = time.process_time(), time.perf_counter()
try:
    report = tablegen.evaluate(y, scores, C=C)
except tablegen.errors.ResourceLimitError as error:  # evaluate's own estimate, over its limit
    say(event="refused", message=str(error))
    sys.exit(0)
say(event="done", seconds=time.process_time() - start, wall=time.perf_counter() - wall, stages=spent,
    winner=report["auc"].winner)
"""


def run_case(case: str, max_seconds: float, tree: str) -> dict:
    """Run one case in a fresh process, stopped past ``max_seconds`` CPU seconds; what it reported."""
    models, items, _, _ = CASES[case]
    C = max(100, models)
    env = child_environment(NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                            MKL_NUM_THREADS="1", TABLEGEN_TIME_LIMIT=str(10**9))  # measured, stopped at --max-seconds
    command = [sys.executable, "-c", CHILD, tree, case, str(models), str(items), str(C), json.dumps(STAGES),
               str(max_seconds)]
    out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
    child = subprocess.Popen(command, stdout=out, stderr=err, text=True, env=env)
    started, peak, cpu = time.perf_counter(), 0, 0.0
    while child.poll() is None:
        peak, cpu = max(peak, _high_water(child.pid)), max(cpu, _cpu_seconds(child.pid))
        if time.perf_counter() - started > 4 * max_seconds + 60:  # a loaded machine: the wall-clock backstop
            child.send_signal(signal.SIGKILL)
        time.sleep(0.5)
    wall = time.perf_counter() - started
    out.seek(0)
    events = [json.loads(line) for line in out if line.startswith("{")]
    err.seek(0)
    stderr = err.read()
    done = next((e for e in events if e["event"] == "done"), None)
    start = next((e for e in events if e["event"] == "start"), {"cpu": 0.0, "missing": []})
    stages = {e["name"]: e["seconds"] for e in events if e["event"] == "stage"}
    refused = next((e["message"] for e in events if e["event"] == "refused"), None)
    entered = [e for e in events if e["event"] in ("enter", "stage")]
    if done is None and entered and entered[-1]["event"] == "enter":  # stopped in this stage
        stages["in " + entered[-1]["name"]] = entered[-1]["cpu"]
    if refused is not None:
        raise RuntimeError(f"case {case}: refused by evaluate's own limit: {refused}")
    if done is None and child.returncode not in (0, -signal.SIGXCPU, -signal.SIGKILL):
        raise RuntimeError(f"case {case} failed (exit {child.returncode}):\n{stderr[-3000:]}")
    result = {"case": case, "C": C, "done": done, "start": start, "stages": stages, "wall": wall,
              "rss": max([peak] + [e["rss"] for e in events]), "stopped": done is None,
              "cpu_at_stop": max([cpu] + [e["cpu"] for e in events]) - start["cpu"]
              if child.returncode != -signal.SIGXCPU else max_seconds}  # the kernel stopped it at the cap
    for key in [key for key in stages if key.startswith("in ")]:  # the stage it was in: its seconds until the stop
        name, seconds = key[3:], result["cpu_at_stop"] + start["cpu"] - stages.pop(key)
        stages[name] = stages.get(name, 0.0) + seconds
        result["stopped_in"] = name
    return result


def _high_water(pid: int) -> int:
    """The peak resident memory of process ``pid`` so far (VmHWM), in bytes; 0 where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (/proc/PID/stat); 0 where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def seconds_text(result: dict, max_seconds: float) -> str:
    """The case's CPU seconds, or "over N" (N: the CPU seconds it had run when stopped)."""
    return f"over {result['cpu_at_stop']:.0f}" if result["stopped"] else f"{result['done']['seconds']:.2f}"


def print_cases(results: list[dict], max_seconds: float) -> None:
    print("| case | C | CPU s (evaluate) | wall s | target CPU s | peak RSS | within target |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in results:
        models, items, target, _ = CASES[r["case"]]
        if r["case"] == "csv":
            continue
        cpu = seconds_text(r, max_seconds)
        wall = "-" if r["stopped"] else f"{r['done']['wall']:.2f}"
        within = "no (stopped)" if r["stopped"] else ("yes" if r["done"]["seconds"] <= target else "no")
        rss = f"{r['rss'] / 1e9:.2f} GB"
        if r["case"] == "10x1e6":
            rss += f" (target {MEMORY_TARGET / 1e9:.0f} GB: {'within' if r['rss'] <= MEMORY_TARGET else 'over'})"
        print(f"| {models} models x {items:,} items | {r['C']} | {cpu} | {wall} | {target:.0f} | {rss} | {within} |")


def stage_seconds(result: dict, name: str) -> tuple[float | None, bool]:
    """(CPU seconds of stage ``name``, whether the figure is partial): None where the case never entered it; partial
    wherever the case was stopped (the stage it was in, and any other: a stage is called again later, per metric in
    some trees, so seconds until the stop are a lower bound, not the stage's cost)."""
    seconds = result["stages"].get(name)
    return seconds, seconds is not None and result["stopped"]


def ratio_text(before: float | None, after: float | None, before_partial: bool, after_partial: bool) -> str:
    """before / after where both figures are complete; '-' where either is partial or missing (no ratio of a
    stopped stage's seconds: they are not its cost), or below the 0.005 s the table prints as 0.00 (timer noise).

    Examples
    --------
    >>> ratio_text(3.0, 1.5, False, False), ratio_text(41.5, 122.5, True, False), ratio_text(None, 1.0, False, False)
    ('2.00x', '-', '-')
    >>> ratio_text(0.004, 0.0005, False, False)
    '-'
    """
    if before is None or after is None or before_partial or after_partial or min(before, after) < 0.005:
        return "-"
    return f"{before / after:.2f}x"


def total_ratio_text(old: dict, new: dict) -> str:
    """The totals' ratio: exact where both finished; a bound where one was stopped at the cap (its total at least the
    seconds it ran); '-' where both were (nothing is known of it).

    Examples
    --------
    >>> done = lambda s: {"stopped": False, "done": {"seconds": s}}
    >>> stopped = lambda s: {"stopped": True, "cpu_at_stop": s}
    >>> total_ratio_text(done(4.0), done(2.0)), total_ratio_text(stopped(150.0), done(30.0))
    ('2.00x', 'at least 5.00x')
    >>> total_ratio_text(done(30.0), stopped(150.0)), total_ratio_text(stopped(150.0), stopped(150.0))
    ('at most 0.20x', '-')
    """
    if old["stopped"] and new["stopped"]:
        return "-"
    b = old["cpu_at_stop"] if old["stopped"] else old["done"]["seconds"]
    a = new["cpu_at_stop"] if new["stopped"] else new["done"]["seconds"]
    if a <= 0:
        return "-"
    return ("at least " if old["stopped"] else "at most " if new["stopped"] else "") + f"{b / a:.2f}x"


def print_stages(results: list[dict], max_seconds: float) -> None:
    shown = [r for r in results if r["case"] != "csv"]
    if not shown:
        return
    print("\nwhere the CPU time goes (seconds per stage; a stopped case shows its stages' seconds until it stopped, "
          "'(stopped)' the stage it was in, '(partial)' the others it had entered (a stage may be called again "
          "later), '…' one it had not reached):\n")
    print("| stage | " + " | ".join(f"{CASES[r['case']][0]} x {CASES[r['case']][1]:,}" for r in shown) + " |")
    print("|---|" + "---:|" * len(shown))
    for name in STAGE_NAMES:
        cells = []
        for r in shown:
            seconds, partial = stage_seconds(r, name)
            cell = f"{seconds:.2f}" if seconds is not None else ("…" if r["stopped"] else "0")
            mark = " (stopped)" if r.get("stopped_in") == name else " (partial)" if partial else ""
            cells.append(cell + mark)
        print(f"| {name} | " + " | ".join(cells) + " |")
    rest = [(r["cpu_at_stop"] if r["stopped"] else r["done"]["seconds"]) - sum(r["stages"].values()) for r in shown]
    print("| the rest (checks, report) | "
          + " | ".join(f"{seconds:.2f}" for seconds in rest) + " |")
    print("| total | " + " | ".join(seconds_text(r, max_seconds) for r in shown) + " |")
    missing = sorted({m for r in shown for m in r["start"].get("missing", [])})
    if missing:
        print(f"\nnot found, so not timed apart (counted in 'the rest'): {', '.join(missing)}")


def print_csv(results: list[dict], max_seconds: float) -> None:
    for r in results:
        if r["case"] != "csv":
            continue
        if r["stopped"]:
            print(f"\nreading a 10^6-row, 10-model predictions CSV: over {max_seconds:.0f} s CPU")
        else:
            d = r["done"]
            print(f"\nreading a {d['rows']:,}-row, 10-model predictions CSV ({r['start']['size'] / 1e6:.0f} MB, "
                  f"tablegen.cli.scores.read_predictions): {d['seconds']:.2f} s CPU, {d['wall']:.2f} s wall, "
                  f"peak RSS {r['rss'] / 1e9:.2f} GB (the process, data generation included)")


def print_before_after(pairs: list[tuple[dict, dict]], max_seconds: float, before: str) -> None:
    """Each case's stages from ``before`` and from this tree side by side, with the ratio before/after where both
    figures are complete (a stopped case's stages are partial: marked, no ratio)."""
    print(f"\nbefore ({before}) and after (this tree), run one after the other per case; CPU seconds per stage; "
          "ratio = before / after where both are complete; '(partial)': the seconds a stopped case's stage had run "
          "when the cap stopped it, not the stage's cost, so no ratio; 'over N': a total stopped at the cap (the "
          "ratio of totals then a bound):\n")
    print("| case | stage | before | after | ratio |")
    print("|---|---|---:|---:|---:|")
    for old, new in pairs:
        models, items, _, _ = CASES[new["case"]]
        for name in STAGE_NAMES:
            (b, b_partial), (a, a_partial) = stage_seconds(old, name), stage_seconds(new, name)
            cells = [_stage_cell(b, b_partial), _stage_cell(a, a_partial), ratio_text(b, a, b_partial, a_partial)]
            print(f"| {models} x {items:,} | {name} | " + " | ".join(cells) + " |")
        totals = [seconds_text(r, max_seconds) for r in (old, new)]
        print(f"| {models} x {items:,} | total | " + " | ".join([*totals, total_ratio_text(old, new)]) + " |")


def _stage_cell(seconds: float | None, partial: bool) -> str:
    return "…" if seconds is None else f"{seconds:.2f}" + (" (partial)" if partial else "")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--max-seconds", type=float, default=120.0, help="CPU seconds a case may run (default "
                                                                          "%(default)s); past it, 'over N s'")
    parser.add_argument("--tree", default="", help="a tablegen source tree to run the cases from (default: this one)")
    parser.add_argument("--before", default="", help="also run each case from this tablegen source tree first, and "
                                                     "compare")
    args = parser.parse_args(argv)
    print(f"load average {load_average()} at the start; all default metrics; one process per case, one numba "
          f"thread; cases stopped past {args.max_seconds:.0f} s CPU"
          + (f"; tablegen from {args.tree}" if args.tree else "") + "\n")
    results, pairs = [], []
    for case in args.cases:
        if args.before and case != "csv":
            old = run_case(case, args.max_seconds, os.path.abspath(args.before))
            print(f"... {case} before: {seconds_text(old, args.max_seconds)} s CPU", file=sys.stderr, flush=True)
        results.append(run_case(case, args.max_seconds, os.path.abspath(args.tree) if args.tree else ""))
        print(f"... {case}: {seconds_text(results[-1], args.max_seconds)} s CPU", file=sys.stderr, flush=True)
        if args.before and case != "csv":
            pairs.append((old, results[-1]))
    print_cases(results, args.max_seconds)
    print_stages(results, args.max_seconds)
    print_csv(results, args.max_seconds)
    if pairs:
        print_before_after(pairs, args.max_seconds, args.before)
    print(f"\nload average {load_average()} at the end")


if __name__ == "__main__":
    with recording("evaluate"):
        main()
