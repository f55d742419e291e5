"""From labels and each model's scores to a verdict per metric.

Every metric is computed from the scores in tablegen's conventions
(:mod:`tablegen.compute.metrics_from_scores`, each metric's registry scorer: tied scores form one
threshold group; AUC counts a tied pair as ½).  Per metric, the winner is the model with the best value
(the first one listed, on a tie), and its value is tested against the best of C classifiers that learned
nothing, through :func:`tablegen.lookup.api.significance_test` (the answer policy: exact,
else the table, else a simulation).  **C must count every model tried, discarded ones too**: picking the
best of 20 models and passing only the 3 you kept overstates significance.  C defaults to the number of
models given.

A winner whose scores tie is tested, where the metric's registry entry has one, against the **exact
null given its tie groups**: the labels permuted uniformly over the items, the groups of tied scores
kept, i.e. against random classifiers with the same ties (the conditional null of StatXact and R's
coin; :mod:`tablegen.compute.exact.auc_ties` for ``auc``, exact up to a relative error bound stated
there).  Its p-value for the best of C is 1 - (1 - p)^C and its critical value is taken in that null.
Untied scores get the no-ties null, exactly as :func:`tablegen.lookup.api.significance_test` answers.

The other metrics are tested against the **no-ties null** (a random ranking with every score distinct),
which for them is conservative: for the ``best_*`` metrics (``best_mcc`` too) by construction, since
breaking the ties at random gives a uniformly random strict ranking whose metric (a maximum over more
cut-offs) is at least the tied one; ``tp_at_k`` and ``precision_at_k`` are exact (a tie straddling k
makes the metric undefined for that model, and otherwise every tie-breaking has the same TP_k); for
``average_precision`` in every case measured.  AUC against the no-ties null would not be: its half
credit fills the gap the discrete no-ties test leaves below alpha (with 100 distinct scores for 60 items,
P = N = 30, C = 1: level 0.0502, 95% CI [0.0499, 0.0505] at alpha = 0.05, measured by
``benchmarks/bench_tied_null.py --auc-only --trials 200000 --levels 30 100 --seed 99``), which is why it
is tested given its ties.  It still falls back to the no-ties null, with a note, when the table or a
simulation is asked for (``method="table"`` / ``"simulate"``) or the conditional null would exceed the
time limit under ``method="auto"``.  Every tied verdict carries a note saying which null tested it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from tablegen.compute.metrics import Metric, metric_entries
from tablegen.compute.metrics_from_scores import (
    BASE_SCORE_METRICS,
    check_binary_labels,
    check_model_scores,
    check_score_metric,
    threshold_groups,
)
from tablegen.compute.validation import check_alpha, check_competitors
from tablegen.errors import Argument, TablegenInputError
from tablegen.lookup.sequential import SEQUENTIAL_NOTE_START
from tablegen.lookup.verdicts import FromScoresResult, MetricVerdict

__all__ = ["FromScoresResult", "MetricVerdict", "question_nulls", "significance_test_from_scores", "ties_note"]

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from numpy.typing import ArrayLike

    from tablegen.compute.metric_nulls import ExactNulls
    from tablegen.lookup.table import Table

logger = logging.getLogger(__name__)

TIES_NOTE = ("the winner's scores have ties; they are tested against the no-ties null, which is conservative "
             "for this metric")
#: For a metric not conservative under every tie pattern (``ties_conservative`` false: AUC's half credit).
FEW_TIES_NOTE = ("the winner's scores have ties; they are tested against the no-ties null: with many ties that is "
                 "conservative, with few the level is about alpha (see significance_test_from_scores)")
#: A tied winner tested against the exact null given its tie groups (the registry's ``tied_null_routine``).
TIED_EXACT_NOTE = ("the winner's scores have ties; it is tested against the exact null given its tie groups "
                   "(labels permuted, tied scores kept together: random classifiers with the same ties)")


def ties_note(metric: Metric) -> str:
    """What testing a tied winner's ``metric`` (its registry entry) against the no-ties null means
    (module docstring).

    Examples
    --------
    >>> from tablegen.compute.metrics import get_metric
    >>> ties_note(get_metric("best_mcc")) == TIES_NOTE
    True
    """
    return TIES_NOTE if metric.ties_conservative else FEW_TIES_NOTE


def _checked(labels, scores, metrics, C, alpha, positive_label):
    y = check_binary_labels(labels, positive_label)
    models = check_model_scores(scores, y.size)
    if metrics is None:
        metrics = BASE_SCORE_METRICS
    metrics = [metrics] if isinstance(metrics, str) or not isinstance(metrics, Iterable) else list(metrics)
    if not all(isinstance(m, str) for m in metrics):
        raise TablegenInputError(f"metrics must be metric names, got {metrics!r}")
    if not metrics or len(set(metrics)) != len(metrics):
        raise TablegenInputError(f"metrics must name at least one metric, without duplicates; got {metrics}")
    metrics = metric_entries([check_score_metric(m) for m in metrics])
    C = len(models) if C is None else check_competitors(C)
    if C < len(models):
        raise TablegenInputError(f"C = {C} is less than the {len(models)} models given: C counts every model tried "
                                 "(discarded ones too), so it is at least the number of models")
    return y, models, metrics, C, check_alpha("alpha", alpha)


def _values(metric: Metric, groups: dict) -> tuple[dict[str, float], dict[str, str]]:
    """Each model's value of ``metric``, and why it is not defined for the models it is not."""
    values, not_applicable = {}, {}
    for name, g in groups.items():
        try:
            values[name] = metric.score_groups(g)
        except TablegenInputError as error:
            not_applicable[name] = str(error)
    return values, not_applicable


