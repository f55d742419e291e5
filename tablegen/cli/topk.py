"""``tablegen topk``: positives in the top k against random rankings, from counts or scores and labels.

The command-line side of :mod:`tablegen.lookup.topk`: reading a curve of counts or a file of scores and
labels, printing the bounds or the test, drawing the band.  Registered by :mod:`tablegen.cli.main`.
"""

from __future__ import annotations

import numpy as np

from tablegen.common.csvfile import read_lines, split_tokens
from tablegen.common.outputs import json_text
from tablegen.errors import TablegenInputError
from tablegen.lookup.topk import TEST_VARIANTS, check_curve_rises, curve_from_scores, topk_bounds, topk_test


def add_topk_parser(sub) -> None:
    """The ``topk`` subcommand's arguments."""
    p = sub.add_parser("topk", help="positives in the top k against random rankings, for every k (precision at k)")
    p.add_argument("--P", type=int, default=None, help="positives in the test set (not with --scores-file)")
    p.add_argument("--N", type=int, default=None, help="negatives in the test set (not with --scores-file)")
    p.add_argument("--K", type=int, default=None,
                   help="largest k (default: the length of the curve, else min(P + N, 100))")
    p.add_argument("--C", type=int, default=1, help="competing rankers: the bound of the best of C (default 1)")
    p.add_argument("--alpha", type=float, default=0.01, help="significance level (default %(default)s)")
    curve = p.add_mutually_exclusive_group()
    curve.add_argument("--counts", type=float, nargs="+", default=None, metavar="X",
                       help="positives in the top 1, 2, ... of your ranking (averages allowed)")
    curve.add_argument("--counts-file", default=None, help="a file of those counts, whitespace- or comma-separated")
    curve.add_argument("--scores-file", default=None,
                       help="a CSV of score,label rows (label 1 = positive; a header line is skipped); "
                            "tied scores count as randomly ordered")
    p.add_argument("--variant", choices=TEST_VARIANTS, default="discrete",
                   help="bound for the verdict (default %(default)s; both hold alpha exactly at integer counts, "
                        "interpolated is the more conservative between integers; the binomial bound is listed, "
                        "not a test)")
    p.add_argument("--plot", default=None, metavar="FILE", help="draw the band and the curve to this image file")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run_topk)


def _read_numbers(path: str, option: str) -> np.ndarray:
    """The numbers in a file, separated by whitespace or commas (:mod:`tablegen.common.csvfile`)."""
    lines = read_lines(path, f"{option} {path}", comments=False)
    try:
        return np.array([float(v) for _, line in lines for v in split_tokens(line, ",")], dtype=float)
    except ValueError as error:
        raise TablegenInputError(f"{option} {path}: {error}") from None


def _read_scores(path: str):
    """(curve, P, N) from a file of ``score,label`` rows (:mod:`tablegen.common.csvfile`); a first row
    that is not two numbers is a header."""
    scores, labels = [], []
    for row_index, (number, line) in enumerate(read_lines(path, f"--scores-file {path}", comments=False)):
        row = line.strip()
        fields = split_tokens(row)
        try:
            if len(fields) != 2:
                raise ValueError(f"{len(fields)} fields")
            score, label = float(fields[0]), float(fields[1])
        except (ValueError, IndexError):
            if row_index == 0:
                continue  # a header
            raise TablegenInputError(
                f"--scores-file {path}, line {number}: expected 'score,label', got {row!r}") from None
        scores.append(score)
        labels.append(label)
    return curve_from_scores(np.array(scores), np.array(labels))


def _topk_curve(args):
    """(curve or None, P, N) from the options."""
    if args.scores_file is not None:
        if args.P is not None or args.N is not None:
            raise TablegenInputError("--P and --N come from --scores-file; do not give them too")
        curve, P, N = _read_scores(args.scores_file)
        return curve[:args.K] if args.K else curve, P, N
    if args.P is None or args.N is None:
        raise TablegenInputError("--P and --N are required (or give --scores-file)")
    curve = args.counts if args.counts is not None else (
        _read_numbers(args.counts_file, "--counts-file") if args.counts_file is not None else None)
    if curve is not None and not np.isfinite(curve).all():
        i = int(np.flatnonzero(~np.isfinite(curve))[0])
        raise TablegenInputError(f"{'--counts' if args.counts is not None else '--counts-file'}: the count at "
                                 f"k = {i + 1} is {curve[i]}, not a number of positives")
    if curve is not None:
        check_curve_rises(curve)
    if curve is not None and args.K is not None:
        if args.K > len(curve):
            raise TablegenInputError(f"--K {args.K} is longer than the curve ({len(curve)} counts)")
        curve = curve[:args.K]
    return curve, args.P, args.N


def run_topk(args) -> int:
    """Run ``tablegen topk``; bad input raises :class:`TablegenInputError` (exit status 2 in ``main``)."""
    curve, P, N = _topk_curve(args)
    if curve is None:
        bounds = topk_bounds(P, N, args.K if args.K is not None else min(P + N, 100), C=args.C, alpha=args.alpha)
        result = bounds
        payload = {"P": P, "N": N, "C": args.C, "alpha": args.alpha, "tail_probability": bounds.tail_probability,
                   "k": bounds.k.tolist(), "expected": bounds.expected.tolist(),
                   "discrete": bounds.discrete.tolist(), "interpolated": bounds.interpolated.tolist(),
                   "binomial": bounds.binomial.tolist(), "lower": bounds.lower.tolist()}
        rankers = "a random ranking" if args.C == 1 else f"the best of {args.C} random rankings"
        lines = [f"Positives in the top k that {rankers} "
                 f"exceeds with probability at most {args.alpha:g} (P = {P:,}, N = {N:,}):",
                 f"{'k':>6} {'expected':>9} {'discrete':>9} {'interp.':>9} {'binomial':>9}"]
        lines += [f"{k:>6} {e:>9.3f} {d:>9.0f} {i:>9.3f} {b:>9.3f}" for k, e, d, i, b in
                  zip(bounds.k, bounds.expected, bounds.discrete, bounds.interpolated, bounds.binomial)]
    else:
        result = topk_test(curve, P, N, C=args.C, alpha=args.alpha, variant=args.variant)
        payload = result.to_dict()
        bound = result.bounds.bound(args.variant)
        lines = [result.sentence(),
                 f"{'k':>6} {'observed':>9} {'bound':>9} {'p (discr.)':>11} {'p (interp.)':>11} {'p (binom.)':>11}"]
        lines += [f"{k:>6} {x:>9.3f} {b:>9.3f} {result.formatted_p('discrete', i):>11} "
                  f"{result.formatted_p('interpolated', i):>11} {result.formatted_p('binomial', i):>11}"
                  f"{'  *' if s else ''}"
                  for i, (k, x, b, s) in enumerate(zip(result.bounds.k, result.observed, bound, result.significant))]
        lines.append(f"* at or above the {args.variant} bound (its p-value <= alpha).  p-values are for the best of "
                     f"C = {args.C}: discrete Pr(X >= ceil(x)); interpolated Pr(X >= x), equal to it at whole counts "
                     "and linear between them; binomial the same under the infinite-data limit Binomial(k, P/(P+N)) "
                     "(for comparison, not a test).")
    if args.plot is not None:
        from tablegen.cli.images import image_errors
        from tablegen.lookup.plot import plot_topk  # matplotlib is optional

        with image_errors("--plot", args.plot):
            plot_topk(result, args.plot)
    if args.json:
        print(json_text(payload))
    else:
        print("\n".join(lines))
        if args.plot is not None:
            print(f"wrote {args.plot}")
    return 0
