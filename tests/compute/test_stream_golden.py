"""Kernel outputs and cell values equal, bit for bit, those stored from an earlier version of the engine.

The stored values (``tests/data/stream_golden/expected.json``, written by ``make_golden.py`` beside it
before the lane kernel's rejection handling and the tails' bookkeeping were reworked) cover a small
cell, a skewed one (minority-class kernel) and two large cells where many rankings meet a 32-bit
draw that Lemire's method rejects.
"""

import hashlib
import json
import pathlib

import numpy as np
import pytest

from tablegen.compute.cell import simulate_cell_values
from tablegen.compute.mc import KernelLayout, cell_key, score_replicates
from tablegen.compute.metrics import metric_entries
from tablegen.compute.validation import validate_simulate_cell_args

CASES = json.loads((pathlib.Path(__file__).parents[1] / "data" / "stream_golden" / "expected.json").read_text())


def _floats(hexes, shape):
    return np.array([float.fromhex(h) for h in hexes]).reshape(shape)


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case['P']}x{case['N']}")
def test_kernel_output_and_cell_values_equal_the_stored_ones(case):
    P, N, R, seed = case["P"], case["N"], case["R"], case["seed"]
    layout = KernelLayout.for_metrics(metric_entries(case["metrics"]), P, N)
    out = score_replicates(P, N, cell_key(seed, P, N), 0, R, layout)
    assert [v.hex() for v in out[0]] == case["kernel_first_row"]
    assert hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest() == case["kernel_sha256"]
    args = validate_simulate_cell_args(P, N, R, seed, case["metrics"], case["Cs"], case["alphas"],
                                       case["tail_probabilities"], case["block_size"])
    values = simulate_cell_values(args, exact=False)
    for name in ("critical_value", "ci_low", "ci_high", "tail_quantile"):
        got = getattr(values, name)
        assert got.tobytes() == _floats(case[name], got.shape).tobytes(), name