def _tied_for_best(values: dict[str, float], best: float) -> list[str]:
    """The models whose value equals the best (to 1e-12 relative: equal values reached by different sums)."""
    return [name for name, value in values.items() if abs(value - best) <= 1e-12 * max(1.0, abs(best))]


def _tied_for_best_note(metric: str, tied: list[str], best: float) -> str:
    """Says that two or more models share the best value, and which one the verdict names.

    Examples
    --------
    >>> _tied_for_best_note("auc", ["a", "b", "c"], 0.75)
    "3 models tie for the best auc (0.75): 'a', 'b' and 'c'; the winner named is the first listed, 'a'"
    """
    names = ", ".join(repr(name) for name in tied[:-1]) + f" and {tied[-1]!r}"
    return (f"{len(tied)} models tie for the best {metric} ({best:.4g}): {names}; the winner named is the first "
            f"listed, {tied[0]!r}")


def _not_applicable_note(metric: str, not_applicable: dict[str, str]) -> str:
    names = ", ".join(repr(name) for name in not_applicable)
    return (f"{metric} is not defined for {names} ({next(iter(not_applicable.values()))}); the winner is the best of "
            "the other models, and C still counts every model")


def _inverted_note(spec: Metric, score: float, P: int, N: int, C: int, alpha: float, below_tail) -> str | None:
    """A note when even the winner scores significantly below the middle of a symmetric null (e.g. AUC far below
    1/2): Pr(the best of C random classifiers <= score) = Pr(X <= score)**C <= alpha, with Pr(X <= score) =
    ``below_tail(low + high - score)`` (the upper tail of the mirrored null)."""
    if not spec.symmetric_null:
        return None
    low, high = spec.range(P, N)
    if score >= 0.5 * (low + high):
        return None
    below = float(below_tail(low + high - score)) ** C
    if below > alpha:
        return None
    return (f"the winner's {spec.name} = {score:.4g} is significantly below {0.5 * (low + high):g}, the middle of a "
            f"random classifier's (the best of {C} random ones scores this low with probability {below:.2g}): "
            "the scores or the positive label look inverted; say which label is positive with positive_label= "
            "(--positive-label) and check that higher scores mean 'more likely positive'")


def _tie_group_sizes(groups) -> np.ndarray:
    """Sizes of the groups of tied scores, in ascending score order (``threshold_groups`` reads them downwards)."""
    return (np.asarray(groups.group_pos, dtype=np.int64) + np.asarray(groups.group_neg, dtype=np.int64))[::-1]


def _tie_conditional_route(spec, sizes: np.ndarray, P: int, method: str) -> str | None:
    """None where the exact null given ties answers, else why the no-ties null does (for the note)."""
    if method not in ("auto", "exact"):
        return f"method={method!r} asks for the no-ties null's {'table' if method == 'table' else 'simulation'}"
    from tablegen.compute.limits import check_time, time_limit_seconds

    seconds = spec.tied_null_cost(sizes, P)[0]
    if method == "exact":
        from tablegen.lookup.api import naming_limit_errors

        with naming_limit_errors(way_out=("raise TABLEGEN_TIME_LIMIT or use ", Argument("method", "auto"),
                                          " (the no-ties null, with a note)")):
            check_time(seconds, f"the exact null of {spec.name} given the winner's {sizes.size:,} tie groups", "")
    elif seconds > time_limit_seconds():
        return (f"the exact null given its {sizes.size:,} tie groups would take about {seconds:,.0f} s, more than the "
                "time limit (TABLEGEN_TIME_LIMIT)")
    return None


