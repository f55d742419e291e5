"""Single-core throughput of the Monte Carlo kernel against a vectorised numpy baseline.

Both implementations do the same work: sample uniformly random rankings of P positives and
N negatives and score every metric of :data:`tablegen.compute.metrics.DEFAULT_METRICS` on each (all
P + N + 1 thresholds).  The unit reported is nanoseconds per element-step: the time for one
position of one ranking, sampling and all metrics included, i.e. the run time divided by
``replicates * (P + N)``.

* numba: :func:`tablegen.compute.mc.score_replicates`, the production path, in blocks of
  :data:`tablegen.compute.mc.DEFAULT_BLOCK_SIZE` rankings, compiled before timing.  It sends skewed cells
  to the minority-class kernel (cost ~ min(P, N), :mod:`tablegen.compute.kernels.minority`) and the others
  to the lane kernel; the report names the kernel and also times the lane kernel alone, so the
  minority kernel's gain is measured side by side (and the crossover rule can be checked).
* numpy (batched): uniform keys from ``Generator.random((B, P+N))``, ``argsort`` along each row
  (the positives are items ``0 .. P-1``), then prefix counts by ``cumsum`` and every metric from
  them, in batches of about :data:`BATCH_ELEMENTS` elements so the working set stays a few MB.
  This is the strongest numpy we could write.
* numpy (per ranking): the same code one ranking at a time, as a Python loop over R — the way the
  simulation is usually written (and the shape of the paper's own loop).  Timed on fewer rankings
  (``--loop-replicates``), since it is per element-step either way.

The numpy scorer is checked against the reference scorers of :mod:`tablegen.compute.metrics` on the same
rankings before anything is timed.  Each timing is the best of ``--repeats`` runs; the two
implementations alternate inside one loop (and swap order every repeat) so machine noise hits both.

Run ``python benchmarks/bench_kernel.py --help`` for the options.
"""

import os

# One thread everywhere, set before numpy and numba are imported.
for _variable in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
from machine import cpu_model, load_average, recording, shown_path, vector_width  # noqa: E402

from tablegen.compute.kernels.lanes import lane_output, simulate_rows  # noqa: E402
from tablegen.compute.kernels.minority import uses_minority_sampling  # noqa: E402
from tablegen.compute.kernels.ranking import BASE_COLUMNS  # noqa: E402
from tablegen.compute.mc import DEFAULT_BLOCK_SIZE, KernelLayout, block_scorer, cell_key  # noqa: E402
from tablegen.compute.metrics import DEFAULT_METRICS, get_metric, metric_entries  # noqa: E402

#: Cells timed when ``--cells`` is not given.
DEFAULT_CELLS = ((100, 100), (1000, 1000), (20, 1000), (70, 1000), (20, 400), (10, 10000))
#: Elements (rankings x positions) per numpy batch: 1 MB of float64 keys, a few MB in all.
BATCH_ELEMENTS = 1 << 17
#: Root seed of the numba cell keys and of the numpy generator.
SEED = 20050707
#: Small cells where the numpy scorer is checked against the reference scorers
#: (the second has P + N < 10, so tp_at_10 is clipped to P + N).
CHECK_CELLS = ((7, 13), (3, 4))
CHECK_REPLICATES = 2000


def parse_cell(text: str) -> tuple[int, int]:
    """Parse a cell written ``PxN`` (e.g. ``20x1000``).

    Parameters
    ----------
    text : str
        The cell as given on the command line.

    Returns
    -------
    tuple of int
        (P, N), both at least 1.
    """
    try:
        P, N = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"cell {text!r} is not of the form PxN, e.g. 20x1000") from None
    if P < 1 or N < 1:
        raise argparse.ArgumentTypeError(f"cell {text!r}: P and N must both be >= 1")
    return P, N


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser of this script."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=50_000,
                        help="rankings per cell in each timed run (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="timed runs per cell and implementation; the best is kept (default: %(default)s)")
    parser.add_argument("--loop-replicates", type=int, default=5_000,
                        help="rankings per cell in each timed run of the per-ranking numpy loop (default: %(default)s)")
    parser.add_argument("--cells", type=parse_cell, nargs="+", default=list(DEFAULT_CELLS), metavar="PxN",
                        help="cells to time (default: %(default)s)")
    parser.add_argument("--no-sizes", action="store_true",
                        help="skip the simulate_cell comparison of small, reference and large cells")
    return parser


