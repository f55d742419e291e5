"""What the Bayesian signed-rank and sign tests cost: 200,000 posterior draws for 54 data sets.

    .venv/bin/python benchmarks/bench_bayesian_pair.py

One thread, best of 3, CPU time (time.process_time) beside wall time.  Data: columns C1 and C2 of the
Table 2 accuracies (Benavoli, Corani & Mangili 2016), rope 1 (one point of accuracy).  The target is well
under a second per call; the split shows the Dirichlet weights (Gamma and exponential draws) and the
O(n)-per-draw Walsh sums separately.  For scale, baycomp 1.0.3's SignedRankTest loops over the draws with a
dense (n + 1) × (n + 1) product each (not timed here: it is not installed with the project).
"""

import os

for _variable in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import datetime  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from machine import cpu_model, load_average, record, vector_width  # noqa: E402

from tablegen.compare import bayesian_pair  # noqa: E402
from tablegen.compare.datasets import dirichlet  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "benavoli2016_table2_accuracies.csv"
SAMPLES = 200_000


def best_of(repeats, function):
    """(CPU seconds, wall seconds) of the fastest of ``repeats`` calls."""
    best = (np.inf, np.inf)
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        function()
        best = min(best, (time.process_time() - cpu, time.perf_counter() - wall))
    return best


def main() -> None:
    printed = []

    def out(line):
        print(line)
        printed.append(line)

    load = load_average()
    X = np.loadtxt(DATA, delimiter=",", comments="#", skiprows=5, usecols=range(1, 8))
    x, y = X[:, 0], X[:, 1]
    out(f"# {datetime.date.today()}  {cpu_model()}  ({vector_width()}), one thread, best of 3, "
        f"{SAMPLES:,} draws, n = {x.size} data sets")
    for test in ("signed_rank", "sign"):
        cpu, wall = best_of(3, lambda: bayesian_pair(x, y, test=test, rope=1.0, samples=SAMPLES))
        out(f"bayesian_pair, {test}: CPU {cpu:.3f} s, wall {wall:.3f} s")
    rng = np.random.default_rng(1)
    cpu, wall = best_of(3, lambda: dirichlet.weights(x.size, 0.5, SAMPLES, rng))
    out(f"  of which the Dirichlet weights: CPU {cpu:.3f} s, wall {wall:.3f} s")
    w = dirichlet.weights(x.size, 0.5, SAMPLES, rng)
    cpu, wall = best_of(3, lambda: dirichlet.theta_draws(x - y, "signed_rank", 1.0, w))
    out(f"  of which the signed-rank Walsh sums: CPU {cpu:.3f} s, wall {wall:.3f} s")
    record("bayesian_pair", ".venv/bin/python benchmarks/bench_bayesian_pair.py", printed, load_at_start=load)


if __name__ == "__main__":
    main()
