"""Is the best of the models you tried better than chance, given how alike they are? (Westfall–Young max-T)

Forman & Cohen's tables compare the winner with the best of C *independent* random rankings.  Models from
one search are alike, so that null is conservative.  With every model's scores the exact null is the
label-permutation one: arrange the P positive labels over the n items at random (every one of the
C(n, P) arrangements equally likely), score every model on that arrangement, take the maximum.  Its law
keeps the models' real dependence and their ties; no independence is assumed.

- p-value of a model: Pr(value on a random arrangement >= its observed value) (raw), and the step-down
  adjusted p-value of Westfall & Young (1993): models ranked by observed value, the j-th tested against
  the maximum over itself and every model ranked below it, then made monotone; the winner's adjusted
  p-value is the max-T p-value Pr(max over models >= winner's value).  "Reaches" counts equality (values
  within the snap tolerance 1e-9 of each other are equal).  Beside it, the single-step adjusted p-value of
  Westfall & Young, every model against the maximum over all of them: p_j = Pr(max_k T_k >= t_j) (never
  below the step-down one, equal for the winner; simpler to state, less powerful for the others).
- Models tried but not given (``C`` > K): C - K independent random rankings join the maximum, so
  Pr(max < x) = Pr(maxT < x) Pr(X < x)^(C - K), X the metric's null for one random ranking (its exact
  law; where that is a rigorous bracket, its conservative end).
- Exact when every arrangement is enumerated within a budget, else R random arrangements: p-values
  (b + 1)/(R + 1) for b arrangements reaching the observed value (valid, never 0; Phipson & Smyth 2010) with
  the 95% Clopper–Pearson interval of the exact p-value, and a Dvoretzky–Kiefer–Wolfowitz band for the
  critical value.  A verdict whose interval contains alpha is marked not settled.
- Effective C: the number c of independent random competitors worth as much as the models: Pr(X < t)^c =
  Pr(max of the C < t) at the critical value t (a real number; :attr:`SelectionResult.effective_C`).
- Several metrics (:func:`selection_tests`): one set of arrangements scored for every metric at once (each model
  walked once per arrangement), each metric's answer what :func:`selection_test` gives it alone, bit for bit
  (the same arrangements: replicate r of the same key, or every arrangement).
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from tablegen.compare.selection.early import LOOK_LEVEL
from tablegen.compare.selection.engine import MetricPlan, null_counts_all
from tablegen.compare.selection.result import SelectionResult
from tablegen.compute.exact import null_critical_bracket, null_tail_ge_bracket
from tablegen.compute.exact.nulls import SNAP_TOLERANCE, TIE_RTOL
from tablegen.compute.metrics import Metric
from tablegen.compute.stats import CI_LEVEL, clopper_pearson
from tablegen.errors import TablegenInputError

if TYPE_CHECKING:
    from tablegen.compute.metric_nulls import ExactNulls

logger = logging.getLogger(__name__)

#: The width within which the fold asks a bracketed law for Pr(X >= a model's value) (average precision answers
#: from its coarse programmes where they bracket it that closely): the factor (1 - tail)^(C - K) then moves by less
#: than (C - K) times this.
FOLD_TAIL_WIDTH = 1e-15
#: The relative width within which the effective C takes Pr(X >= the critical value) from a programme the critical
#: value's search already ran (its decisions bracket tails to about 1e-9): c then moves by about 1e-6 relative at
#: most, far below its Monte Carlo error (the fraction of maxima below the critical value, from R arrangements).
EFFECTIVE_C_TAIL_RTOL = 1e-6



def selection_test(labels: ArrayLike, scores: ArrayLike | Mapping[str, ArrayLike], *, metric: str = "auc",
                   C: int | None = None, R: int | None = None, seed: int | None = None, alpha: float = 0.05,
                   positive_label: object = None, method: str = "auto", device: str = "cpu",
                   nulls: ExactNulls | None = None,
                   progress: Callable[[int, int], None] | None = None) -> SelectionResult:
    """Is the best of the models you tried better than chance, given how alike the models are?

    Parameters
    ----------
    labels : array_like
        The test items' true classes (two values; see ``positive_label``).
    scores : mapping, pandas.DataFrame or 2-D array
        Model name -> score vector (higher = more likely positive), or one column per model.
    metric : str
        Any metric computable from scores: ``auc``, ``best_accuracy``, ``best_f1``,
        ``best_balanced_accuracy``, ``average_precision``, ``best_mcc``, ``tp_at_<k>``, ``precision_at_<k>``.
    C : int, optional
        Every model tried, the ones not given too (default: the number given); C - K independent random
        rankings join the null.
    R, seed : int, optional
        Random arrangements (default 10,000) and root seed (default 2005) when the exact null is over budget.
    alpha : float
        Level of the verdict and of the critical value (default 0.05, the convention for comparing
        classifiers, as every test of :mod:`tablegen.compare`).
    positive_label : optional
        The positive class (default 1 for {0, 1} or {-1, 1}, True for booleans).
    method : {"auto", "exact", "permutation"}
        ``"auto"``: exact within the budget (C(n, P) <= 10⁶ arrangements), else permutation.
    device : {"cpu", "cuda", "auto"}
        Where random arrangements are scored (a GPU gives the same answer, bit for bit; exact
        enumeration runs on the CPU).
    nulls : tablegen.compute.metric_nulls.ExactNulls, optional
        Where the exact null of one random ranking (for the C - K competitors not given, and the effective C)
        is built once and kept; pass the object other questions on the same labels use
        (:func:`tablegen.significance_test_from_scores`) to share it (default: a new one).
    progress : callable, optional
        ``progress(done, total)``: told of the label arrangements scored, block by block (on the CPU).

    Returns
    -------
    SelectionResult

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> y = np.r_[np.ones(8), np.zeros(8)]
    >>> base = y + rng.normal(size=16)
    >>> models = {f"m{i}": base + 0.3 * rng.normal(size=16) for i in range(5)}
    >>> result = selection_test(y, models, metric="auc", alpha=0.05)
    >>> result.method, result.arrangements, result.winner
    ('exact', 12870, 'm1')
    >>> result.p_value <= min(result.raw_p_values.values()) * 5  # never above Bonferroni
    True
    >>> all(result.single_step_p_values[m] >= result.adjusted_p_values[m] for m in models)  # single-step
    True
    """
    from tablegen.compare.selection.validation import checked_selection

    q = checked_selection(labels, scores, metric, C, R, seed, alpha, positive_label, method, device, nulls)
    return _selections([q], progress)[q.spec.name]


def selection_tests(labels: ArrayLike, scores: ArrayLike | Mapping[str, ArrayLike], *, metrics: str | list[str],
                    C: int | None = None, R: int | None = None, seed: int | None = None, alpha: float = 0.05,
                    positive_label: object = None, method: str = "auto", device: str = "cpu",
                    nulls: ExactNulls | None = None,
                    progress: Callable[[int, int], None] | None = None) -> dict[str, SelectionResult]:
    """:func:`selection_test` of several metrics from one set of label arrangements, each scored for every metric.

    The models are sorted once, and each arrangement walks each model once for all the metrics; each metric's
    answer is the one :func:`selection_test` gives it alone with the same arguments, bit for bit (its arrangements
    are the same: every one, or replicates 0 .. R - 1 of the key of (seed, P, N)).  A metric whose question is
    refused (no law, or one over the limits, for the competitors not given) refuses the call before any
    arrangement is scored.

    Parameters
    ----------
    labels, scores
        As :func:`selection_test`.
    metrics : str or list of str
        The metrics (each as ``metric`` of :func:`selection_test`), each answered once.
    C, R, seed, alpha, positive_label, method, device, nulls
        As :func:`selection_test`.
    progress : callable, optional
        ``progress(done, total)``: told of the label arrangements scored (for every metric at once), block by block.

    Returns
    -------
    dict
        Metric name -> :class:`SelectionResult`, in the order given.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> y = np.r_[np.ones(8), np.zeros(8)]
    >>> models = {f"m{i}": y + rng.normal(size=16) for i in range(4)}
    >>> both = selection_tests(y, models, metrics=["auc", "best_f1"])
    >>> list(both), both["best_f1"].p_value == selection_test(y, models, metric="best_f1").p_value
    (['auc', 'best_f1'], True)
    """
    results, _ = selection_tests_noting(labels, scores, metrics=metrics, C=C, R=R, seed=seed, alpha=alpha,
                                        positive_label=positive_label, method=method, device=device, nulls=nulls,
                                        progress=progress, refuse=True)
    return results


def selection_tests_noting(labels, scores, *, metrics, C=None, R=None, seed=None, alpha=0.05, positive_label=None,
                           method="auto", device="cpu", nulls=None, progress=None, refuse: bool = False,
                           law_progress=None) -> tuple[dict[str, SelectionResult], dict[str, TablegenInputError]]:
    """:func:`selection_tests`, but a metric whose own question is refused once the shared arguments are checked
    (defined for no model given; no law, or one over the limits, for the competitors not given) is left out and its
    error returned (metric -> error), unless ``refuse`` (then raised, before any arrangement is scored); the other
    metrics are answered from one pass.  ``law_progress(metric)``: a ``progress(done, total)`` told of that
    metric's law's programmes for the competitors not given (or None)."""
    from tablegen.compare.selection.validation import checked_selections

    refused = None if refuse else {}
    questions = checked_selections(labels, scores, metrics, C, R, seed, alpha, positive_label, method, device, nulls,
                                   refused=refused)
    refused = {} if refused is None else refused
    ready, laws = [], []
    for q in questions:
        try:
            law = q.extra_null(_extra(q))  # first: a law over the limits is refused before the arrangements are run
        except TablegenInputError as error:
            if refuse:
                raise
            refused[q.spec.name] = error
            continue
        ready.append(q)
        laws.append(law)
    return (_selections(ready, progress, laws, law_progress) if ready else {}), refused


def _extra(q) -> int:
    """The competitors not given (a model the metric is undefined for is given, not random)."""
    return q.C - len(q.models) - len(q.not_applicable)


def _selections(questions: list, progress=None, laws: list | None = None,
                law_progress=None) -> dict[str, SelectionResult]:
    """Every question's result from shared arrangements: one pass per distinct R (0: exact; the metrics of a call
    differ in R only where their applicable models differ in number across the exact budget), each arrangement
    scored for every metric of its pass (``laws``: each question's law of a competitor not given, found here if
    None; ``law_progress(metric)``: a ``progress(done, total)`` for that metric's law's programmes, or None)."""
    from tablegen.compare.selection.engine import arrangements

    if laws is None:
        laws = [q.extra_null(_extra(q)) for q in questions]
    passes = {}
    for i, q in enumerate(questions):
        passes.setdefault(q.R, []).append(i)
    sizes = {R: arrangements(questions[0].n, questions[0].P) if R == 0 else R for R in passes}
    total, done, counts = sum(sizes.values()), 0, [None] * len(questions)
    for R, members in passes.items():
        told = None if progress is None else (lambda d, t, before=done: progress(before + d, total))
        for i, found in zip(members, _counts([questions[i] for i in members], told)):
            counts[i] = found
        done += sizes[R]
    told = (lambda name: None) if law_progress is None else law_progress
    return {q.spec.name: _result(q, found, law, told(q.spec.name)) for q, found, law in zip(questions, counts, laws)}


def _counts(questions: list, progress):
    """The arrangements of questions sharing R (so the same arrangements), scored for all of them in one pass."""
    first = questions[0]
    exact = first.R == 0
    plans = [MetricPlan(q.column, q.k_cut, q.members, q.observed - SNAP_TOLERANCE, _ranked(q)) for q in questions]
    logger.info("max-T of %d models on %s: %s", first.sorted_all.orders.shape[0],
                ", ".join(q.spec.name for q in questions), "every arrangement" if exact else f"R = {first.R:,}")
    return null_counts_all(first.sorted_all, first.P, plans, first.weights, exact=exact, R=first.R, key=first.key,
                           device=first.device, progress=progress, look=first.look)


def _ranked(q) -> np.ndarray:
    """The applicable models by descending observed value (ties in the order given)."""
    return np.argsort(-q.observed, kind="stable").astype(np.int64)


def _result(q, counts, null, law_progress=None) -> SelectionResult:
    """One metric's answer from its arrangements' ``counts`` and ``null``, the law of one random competitor not
    given (None where every model tried is given); ``law_progress(done, total)`` told of the law's programmes where
    it runs any (:func:`_prepare`)."""
    spec: Metric = q.spec
    names = list(q.models)
    observed = q.observed
    ranked = _ranked(q)
    thresholds = observed - SNAP_TOLERANCE
    exact = counts.exact
    extra = _extra(q)
    M = counts.arrangements
    look = counts.look
    if look is None:
        raw = _proportions(counts.raw_hits, M, exact)
        step = _proportions(counts.step_hits, M, exact)  # one vectorised call per kind, not one per model
        single_hits = _proportions(counts.single_hits(thresholds), M, exact)
        level = CI_LEVEL
    else:  # each count settled at the look or followed past it (early.designed_p_value); intervals at 97.5% each
        from tablegen.compare.selection.early import p_values

        raw, step, single_hits = (p_values(kind, look, q.R) for kind in counts.looked)
        level = LOOK_LEVEL
    _prepare(null, lambda law: (_extra_factors(observed, extra, law),
                                _critical(counts.maxima, M, exact, q.alpha, extra, law, q.top, level, look, q.R)),
             law_progress)
    factors = _extra_factors(observed, extra, null)  # one law query per model: the step-down and single-step share it
    steps = [_with_extra(tuple(v[j] for v in step), factors[m]) for j, m in enumerate(ranked)]
    adjusted = _monotone(steps)
    single = [_with_extra(tuple(v[i] for v in single_hits), factors[i]) for i in range(len(names))]
    divisor = q.divisor
    critical, interval = _critical(counts.maxima, M, exact, q.alpha, extra, null, q.top, level, look, q.R)
    effective = _effective_C(counts.maxima, critical, extra, null if extra else q.single_null())
    names_ranked = [names[m] for m in ranked]
    return SelectionResult(
        metric=spec.name, P=q.P, N=q.n - q.P, C=q.C, alpha=q.alpha,
        values={name: float(observed[i]) / divisor for i, name in enumerate(names)},
        winner=names_ranked[0],
        raw_p_values={name: float(raw[0][i]) for i, name in enumerate(names)},
        adjusted_p_values={name: float(adjusted[j][0]) for j, name in enumerate(names_ranked)},
        raw_p_intervals={name: (float(raw[1][i]), float(raw[2][i])) for i, name in enumerate(names)},
        adjusted_p_intervals={name: (float(adjusted[j][1]), float(adjusted[j][2]))
                              for j, name in enumerate(names_ranked)},
        critical_value=critical / divisor, critical_interval=(interval[0] / divisor, interval[1] / divisor),
        effective_C=effective, method="exact" if exact else "permutation", arrangements=M,
        R=None if exact else q.R, seed=None if exact else q.seed, not_applicable=q.not_applicable,
        single_step_p_values={name: float(single[i][0]) for i, name in enumerate(names)},
        single_step_p_intervals={name: (float(single[i][1]), float(single[i][2])) for i, name in enumerate(names)},
        early_look=None if counts.look is None else counts.look.drawn, stopped_early=counts.stopped_early)


def _proportions(hits: np.ndarray, M: int, exact: bool):
    """(p, low, high): hits / M exactly (equal ends); from M random arrangements, (hits + 1) / (M + 1), never 0
    and a valid p-value (Phipson & Smyth 2010), with the 95% Clopper–Pearson interval of the exact p."""
    if exact:
        estimate = hits / M
        return estimate, estimate, estimate
    low, high = clopper_pearson(hits, hits, M)
    return (hits + 1) / (M + 1), np.asarray(low, float), np.asarray(high, float)


def _extra_factors(observed: np.ndarray, extra: int, null) -> list[float]:
    """Pr(X < score)^extra for each model's observed score (the conservative end of X's bracket, within
    :data:`FOLD_TAIL_WIDTH`; 1 without competitors not given), each distinct score's law queried once (a bracketed
    law's query can take minutes)."""
    if extra == 0:
        return [1.0] * len(observed)
    below = {score: (1.0 - null_tail_ge_bracket(null, score, within=FOLD_TAIL_WIDTH)[1]) ** extra
             for score in dict.fromkeys(observed.tolist())}
    return [below[score] for score in observed.tolist()]


