"""Waiting in tests without a wall-clock bound: fail on a hang, never on a slow (loaded) machine.

A test that waits for a process bounds its progress, not its duration: it fails when what it watches (the run's
progress line, a store's files, a virtual environment being installed) has not changed for
:data:`IDLE_SECONDS`, however long the whole takes (:func:`wait_while_progressing`).  A wait with nothing to
watch (a process that starts, a short command's reply) is capped at :data:`HANG_SECONDS`, the last resort
against a hang: each such wait takes at most a few seconds on a quiet 2-core machine, so the cap is more than
a hundred times that, and a machine 5x slower stays far inside it.  A test that claims an answer comes "at once"
scales its bound by :func:`pace_factor`, measured in the same test.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

#: Seconds without any change in what a test watches before it calls the wait a hang: the longest step
#: without a sign in any test (a task's exact AUC sweep of the README's main job, ~20 s quiet) is 15 times
#: shorter, so a machine 5x slower is 3 times inside it.
IDLE_SECONDS = 300.0
#: Seconds a wait with nothing to watch may take before it is called a hang (an int: ``signal.alarm`` takes it).
HANG_SECONDS = 900

#: The run's progress line without its clocks: "12/361 cells   3.4% of the work".
_PROGRESS = re.compile(r"[\d,]+/[\d,]+ cells\s+[\d.]+% of the work")


#: Wall seconds of :func:`_calibration_work` on a quiet 2-core machine (AMD EPYC, 2026-11: 0.061-0.076 s; 0.20-0.42 s
#: with six busy processes beside it, when a lookup that takes 0.46 s quiet took 1.9-2.8 s).
QUIET_PACE_SECONDS = 0.07


def _calibration_work() -> int:
    return sum(i * i for i in range(2_000_000))


def pace_factor() -> float:
    """How many times slower than a quiet 2-core machine this one runs now (at least 1): the wall time of a fixed
    pure-Python workload, measured now, over :data:`QUIET_PACE_SECONDS`.  A bound on the time something takes,
    multiplied by it, holds on a loaded (or slower) machine as it does on a quiet one."""
    start = time.perf_counter()
    _calibration_work()
    return max(1.0, (time.perf_counter() - start) / QUIET_PACE_SECONDS)


def progress_lines(path) -> Callable[[], frozenset]:
    """The distinct progress lines (cells done and share of the work, without elapsed time or ETA) written to
    the file ``path`` so far: a stalled run repeats its line, which is no progress."""
    def state() -> frozenset:
        try:
            return frozenset(_PROGRESS.findall(Path(path).read_text(errors="replace")))
        except FileNotFoundError:
            return frozenset()
    return state


def file_size(path) -> Callable[[], int]:
    """The size of the file ``path`` (0 while it does not exist): any output written counts."""
    def state() -> int:
        try:
            return os.stat(path).st_size
        except FileNotFoundError:
            return 0
    return state


def tree_state(path) -> Callable[[], tuple[int, int, int]]:
    """(files, bytes, latest modification in ns) under the folder ``path``: a store's chunks being written, a
    virtual environment being installed."""
    def state() -> tuple[int, int, int]:
        files = size = latest = 0
        for folder, _, names in os.walk(path):
            for name in names:
                try:
                    info = os.lstat(os.path.join(folder, name))
                except FileNotFoundError:  # removed while we looked
                    continue
                files, size, latest = files + 1, size + info.st_size, max(latest, info.st_mtime_ns)
        return files, size, latest
    return state


def wait_while_progressing(process, *watched: Callable[[], object], until: Callable[[], bool] | None = None,
                           idle: float = IDLE_SECONDS, poll: float = 0.2) -> int | None:
    """Wait for ``process`` (a :class:`subprocess.Popen`) to exit and return its exit status, or until ``until()``
    is true (then None, the process still running), failing only if nothing in ``watched`` (functions whose
    values change as the work advances) has changed for ``idle`` seconds: the process (its process group, if it
    leads one) is then killed and an AssertionError raised.
    """
    last, since = None, time.monotonic()
    while True:
        if process.poll() is not None:
            return process.returncode
        if until is not None and until():
            return None
        state, now = tuple(watch() for watch in watched), time.monotonic()
        if state != last:
            last, since = state, now
        elif now - since > idle:
            _kill(process)
            raise AssertionError(f"no progress for {idle:g} s (a hang): {process.args!r}; the last state seen: "
                                 f"{str(last)[-500:]}")
        time.sleep(poll)


def _kill(process) -> None:
    try:
        if os.getpgid(process.pid) == process.pid:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()
