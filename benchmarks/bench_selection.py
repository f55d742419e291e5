"""What the selection-aware max-T test costs: ns per (model, item, permutation), against vectorised numpy.

Times :func:`tablegen.compare.selection.engine.null_counts` (the permutation kernel: every model scored on
each random label arrangement, maxima and step-down counts kept) at 100 models x 10,000 items x R = 10,000
(the target: at most 20 s on one core), and side by side, in the same process, a vectorised numpy
implementation of the same AUC null (labels permuted R times, each model's U from its ranks by one
matrix product, then the maximum), at a smaller R that numpy can hold in memory.  Both report CPU
seconds and ns per (model, item, permutation); the ratio is numpy's over the kernel's.  The two are
checked to agree on the maxima of the first arrangements (the same AUC, to 1e-12) before timing.

    .venv/bin/python benchmarks/bench_selection.py            # 100 x 10,000 x 10,000 (about a minute)
    .venv/bin/python benchmarks/bench_selection.py --quick    # 20 x 2,000 x 2,000
    .venv/bin/python benchmarks/bench_selection.py --device cuda   # the CUDA twin (wall time), after a
                                                                   # bit-identity check against the CPU kernel
"""

import os

for _variable in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from machine import cpu_model, record, vector_width  # noqa: E402

from tablegen.compare.selection.engine import models_sorted, null_counts  # noqa: E402
from tablegen.compute.kernels.ranking import mcc_weights  # noqa: E402

#: The metrics timed, by kernel column: AUC reads the doubled midranks in item order; best F1 and average
#: precision (the slowest) walk each model's sorted items, as every other metric does.
COLUMNS = {"auc": 0, "best_f1": 2, "average_precision": 4}


def kernel_seconds(scores: np.ndarray, P: int, R: int, repeats: int, column: int = 0, device: str = "cpu") -> float:
    """Best seconds of the max-T null through the kernel, over ``repeats`` runs (CPU time; wall time on a GPU)."""
    sorted_models = models_sorted(scores)
    K, n = scores.shape
    args = (sorted_models, P, column, 0, mcc_weights(P, n - P, n + 1), np.full(K, 0.99), np.arange(K))
    key = (np.uint64(1), np.uint64(2))
    null_counts(*args, exact=False, R=min(R, 64), key=key, device=device)  # compile
    clock = time.process_time if device == "cpu" else time.perf_counter
    best = np.inf
    for _ in range(repeats):
        start = clock()
        null_counts(*args, exact=False, R=R, key=key, device=device)
        best = min(best, clock() - start)
    return best


def check_device(scores: np.ndarray) -> None:
    """The GPU's maxima and hit counts equal the CPU kernel's, bit for bit, for every metric column."""
    simulator = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"  # Python speed: a smaller check
    n, p = (40, 20) if simulator else (400, 200)
    sorted_models = models_sorted(np.round(scores[:5, :n], 1))  # some ties
    for column in range(7):
        args = (sorted_models, p, column, 50, mcc_weights(p, n - p, n + 1), np.full(5, 0.6), np.arange(5))
        cpu, gpu = (null_counts(*args, exact=False, R=200 if simulator else 2000, key=(np.uint64(3), np.uint64(4)),
                                device=device) for device in ("cpu", "cuda"))
        assert np.array_equal(cpu.maxima, gpu.maxima) and np.array_equal(cpu.step_hits, gpu.step_hits), column


def numpy_maxima(ranks: np.ndarray, P: int, R: int, rng) -> np.ndarray:
    """Max over models of AUC on R random label arrangements, vectorised: U = sum of positives' ranks - P(P+1)/2."""
    K, n = ranks.shape
    labels = np.zeros((R, n))
    positives = np.argsort(rng.random((R, n)), axis=1)[:, :P]
    np.put_along_axis(labels, positives, 1.0, axis=1)
    u = labels @ ranks.T - P * (P + 1) / 2  # (R, K)
    return (u / (P * (n - P))).max(axis=1)


