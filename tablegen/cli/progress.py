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
    P = 20), so the ETA does not race ahead on cheap tasks, and it counts the work of running tasks
    as their workers report it (:meth:`work`, after each cell), so the line moves within seconds of the
    first task starting.  The ETA extrapolates the time since a worker first finished a step (a cell):
    the cluster's start-up and the workers' first loading (or compiling, on a cold numba cache) of the
    kernels are left out, so that they do not inflate it (:meth:`tasks_started` marks the tasks' start
    where no report comes).  On a terminal the line is redrawn in place (at most every
    :attr:`redraw_seconds`); elsewhere (logs, CI) one line is written per finished task, and one per
    :attr:`log_seconds` while tasks run.
    """

    redraw_seconds = 0.25
    log_seconds = 10.0
    step_credit = 0.9
    eta_from = 0.01  # no ETA before 1% of the work: extrapolating from less says little

    def __init__(self, config, plan, stream=None, clock=time.perf_counter):
        self.config, self.stream, self.clock = config, sys.stderr if stream is None else stream, clock
        self.total_seconds = max(plan.core_seconds_remaining, 1e-9)
        self.done_seconds, self.start = 0.0, clock()
        self.work_start, self.running, self.drawn, self.reported, self.stepped = None, {}, float("-inf"), False, False
        self.cells = (plan.cells_done, plan.cells)
        self.interactive = self.stream.isatty()

    def tasks_started(self) -> None:
        """The tasks start now (the cluster is up): the ETA extrapolates from here.  On a terminal the
        line drawn so far is ended, so that what is printed next starts a line of its own."""
        self.work_start = self.clock()
        if self.interactive:
            self.stream.write("\n")
            self.stream.flush()

    def __call__(self, done: int, total: int, chunk) -> None:
        """A finished chunk (``chunk`` None: before the first)."""
        if chunk is not None:
            from tablegen.batch.plan import chunk_seconds

            self.running.pop(chunk, None)
            self.done_seconds += chunk_seconds(self.config, chunk)
        self.cells = (done, total)
        self._draw(chunk.label(self.config) if chunk is not None else None, final=done == total)

    def work(self, chunk, done: float, step: float) -> None:
        """A running task's estimated seconds done so far and those of the step it has just started
        (``tablegen.batch.job.run``'s ``on_work``; ``chunk`` None: no news, the line may be redrawn)."""
        now = self.clock()
        if chunk is not None:
            self.running[chunk] = (done, step, now)
            if done > 0 and not self.stepped:  # a first step done: the kernels are loaded (or compiled)
                self.work_start, self.stepped = now, True
        elif not self.running:
            return
        if now - self.drawn >= (self.redraw_seconds if self.interactive else self.log_seconds) or not self.reported:
            self.reported = True
            self._draw(f"{len(self.running)} running", final=False)

    def share(self) -> float:
        """The share of the estimated work done: finished tasks, and running ones up to their last report
        plus the time since in the step they started (at the cost model's speed, at most
        :attr:`step_credit` of the step), so that a long step (AUC's exact sweep) moves the line too."""
        now = self.clock()
        running = sum(done + min(self.step_credit * step, now - since) for done, step, since in self.running.values())
        return min((self.done_seconds + running) / self.total_seconds, 1.0)

    def _draw(self, label: str | None, final: bool) -> None:
        now = self.clock()
        share = 1.0 if final else self.share()
        elapsed, since = now - self.start, now - (self.start if self.work_start is None else self.work_start)
        eta = f"{since * (1 - share) / share:7.1f} s" if share >= self.eta_from else "      -  "
        done, total = self.cells
        line = (f"{done:>7,}/{total:,} cells  {100 * share:5.1f}% of the work  {elapsed:7.1f} s elapsed  "
                f"ETA {eta}" + (f"  [{label}]" if label else ""))
        if self.interactive:
            self.stream.write("\r" + line.ljust(100) + ("\n" if final else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.drawn = now
