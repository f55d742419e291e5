"""GPU Monte Carlo: ps per element-step of the CUDA kernels, the CPU kernel beside it, end-to-end cells.

For each cell (default (100, 100), (20, 1000), (1000, 1000), (10, 10000)) it reports, in one run:

* GPU kernel time per element-step (one position of one ranking, every metric), in picoseconds:
  the scoring kernel alone over ``--replicates`` rankings in launches of
  :data:`tablegen.compute.kernels.cuda.driver.DEVICE_BLOCK_SIZE`, synchronised, best of ``--repeats``.
  Minority-class cells (Floyd sampling, cost ~ min(P, N)) are still divided by R (P + N), so the
  figure is comparable with the lane cells' and with the CPU's;
* the CPU kernel (:func:`tablegen.compute.mc.score_replicates`: lane or minority kernel, one core) in
  nanoseconds per element-step on ``--cpu-replicates`` rankings;
* end-to-end seconds of ``simulate_cell(P, N, R, device="cuda", exact=False)`` (kernel, device-side
  tail filtering, host merge, finalisation) at R = ``--replicates``;
* bit identity: every score of ``--check-replicates`` rankings from the GPU equals the CPU kernel's,
  and the finalised cell at R = ``--check-replicates`` equals the CPU path's, byte for byte.

Without a GPU it refuses (exit status 2).  ``--simulator`` runs the same code in numba-cuda's
simulator on tiny cells and R (the timings then mean nothing; the checks do), which is how
``tests/compute/test_cuda_sim.py`` keeps this script from rotting.

    .venv/bin/python benchmarks/bench_cuda.py                       # on a GPU machine
    .venv/bin/python benchmarks/bench_cuda.py --simulator           # anywhere with numba-cuda
"""

import argparse
import os
import platform
import shlex
import sys
import time

from machine import vector_width

CELLS = ((100, 100), (20, 1000), (1000, 1000), (10, 10_000))
SIMULATOR_CELLS = ((6, 9), (2, 300))


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=None, help="cells as PxN (default: the four above)")
    parser.add_argument("--replicates", type=int, default=10_000_000, help="R for timings (default 1e7)")
    parser.add_argument("--check-replicates", type=int, default=1_000_000, help="R for bit identity (default 1e6)")
    parser.add_argument("--cpu-replicates", type=int, default=200_000, help="R for the CPU kernel timing")
    parser.add_argument("--repeats", type=int, default=3, help="timed kernel runs, best kept")
    parser.add_argument("--seed", type=int, default=2005)
    parser.add_argument("--simulator", action="store_true",
                        help="numba-cuda's simulator, tiny cells and R: exercises the checks, not the speed")
    args = parser.parse_args(argv)
    if args.simulator:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # before numba.cuda is imported
        args.replicates = args.check_replicates = args.cpu_replicates = 200  # C = 10 at alpha = 0.05 needs 196
        args.repeats = 1
    args.alphas = (0.05,) if args.simulator else (0.01,)
    cells = SIMULATOR_CELLS if args.simulator and args.cells is None else CELLS if args.cells is None else [
        tuple(int(v) for v in cell.lower().split("x")) for cell in args.cells]
    return args, cells


def best_seconds(function, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def gpu_kernel_seconds(P, N, key, layout, R, repeats):
    from numba import cuda

    from tablegen.compute.kernels.cuda.driver import DEVICE_BLOCK_SIZE, CudaCell

    block = min(DEVICE_BLOCK_SIZE, R)
    cell = CudaCell(P, N, key, layout.ks, block)
    cell.launch(0, block)  # compile
    cuda.synchronize()

    def run():
        for first in range(0, R, block):
            cell.launch(first, min(block, R - first))
        cuda.synchronize()
    return best_seconds(run, repeats)


def bit_identical(P, N, key, layout, R, seed, alphas):
    """Every score of R rankings, then the finalised cell, GPU against CPU (bytes)."""
    import numpy as np

    from tablegen import simulate_cell
    from tablegen.compute.kernels.cuda.driver import DEVICE_BLOCK_SIZE, CudaCell
    from tablegen.compute.mc import score_replicates

    block = min(DEVICE_BLOCK_SIZE, R)
    cell = CudaCell(P, N, key, layout.ks, block)
    for first in range(0, R, block):
        count = min(block, R - first)
        if cell.scores(first, count).tobytes() != score_replicates(P, N, key, first, count, layout).tobytes():
            return False
    options = dict(Cs=(10, 100, 1000), alphas=alphas, exact=False)
    if R < 367_041:  # the C = 1000 interval needs this many; fewer replicates, fewer questions
        options["Cs"] = (10,)
    gpu, cpu = (simulate_cell(P, N, R, seed, device=device, **options) for device in ("cuda", "cpu"))
    return all(np.asarray(gpu[v]).tobytes() == np.asarray(cpu[v]).tobytes() for v in cpu.data_vars)


def main(argv=None):
    args, cells = parse_args(sys.argv[1:] if argv is None else argv)
    if args.simulator:
        import warnings

        warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)
    from tablegen.compute.kernels.cuda.device import resolve_device
    from tablegen.errors import TablegenInputError

    try:
        resolve_device("cuda")
    except TablegenInputError as error:
        print(f"bench_cuda.py needs a CUDA GPU (or --simulator): {error}", file=sys.stderr)
        return 2
    from numba import cuda

    from tablegen import simulate_cell
    from tablegen.compute.mc import KernelLayout, cell_key, score_replicates
    from tablegen.compute.metrics import DEFAULT_METRICS, metric_entries

    name = "numba-cuda simulator" if args.simulator else cuda.get_current_device().name
    device_name = name.decode() if isinstance(name, bytes) else name
    print(f"# CUDA kernels: {device_name}; CPU {platform.processor() or platform.machine()} "
          f"({vector_width()}, one core)\n")
    print(f"command: `{shlex.join(['python', 'benchmarks/bench_cuda.py', *sys.argv[1:]])}`\n")
    print("| P | N | GPU ps / element-step | CPU ns / element-step | end to end s (R = "
          f"{args.replicates:,}) | bit-identical (R = {args.check_replicates:,}) |")
    print("|---|---|---|---|---|---|")
    all_identical = True
    for P, N in cells:
        key, layout = cell_key(args.seed, P, N), KernelLayout.for_metrics(metric_entries(list(DEFAULT_METRICS)), P, N)
        steps = args.replicates * (P + N)
        gpu = gpu_kernel_seconds(P, N, key, layout, args.replicates, args.repeats)
        score_replicates(P, N, key, 0, 8, layout)  # compile
        cpu = best_seconds(lambda: score_replicates(P, N, key, 0, args.cpu_replicates, layout), args.repeats)
        start = time.perf_counter()
        simulate_cell(P, N, args.replicates, args.seed, Cs=(10,), alphas=args.alphas, exact=False, device="cuda")
        end_to_end = time.perf_counter() - start
        identical = bit_identical(P, N, key, layout, args.check_replicates, args.seed, args.alphas)
        all_identical &= identical
        print(f"| {P} | {N} | {gpu / steps * 1e12:.2f} | {cpu / (args.cpu_replicates * (P + N)) * 1e9:.3f} | "
              f"{end_to_end:.3f} | {'yes' if identical else 'NO'} |", flush=True)
    print(f"\nbit-identical: {'yes' if all_identical else 'NO, see the table'}")
    return 0 if all_identical else 1


if __name__ == "__main__":
    sys.exit(main())
