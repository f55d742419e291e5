"""Progress shown on the command line (stderr): one line with rate and ETA (:class:`ProgressLine` for a
lookup's simulation, :class:`RunProgress` for a batch job and the cluster launchers, its ETA from the
recent throughput measured by :class:`Throughput`)."""

from __future__ import annotations

import math
import sys
import threading
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


class Throughput:
    """The recent rate of work done: work units per second, each past second weighted by
    ``exp(-age / time_constant)``, from the totals of work done reported at any moments.

    Between two reports the work is spread evenly over the time between them, so reports that come in
    lumps (a step of many seconds reported when it ends) give the rate they average to; the weights make
    the rate follow a change of pace (a machine getting busier) within about one or two time constants,
    while a rate measured over the whole run would follow it only as slowly as the run goes.  Nothing is
    measured before the first report (:meth:`update`): a start-up (workers loading their kernels) does
    not count as slow work.

    Examples
    --------
    >>> rate = Throughput(time_constant=20.0)
    >>> for second in range(0, 61):  # one unit a second for a minute
    ...     rate.update(float(second), float(second))
    >>> round(rate.rate(), 6)
    1.0
    >>> for second in range(61, 121):  # then a fifth of that
    ...     rate.update(float(second), 60 + 0.2 * (second - 60))
    >>> round(rate.rate(), 3)  # the old pace weighs exp(-60 / 20) = 5% of the time by now
    0.238
    """

    def __init__(self, time_constant: float = 20.0):
        if not time_constant > 0:
            raise ValueError(f"time_constant must be > 0 seconds, got {time_constant!r}")
        self.time_constant = time_constant
        self.last: tuple[float, float] | None = None
        self.work = self.seconds = 0.0  # the weighted sums of the work done and of the time it took

    def update(self, now: float, work: float) -> None:
        """The total work done by ``now`` (a total smaller than the last one, a task run again from its
        start, is taken as the new base: its work counts once it is done again)."""
        if self.last is not None:
            since, before = self.last
            elapsed = max(now - since, 0.0)
            weight = math.exp(-elapsed / self.time_constant)
            self.work = self.work * weight + max(work - before, 0.0)
            self.seconds = self.seconds * weight + elapsed
        self.last = (now, work)

    def rate(self) -> float | None:
        """Work units per second up to the last report; None before any time between two reports."""
        return self.work / self.seconds if self.seconds > 0 else None


