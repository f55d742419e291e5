"""Progress shown on the command line (stderr): one line with rate and ETA (:class:`ProgressLine` for a
lookup's simulation, :class:`RunProgress` for a batch job and the cluster launchers)."""

from __future__ import annotations

import sys
import time


class ProgressLine:
    """A one-line progress display with rate and ETA, on stderr."""

    def __init__(self, stream=None, label="replicates"):
        self.stream = sys.stderr if stream is None else stream
        self.label, self.start = label, time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        elapsed = time.perf_counter() - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else float("nan")
        self.stream.write(f"\r{done:>12,}/{total:,} {self.label}  {100 * done / total:5.1f}%  "
                          f"{rate:,.0f}/s  ETA {eta:5.1f}s ")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


class RunProgress:
    """Progress of a batch job on stderr: cells, share of the estimated work, elapsed time and ETA.

    The share is weighted by the cost model (a task at P = 1000 counts for more than one at
    P = 20), so the ETA does not race ahead on cheap tasks.  On a terminal the line is redrawn in
    place; elsewhere (logs, CI) one line is written per finished task.
    """

    def __init__(self, config, plan, stream=None):
        self.config, self.stream = config, sys.stderr if stream is None else stream
        self.total_seconds = max(plan.core_seconds_remaining, 1e-9)
        self.done_seconds, self.start = 0.0, time.perf_counter()
        self.interactive = self.stream.isatty()

    def __call__(self, done: int, total: int, chunk) -> None:
        if chunk is not None:
            from tablegen.batch.plan import chunk_seconds

            self.done_seconds += chunk_seconds(self.config, chunk)
        share = min(self.done_seconds / self.total_seconds, 1.0) if done < total else 1.0
        elapsed = time.perf_counter() - self.start
        eta = f"{elapsed * (1 - share) / share:7.1f} s" if share > 0 else "      -  "
        line = (f"{done:>7,}/{total:,} cells  {100 * share:5.1f}% of the work  {elapsed:7.1f} s elapsed  "
                f"ETA {eta}" + (f"  [{chunk.label(self.config)}]" if chunk is not None else ""))
        if self.interactive:
            self.stream.write("\r" + line + ("\n" if done == total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
