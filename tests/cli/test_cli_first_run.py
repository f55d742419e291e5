"""What a first run shows: the run's progress line (work from running tasks, an ETA from the work's own pace),
a closed pipe that ends a command quietly, metric names in any case, and the defaults that make a command
repeat (``plot``/``export``'s alpha, ``compare f1``'s seed)."""

from __future__ import annotations

import io
import math
import os
import subprocess
import sys
import time
import types

import pytest
from jobtools import small_config
from progresstools import HANG_SECONDS

from tablegen.batch.job import run
from tablegen.batch.plan import Chunk, chunk_seconds, make_plan
from tablegen.cli.main import EXIT_BROKEN_PIPE, main
from tablegen.cli.progress import RunProgress, Throughput


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _progress(tmp_path, interactive=False):
    config = small_config(tmp_path / "p.zarr")
    stream, clock = io.StringIO(), _Clock()
    stream.isatty = lambda: interactive
    return config, RunProgress(config, make_plan(config), stream, clock), stream, clock


def test_the_run_line_counts_running_work_and_measures_the_pace_from_the_first_work_done(tmp_path):
    config, line, stream, clock = _progress(tmp_path)
    total = make_plan(config).core_seconds_remaining
    first, second = Chunk(0, 2, 0, 2), Chunk(0, 2, 2, 3)
    line(0, 12, None)
    clock.now = 3.0  # cluster up
    line.tasks_started()
    line.work(first, 0.0, 0.01)  # a task starts: shown at once, before any step is done
    assert stream.getvalue().splitlines()[-1].split()[:3] == ["0/12", "cells", "0.0%"]
    clock.now = 4.0
    line.work(first, 0.2 * total, 0.1 * total)  # a first step done at 4 s: the pace is measured from here
    clock.now = 4.0 + 0.05 * total  # half-way into a step of 0.1 * total seconds: credited by time
    assert line.share() == pytest.approx(0.2 + 0.05)
    clock.now = 10_000.0  # ... but never more than 0.9 of the step
    assert line.share() == pytest.approx(0.2 + 0.09)
    clock.now = 6.0
    line(4, 12, first)  # finished: its whole estimate
    line.work(second, 0.0, 0.0)
    share, rate = chunk_seconds(config, first) / total, (chunk_seconds(config, first) - 0.2 * total) / 2.0
    eta = float(stream.getvalue().splitlines()[-1].split("ETA")[1].split()[0])
    assert eta == pytest.approx((1 - share) * total / rate, abs=0.1)  # the pace of the 2 s since the first step


def test_the_run_line_shows_no_eta_before_one_percent_of_the_work(tmp_path):
    config, line, stream, clock = _progress(tmp_path, interactive=True)
    total = make_plan(config).core_seconds_remaining
    line.work(Chunk(0, 2, 0, 2), 0.005 * total, 0.0)
    assert "ETA       -" in stream.getvalue() and stream.getvalue().startswith("\r")
    clock.now = 1.0
    line.work(Chunk(0, 2, 0, 2), 0.02 * total, 0.0)
    assert "ETA       -" not in stream.getvalue().split("\r")[-1]


def test_on_a_terminal_the_line_ticks_while_the_cluster_starts_and_stops_when_the_tasks_start(tmp_path):
    config = small_config(tmp_path / "p.zarr")
    stream = io.StringIO()
    stream.isatty = lambda: True
    line = RunProgress(config, make_plan(config), stream)
    line(0, 12, None)  # before the first task: the line is drawn, then redrawn as time passes
    deadline = time.monotonic() + HANG_SECONDS  # a hang cap only: two redraws take half a second
    while stream.getvalue().count("[starting]") < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stream.getvalue().count("[starting]") >= 2
    line.tasks_started()
    drawn = stream.getvalue()
    assert drawn.endswith("\n")  # the dashboard's line comes on a line of its own
    time.sleep(2 * line.redraw_seconds)
    assert stream.getvalue() == drawn  # no more ticks
    line.work(None, 0.0, 0.0)  # the cluster looked at, no report yet: the line still moves
    assert "[waiting for the workers]" in stream.getvalue()[len(drawn):]


def _eta_ratios(paces, total=2_000.0, tasks=2, step=1.0, time_constant=RunProgress.rate_seconds):
    """Run a fake job through the line, second by second: ``tasks`` tasks share the work at ``paces[t]``
    (seconds of estimated work per second, all tasks together, in second ``t``), each reporting its work
    when ``step`` seconds of it are done.  Returns, per second from 1% of the work on, (time, the line's
    ETA / the true time left at the pace of that second)."""
    plan = types.SimpleNamespace(core_seconds_remaining=total, cells_done=0, cells=1)
    stream, clock = io.StringIO(), _Clock()
    stream.isatty = lambda: False
    line = RunProgress(None, plan, stream, clock)
    line.throughput = Throughput(time_constant)
    chunks, ratios = [Chunk(0, 1, i, i + 1) for i in range(tasks)], []
    done, reported = [0.0] * tasks, [-i * step / tasks for i in range(tasks)]
    for t, pace in enumerate(paces):
        for tick in range(10):  # work at the pace, each task reporting a step once it is done
            clock.now = t + (tick + 1) / 10
            for i, chunk in enumerate(chunks):
                done[i] += pace / tasks / 10
                if done[i] - reported[i] >= step - 1e-9:
                    reported[i] = done[i]
                    line.work(chunk, done[i], step)
        share = line.share()
        eta = line.eta(share)
        if eta is not None:
            ratios.append((t, eta / ((1 - share) * total / pace)))
    return ratios


