"""Every JSON output of tablegen is strict JSON: no NaN or Infinity (which ``json.dumps`` writes by default and a
strict parser, JavaScript's ``JSON.parse`` or ``json.loads(..., parse_constant=...)``, refuses).  A number that
does not exist is ``null``.

Two checks: the source (no command prints JSON but through ``tablegen.common.outputs.json_text``, which converts
non-finite floats to None and dumps with ``allow_nan=False``), and every ``--json`` command and every ``to_dict``
of the comparisons on inputs where a number does not exist (DeLong's Monte Carlo interval, a constant model's
bootstrap interval), parsed strictly.
"""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import pytest

from tablegen.cli.main import main
from tablegen.common.outputs import json_ready, json_text

PACKAGE = Path(__file__).resolve().parents[2] / "tablegen"
DATA = Path(__file__).resolve().parents[1] / "data"
#: json.dumps calls that are no output: the lock's record, the store's own documents and hashes, a cache key.
INTERNAL = {"store/lock.py", "store/zarr_store.py", "store/rebuild.py", "store/manifest.py", "batch/config.py",
            "batch/job.py", "lookup/table.py", "common/outputs.py"}


def strict_loads(text: str):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_no_output_is_dumped_but_strictly():
    loose = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                    "dump", "dumps") and isinstance(node.func.value, ast.Name) and node.func.value.id == "json":
                strict = any(k.arg == "allow_nan" and isinstance(k.value, ast.Constant) and k.value.value is False
                             for k in node.keywords)
                if not strict and relative not in INTERNAL:
                    loose.append(f"{relative}:{node.lineno}")
    assert loose == [], f"JSON written without allow_nan=False (use tablegen.common.outputs.json_text): {loose}"


def test_json_ready_turns_every_non_finite_number_into_null():
    value = {"a": (math.nan, -math.inf), "b": np.float32("nan"), "c": [np.array([1.0, np.inf])], 3: True}
    assert json_ready(value) == {"a": [None, None], "b": None, "c": [[1.0, None]], "3": True}
    assert strict_loads(json_text(value)) == json_ready(value)


def _predictions(tmp_path):
    rng = np.random.default_rng(5)
    y = np.r_[np.ones(30), np.zeros(40)].astype(int)
    path = tmp_path / "preds.csv"
    good, constant = y + rng.normal(size=70), np.full(70, 0.5)
    rows = "".join(f"{a},{float(b)!r},{float(c)!r}\n" for a, b, c in zip(y, good, constant))
    path.write_text("y,good,constant\n" + rows)
    return path, y, {"good": good, "constant": constant}


def test_the_comparisons_to_dict_hold_null_where_a_number_does_not_exist(tmp_path):
    from tablegen.compare import across_datasets, paired_test, pairwise_tests

    _, y, models = _predictions(tmp_path)
    delong = paired_test(y, models["good"], models["constant"])
    assert delong.method == "delong" and math.isnan(delong.p_interval[0])  # no Monte Carlo interval
    data = strict_loads(json.dumps(delong.to_dict(), allow_nan=False))
    assert data["p_interval"] == [None, None] and data["p_value"] == delong.p_value
    constant = paired_test(y, models["constant"], models["constant"], metric="best_f1")
    strict_loads(json.dumps(constant.to_dict(), allow_nan=False))
    strict_loads(json.dumps(pairwise_tests(y, models).to_dict(), allow_nan=False))
    result = across_datasets(DATA / "benavoli2016_table2_accuracies.csv", mean_ranks_posthoc=True)
    strict_loads(json.dumps(result.to_dict(), allow_nan=False))


@pytest.mark.parametrize("argv", [
    ["evaluate", "{preds}", "--label-column", "y", "--metrics", "auc", "best_f1", "--json"],
    ["compare", "datasets", str(DATA / "benavoli2016_table2_accuracies.csv"), "--mean-ranks-posthoc", "--json"],
    ["lookup", "auc", "--P", "10", "--N", "10", "--C", "10", "--alpha", "0.05", "--json"],
    ["p-value", "average_precision", "0.4", "--P", "21", "--N", "100", "--C", "10", "--json"],
    ["test", "--scores-file", "{preds}", "--label-column", "y", "--metrics", "auc", "--json"],
    ["export", "--metric", "auc", "--C", "100", "--alpha", "0.05", "--json"],
    ["info", "--json"],
    ["compare", "cv", "{folds}", "--json"],
    ["power", "best_f1", "--P", "20", "--N", "20", "--C", "10", "--alpha", "0.05", "--auc", "0.75", "--json"],
    ["sample-size", "auc", "--C", "10", "--alpha", "0.05", "--auc", "0.75", "--prevalence", "0.3", "--json"],
    ["minimum-detectable", "best_mcc", "--P", "30", "--N", "70", "--C", "100", "--alpha", "0.05", "--json"],
    ["max-models", "best_accuracy", "--P", "20", "--N", "20", "--auc", "0.6", "--alpha", "0.05", "--json"],
])
def test_every_json_command_prints_strict_json(argv, tmp_path, capsys):
    path, _, _ = _predictions(tmp_path)
    folds = tmp_path / "folds.csv"
    folds.write_text("svm,knn\n0.81,0.80\n0.79,0.79\n0.83,0.80\n0.80,0.78\n0.82,0.81\n")
    argv = [a.format(preds=path, folds=folds) for a in argv]
    code = main(argv)
    printed = capsys.readouterr()
    out = printed.out
    assert code == 0, printed.err
    strict_loads(out)
    if argv[0] == "evaluate":  # DeLong's p_interval and the constant model's bootstrap interval: null, not NaN
        assert "NaN" not in out and "null" in out
