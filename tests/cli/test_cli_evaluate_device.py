"""``tablegen evaluate --device``: where the report's Monte Carlo runs; the same report on either device.

Without a GPU, ``--device cuda`` exits 2 naming the option (two classes and K classes alike); under numba-cuda's
simulator (a child process, ``NUMBA_ENABLE_CUDASIM=1``) ``--device cuda`` prints the ``--device cpu`` report.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tablegen.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A two-class file (tied scores, 30 items: the max-T and swap tests simulate) and a three-class one."""
    rng = np.random.default_rng(8)
    folder = tmp_path_factory.mktemp("device")
    y = np.r_[np.ones(12, int), np.zeros(18, int)]
    a, b = np.round(y + rng.normal(size=30), 1), np.round(0.5 * y + rng.normal(size=30), 1)
    binary = folder / "binary.csv"
    binary.write_text("label,a,b\n" + "".join(f"{t},{float(u)!r},{float(v)!r}\n" for t, u, v in zip(y, a, b)))
    labels = np.arange(30) % 3
    p = np.where(rng.random(30) < 0.6, labels, rng.integers(0, 3, 30))
    q = np.where(rng.random(30) < 0.4, labels, rng.integers(0, 3, 30))
    multiclass = folder / "multiclass.csv"
    multiclass.write_text("label,p,q\n" + "".join(f"c{t},c{u},c{v}\n" for t, u, v in zip(labels, p, q)))
    return binary, multiclass


@pytest.mark.parametrize("which", [0, 1])
def test_cuda_without_a_gpu_exits_2_naming_the_option(files, capsys, monkeypatch, which):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # hides any GPU
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
    assert main(["evaluate", str(files[which]), "--device", "cuda", "--metrics",
                 "auc" if which == 0 else "accuracy"]) == 2
    err = capsys.readouterr().err
    assert "--device cuda" in err and "device='cuda'" not in err, err


def test_an_unknown_device_is_refused_by_the_parser(files, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", str(files[0]), "--device", "gpu"])
    assert exit_.value.code == 2 and "--device" in capsys.readouterr().err


def test_device_cpu_is_the_default_report(files, capsys):
    main(["evaluate", str(files[0]), "--metrics", "auc", "--json"])
    default = capsys.readouterr().out
    main(["evaluate", str(files[0]), "--metrics", "auc", "--json", "--device", "cpu"])
    assert capsys.readouterr().out == default


@pytest.mark.slow
@pytest.mark.parametrize("which", [0, 1])
def test_cuda_in_the_simulator_prints_the_cpu_report(files, capsys, which):
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: tablegen evaluate --device cuda is NOT tested")
    argv = ["evaluate", str(files[which]), "--metrics", *(["best_f1"] if which == 0 else ["macro_f1"]), "--R", "200",
            "--json"]
    done = subprocess.run([sys.executable, "-m", "tablegen", *argv, "--device", "cuda"], capture_output=True,
                          text=True, cwd=ROOT, env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert done.returncode == 0, done.stderr[-4000:]
    assert main(argv) == 0
    assert done.stdout == capsys.readouterr().out
