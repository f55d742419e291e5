"""``device=`` of the predictions path: the same answers on a GPU as on the CPU, end to end.

:func:`tablegen.evaluate` (two classes and K classes), :func:`tablegen.compare.paired_test`,
:func:`~tablegen.compare.pairwise.paired.pairwise_tests`,
:func:`~tablegen.compare.pairwise.bootstrap.bootstrap_interval`,
:func:`tablegen.multiclass_test` (Monte Carlo) and :func:`tablegen.multiclass_scores_test` (Monte Carlo) run with
``device="cuda"`` in a child process under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``; this file is the
child's script: ``python tests/compare/test_report_device.py MODE OUT.json``) and with ``device="cpu"`` here; every
answer must be the same to the last bit (its JSON text, floats written by ``repr``).  The child counts the calls of
every CUDA twin, so a device argument that is accepted and then ignored (the CPU kernels run) fails too.  Nothing
in this pytest process imports ``numba.cuda``; without numba-cuda the simulator tests are skipped, naming it.
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

HERE = Path(__file__).resolve()
#: (module under tablegen.compute.kernels.cuda, twin): every twin the predictions path may call.
TWINS = [("resample", "resample_metrics_cuda"), ("swaps", "swap_differences_cuda"),
         ("permutation", "permutation_counts_cuda"), ("multiclass", "multiclass_permutations_cuda"),
         ("multiclass_resample", "label_permutations_cuda"), ("multiclass_resample", "stratified_resamples_cuda"),
         ("multiclass_resample", "swap_differences_cuda"), ("multiclass_scores", "multiclass_score_permutations_cuda")]
#: The twins each mode must have called (the Monte Carlo routes its questions are built to take).
CALLED = {"fast": {"resample.resample_metrics_cuda", "swaps.swap_differences_cuda",
                   "multiclass.multiclass_permutations_cuda", "multiclass_scores.multiclass_score_permutations_cuda"},
          "reports": {"resample.resample_metrics_cuda", "swaps.swap_differences_cuda",
                      "permutation.permutation_counts_cuda", "multiclass_resample.label_permutations_cuda",
                      "multiclass_resample.stratified_resamples_cuda", "multiclass_resample.swap_differences_cuda"}}


def _binary(n_pos=12, n_neg=18, models=3, seed=7):
    """Labels and tied scores (one decimal) of ``models`` models of rising quality."""
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n_pos), np.zeros(n_neg)]
    return y, {f"m{i}": np.round(y * (0.4 + 0.3 * i) + rng.normal(size=y.size), 1) for i in range(models)}


def _multiclass(n=40, K=3, seed=3):
    """Labels of K classes and two models' predicted labels that differ on more than 16 items (random swaps)."""
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


def _paired_fields(result) -> dict:
    """A paired test's answer but its (lazy) bootstrap interval."""
    return {"metric": result.metric, "values": [result.value_a, result.value_b], "statistic": result.statistic,
            "p_value": result.p_value, "method": result.method, "replicates": result.replicates,
            "hits": result.hits, "p_interval": list(result.p_interval)}


