"""The batch job's guarantees: identical stores whatever the executor, chunking, worker
count, a SIGKILL and resume, or a worker killed mid-run; a job against an external scheduler."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import distributed
import numpy as np
import pytest
import zarr
from jobtools import assert_store_values_identical, assert_stores_bit_identical
from jobtools import small_config as shared_small_config
from progresstools import HANG_SECONDS, tree_state, wait_while_progressing

from tablegen.batch.config import load_config
from tablegen.batch.job import run
from tablegen.batch.plan import chunk_grid, make_plan
from tablegen.cli.main import main
from tablegen.lookup.simulate import simulate_cell
from tablegen.store.zarr_store import open_store

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
#: Every job here tabulates the minimum detectable AUC too: the identity tests cover it.
POWER = {"levels": [0.5, 0.8]}


def small_config(store, **changes):
    """The shared small job (:func:`jobtools.small_config`) with a ``power:`` section."""
    return shared_small_config(store, **{"power": POWER, **changes})


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The small job run serially: the store every other way of running must reproduce."""
    config = small_config(tmp_path_factory.mktemp("reference") / "ref.zarr")
    run(config, executor="serial")
    return config


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of two single-threaded worker processes, shared by the tests that need one."""
    from tablegen.batch.executors import worker_environment

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  env=worker_environment()) as cluster, distributed.Client(cluster) as c:
        yield c


def test_store_holds_what_simulate_cell_gives_cell_by_cell(reference):
    ds = open_store(reference.store_url).load()
    assert ds.attrs["complete"] and ds.done.values.all()
    for P, N in [(5, 8), (20, 24), (15, 16)]:
        cell = simulate_cell(P, N, reference.replicates, reference.seed, reference.metrics, reference.Cs,
                             reference.alphas)
        stored = ds.sel(P=P, N=N)
        for name in ("critical_value", "ci_low", "ci_high", "exact_critical_value", "tail_quantile"):
            np.testing.assert_array_equal(stored[name].values, cell[name].values, err_msg=name)
        assert int(stored.replicates) == reference.replicates


def test_a_resume_removes_the_half_written_files_a_killed_run_left(reference, tmp_path):
    """zarr writes each file as <name>.<uuid>.partial and renames it; a kill in between leaves the partial
    file, which a resume removes (under the store's lock) so the store is the clean run's again."""
    import shutil

    store = tmp_path / "copy.zarr"
    shutil.copytree(reference.store_url, store)
    planted = [store / "critical_value" / "c" / "0" / "0.0123456789abcdef0123456789abcdef.partial",
               store / "done" / "zarr.0123456789abcdef0123456789abcdef.partial"]
    for path in planted:
        path.write_bytes(b"half")
    keep = store / "notes.partial"  # not zarr's pattern: not ours to remove
    keep.write_bytes(b"user file")
    run(small_config(store), executor="serial")
    assert not any(path.exists() for path in planted) and keep.exists()
    keep.unlink()
    assert_stores_bit_identical(store, reference.store_url)


def test_plan_covers_every_cell_once_and_skips_done_chunks(reference):
    cells = [cell for chunk in chunk_grid(reference) for cell in chunk.cells(reference)]
    assert sorted(cells) == sorted((P, N) for P in reference.P for N in reference.N)
    done = np.zeros((4, 3), bool)
    done[0:2, 0:2] = True
    done[2, 2] = True  # one cell of a chunk: that chunk is still remaining
    plan = make_plan(reference, done)
    assert len(plan.chunks) == 4 and len(plan.remaining) == 3 and plan.cells_done == 5
    assert 0 < plan.core_seconds_remaining < plan.core_seconds


@pytest.mark.slow  # a dask cluster: the fast loop leaves it to CI
def test_serial_and_dask_executors_give_bit_identical_stores(reference, client, tmp_path):
    config = small_config(tmp_path / "dask.zarr")
    summary = run(config, executor="dask", client=client)
    assert summary.cells_computed == 12 and summary.cell_replicates_per_second > 0
    assert_stores_bit_identical(config.store_url, reference.store_url)


def test_two_chunkings_give_identical_values(reference, tmp_path):
    config = small_config(tmp_path / "chunks.zarr", chunks={"P": 3, "N": 1})
    run(config, executor="serial")
    assert_store_values_identical(config.store_url, reference.store_url)
    assert zarr.open_group(config.store_url)["critical_value"].chunks[-2:] == (3, 1)


@pytest.mark.slow  # dask clusters: the fast loop leaves it to CI
def test_one_and_two_workers_give_bit_identical_stores(reference, client, tmp_path):
    one = small_config(tmp_path / "one.zarr", cluster={"workers": 1})
    run(one, executor="dask")  # a LocalCluster of its own with one worker
    assert_stores_bit_identical(one.store_url, reference.store_url)
    two = small_config(tmp_path / "two.zarr")
    run(two, executor="dask", client=client)  # two workers whose tasks interleave
    assert len(client.scheduler_info()["workers"]) == 2
    assert_stores_bit_identical(two.store_url, reference.store_url)


def _slow_config(store, **changes):
    """12 cells of ~0.2 s each, one cell per task: long enough to interrupt mid-way."""
    return small_config(store, replicates=1_000_000, chunks={"P": 1, "N": 1}, **changes)


def _done_count(store) -> int:
    """Cells flagged done; 0 before the run has written the ``done`` array's metadata (zarr writes each
    file atomically, so once that file is there the array reads, its unwritten chunks as False)."""
    if not (Path(store) / "done" / "zarr.json").exists():
        return 0
    return int(np.asarray(zarr.open_array(str(Path(store) / "done"), mode="r")[...]).sum())


@pytest.mark.slow  # a dask cluster of its own: the fast loop leaves it to CI
def test_sigkill_mid_run_then_resume_gives_the_same_store(tmp_path):
    config_file = tmp_path / "slow.yaml"
    config_file.write_text(
        "grid: {P: [5, 10, 15, 20], N: [8, 16, 24]}\nreplicates: 1000000\nseed: 11\n"
        "metrics: [auc, best_accuracy, best_f1, tp_at_3]\nCs: [10, 100]\nalphas: [0.01, 0.05]\n"
        "chunks: {P: 1, N: 1}\nstore: {url: killed.zarr}\npower: {levels: [0.5, 0.8]}\n"
    )
    process = subprocess.Popen([sys.executable, "-m", "tablegen", "run", str(config_file), "--executor", "serial"],
                               cwd=tmp_path, start_new_session=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    store = tmp_path / "killed.zarr"
    # no bound on the time 3 cells take: only on the run making no progress (cells done, store files written)
    wait_while_progressing(process, lambda: _done_count(store), tree_state(store),
                           until=lambda: _done_count(store) >= 3, poll=0.01)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    done_at_kill = _done_count(store)
    assert process.returncode == -signal.SIGKILL, process.stderr.read().decode()
    assert 3 <= done_at_kill < 12, f"{done_at_kill} cells done when killed: the run was not interrupted mid-way"
    assert not open_store(str(store)).attrs["complete"]
    assert (tmp_path / "killed.zarr.lock").exists()  # left behind by the dead run; resume takes it over

    assert main(["run", str(config_file), "--store", str(store), "--executor", "serial"]) == 0
    resumed = open_store(str(store))
    assert resumed.attrs["complete"] and resumed.done.values.all()
    clean = _slow_config(tmp_path / "clean.zarr")
    run(clean, executor="serial")
    assert_stores_bit_identical(store, clean.store_url)


@pytest.mark.slow  # a dask cluster of its own: the fast loop leaves it to CI
def test_killing_a_worker_mid_run_still_gives_the_same_store(client, tmp_path):
    config = _slow_config(tmp_path / "worker-killed.zarr")
    killed = threading.Event()

    def kill_a_busy_worker(done, total, chunk):
        if chunk is None or killed.is_set():
            return
        busy = [address for address, tasks in client.processing().items() if tasks]
        if busy:
            pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
            os.kill(pid, signal.SIGKILL)
            killed.set()

    summary = run(config, executor="dask", client=client, progress=kill_a_busy_worker)
    assert killed.is_set() and summary.complete
    client.wait_for_workers(2, timeout=HANG_SECONDS)  # the nanny restarts it
    clean = _slow_config(tmp_path / "clean.zarr")
    run(clean, executor="serial")
    assert_stores_bit_identical(config.store_url, clean.store_url)


@pytest.mark.slow  # a dask cluster of its own: the fast loop leaves it to CI
def test_job_against_a_scheduler_and_two_workers_started_as_processes(reference, tmp_path):
    bin_dir = Path(sys.executable).parent
    scheduler_file = tmp_path / "scheduler.json"
    env = {**os.environ, "DASK_LOGGING__DISTRIBUTED": "warning"}
    processes = [subprocess.Popen([str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                                   "--no-dashboard", "--scheduler-file", str(scheduler_file)],
                                  env=env, start_new_session=True)]
    try:
        deadline = time.monotonic() + HANG_SECONDS
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        for _ in range(2):
            processes.append(subprocess.Popen(
                [str(bin_dir / "dask"), "worker", "--scheduler-file", str(scheduler_file), "--nthreads", "1",
                 "--no-dashboard", "--host", "127.0.0.1"], env=env, start_new_session=True))
        with distributed.Client(scheduler_file=str(scheduler_file), timeout=HANG_SECONDS) as c:
            c.wait_for_workers(2, timeout=HANG_SECONDS)
            address = c.scheduler.address
            workers = len(c.scheduler_info()["workers"])
        assert workers == 2 and address.startswith("tcp://127.0.0.1:")
        config_file = tmp_path / "job.yaml"
        config_file.write_text(
            "grid: {P: [5, 10, 15, 20], N: [8, 16, 24]}\nreplicates: 40000\nseed: 11\n"
            "metrics: [auc, best_accuracy, best_f1, tp_at_3]\nCs: [10, 100]\nalphas: [0.01, 0.05]\n"
            "chunks: {P: 2, N: 2}\nstore: {url: external.zarr}\npower: {levels: [0.5, 0.8]}\n"
        )
        store = tmp_path / "external.zarr"
        assert main(["run", str(config_file), "--store", str(store), "--scheduler-address", address]) == 0
        assert_stores_bit_identical(store, reference.store_url)
    finally:
        for process in processes:
            os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            process.wait(timeout=HANG_SECONDS)


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path, capsys):
    assert main(["run", str(CONFIGS / "laptop.yaml"), "--store", str(tmp_path / "l.zarr"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "19 x 19 = 361 cells, R = 100,000" in out
    assert "tasks: 19 chunks of up to 1 x 19 cells; 0 done, 19 remaining" in out
    seconds = make_plan(load_config(CONFIGS / "laptop.yaml")).core_seconds  # the cost model's estimate
    assert seconds < 360  # the main job is minutes of work: the plan states it in core-seconds
    assert f"estimated cost (tablegen/compute/cost.py model): {seconds:,.1f} core-seconds in all, " in out
    assert not any(tmp_path.iterdir())


def test_cli_run_shows_progress_and_summary_then_resumes_with_nothing_to_do(tmp_path, capsys):
    config_file = tmp_path / "job.yaml"
    config_file.write_text((CONFIGS / "smoke.yaml").read_text())
    store = tmp_path / "smoke.zarr"
    assert main(["run", str(config_file), "--store", str(store), "--executor", "serial"]) == 0
    captured = capsys.readouterr()
    assert "9/9 cells  100.0% of the work" in captured.err and "ETA" in captured.err
    assert "9 of 9 cells computed at R = 40,000" in captured.out and "cell-replicates/s" in captured.out
    assert open_store(str(store)).attrs["command"].startswith("tablegen run ")
    assert main(["run", str(config_file), "--store", str(store), "--dry-run"]) == 0
    assert "4 done, 0 remaining" in capsys.readouterr().out
    assert main(["run", str(config_file), "--store", str(store), "--executor", "serial"]) == 0
    assert "nothing to do: all 9 cells" in capsys.readouterr().out


def test_bad_config_fails_naming_the_field_and_writes_nothing(tmp_path, capsys):
    config_file = tmp_path / "bad.yaml"
    config_file.write_text((CONFIGS / "smoke.yaml").read_text().replace("replicates: 40000", "replicates: 40"))
    assert main(["run", str(config_file), "--store", str(tmp_path / "bad.zarr")]) == 2
    assert "config field replicates: R = 40 is too small" in capsys.readouterr().err
    assert main(["run", str(tmp_path / "missing.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["run", str(CONFIGS / "smoke.yaml"), "--store", str(tmp_path / "w.zarr"), "--workers", "0"]) == 2
    assert "workers must be an integer >= 1, got 0" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]


@pytest.mark.slow
def test_two_runs_of_one_config_on_one_client_share_no_task(reference, client, tmp_path, monkeypatch):
    """Two stores of one config on one client: each run's chunk tasks have their own keys, so dask never
    hands the second run the first one's finished futures (which left the second store unwritten)."""
    keys = []
    submit = client.submit

    def recording_submit(*args, **kwargs):
        keys.append(kwargs["key"])
        return submit(*args, **kwargs)

    monkeypatch.setattr(client, "submit", recording_submit)
    first, second = small_config(tmp_path / "first.zarr"), small_config(tmp_path / "second.zarr")
    run(first, executor="dask", client=client)
    first_keys = set(keys)
    run(second, executor="dask", client=client)
    assert len(first_keys) == 4 and len(keys) == 8 and first_keys.isdisjoint(keys[4:])
    assert_stores_bit_identical(second.store_url, reference.store_url)


def test_the_minimum_detectable_auc_is_stored_as_the_exact_search_gives_it(reference):
    from tablegen.compute.exact.detectable import cell_detectable_aucs
    from tablegen.compute.metrics import get_metric

    ds = open_store(reference.store_url)
    assert ds.attrs["schema_version"] == 5 and ds.power.values.tolist() == POWER["levels"]
    stored = ds.minimum_detectable_auc
    assert stored.dims == ("metric", "power", "alpha", "C", "P", "N") and stored.attrs["tolerance"] == 1e-7
    for P, N in [(5, 8), (20, 24)]:
        for metric in reference.metrics:
            expected = cell_detectable_aucs(get_metric(metric), P, N, reference.Cs, reference.alphas,
                                            POWER["levels"])
            np.testing.assert_array_equal(stored.sel(metric=metric, P=P, N=N).values, expected, err_msg=metric)
    values = stored.values
    assert not np.isnan(values).any()  # every metric here has exact Lehmann power at every cell
    assert (values[:, 1] >= values[:, 0]).all() and ((values >= 0.5) & (values <= 1.0)).all()
