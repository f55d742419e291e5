"""From labels and each model's scores to a verdict per metric (DESIGN §1, §5, §7).

Every metric is computed from the scores in DESIGN §1's conventions
(:mod:`tablegen.compute.metrics_from_scores`, each metric's registry scorer: tied scores form one
threshold group; AUC counts a tied pair as ½).  Per metric, the winner is the model with the best value
(the first one listed, on a tie), and its value is tested against the best of C classifiers that learned
nothing, through :func:`tablegen.lookup.api.significance_test` (the answer policy of DESIGN §7: exact,
else the table, else a simulation).  **C must count every model tried, discarded ones too**: picking the
best of 20 models and passing only the 3 you kept overstates significance.  C defaults to the number of
models given.

Scores with ties are tested against the **no-ties null** (a random ranking with every score distinct).
For the ``best_*`` metrics (``best_mcc`` too) this is conservative, by construction: breaking the ties
at random gives a uniformly random strict ranking whose metric (a maximum over more cut-offs) is at
least the tied one, so a tied scorer that learned nothing exceeds the no-ties critical value at most as
often as alpha.  ``tp_at_k`` and ``precision_at_k`` are exact (a tie straddling k is refused, and
otherwise every tie-breaking has the same TP_k).  For ``average_precision`` it was conservative in every
case measured.  For ``auc`` it is conservative when ties are heavy; when they are light the level is
**about alpha, no longer below it**: the half-credit AUC falls between the no-ties values and fills the
gap the discrete no-ties test leaves below alpha.  Measured with random scorers giving 100 distinct
values to 60 items (P = N = 30, C = 1, 2,000,000 trials): 0.0502 (95% CI [0.0499, 0.0505]) at alpha =
0.05 against 0.0496 without ties, and 0.0101 [0.0099, 0.0102] at alpha = 0.01
(``benchmarks/bench_tied_null.py --auc-only --trials 200000 --levels 30 100 --seed 99``; without
``--auc-only`` it measures every metric).  The verdict carries a note whenever the winner's scores tie;
which note is registry data (:attr:`tablegen.compute.metrics.Metric.ties_conservative`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tablegen.compute.metrics import get_metric
from tablegen.compute.metrics_from_scores import (BASE_SCORE_METRICS, check_binary_labels, check_score_metric,
                                          metric_from_groups, threshold_groups)
from tablegen.compute.validation import check_alpha, check_integer
from tablegen.errors import TablegenInputError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from numpy.typing import ArrayLike

    from tablegen.lookup.table import Table

logger = logging.getLogger(__name__)

TIES_NOTE = ("the winner's scores have ties; they are tested against the no-ties null, which is conservative "
             "for this metric")
#: For a metric not conservative under every tie pattern (``ties_conservative`` false: AUC's half credit).
FEW_TIES_NOTE = ("the winner's scores have ties; they are tested against the no-ties null: with many ties that is "
                 "conservative, with few the level is about alpha (see significance_test_from_scores)")


def ties_note(metric: str) -> str:
    """What testing a tied winner's ``metric`` against the no-ties null means (module docstring).

    Examples
    --------
    >>> ties_note("best_mcc") == TIES_NOTE
    True
    """
    return TIES_NOTE if get_metric(metric).ties_conservative else FEW_TIES_NOTE


@dataclass(frozen=True)
class MetricVerdict:
    """The winner on one metric and the verdict on its score.

    Attributes
    ----------
    metric : str
    winner : str or None
        The best model among those the metric applies to (None if it applies to none).
    score : float
        The winner's value of the metric (NaN without a winner).
    scores : dict
        Every applicable model's value, in the order given.
    result : tablegen.SignificanceResult or None
        The answer of :func:`tablegen.lookup.api.significance_test` (critical value, p-value, method);
        None without a winner.
    winner_has_ties : bool
        Whether the winner's scores tie.
    not_applicable : dict
        Model -> why the metric is not defined on its scores (e.g. tied scores straddling the cut-off
        of ``precision_at_k``); those models are left out of the winner's choice, but still count in C.
    notes : tuple of str
        What the verdict's reader should know: how tied scores were tested, models left out, a winner
        whose scores look inverted.
    """

    metric: str
    winner: str | None
    score: float
    scores: dict
    result: object
    winner_has_ties: bool
    not_applicable: dict = field(default_factory=dict)
    notes: tuple = ()

    @property
    def significant(self) -> bool:
        return self.result is not None and bool(self.result.significant)

    def sentence(self) -> str:
        """The verdict in words, naming the winner, then the notes."""
        if self.result is None:
            text = f"{self.metric} is not applicable to any model."
        else:
            text = f"{self.winner} wins on {self.metric}: {self.result.sentence()}"
        return " ".join([text, *(f"Note: {note}." for note in self.notes)])

    def to_dict(self) -> dict:
        return {"metric": self.metric, "winner": self.winner,
                "score": None if self.result is None else self.score, "scores": dict(self.scores),
                "winner_has_ties": self.winner_has_ties, "not_applicable": dict(self.not_applicable),
                "notes": list(self.notes), "result": None if self.result is None else self.result.to_dict()}


@dataclass(frozen=True)
class FromScoresResult:
    """One :class:`MetricVerdict` per metric; index it by metric name.

    Attributes
    ----------
    P, N : int
        Positives and negatives among the labels.
    C : int
        Competitors the winner was picked from (every model tried).
    alpha : float
    models : tuple of str
    verdicts : dict
        Metric name -> :class:`MetricVerdict`, in the order asked.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.r_[np.ones(20), np.zeros(20)]
    >>> models = {"noise": rng.normal(size=40), "signal": y + rng.normal(size=40)}
    >>> result = significance_test_from_scores(y, models, metrics=["auc", "best_accuracy"])
    >>> result.P, result.N, result.C, result.models
    (20, 20, 2, ('noise', 'signal'))
    >>> [(v.metric, v.winner, v.score, v.significant) for v in result]
    [('auc', 'signal', 0.7575, True), ('best_accuracy', 'signal', 0.7, False)]
    >>> result["auc"].scores
    {'noise': 0.4325, 'signal': 0.7575}
    """

    P: int
    N: int
    C: int
    alpha: float
    models: tuple
    verdicts: dict

    def __getitem__(self, metric: str) -> MetricVerdict:
        return self.verdicts[metric]

    def __iter__(self):
        return iter(self.verdicts.values())

    def sentence(self) -> str:
        return " ".join(v.sentence() for v in self)

    def to_dict(self) -> dict:
        return {"P": self.P, "N": self.N, "C": self.C, "alpha": self.alpha, "models": list(self.models),
                "verdicts": [v.to_dict() for v in self]}


def _as_models(scores, n: int) -> dict[str, np.ndarray]:
    """``scores`` as {model name: float vector of length n}."""
    if isinstance(scores, dict):
        models = {str(k): v for k, v in scores.items()}
    elif hasattr(scores, "columns") and hasattr(scores, "to_numpy"):
        models = {str(c): scores[c].to_numpy() for c in scores.columns}
    else:
        array = np.asarray(scores)
        if array.ndim == 1:
            models = {"model": array}
        elif array.ndim == 2:
            if array.shape[0] != n and array.shape[1] == n:
                raise TablegenInputError(f"scores has shape {array.shape}: give one column per model, shape "
                                         f"({n}, models) (pass scores.T)")
            models = {f"model {j + 1}": array[:, j] for j in range(array.shape[1])}
        else:
            raise TablegenInputError(f"scores must be one vector, a 2-D array (items x models) or a mapping "
                                     f"name -> vector; got {array.ndim} dimensions")
    if not models:
        raise TablegenInputError("scores names no model")
    return {name: _model_scores(name, values, n) for name, values in models.items()}


def _model_scores(name: str, values, n: int) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TablegenInputError(f"scores of {name!r} must be numbers") from None
    if array.ndim != 1 or array.size != n:
        raise TablegenInputError(f"scores of {name!r} has {array.size} value(s) but labels has {n}: one score per "
                                 "labelled item")
    if not np.all(np.isfinite(array)):
        raise TablegenInputError(f"scores of {name!r} holds a missing or non-finite value (NaN/inf) at position "
                                 f"{int(np.argmax(~np.isfinite(array)))}")
    return array


def _checked(labels, scores, metrics, C, alpha, positive_label):
    y = check_binary_labels(labels, positive_label)
    models = _as_models(scores, y.size)
    if metrics is None:
        metrics = BASE_SCORE_METRICS
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if not metrics or len(set(metrics)) != len(metrics):
        raise TablegenInputError(f"metrics must name at least one metric, without duplicates; got {metrics}")
    metrics = [check_score_metric(m) for m in metrics]
    C = len(models) if C is None else check_integer("C", C, 1)
    if C < len(models):
        raise TablegenInputError(f"C = {C} is less than the {len(models)} models given: C counts every model tried "
                                 "(discarded ones too), so it is at least the number of models")
    return y, models, metrics, C, check_alpha("alpha", alpha)


def _values(metric: str, groups: dict) -> tuple[dict[str, float], dict[str, str]]:
    """Each model's value of ``metric``, and why it is not defined for the models it is not."""
    values, not_applicable = {}, {}
    for name, g in groups.items():
        try:
            values[name] = metric_from_groups(metric, g)
        except TablegenInputError as error:
            not_applicable[name] = str(error)
    return values, not_applicable