def answers(mode: str, device: str) -> dict:
    """Every answer of ``mode`` computed on ``device``, as JSON text (exact floats)."""
    from tablegen.compare.pairwise.bootstrap import bootstrap_interval
    from tablegen.compare.pairwise.paired import paired_test, pairwise_tests
    from tablegen.compare.report.evaluate import evaluate
    from tablegen.lookup.multiclass import multiclass_test
    from tablegen.lookup.multiclass_scores import multiclass_scores_test

    y, models = _binary()
    labels, predicted = _multiclass()
    found = {}
    if mode == "fast":
        found["bootstrap_interval"] = bootstrap_interval(y, models["m2"], metric="best_f1", resamples=100,
                                                         device=device)
        found["paired_test"] = _paired_fields(paired_test(y, models["m2"], models["m0"], metric="average_precision",
                                                          method="permutation", R=100, seed=3, device=device))
        pairs = pairwise_tests(y, models, metric="best_accuracy", R=100, device=device)
        found["pairwise_tests"] = {"adjusted": [[*pair, p] for pair, p in pairs.adjusted_p_values.items()],
                                   "tests": [_paired_fields(t) for t in pairs.tests.values()],
                                   "best_set": list(pairs.best_set)}
        found["multiclass_test"] = multiclass_test(labels, predicted["a"], "macro_f1", C=3, R=100,
                                                   method="monte carlo", device=device).to_dict()
        score_labels, matrix = _probabilities()
        found["multiclass_scores_test"] = multiclass_scores_test(score_labels, matrix, "ovr_macro_auc", R=100,
                                                                 method="monte carlo", device=device).to_dict()
    else:
        found["evaluate"] = evaluate(y, models, metrics=["auc", "best_f1"], R=200, device=device).to_dict()
        found["paired_test"] = paired_test(y, models["m2"], models["m1"], metric="best_f1", R=100,
                                           device=device).to_dict()  # with its bootstrap interval
        found["evaluate_multiclass"] = evaluate(labels, predicted, metrics=["accuracy", "macro_f1"], R=200,
                                                device=device).to_dict()
    return {name: json.dumps(value, sort_keys=True) for name, value in found.items()}


# --- the child process (simulator) ---------------------------------------------------------------

def _count_twin_calls() -> dict:
    """Wrap every twin of :data:`TWINS` in its module (callers look them up there at call time) to count its calls."""
    import importlib

    calls = {}
    for module_name, name in TWINS:
        module = importlib.import_module(f"tablegen.compute.kernels.cuda.{module_name}")

        def counted(*args, _original=getattr(module, name), _key=f"{module_name}.{name}", **kwargs):
            calls[_key] = calls.get(_key, 0) + 1
            return _original(*args, **kwargs)

        setattr(module, name, counted)
    return calls


def _twin_signatures() -> dict:
    """Each twin's parameters without a default against its CPU kernel's
    (:func:`~tablegen.compute.kernels.cuda.device.twin` finds the twin by name and passes it the arguments the CPU
    kernel needs; the defaults are each side's tuning: the CPU's ``narrow_limit``, the GPU's ``threads``)."""
    import importlib
    import inspect

    from tablegen.compute.kernels.cuda.device import twin

    found = {}
    for module_name, name in TWINS:
        if module_name == "permutation":  # max-T's engine calls its twin itself (compare/selection/engine.py)
            continue
        kernel = getattr(importlib.import_module(f"tablegen.compute.kernels.{module_name}"), name[:-len("_cuda")])
        gpu = twin(kernel, "cuda")
        found[f"{module_name}.{name}"] = [[p.name for p in inspect.signature(f).parameters.values()
                                           if p.default is inspect.Parameter.empty] for f in (kernel.py_func, gpu)]
    return found


def _child(mode: str, path: str) -> None:
    import warnings

    warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)  # numpy uint64 scalars wrap
    signatures = _twin_signatures()
    calls = _count_twin_calls()
    found = answers(mode, "cuda")
    Path(path).write_text(json.dumps({"answers": found, "calls": calls, "signatures": signatures}))


def _run_child(mode: str, tmp_path) -> dict:
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: device='cuda' of the reports is NOT tested "
                    "(pip install -e '.[test]')")
    out = tmp_path / f"{mode}.json"
    done = subprocess.run([sys.executable, str(HERE), mode, str(out)], capture_output=True, text=True,
                          env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}, cwd=HERE.parents[2])
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(out.read_text())


