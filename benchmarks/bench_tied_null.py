"""Is the no-ties null conservative for a classifier whose scores tie?  Rejection rates by simulation.

    .venv/bin/python benchmarks/bench_tied_null.py                     # about 90 s on one core
    .venv/bin/python benchmarks/bench_tied_null.py --trials 5000 --levels 2 5

``significance_test_from_scores`` tests a tied winner against the critical value of the no-ties null
(a random ranking of distinct scores).  Here C random scorers that learned nothing give
each of P + N items one of ``levels`` equally likely score values (few values: heavy ties; many:
light ties), independent of the labels; their best metric, computed in tablegen's conventions
(tied scores form one threshold group, AUC counts a tied pair as ½), is compared with the no-ties
critical value of :func:`tablegen.lookup.api.critical_value`.  The share of trials with a "significant"
winner is the rejection rate, reported with its 95% Clopper–Pearson interval.  Rows with
``levels = none`` use continuous scores (no ties) as the control: their rate is the no-ties test's
own size (at most alpha; below it where the metric is coarse).

Table 1: every metric, C = 1, through :mod:`tablegen.compute.metrics_from_scores` (one scorer at a time).
Table 2: AUC only, vectorised (U from average ranks, the same value), more trials, C = 1 and 10,
alpha = 0.05 and 0.01 — light ties are where AUC is least conservative.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

from tablegen.compute.metrics_from_scores import BASE_SCORE_METRICS, metric_from_groups, threshold_groups
from tablegen.compute.stats import clopper_pearson
from tablegen.errors import TablegenInputError
from tablegen.lookup.api import critical_value

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import recording  # noqa: E402

SNAP = 1e-9


def no_ties_critical_value(metric, P, N, C, alpha) -> float:
    """The no-ties critical value: by the answer policy, or simulated where "auto" cannot answer yet."""
    try:
        return float(critical_value(metric, P, N, C=C, alpha=alpha))
    except TablegenInputError:
        return float(critical_value(metric, P, N, C=C, alpha=alpha, method="simulate", R=400_000, seed=2005))


def rejection_rates(P=30, N=30, levels=4, C=1, alpha=0.05, trials=20_000, seed=0, metrics=BASE_SCORE_METRICS):
    """{metric: (rate, ci_low, ci_high)} for C random scorers with ``levels`` score values (None: no ties)."""
    rng = np.random.default_rng(seed)
    cut = {m: no_ties_critical_value(m, P, N, C, alpha) for m in metrics}
    hits = dict.fromkeys(metrics, 0)
    y = np.r_[np.ones(P, np.int64), np.zeros(N, np.int64)]
    for _ in range(trials):
        best = dict.fromkeys(metrics, -np.inf)
        for _ in range(C):
            s = rng.random(P + N) if levels is None else rng.integers(0, levels, P + N).astype(float)
            g = threshold_groups(y, s)
            for m in metrics:
                best[m] = max(best[m], metric_from_groups(m, g))
        for m in metrics:
            hits[m] += best[m] > cut[m] + SNAP
    out = {}
    for m in metrics:
        low, high = clopper_pearson(hits[m], hits[m], trials)
        out[m] = (hits[m] / trials, float(low), float(high))
    return out


def auc_rejection_rate(P, N, levels, C, alpha, trials, seed, batch=20_000):
    """(rate, ci_low, ci_high) of the best of C random scorers' AUC (ties counted ½), vectorised."""
    from scipy.stats import rankdata

    rng = np.random.default_rng(seed)
    cut, hits, done = no_ties_critical_value("auc", P, N, C, alpha), 0, 0
    while done < trials:
        b = min(batch, trials - done)
        best = np.full(b, -np.inf)
        for _ in range(C):
            s = rng.random((b, P + N)) if levels is None else rng.integers(0, levels, (b, P + N))
            u = rankdata(s, axis=1)[:, :P].sum(axis=1) - P * (P + 1) / 2  # the first P items are the positives
            best = np.maximum(best, u / (P * N))
        hits, done = hits + int(np.sum(best > cut + SNAP)), done + b
    low, high = clopper_pearson(hits, hits, trials)
    return hits / trials, float(low), float(high)


def _interval(rate, low, high) -> str:
    return f"{rate:.4f} [{low:.4f}, {high:.4f}]"


def _table_1(args) -> None:
    print(f"Table 1: every metric, C = 1, alpha = {args.alpha}, {args.trials:,} trials\n")
    print("| score values | " + " | ".join(args.metrics) + " |")
    print("|---|" + "---|" * len(args.metrics))
    for levels in [None, *args.levels]:
        rates = rejection_rates(args.P, args.N, levels, 1, args.alpha, args.trials, args.seed, args.metrics)
        label = "none (no ties)" if levels is None else levels
        print(f"| {label} | " + " | ".join(_interval(*r) for r in rates.values())
              + " |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--P", type=int, default=30)
    parser.add_argument("--N", type=int, default=30)
    parser.add_argument("--alpha", type=float, default=0.05, help="level of table 1")
    parser.add_argument("--levels", type=int, nargs="+", default=[3, 10, 30, 100],
                        help="score values of a tied scorer")
    parser.add_argument("--trials", type=int, default=20_000,
                        help="trials of table 1 (table 2: 10x at C = 1, 2x at C = 10)")
    parser.add_argument("--seed", type=int, default=2005)
    parser.add_argument("--auc-only", action="store_true", help="table 2 only")
    parser.add_argument("--metrics", nargs="+", default=[*BASE_SCORE_METRICS, "best_mcc"],
                        help="metrics of table 1 (default: every metric scored from predictions)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    print(f"# Rejection rate of random scorers against the no-ties critical value\n\n"
          f"`{' '.join(['.venv/bin/python', *sys.argv])}`; {platform.processor() or platform.machine()}, "
          f"numpy {np.__version__}; P = {args.P}, N = {args.N}\n")
    if not args.auc_only:
        _table_1(args)
    print(f"\nTable 2: auc, {10 * args.trials:,} trials at C = 1, {2 * args.trials:,} at C = 10\n\n"
          "| alpha | C | " + " | ".join(["none (no ties)", *map(str, args.levels)]) + " |")
    print("|---|---|" + "---|" * (1 + len(args.levels)))
    for alpha in (0.05, 0.01):
        for C in (1, 10):
            trials = args.trials * (10 if C == 1 else 2)
            cells = [_interval(*auc_rejection_rate(args.P, args.N, lv, C, alpha, trials, args.seed))
                     for lv in [None, *args.levels]]
            print(f"| {alpha} | {C} | " + " | ".join(cells) + " |")
    print(f"\n{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    with recording("tied_null_auc" if "--auc-only" in sys.argv else "tied_null"):
        status = main()
    raise SystemExit(status)
