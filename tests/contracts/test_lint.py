"""The code passes the project's ruff configuration (pyproject.toml [tool.ruff])."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_passes_on_the_whole_tree():
    if shutil.which("ruff", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("ruff is not installed in this environment (pip install -e '.[test]' installs it)")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", str(ROOT)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