def _check(mode: str, tmp_path) -> None:
    sim = _run_child(mode, tmp_path)
    assert CALLED[mode] <= {name for name, count in sim["calls"].items() if count > 0}, sim["calls"]
    for name, (cpu, gpu) in sim["signatures"].items():
        assert len(gpu) == len(cpu), (name, cpu, gpu)  # positional: names may differ (ends / group_ends)
    cpu = answers(mode, "cpu")
    assert sorted(sim["answers"]) == sorted(cpu)
    for name, text in cpu.items():
        assert sim["answers"][name] == text, name


# --- the tests -----------------------------------------------------------------------------------

@pytest.mark.slow  # 2.4-4.9 s: in the full suite, out of the fast loop (<= 2 min)
def test_monte_carlo_answers_on_the_gpu_are_the_cpu_answers_bit_for_bit(tmp_path):
    """paired_test, pairwise_tests and bootstrap_interval (swap and bootstrap twins), multiclass_test and
    multiclass_scores_test by Monte Carlo (their permutation twins): the same JSON on both devices."""
    _check("fast", tmp_path)


@pytest.mark.slow
def test_reports_on_the_gpu_are_the_cpu_reports_bit_for_bit(tmp_path):
    """evaluate of two classes (bootstrap, swap and max-T twins) and of three (label permutation, stratified
    bootstrap and K-class swap twins), and a paired test's bootstrap interval: the same JSON on both devices."""
    _check("reports", tmp_path)


def _no_gpu(monkeypatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # hides any GPU: device='cuda' cannot be had
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")


def _calls():
    from tablegen.compare.pairwise.bootstrap import bootstrap_interval
    from tablegen.compare.pairwise.paired import paired_test, pairwise_tests
    from tablegen.compare.report.evaluate import evaluate
    from tablegen.lookup.multiclass import multiclass_test
    from tablegen.lookup.multiclass_scores import multiclass_scores_test

    y, models = _binary()
    labels, predicted = _multiclass()
    score_labels, matrix = _probabilities()
    return {"evaluate": lambda device: evaluate(y, models, metrics=["auc"], device=device),
            "evaluate (K classes)": lambda device: evaluate(labels, predicted, device=device),
            "paired_test": lambda device: paired_test(y, models["m0"], models["m1"], device=device),
            "pairwise_tests": lambda device: pairwise_tests(y, models, device=device),
            "bootstrap_interval": lambda device: bootstrap_interval(y, models["m0"], device=device),
            "multiclass_test": lambda device: multiclass_test(labels, predicted["a"], device=device),
            "multiclass_scores_test": lambda device: multiclass_scores_test(score_labels, matrix, device=device)}


@pytest.mark.parametrize("entry", list(_calls()))
def test_cuda_without_a_gpu_and_an_unknown_device_are_input_errors_naming_device(monkeypatch, entry):
    from tablegen.errors import TablegenInputError

    _no_gpu(monkeypatch)
    call = _calls()[entry]
    with pytest.raises(TablegenInputError, match=r"^device='cuda' (needs numba-cuda|but no CUDA GPU)"):
        call("cuda")
    with pytest.raises(TablegenInputError, match=r"^device must be one of 'cpu', 'cuda', 'auto', got 'gpu'"):
        call("gpu")


def test_auto_without_a_gpu_is_the_cpu_answer(monkeypatch):
    from tablegen.compare.pairwise.paired import paired_test

    _no_gpu(monkeypatch)
    y, models = _binary()
    auto = paired_test(y, models["m2"], models["m0"], metric="best_f1", R=100, device="auto")
    cpu = paired_test(y, models["m2"], models["m0"], metric="best_f1", R=100)
    assert auto.method == "sequential permutation" and _paired_fields(auto) == _paired_fields(cpu)


def test_twin_of_a_cpu_kernel_on_the_cpu_is_the_kernel_itself():
    from tablegen.compute.kernels.cuda.device import twin
    from tablegen.compute.kernels.swaps import swap_differences

    assert twin(swap_differences, "cpu") is swap_differences
    with pytest.raises(ValueError, match="resolved device"):
        twin(swap_differences, "auto")


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