def _not_applicable_note(metric: str, not_applicable: dict[str, str]) -> str:
    names = ", ".join(repr(name) for name in not_applicable)
    return (f"{metric} is not defined for {names} ({next(iter(not_applicable.values()))}); the winner is the best of "
            "the other models, and C still counts every model")


def _inverted_note(metric: str, score: float, P: int, N: int, C: int, alpha: float) -> str | None:
    """A note when even the winner scores significantly below the middle of a symmetric null (e.g. AUC far below
    1/2): Pr(the best of C random classifiers <= score) = Pr(X <= score)**C <= alpha."""
    spec = get_metric(metric)
    if not spec.symmetric_null:
        return None
    low, high = spec.range(P, N)
    from tablegen.compute.metrics import exact_tail_ge

    below = exact_tail_ge(metric, P, N, low + high - score) ** C  # Pr(X <= s) = Pr(X >= low + high - s)
    if below > alpha:
        return None
    return (f"the winner's {metric} = {score:.4g} is significantly below {0.5 * (low + high):g}, the middle of a "
            f"random classifier's (the best of {C} random ones scores this low with probability {below:.2g}): "
            "the scores or the positive label look inverted; say which label is positive with positive_label= "
            "(--positive-label) and check that higher scores mean 'more likely positive'")


