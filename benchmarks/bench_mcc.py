"""What best MCC costs the Monte Carlo kernels, and what a run that does not ask for it pays.

Times :func:`tablegen.compute.mc.score_replicates` (one core, CPU time per ranking) on the lane
kernel's cell (1000, 1000) and the minority-class kernel's cell (20, 2000) in three variants:

* ``default``: the metrics of ``DEFAULT_METRICS`` (no best MCC: the kernels' variant without it);
* ``mcc``: the same plus ``best_mcc`` (the variant that scores it);
* ``pre``: ``DEFAULT_METRICS`` on another checkout (``--pre-tree``, e.g. the commit before best MCC
  existed: ``git worktree add /tmp/pre 597812f``), if given.

Each variant runs in its own worker process (a checkout cannot be imported twice in one process),
compiled before timing; the parent asks the workers in turn, rotating the order every round, so
machine noise hits every variant alike.  Reported: best and median CPU ns per ranking over the
rounds, and the ratios of the best times.  CPU time, not wall time: the machine may be shared.

    .venv/bin/python benchmarks/bench_mcc.py --pre-tree /tmp/pre
"""

import os

for _variable in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from machine import recording, shown_path, vector_width  # noqa: E402

#: (P, N, rankings per timed run): the lane kernel's cell, the minority-class kernel's cell.
CELLS = ((1000, 1000, 20_000), (20, 2000, 100_000))
SEED = 20050707


def worker(with_mcc: bool) -> None:
    """Serve timing requests on stdin ("P N R" per line), answering CPU ns per ranking on stdout."""
    import numpy as np

    import tablegen
    from tablegen.compute.mc import DEFAULT_BLOCK_SIZE, KernelLayout, cell_key, score_replicates
    from tablegen.compute.metrics import DEFAULT_METRICS, metric_entries

    metrics = [*DEFAULT_METRICS, "best_mcc"] if with_mcc else list(DEFAULT_METRICS)
    prepared = {}
    for P, N, _ in CELLS:
        layout = KernelLayout.for_metrics(metric_entries(metrics), P, N)
        key = cell_key(SEED, P, N)
        score_replicates(P, N, key, 0, 256, layout)  # compile (or load from numba's cache)
        labels = np.zeros((2, P + N), np.uint8)  # and the scalar kernel, the lane kernel's fallback
        score_replicates(P, N, key, 0, 2, layout, labels_out=labels)
        prepared[P, N] = key, layout
    print(json.dumps({"ready": tablegen.__file__}), flush=True)
    checksum = 0.0
    for line in sys.stdin:
        P, N, R = (int(x) for x in line.split())
        key, layout = prepared[P, N]
        start = time.process_time_ns()
        for first in range(0, R, DEFAULT_BLOCK_SIZE):
            out = score_replicates(P, N, key, first, min(DEFAULT_BLOCK_SIZE, R - first), layout)
            checksum += float(np.nansum(out[:1]))
        print(json.dumps({"ns": (time.process_time_ns() - start) / R}), flush=True)


class Worker:
    """A worker process for one variant (``tree``: the checkout it imports, None for this one)."""

    def __init__(self, name: str, with_mcc: bool, tree: str | None):
        env = dict(os.environ)
        if tree is not None:
            env["PYTHONPATH"] = tree
        command = [sys.executable, os.path.abspath(__file__), "--worker"] + (["--mcc"] if with_mcc else [])
        self.name = name
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        env=env, cwd=tree or os.getcwd())
        self.source = json.loads(self.process.stdout.readline())["ready"]

    def time(self, P: int, N: int, R: int) -> float:
        self.process.stdin.write(f"{P} {N} {R}\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())["ns"]

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pre-tree", help="checkout timed as 'pre' (DEFAULT_METRICS), e.g. a git worktree")
    parser.add_argument("--rounds", type=int, default=31, help="timed runs per variant and cell (best kept)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mcc", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.worker:
        return worker(args.mcc)
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    workers = [Worker("default", False, None), Worker("default + best_mcc", True, None)]
    if args.pre_tree:
        workers.append(Worker("pre (--pre-tree)", False, os.path.abspath(args.pre_tree)))
    times = {(w.name, P, N): [] for w in workers for P, N, _ in CELLS}
    for round_ in range(args.rounds):
        for P, N, R in CELLS:
            for w in workers[round_ % len(workers):] + workers[:round_ % len(workers)]:
                times[w.name, P, N].append(w.time(P, N, R))
    for w in workers:
        w.close()
    command = shlex.join([shown_path(sys.executable), *map(shown_path, (sys.argv[:1] if argv is None else [__file__])),
                       *(sys.argv[1:] if argv is None else argv)])
    print(f"- vector width: {vector_width()}; one thread; CPU ns per ranking, best (median) of {args.rounds} "
          "interleaved rounds")
    print(f"- command: `{command}`")
    for w in workers:
        print(f"- {w.name}: {shown_path(w.source)}")
    print("\n| cell (P, N) | kernel | " + " | ".join(w.name for w in workers) + " | mcc / default |"
          + (" default / pre | mcc / pre |" if args.pre_tree else ""))
    print("|---|---|" + "---:|" * (len(workers) + (3 if args.pre_tree else 1)))
    for P, N, _ in CELLS:
        best = {w.name: min(times[w.name, P, N]) for w in workers}
        cells = [f"{best[w.name]:.0f} ({statistics.median(times[w.name, P, N]):.0f})" for w in workers]
        ratios = [best["default + best_mcc"] / best["default"]]
        if args.pre_tree:
            pre = best["pre (--pre-tree)"]
            ratios += [best["default"] / pre, best["default + best_mcc"] / pre]
        kernel = "lanes" if P == N else "minority"
        print(f"| ({P}, {N}) | {kernel} | " + " | ".join(cells) + " | "
              + " | ".join(f"{r:.3f}" for r in ratios) + " |")


if __name__ == "__main__":
    if "--worker" in sys.argv:
        main()
    else:
        with recording("mcc"):
            main()
