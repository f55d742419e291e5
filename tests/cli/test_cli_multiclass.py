"""tablegen run of a kind: multiclass config (dry run, run, resume) and tablegen lookup / p-value with --K and
--n-per-class: exit codes, what is printed, and bad options named."""

from __future__ import annotations

import contextlib
import io
import json
import os

import pytest
from clitools import tablegen

from tablegen.cli.main import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMOKE = os.path.join(ROOT, "configs", "multiclass_smoke.yaml")


def output(argv) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = main([str(word) for word in argv])
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue()


def test_run_plans_runs_and_resumes_the_smoke_config(tmp_path):
    store = tmp_path / "m.zarr"
    code, text = output(["run", SMOKE, "--store", store, "--dry-run", "--json"])
    assert code == 0 and json.loads(text) | {"core_seconds": 0, "core_seconds_remaining": 0} == {
        "kind": "multiclass", "cells": 9, "cells_done": 0, "cells_remaining": 9, "chunks": 4, "chunks_remaining": 4,
        "core_seconds": 0, "core_seconds_remaining": 0}
    code, text = output(["run", SMOKE, "--store", store, "--executor", "serial", "--json"])
    assert code == 0 and json.loads(text)["cells_computed"] == 9 and json.loads(text)["complete"]
    code, text = output(["run", SMOKE, "--store", store, "--executor", "serial"])
    assert code == 0 and "nothing to do" in text
    code, text = output(["lookup", "accuracy", "--K", 5, "--n-per-class", 20, "--C", 100, "--alpha", 0.05,
                         "--table", store, "--method", "table", "--json"])
    assert code == 0 and json.loads(text)["critical_value"]["value"] == 0.34


def test_lookup_and_p_value_answer_a_k_class_question():
    code, text = output(["lookup", "accuracy", "--K", 5, "--n-per-class", 40, "--C", 100, "--alpha", 0.05])
    assert code == 0 and "K = 5 classes of 40 items (balanced)" in text and ": 0.3 (exact)" in text
    code, text = output(["p-value", "accuracy", 0.6, "--K", 3, "--n-per-class", 5, "--C", 1, "--json"])
    assert code == 0 and round(json.loads(text)["p_value"]["value"], 6) == 0.036242


@pytest.mark.parametrize("argv, named", [
    (["lookup", "accuracy", "--K", 5, "--n-per-class", 40, "--P", 10, "--C", 10], "--P"),
    (["lookup", "accuracy", "--K", 5, "--C", 10], "--n-per-class"),
    (["lookup", "accuracy", "--K", 1, "--n-per-class", 40, "--C", 10], "--K"),
    (["lookup", "auc", "--K", 5, "--n-per-class", 40, "--C", 10], "metric"),
    (["p-value", "accuracy", 0.995, "--K", 5, "--n-per-class", 40, "--C", 10], "--score|score"),
])
def test_bad_options_are_named(tmp_path, argv, named):
    code, err = tablegen(argv, tmp_path)
    assert code == 2 and any(word in err for word in named.split("|")), err


def test_verify_checks_and_recomputes_a_multiclass_store(tmp_path):
    store = tmp_path / "v.zarr"
    assert output(["run", SMOKE, "--store", store, "--executor", "serial"])[0] == 0
    code, text = output(["verify", store])
    assert code == 0 and "4 chunks match the manifest" in text and text.count("recomputed exactly, the same") == 3
    chunk = store / "critical_value" / "c" / "0" / "0" / "0" / "0" / "0"
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0x10
    chunk.write_bytes(bytes(data))
    code, text = output(["verify", store])
    assert code == 3 and "DAMAGED" in text and "region 0,0 (K 2..3 x n_per_class 5..10)" in text


def test_test_answers_a_k_class_question_from_one_law():
    """tablegen test with --K and --n-per-class (it took --P and --N only): the verdict, the critical value of
    tablegen lookup and the p-value of tablegen p-value."""
    code, text = output(["test", "accuracy", 0.32, "--K", 5, "--n-per-class", 40, "--C", 100, "--alpha", 0.05])
    assert code == 0 and text.splitlines()[0] == (
        "accuracy = 0.32 is significant at alpha = 0.05: it exceeds 0.3, the critical value for the best of 100 "
        "random classifiers at K = 5 classes of 40 items (balanced).")
    code, text = output(["test", "kappa", 0.4, "--K", 3, "--n-per-class", 5, "--C", 1, "--alpha", 0.05, "--json"])
    record = json.loads(text)
    _, p_text = output(["p-value", "kappa", 0.4, "--K", 3, "--n-per-class", 5, "--C", 1, "--json"])
    _, cv_text = output(["lookup", "kappa", "--K", 3, "--n-per-class", 5, "--C", 1, "--alpha", 0.05, "--json"])
    assert code == 0 and record["significant"] is True and (record["K"], record["n_per_class"]) == (3, 5)
    assert record["p_value"] == json.loads(p_text)["p_value"]
    assert record["critical_value"] == json.loads(cv_text)["critical_value"]


@pytest.mark.parametrize("argv, named", [
    (["test", "accuracy", 0.32, "--K", 5, "--C", 10], "--n-per-class is required"),
    (["test", "accuracy", 0.32, "--n-per-class", 40, "--C", 10], "--K is required"),
    (["test", "accuracy", 0.32, "--K", 5, "--n-per-class", 40, "--P", 10, "--C", 10], "--P describes"),
    (["test", "accuracy", 0.32, "--K", 5, "--n-per-class", 40, "--C", 10, "--method", "table"], "--method table"),
    (["test", "accuracy", 0.32, "--K", 5, "--n-per-class", 40, "--C", 10, "--R", 1000], "--R applies"),
    (["test", "accuracy", 0.995, "--K", 5, "--n-per-class", 40, "--C", 10], "score"),
    (["test", "auc", 0.9, "--K", 5, "--n-per-class", 40, "--C", 10], "metric"),
    (["test", "auc", 0.9, "--C", 10], "missing: --P, --N"),
    (["test", "--scores-file", "x.csv", "--K", 3], "--K: not used with --scores-file"),
])
def test_test_bad_k_class_options_are_named(tmp_path, argv, named):
    code, err = tablegen(argv, tmp_path)
    assert code == 2 and named in err and "Traceback" not in err, err