def numpy_seconds(ranks: np.ndarray, P: int, R: int, repeats: int) -> float:
    best = np.inf
    for _ in range(repeats):
        rng = np.random.default_rng(0)
        start = time.process_time()
        numpy_maxima(ranks, P, R, rng)
        best = min(best, time.process_time() - start)
    return best


def check_agreement(scores: np.ndarray, ranks: np.ndarray, P: int) -> None:
    """The kernel's and numpy's AUC agree on the same arrangements (the identity and its reverse)."""
    from tablegen.compute.kernels.permutation import score_model

    sorted_models = models_sorted(scores)
    n = scores.shape[1]
    for labels in (np.r_[np.ones(P), np.zeros(n - P)], np.r_[np.zeros(n - P), np.ones(P)]):
        kernel = max(score_model(labels.astype(np.uint8), sorted_models.orders[m], sorted_models.group_ends[m], P, 0,
                                 0, np.zeros(1)) for m in range(scores.shape[0]))
        vectorised = float(((labels @ ranks.T - P * (P + 1) / 2) / (P * (n - P))).max())
        assert abs(kernel - vectorised) < 1e-12, (kernel, vectorised)


def main() -> None:
    printed = []

    def out(line):
        print(line)
        printed.append(line)

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="20 models x 2,000 items x R = 2,000")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = parser.parse_args()
    K, n, R = (20, 2000, 2000) if args.quick else (100, 10_000, 10_000)
    R_numpy = min(R, 500)
    P = n // 2
    rng = np.random.default_rng(20261125)
    base = rng.normal(size=n)
    scores = base + 0.5 * rng.normal(size=(K, n))  # correlated, untied models
    ranks = (np.argsort(np.argsort(scores, axis=1), axis=1) + 1).astype(float)
    check_agreement(scores, ranks, P)
    if args.device == "cuda":
        check_device(scores)
        out(f"# {datetime.date.today()}  CUDA twin: bit-identical to the CPU kernel (7 metrics, 2,000 replicates "
              "of 5 models x 400 items)")
        for metric, column in COLUMNS.items():
            seconds = kernel_seconds(scores, P, R, args.repeats, column, device="cuda")
            out(f"{metric:8} cuda   R = {R:>6,}: {seconds:8.2f} s wall  {seconds / (K * n * R) * 1e12:8.1f} ps per "
                "(model, item, permutation)")
        if not args.quick:
            record("selection_cuda", ".venv/bin/python benchmarks/bench_selection.py --device cuda", printed)
        return
    out(f"# {datetime.date.today()}  {cpu_model()}  ({vector_width()}), one core, CPU time, best of {args.repeats}")
    out(f"# K = {K} models, n = {n:,} items (P = {P:,})")
    steps = K * n * R
    for metric, column in COLUMNS.items():
        kernel = kernel_seconds(scores, P, R, args.repeats, column)
        out(f"{metric:17} kernel R = {R:>6,}: {kernel:8.2f} s  {kernel / steps * 1e9:6.3f} ns per "
            "(model, item, permutation)")
    small = kernel_seconds(scores, P, R_numpy, args.repeats)
    vectorised = numpy_seconds(ranks, P, R_numpy, args.repeats)
    out(f"auc      kernel R = {R_numpy:>6,}: {small:8.2f} s  {small / (K * n * R_numpy) * 1e9:6.3f} ns")
    out(f"auc      numpy  R = {R_numpy:>6,}: {vectorised:8.2f} s  {vectorised / (K * n * R_numpy) * 1e9:6.3f} ns  "
        f"(ratio numpy / kernel {vectorised / small:.1f})")
    if not args.quick:
        record("selection", f".venv/bin/python benchmarks/bench_selection.py --repeats {args.repeats}", printed)


if __name__ == "__main__":
    main()
