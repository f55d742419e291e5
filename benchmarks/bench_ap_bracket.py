"""Seconds and width of average precision's bracket (critical value and p-value), each speed idea on / off.

Routes (``tablegen.compute.exact.average_precision``), all with the fine grid 1/10,000 in S = P AP:

- ``full``: the study's approach, one fine programme rounding down and one rounding up over the whole law
  (no retirement; window ends below 1e-20 trimmed), the critical value read from the two laws;
- ``retire``: :class:`BracketedAveragePrecisionNull`: coarse programmes (grid 1/100) locate the critical
  value, fine ones retire exactly the mass that can no longer reach the coarse bracket or will surely
  end above it; a p-value runs one fine programme each way retiring all mass but at the threshold;
- ``retire, no trim``: the same with nothing trimmed (the trimming's share of the speed).

Beside them, the 95% interval of a simulation at the lookup's default R
(:func:`tablegen.lookup.api.simulation_replicates`): the bundled table's interval (R = 10^7) scaled by
sqrt(10^7 / R).  (C, alpha) = (10, 0.01); the p-value is asked at the bracket's high end.  CPU seconds
in a warm process (kernels compiled first), one core.

Usage::

    python benchmarks/bench_ap_bracket.py
    python benchmarks/bench_ap_bracket.py --cells 20x100 100x300 --routes retire
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from machine import cpu_model, recording, vector_width  # noqa: E402

import tablegen  # noqa: E402
from tablegen.compute.exact import average_precision as ap  # noqa: E402
from tablegen.compute.kernels.average_precision import CEILING, FLOOR  # noqa: E402
from tablegen.compute.stats import upper_tail_probability  # noqa: E402
from tablegen.lookup.api import simulation_replicates  # noqa: E402


def full_route(P: int, N: int, tail: float) -> tuple[float, float]:
    """The critical-value bracket from whole fine laws (no retirement)."""
    ends = []
    for kind in (FLOOR, CEILING):
        hist, first, above, lost = ap._programme(P, N, ap.FINE_GRID, kind)
        ends.append(ap._quantile(hist, first, above, tail - (lost if kind == CEILING else 0.0)))
    return ends[0] / (ap.FINE_GRID * P), ends[1] / (ap.FINE_GRID * P)


def timed(function, *args):
    start = time.process_time()
    result = function(*args)
    return result, time.process_time() - start


def simulated_width(table, P: int, N: int, C: int, alpha: float) -> tuple[float, int]:
    R = simulation_replicates(P, N, C, alpha)
    try:
        mc = table.critical_value("average_precision", P, N, C, alpha=alpha)
    except tablegen.TablegenInputError:
        return math.nan, R
    return (mc.ci_high - mc.ci_low) * math.sqrt(1e7 / R), R


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", nargs="+", default=["20x100", "100x300", "100x1000", "300x300"])
    parser.add_argument("--routes", nargs="+", default=["full", "retire", "retire-notrim"])
    parser.add_argument("--full-max", type=int, default=400, help="skip the full route above this P + N")
    args = parser.parse_args()
    print(f"# {cpu_model()} ({vector_width()}), {datetime.date.today()}, one core, warm process")
    ap.BracketedAveragePrecisionNull(5, 5).critical_bracket(0.01)  # compile
    table = tablegen.open_table()
    C, alpha = 10, 0.01
    tail = float(upper_tail_probability(C, alpha))
    print("| cell | route | cv s | cv bracket | cv width | p s | p-value bracket | sim. 95% width (R) |")
    print("|---|---|---|---|---|---|---|---|")
    for cell in args.cells:
        P, N = (int(x) for x in cell.split("x"))
        width, R = simulated_width(table, P, N, C, alpha)
        for route in args.routes:
            if route == "full":
                if P + N > args.full_max:
                    continue
                (low, high), cv_s = timed(full_route, P, N, tail)
                p_text, p_s = "—", math.nan
            else:
                saved = ap.TRIM_MASS
                ap.TRIM_MASS = 0.0 if route == "retire-notrim" else saved
                try:
                    null = ap.BracketedAveragePrecisionNull(P, N)
                    (low, high), cv_s = timed(null.critical_bracket, tail)
                    (t_low, t_high), p_s = timed(null.tail_ge_bracket, high)
                finally:
                    ap.TRIM_MASS = saved
                p_low, p_high = (1 - (1 - t) ** C for t in (t_low, t_high))
                p_text = f"[{p_low:.5g}, {p_high:.5g}]"
            print(f"| ({P}, {N}) | {route} | {cv_s:.2f} | [{low:.6f}, {high:.6f}] | {high - low:.1e} | "
                  f"{p_s:.2f} | {p_text} | {width:.1e} ({R:.0e}) |", flush=True)
    np.seterr(all="ignore")


if __name__ == "__main__":
    with recording("ap_bracket"):
        main()
