"""``tablegen evaluate PREDS.csv`` with more than two classes: the layouts (predicted labels, MODEL:CLASS
probabilities) read and told apart, the report printed equal to ``tablegen.evaluate``'s on the same labels and
predictions (text, strict JSON, Markdown, LaTeX, the plot), every bad input refused with exit code 2 (5 over the
memory or time limit) naming the row and column and writing nothing; two-class files keep the binary report."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
from clitools import tablegen

import tablegen as tg
from tablegen.cli.evaluate import format_multiclass_report
from tablegen.cli.main import main
from tablegen.cli.multiclass_csv import read_multiclass_predictions
from tablegen.common import csvfile
from tablegen.compare.report.multiclass import evaluate_multiclass

K3_LABELS = ["cat", "cat", "cat", "dog", "dog", "dog", "fox", "fox", "fox", "fox"]
K3_TREE = ["cat", "cat", "dog", "dog", "dog", "fox", "fox", "fox", "fox", "cat"]
K3_FOREST = ["cat", "dog", "cat", "dog", "dog", "dog", "fox", "cat", "fox", "fox"]


def _write(path, rows: list[str]) -> str:
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _labels_file(path, labels, models: dict) -> str:
    return _write(path, [",".join(["label", *models]),
                         *(",".join([str(y), *(str(m[i]) for m in models.values())]) for i, y in enumerate(labels))])


def _probabilities(rng, labels, classes, sharp: float) -> np.ndarray:
    """Rows summing to 1 exactly as printed: a softmax rounded to 6 decimals, the last column the remainder."""
    logits = rng.normal(size=(len(labels), len(classes)))
    logits[np.arange(len(labels)), [classes.index(y) for y in labels]] += sharp
    p = np.round(np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), 6)
    p[:, -1] = np.round(1.0 - p[:, :-1].sum(axis=1), 6)
    return p


def _probabilities_file(path, labels, classes, models: dict) -> str:
    header = ["label", *(f"{m}:{c}" for m in models for c in classes)]
    rows = [",".join([str(y), *(f"{models[m][i, j]:.6f}" for m in models for j in range(len(classes)))])
            for i, y in enumerate(labels)]
    return _write(path, [",".join(header), *rows])


def _run(argv, capsys) -> tuple[int, str, str]:
    code = main([str(word) for word in argv])
    printed = capsys.readouterr()
    return code, printed.out, printed.err


def _strict_json(text: str) -> dict:
    def refuse(constant):
        raise AssertionError(f"not strict JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


def _report_json(labels, predictions, **options) -> dict:
    """The Python report's JSON, the oracle of the command's (the same labels and predictions)."""
    return json.loads(json.dumps(tg.evaluate(labels, predictions, **options).to_dict()))


def test_k3_predicted_labels_end_to_end_are_the_python_report(tmp_path, capsys):
    path = _labels_file(tmp_path / "k3.csv", K3_LABELS, {"tree": K3_TREE, "forest": K3_FOREST})
    code, out, err = _run(["evaluate", path, "--json"], capsys)
    assert code == 0 and err.startswith("read 2 model(s) as predicted classes, 3 true class(es): tree, forest")
    report = _strict_json(out)
    assert report == _report_json(K3_LABELS, {"tree": K3_TREE, "forest": K3_FOREST})
    assert report["classes"] == ["cat", "dog", "fox"] and report["n"] == 10 and report["C"] == 2
    accuracy = next(m for m in report["metrics"] if m["metric"] == "accuracy")
    assert accuracy["values"] == {"tree": 0.7, "forest": 0.8}  # 7 and 8 hits of 10, counted by hand
    code, out, _ = _run(["evaluate", path, "--metrics", "accuracy", "--C", "4"], capsys)
    expected = tg.evaluate(K3_LABELS, {"tree": K3_TREE, "forest": K3_FOREST}, metrics=["accuracy"], C=4)
    assert code == 0 and out == (f"read 2 model(s) as predicted classes, 3 true class(es): tree, forest (every "
                                 f"column but the label).\n{format_multiclass_report(expected)}\n")
    assert expected["accuracy"].sentence() in out


@pytest.mark.parametrize("K", [3, 5])
def test_probabilities_end_to_end_are_the_python_report(tmp_path, capsys, K):
    rng = np.random.default_rng(K)
    classes = [f"c{k}" for k in range(K)]
    labels = [classes[k] for k in rng.permutation(np.arange(6 * K) % K)]
    models = {"good": _probabilities(rng, labels, classes, 3.0), "weak": _probabilities(rng, labels, classes, 0.3)}
    path = _probabilities_file(tmp_path / "p.csv", labels, classes, models)
    read = read_multiclass_predictions(path, "label")
    assert read.layout == "probabilities" and read.classes == tuple(classes)
    np.testing.assert_array_equal(read.predictions["good"], models["good"])
    code, out, err = _run(["evaluate", path, "--metrics", "accuracy", "kappa", "--C", "5", "--json"], capsys)
    assert code == 0 and err.startswith("read 2 model(s) as class probabilities")
    report = _strict_json(out)
    assert report == _report_json(labels, models, metrics=["accuracy", "kappa"], C=5)
    assert report["source"] == "probabilities"


def test_k5_labels_as_integers_markdown_latex_and_plot(tmp_path, capsys):
    rng = np.random.default_rng(5)
    labels = rng.permutation(np.arange(40) % 5)
    good = np.where(rng.random(40) < 0.7, labels, rng.integers(0, 5, 40))
    noise = rng.integers(0, 5, 40)
    path = _labels_file(tmp_path / "k5.csv", labels, {"good": good, "noise": noise})
    expected = tg.evaluate([str(v) for v in labels], {"good": [str(v) for v in good],
                                                      "noise": [str(v) for v in noise]}, metrics=["accuracy"])
    code, out, _ = _run(["evaluate", path, "--metrics", "accuracy", "--markdown"], capsys)
    assert code == 0 and out == expected.to_markdown() + "\n"
    code, out, _ = _run(["evaluate", path, "--metrics", "accuracy", "--latex", "--plot", tmp_path / "cm.png"], capsys)
    assert code == 0 and out == expected.to_latex() + f"\nwrote {tmp_path / 'cm.png'}\n"
    assert (tmp_path / "cm.png").stat().st_size > 10_000


def test_one_and_one_point_zero_are_one_class(tmp_path, capsys):
    """Classes are text, but texts that read as the same number are one class: "1" (quoted), 1 and 1.0 match."""
    labels = ['"1"', "2", "3", "1", "2", "3", "1.0", "2", "3"]
    predicted = ["1.0", "2.0", "3", '"1"', "3", "2", "1", "2", "3"]
    path = _labels_file(tmp_path / "n.csv", labels, {"m": predicted})
    read = read_multiclass_predictions(path, "label")
    assert read.classes == ("1", "2", "3")
    assert read.labels.tolist() == ["1", "2", "3"] * 3 and read.predictions["m"].tolist() == [
        "1", "2", "3", "1", "3", "2", "1", "2", "3"]
    code, out, _ = _run(["evaluate", path, "--metrics", "accuracy", "--json"], capsys)
    assert code == 0 and _strict_json(out)["metrics"][0]["values"] == {"m": 7 / 9}


def test_a_class_only_predicted_is_allowed_and_never_a_hit(tmp_path):
    path = _labels_file(tmp_path / "u.csv", K3_LABELS, {"m": ["cat"] * 3 + ["owl"] * 7})
    read = read_multiclass_predictions(path, "label")
    assert read.classes == ("cat", "dog", "fox", "owl")
    assert "3 true class(es) (4 with those no item has)" in read.line


@pytest.mark.slow  # 2.4-4.9 s: in the full suite, out of the fast loop (<= 2 min)
def test_a_file_sorted_by_label_is_read_as_k_class_after_its_first_lines(tmp_path, capsys):
    """The first 64 KiB show two classes only (sorted by label): read as two-class, then again as K-class."""
    labels = np.repeat([0, 1, 2], 20_000)
    rng = np.random.default_rng(3)
    predicted = np.where(rng.random(labels.size) < 0.5, labels, rng.integers(0, 3, labels.size))
    path = _labels_file(tmp_path / "sorted.csv", labels, {"m": predicted})
    header, rows = csvfile.read_head(path, "PREDS.csv")
    assert {row[0] for row in rows} <= {"0", "1"}  # what the first lines show
    code, out, _ = _run(["evaluate", path, "--metrics", "accuracy", "--json"], capsys)
    assert code == 0 and _strict_json(out)["classes"] == ["0", "1", "2"]


def test_two_class_files_keep_the_binary_report(tmp_path, capsys):
    rng = np.random.default_rng(2)
    labels = np.r_[np.ones(10, int), np.zeros(10, int)]
    scores = {"a": labels + rng.normal(size=20), "b": rng.normal(size=20)}
    path = _labels_file(tmp_path / "b.csv", labels, {m: [repr(float(v)) for v in s] for m, s in scores.items()})
    code, out, _ = _run(["evaluate", path, "--metrics", "auc", "--json"], capsys)
    assert code == 0
    assert _strict_json(out) == json.loads(json.dumps(tg.evaluate(labels, scores, metrics=["auc"]).to_dict()))


@pytest.mark.parametrize("layout", [["--layout", "labels"], []])
def test_two_class_predicted_labels_as_text_get_the_k_class_report(tmp_path, capsys, layout):
    labels = ["yes"] * 6 + ["no"] * 6
    predicted = ["yes"] * 5 + ["no"] * 7
    path = _labels_file(tmp_path / "yn.csv", labels, {"m": predicted})
    code, out, _ = _run(["evaluate", path, *layout, "--metrics", "accuracy", "--json"], capsys)
    assert code == 0
    expected = evaluate_multiclass(labels, {"m": predicted}, metrics=["accuracy"])  # tablegen.evaluate's K-class
    assert _strict_json(out) == json.loads(json.dumps(expected.to_dict()))
    assert expected.K == 2 and expected["accuracy"].values == {"m": 11 / 12}


def _bad_files(tmp_path) -> dict:
    good = _labels_file(tmp_path / "good.csv", K3_LABELS, {"tree": K3_TREE})
    rows = open(good).read().splitlines()
    p = "label,a:cat,a:dog,a:fox"
    files = {
        "good": good,
        "empty_label": _write(tmp_path / "el.csv", [rows[0], *rows[1:4], ",cat", *rows[5:]]),
        "nan_label": _write(tmp_path / "nl.csv", [*rows[:6], "NaN,cat", *rows[7:]]),
        "empty_prediction": _write(tmp_path / "ep.csv", [*rows[:3], "cat,", *rows[4:]]),
        "nan_prediction": _write(tmp_path / "np.csv", [*rows[:8], "fox,nan", *rows[9:]]),
        "two_missing": _write(tmp_path / "tm.csv", [rows[0], rows[1], "nan,cat", *rows[3:7], ",dog", *rows[8:]]),
        "one_class": _write(tmp_path / "one.csv", ["label,m", "cat,cat", "cat,dog", "cat,cat"]),
        "missing_class": _write(tmp_path / "mc.csv", ["label,a:cat,a:dog", "cat,0.5,0.5", "dog,0.2,0.8",
                                                      "fox,0.1,0.9"]),
        "bad_sum": _write(tmp_path / "bs.csv", [p, "cat,0.5,0.3,0.2", "dog,0.2,0.7,0.1", "fox,0.1,0.1,0.7",
                                                "cat,0.6,0.2,0.2"]),
        "negative": _write(tmp_path / "ng.csv", [p, "cat,0.5,0.3,0.2", "dog,1.2,-0.2,0.0", "fox,0.1,0.1,0.8"]),
        "nan_probability": _write(tmp_path / "nanp.csv", [p, "cat,0.5,0.3,0.2", "dog,0.2,0.7,0.1", "fox,nan,0.1,0.8"]),
        "k_over_n": _write(tmp_path / "kn.csv", ["label,a:cat,a:dog,a:fox,a:owl", "cat,0.7,0.1,0.1,0.1",
                                                 "dog,0.1,0.7,0.1,0.1", "fox,0.1,0.1,0.7,0.1"]),
        "ambiguous": _write(tmp_path / "am.csv", ["label,a:cat,b", "cat,1,cat", "dog,0,dog", "fox,0,fox"]),
        "scores_as_labels": _write(tmp_path / "sl.csv", ["label,m", *(f"{c},{v}" for c, v in zip(
            ["cat", "dog", "fox", "cat", "dog", "fox", "cat", "dog"], ["cat", 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]))]),
        "different_classes": _write(tmp_path / "dc.csv", [
            "label,a:cat,a:dog,a:fox,b:cat,b:dog,b:fox,b:owl", "cat,1,0,0,1,0,0,0", "dog,0,1,0,0,1,0,0",
            "fox,0,0,1,0,0,1,0"]),
    }
    return files


BAD = [  # (file, extra argv, what the message says)
    ("empty_label", [], "row 4: missing class ('')"),
    ("nan_label", [], "column 'label', row 6: missing class ('NaN')"),
    ("empty_prediction", [], "column 'tree', row 3: missing class"),
    ("nan_prediction", [], "column 'tree', row 8: missing class ('nan')"),
    ("two_missing", [], "column 'label', row 2: missing class ('nan')"),
    ("one_class", ["--layout", "labels"], "has one class only ('cat')"),
    ("missing_class", [], "model 'a' has no probability column for class(es) 'fox'"),
    ("bad_sum", [], "row 3: model 'a''s probabilities sum to 0.9"),
    ("negative", [], "row 2, column 'a:cat': 1.2 is not a probability"),
    ("nan_probability", [], "row 3, column 'a:cat': missing or non-finite value 'nan'"),
    ("k_over_n", [], "4 classes but 3 item(s)"),
    ("ambiguous", [], "ambiguous layout: column(s) a:cat are named MODEL:CLASS"),
    ("ambiguous", ["--layout", "probabilities"], "column 'b' is not named MODEL:CLASS"),
    ("scores_as_labels", [], "look like scores, not predicted classes"),
    ("different_classes", [], "models 'a' and 'b' name different classes ('owl' in one only)"),
    ("good", ["--metrics", "auc"], "--metrics must name some of accuracy, kappa, balanced_accuracy, macro_f1"),
    ("good", ["--positive-label", "cat"], "--positive-label applies to two classes only"),
    ("good", ["--method", "exact"], "--method exact applies to two classes only"),
    ("good", ["--C", "0"], "C must be"),
    ("good", ["--R", "0"], "--R must be a positive integer"),
    ("good", ["--alpha", "1.5"], "alpha must be in (0, 1)"),
]


@pytest.mark.parametrize(("name", "argv", "message"), BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_exits_2_naming_the_row_and_column_and_writes_nothing(tmp_path, name, argv, message):
    files = _bad_files(tmp_path)
    before = sorted(os.listdir(tmp_path))
    code, err = tablegen(["evaluate", files[name], *argv], tmp_path)
    assert code == 2 and message in err, err
    assert err.startswith("tablegen: error: ") and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == before


def test_a_row_not_summing_to_one_is_named_within_the_tolerance(tmp_path):
    """1e-6 off is allowed, 2e-6 is not; the first bad row is named with its sum."""
    ok = _write(tmp_path / "ok.csv", ["label,a:x,a:y,a:z", "x,0.5,0.3,0.2000009", "y,0.2,0.7,0.1", "z,0.1,0.1,0.8"])
    assert read_multiclass_predictions(ok, "label").predictions["a"].shape == (3, 3)
    bad = _write(tmp_path / "bad.csv", ["label,a:x,a:y,a:z", "x,0.5,0.3,0.2", "y,0.2,0.7,0.100002", "z,0.1,0.1,0.8"])
    code, err = tablegen(["evaluate", bad], tmp_path)
    assert code == 2 and "row 2: model 'a''s probabilities sum to 1.000002" in err, err


def test_a_k_class_file_over_the_memory_limit_is_refused_before_it_is_read(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 4, 20_000)
    path = _labels_file(tmp_path / "big.csv", labels, {"m": rng.integers(0, 4, 20_000)})
    monkeypatch.setenv("TABLEGEN_MEMORY_LIMIT", "1MB")

    def whole_file(*args):
        raise AssertionError("the file was read whole before the memory check")

    monkeypatch.setattr(csvfile, "_read_text", whole_file)
    monkeypatch.setattr(csvfile.np, "loadtxt", whole_file)
    code, out, err = _run(["evaluate", path, "--layout", "labels"], capsys)
    assert code == 5 and out == "" and "TABLEGEN_MEMORY_LIMIT" in err and "reading PREDS.csv" in err


def test_a_large_file_is_read_by_numpy_not_row_by_row(tmp_path, monkeypatch):
    """No per-row Python step: the row-by-row reader is never called; classes are matched per distinct value."""
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 10, 30_000)
    models = {f"m{j}": np.where(rng.random(labels.size) < 0.5, labels, rng.integers(0, 10, labels.size))
              for j in range(3)}
    path = _labels_file(tmp_path / "k10.csv", [f"class{k}" for k in labels],
                        {m: [f"class{k}" for k in v] for m, v in models.items()})

    def row_by_row(*args):
        raise AssertionError("read row by row")

    monkeypatch.setattr(csvfile, "_columns_by_rows", row_by_row)
    read = read_multiclass_predictions(path, "label")
    assert read.classes == tuple(f"class{k}" for k in range(10))
    for model, values in models.items():
        assert read.predictions[model].tolist() == [f"class{k}" for k in values]


def test_a_time_estimate_over_max_seconds_is_refused_before_any_work(tmp_path, capsys):
    path = _labels_file(tmp_path / "k3.csv", K3_LABELS, {"tree": K3_TREE, "forest": K3_FOREST})
    code, out, err = _run(["evaluate", path, "--R", "1000000", "--max-seconds", "0.01"], capsys)
    assert code == 5 and "would take about" in err and "--max-seconds" in err and "Traceback" not in err
    assert out.startswith("read 2 model(s)") and out.count("\n") == 1  # the columns line only


def test_progress_is_told_the_estimated_work_done(tmp_path, capsys, monkeypatch):
    from tablegen.cli import evaluate

    seen = []

    class Recording(evaluate.EvaluationProgress):
        def __call__(self, done, total):
            seen.append((done, total))

    monkeypatch.setattr(evaluate, "EvaluationProgress", Recording)
    path = _labels_file(tmp_path / "k3.csv", K3_LABELS, {"tree": K3_TREE, "forest": K3_FOREST})
    code, _, _ = _run(["evaluate", path, "--metrics", "accuracy", "macro_f1"], capsys)
    assert code == 0 and seen and math.isclose(seen[-1][0], seen[-1][1])
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))


def test_probabilities_of_a_class_no_item_has_are_scored_by_the_most_probable_class(tmp_path, capsys):
    """The report takes probabilities over the labels' classes; columns for a class no item has ('owl') make the
    most probable class among all columns each item's predicted class (here 'owl' for the last item: never a hit)."""
    path = _write(tmp_path / "owl.csv", ["label,a:cat,a:dog,a:fox,a:owl", "cat,0.7,0.1,0.1,0.1", "dog,0.1,0.7,0.1,0.1",
                                         "fox,0.1,0.1,0.7,0.1", "cat,0.6,0.2,0.1,0.1", "dog,0.2,0.5,0.2,0.1",
                                         "fox,0.1,0.1,0.2,0.6"])
    code, out, err = _run(["evaluate", path, "--metrics", "accuracy", "--json"], capsys)
    assert code == 0 and "Probabilities of classes no item has" in err
    labels = ["cat", "dog", "fox"] * 2
    assert _strict_json(out) == _report_json(labels, {"a": ["cat", "dog", "fox", "cat", "dog", "owl"]},
                                             metrics=["accuracy"])


