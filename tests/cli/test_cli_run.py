"""``tablegen run`` and ``simulate``: --json output, one plan and one store inspection per run, exit codes,
and the allocator environment of worker processes."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from jobtools import small_config

from tablegen import errors
from tablegen.batch import executors, job
from tablegen.batch.launch import job_script_prologue
from tablegen.cli.main import main
from tablegen.store import integrity, zarr_store
from tablegen.store.lock import StoreLock

COMMANDS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "commands.md"


def _config_file(tmp_path, store, extra="") -> Path:
    path = tmp_path / "job.yaml"
    path.write_text("grid: {P: [5, 10], N: [8]}\nreplicates: 2000\nseed: 11\nmetrics: [auc, best_accuracy]\n"
                    f"Cs: [10]\nalphas: [0.05]\nchunks: {{P: 1, N: 1}}\nstore: {{url: {store}}}\n{extra}")
    return path


def _run_json(capsys, *arguments) -> dict:
    assert main(["run", *arguments, "--executor", "serial", "--json"]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err  # stdout holds the JSON and nothing else


# --- --json ---------------------------------------------------------------------------------------

def test_run_json_is_the_summary_and_a_rerun_skips_every_cell(tmp_path, capsys):
    store = tmp_path / "s.zarr"
    summary, err = _run_json(capsys, str(_config_file(tmp_path, store)))
    assert summary["store"] == str(store) and summary["complete"] is True
    assert (summary["cells"], summary["cells_computed"], summary["cells_skipped"]) == (2, 2, 0)
    assert summary["replicates"] == 2000 and summary["wall_seconds"] > 0
    assert "2 cells" in err  # the plan went to stderr
    assert bool(zarr_store.open_store(str(store)).done.all())
    again, _ = _run_json(capsys, str(_config_file(tmp_path, store)))
    assert (again["cells_computed"], again["cells_skipped"]) == (0, 2)


def test_dry_run_json_is_the_plan_and_writes_nothing(tmp_path, capsys):
    store = tmp_path / "s.zarr"
    plan, err = _run_json(capsys, str(_config_file(tmp_path, store)), "--dry-run")
    assert (plan["cells"], plan["cells_done"], plan["cells_remaining"], plan["chunks"]) == (2, 0, 2, 2)
    assert plan["core_seconds"] == plan["core_seconds_remaining"] > 0
    assert not store.exists()


def test_simulate_json_holds_the_cells_values(capsys):
    from tablegen import simulate_cell

    assert main(["simulate", "--P", "20", "--N", "20", "--R", "20000", "--seed", "3", "--metrics", "best_accuracy",
                 "auc", "--C", "10", "100", "--alpha", "0.01", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ds = simulate_cell(20, 20, 20000, 3, ["best_accuracy", "auc"], [10, 100], [0.01])
    assert (data["P"], data["N"], data["R"], data["seed"]) == (20, 20, 20000, 3)
    assert len(data["values"]) == 4
    for entry in data["values"]:
        cell = ds.sel(metric=entry["metric"], alpha=entry["alpha"], C=entry["C"])
        for name in ("critical_value", "ci_low", "ci_high", "exact_critical_value"):
            assert entry[name] == float(cell[name]), (entry, name)
    accuracy = next(e for e in data["values"] if e["metric"] == "best_accuracy" and e["C"] == 10)
    assert accuracy["exact_critical_value"] == 0.775
    expected_tail = [None if np.isnan(v) else float(v) for v in ds.tail_quantile.sel(metric="auc").values]
    assert data["tail_quantile"]["auc"] == expected_tail


def test_export_json_is_the_grid(tmp_path, capsys):
    from tablegen.lookup.export import appendix_grid
    from tablegen.lookup.table import open_table

    assert main(["export", "--metric", "auc", "--C", "100", "--alpha", "0.05", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    grid = appendix_grid(open_table(), "auc", 100, 0.05)
    assert data["P"] == grid.P.values.tolist() and data["N"] == grid.N.values.tolist()
    assert data["value"] == grid.value.values.tolist() and data["exact"] == grid.exact.values.tolist()
    assert (data["metric"], data["C"], data["alpha"], data["source"]) == ("auc", 100, 0.05, "bundled table")
    output = tmp_path / "grid.json"
    assert main(["export", "--metric", "auc", "--C", "100", "--alpha", "0.05", "--json", "-o", str(output)]) == 0
    assert capsys.readouterr().out == "" and json.loads(output.read_text()) == data


# --- one inspection, one plan per run ---------------------------------------------------------------

def _count(monkeypatch, module, name, counts):
    original = getattr(module, name)

    def counted(*args, **kwargs):
        counts[name] = counts.get(name, 0) + 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)


@pytest.mark.parametrize("resume", [False, True], ids=["new store", "resume"])
def test_run_checks_the_store_and_plans_once(tmp_path, capsys, monkeypatch, resume):
    config = _config_file(tmp_path, tmp_path / "s.zarr")
    if resume:
        assert main(["run", str(config), "--executor", "serial"]) == 0
        capsys.readouterr()
    counts = {}
    _count(monkeypatch, zarr_store, "store_exists", counts)
    _count(monkeypatch, zarr_store, "check_integrity", counts)
    _count(monkeypatch, job, "make_plan", counts)
    _count(monkeypatch, integrity, "check_integrity", counts)
    assert main(["run", str(config), "--executor", "serial"]) == 0
    out = capsys.readouterr().out
    assert "2 cells" in out and ("nothing to do" in out) == resume
    assert counts == ({"store_exists": 1, "make_plan": 1, "check_integrity": 1} if resume else
                      {"store_exists": 1, "make_plan": 1})


# --- exit codes ---------------------------------------------------------------------------------------

def test_a_locked_store_exits_6_and_is_left_as_it_was(tmp_path, capsys):
    store = tmp_path / "s.zarr"
    config = _config_file(tmp_path, store)
    with StoreLock(str(store)):
        assert main(["run", str(config), "--executor", "serial"]) == 6
        assert "is locked by another tablegen run" in capsys.readouterr().err
        assert list(store.iterdir()) == []  # the holder's folder (the lock holds it), nothing written into it
    assert not store.exists()  # the holder left it empty: removed with its lock
    assert main(["run", str(config), "--executor", "serial"]) == 0  # the same command works once it is free


def test_exit_codes_are_those_the_docs_document(tmp_path, capsys):
    paragraph = COMMANDS_PAGE.read_text().split("**Exit codes**", 1)[1].split("\n\n", 1)[0]
    paragraph = " ".join(paragraph.split())
    documented = {int(code): text for code, text in re.findall(r"(?:;|\)\.|—) ([0-6]) ([a-z][a-z ]+)", paragraph)}
    assert documented[2].startswith("a usage error") and documented[3].startswith("a damaged store")
    assert documented[4].startswith("a run that stopped") and documented[5].startswith("over the memory")
    assert documented[6].startswith("the store is locked")
    classes = {2: errors.TablegenInputError, 3: errors.StoreIntegrityError, 4: errors.RunStoppedError,
               5: errors.ResourceLimitError, 6: errors.StoreLockedError}
    assert {code: cls.exit_code for code, cls in classes.items()} == {code: code for code in classes}
    assert errors.StoreError("x").exit_code == 2  # a missing or foreign store is a usage error
    # ... and the command line gives them
    damaged = tmp_path / "d.zarr"
    assert main(["run", str(_config_file(tmp_path, damaged)), "--executor", "serial"]) == 0
    (damaged / "zarr.json").write_text('{"zarr_format": 3, "node_type": "gro')
    capsys.readouterr()
    stopped = _config_file(tmp_path, tmp_path / "s.zarr", "cluster: {workers: 1, connect_timeout: 0.2}\n")
    cases = {2: ["lookup", "auc", "--P", "-1", "--N", "20", "--C", "10"],
             3: ["info", str(damaged)],
             4: ["run", str(stopped), "--scheduler-address", "tcp://127.0.0.1:9"],
             5: ["lookup", "best_f1", "--P", "20", "--N", "20", "--C", "1000000000", "--method", "simulate"],
             6: None}
    for code, command in cases.items():
        if command is not None:
            assert main(command) == code, command
            assert capsys.readouterr().err.splitlines()[-1].startswith("tablegen: error: "), command


# --- the allocator ----------------------------------------------------------------------------------

def test_workers_get_the_allocator_thresholds_in_their_environment():
    environment = executors.worker_environment()
    assert environment["MALLOC_TRIM_THRESHOLD_"] == str(256 * 2**20)
    assert environment["MALLOC_MMAP_THRESHOLD_"] == str(32 * 2**20)
    prologue = job_script_prologue()
    assert f"export MALLOC_TRIM_THRESHOLD_={256 * 2**20}" in prologue
    assert f"export MALLOC_MMAP_THRESHOLD_={32 * 2**20}" in prologue
    import dask
    import distributed  # noqa: F401  (its config defaults, dask's 65536 among them)

    with executors.allocator_environment():
        spawn = dask.config.get("distributed.nanny.pre-spawn-environ")
        assert spawn["MALLOC_TRIM_THRESHOLD_"] == str(256 * 2**20)  # dask's 65536 overridden
        assert spawn["MALLOC_MMAP_THRESHOLD_"] == str(32 * 2**20)
        assert spawn["OMP_NUM_THREADS"] == 1  # dask's own entries kept
        assert os.environ["MALLOC_MMAP_THRESHOLD_"] == str(32 * 2**20)  # an earlier nanny's values overridden
    assert dask.config.get("distributed.nanny.pre-spawn-environ")["MALLOC_TRIM_THRESHOLD_"] == 65536


@pytest.mark.slow
def test_local_cluster_workers_start_with_the_allocator_thresholds(tmp_path, monkeypatch):
    """glibc reads MALLOC_*_ when a process starts: the worker's initial environment (/proc/self/environ,
    not os.environ, which the nanny updates after the start) must hold them (~5 s)."""
    if not os.path.exists("/proc/self/environ"):
        pytest.skip("needs /proc")
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # as an earlier dask cluster in this process leaves it
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "0")  # (monkeypatch restores both afterwards)
    config = small_config(tmp_path / "s.zarr", cluster={"workers": 1})

    def initial_environment():
        with open("/proc/self/environ", "rb") as handle:
            return dict(item.split(b"=", 1) for item in handle.read().split(b"\0") if b"=" in item)

    with executors._connected_client(config, None) as client:
        (environ,) = client.run(initial_environment).values()
    assert environ[b"MALLOC_TRIM_THRESHOLD_"] == str(256 * 2**20).encode()
    assert environ[b"MALLOC_MMAP_THRESHOLD_"] == str(32 * 2**20).encode()
    assert os.environ["MALLOC_TRIM_THRESHOLD_"] == "65536"  # this process's environment restored