def int_dtype(P: int, N: int) -> type:
    """Narrowest of int32/int64 holding every prefix quantity of a (P, N) ranking.

    Every intermediate (``2 TP_k``, ``TP_k (P + N)``, ``k P``, their differences) is below
    ``2 (P + N) max(P, N)``.
    """
    return np.int32 if 2 * (P + N) * max(P, N) < np.iinfo(np.int32).max else np.int64


class NumpyBaseline:
    """Vectorised numpy sampler and scorer of one cell, reusing its buffers from batch to batch.

    A batch of B rankings is sampled by sorting uniform keys: ``argsort`` of
    ``Generator.random((B, P+N))`` along each row, with items ``0 .. P-1`` the positives.  Every
    metric is then scored from the prefix counts TP_k = ``cumsum`` of the labels, k = 1 .. P+N;
    the threshold k = 0 (TP_0 = FP_0 = 0, where D = G = F1 = 0) is the ``initial=0`` of each
    maximum.  Besides ``argsort``'s result, all arrays are allocated once, so the timing measures
    the arithmetic rather than the allocator.

    Parameters
    ----------
    P, N : int
        Positives and negatives of the cell.
    ks : ndarray of int
        Cut-offs of the tp_at_k columns, each in 1 .. P + N (as in :class:`tablegen.compute.mc.KernelLayout`).
    rng : numpy.random.Generator
        Source of the keys.
    batch : int, optional
        Rankings per batch (default: about :data:`BATCH_ELEMENTS` elements per batch).

    Notes
    -----
    Scoring, with integer arithmetic wherever the kernel uses it:

    * U = sum over the negatives of the TP above them = sum_k TP_k - P (P + 1) / 2, because the
      positives see TP = 1, 2, ..., P at their own positions;
    * best accuracy from D = max_k (2 TP_k - k), best balanced accuracy from
      G = max_k (TP_k (P + N) - k P);
    * best F1 = 2 max_k TP_k / (P + k) (doubling is exact in floating point);
    * average precision = sum over the positives' positions of TP_k / k, divided by P.
    """

    def __init__(self, P: int, N: int, ks: np.ndarray, rng: np.random.Generator, batch: int | None = None):
        n = P + N
        self.P, self.N, self.ks, self.rng = P, N, np.asarray(ks, dtype=np.intp), rng
        self.batch = max(1, BATCH_ELEMENTS // n) if batch is None else batch
        dtype = int_dtype(P, N)
        self.k = np.arange(1, n + 1, dtype=dtype)
        self.k_times_p = self.k * P
        self.f1_denominator = self.k + P
        self.keys = np.empty((self.batch, n))
        self.labels = np.empty((self.batch, n), dtype=bool)
        self.tp = np.empty((self.batch, n), dtype=dtype)
        self.work = np.empty((self.batch, n), dtype=dtype)
        self.real = np.empty((self.batch, n))
        self.out = np.empty((self.batch, len(BASE_COLUMNS) + self.ks.size))

    def sample(self, count: int) -> np.ndarray:
        """Sample ``count`` (at most ``batch``) uniformly random rankings.

        Returns
        -------
        ndarray of bool, shape (count, P + N)
            True where the item at that position (top first) is a positive.  A view of an internal
            buffer, overwritten by the next call.
        """
        keys = self.rng.random(out=self.keys[:count])
        return np.less(np.argsort(keys, axis=1), self.P, out=self.labels[:count])

    def score(self, labels: np.ndarray) -> np.ndarray:
        """Score every ranking of a batch, in the column layout of the numba kernel.

        Parameters
        ----------
        labels : ndarray of bool, shape (count, P + N), count <= ``batch``
            One ranking per row, top first.

        Returns
        -------
        ndarray of float64, shape (count, 5 + len(ks))
            Columns :data:`tablegen.compute.kernels.ranking.BASE_COLUMNS`, then TP at each cut-off.  A view
            of an internal buffer, overwritten by the next call.
        """
        P, N = self.P, self.N
        count = labels.shape[0]
        tp = np.cumsum(labels, axis=1, dtype=self.tp.dtype, out=self.tp[:count])
        work, real, out = self.work[:count], self.real[:count], self.out[:count]

        u_pairs = tp.sum(axis=1, dtype=np.int64) - P * (P + 1) // 2
        out[:, 0] = u_pairs / (P * N)

        np.multiply(tp, 2, out=work)
        work -= self.k
        out[:, 1] = (work.max(axis=1, initial=0) + N) / (P + N)

        np.divide(tp, self.f1_denominator, out=real)
        out[:, 2] = 2.0 * real.max(axis=1, initial=0.0)

        np.multiply(tp, P + N, out=work)
        work -= self.k_times_p
        out[:, 3] = (work.max(axis=1, initial=0) + P * N) / (2 * P * N)

        np.divide(tp, self.k, out=real)
        real *= labels
        out[:, 4] = real.sum(axis=1) / P

        out[:, len(BASE_COLUMNS):] = tp[:, self.ks - 1]
        return out

    def run(self, replicates: int) -> np.ndarray:
        """Sample and score ``replicates`` rankings, batch by batch.

        Returns
        -------
        ndarray of float64
            Scores of the last batch (each batch's scores would feed a tail accumulator).
        """
        scores = None
        for first in range(0, replicates, self.batch):
            scores = self.score(self.sample(min(self.batch, replicates - first)))
        return scores


def numba_run(P: int, N: int, replicates: int, layout: KernelLayout) -> np.ndarray:
    """Sample and score ``replicates`` rankings with the numba kernel, block by block.

    Returns
    -------
    ndarray of float64
        Kernel output of the last block.
    """
    score = block_scorer(P, N, cell_key(SEED, P, N), layout)  # a block reused, as the engine's pass does
    out = None
    for first in range(0, replicates, DEFAULT_BLOCK_SIZE):
        out = score(first, min(DEFAULT_BLOCK_SIZE, replicates - first))
    return out


def lane_kernel_run(P: int, N: int, replicates: int, layout: KernelLayout) -> np.ndarray:
    """:func:`numba_run` with the lane kernel whatever the cell (the minority kernel's comparison)."""
    key = cell_key(SEED, P, N)
    blocks = {}
    out = None
    for first in range(0, replicates, DEFAULT_BLOCK_SIZE):
        count = min(DEFAULT_BLOCK_SIZE, replicates - first)
        if count not in blocks:
            blocks[count] = lane_output(count, len(BASE_COLUMNS) + layout.ks.size)
        out = blocks[count]
        simulate_rows(P, N, key[0], key[1], first, layout.ks, out)
    return out


def check_numpy_scores(rng: np.random.Generator) -> None:
    """Assert that :meth:`NumpyBaseline.score` matches the reference scorers on the same rankings.

    Raises
    ------
    AssertionError
        If any metric of any ranking differs beyond floating-point rounding.
    """
    for P, N in CHECK_CELLS:
        layout = KernelLayout.for_metrics(metric_entries(DEFAULT_METRICS), P, N)
        baseline = NumpyBaseline(P, N, layout.ks, rng, batch=CHECK_REPLICATES)
        labels = baseline.sample(CHECK_REPLICATES)
        assert (labels.sum(axis=1) == P).all(), "every sampled ranking must hold exactly P positives"
        scores = baseline.score(labels)
        for metric, column in layout.columns.items():
            expected = get_metric(metric).reference_scores(labels.astype(np.int64), P, N)
            np.testing.assert_allclose(scores[:, column], expected, rtol=1e-12, atol=0,
                                       err_msg=f"numpy baseline disagrees on {metric} at P={P}, N={N}")


def time_once(run: Callable[[int], object], replicates: int) -> tuple[float, float]:
    """(CPU seconds, ``time.process_time``; wall seconds, ``time.perf_counter``) of one call ``run(replicates)``."""
    cpu, wall = time.process_time(), time.perf_counter()
    run(replicates)
    return time.process_time() - cpu, time.perf_counter() - wall


def warmed_up_runners(P: int, N: int, rng: np.random.Generator) -> dict[str, Callable[[int], object]]:
    """Both implementations for cell (P, N), each a function of the number of rankings, warmed up.

    The numba kernel is compiled and the numpy buffers are touched by a full batch before timing.
    """
    layout = KernelLayout.for_metrics(metric_entries(DEFAULT_METRICS), P, N)
    baseline = NumpyBaseline(P, N, layout.ks, rng)
    one_at_a_time = NumpyBaseline(P, N, layout.ks, rng, batch=1)
    runners = {
        "numba": lambda replicates: numba_run(P, N, replicates, layout),
        "lanes": lambda replicates: lane_kernel_run(P, N, replicates, layout),
        "numpy": baseline.run,
        "numpy_loop": one_at_a_time.run,
    }
    runners["numba"](1)
    runners["lanes"](1)
    runners["numpy"](baseline.batch)
    runners["numpy_loop"](10)
    return runners


def time_cells(cells: Sequence[tuple[int, int]], replicates: dict[str, int], repeats: int) -> dict:
    """Best-of-``repeats`` nanoseconds per element-step of every implementation at every cell.

    The implementations alternate within each repeat, and the order reverses every repeat, so
    slow spells of the machine hit all alike.  ``replicates`` gives the rankings per timed run of
    each implementation.

    Returns
    -------
    dict
        ``{(P, N): {"numba": (cpu ns, wall ns), "lanes": ..., "numpy": ..., "numpy_loop": ...}}``, the run
        with the least CPU time of each.
    """
    rng = np.random.default_rng(SEED)
    runners = {cell: warmed_up_runners(*cell, rng) for cell in cells}
    names = tuple(replicates)
    timings = {cell: {name: [] for name in names} for cell in cells}
    for repeat in range(repeats):
        order = names if repeat % 2 == 0 else names[::-1]
        for cell in cells:
            for name in order:
                cpu, wall = time_once(runners[cell][name], replicates[name])
                steps = replicates[name] * sum(cell)
                timings[cell][name].append((cpu / steps * 1e9, wall / steps * 1e9))
    return {cell: {name: min(runs) for name, runs in by_name.items()} for cell, by_name in timings.items()}


#: (P, N, R, Cs, alphas) of the end-to-end comparison: small, reference, large cells (large ones at a small R
#: and one (C, alpha), which their bookkeeping does not feel)
SIZE_CELLS = ((20, 20, 4_000_000, (10, 100, 1000), (0.01, 0.05)), (100, 100, 1_000_000, (10, 100, 1000), (0.01, 0.05)),
              (1000, 1000, 500_000, (10, 100, 1000), (0.01, 0.05)), (50_000, 50_000, 4_000, (10,), (0.05,)),
              (100_000, 100_000, 2_000, (10,), (0.05,)))


def simulate_cell_sizes(repeats: int) -> list[str]:
    """``simulate_cell`` (default metrics and tail probabilities, no exact values) per element-step, CPU and
    wall, at small, reference and large cells in one process, with each cell's ratio to (1000, 1000)."""
    from tablegen import simulate_cell

    rows = []
    for P, N, R, Cs, alphas in SIZE_CELLS:
        simulate_cell(P, N, min(R, 200_000), 1, exact=False, Cs=Cs, alphas=alphas)  # kernels loaded
        runs = [time_once(lambda r: simulate_cell(P, N, r, 1, exact=False, Cs=Cs, alphas=alphas), R)
                for _ in range(repeats)]
        cpu, wall = min(runs)
        rows.append((P, N, R, Cs, alphas, cpu, wall, cpu / (R * (P + N)) * 1e9))
    reference = next(ns for P, N, *_, ns in rows if (P, N) == (1000, 1000))
    lines = ["", "simulate_cell per element-step (default metrics and tail probabilities, exact=False; best of "
             f"{repeats} by CPU time):", "",
             "| cell (P, N) | R | C, alpha | CPU s | wall s | CPU ns/element-step | vs (1000, 1000) |",
             "|---|---:|---|---:|---:|---:|---:|"]
    for P, N, R, Cs, alphas, cpu, wall, ns in rows:
        lines.append(f"| ({P:,}, {N:,}) | {R:,} | {list(Cs)}, {list(alphas)} | {cpu:.3f} | {wall:.3f} | {ns:.3f} | "
                     f"{ns / reference:.2f} |")
    return lines


#: (P, N, R) of the tail-route comparison: the small cell where the tails' bookkeeping weighs most
ROUTE_CELL = (20, 20, 2_000_000)


def streaming_sinks(P, N, layout, capacity, thresholds, tables=None):
    """:func:`tablegen.compute.mc.tail_sinks` as it was: a :class:`~tablegen.compute.accumulator.TailStream` for
    every metric (the comparison's other side)."""
    from tablegen.compute.accumulator import TailStream

    return None, {spec.name: TailStream(capacity, thresholds.get(spec.name, np.inf)) for spec in layout.specs}


def tail_routes(repeats: int) -> list[str]:
    """CPU ns per ranking of each default metric's tail at a small cell, in the engine's pass
    (:func:`tablegen.compute.mc.simulate_tails` of that metric alone, less the lane kernel alone on the same
    rankings): by the route the engine takes (:func:`tablegen.compute.mc.tail_sinks`: counts per value, or a
    bucketed stream) and by the streaming tail (:class:`tablegen.compute.accumulator.TailStream`) for every
    metric, side by side in one process, the tails checked equal.  Tails keep 10% of R (the default tail
    probabilities' deepest)."""
    from tablegen.compute import mc

    P, N, R = ROUTE_CELL
    capacity = R // 10 + 1
    entries = metric_entries(DEFAULT_METRICS)
    layout = KernelLayout.for_metrics(entries, P, N)
    engine_sinks = mc.tail_sinks

    def engine_pass(metrics, sinks, replicates, capacity_):
        mc.tail_sinks = sinks
        try:
            return mc.simulate_tails(P, N, replicates, SEED, metrics, capacity_)
        finally:
            mc.tail_sinks = engine_sinks

    def side_by_side(metrics):
        """Best CPU ns per ranking of the kernel alone, the engine's pass and the streaming pass, the three
        timed in turn in each round (so a slow spell of the shared machine hits all three, not one)."""
        metric_layout = KernelLayout.for_metrics(metrics, P, N)
        numba_run(P, N, 1000, metric_layout)
        runs = {"kernel": lambda r: numba_run(P, N, r, metric_layout),
                "engine": lambda r: engine_pass(metrics, engine_sinks, r, capacity),
                "streaming": lambda r: engine_pass(metrics, streaming_sinks, r, capacity)}
        best = dict.fromkeys(runs, np.inf)
        for _ in range(repeats):
            for name, run in runs.items():
                best[name] = min(best[name], time_once(run, R)[0])
        tails, expected = (engine_pass(metrics, sinks, 1000, 101) for sinks in (engine_sinks, streaming_sinks))
        assert all(tails[m].values.tobytes() == expected[m].values.tobytes() for m in tails), metrics
        return {name: seconds / R * 1e9 for name, seconds in best.items()}

    counted, streams = engine_sinks(P, N, layout, capacity, {})
    lines = ["", f"Tails at ({P}, {N}), R = {R:,}, keeping {capacity:,} samples per metric: CPU ns per ranking beyond "
             f"the lane kernel (simulate_tails of the metrics less the kernel alone on the same columns; best of "
             f"{repeats} rounds, the three timed in turn in each):", "",
             "| metric | engine's route | lane kernel alone | engine's tails | streaming tails |",
             "|---|---|---:|---:|---:|"]
    for metrics, label in [*[([entry], entry.name) for entry in entries], (entries, "all six together")]:
        route = ("counts per value" if counted is not None and metrics[0].name in counted.names
                 else type(streams[metrics[0].name]).__name__) if len(metrics) == 1 else ""
        ns = side_by_side(metrics)
        lines.append(f"| {label} | {route} | {ns['kernel']:.1f} | {ns['engine'] - ns['kernel']:.1f} | "
                     f"{ns['streaming'] - ns['kernel']:.1f} |")
    return lines


#: AVX-512 instructions whose presence shows the lane loop was vectorised (multiply-shift sampling,
#: xoshiro rotations, running maxima).
VECTOR_MARKERS = ("vpmuludq", "vprolq", "vpmaxsq")


def lane_kernel_vectorisation() -> str:
    """What the compiled lane kernel's assembly says: zmm instruction count and marker counts.

    Numba cannot show the assembly of code loaded from its on-disk cache, so an uncached copy of
    the kernel is compiled (about 8 s) and run once on a small cell to be inspected.
    """
    import numba as nb

    from tablegen.compute.kernels.lanes import _LANES_BLOCK
    from tablegen.compute.kernels.ranking import TP_COLUMN

    uncached = nb.njit(nogil=True, error_model="numpy")(_LANES_BLOCK["plain"].py_func)  # the variant without MCC
    P, N = 5, 7
    key = cell_key(SEED, P, N)
    uncached(P, N, key[0], key[1], 0, np.array([10], np.int64), lane_output(3, TP_COLUMN + 1), np.empty(3, np.int64))
    assembly = "\n".join(uncached.inspect_asm().values())
    instructions = [line.split()[0] for line in assembly.splitlines()
                    if line.startswith("\t") and line.split() and not line.split()[0].startswith(".")]
    zmm = sum("%zmm" in line for line in assembly.splitlines())
    markers = ", ".join(f"{m} x{sum(i == m for i in instructions)}" for m in VECTOR_MARKERS)
    return f"{zmm} of {len(instructions)} instructions use 512-bit zmm registers ({markers})"


def format_report(best: dict, replicates: dict[str, int], repeats: int, command: str) -> str:
    """The markdown report: environment, command line and the table of ns per element-step."""
    lines = [
        f"- CPU: {cpu_model()}, {vector_width()} (one thread; {os.cpu_count()} logical CPUs on the machine)",
        f"- python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}",
        f"- metrics: {', '.join(DEFAULT_METRICS)}",
        f"- {replicates['numba']} rankings per cell per run ({replicates['numpy_loop']} for the per-ranking "
        f"numpy loop), best of {repeats} runs; "
        f"numpy batches of about {BATCH_ELEMENTS} elements; numba blocks of {DEFAULT_BLOCK_SIZE} rankings",
        f"- lane kernel assembly: {lane_kernel_vectorisation()}",
        f"- command: `{command}`",
        f"- load average {load_average()}; CPU time (time.process_time) per element-step, wall time beside it",
        "",
        "| cell (P, N) | kernel | numba CPU ns/element-step | (wall) | lane kernel alone | numpy batched | ratio "
        "| numpy per ranking | ratio |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (P, N), ns in best.items():
        kernel = "minority" if uses_minority_sampling(P, N) else "lanes"
        cpu = {name: value[0] for name, value in ns.items()}
        lines.append(f"| ({P}, {N}) | {kernel} | {cpu['numba']:.2f} | {ns['numba'][1]:.2f} | {cpu['lanes']:.2f} | "
                     f"{cpu['numpy']:.2f} | {cpu['numpy'] / cpu['numba']:.1f} | {cpu['numpy_loop']:.2f} | "
                     f"{cpu['numpy_loop'] / cpu['numba']:.1f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Check the numpy baseline, time both implementations and print the markdown report.

    Parameters
    ----------
    argv : sequence of str, optional
        Command-line arguments without the program name (default: ``sys.argv[1:]``).
    """
    script, argv = (sys.argv[0], sys.argv[1:]) if argv is None else (__file__, list(argv))
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.replicates < 1 or args.repeats < 1 or args.loop_replicates < 1:
        parser.error("--replicates, --loop-replicates and --repeats must be >= 1")
    check_numpy_scores(np.random.default_rng(SEED))
    replicates = {"numba": args.replicates, "lanes": args.replicates, "numpy": args.replicates,
                  "numpy_loop": args.loop_replicates}
    best = time_cells(args.cells, replicates, args.repeats)
    command = shlex.join([shown_path(sys.executable), shown_path(script), *argv])
    print(format_report(best, replicates, args.repeats, command))
    if not args.no_sizes:
        print("\n".join(simulate_cell_sizes(min(args.repeats, 3))))
        print("\n".join(tail_routes(args.repeats)))


if __name__ == "__main__":
    with recording("kernel"):
        main()
