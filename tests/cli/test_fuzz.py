"""Fuzzing the entry points: generated configs, API arguments and command lines get a tablegen error or a
valid answer -- never another exception, never a hang (each example runs under an alarm), and nothing is
written where a command refuses.  A few examples per test in the fast loop, many more under ``slow``."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from clitools import bounded
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from progresstools import HANG_SECONDS

from tablegen.errors import TablegenInputError

SECONDS_PER_EXAMPLE = HANG_SECONDS  # a hang, not a slow machine: one example takes a second or two


def _budgets(case, **strategies):
    """The property as two tests: a few examples (fast loop, derandomized) and many (``slow``)."""
    def build(examples, derandomize):
        return settings(max_examples=examples, deadline=None, derandomize=derandomize,
                        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])(
            given(**strategies)(case))
    return build(8, True), pytest.mark.slow(build(150, False))


def _files(root) -> set:
    return {os.path.join(d, f) for d, _, files in os.walk(root) for f in files} | {d for d, _, _ in os.walk(root)}


# -- values -------------------------------------------------------------------------------------------
anything = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8)
numbers = st.integers(-5, 2000) | st.floats(allow_nan=True, allow_infinity=True) | st.none() | st.text(max_size=4) \
    | st.sampled_from([10**18, 2**63, 1e300, -0.0, True])
metrics = st.sampled_from(["auc", "best_f1", "best_accuracy", "average_precision", "tp_at_10", "precision_at_10",
                           "nope", "", "AUC", None, 3])


# -- configs ------------------------------------------------------------------------------------------
BASE = {"grid": {"P": [5, 10], "N": [8]}, "replicates": 40_000, "seed": 1, "Cs": [10], "alphas": [0.01],
        "chunks": {"P": 1, "N": 1}, "store": {"url": "fuzz.zarr"}, "metrics": ["auc"]}
FIELDS = ["name", "grid", "replicates", "seed", "metrics", "Cs", "alphas", "exact", "chunks", "store", "cluster",
          "device", "unknown"]


@st.composite
def configs(draw):
    data = dict(BASE)
    for _ in range(draw(st.integers(1, 3))):
        field = draw(st.sampled_from(FIELDS))
        if draw(st.booleans()):
            data.pop(field, None)
        else:
            data[field] = draw(anything)
    return data


def _config_case(data, workdir):
    tmp_path = workdir
    from tablegen.batch.config import config_from_mapping
    from tablegen.batch.job import dry_run_plan, resolve_config

    before = _files(tmp_path)
    with bounded(SECONDS_PER_EXAMPLE):
        try:
            config = resolve_config(config_from_mapping(data), store_url=str(tmp_path / "fuzz.zarr"))
            dry_run_plan(config)
        except TablegenInputError:
            pass
    assert _files(tmp_path) == before  # validation and the dry run write nothing


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


test_generated_configs, test_generated_configs_many = _budgets(_config_case, data=configs())


def _yaml_case(text, workdir):
    from tablegen.batch.config import JobConfig, load_config

    path = workdir / "fuzz.yaml"
    path.write_bytes(text)
    with bounded(SECONDS_PER_EXAMPLE):
        try:
            config = load_config(path)
        except TablegenInputError:
            return  # refused with the input error, nothing else
    assert isinstance(config, JobConfig) and config.replicates >= 1  # bytes that parse give a checked config


test_generated_config_files, test_generated_config_files_many = _budgets(_yaml_case, text=st.binary(max_size=200))


# -- API ------------------------------------------------------------------------------------------------
def _api_case(metric, score, P, N, C, alpha, method):
    from tablegen import critical_value, p_value, significance_test

    small = all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 60 for v in (P, N))
    if method in ("exact", "auto") and not small:
        method = "table"  # exact and auto may compute (or simulate) for minutes at large sizes: bounded here
    with bounded(SECONDS_PER_EXAMPLE):
        for kind, call in (("critical value", lambda: critical_value(metric, P, N, C, alpha, method=method)),
                           ("p-value", lambda: p_value(metric, P, N, C, score=score, method=method)),
                           ("test", lambda: significance_test(metric, P, N, C, alpha, score=score, method=method))):
            try:
                answer = call()
            except TablegenInputError:
                continue
            value = answer.critical_value.value if kind == "test" else answer.value
            assert math.isfinite(float(np.asarray(value).flat[0]))  # never NaN presented as an answer
            if kind != "critical value":
                _assert_a_p_value(answer.p_value if kind == "test" else answer)


def _assert_a_p_value(answer) -> None:
    """A p-value lies in [0, 1] and a bound is "<" or ">"."""
    assert 0.0 <= float(answer.value) <= 1.0 and answer.bound in ("", "<", ">")


test_generated_api_arguments, test_generated_api_arguments_many = _budgets(
    _api_case, metric=metrics, score=numbers, P=numbers, N=numbers, C=numbers, alpha=numbers,
    method=st.sampled_from(["table", "exact", "auto", "nope", None]))


def _topk_case(P, N, K, C, alpha, curve):
    from tablegen.lookup.topk import topk_bounds, topk_test

    if isinstance(P, int) and isinstance(N, int) and P + N > 10**6:
        P = N = 7  # a valid huge question runs (within its memory guard) for long: bounded here
    with bounded(SECONDS_PER_EXAMPLE):
        for call in (lambda: topk_bounds(P, N, K, C=C, alpha=alpha), lambda: topk_test(curve, P, N, C=C, alpha=alpha)):
            try:
                call()
            except TablegenInputError:
                pass


test_generated_topk_arguments, test_generated_topk_arguments_many = _budgets(
    _topk_case, P=numbers, N=numbers, K=numbers, C=numbers, alpha=numbers,
    curve=st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-3, 50), max_size=12))


# -- command line -------------------------------------------------------------------------------------
WORDS = ["auc", "best_f1", "tp_at_10", "0.9", "-1", "nan", "inf", "20", "1000", "0", "1e9", "x", "", "--json",
         "--P", "--N", "--C", "--alpha", "--K", "--counts", "--metric", "--values", "exact", "--table", "--worst",
         "--no-integrity", "--format", "csv", "--digits", "--method", "table", "-o", "out.txt", "missing.zarr"]
COMMANDS = ["lookup", "test", "topk", "export", "info", "verify", "p-value", "nope"]


def _cli_case(command, words, workdir):
    from tablegen.cli.main import main

    argv = [command, *words]
    cwd, before = os.getcwd(), _files(workdir)
    os.chdir(workdir)
    try:
        with bounded(SECONDS_PER_EXAMPLE):
            try:
                code = main(argv)
            except SystemExit as exit_:  # argparse: usage errors (2) and --help (0)
                code = exit_.code
    finally:
        os.chdir(cwd)
    assert code in (0, 2, 3, 4, 5), argv
    if code != 0:
        assert _files(workdir) == before, f"{argv} refused (exit {code}) but wrote files"
    for leftover in _files(workdir) - before:  # a successful export may write out.txt: start clean
        if os.path.isfile(leftover):
            os.unlink(leftover)


test_generated_command_lines, test_generated_command_lines_many = _budgets(
    _cli_case, command=st.sampled_from(COMMANDS), words=st.lists(st.sampled_from(WORDS), max_size=10))
