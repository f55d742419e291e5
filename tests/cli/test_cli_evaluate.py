"""``tablegen evaluate PREDS.csv``: the Python report, printed; its forms; its errors name the options."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tablegen
from tablegen.cli.evaluate import format_report
from tablegen.cli.main import main


@pytest.fixture(scope="module")
def predictions(tmp_path_factory):
    rng = np.random.default_rng(21)
    labels = np.r_[np.ones(9, int), np.zeros(11, int)]
    models = {"tuned": labels + rng.normal(size=20), "default": labels + 1.5 * rng.normal(size=20)}
    path = tmp_path_factory.mktemp("evaluate") / "preds.csv"
    rows = ["y,tuned,default", *(f"{y},{float(models['tuned'][i])!r},{float(models['default'][i])!r}"
                                 for i, y in enumerate(labels))]
    path.write_text("\n".join(rows) + "\n")
    return path, labels, models


def test_the_command_prints_the_python_report(predictions, capsys):
    path, labels, models = predictions
    assert main(["evaluate", str(path), "--label-column", "y", "--C", "4", "--metrics", "auc", "best_f1"]) == 0
    expected = tablegen.evaluate(labels, models, C=4, metrics=["auc", "best_f1"])
    assert capsys.readouterr().out == format_report(expected) + "\n"


def test_the_command_prints_json_markdown_latex_and_a_picture(predictions, capsys, tmp_path):
    path, labels, models = predictions
    expected = tablegen.evaluate(labels, models, metrics=["auc"])
    assert main(["evaluate", str(path), "--label-column", "y", "--metrics", "auc", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(expected.to_dict()))
    assert main(["evaluate", str(path), "--label-column", "y", "--metrics", "auc", "--markdown"]) == 0
    assert capsys.readouterr().out == expected.to_markdown() + "\n"
    assert main(["evaluate", str(path), "--label-column", "y", "--metrics", "auc", "--latex",
                 "--plot", str(tmp_path / "roc.png")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("\\begin{table}") and out.endswith(f"wrote {tmp_path / 'roc.png'}\n")
    assert (tmp_path / "roc.png").stat().st_size > 10_000


@pytest.mark.parametrize(("argv", "message"), [
    ([], "no label column 'label'"),
    (["--label-column", "y", "--C", "1"], "C = 1 is less than the 2 models"),
    (["--label-column", "y", "--method", "table", "--seed", "3"], "--seed applies only to simulated answers"),
    (["--label-column", "y", "--metrics", "nope"], "unknown metric 'nope'"),
])
def test_bad_input_exits_2_naming_the_option(predictions, capsys, argv, message):
    path, _, _ = predictions
    assert main(["evaluate", str(path), *argv]) == 2
    assert message in capsys.readouterr().err
