"""The README's code blocks run as written: Python blocks are executed, every shell command is run.

How each shell command runs:

- ``tablegen ...`` lookups and reports: in-process through the CLI's ``main``.
- ``tablegen run CONFIG --scheduler-address tcp://HOST:8786 --store /shared/...`` (§5): against a
  real Dask scheduler started here, with ``/shared`` a temporary directory and the config replaced by
  ``configs/smoke.yaml`` (seconds, where the README's config takes hours).
- ``python jobs/slurm.py|pbs.py ... --print-job-script`` (§5): the launcher as a subprocess; it prints
  the batch script and submits nothing.
- ``kubectl apply -f MANIFEST`` (§5): there is no Kubernetes cluster here, so the manifest is parsed
  and each document must name its ``apiVersion`` and ``kind`` (what ``kubectl --dry-run=client``
  checks first).
- The main-job set-up command of §1: as written, with bash, in a fresh copy of the repository in a
  temporary directory (marked ``slow``: it builds a virtual environment and runs the job).
- The test command of §1 is not run from inside the test suite it starts: it is exactly what
  ``.ci/run`` runs, so CI executes it.

The test names the commands it treats specially, so a new shell block cannot slip through unrun.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tablegen.cli.main import main
from tablegen.store.zarr_store import open_store
from tablegen.batch.config import config_from_mapping

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAIN_JOB_COMMAND = ("python3 -m venv .venv && .venv/bin/pip install -q -e . && "
                    ".venv/bin/tablegen run configs/laptop.yaml")
TEST_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest"
SET_UP_COMMANDS = {MAIN_JOB_COMMAND, TEST_COMMAND}


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README.read_text(), flags=re.S | re.M)


def shell_commands() -> list[str]:
    commands = []
    for block in blocks("bash"):
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            if command:
                commands.append(command)
    return commands


def test_readme_has_the_blocks_this_test_expects():
    assert len(blocks("python")) >= 1 and len(blocks("yaml")) == 1
    assert SET_UP_COMMANDS <= set(shell_commands())


@pytest.mark.parametrize("code", blocks("python"))
def test_python_block_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})


def is_scheduler_run(command: str) -> bool:
    return command.startswith("tablegen run ") and "--scheduler-address tcp://HOST:8786" in command


def is_launcher(command: str) -> bool:
    return command.startswith(("python jobs/slurm.py ", "python jobs/pbs.py ")) and "--print-job-script" in command


def is_kubectl_apply(command: str) -> bool:
    return command.startswith("kubectl apply -f ")


SPECIAL = (is_scheduler_run, is_launcher, is_kubectl_apply)
CLI_COMMANDS = [c for c in shell_commands() if c not in SET_UP_COMMANDS and not any(f(c) for f in SPECIAL)]


def test_every_shell_command_has_a_runner():
    commands = shell_commands()
    runners = {c: [f.__name__ for f in SPECIAL if f(c)] for c in commands}
    assert all(len(names) <= 1 for names in runners.values()), runners
    assert all(c.startswith("tablegen ") for c in CLI_COMMANDS), CLI_COMMANDS
    # §5 shows each kind of cluster
    assert sum(map(is_scheduler_run, commands)) >= 1 and sum(map(is_launcher, commands)) == 2
    assert sum(map(is_kubectl_apply, commands)) == 2


@pytest.mark.parametrize("command", CLI_COMMANDS)
def test_shell_command_runs(command, tmp_path, monkeypatch, capsys):
    argv = shlex.split(command)
    assert argv[1] != "run", "a README `tablegen run` would need a store: run it on configs/smoke.yaml"
    monkeypatch.chdir(tmp_path)
    assert main(argv[1:]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip()


@pytest.mark.slow  # a dask cluster of its own: the fast loop leaves it to CI
@pytest.mark.parametrize("command", [c for c in shell_commands() if is_scheduler_run(c)])
def test_run_against_an_existing_scheduler(command, tmp_path, monkeypatch, capsys):
    from distributed import LocalCluster

    argv = shlex.split(command.replace("/shared/", f"{tmp_path}/"))
    argv[2] = str(ROOT / "configs" / "smoke.yaml")
    store = argv[argv.index("--store") + 1]
    monkeypatch.chdir(tmp_path)
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=":0") as cluster:
        argv[argv.index("tcp://HOST:8786")] = cluster.scheduler_address
        assert main(argv[1:]) == 0, capsys.readouterr().err
    assert open_store(store).attrs["complete"] is True


@pytest.mark.parametrize("command", [c for c in shell_commands() if is_launcher(c)])
def test_launcher_prints_its_batch_script(command, tmp_path):
    argv = shlex.split(command.replace("/shared/", f"{tmp_path}/"))
    result = subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    directive = "#SBATCH" if "slurm" in argv[1] else "#PBS"
    assert directive in result.stdout and "distributed.cli.dask_worker" in result.stdout, result.stdout
    assert "--nthreads 1 " in result.stdout and "--nworkers 8 " in result.stdout, result.stdout
    assert not Path(argv[argv.index("--store") + 1]).exists()  # printing the script writes nothing


@pytest.mark.parametrize("command", [c for c in shell_commands() if is_kubectl_apply(c)])
def test_kubernetes_manifest_parses(command):
    manifest = ROOT / shlex.split(command)[3]
    documents = [d for d in yaml.safe_load_all(manifest.read_text()) if d is not None]
    assert documents and all(d.get("apiVersion") and d.get("kind") for d in documents), manifest


@pytest.mark.slow
def test_main_job_command_in_a_fresh_copy(tmp_path):
    """§1's main-job command, as written, in a copy of the repository's tracked files."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    copy = tmp_path / "tablegen"
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    result = subprocess.run(["bash", "-c", MAIN_JOB_COMMAND], cwd=copy, capture_output=True, text=True,
                            timeout=1800)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "361 done" in result.stdout + result.stderr or "361/361" in result.stdout + result.stderr
    assert open_store(str(copy / "laptop.zarr")).attrs["complete"] is True


def test_config_reference_block_is_a_valid_config():
    (block,) = blocks("yaml")
    config = config_from_mapping(yaml.safe_load(block))
    assert config.replicates == 100_000 and config.chunks == (1, 19)
