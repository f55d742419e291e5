"""The planning commands: ``power``, ``sample-size``, ``minimum-detectable`` and ``max-models`` print what the
library returns (its sentence, or its fields with ``--json``), ``power --plot`` draws the power curve, and bad
input exits with code 2 and a message naming the option, with nothing written."""

from __future__ import annotations

import json
import os

import pytest
from clitools import tablegen

import tablegen as tg
from tablegen.cli.main import main


def run_cli(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def strict(text: str):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_power_prints_the_library_sentence_and_its_json(capsys):
    expected = tg.power("best_f1", 40, 60, C=10, alpha=0.05, auc=0.75)
    code, out, _ = run_cli(capsys, "power", "best_f1", "--P", "40", "--N", "60", "--C", "10", "--alpha", "0.05",
                           "--auc", "0.75")
    assert code == 0 and out == expected.sentence() + "\n"
    assert "probability 0.9747 (exact)" in out
    code, out, _ = run_cli(capsys, "power", "best_f1", "--P", "40", "--N", "60", "--C", "10", "--alpha", "0.05",
                           "--auc", "0.75", "--json")
    assert code == 0 and strict(out) == expected.to_dict()


def test_power_with_all_winners_and_the_binormal_model(capsys):
    expected = tg.power("auc", 20, 20, C=10, alpha=0.05, auc=0.7, winners="all")
    code, out, _ = run_cli(capsys, "power", "auc", "--P", "20", "--N", "20", "--C", "10", "--alpha", "0.05",
                           "--auc", "0.7", "--winners", "all", "--json")
    assert code == 0 and strict(out) == expected.to_dict() and strict(out)["winners"] == 10
    expected = tg.power("best_accuracy", 30, 30, C=5, alpha=0.05, auc=0.7, model="binormal", R=2000, seed=3)
    code, out, _ = run_cli(capsys, "power", "best_accuracy", "--P", "30", "--N", "30", "--C", "5", "--alpha", "0.05",
                           "--auc", "0.7", "--model", "binormal", "--R", "2000", "--seed", "3")
    assert code == 0 and out == expected.sentence() + "\n"
    assert "Monte Carlo, 95% interval [" in out and "R = 2,000" in out


def test_beyond_the_exact_programme_power_simulates_with_the_r_and_seed_given(capsys):
    expected = tg.power("auc", 400, 400, C=10, alpha=0.05, auc=0.55, R=2000, seed=4)
    code, out, _ = run_cli(capsys, "power", "auc", "--P", "400", "--N", "400", "--C", "10", "--alpha", "0.05",
                           "--auc", "0.55", "--R", "2000", "--seed", "4", "--json")
    data = strict(out)
    assert code == 0 and data == expected.to_dict() and (data["method"], data["replicates"]) == ("monte carlo", 2000)


def test_sample_size_prints_first_and_stable_sizes(capsys):
    expected = tg.sample_size("best_accuracy", auc=0.8, C=1, alpha=0.05, prevalence=0.5)
    assert (expected.first_P + expected.first_N, expected.stable_P + expected.stable_N) == (24, 30)  # the saw-tooth
    code, out, _ = run_cli(capsys, "sample-size", "best_accuracy", "--C", "1", "--alpha", "0.05", "--auc", "0.8",
                           "--prevalence", "0.5")
    assert code == 0 and out == expected.sentence() + "\n"
    assert "first at P = 12, N = 12" in out and "from P = 15, N = 15" in out
    expected = tg.sample_size("best_f1", auc=0.7, C=100, alpha=0.05, N=200)
    code, out, _ = run_cli(capsys, "sample-size", "best_f1", "--C", "100", "--alpha", "0.05", "--auc", "0.7",
                           "--N", "200", "--json")
    assert code == 0 and strict(out) == expected.to_dict() and strict(out)["first_P"] == 52


def test_minimum_detectable_and_max_models_print_the_library_answers(capsys):
    expected = tg.minimum_detectable("auc", 50, 50, C=10, alpha=0.05)
    code, out, _ = run_cli(capsys, "minimum-detectable", "auc", "--P", "50", "--N", "50", "--C", "10", "--alpha",
                           "0.05")
    assert code == 0 and out == expected.sentence() + "\n" and "AUC 0.6923 or more" in out
    code, out, _ = run_cli(capsys, "minimum-detectable", "auc", "--P", "50", "--N", "50", "--C", "10", "--alpha",
                           "0.05", "--power", "0.9", "--json")
    assert code == 0 and strict(out) == tg.minimum_detectable("auc", 50, 50, C=10, alpha=0.05, power=0.9).to_dict()
    expected = tg.max_models("auc", 100, 100, auc=0.65, alpha=0.05)
    code, out, _ = run_cli(capsys, "max-models", "auc", "--P", "100", "--N", "100", "--auc", "0.65", "--alpha",
                           "0.05")
    assert code == 0 and out == expected.sentence() + "\n" and "up to 26 models" in out
    code, out, _ = run_cli(capsys, "max-models", "auc", "--P", "100", "--N", "100", "--auc", "0.65", "--alpha",
                           "0.05", "--json")
    assert code == 0 and strict(out) == expected.to_dict()


def test_power_plot_draws_the_curve(capsys, tmp_path):
    path = tmp_path / "curve.png"
    code, out, _ = run_cli(capsys, "power", "best_f1", "--P", "20", "--N", "20", "--C", "10", "--alpha", "0.05",
                           "--auc", "0.8", "--plot", str(path))
    assert code == 0 and out.splitlines()[-1] == f"wrote {path}"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bare = tmp_path / "bare"  # no suffix: written as PNG, and the message names the file written
    code, out, err = run_cli(capsys, "power", "best_f1", "--P", "20", "--N", "20", "--C", "10", "--alpha", "0.05",
                             "--auc", "0.8", "--plot", str(bare), "--json")
    assert code == 0 and strict(out)["power"] == tg.power("best_f1", 20, 20, 10, 0.05, auc=0.8).power
    assert err.strip() == f"wrote {bare}.png" and (tmp_path / "bare.png").exists()


POWER = ["power", "best_f1", "--P", "20", "--N", "20", "--C", "10", "--alpha", "0.05", "--auc", "0.75"]
SIZE = ["sample-size", "best_f1", "--C", "10", "--alpha", "0.05", "--auc", "0.75"]
DETECT = ["minimum-detectable", "best_f1", "--P", "20", "--N", "20", "--C", "10", "--alpha", "0.05"]
MODELS = ["max-models", "best_accuracy", "--P", "20", "--N", "20", "--alpha", "0.05"]


@pytest.mark.parametrize("argv, code, message", [
    ([*POWER[:-1], "1.2"], 2, "--auc must be in [0.5, 1), got 1.2"),
    ([*POWER[:-1], "0.4"], 2, "--auc must be in [0.5, 1), got 0.4"),
    ([*POWER, "--winners", "0"], 2, "--winners must be an integer in [1, C] or 'all', got 0"),
    ([*POWER, "--winners", "x"], 2, "--winners must be an integer in [1, C] or 'all', got 'x'"),
    ([*POWER, "--model", "binormal", "--R", "0"], 2, "--R must be a positive integer, got 0"),
    ([*POWER, "--R", "-1"], 2, "--R must be a positive integer, got -1"),  # refused though the answer is exact
    ([*POWER, "--R", "9223372036854775808"], 2, "--R must be at most 2**53"),
    ([*POWER, "--seed", "-1"], 2, "--seed"),
    ([*POWER, "--model", "binormal", "--plot", "curve.png"], 2, "--plot draws exact power"),
    ([*POWER, "--plot", "adir"], 2, "--plot adir: is a directory"),
    ([*POWER, "--plot", "curve.bogus"], 2, "not an image format"),
    (["power", "nope", *POWER[2:]], 2, "unknown metric 'nope'"),
    (["minimum-detectable", "auc", "--P", "20", "--N", "20", "--C", "10", "--model", "binormal", "--R", "0"], 2,
     "--R must be a positive integer, got 0"),
    (["max-models", "auc", "--P", "20", "--N", "20", "--auc", "0.7", "--model", "binormal", "--seed", "-1"], 2,
     "--seed"),
    ([*SIZE, "--prevalence", "0.5", "--power", "1.5"], 2, "--power must be in (0, 1), got 1.5"),
    ([*SIZE, "--prevalence", "0"], 2, "--prevalence must be in (0, 1), got 0"),
    ([*SIZE, "--prevalence", "0.5", "--max-size", "20"], 2, "--max-size 20"),
    ([*SIZE, "--prevalence", "0.5", "--winners", "all"], 0, ""),
    ([*DETECT, "--power", "0"], 2, "--power must be in (0, 1), got 0"),
    ([*MODELS, "--auc", "1"], 2, "--auc must be in [0.5, 1), got 1"),
    ([*MODELS, "--auc", "0.75", "--power", "0.999999"], 0, ""),
])
def test_bad_input_names_the_option_and_writes_nothing(tmp_path, argv, code, message):
    (tmp_path / "adir").mkdir()
    before = sorted(os.listdir(tmp_path))
    found, err = tablegen(argv, tmp_path)
    assert found == code, err
    assert message in err if code else True
    assert "Traceback" not in err
    if code:
        assert sorted(os.listdir(tmp_path)) == before


def test_a_size_line_needs_exactly_one_of_prevalence_p_and_n(tmp_path):
    code, err = tablegen([*SIZE, "--prevalence", "0.5", "--P", "20"], tmp_path)
    assert code == 2 and "not allowed with argument" in err
    code, err = tablegen(SIZE, tmp_path)
    assert code == 2 and "one of the arguments --prevalence --P --N is required" in err


def test_the_planners_simulate_under_the_binormal_model_with_the_r_and_seed_given(capsys):
    expected = tg.minimum_detectable("best_f1", 30, 40, C=10, alpha=0.05, model="binormal", R=1500, seed=6)
    code, out, _ = run_cli(capsys, "minimum-detectable", "best_f1", "--P", "30", "--N", "40", "--C", "10", "--alpha",
                           "0.05", "--model", "binormal", "--R", "1500", "--seed", "6", "--json")
    assert code == 0 and strict(out) == expected.to_dict() and strict(out)["auc_low"] <= expected.auc
    expected = tg.max_models("auc", 30, 40, auc=0.75, alpha=0.05, model="binormal", R=1500, seed=6)
    code, out, _ = run_cli(capsys, "max-models", "auc", "--P", "30", "--N", "40", "--auc", "0.75", "--alpha", "0.05",
                           "--model", "binormal", "--R", "1500", "--seed", "6")
    assert code == 0 and out == expected.sentence() + "\n" and "95% interval of C" in out


def test_minimum_detectable_reads_the_table_given(capsys):
    expected = tg.minimum_detectable("best_f1", 100, 100, C=100, alpha=0.05, table=True)
    code, out, _ = run_cli(capsys, "minimum-detectable", "best_f1", "--P", "100", "--N", "100", "--C", "100",
                           "--alpha", "0.05", "--table", "bundled", "--json")
    assert code == 0 and strict(out) == expected.to_dict() and strict(out)["method"] == "table"
    code, out, _ = run_cli(capsys, "minimum-detectable", "best_f1", "--P", "100", "--N", "100", "--C", "100",
                           "--alpha", "0.05", "--table", "bundled")
    assert code == 0 and "exact, read from the table" in out
    code, _, err = run_cli(capsys, "minimum-detectable", "best_f1", "--P", "101", "--N", "100", "--C", "100",
                           "--alpha", "0.05", "--table", "bundled")
    assert code == 2 and "--table" in err and "P = 101 is not in this table" in err
