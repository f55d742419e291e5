"""The time guards of the predictions path with ``device="cuda"``: the estimate is of the CPU's part, and says so.

The cost models are single-core CPU seconds; no GPU cost model has been measured on hardware.  So with a GPU the
reports (:func:`tablegen.evaluate`, two classes and K) hold only the CPU's part of their estimate against the limit
and name the steps on the GPU as not estimated, and the K-class Monte Carlo lookups (:func:`tablegen.multiclass_test`,
:func:`tablegen.multiclass_scores_test`), whose work is all on the GPU, are not refused by a CPU estimate.  Once every
one of them refused GPU work by its CPU seconds.  The cost arithmetic is checked here; the guards' decisions in a
child process under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``; this file is the child's script: ``python
tests/compare/test_device_time_guard.py OUT.json LIMITS.json``), each report stopped where its work would begin.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tablegen.compare.report.cost import EvaluationCost, check_report_time, evaluation_cost, on_device
from tablegen.errors import ResourceLimitError

HERE = Path(__file__).resolve()
BINARY_METRICS = ["best_f1", "auc"]
MULTICLASS_METRICS = ["accuracy", "macro_f1"]


def _binary(n_pos=10, n_neg=20, models=3, seed=7):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n_pos), np.zeros(n_neg)]
    return y, {f"m{i}": np.round(y * (0.4 + 0.3 * i) + rng.normal(size=y.size), 2) for i in range(models)}


def _multiclass(n=40, K=3, seed=3):
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % K
    a = np.where(rng.random(n) < 0.6, labels, rng.integers(0, K, n))
    b = np.where(rng.random(n) < 0.4, labels, rng.integers(0, K, n))
    return [f"c{k}" for k in labels], {"a": [f"c{k}" for k in a], "b": [f"c{k}" for k in b]}


def _probabilities(n=24, K=3, seed=5):
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % K
    raw = rng.random((n, K)) + 1.5 * np.eye(K)[labels]
    return labels.tolist(), raw / raw.sum(axis=1, keepdims=True)


def _multiclass_cost(device):
    from tablegen.compare.report.cost import multiclass_gpu_steps
    from tablegen.compare.report.multiclass import multiclass_cost
    from tablegen.compare.report.multiclass_input import multiclass_data

    labels, predicted = _multiclass()
    data = multiclass_data(labels, predicted)
    cost = multiclass_cost(data, tuple(MULTICLASS_METRICS), 2, 200, 200, 2000)
    return on_device(cost, device, multiclass_gpu_steps(cost, data.true_counts()))


# -- the arithmetic ---------------------------------------------------------------------------------------------
def test_the_steps_on_the_gpu_are_marked_and_left_out_of_the_cpu_s_part():
    y, models = _binary()
    cpu = evaluation_cost(y, models, metrics=BINARY_METRICS, R=200)
    gpu = evaluation_cost(y, models, metrics=BINARY_METRICS, R=200, device="cuda")
    assert cpu.gpu == {} and cpu.cpu_seconds == cpu.seconds
    assert gpu.steps == cpu.steps  # the same work, the same weights for the progress told
    assert set(gpu.gpu) == {("best_f1", "intervals"), ("auc", "intervals"), ("best_f1", "max-T arrangements"),
                            ("auc", "max-T arrangements"), ("best_f1", "paired")}  # DeLong's AUC test: the CPU
    assert gpu.cpu_seconds == pytest.approx(cpu.seconds - sum(cpu.steps[key] for key in gpu.gpu), rel=1e-12)
    assert 0 < gpu.cpu_seconds < gpu.seconds
    assert "on the GPU, not estimated: " in gpu.describe() and "best_f1 paired" not in gpu.describe().split(":")[0]
    assert gpu.summary().endswith("on the GPU whose time is not estimated")


def test_the_k_class_report_s_passes_bootstraps_and_swaps_are_the_gpu_s():
    cost = _multiclass_cost("cuda")
    assert set(cost.gpu) == {("null",), ("bootstrap",), ("accuracy", "paired"), ("macro_f1", "paired")}
    assert cost.cpu_seconds == pytest.approx(cost.steps["verdicts",], rel=1e-12)
    assert _multiclass_cost("cpu").gpu == {}


def test_a_refusal_with_a_gpu_claims_no_cpu_seconds_for_the_gpu_s_work():
    cost = on_device(EvaluationCost(("auc",), {("verdicts",): 2.0, ("auc", "intervals"): 3000.0}), "cuda",
                     [("auc", "intervals")])
    check_report_time(cost, "a report", ("ask less",), 10.0)  # 2 s of CPU: within; the GPU's 3000 not counted
    with pytest.raises(ResourceLimitError) as error:
        check_report_time(cost, "a report", ("ask less",), 1.0)
    assert str(error.value).startswith("the CPU's part of a report (auc intervals on the GPU: not estimated) would "
                                       "take about 2 s on one core")
    assert "3,002" not in str(error.value) and "3,000" not in str(error.value)


def test_the_command_s_estimate_line_says_what_it_is_with_a_gpu():
    import io

    from tablegen.cli.evaluate import EvaluationProgress

    lines = {}
    for device in ("cpu", "cuda"):
        stream = io.StringIO()
        with EvaluationProgress(stream, clock=iter([0.0, 0.0, 0.0]).__next__, device=device) as progress:
            progress(0.0, 40.0)
        lines[device] = stream.getvalue()
    assert lines["cpu"] == "tablegen evaluate: about 40 s of work on one core (estimated)\n"
    assert lines["cuda"].startswith("tablegen evaluate: about 40 s of work if it all ran on one CPU core (estimated)")
    assert "on the GPU (--device cuda), whose time is not estimated" in lines["cuda"]


# -- the guards' decisions on the simulator ------------------------------------------------------------------------
def _limits() -> dict:
    """Limits between the CPU's part and the whole estimate (accepted with a GPU; refused on the CPU), and below the
    CPU's part (refused on both)."""
    y, models = _binary()
    binary = evaluation_cost(y, models, metrics=BINARY_METRICS, R=200, device="cuda")
    multiclass = _multiclass_cost("cuda")
    return {name: {"between": (cost.cpu_seconds + cost.seconds) / 2, "below": cost.cpu_seconds / 2}
            for name, cost in (("binary", binary), ("multiclass", multiclass))}


