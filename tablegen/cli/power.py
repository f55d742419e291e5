"""``tablegen power``, ``sample-size``, ``minimum-detectable`` and ``max-models``: plan a test set.

The command-line side of :mod:`tablegen.lookup.power`: the power of the best-of-C test against a model of given
AUC (exact under the Lehmann alternative, Monte Carlo with its interval under the binormal one), the smallest test
set that reaches a target power (first and stable sizes: exact power is saw-toothed; by Monte Carlo the first size
certified to reach it and the estimate's), the smallest AUC a test set detects, and how many models a test set can
take.  Each prints the result's sentence (``--json``: its fields);
``tablegen power --plot FILE`` draws the power curve (:func:`tablegen.lookup.power_plot.plot_power_curve`).  Each
parser sets its run function with ``set_defaults(run=...)``; registered by :mod:`tablegen.cli.main`.
"""

from __future__ import annotations

import sys

from tablegen.cli.options import metric_name, storage_options_argument, table_for
from tablegen.common.outputs import json_text
from tablegen.compute.metrics import known_metrics_text
from tablegen.errors import TablegenInputError

_C_HELP = "classifiers compared on this test set, every model tried counted (the winner is the best of C)"
_ALPHA_HELP = "significance level (as lookup: Forman & Cohen's tables are at 0.01)"


def add_power_parsers(sub) -> None:
    """Add ``power``, ``sample-size``, ``minimum-detectable`` and ``max-models``, each with its ``run`` default."""
    _power_parser(sub)
    _sample_size_parser(sub)
    _minimum_detectable_parser(sub)
    _max_models_parser(sub)


def winners_text(text: str) -> int | str:
    """``--winners``: ``all`` or an integer (argparse ``type``); the library checks its range against C.

    Examples
    --------
    >>> winners_text("all"), winners_text("3")
    ('all', 3)
    """
    if text == "all":
        return text
    try:
        return int(text)
    except ValueError:
        raise TablegenInputError(f"--winners must be an integer in [1, C] or 'all', got {text!r}") from None


def _metric(p) -> None:
    p.add_argument("metric", type=metric_name, help=f"metric: {known_metrics_text()}")


