"""The K-class report of :func:`tablegen.evaluate`: labels with more than two classes and each model's predicted
labels (or probability matrix, or confusion matrix), every multi-class metric answered together.

Per metric (accuracy, Cohen's kappa, balanced accuracy, macro-F1; for probability matrices on request Hand–Till
AUC, one-vs-rest macro AUC, top-k accuracy): each model's value with its 95% bootstrap interval; every model against
the best of C random classifiers with its own predicted counts (probability rows), the winner the model with the
smallest p-value; the max-T test over the models given (one label permutation applied to every model); the winner
(largest value) against each other model (exact McNemar on accuracy, the swap permutation on the others; one-sided,
Holm) and the confidence set of the best.  How each is computed: :mod:`.multiclass_tests` and
:mod:`.multiclass_resampling` (label metrics), :mod:`.multiclass_probabilities` (probability metrics); the input:
:mod:`.multiclass_input`; the answer's types: :mod:`.multiclass_results`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

import numpy as np
from numpy.typing import ArrayLike

from tablegen.compare.report.multiclass_results import (  # the report's types: importable from here, as before
    P_COLUMNS,  # noqa: F401
    MulticlassEvaluation,
    MulticlassMetricReport,
)
from tablegen.compare.report.multiclass_tests import METRICS
from tablegen.errors import Argument, TablegenInputError

logger = logging.getLogger(__name__)

#: Metrics of the probability matrices themselves (:func:`tablegen.multiclass_scores_test`), on request only (and
#: ``top_<k>_accuracy``): answered as the label metrics are (:mod:`.multiclass_probabilities`).
SCORE_METRICS = ("hand_till_auc", "ovr_macro_auc")
#: Single-core seconds per (replicate, model, item) step of the label-permutation pass, per (resample, model, item)
#: step of the bootstrap, and per (pattern, differing item) step of a pair's swap test (measured on an AMD EPYC
#: core under load, ``benchmarks/bench_evaluate_multiclass.py``), rounded up.
PERMUTATION_STEP_SECONDS = 2e-9
BOOTSTRAP_STEP_SECONDS = 3e-9
SWAP_STEP_SECONDS = 3e-9
#: The probability metrics' steps (:mod:`.multiclass_probabilities`; measured on an AMD EPYC core at load 4 to 12,
#: ``benchmarks/bench_evaluate_multiclass.py``), rounded up: per (replicate or resample, model, item, class) of a
#: column walk (0.8 to 1.1 ns, 1.5 to 2 ns under heavy load); per (replicate, model, item) of the rank sums or of one
#: top-k credit sum, and per (pattern, item, column) of the swap sums; per (class, class, item) of a pair's
#: influences (two binary searches each).
SCORES_WALK_STEP_SECONDS = 2e-9
SCORES_ITEM_STEP_SECONDS = 2e-9
INFLUENCE_STEP_SECONDS = 1e-7


def multiclass_cost(data, metrics: tuple, C: int, R: int, swaps: int, resamples: int,
                    score_metrics: tuple = ()) -> object:
    """The estimated single-core seconds of each step of the K-class report
    (:class:`~tablegen.compare.report.cost.EvaluationCost`), before any work.

    Examples
    --------
    >>> from tablegen.compare.report.multiclass_input import multiclass_data
    >>> data = multiclass_data([0, 1, 2] * 100, {"a": [0, 1, 1] * 100, "b": [2, 1, 0] * 100})
    >>> cost = multiclass_cost(data, ("accuracy",), 2, 10_000, 10_000, 2000)
    >>> sorted(cost.steps), cost.seconds < 1
    ([('accuracy', 'paired'), ('bootstrap',), ('null',), ('verdicts',)], True)
    """
    from tablegen.compare.report.cost import EvaluationCost
    from tablegen.compare.report.multiclass_tests import (
        EXACT_ARRANGEMENTS,
        EXACT_SECONDS,
        enumerated_arrangements,
        exact_seconds,
    )

    M, n = len(data.predicted), data.n
    true = data.true_counts()
    exact_null = enumerated_arrangements(true, EXACT_ARRANGEMENTS) is not None
    steps = {("null",): PERMUTATION_STEP_SECONDS * (EXACT_ARRANGEMENTS if exact_null else R) * M * n,
             ("bootstrap",): BOOTSTRAP_STEP_SECONDS * resamples * M * n, ("verdicts",): 0.0}
    if not exact_null:
        for model in data.predicted.values():
            predicted = np.bincount(model, minlength=data.K)
            for metric in metrics:
                seconds = exact_seconds(metric, true, predicted)
                steps["verdicts",] += seconds if seconds <= EXACT_SECONDS else 0.0
    for metric in metrics:
        if metric != "accuracy" and data.paired and M > 1:
            steps[metric, "paired"] = SWAP_STEP_SECONDS * swaps * (M - 1) * n / max(1, len(metrics) - 1)
        else:
            steps[metric, "paired"] = 0.0
    if score_metrics:
        steps.update(_scores_seconds(score_metrics, true, data.K, M, R, swaps, resamples))
    return EvaluationCost(tuple(metrics) + tuple(score_metrics), steps)


def _scores_seconds(metrics: tuple, true_counts, K: int, M: int, R: int, swaps: int, resamples: int) -> dict:
    """The probability metrics' steps (:mod:`.multiclass_probabilities`): the pass (per (arrangement, model, item)
    the rank sums and top-k credits, and the Hand–Till walk of every column where asked), the bootstrap (a walk of
    every column per resample and model), and each metric's share of the paired tests at their cap (every pair
    drawing ``swaps`` patterns of the items' influences; the bound and the sequential rule stop most pairs far
    earlier)."""
    from tablegen.compare.report.multiclass_tests import enumerated_arrangements
    from tablegen.lookup import multiclass_scores as scores

    n = int(np.sum(true_counts))
    arrangements = enumerated_arrangements(true_counts, scores.EXACT_ARRANGEMENTS)
    steps = R if arrangements is None else arrangements
    tops = sum(1 for metric in metrics if metric not in SCORE_METRICS)
    walk = K * SCORES_WALK_STEP_SECONDS
    per_item = (1 + tops) * SCORES_ITEM_STEP_SECONDS + (walk if "hand_till_auc" in metrics else 0.0)
    width = 2 + tops  # a pattern sums each item's influence once per column; the influences cost K^2 searches
    paired = (M - 1) * (min(swaps, 1 << n) * n * width * SCORES_ITEM_STEP_SECONDS
                        + K * K * n * INFLUENCE_STEP_SECONDS)
    return {("scores null",): steps * M * n * per_item,
            ("scores bootstrap",): resamples * M * n * (walk + tops * SCORES_ITEM_STEP_SECONDS),
            **{(metric, "scores paired"): paired / len(metrics) for metric in metrics}}


def evaluate_multiclass(labels: ArrayLike | None, scores: ArrayLike | Mapping[str, ArrayLike], *,
                        C: int | None = None, metrics: list[str] | None = None, alpha: float = 0.05,
                        R: int | None = None, seed: int | None = None,
                        progress: Callable[[float, float], None] | None = None,
                        max_seconds: float | None = None, positive_label: object = None,
                        method: str = "auto", device: str = "cpu") -> MulticlassEvaluation:
    """The K-class report (what :func:`tablegen.evaluate` answers where the labels have more than two classes).

    Parameters
    ----------
    labels : sequence of hashable values
        Each item's true class (strings, integers, ...).  With confusion matrices: the K class names in the
        matrices' row order (or None: 0..K-1).
    scores : mapping, pandas.DataFrame or one model's predictions
        Model name -> predicted labels (one per item), or -> n x K probability matrix (columns: the classes of the
        labels, sorted; the prediction is the row's largest probability), or -> K x K confusion matrix of counts
        (rows true); :mod:`~tablegen.compare.report.multiclass_input` says how each is checked.
    C : int, optional
        Every model tried, discarded ones too (default and least: the number given).
    metrics : list of str, optional
        Any of ``accuracy``, ``kappa``, ``balanced_accuracy``, ``macro_f1`` (default all four); for probability
        matrices also ``hand_till_auc``, ``ovr_macro_auc`` and ``top_<k>_accuracy`` (each model's value and its
        verdict against random classifiers, :func:`tablegen.multiclass_scores_test`).
    alpha : float
        Level of every verdict (default 0.05).
    R : int, optional
        Label permutations of the null's pass and swap patterns of each paired test where they are not
        enumerated (default :func:`~tablegen.lookup.multiclass.default_replicates` for the pass, 10,000 swaps).
    seed : int, optional
        Root seed of every stream (default 2005).
    progress : callable, optional
        ``progress(done, total)`` in estimated single-core seconds, told as the steps end.
    max_seconds : float, optional
        Refuse, before any work, a report whose estimate exceeds this (default ``TABLEGEN_TIME_LIMIT``, else one
        hour); with ``device="cuda"`` the estimate of the CPU's part alone (the steps on the GPU are named as not
        estimated).
    positive_label, method :
        Binary options of :func:`tablegen.evaluate`: with more than two classes only their defaults (None, "auto")
        are accepted.
    device : {"cpu", "cuda", "auto"}
        Where the label permutations, swap patterns and bootstrap resamples are scored: ``"cuda"`` runs the kernels'
        CUDA twins on a GPU, the same keyed streams, so the same report bit for bit (an error naming ``device`` where
        there is no GPU); ``"auto"`` a GPU if one is visible, else the CPU.  Enumerations run on the CPU.

    Returns
    -------
    MulticlassEvaluation

    Examples
    --------
    >>> y = ["cat", "dog", "fox"] * 6
    >>> report = evaluate_multiclass(y, {"m": ["cat", "dog", "fox"] * 5 + ["dog", "fox", "cat"]},
    ...                              metrics=["accuracy", "kappa"])
    >>> round(report["accuracy"].values["m"], 4), report["accuracy"].versus_random.tests["m"].method
    (0.8333, 'exact')
    """
    from tablegen.compare.pairwise.bootstrap import BOOTSTRAP_RESAMPLES
    from tablegen.compare.pairwise.tests import DEFAULT_SWAPS
    from tablegen.compare.report import multiclass_probabilities as probabilities
    from tablegen.compare.report import multiclass_resampling as resampling
    from tablegen.compare.report import multiclass_tests as tests
    from tablegen.compare.report.cost import ReportSteps, check_report_time, multiclass_gpu_steps, on_device
    from tablegen.compare.report.multiclass_input import multiclass_data
    from tablegen.compare.report.multiclass_selection import selection as max_t
    from tablegen.compute.cell import DEFAULT_SEED
    from tablegen.compute.kernels.cuda.device import resolve_device
    from tablegen.compute.limits import check_memory
    from tablegen.compute.validation import MAX_REPLICATES, check_alpha, check_competitors, check_integer, check_seed
    from tablegen.lookup.multiclass import default_replicates

    if positive_label is not None or method != "auto":
        which = Argument("positive_label") if positive_label is not None else Argument("method", str(method))
        raise TablegenInputError.naming(which, " applies to two classes only; the labels have more than two (the "
                                        "K-class report tests every class alike and chooses its methods itself)")
    device = resolve_device(device)
    data = multiclass_data(labels, scores)
    metrics, score_metrics = _check_metrics(metrics, data.source)
    alpha = check_alpha("alpha", alpha)
    M = len(data.predicted)
    C = M if C is None else check_competitors(C)
    if C < M:
        raise TablegenInputError.naming(Argument("C"), f" = {C} is less than the {M} models given: C counts every "
                                        "model tried, so it is at least the number given")
    if R is not None:
        R = check_integer("R", R, 1)
        if R > MAX_REPLICATES:
            raise TablegenInputError.naming(Argument("R"), f" must be at most 2**53, got {R:,}")
    seed = DEFAULT_SEED if seed is None else check_seed("seed", seed, allow_none=False)
    replicates = default_replicates(C, alpha) if R is None else R
    swaps = DEFAULT_SWAPS if R is None else R
    cost = multiclass_cost(data, metrics, C, replicates, swaps, BOOTSTRAP_RESAMPLES, score_metrics)
    cost = on_device(cost, device, multiclass_gpu_steps(cost, data.true_counts()))  # the GPU's steps: not estimated
    check_report_time(cost, f"evaluating {M:,} models on {data.n:,} items in {data.K} classes",
                      ("pass fewer models, fewer ", Argument("metrics"), ", fewer replicates (", Argument("R"),
                       "), or a larger ", Argument("max_seconds")), max_seconds)
    # the label metrics' and the probability metrics' passes (enumerated ones: every arrangement, whatever R) and
    # bootstraps, with their readers' copies, and every model's tables
    true = data.true_counts()
    scores_bytes = (probabilities.scores_memory(true, data.K, M, score_metrics, replicates, BOOTSTRAP_RESAMPLES)
                    if score_metrics else 0.0)
    check_memory(tests.labels_memory(true, M, replicates, BOOTSTRAP_RESAMPLES) + scores_bytes,
                 f"the K-class report's permutation pass and bootstrap ({M:,} models, R = {replicates:,})",
                 ("pass fewer models or fewer replicates (", Argument("R"), ")"))
    logger.info("evaluate (K = %d): %s (%s)", data.K, cost.summary(), cost.describe())
    step = ReportSteps(cost, progress)
    prep = tests.prepare(data)
    observed = tests.observed_values(prep)
    null = tests.permutation_null(prep, replicates, seed, step.within("null"), device)
    step.done("null")
    boot = resampling.bootstrap(prep, observed, BOOTSTRAP_RESAMPLES, seed, step.within("bootstrap"), device)
    step.done("bootstrap")
    swap_cache = resampling.SwapCache(prep, swaps, seed, device)
    notes = _input_notes(data, C, M)
    reports = {}
    for metric in metrics:
        column = METRICS.index(metric)
        verdict = tests.versus_random(prep, observed, null, metric, C, alpha, seed, device)
        selection = others = None
        if data.paired:
            selection = max_t(prep.names, observed, null, metric, alpha)
            if M > 1:
                others = resampling.paired_tests(prep, observed, metric, alpha, swap_cache, boot)
        reports[metric] = _metric_report(metric, prep.names, observed[:, column], boot, column, verdict, selection,
                                         others)
        if metric == metrics[0]:
            step.done("verdicts")
        step.done(metric, "paired")
        logger.info("evaluate (K = %d): %s done", data.K, metric)
    if score_metrics:
        reports.update(_score_reports(data, score_metrics, C, alpha, replicates, swaps, seed, step, device))
    step.finish()
    return MulticlassEvaluation(data.n, data.classes, tuple(prep.true_counts.tolist()), C, alpha, prep.names,
                                data.source, reports, {name: data.confusion(name) for name in prep.names}, notes)


def _check_metrics(metrics, source: str) -> tuple[tuple, tuple]:
    """(the label metrics, the probability-matrix metrics) named, checked."""
    import re

    if metrics is None:
        return METRICS, ()
    names = [metrics] if isinstance(metrics, str) else list(metrics) if isinstance(metrics, (list, tuple)) else None
    known = [m for m in (names or []) if isinstance(m, str)]
    labels = [m.lower() for m in known if m.lower() in METRICS]
    scores = [m.lower() for m in known
              if m.lower() in SCORE_METRICS or re.fullmatch(r"top_[1-9]\d*_accuracy", m.lower())]
    if not names or len(labels) + len(scores) != len(names):
        raise TablegenInputError.naming(
            Argument("metrics"), f" must name some of {', '.join(METRICS)} (and, for probability matrices, "
            f"{', '.join(SCORE_METRICS)}, top_<k>_accuracy) for labels with more than two classes, got {metrics!r}")
    if scores and source != "probabilities":
        raise TablegenInputError.naming(
            Argument("metrics"), f" names {', '.join(scores)}, metrics of probability matrices; the models are given "
            f"as {'confusion matrices' if source == 'confusion' else 'predicted labels'}")
    return tuple(dict.fromkeys(labels)), tuple(dict.fromkeys(scores))


def _metric_report(metric: str, names: tuple, x: np.ndarray, boot, column: int, verdict, selection,
                   others) -> MulticlassMetricReport:
    """One metric's report from its answers: the values ``x`` (M,), the bootstrap's intervals of ``column``, the
    winner (largest value, the first given of a tie) and the notes."""
    values = {name: float(x[m]) for m, name in enumerate(names)}
    intervals = {name: boot.interval(m, column) for m, name in enumerate(names)}
    notes = tuple(f"no bootstrap interval for the {metric} of {name!r}: the resamples' law is degenerate (BCa "
                  "undefined)" for name, v in intervals.items() if v is None)
    winner = names[int(np.argsort(-x, kind="stable")[0])]
    tied = [name for name, v in values.items() if v == values[winner]]
    if len(tied) > 1:
        notes += (f"{', '.join(tied)} tie for the best {metric} ({values[winner]:.4g}); the first given, {winner}, is "
                  "named the winner",)
    return MulticlassMetricReport(metric, values, intervals, winner, verdict, selection, others, notes)


def _score_reports(data, metrics: tuple, C: int, alpha: float, R: int, swaps: int, seed: int, step,
                   device: str = "cpu") -> dict:
    """The probability metrics' reports (:mod:`.multiclass_probabilities`): one pass of label permutations shared by
    the models and metrics (verdicts and max-T), one bootstrap, each pair's swap patterns serving every metric."""
    from tablegen.compare.pairwise.bootstrap import BOOTSTRAP_RESAMPLES
    from tablegen.compare.report import multiclass_probabilities as probabilities
    from tablegen.compare.report.multiclass_selection import selection

    sp = probabilities.prepare_scores(data, metrics)
    observed = probabilities.observed_scores(sp)
    null = probabilities.score_null(sp, R, seed, step.within("scores null"), device)
    step.done("scores null")
    boot = probabilities.score_bootstrap(sp, observed, BOOTSTRAP_RESAMPLES, seed, step.within("scores bootstrap"),
                                         device)
    step.done("scores bootstrap")
    pairs = probabilities.ScoreSwaps(sp, tuple(sp.column(metric) for metric in metrics), swaps, seed, device)
    reports = {}
    for metric in metrics:
        column = sp.column(metric)
        verdict = probabilities.score_verdicts(sp, observed, null, metric, C, alpha)
        chosen = selection(sp.names, observed, null, metric, alpha, sp.columns)
        others = (probabilities.score_paired_tests(sp, observed, metric, alpha, pairs, boot) if len(sp.names) > 1
                  else None)
        reports[metric] = _metric_report(metric, sp.names, observed[:, column], boot, column, verdict, chosen, others)
        step.done(metric, "scores paired")
        logger.info("evaluate (K = %d): %s done", data.K, metric)
    return reports