def _prepare(null, questions, progress=None) -> None:
    """Where the law of a competitor not given answers each question with programmes (average precision past
    enumeration: a bracketed law, each critical value or tail a pair of fine programmes, minutes at a few thousand
    items), run ``questions(law)`` first on its coarse programmes alone, which note the fine window each answer
    will need, and have one pair of fine programmes run over their span: the ~30 questions of the critical
    value's search and the models' tails are then answered from it (the same rigorous brackets).  ``progress(done,
    total)`` is told as each fine programme ends."""
    if null is None or not hasattr(null, "coarse_view"):
        return
    view = null.coarse_view()
    questions(view)
    span = view.span()
    if span is not None:
        null.prepare(span, progress)


def _with_extra(p, factor: float):
    """1 - (1 - p) ``factor`` for each of (estimate, low, high), ``factor`` = Pr(X < score)^extra
    (:func:`_extra_factors`)."""
    estimate, low, high = (float(np.asarray(v).reshape(-1)[0]) for v in p)
    if factor == 1.0:
        return estimate, low, high
    return tuple(1.0 - (1.0 - v) * factor for v in (estimate, low, high))


def _monotone(steps):
    """Step-down p-values made non-decreasing down the ranking (each of estimate, low, high)."""
    out, running = [], (0.0, 0.0, 0.0)
    for step in steps:
        running = tuple(max(r, s) for r, s in zip(running, step))
        out.append(running)
    return out


