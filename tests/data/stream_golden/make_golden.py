"""Write ``expected.json``: kernel outputs and cell values of a small and two large cells, as the code
of 2026-11-25 (commit da7a20e, before the kernels' bookkeeping and rejection handling were reworked)
computed them.  ``tests/compute/test_stream_golden.py`` checks that today's code gives the same bits.

Command (from the repository root)::

    .venv/bin/python tests/data/stream_golden/make_golden.py

Floats are written with ``float.hex`` (exact); a kernel output block is written as the SHA-256 of its
float64 bytes (C order) beside its first row.
"""

import hashlib
import json
import pathlib

import numpy as np

from tablegen.compute.cell import simulate_cell_values
from tablegen.compute.mc import KernelLayout, cell_key, score_replicates
from tablegen.compute.metrics import DEFAULT_METRICS, metric_entries
from tablegen.compute.validation import validate_simulate_cell_args

#: (P, N, R, seed, block_size) of each case: a small cell, a skewed one, two large ones
CASES = [(20, 20, 20_000, 3, 4096), (20, 1000, 5_000, 4, 1024), (50_000, 50_000, 192, 5, 64),
         (100_000, 100_000, 130, 6, 128)]
METRICS = [*DEFAULT_METRICS, "best_mcc", "tp_at_100"]
PLACE = pathlib.Path(__file__).resolve().parent / "expected.json"


def hexes(array) -> list[str]:
    return [float(v).hex() for v in np.asarray(array, dtype=np.float64).ravel()]


def case(P, N, R, seed, block_size) -> dict:
    entries = metric_entries(METRICS)
    layout = KernelLayout.for_metrics(entries, P, N)
    out = score_replicates(P, N, cell_key(seed, P, N), 0, R, layout)
    args = validate_simulate_cell_args(P, N, R, seed, METRICS, [1, 3], [0.1, 0.25], [0.01, 0.1], block_size)
    values = simulate_cell_values(args, exact=False)
    return {"P": P, "N": N, "R": R, "seed": seed, "block_size": block_size, "metrics": METRICS,
            "Cs": [1, 3], "alphas": [0.1, 0.25], "tail_probabilities": [0.01, 0.1],
            "kernel_sha256": hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest(),
            "kernel_first_row": hexes(out[0]),
            "critical_value": hexes(values.critical_value), "ci_low": hexes(values.ci_low),
            "ci_high": hexes(values.ci_high), "tail_quantile": hexes(values.tail_quantile)}


if __name__ == "__main__":
    PLACE.write_text(json.dumps([case(*c) for c in CASES], indent=1) + "\n")