def _tie_conditional_verdict(spec, sizes, score, P, N, C, alpha, nulls):
    """The verdict against the exact null given the tie groups ``sizes`` (ascending score), and that null."""
    from tablegen.compute.exact import null_critical_value, null_tail_ge
    from tablegen.compute.stats import p_value_from_tail, upper_tail_probability
    from tablegen.lookup.answers import Answer, verdict

    null = nulls.tied(spec, sizes, P)
    critical = float(null_critical_value(null, float(upper_tail_probability(C, alpha))))
    p = float(p_value_from_tail(null_tail_ge(null, score), C))
    pv = (Answer(p, p, p, "exact") if p > 0.0 else
          Answer(float(np.finfo(float).tiny), 0.0, float(np.finfo(float).tiny), "exact", bound="<"))
    return verdict(spec.name, score, P, N, C, alpha, Answer(critical, critical, critical, "exact"), pv)


def _verdict(spec: Metric, groups, values, not_applicable, P, N, C, alpha, method, answer, nulls) -> MetricVerdict:
    """The verdict on the best applicable model (``answer(metric, score)`` gives the no-ties SignificanceResult)."""
    from tablegen.compute.exact import null_tail_ge

    metric = spec.name
    notes = [_not_applicable_note(metric, not_applicable)] if not_applicable else []
    if not values:
        return MetricVerdict(metric, None, float("nan"), {}, None, False, not_applicable, tuple(notes))
    winner = max(values, key=values.get)
    score = values[winner]
    tied = _tied_for_best(values, score)
    if len(tied) > 1:
        notes.append(_tied_for_best_note(metric, tied, score))
    has_ties = bool(groups[winner].group_pos.size < P + N)
    logger.info("%s: winner %s with %g of %d models (C = %d)", metric, winner, score, len(groups), C)
    sizes = _tie_group_sizes(groups[winner])
    why_not = _tie_conditional_route(spec, sizes, P, method) if has_ties and spec.tied_null_routine else "untied"
    if why_not is None:
        result = _tie_conditional_verdict(spec, sizes, score, P, N, C, alpha, nulls)
        notes.insert(0, TIED_EXACT_NOTE)
        mirrored = nulls.tied(spec, sizes[::-1], P) if score < 0.5 * sum(spec.range(P, N)) else None
        below_tail = (lambda x: null_tail_ge(mirrored, x)) if mirrored is not None else None
    else:
        result = answer(metric, score)
        notes += [note for note in result.notes if note.startswith(SEQUENTIAL_NOTE_START)]
        if has_ties:
            notes.insert(0, ties_note(spec) + ("" if why_not == "untied" or spec.tied_null_routine is None
                                                 else f" ({why_not})"))
        below_tail = _no_ties_tail(spec, P, N, nulls)
    inverted = _inverted_note(spec, score, P, N, C, alpha, below_tail) if below_tail else None
    if inverted:
        notes.append(inverted)
    return MetricVerdict(metric, winner, score, values, result, has_ties, not_applicable, tuple(notes),
                         tie_conditional=why_not is None,
                         tie_conditional_p_values=_tie_conditional_p_values(spec, groups, values, P, N, C, method,
                                                                            nulls))


def _tie_conditional_p_values(spec: Metric, groups, values: dict, P: int, N: int, C: int, method: str,
                              nulls) -> dict:
    """Every applicable model's exact p-value against the best of C random classifiers with its own ties
    (:attr:`MetricVerdict.tie_conditional_p_values`)."""
    if spec.tied_null_routine is None or method not in ("auto", "exact"):
        return {}
    from tablegen.compute.exact import null_tail_ge
    from tablegen.compute.stats import p_value_from_tail

    out = {}
    winner = max(values, key=values.get)  # first: its null, just built for the verdict, is still kept (LRU)
    for name in sorted(values, key=lambda m: m != winner):
        value = values[name]
        sizes = _tie_group_sizes(groups[name])
        if sizes.size == P + N:
            null = nulls.untied(spec, P, N)
        elif _tie_conditional_route(spec, sizes, P, "auto") is None:
            null = nulls.tied(spec, sizes, P)
        else:
            continue
        out[name] = max(float(p_value_from_tail(null_tail_ge(null, value), C)), float(np.finfo(float).tiny))
    return {name: out[name] for name in values if name in out}  # in the order given


def _no_ties_tail(spec: Metric, P: int, N: int, nulls):
    """Pr(X >= x) under the metric's no-ties exact null, or None without one."""
    from tablegen.compute.exact import null_tail_ge

    return (lambda x: null_tail_ge(nulls.untied(spec, P, N), x)) if spec.has_exact else None


