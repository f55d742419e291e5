"""Command line: ``tablegen simulate`` (one cell, Monte Carlo beside the exact values).

The batch job (``run``) and the lookups (``lookup``, ``test``, ``export``, ``plot``, ``info``,
``verify``) arrive with their issues; this module stays a thin layer over the library.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time

from tablegen import __version__
from tablegen.cell import simulate_cell
from tablegen.metrics import known_metrics_text
from tablegen.validation import TablegenInputError


class ProgressLine:
    """A one-line progress display with rate and ETA, on stderr."""

    def __init__(self, stream=None, label="replicates"):
        self.stream = sys.stderr if stream is None else stream
        self.label, self.start = label, time.perf_counter()

    def __call__(self, done: int, total: int) -> None:
        elapsed = time.perf_counter() - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else float("nan")
        self.stream.write(f"\r{done:>12,}/{total:,} {self.label}  {100 * done / total:5.1f}%  "
                          f"{rate:,.0f}/s  ETA {eta:5.1f}s ")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def _simulate_parser(sub) -> None:
    p = sub.add_parser("simulate", help="Monte Carlo critical values of one (P, N) cell, beside exact values")
    p.add_argument("--P", type=int, required=True, help="positives in the test set")
    p.add_argument("--N", type=int, required=True, help="negatives in the test set")
    p.add_argument("--R", type=int, default=1_000_000, help="random rankings (default %(default)s)")
    p.add_argument("--seed", type=int, default=2005, help="root seed (default %(default)s)")
    p.add_argument("--metrics", nargs="+", default=None, help=f"metrics (default all): {known_metrics_text()}")
    p.add_argument("--C", type=int, nargs="+", default=[10, 100, 1000], help="numbers of competitors")
    p.add_argument("--alpha", type=float, nargs="+", default=[0.01], help="significance levels")
    p.add_argument("--no-exact", action="store_true", help="skip the exact values")


def _format_cell(ds) -> str:
    lines = [f"P = {int(ds.P)}, N = {int(ds.N)}, R = {int(ds.replicates):,}, seed = {ds.attrs['root_seed']}",
             f"{'metric':<24}{'alpha':>7}{'C':>6}  {'critical value':>15}  {'95% CI':>21}  {'exact':>10}"]
    for metric in ds.metric.values:
        for alpha in ds.alpha.values:
            for C in ds.C.values:
                cell = ds.sel(metric=metric, alpha=alpha, C=C)
                exact = float(cell.exact_critical_value)
                lines.append(f"{metric:<24}{alpha:>7g}{C:>6}  {float(cell.critical_value):>15.6g}  "
                             f"[{float(cell.ci_low):>9.6g}, {float(cell.ci_high):>9.6g}]  "
                             f"{'-' if math.isnan(exact) else format(exact, '.6g'):>10}")
    return "\n".join(lines)


def _run_simulate(args) -> int:
    start = time.perf_counter()
    ds = simulate_cell(args.P, args.N, args.R, args.seed, args.metrics, args.C, args.alpha,
                       exact=not args.no_exact, progress=ProgressLine())
    print(_format_cell(ds))
    seconds = time.perf_counter() - start
    print(f"{seconds:.1f} s wall, {args.R * (args.P + args.N) / seconds / 1e6:,.0f} M element-steps/s "
          "(simulation and exact values together)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``tablegen`` argument parser."""
    parser = argparse.ArgumentParser(prog="tablegen", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"tablegen {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", required=True)
    _simulate_parser(sub)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``tablegen`` command; returns the exit code."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return {"simulate": _run_simulate}[args.command](args)
    except TablegenInputError as error:
        print(f"tablegen: error: {error}", file=sys.stderr)
        return 2