def _common(p, auc: bool = True, target: bool = True, winners: bool = True) -> None:
    if auc:
        p.add_argument("--auc", type=float, required=True,
                       help="AUC of the model to detect, in [0.5, 1) (Lehmann: positives' scores have CDF F^k, "
                            "k = AUC/(1 - AUC))")
    p.add_argument("--alpha", type=float, default=0.01, help=_ALPHA_HELP)
    if target:
        p.add_argument("--power", type=float, default=0.8, help="target power, in (0, 1)")
    if winners:
        p.add_argument("--winners", type=str, default="1", metavar="W|all",
                       help="how many of the C models are that good: 1 (one informative model among C), "
                            "or all (the winner of C equally good models)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _winners(args) -> int | str:
    return winners_text(args.winners)


def _print(result, args) -> None:
    print(json_text(result.to_dict()) if args.json else result.sentence())


# -- power ------------------------------------------------------------------------------------------------------
def _power_parser(sub) -> None:
    p = sub.add_parser("power", help="power of the best-of-C test against a model of given AUC (exact or "
                                     "Monte Carlo)")
    _metric(p)
    p.add_argument("--P", type=int, required=True, help="positives in the test set")
    p.add_argument("--N", type=int, required=True, help="negatives in the test set")
    p.add_argument("--C", type=int, required=True, help=_C_HELP)
    _common(p, target=False)
    _simulation_arguments(p)
    p.add_argument("--plot", default=None, metavar="FILE",
                   help="draw the power curve (power against P + N at this prevalence, C = 1, 10, 100, 1000 "
                        "and this C; exact, Lehmann)")
    p.set_defaults(run=_run_power)


def _simulation_arguments(p) -> None:
    """``--model``, ``--R`` and ``--seed``: the alternative, and the replicates and seed of a simulated answer."""
    p.add_argument("--model", choices=("lehmann", "binormal"), default="lehmann",
                   help="lehmann: exact where its programme runs (beyond it Monte Carlo, and the answer says "
                        "so); binormal (positives N(d, 1), negatives N(0, 1)): Monte Carlo, 95%% interval")
    p.add_argument("--R", type=int, default=None,
                   help="replicates, if the answer is simulated (binormal, or beyond the exact Lehmann programme; "
                        "default: a 95%% interval of +-0.005 of the power)")
    p.add_argument("--seed", type=int, default=None,
                   help="root seed, if the answer is simulated (default 2005: the same question, the same answer)")


def _run_power(args) -> int:
    from tablegen import power

    _check_simulation_options(args)
    if args.plot is not None and args.model != "lehmann":
        raise TablegenInputError("--plot draws exact power, under the Lehmann alternative: give --model lehmann, "
                                 "or leave out --plot")
    result = power(args.metric, args.P, args.N, args.C, args.alpha, auc=args.auc, model=args.model,
                   winners=_winners(args), R=args.R, seed=args.seed)
    _print(result, args)
    if args.plot is not None:
        _plot(args, result)
    return 0


def _check_simulation_options(args) -> None:
    """``--R`` and ``--seed`` checked whether or not the answer is simulated (an exact answer ignores them; a bad value
    is refused all the same, naming the option)."""
    from tablegen.compute.validation import check_replicates, check_seed

    if args.R is not None:
        if args.R < 1:
            raise TablegenInputError(f"--R must be a positive integer, got {args.R}")
        check_replicates(args.R, (), ())  # at most 2**53
    if args.seed is not None:
        check_seed("--seed", args.seed, allow_none=False)


def _plot(args, result) -> None:
    from tablegen.cli.images import image_errors
    from tablegen.lookup.power_plot import DEFAULT_CS, plot_power_curve

    n = result.P + result.N
    with image_errors("--plot", args.plot):
        plot_power_curve(result.metric, result.auc, result.P / n, Cs=sorted({*DEFAULT_CS, result.C}),
                         alpha=result.alpha, winners=_winners(args), path=args.plot)
    print(f"wrote {args.plot}", file=sys.stderr if args.json else sys.stdout)  # with --json, stdout holds JSON


# -- sample size ------------------------------------------------------------------------------------------------
def _sample_size_parser(sub) -> None:
    p = sub.add_parser("sample-size", help="the smallest test set whose power reaches a target (exact: first and "
                                           "stable sizes; Monte Carlo: certified and estimated first sizes)")
    _metric(p)
    p.add_argument("--C", type=int, required=True, help=_C_HELP)
    line = p.add_mutually_exclusive_group(required=True)
    line.add_argument("--prevalence", type=float, default=None, help="grow P + N at this prevalence P/(P + N)")
    line.add_argument("--P", type=int, default=None, help="fix the positives, grow N")
    line.add_argument("--N", type=int, default=None, help="fix the negatives, grow P")
    _common(p)
    p.add_argument("--max-size", type=int, default=100_000,
                   help="the largest size searched (P + N, or the free class)")
    _simulation_arguments(p)
    p.set_defaults(run=_run_sample_size)


def _run_sample_size(args) -> int:
    from tablegen import sample_size

    _check_simulation_options(args)
    result = sample_size(args.metric, auc=args.auc, C=args.C, alpha=args.alpha, power=args.power,
                         prevalence=args.prevalence, P=args.P, N=args.N, winners=_winners(args),
                         max_size=args.max_size, model=args.model, R=args.R, seed=args.seed)
    _print(result, args)
    return 0


# -- minimum detectable -----------------------------------------------------------------------------------------
def _minimum_detectable_parser(sub) -> None:
    p = sub.add_parser("minimum-detectable", help="the smallest AUC the best-of-C test detects with a target power "
                                                  "(exact, Lehmann; or Monte Carlo with its interval)")
    _metric(p)
    p.add_argument("--P", type=int, required=True, help="positives in the test set")
    p.add_argument("--N", type=int, required=True, help="negatives in the test set")
    p.add_argument("--C", type=int, required=True, help=_C_HELP)
    _common(p, auc=False)
    _simulation_arguments(p)
    p.add_argument("--table", default=None, metavar="STORE",
                   help="read the tabulated answer from this store ('bundled': the bundled table) instead of "
                        "searching; it must hold the minimum detectable AUC at this cell, C, alpha and power")
    storage_options_argument(p)
    p.set_defaults(run=_run_minimum_detectable)


def _run_minimum_detectable(args) -> int:
    from tablegen import minimum_detectable

    _check_simulation_options(args)
    table = True if args.table == "bundled" and args.storage_options is None else table_for(args)
    result = minimum_detectable(args.metric, args.P, args.N, args.C, args.alpha, power=args.power,
                                winners=_winners(args), model=args.model, R=args.R, seed=args.seed, table=table)
    _print(result, args)
    return 0


# -- max models -------------------------------------------------------------------------------------------------
def _max_models_parser(sub) -> None:
    p = sub.add_parser("max-models", help="how many models a test set can take before a model of given AUC stops "
                                          "being detected")
    _metric(p)
    p.add_argument("--P", type=int, required=True, help="positives in the test set")
    p.add_argument("--N", type=int, required=True, help="negatives in the test set")
    _common(p, winners=False)
    _simulation_arguments(p)
    p.add_argument("--bound", type=int, default=10**12, help="the largest C searched")
    p.set_defaults(run=_run_max_models)


def _run_max_models(args) -> int:
    from tablegen import max_models

    _check_simulation_options(args)
    result = max_models(args.metric, args.P, args.N, auc=args.auc, alpha=args.alpha, power=args.power,
                        bound=args.bound, model=args.model, R=args.R, seed=args.seed)
    _print(result, args)
    return 0
