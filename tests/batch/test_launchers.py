"""The cluster launchers in jobs/: job scripts, argument errors, a whole run, the Kubernetes manifests.

Nothing here needs a cluster.  Job scripts come from the launchers' own ``main`` with
``--print-job-script`` while job submission is made to fail the test.  The whole run uses the
SLURM launcher with stand-ins for ``sbatch`` and ``scancel`` that run each job script with bash on
this machine, from another directory (as PBS does), so the script's exports, venv activation and
worker command are really executed.  The Kubernetes manifests are only parsed and checked: they
have never been applied to a cluster (jobs/README.md says so).
"""

from __future__ import annotations

import doctest
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml
from dask_jobqueue.core import Job, JobQueueCluster
from progresstools import HANG_SECONDS

from tablegen.batch import launch as batch_launch
from tablegen.batch.config import load_config
from tablegen.batch.executors import worker_environment
from tablegen.batch.job import resolve_config, run
from tablegen.cli import launch as cli_launch
from tablegen.cli.main import build_parser as tablegen_parser

ROOT = Path(__file__).resolve().parents[2]
JOBS = ROOT / "jobs"
sys.path.insert(0, str(JOBS))
import pbs  # noqa: E402
import slurm  # noqa: E402

LAUNCHERS = {"slurm": slurm, "pbs": pbs}
THREADS = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@pytest.fixture
def no_submission(monkeypatch):
    """Record any attempt to submit a batch job or to grow a cluster; the test fails if there was one."""
    attempts = []
    scale = JobQueueCluster.scale

    async def submit(self, script_filename):
        attempts.append("submit")
        raise RuntimeError("a batch job was submitted")

    def no_growth(self, n=None, jobs=0, **kwargs):
        if n or jobs:
            attempts.append(f"scale(n={n}, jobs={jobs})")
        return scale(self, 0)

    monkeypatch.setattr(Job, "_submit_job", submit)
    monkeypatch.setattr(JobQueueCluster, "scale", no_growth)
    monkeypatch.setattr(JobQueueCluster, "adapt", lambda self, *a, **k: attempts.append("adapt"))
    yield
    assert attempts == []


def fake_venv(tmp_path: Path) -> Path:
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "activate").write_text("")
    return tmp_path / "venv"


def job_script(capsys, launcher: str, *arguments: str) -> str:
    """The job script printed by ``<launcher>.main([... --print-job-script])``."""
    code = LAUNCHERS[launcher].main([str(ROOT / "configs" / "smoke.yaml"), "--print-job-script", *arguments])
    assert code == 0
    return capsys.readouterr().out


# (launcher, queue flag, expected header lines)
HEADERS = {
    "slurm": ("--partition", ["#SBATCH -p short", "#SBATCH -A proj", "#SBATCH --cpus-per-task=2",
                              "#SBATCH --mem=4G", "#SBATCH -t 02:30:00", "#SBATCH --qos=long"]),
    "pbs": ("--queue", ["#PBS -q short", "#PBS -A proj", "#PBS -l select=1:ncpus=2:mem=4096MB",
                        "#PBS -l walltime=02:30:00", "#PBS -m n"]),
}