def _input_notes(data, C: int, M: int) -> tuple:
    notes = []
    if data.source == "confusion":
        notes.append("the models are given as confusion matrices, which do not say which item each prediction is "
                     "of: the max-T test and the paired tests between models need item-level predictions and are "
                     "not given; each model's verdict and interval use the items its matrix implies")
    if data.source == "probabilities":
        notes.append("the models are given as probability matrices: each item's predicted class is its largest "
                     "probability (the first class of a tie); metrics of the probabilities themselves (Hand-Till and "
                     "one-vs-rest AUC, top-k accuracy) are reported where metrics= names them, their verdicts and "
                     "max-T test from their own pass of label permutations (keyed as multiclass_scores_test keys its "
                     "replicates), their intervals from the label metrics' resamples")
    only_predicted = [c for c, count in zip(data.classes, data.true_counts()) if count == 0]
    if only_predicted:
        notes.append(f"classes predicted but absent from the labels ({', '.join(map(repr, only_predicted))}) count "
                     "as classes with no items: never a hit, left out of balanced accuracy, F1 = 0 in macro-F1 for "
                     "the models that predict them")
    if C > M and data.paired:
        notes.append(f"the max-T test is over the {M} models given; the {C - M} more tried but not given enter the "
                     "verdicts against random classifiers only (C)")
    return tuple(notes)