def _critical(maxima: np.ndarray, M: int, exact: bool, alpha: float, extra: int, null, top: float,
              level: float = CI_LEVEL, look=None, R: int = 0):
    """The smallest x with Pr(maxT <= x) Pr(X <= x)^extra >= 1 - alpha, and its ``level`` interval (DKW band; with
    an early ``look``, from the prefix and at the level :func:`.early.band_prefix` gives)."""
    estimate = _critical_at(*_ecdf(maxima, top), alpha, extra, null)
    if exact:
        return estimate, (estimate, estimate)
    if look is not None:
        from tablegen.compare.selection.early import band_prefix

        M, level = band_prefix(look, M, R)
        maxima = maxima[:M]
    levels, cdf = _ecdf(maxima, top)
    band = math.sqrt(math.log(2.0 / (1.0 - level)) / (2.0 * M))  # Massart's DKW constant
    low = _critical_at(levels, np.minimum(cdf + band, 1.0), alpha, extra, null)
    high = _critical_at(levels, np.maximum(cdf - band, 0.0), alpha, extra, null)
    high = top if high is None else high
    return estimate, (low, high)


def _ecdf(maxima: np.ndarray, top: float) -> tuple[np.ndarray, np.ndarray]:
    """The distinct maxima and the empirical distribution function at each, with the metric's maximum ``top`` at 1."""
    levels, counts = np.unique(maxima, return_counts=True)
    return np.append(levels, top), np.append(np.cumsum(counts) / maxima.size, 1.0)