@pytest.mark.parametrize("launcher", ["slurm", "pbs"])
def test_job_script_has_resources_environment_and_single_threaded_workers(launcher, capsys, tmp_path,
                                                                          monkeypatch, no_submission):
    monkeypatch.setenv("NUMBA_CACHE_DIR", "/node/local/numba")
    venv = fake_venv(tmp_path)
    queue_flag, headers = HEADERS[launcher]
    extra = "--qos=long" if launcher == "slurm" else "-m n"
    script = job_script(capsys, launcher, "--jobs", "3", "--processes", "2", "--memory", "2GiB",
                        "--walltime", "02:30:00", queue_flag, "short", "--account", "proj",
                        "--venv", str(venv), f"--job-extra={extra}")
    lines = script.splitlines()
    for header in headers:
        assert header in lines
    exports = [f"export {name}={shlex.quote(value)}" for name, value in worker_environment().items()]
    assert set(exports) <= set(lines)
    assert {f"export {name}=1" for name in THREADS} <= set(lines)
    assert "export NUMBA_CACHE_DIR=/node/local/numba" in lines
    assert f"source {venv}/bin/activate" in lines
    (worker,) = [line for line in lines if "distributed.cli.dask_worker" in line]
    assert worker.startswith(f"{venv}/bin/python -m distributed.cli.dask_worker tcp://")
    words = worker.split()
    for flag, value in [("--nthreads", "1"), ("--nworkers", "2"), ("--memory-limit", "2.00GiB"),
                        ("--lifetime", "8400s"), ("--lifetime-stagger", "150s")]:
        assert words[words.index(flag) + 1] == value
    assert max(map(lines.index, exports + [f"source {venv}/bin/activate"])) < lines.index(worker)
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)


def test_job_script_defaults(capsys, monkeypatch, no_submission):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    lines = job_script(capsys, "slurm", "--jobs", "1").splitlines()
    assert "#SBATCH -t 01:00:00" in lines and "#SBATCH --mem=2G" in lines and "#SBATCH --cpus-per-task=1" in lines
    assert not any(line.startswith(("#SBATCH -p", "#SBATCH -A", "source ")) for line in lines)
    (cache,) = [line for line in lines if line.startswith("export NUMBA_CACHE_DIR=")]
    # evaluated on the node (its own $TMPDIR), not fixed to this machine's temporary folder
    assert cache == 'export NUMBA_CACHE_DIR="${TMPDIR:-/tmp}/tablegen-numba-cache-$(id -u)"'
    (worker,) = [line for line in lines if "distributed.cli.dask_worker" in line]
    assert worker.startswith(f"{sys.executable} -m distributed.cli.dask_worker")
    assert "--nthreads 1 " in worker and "--nworkers" not in worker


@pytest.mark.parametrize("arguments, message", [
    (["--jobs", "0"], "argument --jobs: must be an integer >= 1, got '0'"),
    (["--jobs", "2", "--processes", "two"], "argument --processes: must be an integer >= 1, got 'two'"),
    (["--jobs", "2", "--memory", "4"], "argument --memory: must be a size of at least 64MiB"),
    (["--jobs", "2", "--memory", "lots"], "argument --memory:"),
    (["--jobs", "2", "--walltime", "2h"], "argument --walltime: must be HH:MM:SS"),
    (["--jobs", "2", "--walltime", "00:00:30"], "argument --walltime: must be HH:MM:SS of at least 00:01:00"),
    (["--jobs", "2", "--venv", "."], "argument --venv: '.' is not a virtual environment"),
    (["--processes", "2"], "the following arguments are required: --jobs"),
    (["--jobs", "2", "--store", ""], "store must be a non-empty path or URL"),
])
@pytest.mark.parametrize("launcher", ["slurm", "pbs"])
def test_bad_arguments_fail_naming_the_argument_before_any_cluster(launcher, arguments, message, capsys,
                                                                   monkeypatch):
    module = LAUNCHERS[launcher]
    monkeypatch.setattr(module, "make_cluster", lambda args: pytest.fail("cluster built despite bad input"))
    with pytest.raises(SystemExit) as exit_info:
        module.main([str(ROOT / "configs" / "smoke.yaml"), *arguments])
    assert exit_info.value.code == 2
    assert f"{launcher}.py: error: {message}" in capsys.readouterr().err


