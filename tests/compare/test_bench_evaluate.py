"""benchmarks/bench_evaluate.py's tables: a case stopped at the CPU cap has partial stage figures, marked so and
given no ratio (once the before tree's max-T figure at 10^6 items, AUC's alone, was set against the after tree's
five metrics as a 0.34x ratio)."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))  # the script imports its sibling machine.py
    try:
        spec = importlib.util.spec_from_file_location("bench_evaluate", BENCHMARKS / "bench_evaluate.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


def _stopped(stages, stopped_in=None, cpu=150.0):
    result = {"case": "10x1e6", "stopped": True, "done": None, "cpu_at_stop": cpu, "stages": stages}
    if stopped_in is not None:
        result["stopped_in"] = stopped_in
    return result


def _done(stages, seconds):
    return {"case": "10x1e6", "stopped": False, "done": {"seconds": seconds}, "cpu_at_stop": seconds,
            "stages": stages}


def _rows(text):
    """{stage: [before, after, ratio]} of the before/after table."""
    rows = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 5 and cells[0] == "10 x 1,000,000":
            rows[cells[1]] = cells[2:]
    return rows


def test_a_stopped_case_s_stages_are_partial_and_have_no_ratio(bench, capsys):
    """The measured 10^6 case of the last session: both trees stopped at 150 s, the before tree after AUC's max-T
    (its stage not the one it was stopped in), the after tree in the max-T stage."""
    before = _stopped({"values": 1.85, "best-of-C verdict": 62.66, "max-T selection test": 41.52,
                       "paired tests": 7.98, "bootstrap intervals": 33.18})
    after = _stopped({"values": 1.44, "best-of-C verdict": 23.23, "max-T selection test": 122.54},
                     stopped_in="max-T selection test")
    bench.print_before_after([(before, after)], 150.0, "/tmp/before")
    rows = _rows(capsys.readouterr().out)

    assert rows["max-T selection test"] == ["41.52 (partial)", "122.54 (partial)", "-"]
    assert rows["values"] == ["1.85 (partial)", "1.44 (partial)", "-"]
    assert rows["paired tests"] == ["7.98 (partial)", "…", "-"]
    assert rows["total"] == ["over 150", "over 150", "-"]  # both stopped: nothing is known of the ratio


def test_complete_cases_keep_their_ratios_and_a_stopped_total_is_a_bound(bench, capsys):
    before = _stopped({"values": 2.0, "paired tests": 40.0}, stopped_in="paired tests", cpu=60.0)
    after = _done({"values": 1.0, "paired tests": 10.0}, 12.0)
    both_done = (_done({"values": 3.0}, 6.0), _done({"values": 1.5}, 3.0))
    bench.print_before_after([both_done], 60.0, "/tmp/before")
    rows = _rows(capsys.readouterr().out)
    assert rows["values"] == ["3.00", "1.50", "2.00x"] and rows["total"] == ["6.00", "3.00", "2.00x"]

    bench.print_before_after([(before, after)], 60.0, "/tmp/before")
    rows = _rows(capsys.readouterr().out)
    assert rows["values"] == ["2.00 (partial)", "1.00", "-"]
    assert rows["paired tests"] == ["40.00 (partial)", "10.00", "-"]
    assert rows["total"] == ["over 60", "12.00", "at least 5.00x"]


def test_the_stage_table_marks_a_stopped_case_s_figures(bench, capsys):
    result = dict(_stopped({"values": 1.0, "max-T selection test": 5.0}, stopped_in="max-T selection test", cpu=9.0),
                  start={"missing": []})
    bench.print_stages([result], 9.0)
    lines = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in capsys.readouterr().out.splitlines()
             if line.startswith("| ")}
    assert lines["values"] == "1.00 (partial)"
    assert lines["max-T selection test"] == "5.00 (stopped)"
    assert lines["paired tests"] == "…"
