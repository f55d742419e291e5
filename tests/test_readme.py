"""The README's code blocks run as written: Python blocks are executed, shell commands go through the CLI.

Only the two set-up commands of §1 are not run here: `.ci/run` *is* the test command, and the main
job is checked by hand in a fresh clone (see the README).  The test names them, so a new shell
block cannot slip through unrun.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from tablegen.cli import main
from tablegen.config import config_from_mapping

README = Path(__file__).resolve().parents[1] / "README.md"
SET_UP_COMMANDS = {
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/tablegen run configs/laptop.yaml",
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest",
}


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


@pytest.mark.parametrize("command", [c for c in shell_commands() if c not in SET_UP_COMMANDS])
def test_shell_command_runs(command, tmp_path, monkeypatch, capsys):
    argv = shlex.split(command)
    assert argv[0] == "tablegen", f"README shell command this test does not know how to run: {command}"
    assert argv[1] != "run", "a README `tablegen run` would need a store: run it on configs/smoke.yaml"
    monkeypatch.chdir(tmp_path)
    assert main(argv[1:]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip()


def test_config_reference_block_is_a_valid_config():
    (block,) = blocks("yaml")
    config = config_from_mapping(yaml.safe_load(block))
    assert config.replicates == 100_000 and config.chunks == (1, 19)