def test_bad_config_fails_naming_the_field(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(slurm, "make_cluster", lambda args: pytest.fail("cluster built despite bad input"))
    config = tmp_path / "bad.yaml"
    config.write_text((ROOT / "configs" / "smoke.yaml").read_text().replace("seed: 2005", "seed: -1"))
    for path, message in [(config, "config field seed"), (tmp_path / "missing.yaml", "does not exist")]:
        with pytest.raises(SystemExit) as exit_info:
            slurm.main([str(path), "--jobs", "1", "--print-job-script"])
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err


@pytest.mark.parametrize("module", [batch_launch, cli_launch, slurm, pbs], ids=lambda m: m.__name__)
def test_docstring_examples(module, monkeypatch, no_submission):
    monkeypatch.chdir(ROOT)
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# --- a whole run through stand-in sbatch/scancel ------------------------------------------------

SBATCH = """\
#!/usr/bin/env bash
# Stand-in for sbatch: run the job script with bash on this machine, in its own session (process
# group) and from the queue directory rather than the submission directory (as PBS does).
script="$FAKE_QUEUE_DIR/job-$RANDOM$RANDOM.sh"
cp "$1" "$script"
cd "$FAKE_QUEUE_DIR"
setsid bash "$script" > "$script.log" 2>&1 < /dev/null &
echo $! >> "$FAKE_QUEUE_DIR/job-ids"
echo "Submitted batch job $!"
"""
SCANCEL = """\
#!/usr/bin/env bash
# Stand-in for scancel: end the job's process group.
kill -TERM -- "-$1" 2>/dev/null || true
"""
TINY = """\
name: tiny
grid: {P: [5, 10], N: [10]}
replicates: 5000
seed: 7
metrics: [auc, best_f1]
Cs: [10]
alphas: [0.05]
exact: false
chunks: {P: 1, N: 1}
store: {url: tiny.zarr}
"""


def _job_ids(queue: Path) -> list[int]:
    path = queue / "job-ids"
    return [int(word) for word in path.read_text().split()] if path.exists() else []


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    """``sbatch``/``scancel`` stand-ins first on PATH; yields the queue directory.

    On teardown, any job process group the stand-in started and that is still alive is ended.
    """
    bin_dir, queue = tmp_path / "bin", tmp_path / "queue"
    bin_dir.mkdir()
    queue.mkdir()
    for name, text in (("sbatch", SBATCH), ("scancel", SCANCEL)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_QUEUE_DIR", str(queue))
    yield queue
    for pgid in _job_ids(queue):
        if _alive(pgid):
            os.killpg(pgid, signal.SIGKILL)


@pytest.mark.slow  # a dask cluster of its own: the fast loop leaves it to CI
def test_slurm_launcher_runs_a_job_on_single_threaded_workers(tmp_path, monkeypatch, capsys, fake_slurm):
    work = tmp_path / "work"
    work.mkdir()
    (work / "tiny.yaml").write_text(TINY)
    monkeypatch.chdir(work)  # the config's relative store must land here, not in the jobs' directory
    seen = {}
    original = batch_launch.run_on_cluster

    def run_and_inspect(cluster, *args, **kwargs):
        from distributed import Client

        summary = original(cluster, *args, **kwargs)
        with Client(cluster) as client:
            seen["nthreads"] = sorted(client.nthreads().values())
            seen["workers"] = client.run(lambda: ({name: os.environ.get(name) for name in worker_environment()},
                                                  os.getcwd(), __import__("numba").config.NUMBA_NUM_THREADS))
        return summary

    monkeypatch.setattr(batch_launch, "run_on_cluster", run_and_inspect)
    venv = ["--venv", sys.prefix] if sys.prefix != sys.base_prefix else []
    code = slurm.main(["tiny.yaml", "--jobs", "2", "--memory", "1GB", "--interface", "lo", *venv])
    out = capsys.readouterr().out
    assert code == 0
    assert "2 of 2 cells computed" in out and "about 0 s on 2 workers" in out

    assert len(_job_ids(fake_slurm)) == 2
    assert seen["nthreads"] == [1, 1]
    for environment, cwd, numba_threads in seen["workers"].values():
        assert environment == worker_environment()
        assert {environment[name] for name in THREADS} == {"1"} and numba_threads == 1
        assert cwd == str(fake_slurm)
    deadline = time.monotonic() + HANG_SECONDS
    while any(map(_alive, _job_ids(fake_slurm))) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(_alive, _job_ids(fake_slurm))), "jobs were not cancelled at the end of the run"

    assert not (fake_slurm / "tiny.zarr").exists()
    launched = xr.open_zarr(work / "tiny.zarr", consolidated=False)
    assert launched.attrs["complete"] and bool(launched.done.all())
    serial_config = resolve_config(load_config(work / "tiny.yaml"), store_url=str(tmp_path / "serial.zarr"))
    run(serial_config, executor="serial")
    serial = xr.open_zarr(tmp_path / "serial.zarr", consolidated=False)
    for name in serial.data_vars:
        np.testing.assert_array_equal(launched[name].values, serial[name].values, err_msg=name)


# --- Kubernetes manifests (parsed only; never applied to a cluster) ------------------------------

def _manifest(name: str) -> dict:
    return yaml.safe_load((JOBS / name).read_text())


def test_kubernetes_dask_cluster_runs_single_threaded_workers_with_the_worker_environment(monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.delenv("DASK_LOGGING__DISTRIBUTED", raising=False)
    cluster = _manifest("kubernetes.yaml")
    assert (cluster["apiVersion"], cluster["kind"]) == ("kubernetes.dask.org/v1", "DaskCluster")
    name = cluster["metadata"]["name"]
    pod = cluster["spec"]["worker"]["spec"]
    (worker,) = pod["containers"]
    env = {item["name"]: item["value"] for item in worker["env"]}
    expected = worker_environment()
    assert {key: env.get(key) for key in expected if key != "NUMBA_CACHE_DIR"} == {
        key: value for key, value in expected.items() if key != "NUMBA_CACHE_DIR"}
    assert {env[key] for key in THREADS} == {"1"}
    mounts = {mount["mountPath"]: mount["name"] for mount in worker["volumeMounts"]}
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    assert "emptyDir" in volumes[mounts[env["NUMBA_CACHE_DIR"]]]  # pod-local, not shared
    args = worker["args"]
    assert args[:2] == ["dask", "worker"] and args[args.index("--nthreads") + 1] == "1"
    assert worker["resources"]["requests"]["cpu"] == worker["resources"]["limits"]["cpu"] == "1"
    (scheduler,) = cluster["spec"]["scheduler"]["spec"]["containers"]
    assert scheduler["image"] == worker["image"]
    assert cluster["spec"]["scheduler"]["service"]["selector"]["dask.org/cluster-name"] == name
    assert 8786 in [port["port"] for port in cluster["spec"]["scheduler"]["service"]["ports"]]


def test_kubernetes_runner_attaches_tablegen_run_to_the_scheduler_service():
    cluster, job = _manifest("kubernetes.yaml"), _manifest("kubernetes-run.yaml")
    (runner,) = job["spec"]["template"]["spec"]["containers"]
    assert runner["image"] == cluster["spec"]["worker"]["spec"]["containers"][0]["image"]
    assert runner["args"][:2] == ["tablegen", "run"]
    args = tablegen_parser().parse_args(runner["args"][1:])
    assert args.scheduler_address == f"tcp://{cluster['metadata']['name']}-scheduler:8786"
    assert "://" in args.store  # an fsspec URL every pod can reach
    assert load_config(ROOT / args.config).name == "paper"  # the config exists in the image's WORKDIR


def test_readme_documents_every_launcher_option_and_the_scheduler_commands():
    readme = (JOBS / "README.md").read_text()
    for module in (slurm, pbs):
        for action in module.build_parser()._actions:
            for option in action.option_strings:
                if option.startswith("--") and option not in ("--help", "--verbose"):
                    assert option in readme, option
    assert "tablegen run CONFIG --scheduler-address tcp://HOST:8786" in readme
    assert "tablegen run CONFIG --scheduler-file" in readme
