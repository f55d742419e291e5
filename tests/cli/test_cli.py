"""The command line is a thin layer: it prints the cell's table and turns bad input into exit code 2."""

import subprocess
import sys

from tablegen.cli.main import main


def test_simulate_prints_estimates_beside_exact_values(capsys):
    assert main(["simulate", "--P", "20", "--N", "20", "--R", "20000", "--seed", "3",
                 "--metrics", "best_accuracy", "average_precision", "--C", "10", "--alpha", "0.01"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == "P = 20, N = 20, R = 20,000, seed = 3"
    accuracy = next(line for line in lines if line.startswith("best_accuracy"))
    assert accuracy.split()[-1] == "0.775"  # the exact value, as published for (20, 20)
    precision = next(line for line in lines if line.startswith("average_precision"))
    assert precision.split()[-1] == "-"  # no exact routine
    assert "20,000/20,000 replicates  100.0%" in captured.err


def test_bad_input_is_reported_with_the_argument_name(capsys):
    assert main(["simulate", "--P", "20", "--N", "20", "--R", "100", "--C", "1000"]) == 2
    assert "R = 100 is too small for C = 1000" in capsys.readouterr().err


def test_module_entry_point_runs():
    result = subprocess.run([sys.executable, "-m", "tablegen", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("tablegen ")