def _critical_at(levels: np.ndarray, cdf: np.ndarray, alpha: float, extra: int, null) -> float | None:
    """The smallest level x with cdf(x) Pr(X <= x)^extra >= 1 - alpha; None where no level's cdf reaches it (the
    lower end of a DKW band below 1 - alpha everywhere: the caller takes the metric's maximum)."""
    q = (1.0 - alpha) * (1.0 - TIE_RTOL)
    reach = np.flatnonzero(cdf >= q)
    if reach.size == 0:
        return None
    if extra == 0:
        return float(levels[reach[0]])
    # Between sample levels the max-T law is flat, so from level i on the answer is max(level_i, g_i), g_i X's
    # critical value at the tail level i leaves.  Levels rise and g falls as i rises: search for the first i
    # with level_i >= g_i; the answer is level there or g just before.  Each g_i may cost a Fourier transform
    # (AUC at P N ~ 10^7: 0.1-0.5 s), so the search starts where cheap guesses of g put the crossing and decides
    # with the exact g_i alone: the same first i, so the same answer, from 2 exact g_i instead of ~10.
    @functools.cache
    def g(i):
        return _extra_critical(null, q / cdf[reach[i]], extra)

    guess = _guessed_crossing(levels[reach], cdf[reach], q, extra, null)
    decide = getattr(null, "critical_at_most", None)
    if decide is None:
        lo = _first_holding(lambda i: levels[reach[i]] >= g(i), reach.size - 1, guess)
        best = float(levels[reach[lo]])
        return min(best, g(lo - 1)) if lo > 0 else best
    # a null that decides "level >= its critical value" from one programme (the lattice metrics): each level tried
    # costs that programme, not a critical value's search; the search runs at most once, where g(lo - 1) is below
    # the crossing's level (the same answer: level_i >= g_i is what is decided)
    tail = lambda i: _extra_tail(q / cdf[reach[i]], extra)  # noqa: E731
    lo = _first_holding(lambda i: decide(float(levels[reach[i]]), tail(i)), reach.size - 1, guess)
    best = float(levels[reach[lo]])
    if lo == 0 or not decide(math.nextafter(best, -math.inf), tail(lo - 1)):  # g(lo - 1) >= best: the level stands
        return best
    return g(lo - 1)  # below the level: its value, by the search