def _verdict(metric, groups, values, not_applicable, P, N, C, alpha, answer) -> MetricVerdict:
    """The verdict on the best applicable model (``answer(metric, score)`` gives its SignificanceResult)."""
    notes = [_not_applicable_note(metric, not_applicable)] if not_applicable else []
    if not values:
        return MetricVerdict(metric, None, float("nan"), {}, None, False, not_applicable, tuple(notes))
    winner = max(values, key=values.get)
    has_ties = bool(groups[winner].group_pos.size < P + N)
    logger.info("%s: winner %s with %g of %d models (C = %d)", metric, winner, values[winner], len(groups), C)
    result = answer(metric, values[winner])
    if has_ties:
        notes.insert(0, ties_note(metric))
    inverted = _inverted_note(metric, values[winner], P, N, C, alpha)
    if inverted:
        notes.append(inverted)
    return MetricVerdict(metric, winner, values[winner], values, result, has_ties, not_applicable, tuple(notes))


def significance_test_from_scores(labels: ArrayLike, scores: ArrayLike | Mapping[str, ArrayLike],
                                  metrics: Sequence[str] | None = None, C: int | None = None, alpha: float = 0.01,
                                  positive_label: object = None, method: str = "auto", R: int | None = None,
                                  seed: int | None = None, table: Table | str | None = None) -> FromScoresResult:
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
        ``average_precision``; also ``best_mcc`` (no exact null: the table or a simulation),
        ``tp_at_<k>`` and ``precision_at_<k>`` (refused when tied scores straddle the cut-off k,
        DESIGN §1).
    C : int, optional
        Competitors the winner was picked from.  **Count every model tried, discarded ones too.**
        Default: the number of models given.
    alpha : float
        Significance level.
    positive_label : optional
        The positive class; default 1 for {0, 1} or {-1, 1}, True for booleans.
    method, R, seed, table :
        Passed to :func:`tablegen.lookup.api.significance_test` (default: its answer policy, the bundled table).

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
    from tablegen.lookup.api import significance_test

    y, models, metrics, C, alpha = _checked(labels, scores, metrics, C, alpha, positive_label)
    P, N = int(y.sum()), int(y.size - y.sum())
    groups = {name: threshold_groups(y, s) for name, s in models.items()}

    def answer(metric, score):
        return significance_test(metric, score, P, N, C=C, alpha=alpha, method=method, R=R, seed=seed, table=table)

    verdicts = {metric: _verdict(metric, groups, *_values(metric, groups), P, N, C, alpha, answer)
                for metric in metrics}
    return FromScoresResult(P, N, C, alpha, tuple(models), verdicts)
