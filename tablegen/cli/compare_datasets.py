"""``tablegen compare datasets results.csv``: many classifiers across many data sets.

A thin layer over :func:`tablegen.compare.across_datasets`: prints the Friedman test, the mean ranks,
every pair (statistic, raw and adjusted p, decision) and, with ``--mean-ranks-posthoc``, the
mean-ranks test with its sub-pool flip counts; ``--bayesian`` adds the Bayesian signed-rank (or sign) test
of every pair with a ROPE; ``--format markdown|latex`` prints the tables instead; ``--json`` prints
``result.to_dict()`` (with ``"bayesian"``); ``--plot`` draws the picture, ``--cd`` the critical-difference
diagram, ``--bayes-plot`` the Bayesian matrix.
"""

from __future__ import annotations

import sys

from tablegen.common.outputs import json_text
from tablegen.compare.datasets.analysis import CORRECTIONS, TESTS, across_datasets, format_p
from tablegen.compare.datasets.cd_diagram import METHODS
from tablegen.compare.datasets.mean_ranks import LAWS
from tablegen.compute.cell import DEFAULT_SEED


def add_parser(subparsers) -> None:
    """The ``datasets`` sub-subcommand of ``tablegen compare``."""
    p = subparsers.add_parser("datasets", help="m algorithms on n data sets: Friedman, then every pair "
                                               "(Wilcoxon or sign test, Holm or Bonferroni)")
    p.add_argument("results", help="CSV: one row per data set, one column per algorithm (a first 'dataset' "
                                   "column names the rows; '#' lines are comments)")
    p.add_argument("--test", choices=TESTS, default="wilcoxon", help="pairwise test (default %(default)s)")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="holm, bonferroni, hommel (family-wise error); bh, by (false discovery rate) "
                        "(default %(default)s)")
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise level (default %(default)s)")
    p.add_argument("--lower-is-better", action="store_true", help="the scores are errors or losses")
    p.add_argument("--mean-ranks-posthoc", action="store_true",
                   help="also the mean-ranks test, with how often its verdicts flip across sub-pools")
    p.add_argument("--mean-ranks-law", choices=tuple(LAWS), default="nemenyi",
                   help="the mean-ranks test's law: nemenyi (studentized range, Demsar 2006) or bonferroni (normal z, "
                        "Bonferroni over every pair) (default %(default)s)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--plot", default=None, metavar="OUT.png", help="draw mean ranks and the pairwise verdicts")
    p.add_argument("--cd", default=None, metavar="OUT.png",
                   help="draw the critical-difference diagram: bars join what the pairwise test does not separate")
    p.add_argument("--cd-method", choices=METHODS, default="tests",
                   help="'nemenyi' or 'bonferroni': the mean-ranks version by that law (needs --mean-ranks-posthoc "
                        "and that --mean-ranks-law) (default %(default)s)")
    _bayesian_arguments(p)
    p.add_argument("--format", choices=("text", "markdown", "latex"), default="text",
                   help="text report, or the tables as Markdown or LaTeX (default %(default)s)")
    p.set_defaults(run=run)


#: The options of the Bayesian test (each needs --bayesian) and their defaults (None: the test's own).
BAYESIAN_DEFAULTS = {"rope": 0.01, "prior": None, "samples": 50_000, "seed": DEFAULT_SEED, "probability": 0.95}


