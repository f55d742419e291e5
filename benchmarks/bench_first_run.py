"""What ``tablegen run configs/laptop.yaml`` shows on a first run: when its progress line first moves, and
how its ETA at 10%, 25% and 50% of the work compares with the time the run actually took.

    .venv/bin/python benchmarks/bench_first_run.py                    # about 2 minutes on 2 cores
    NUMBA_CACHE_DIR=$(mktemp -d) .venv/bin/python benchmarks/bench_first_run.py   # cold numba cache

The job is the README's main job (``configs/laptop.yaml``: 361 cells, R = 100,000, a LocalCluster of
2 single-threaded workers) into a fresh store, run as ``tablegen run`` runs it (``tablegen.batch.job.run``
with the command line's :class:`tablegen.cli.progress.RunProgress`, drawing to a terminal-like stream
whose every redraw is timed here).  Printed: the seconds from the cluster being up (tasks submitted) to
the first line showing a running task, and for each share of the work the ETA shown when the line first
reached it, the time that was actually left (to the last cell written), and their ratio.
"""

from __future__ import annotations

import argparse
import io
import re
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import cpu_model, recording, vector_width  # noqa: E402

from tablegen.batch.config import load_config  # noqa: E402
from tablegen.batch.job import resolve_config, run  # noqa: E402
from tablegen.cli.progress import RunProgress  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "laptop.yaml"
LINE = re.compile(r"([\d.]+)% of the work\s+([\d.]+) s elapsed\s+ETA\s+([\d.]+ s|-)")


class _Terminal(io.StringIO):
    """A stream that says it is a terminal (so the line is redrawn in place) and times every redraw."""

    def __init__(self):
        super().__init__()
        self.draws = []

    def isatty(self):
        return True

    def write(self, text):
        if text.startswith("\r"):
            self.draws.append((time.perf_counter(), text))
        return super().write(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(CONFIG))
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-first-run-"))
    config = resolve_config(replace(load_config(args.config), store_url=str(folder / "first.zarr")))
    stream, state = _Terminal(), {}

    def on_plan(plan):
        state["line"] = RunProgress(config, plan, stream)

    def on_client(client):
        state["submitted"] = time.perf_counter()
        state["line"].tasks_started()

    start = time.perf_counter()
    try:
        summary = run(config, progress=lambda *a: state["line"](*a), on_plan=on_plan, on_client=on_client,
                      on_work=lambda *a: state["line"].work(*a))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    wall = time.perf_counter() - start
    rows = [(t, float(m[1]), m[3]) for t, text in stream.draws for m in [LINE.search(text)] if m]
    last = rows[-1][0]
    running = next(t for t, text in stream.draws if "running]" in text)
    print(f"{cpu_model()} ({vector_width()}), {time.strftime('%Y-%m-%d')}; {config.name}: {summary.cells:,} cells, "
          f"R = {config.replicates:,}, {config.cluster.get('workers')} workers; run {wall:.1f} s wall")
    print(f"first line with a running task: {running - state['submitted']:.1f} s after the tasks were submitted")
    for target in (10, 25, 50):
        t, share, eta = next(r for r in rows if r[1] >= target)
        left = last - t
        shown = float(eta.split()[0]) if eta != "-" else float("nan")
        print(f"  at {share:5.1f}% ({t - start:6.1f} s): ETA {shown:6.1f} s, actually left {left:6.1f} s, "
              f"ratio {shown / left:.2f}")


if __name__ == "__main__":
    with recording("first_run"):
        main()
