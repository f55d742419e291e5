"""``tablegen lookup``, ``test`` and ``p-value``: critical values, verdicts and p-values by the answer policy.

The command-line side of :mod:`tablegen.lookup.api`; each command prints the answer with its source (exact,
a table's Monte Carlo values, or a simulation with R and seed) and shows a progress line whenever it
simulates.  Each parser sets its run function with ``set_defaults(run=...)``; registered by
:mod:`tablegen.cli.main`.
"""

from __future__ import annotations

from tablegen.cli.options import metric_name, storage_options_argument, table_for
from tablegen.cli.progress import ProgressLine
from tablegen.cli.scores import add_scores_arguments, run_scores, scores_file_given
from tablegen.common.outputs import json_text
from tablegen.compute.metrics import known_metrics_text


def add_lookup_parsers(sub) -> None:
    """Add ``lookup``, ``test`` and ``p-value``, each with its ``run`` default."""
    _lookup_parser(sub)
    _test_parser(sub)
    _p_value_parser(sub)


def _cell_arguments(p, alpha: bool = True, multiclass: bool = False) -> None:
    binary = "positives in the test set" + (" (or --K and --n-per-class)" if multiclass else "")
    p.add_argument("--P", type=int, required=not multiclass, help=binary)
    p.add_argument("--N", type=int, required=not multiclass, help="negatives in the test set")
    if multiclass:
        p.add_argument("--K", type=int, default=None,
                       help="a K-class question instead of --P/--N: the number of classes (balanced design; metric "
                            "accuracy, kappa, balanced_accuracy or macro_f1, answered exactly)")
        p.add_argument("--n-per-class", dest="n_per_class", type=int, default=None,
                       help="items of each of the K classes (the random classifiers predict each class as often)")
    p.add_argument("--C", type=int, required=True,
                   help="classifiers compared on this test set, every model tried counted "
                        "(the winner is the best of C)")
    if alpha:
        p.add_argument("--alpha", type=float, default=0.01, help="significance level")
    p.add_argument("--table", default=None, help="store to read (default: the bundled table)")
    storage_options_argument(p)
    p.add_argument("--method", choices=("auto", "exact", "table", "simulate"), default="auto",
                   help="auto: exact where it fits the lookup budget, else the table, else simulate now "
                        "(never refuses); or force one source")
    p.add_argument("--R", type=int, default=None,
                   help="rankings, if the answer is simulated (default: about 5 s of work, 100,000 to 10,000,000)")
    p.add_argument("--seed", type=int, default=None,
                   help="root seed, if the answer is simulated (default 2005: the same question, the same answer)")
    p.add_argument("--json", action="store_true", help="print the answer as JSON")


def _lookup_parser(sub) -> None:
    p = sub.add_parser("lookup", help="critical value of a metric for the best of C random classifiers")
    p.add_argument("metric", type=metric_name, help=f"metric: {known_metrics_text()}; with --K: accuracy, kappa, "
                                                    "balanced_accuracy, macro_f1")
    _cell_arguments(p, multiclass=True)
    p.set_defaults(run=_run_lookup)


def _source_text(answer) -> str:
    if answer.method == "exact":
        return "exact"
    if answer.method == "bracket":
        return "exact bounds (rounded lattice programmes)"
    if answer.method == "table":
        return f"Monte Carlo, R = {answer.replicates:,}, from the {answer.source}"
    return f"Monte Carlo, R = {answer.replicates:,}, seed {answer.seed}, simulated now"


def _interval_text(answer) -> str:
    if answer.method == "exact":
        return ""
    if answer.method == "bracket":
        return f", within [{answer.ci_low:.6g}, {answer.ci_high:.6g}]"
    return f", 95% CI [{answer.ci_low:.4g}, {answer.ci_high:.4g}]"


def _run_lookup(args) -> int:
    from tablegen.lookup.api import critical_value

    table = table_for(args)  # a bad --table is the first error
    answer = critical_value(args.metric, args.P, args.N, args.C, args.alpha, method=args.method, R=args.R,
                            seed=args.seed, table=table, progress=ProgressLine(), **_design(args))
    if args.json:
        print(json_text({"metric": args.metric, **_where(args), "C": args.C, "alpha": args.alpha,
                         "critical_value": answer.to_dict()}))
        return 0
    print(f"{args.metric} critical value for the best of C = {args.C:,} at {_where_text(args)}, "
          f"alpha = {args.alpha:g}: {answer.value:.6g} ({_source_text(answer)}{_interval_text(answer)})")
    print("A winner is significant if its score exceeds this value.")
    return 0


def _design(args) -> dict:
    """``K`` and ``n_per_class`` for the lookup functions where the command line gave either (a K-class question)."""
    given = args.K is not None or args.n_per_class is not None
    return {"K": args.K, "n_per_class": args.n_per_class} if given else {}


def _where(args) -> dict:
    return ({"K": args.K, "n_per_class": args.n_per_class} if _design(args) else {"P": args.P, "N": args.N})


def _where_text(args) -> str:
    if _design(args):
        return f"K = {args.K} classes of {args.n_per_class:,} items (balanced)"
    return f"P = {args.P:,}, N = {args.N:,}"


def _test_parser(sub) -> None:
    p = sub.add_parser("test", help="is a winner's score significant against the best of C random classifiers?")
    p.add_argument("metric", type=metric_name, help=f"metric: {known_metrics_text()}; with --K: accuracy, kappa, "
                                                    "balanced_accuracy, macro_f1")
    p.add_argument("score", type=float, help="the winner's score on the test set")
    _cell_arguments(p, multiclass=True)
    add_scores_arguments(p)
    p.set_defaults(run=_run_test)


def _run_test(args) -> int:
    if scores_file_given(args):
        return run_scores(args)
    from tablegen.lookup.api import significance_test

    table = table_for(args)  # a bad --table is the first error
    result = significance_test(args.metric, args.P, args.N, args.C, args.alpha, score=args.score, method=args.method,
                               R=args.R, seed=args.seed, table=table, progress=ProgressLine(), **_design(args))
    if args.json:
        print(json_text(result.to_dict()))
        return 0
    cv, pv = result.critical_value, result.p_value
    print(result.sentence())
    print(f"  critical value  {cv.value:.6g}  ({_source_text(cv)}{_interval_text(cv)})")
    print(f"  p-value         {pv.formatted(4)}  ({_source_text(pv)}{_interval_text(pv)})")
    return 0


def _p_value_parser(sub) -> None:
    p = sub.add_parser("p-value", help="p-value of a winner's score against the best of C random classifiers")
    p.add_argument("metric", type=metric_name, help=f"metric: {known_metrics_text()}")
    p.add_argument("score", type=float, help="the winner's score on the test set")
    _cell_arguments(p, alpha=False, multiclass=True)
    p.set_defaults(run=_run_p_value)


def _run_p_value(args) -> int:
    from tablegen.lookup.api import p_value

    table = table_for(args)  # a bad --table is the first error
    answer = p_value(args.metric, args.P, args.N, args.C, score=args.score, method=args.method, R=args.R,
                     seed=args.seed, table=table, progress=ProgressLine(), **_design(args))
    if args.json:
        print(json_text({"metric": args.metric, "score": args.score, **_where(args), "C": args.C,
                         "p_value": answer.to_dict()}))
        return 0
    print(f"{args.metric} = {args.score:g} against the best of C = {args.C:,} random classifiers at "
          f"{_where_text(args)}: p-value {answer.formatted(4)} ({_source_text(answer)}{_interval_text(answer)})")
    return 0
