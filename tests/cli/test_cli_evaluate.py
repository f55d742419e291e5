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
    assert capsys.readouterr().out == ("scored 2 model column(s): tuned, default (every column but the label).\n"
                                       + format_report(expected) + "\n")


def test_the_command_prints_json_markdown_latex_and_a_picture(predictions, capsys, tmp_path):
    path, labels, models = predictions
    expected = tablegen.evaluate(labels, models, metrics=["auc"])
    assert main(["evaluate", str(path), "--label-column", "y", "--metrics", "auc", "--json"]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out) == json.loads(json.dumps(expected.to_dict()))
    assert printed.err.startswith("scored 2 model column(s): tuned, default")  # stdout stays JSON
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


def _with_an_id(tmp_path, predictions, name: str, values) -> str:
    _, labels, models = predictions
    rows = [f"{name},y,tuned,default", *(f"{values[i]},{y},{float(models['tuned'][i])!r},"
                                         f"{float(models['default'][i])!r}" for i, y in enumerate(labels))]
    path = tmp_path / "with_id.csv"
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_an_id_column_is_left_out_and_said_so(predictions, tmp_path, capsys):
    """Once: a numeric id column was scored as a model and raised the default C.  Sorted by label, the ids
    rank every positive first: scored, they would win AUC with 1.0."""
    _, labels, models = predictions
    path = _with_an_id(tmp_path, predictions, "id", range(1, 21))
    assert main(["evaluate", path, "--label-column", "y", "--metrics", "auc", "--json"]) == 0
    printed = capsys.readouterr()
    report = json.loads(printed.out)
    assert (report["models"], report["C"]) == (["tuned", "default"], 2)
    assert report == json.loads(json.dumps(tablegen.evaluate(labels, models, metrics=["auc"]).to_dict()))
    assert printed.err == ("scored 2 model column(s): tuned, default (every column but the label and those left "
                           "out); left out: id (named like a row identifier).\n")


@pytest.mark.parametrize("name", ["row_number", "order"])
def test_a_column_of_distinct_integers_is_refused_asking_which_columns_are_models(predictions, tmp_path, capsys,
                                                                                name):
    path = _with_an_id(tmp_path, predictions, name, range(1, 21))
    assert main(["evaluate", path, "--label-column", "y", "--metrics", "auc"]) == 2
    err = capsys.readouterr().err
    assert f"column {name!r} holds 20 distinct integers, as a row identifier does" in err
    assert "--models" in err and f"--ignore {name}" in err


def test_models_and_ignore_choose_the_columns(predictions, tmp_path, capsys):
    _, labels, models = predictions
    path = _with_an_id(tmp_path, predictions, "rank", range(1, 21))
    assert main(["evaluate", path, "--label-column", "y", "--metrics", "auc", "--ignore", "rank", "--json"]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)["models"] == ["tuned", "default"]
    assert "left out: rank (named by --ignore)" in printed.err
    assert main(["evaluate", path, "--label-column", "y", "--metrics", "auc", "--models", "rank,tuned", "--json"]) == 0
    printed = capsys.readouterr()
    report = json.loads(printed.out)
    assert (report["models"], report["metrics"][0]["winner"], report["metrics"][0]["values"]["rank"]) == (
        ["rank", "tuned"], "tuned", 0.0)  # ranks given as scores are scored when named: here the inverse order
    assert printed.err == ("scored 2 model column(s): rank, tuned (named by --models); left out: default (not in "
                           "--models).\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["--models", "tuned,nope"], "--models: PREDS.csv"),
    (["--models", "y"], "--models names the label column 'y'"),
    (["--ignore", "tuned,tuned"], "--ignore must name columns, comma-separated, each once"),
    (["--models", "tuned", "--ignore", "default"], "--models and --ignore: give one of them"),
    (["--ignore", "tuned,default,id"], "no model column"),
])
def test_bad_column_choices_exit_2_naming_the_option(predictions, tmp_path, capsys, argv, message):
    path = _with_an_id(tmp_path, predictions, "id", range(1, 21))
    assert main(["evaluate", path, "--label-column", "y", "--metrics", "auc", *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_text_column_s_error_says_how_to_leave_it_out(predictions, tmp_path, capsys):
    path = _with_an_id(tmp_path, predictions, "name", [f"s{i}" for i in range(20)])
    assert main(["evaluate", path, "--label-column", "y", "--metrics", "auc"]) == 2
    err = capsys.readouterr().err
    assert "column 'name'" in err and "'s0' is not a number" in err and "--ignore name" in err


def test_the_scores_file_form_of_test_chooses_columns_alike(predictions, tmp_path, capsys):
    path = _with_an_id(tmp_path, predictions, "id", range(1, 21))
    assert main(["test", "--scores-file", path, "--label-column", "y", "--metrics", "auc", "--json"]) == 0
    printed = capsys.readouterr()
    assert json.loads(printed.out)["models"] == ["tuned", "default"] and "left out: id" in printed.err
    assert main(["test", "auc", "0.9", "--P", "9", "--N", "11", "--C", "2", "--models", "a"]) == 2
    assert "--models applies only with --scores-file" in capsys.readouterr().err