class RunProgress:
    """Progress of a batch job on stderr: cells, share of the estimated work, elapsed time and ETA.

    The work is counted in the cost model's seconds (a task at P = 1000 counts for more than one at
    P = 20), from finished tasks and from the reports of running ones (:meth:`work`: as each step starts
    — a cell's simulation, a metric's exact values — and, within a cell's simulation, after its blocks
    of replicates), so the line moves within a cell.  Within a step, between reports, a running task is
    credited at the pace measured so far (at most :attr:`step_credit` of what is left of the step).

    The ETA is the work left over the recent throughput (:class:`Throughput`, time constant
    :attr:`rate_seconds`): it follows a change of pace (the machine getting busier or quieter) within tens
    of seconds, where one extrapolated from the whole run would take as long as the run has lasted.  The
    throughput is measured from the first report of work done, so that the cluster's start-up and the
    workers' first loading (or compiling, on a cold numba cache) of the kernels do not count as slow
    work; there is no ETA before :attr:`eta_from` of the work.  On a terminal the line is redrawn in place
    (at most every :attr:`redraw_seconds`); elsewhere (logs, CI) one line is written per finished task,
    and one per :attr:`log_seconds` while tasks run.
    """

    redraw_seconds = 0.25
    log_seconds = 10.0
    step_credit = 0.9
    eta_from = 0.01  # no ETA before 1% of the work: extrapolating from less says little
    rate_seconds = 20.0

    def __init__(self, config, plan, stream=None, clock=time.perf_counter):
        self.config, self.stream, self.clock = config, sys.stderr if stream is None else stream, clock
        self.total_seconds = max(plan.core_seconds_remaining, 1e-9)
        self.done_seconds, self.start = 0.0, clock()
        self.running, self.drawn, self.reported = {}, float("-inf"), False
        self.throughput = Throughput(self.rate_seconds)
        self.cells = (plan.cells_done, plan.cells)
        self.interactive = self.stream.isatty()
        self._ticking, self._drawing = None, threading.Lock()

    def tick_while_starting(self) -> None:
        """On a terminal, redraw the line (its elapsed time) every :attr:`redraw_seconds` from a thread of its
        own until the tasks start or report (:meth:`tasks_started`, :meth:`work`): the cluster's start-up
        shows as time passing, not as a line that stands still."""
        if not self.interactive or self._ticking is not None:
            return
        stop = threading.Event()

        def tick() -> None:
            while not stop.wait(self.redraw_seconds):
                self._draw("starting", final=False)
        self._ticking = (stop, threading.Thread(target=tick, name="tablegen-progress", daemon=True))
        self._ticking[1].start()

    def _stop_ticking(self) -> None:
        if self._ticking is not None and not self._ticking[0].is_set():
            self._ticking[0].set()
            self._ticking[1].join()

    def tasks_started(self) -> None:
        """The tasks start now (the cluster is up).  On a terminal the line drawn so far is ended, so that
        what is printed next starts a line of its own."""
        self._stop_ticking()
        if self.interactive:
            self.stream.write("\n")
            self.stream.flush()

    def __call__(self, done: int, total: int, chunk) -> None:
        """A finished chunk (``chunk`` None: before the first; on a terminal the line then ticks until the tasks
        start, :meth:`tick_while_starting`)."""
        if chunk is not None or done == total:
            self._stop_ticking()
        if chunk is not None:
            from tablegen.batch.plan import chunk_seconds

            self.running.pop(chunk, None)
            self.done_seconds += chunk_seconds(self.config, chunk)
            self._measure()
        self.cells = (done, total)
        self._draw(chunk.label(self.config) if chunk is not None else None, final=done == total)
        if chunk is None and done < total:
            self.tick_while_starting()

    def work(self, chunk, done: float, left: float) -> None:
        """A running task's estimated seconds done so far and those left of the step under way
        (``tablegen.batch.job.run``'s ``on_work``; ``chunk`` None: no news, the line may be redrawn)."""
        self._stop_ticking()
        now, first = self.clock(), chunk is not None and not self.reported
        if chunk is not None:
            self.running[chunk], self.reported = (done, left, now), True
            if done > 0 or self.throughput.last is not None:  # from the first work done: kernels loaded
                self._measure()
        elif not self.running and not self.interactive:
            return
        if first or now - self.drawn >= (self.redraw_seconds if self.interactive else self.log_seconds):
            self._draw(f"{len(self.running)} running" if self.running else "waiting for the workers", final=False)

    def reported_seconds(self) -> float:
        """The estimated seconds of work reported done: finished tasks, and running ones up to their last report."""
        return self.done_seconds + sum(done for done, _, _ in self.running.values())

    def _measure(self) -> None:
        self.throughput.update(self.clock(), self.reported_seconds())

    def task_pace(self) -> float:
        """Estimated seconds of work a running task does per second: the recent throughput shared among the
        running tasks (1, the cost model's pace, before it is measured)."""
        rate = self.throughput.rate()
        return 1.0 if rate is None else rate / max(len(self.running), 1)

    def share(self) -> float:
        """The share of the estimated work done: finished tasks, and running ones up to their last report
        plus the time since at :meth:`task_pace` (at most :attr:`step_credit` of what was left of the step),
        so that a long step without reports (AUC's exact sweep) moves the line too."""
        now, pace = self.clock(), self.task_pace()
        running = sum(min(self.step_credit * left, pace * (now - since)) for _, left, since in self.running.values())
        return min((self.reported_seconds() + running) / self.total_seconds, 1.0)

    def eta(self, share: float) -> float | None:
        """Seconds left at the recent throughput; None before :attr:`eta_from` of the work or a measured pace."""
        rate = self.throughput.rate()
        if share < self.eta_from or not rate:
            return None
        return (1.0 - share) * self.total_seconds / rate

    def _draw(self, label: str | None, final: bool) -> None:
        with self._drawing:  # the ticking thread draws too
            self._draw_line(label, final)

    def _draw_line(self, label: str | None, final: bool) -> None:
        now = self.clock()
        share = 1.0 if final else self.share()
        eta = 0.0 if final else self.eta(share)
        eta_text = "      -  " if eta is None else f"{eta:7.1f} s"
        done, total = self.cells
        line = (f"{done:>7,}/{total:,} cells  {100 * share:5.1f}% of the work  {now - self.start:7.1f} s elapsed  "
                f"ETA {eta_text}" + (f"  [{label}]" if label else ""))
        if self.interactive:
            self.stream.write("\r" + line.ljust(100) + ("\n" if final else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.drawn = now