def question_nulls() -> ExactNulls:
    """The exact nulls of one question (:class:`tablegen.compute.metric_nulls.ExactNulls`), the no-ties ones those
    the lookups use (one object per (metric, P, N): the verdict's critical value and p-value, the tie-conditional
    p-values and the selection test's competitors not given share its work).

    Examples
    --------
    >>> nulls = question_nulls()
    >>> nulls.untied("auc", 30, 40) is nulls.untied("auc", 30, 40), list(nulls.builds.values())
    (True, [1])
    """
    from tablegen.compute.metric_nulls import ExactNulls
    from tablegen.lookup.api import lookup_null

    return ExactNulls(build=lookup_null)


def significance_test_from_scores(labels: ArrayLike, scores: ArrayLike | Mapping[str, ArrayLike],
                                  metrics: Sequence[str] | None = None, C: int | None = None, alpha: float = 0.01,
                                  positive_label: object = None, method: str = "auto", R: int | None = None,
                                  seed: int | None = None, table: Table | str | None = None,
                                  nulls: ExactNulls | None = None, device: str = "cpu") -> FromScoresResult:
    """Is the best of your models better than the best of C models that learned nothing?

    Parameters
    ----------
    labels : array_like
        The true classes of the test items: two distinct values (see ``positive_label``).
    scores : array_like, mapping or pandas.DataFrame
        One model's score vector; a 2-D array with one column per model; or a mapping (or
        DataFrame) model name -> score vector.  Higher scores mean "more likely positive".
    metrics : sequence of str, optional
        Default ``auc``, ``best_accuracy``, ``best_f1``, ``best_balanced_accuracy``,
        ``average_precision``; also ``best_mcc``,
        ``tp_at_<k>`` and ``precision_at_<k>`` (not defined for a model whose tied scores straddle
        the cut-off k: that model is left out of the metric's winner and named in ``not_applicable``).
    C : int, optional
        Competitors the winner was picked from.  **Count every model tried, discarded ones too.**
        Default: the number of models given.
    alpha : float
        Significance level (default 0.01, the level of Forman & Cohen's tables and of the bundled
        table, so the default question is answered from them; :func:`tablegen.evaluate`, whose report also
        compares the models with one another, defaults to 0.05).
    positive_label : optional
        The positive class; default 1 for {0, 1} or {-1, 1}, True for booleans.
    method, R, seed, table :
        Passed to :func:`tablegen.lookup.api.significance_test` (default: its answer policy, the bundled table).
        A tied AUC winner is tested given its ties under ``"auto"`` and ``"exact"``; ``"table"`` and
        ``"simulate"`` test it against the no-ties null (with a note).
    nulls : tablegen.compute.metric_nulls.ExactNulls, optional
        The exact nulls to use and keep (default: new ones, :func:`question_nulls`); pass the same object to
        other questions on the same labels (:func:`tablegen.compare.selection_test`) to build each null once.
    device : {"cpu", "cuda", "auto"}
        Where a simulated verdict scores its rankings (passed to :func:`tablegen.lookup.api.significance_test`; the
        same answer bit for bit).

    Returns
    -------
    FromScoresResult
        ``result["auc"].winner``, ``.score``, ``.significant``, ``.result`` (critical value,
        p-value, method); ``.sentence()``, ``.to_dict()``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.r_[np.ones(30), np.zeros(70)]
    >>> models = {"weak": rng.normal(size=100), "good": y + rng.normal(size=100)}
    >>> result = significance_test_from_scores(y, models, metrics=["auc"])
    >>> result["auc"].winner, result.C, result["auc"].significant
    ('good', 2, True)
    """
    from tablegen.compute.kernels.cuda.device import resolve_device
    from tablegen.compute.metric_nulls import checked_nulls
    from tablegen.lookup.api import significance_test

    y, models, metrics, C, alpha = _checked(labels, scores, metrics, C, alpha, positive_label)
    device = resolve_device(device)  # a GPU asked for and missing is refused before any work
    nulls = checked_nulls(nulls, question_nulls)
    P, N = int(y.sum()), int(y.size - y.sum())
    groups = {name: threshold_groups(y, s) for name, s in models.items()}

    def answer(metric, score):
        return significance_test(metric, P, N, C, alpha, score=score, method=method, R=R, seed=seed, table=table,
                                 device=device)

    verdicts = {spec.name: _verdict(spec, groups, *_values(spec, groups), P, N, C, alpha, method, answer, nulls)
                for spec in metrics}
    return FromScoresResult(P, N, C, alpha, tuple(models), verdicts)