def _first_holding(holds, last: int, guess: int | None) -> int:
    """The smallest i in [0, last] with ``holds(i)`` (monotone: false then true; true at ``last``, not asked):
    asked first at ``guess``, then at steps doubling away from it until the answer is bracketed, then by
    bisection (plain bisection without a guess).

    Examples
    --------
    >>> asked = []
    >>> def holds(i):
    ...     asked.append(i)
    ...     return i >= 37
    >>> _first_holding(holds, 99, 37), asked
    (37, [37, 36])
    >>> [_first_holding(lambda i: i >= 37, 99, guess) for guess in (None, 0, 35, 40, 98, 99)]
    [37, 37, 37, 37, 37, 37]
    """
    false, true = -1, last
    if guess is not None and 0 <= guess < last:
        step = 1
        if holds(guess):
            true = guess
            while true - step > false:
                if not holds(true - step):
                    false = true - step
                    break
                true, step = true - step, 2 * step
        else:
            false = guess
            while false + step < true:
                if holds(false + step):
                    true = false + step
                    break
                false, step = false + step, 2 * step
    while true - false > 1:
        mid = (false + 1 + true) // 2
        if holds(mid):
            true = mid
        else:
            false = mid
    return true


def _guessed_crossing(levels: np.ndarray, cdf: np.ndarray, q: float, extra: int, null) -> int | None:
    """Where the crossing of :func:`_critical_at` lies by the null's cheap guesses of its critical values
    (:func:`~tablegen.compute.metric_nulls.approximate_critical_value`), or None without guesses."""
    from tablegen.compute.metric_nulls import approximate_critical_value

    lo, hi = 0, levels.size - 1
    while lo < hi:
        mid = (lo + hi) // 2
        needed = q / cdf[mid]
        tail = 0.0 if needed >= 1.0 else -math.expm1(math.log(needed) / extra)
        value = approximate_critical_value(null, max(tail, 1e-300))
        if value is None:
            return None
        if levels[mid] >= value:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _extra_tail(needed: float, extra: int) -> float:
    """The tail t with (1 - t)^extra = needed (at least 1e-300; 0 asked as 1e-300 where needed >= 1)."""
    tail = 0.0 if needed >= 1.0 else -math.expm1(math.log(needed) / extra)
    return max(tail, 1e-300)


def _extra_critical(null, needed: float, extra: int) -> float:
    """The smallest x with Pr(X <= x)^extra >= needed (the conservative end of a bracket)."""
    return float(null_critical_bracket(null, _extra_tail(needed, extra))[1])


def _effective_C(maxima: np.ndarray, critical: float, extra: int, null) -> float | None:
    """c with Pr(X < t)^c = Pr(max of the C < t), t the critical value (None without X's law or at the top)."""
    if null is None:
        return None
    below_max = np.count_nonzero(maxima < critical - SNAP_TOLERANCE) / maxima.size
    below_one = 1.0 - null_tail_ge_bracket(null, critical, rtol=EFFECTIVE_C_TAIL_RTOL)[0]
    if below_max <= 0.0 or below_one <= 0.0 or below_one >= 1.0:
        return None
    return math.log(below_max) / math.log(below_one) + extra