def _bayesian_arguments(p) -> None:
    p.add_argument("--bayesian", action="store_true",
                   help="also the Bayesian test of every pair (signed-rank with --test wilcoxon, else sign)")
    p.add_argument("--rope", type=float, default=None,
                   help="half-width of the region of practical equivalence, in score units: >= 0, and < 1 for "
                        "scores in [0, 1] (default 0.01; needs --bayesian)")
    p.add_argument("--prior", type=float, default=None,
                   help="prior strength at 0, > 0 (default 0.5 for signed-rank, 1 for sign; needs --bayesian)")
    p.add_argument("--samples", type=int, default=None, help="posterior draws, >= 100 (default 50000; needs "
                                                             "--bayesian)")
    p.add_argument("--seed", type=int, default=None, help=f"root seed (default {DEFAULT_SEED}; needs --bayesian)")
    p.add_argument("--probability", type=float, default=None,
                   help="posterior probability a Bayesian decision needs, in [0.5, 1) (default 0.95; needs "
                        "--bayesian)")
    p.add_argument("--bayes-plot", default=None, metavar="OUT.png", help="draw the Bayesian probabilities (needs "
                                                                          "--bayesian)")


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
    lines = ["", f"Mean-ranks post-hoc test, {LAWS[result.mean_ranks_law]}, critical difference of mean ranks "
                 f"{result.critical_difference():.3f} at alpha = {result.alpha:g} (not recommended: its verdict on a "
                 "pair depends on the other algorithms in the pool; shown to make that visible)",
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
             f"Pairwise {result.test_name} tests, {result.correction_name}-adjusted, "
             f"alpha = {result.alpha:g} (W/L/T: data sets on which the first wins, loses, ties)"]
    lines += _pairs_table(result)
    if result.mean_ranks_posthoc is not None:
        lines += _posthoc_table(result)
    return "\n".join(lines + ["", result.sentence()])


def _check(args) -> None:
    """Options that need another option, refused before any work."""
    from tablegen.errors import TablegenInputError

    if not args.bayesian:
        given = [name for name in ("bayes_plot", *BAYESIAN_DEFAULTS) if getattr(args, name) is not None]
        if given:
            raise TablegenInputError(f"--{given[0].replace('_', '-')} needs --bayesian (it sets the Bayesian test, "
                                     "which runs only with --bayesian)")
    else:  # the Bayesian options are checked before the frequentist tests run
        from tablegen.compare.datasets.bayesian import checked_pairs_args

        checked_pairs_args(args.results, **_bayesian_options(args))
    if args.cd is not None and args.cd_method in LAWS and not args.mean_ranks_posthoc:
        raise TablegenInputError(f"--cd-method {args.cd_method} needs --mean-ranks-posthoc")
    if args.cd is not None and args.cd_method in LAWS and args.cd_method != args.mean_ranks_law:
        raise TablegenInputError(f"--cd-method {args.cd_method} draws the mean-ranks test by that law: give "
                                 f"--mean-ranks-law {args.cd_method} (not {args.mean_ranks_law})")


def _bayesian_options(args) -> dict:
    options = {name: default if getattr(args, name) is None else getattr(args, name)
               for name, default in BAYESIAN_DEFAULTS.items()}
    return {"test": "signed_rank" if args.test == "wilcoxon" else "sign", **options}


def _bayesian(args):
    if not args.bayesian:
        return None
    from tablegen.compare.datasets.bayesian import bayesian_pairs

    return bayesian_pairs(args.results, higher_is_better=not args.lower_is_better, **_bayesian_options(args))


def _print(result, bayesian, args) -> None:
    if args.json:
        data = result.to_dict()
        data["bayesian"] = None if bayesian is None else bayesian.to_dict()
        print(json_text(data))
    elif args.format != "text":
        from tablegen.compare.datasets.report import comparison_table

        print(comparison_table(result, bayesian, args.format), end="")
    else:
        print(format_result(result) + ("" if bayesian is None else "\n\n" + "\n".join(bayesian.sentences())))


def run(args) -> int:
    """Run ``tablegen compare datasets``."""
    _check(args)
    result = across_datasets(args.results, higher_is_better=not args.lower_is_better, test=args.test,
                             correction=args.correction, alpha=args.alpha, mean_ranks_posthoc=args.mean_ranks_posthoc,
                             mean_ranks_law=args.mean_ranks_law)
    bayesian = _bayesian(args)
    _print(result, bayesian, args)
    quiet = args.json or args.format != "text"
    for option, path, draw in (("--plot", args.plot, result.plot),
                               ("--cd", args.cd, lambda p: result.plot_cd(p, args.cd_method)),
                               ("--bayes-plot", args.bayes_plot, lambda p: bayesian.plot(p, result.ranking()))):
        if path is not None:
            _plot(option, path, draw, quiet)
    return 0


def _plot(option: str, path, draw, quiet: bool) -> None:
    from tablegen.cli.images import image_errors  # one translation of image-writing errors for every --plot

    with image_errors(option, path):
        draw(path)
    print(f"wrote {path}", file=sys.stderr if quiet else sys.stdout)  # keep --json output parseable
