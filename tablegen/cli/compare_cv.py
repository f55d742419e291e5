"""``tablegen compare cv folds.csv``: two algorithms on one data set from (repeated) k-fold cross-validation.

A thin layer over :func:`tablegen.compare.cross_validated`: the CSV has one row per fold (fold j of run r
in the same row for both) and two columns of scores, named in the header; it prints the corrected
resampled t-test and the correlated Bayesian t-test (``--json``: ``result.to_dict()``).
"""

from __future__ import annotations

from tablegen.common.outputs import json_text
from tablegen.compare.datasets.cross_validation import cross_validated
from tablegen.compare.datasets.results_table import results_table
from tablegen.errors import TablegenInputError


def add_parser(subparsers) -> None:
    """The ``cv`` sub-subcommand of ``tablegen compare``."""
    p = subparsers.add_parser("cv", help="two algorithms from k-fold cross-validation on one data set: correlated "
                                         "Bayesian t-test and corrected resampled t-test")
    p.add_argument("folds", help="CSV: one row per fold, two columns of scores (header: the algorithms' names; "
                                 "'#' lines are comments)")
    p.add_argument("--runs", type=int, default=1, help="repetitions of k-fold cross-validation (default %(default)s)")
    p.add_argument("--rho", type=float, default=None,
                   help="correlation between folds: the test fraction n_test/n_total, in (0, 1) (default 1/k = "
                        "runs/folds)")
    p.add_argument("--rope", type=float, default=0.01,
                   help="half-width of the region of practical equivalence, in score units: >= 0, and < 1 for "
                        "scores in [0, 1] (default %(default)s)")
    p.add_argument("--probability", type=float, default=0.95,
                   help="posterior probability a decision needs, in [0.5, 1) (default %(default)s)")
    p.add_argument("--lower-is-better", action="store_true", help="the scores are errors or losses")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    """Run ``tablegen compare cv``."""
    X, algorithms, _ = results_table(args.folds)
    if X.shape[1] != 2:
        raise TablegenInputError(f"{args.folds}: needs exactly 2 columns of fold scores, got {X.shape[1]} "
                                 f"({', '.join(algorithms)})")
    result = cross_validated(X[:, 0], X[:, 1], runs=args.runs, rho=args.rho, rope=args.rope,
                             probability=args.probability, higher_is_better=not args.lower_is_better,
                             names=tuple(algorithms))
    print(json_text(result.to_dict()) if args.json else result.sentence())
    return 0