def test_the_eta_follows_the_recent_pace_within_a_factor_of_two_when_the_load_changes():
    """The machine gets five times busier at 100 s and quiet again at 250 s: the ETA (from the throughput of
    the last tens of seconds) is within 2x of the time left at the new pace once 1.5 time constants have
    passed after each change, and within 2x throughout a steady pace, from 1% of the work on; with the whole run's
    average pace (the former ETA) it is still more than 2x off 100 and 149 s after the first change."""
    paces = [4.0] * 100 + [0.8] * 150 + [4.0] * 100
    ratios = _eta_ratios(paces)
    settle = 1.5 * RunProgress.rate_seconds
    assert ratios and ratios[0][0] <= 6  # an ETA from 1% of the work (20 of 2,000 s): after 5 s at 4/s
    for t, ratio in ratios:
        if not (100 <= t < 100 + settle or 250 <= t < 250 + settle):
            assert 0.5 <= ratio <= 2.0, (t, ratio)
    whole_run = dict(_eta_ratios(paces, time_constant=1e12))  # the pace averaged over the whole run
    assert whole_run[200] < 0.5 and whole_run[249] < 0.5


def test_the_eta_holds_within_2x_when_work_comes_in_long_lumps():
    """Two tasks each report 20 s of work at once (AUC's exact sweep of a chunk, seen only when it ends):
    the ETA stays within 2x of the time left, from 1% of the work on."""
    ratios = _eta_ratios([2.0] * 300, total=1_000.0, step=20.0)
    assert ratios and ratios[0][0] <= 20  # once two lumps have come
    assert all(0.5 <= ratio <= 2.0 for _, ratio in ratios), [r for r in ratios if not 0.5 <= r[1] <= 2]


def test_the_throughput_counts_no_time_before_the_first_work_and_a_restarted_task_once():
    rate = Throughput(time_constant=10.0)
    assert rate.rate() is None
    rate.update(30.0, 5.0)  # 30 s of start-up: not measured
    assert rate.rate() is None
    rate.update(31.0, 7.0)
    assert rate.rate() == pytest.approx(2.0)
    rate.update(32.0, 0.0)  # a task lost and run again from its start: no negative work
    rate.update(33.0, 2.0)
    assert rate.rate() == pytest.approx((2.0 * math.exp(-0.2) + 2.0) / (math.exp(-0.2) + math.exp(-0.1) + 1.0))
    with pytest.raises(ValueError, match="time_constant"):
        Throughput(time_constant=0.0)


def test_a_closed_pipe_ends_a_command_quietly():
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    process = subprocess.Popen([sys.executable, "-m", "tablegen", "info"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)
    process.stdout.close()  # the reader is gone before the first line (`tablegen info | head -0`)
    error = process.stderr.read().decode()
    assert process.wait(timeout=HANG_SECONDS) == EXIT_BROKEN_PIPE
    assert "Traceback" not in error and "BrokenPipeError" not in error, error


def test_a_closed_pipe_in_a_command_returns_the_pipe_status(monkeypatch, tmp_path):
    class Gone(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self):
            return os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT)

    monkeypatch.setattr(sys, "stdout", Gone())
    assert main(["export", "--metric", "auc", "--C", "10"]) == EXIT_BROKEN_PIPE


def test_metric_names_in_any_case_and_a_typo_gets_a_suggestion(capsys):
    assert main(["lookup", "AUC", "--P", "10", "--N", "10", "--C", "10", "--alpha", "0.05", "--json"]) == 0
    upper = capsys.readouterr().out
    assert main(["lookup", "auc", "--P", "10", "--N", "10", "--C", "10", "--alpha", "0.05", "--json"]) == 0
    assert capsys.readouterr().out == upper
    assert main(["lookup", "Best_F", "--P", "10", "--N", "10", "--C", "10"]) == 2
    assert "did you mean 'best_f1'?" in capsys.readouterr().err


def test_export_and_plot_default_to_an_alpha_the_store_holds(tmp_path, capsys):
    config = small_config(tmp_path / "a05.zarr", grid={"P": [5, 10], "N": [8, 16]}, replicates=10_000, Cs=[10],
                          alphas=[0.05], chunks={"P": 2, "N": 2})
    run(config, executor="serial")
    assert main(["export", str(tmp_path / "a05.zarr"), "--metric", "Best_Accuracy", "--C", "10", "--json"]) == 0
    assert '"alpha": 0.05' in capsys.readouterr().out
    assert main(["export", str(tmp_path / "a05.zarr"), "--metric", "auc", "--C", "10", "--alpha", "0.01"]) == 2
    assert "alpha = 0.01 is not in" in capsys.readouterr().err
