"""``tablegen evaluate``: --max-seconds and TABLEGEN_TIME_LIMIT refuse a long report up front (exit 5, the estimate
named); the progress line goes to stderr, standard output stays the report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tablegen.cli.evaluate import EvaluationProgress
from tablegen.cli.main import main


@pytest.fixture(scope="module")
def predictions(tmp_path_factory):
    rng = np.random.default_rng(8)
    labels = np.r_[np.ones(30, int), np.zeros(50, int)]
    path = tmp_path_factory.mktemp("budget") / "preds.csv"
    rows = ["label,a,b", *(f"{y},{float(rng.normal() + y)!r},{float(rng.normal())!r}" for y in labels)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_max_seconds_refuses_with_the_estimate_and_exit_5(predictions, capsys):
    assert main(["evaluate", str(predictions), "--metrics", "auc", "--max-seconds", "0.000001"]) == 5
    err = capsys.readouterr().err
    assert "would take about" in err and "more than the limit of 1e-06 s" in err and "--max-seconds" in err


def test_tablegen_time_limit_refuses_with_exit_5(predictions, capsys, monkeypatch):
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "0.000001")
    assert main(["evaluate", str(predictions), "--metrics", "auc"]) == 5
    assert "TABLEGEN_TIME_LIMIT" in capsys.readouterr().err


def test_a_bad_max_seconds_exits_2_naming_it(predictions, capsys):
    assert main(["evaluate", str(predictions), "--metrics", "auc", "--max-seconds", "-3"]) == 2
    assert "--max-seconds" in capsys.readouterr().err


def test_progress_and_the_estimate_go_to_stderr_and_json_stays_clean(predictions, capsys, monkeypatch):
    monkeypatch.setattr(EvaluationProgress, "after_seconds", 0.0)  # draw from the first report
    monkeypatch.setattr(EvaluationProgress, "long_seconds", 0.0)   # and say the estimate, however short
    assert main(["evaluate", str(predictions), "--metrics", "auc", "--json"]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)["metrics"][0]["metric"] == "auc"
    assert "s of work on one core (estimated)" in printed.err
    lines = [line for line in printed.err.splitlines() if "of the estimated work" in line]
    assert lines and lines[-1].startswith("100.0% of the estimated work") and "ETA" in lines[-1]


def test_the_line_waits_for_two_seconds_of_work():
    import io

    clock = iter([0.0, 0.0, 0.5, 1.9]).__next__
    stream = io.StringIO()
    with EvaluationProgress(stream, clock=clock) as progress:
        progress(0.0, 5.0)
        progress(2.0, 5.0)
        progress(5.0, 5.0)
    assert stream.getvalue() == ""  # a short report prints nothing on stderr
