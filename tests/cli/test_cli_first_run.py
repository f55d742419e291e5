"""What a first run shows: the run's progress line (work from running tasks, an ETA from the work's own pace),
a closed pipe that ends a command quietly, metric names in any case, and the defaults that make a command
repeat (``plot``/``export``'s alpha, ``compare f1``'s seed)."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from jobtools import small_config

from tablegen.batch.job import run
from tablegen.batch.plan import Chunk, chunk_seconds, make_plan
from tablegen.cli.main import EXIT_BROKEN_PIPE, main
from tablegen.cli.progress import RunProgress


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


def test_the_run_line_counts_running_work_and_extrapolates_from_the_first_step(tmp_path):
    config, line, stream, clock = _progress(tmp_path)
    total = make_plan(config).core_seconds_remaining
    first, second = Chunk(0, 2, 0, 2), Chunk(0, 2, 2, 3)
    line(0, 12, None)
    clock.now = 3.0  # cluster up
    line.tasks_started()
    line.work(first, 0.0, 0.01)  # a task starts: shown at once, before any step is done
    assert stream.getvalue().splitlines()[-1].split()[:3] == ["0/12", "cells", "0.0%"]
    clock.now = 4.0
    line.work(first, 0.2 * total, 0.1 * total)  # a first step done at 4 s: the ETA's clock starts here
    clock.now = 4.0 + 0.05 * total  # half-way into a step of 0.1 * total seconds: credited by time
    assert line.share() == pytest.approx(0.2 + 0.05)
    clock.now = 10_000.0  # ... but never more than 0.9 of the step
    assert line.share() == pytest.approx(0.2 + 0.09)
    clock.now = 6.0
    line(4, 12, first)  # finished: its whole estimate
    line.work(second, 0.0, 0.0)
    share = chunk_seconds(config, first) / total
    eta = float(stream.getvalue().splitlines()[-1].split("ETA")[1].split()[0])
    assert eta == pytest.approx(2.0 * (1 - share) / share, abs=0.1)  # 2 s since the first step, not 6


def test_the_run_line_shows_no_eta_before_one_percent_of_the_work(tmp_path):
    config, line, stream, clock = _progress(tmp_path, interactive=True)
    total = make_plan(config).core_seconds_remaining
    line.work(Chunk(0, 2, 0, 2), 0.005 * total, 0.0)
    assert "ETA       -" in stream.getvalue() and stream.getvalue().startswith("\r")
    clock.now = 1.0
    line.work(Chunk(0, 2, 0, 2), 0.02 * total, 0.0)
    assert "ETA       -" not in stream.getvalue().split("\r")[-1]


def test_a_closed_pipe_ends_a_command_quietly():
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    process = subprocess.Popen([sys.executable, "-m", "tablegen", "info"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)
    process.stdout.close()  # the reader is gone before the first line (`tablegen info | head -0`)
    error = process.stderr.read().decode()
    assert process.wait(timeout=60) == EXIT_BROKEN_PIPE
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