class _Started(Exception):
    """Raised where a report's work would begin: it was not refused."""


def _outcome(call) -> str:
    try:
        call()
    except _Started:
        return "started"
    except ResourceLimitError as error:
        return f"refused: {error}"
    return "answered"


def _start(*args, **kwargs):
    raise _Started


def _stop_where_the_work_begins(setattr_) -> None:
    import tablegen.compare.report.multiclass_tests as multiclass_tests
    import tablegen.lookup.from_scores as from_scores

    setattr_(from_scores, "significance_test_from_scores", _start)
    setattr_(multiclass_tests, "prepare", _start)


def decisions(limits: dict, device: str, setenv) -> dict:
    """Each guard's decision on ``device``: 'started' / 'answered' or 'refused: MESSAGE' (the reports stopped where
    their work begins: :func:`_stop_where_the_work_begins` first)."""
    from tablegen.compare.report.evaluate import evaluate
    from tablegen.lookup.multiclass import multiclass_test
    from tablegen.lookup.multiclass_scores import multiclass_scores_test

    y, models = _binary()
    labels, predicted = _multiclass()
    found = {}
    for where, seconds in limits["binary"].items():
        found[f"binary {where}"] = _outcome(lambda: evaluate(y, models, metrics=BINARY_METRICS, R=200, device=device,
                                                             max_seconds=seconds))
    for where, seconds in limits["multiclass"].items():
        found[f"multiclass {where}"] = _outcome(lambda: evaluate(labels, predicted, metrics=MULTICLASS_METRICS, R=200,
                                                                 C=2, device=device, max_seconds=seconds))
    setenv("TABLEGEN_TIME_LIMIT", "1e-9")
    score_labels, matrix = _probabilities()
    found["multiclass_scores_test"] = _outcome(lambda: multiclass_scores_test(
        score_labels, matrix, "hand_till_auc", R=100, method="monte carlo", device=device))
    found["multiclass_test"] = _outcome(lambda: multiclass_test(labels, predicted["a"], "macro_f1", C=3, R=100,
                                                                method="monte carlo", device=device))
    return found


def test_with_a_gpu_only_the_cpu_s_part_meets_the_limit(tmp_path, monkeypatch):
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: the time guards with device='cuda' are NOT tested "
                    "(pip install -e '.[test]')")
    limits = _limits()
    (tmp_path / "limits.json").write_text(json.dumps(limits))
    done = subprocess.run([sys.executable, str(HERE), str(tmp_path / "out.json"), str(tmp_path / "limits.json")],
                          capture_output=True, text=True, env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"},
                          cwd=HERE.parents[2])
    assert done.returncode == 0, done.stderr[-4000:]
    gpu = json.loads((tmp_path / "out.json").read_text())

    assert gpu["binary between"] == gpu["multiclass between"] == "started"
    for report in ("binary", "multiclass"):
        refusal = gpu[f"{report} below"]
        assert refusal.startswith("refused: the CPU's part of evaluating "), refusal
        assert "on the GPU: not estimated) would take about" in refusal
    assert gpu["multiclass_scores_test"] == gpu["multiclass_test"] == "answered"

    _stop_where_the_work_begins(monkeypatch.setattr)
    cpu = decisions(limits, "cpu", monkeypatch.setenv)  # on the CPU the whole estimate meets the limit, as before
    for name in ("binary between", "binary below", "multiclass between", "multiclass below",
                 "multiclass_scores_test", "multiclass_test"):
        assert cpu[name].startswith("refused: evaluating" if "between" in name or "below" in name else "refused: the "
                                    "Monte Carlo multi-class"), (name, cpu[name])


if __name__ == "__main__":
    import warnings

    sys.path.insert(0, str(HERE.parents[2]))
    warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)  # numpy uint64 scalars wrap
    _stop_where_the_work_begins(setattr)
    found = decisions(json.loads(Path(sys.argv[2]).read_text()), "cuda", os.environ.__setitem__)
    Path(sys.argv[1]).write_text(json.dumps(found))
