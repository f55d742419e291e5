"""``tablegen compare datasets results.csv``: many classifiers across many data sets.

A thin layer over :func:`tablegen.compare.across_datasets`: prints the Friedman test, the mean ranks,
every pair (statistic, raw and adjusted p, decision) and, with ``--mean-ranks-posthoc``, the
mean-ranks test with its sub-pool flip counts; ``--json`` prints ``result.to_dict()``; ``--plot``
draws the picture.
"""

from __future__ import annotations

import json
import sys

from tablegen.compare.datasets.analysis import CORRECTIONS, TESTS, across_datasets, format_p


def add_parser(subparsers) -> None:
    """The ``datasets`` sub-subcommand of ``tablegen compare``."""
    p = subparsers.add_parser("datasets", help="m algorithms on n data sets: Friedman, then every pair "
                                               "(Wilcoxon or sign test, Holm or Bonferroni)")
    p.add_argument("results", help="CSV: one row per data set, one column per algorithm (a first 'dataset' "
                                   "column names the rows; '#' lines are comments)")
    p.add_argument("--test", choices=TESTS, default="wilcoxon", help="pairwise test (default %(default)s)")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="family-wise error control (default %(default)s)")
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise level (default %(default)s)")
    p.add_argument("--lower-is-better", action="store_true", help="the scores are errors or losses")
    p.add_argument("--mean-ranks-posthoc", action="store_true",
                   help="also the mean-ranks test, with how often its verdicts flip across sub-pools")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--plot", default=None, metavar="OUT.png", help="draw mean ranks and the pairwise verdicts")
    p.set_defaults(run=run)


def _pairs_table(result) -> list[str]:
    lines = [f"{'pair':<28}{'statistic':>10}{'p':>11}{'adjusted p':>12}  {'W/L/T':<10} verdict"]
    for c in result.pairwise:
        pair = f"{c.a} vs {c.b}"
        other = c.b if c.better == c.a else c.a
        verdict = f"{c.better} better" if c.significant else "no difference"
        lines.append(f"{pair:<28}{c.statistic:>10.4g}{format_p(c.p_value):>11}{format_p(c.adjusted_p_value):>12}  "
                     f"{f'{c.wins}/{c.losses}/{c.ties}':<10} {verdict}" + (f" than {other}" if c.significant else ""))
    return lines


def _posthoc_table(result) -> list[str]:
    lines = ["", "Mean-ranks post-hoc test (not recommended: its verdict on a pair depends on the other algorithms "
                 "in the pool; shown to make that visible)",
             f"{'pair':<28}{'z':>8}{'critical z':>12}  {'verdict':<14}{'flips in sub-pools':>20}  example pool"]
    for c in result.mean_ranks_posthoc:
        example = "-" if c.example_pool is None else "{" + ", ".join([c.a, c.b, *c.example_pool]) + "}"
        lines.append(f"{c.a + ' vs ' + c.b:<28}{c.z:>8.3f}{c.critical_z:>12.3f}  "
                     f"{'differ' if c.significant else 'no difference':<14}"
                     f"{f'{c.flips} of {c.subpools}':>20}  {example}")
    sizes = [size for size, _, _ in result.mean_ranks_posthoc[0].by_pool_size] if result.mean_ranks_posthoc else []
    lines += ["", "Significant sub-pools by pool size (of the pools of that size holding the pair):",
              f"{'pair':<28}" + "".join(f"{f'm = {size}':>10}" for size in sizes)]
    shown = [c for c in result.mean_ranks_posthoc if any(hits for _, hits, _ in c.by_pool_size)]
    for c in shown:
        cells = "".join(f"{f'{hits}/{pools}':>10}" for _, hits, pools in c.by_pool_size)
        lines.append(f"{c.a + ' vs ' + c.b:<28}{cells}")
    if len(shown) < len(result.mean_ranks_posthoc):
        lines.append(f"(the other {len(result.mean_ranks_posthoc) - len(shown)} pairs: significant in no pool)")
    return lines


def format_result(result) -> str:
    """The text report of an :class:`AcrossDatasetsResult`."""
    f = result.friedman
    lines = [f"{result.m} algorithms on {result.n} data sets ({'higher' if result.higher_is_better else 'lower'} "
             "is better)",
             f"Friedman test: chi2 = {f.statistic:.4f}, df = {f.df}, p = {format_p(f.p_value)}", "",
             "Mean ranks (1 = best): " + ", ".join(f"{a} {result.mean_ranks[a]:.3f}" for a in result.ranking()), "",
             f"Pairwise {result.test_name} tests, {result.correction.capitalize()}-adjusted, "
             f"alpha = {result.alpha:g} (W/L/T: data sets on which the first wins, loses, ties)"]
    lines += _pairs_table(result)
    if result.mean_ranks_posthoc is not None:
        lines += _posthoc_table(result)
    return "\n".join(lines + ["", result.sentence()])


def run(args) -> int:
    """Run ``tablegen compare datasets``."""
    result = across_datasets(args.results, higher_is_better=not args.lower_is_better, test=args.test,
                             correction=args.correction, alpha=args.alpha, mean_ranks_posthoc=args.mean_ranks_posthoc)
    print(json.dumps(result.to_dict(), indent=2) if args.json else format_result(result))
    if args.plot is not None:
        _plot(result, args.plot, quiet=args.json)
    return 0


def _plot(result, path, quiet: bool) -> None:
    from tablegen.cli.images import image_errors  # one translation of image-writing errors for every --plot

    with image_errors("--plot", path):
        result.plot(path)
    print(f"wrote {path}", file=sys.stderr if quiet else sys.stdout)  # keep --json output parseable