def test_the_how_to_files_give_what_the_page_quotes(tmp_path, capsys):
    """docs/how-to/multiclass-predictions.md: its two example files run, and the figures its prose quotes for the
    predicted-labels file are the command's."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "how-to" / "multiclass-predictions.md").read_text()
    labels_csv, probabilities_csv = [block for block in re.findall(r"^```text\n(.*?)^```", page, flags=re.S | re.M)
                                     if block.startswith(("id,label", "label,tree:"))]
    (tmp_path / "preds.csv").write_text(labels_csv)
    (tmp_path / "probs.csv").write_text(probabilities_csv)
    prose = " ".join(page.split())
    quoted = ["accuracy = 0.833333 (10 of 12 hits, 3 classes)", "p = 0.00283 (exact)", "significant from 0.666667 up"]
    code, out, _ = _run(["evaluate", tmp_path / "preds.csv", "--metrics", "accuracy"], capsys)
    assert code == 0 and "left out: id (named like a row identifier)" in out
    for figure in quoted:
        assert figure in prose, figure
        assert figure in " ".join(out.split()), figure
    code, out, _ = _run(["evaluate", tmp_path / "probs.csv", "--metrics", "accuracy", "--json"], capsys)
    assert code == 0 and _strict_json(out)["source"] == "probabilities"


def test_probability_columns_name_classes_as_numbers_too(tmp_path):
    """m:0.0 is the column of class 0: the class parts of MODEL:CLASS match the labels as the labels match."""
    path = _write(tmp_path / "n.csv", ["label,m:0.0,m:1,m:2", "0,0.8,0.1,0.1", "1,0.1,0.8,0.1", "2,0.1,0.1,0.8",
                                       "2,0.5,0.2,0.3"])
    read = read_multiclass_predictions(path, "label")
    assert read.classes == ("0", "1", "2") and read.layout == "probabilities"
    assert read.predicted_labels()["m"].tolist() == ["0", "1", "2", "0"]
