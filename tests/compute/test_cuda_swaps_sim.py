"""The numba-cuda twin of the swap-permutation kernel, run in numba-cuda's simulator, against the CPU kernel.

As in ``tests/compute/test_cuda_sim.py``: the simulator is chosen when ``numba.cuda`` is first imported, so the
CUDA side runs in a child process started with ``NUMBA_ENABLE_CUDASIM=1`` (this file is also that child's
script: ``python tests/compute/test_cuda_swaps_sim.py OUT.npz``); the CPU side runs here.  Without numba-cuda
the test is skipped with a reason that names the missing package.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve()
#: (items, score levels (ties where small), exact, first pattern, patterns, patterns a launch).
CASES = [(6, 1.0, True, 0, 64, 64), (13, 0.5, False, 1000, 40, 7), (70, 2.0, False, 3, 24, 24),
         (70, 1e6, False, 0, 16, 16)]
COLUMNS = np.arange(6, dtype=np.int64)  # every metric the swap test serves
KEY = (np.uint64(0x1234_5678_9ABC_DEF0), np.uint64(0x0FED_CBA9_8765_4321))


def _case(n, levels):
    from scipy.stats import rankdata

    rng = np.random.default_rng(n)
    y = (rng.random(n) < 0.4).astype(np.uint8)
    y[0], y[-1] = 1, 0
    a, b = np.round((y + rng.normal(size=n)) * levels), np.round((0.5 * y + rng.normal(size=n)) * levels)
    b[: n // 5] = a[: n // 5]
    return y, rankdata(a) / n, rankdata(b) / n


def _differences(device: str) -> dict:
    from tablegen.compute.kernels.ranking import mcc_weights
    from tablegen.compute.kernels.swaps import swap_differences, swap_order

    results = {}
    for n, levels, exact, first, count, threads in CASES:
        y, ra, rb = _case(n, levels)
        P = int(y.sum())
        args = (*swap_order(ra, rb), y, P, COLUMNS, 0, mcc_weights(P, n - P, n + 1), exact, KEY[0], KEY[1], first)
        out = np.empty((COLUMNS.size, count))
        if device == "cuda":
            from tablegen.compute.kernels.cuda.swaps import swap_differences_cuda

            swap_differences_cuda(*args, out, threads=threads)  # several launches where threads < count
        else:
            swap_differences(*args, out)
        results[f"swaps_{n}_{levels}"] = out
    return results


@pytest.mark.slow  # 2.4-4.9 s: in the full suite, out of the fast loop (<= 2 min)
def test_the_cuda_swap_kernel_gives_the_cpu_kernels_differences_bit_for_bit(tmp_path):
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: the CUDA swap kernel is NOT tested (pip install -e '.[test]')")
    out = tmp_path / "swaps.npz"
    done = subprocess.run([sys.executable, str(HERE), str(out)], env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"},
                          capture_output=True, text=True, cwd=HERE.parents[2])
    assert done.returncode == 0, done.stderr[-4000:]
    with np.load(out) as data:
        sim = dict(data)
    cpu = _differences("cpu")
    assert sim.keys() == cpu.keys()
    for name, expected in cpu.items():
        assert np.array_equal(sim[name], expected), name
        assert np.unique(expected[2]).size > 3, name  # the patterns differ: a real comparison


if __name__ == "__main__":  # the child: the CUDA twin in the simulator
    import warnings

    warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)  # numpy uint64 scalars wrap
    np.savez(sys.argv[1], **_differences("cuda"))
