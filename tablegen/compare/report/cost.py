"""What a report of :func:`tablegen.evaluate` will cost, estimated before any work (:func:`evaluation_cost`), and
its progress told step by step as the work is done (:class:`ReportSteps`).
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import ArrayLike

logger = logging.getLogger(__name__)


#: Single-core seconds per (arrangement, model, item) step of the max-T test, charged to each metric: the fused pass
#: (:func:`tablegen.compare.selection.maxt.selection_tests`) scores every metric of an arrangement together, measured
#: 1.05 ns for the five default metrics at 10^4 items and 1.84 ns at 10^6 with the one-arrangement kernel (0.2-0.37
#: ns a metric; 2026-11-29, an AVX-512 EPYC core), rounded up.  Charged for R arrangements, the most a run draws:
#: with R unset the early look stops most runs sooner (the estimate is then high).
ARRANGEMENT_STEP_SECONDS = 4e-10
#: The same with the lane kernel (:mod:`tablegen.compute.kernels.permutation_lanes`), which scores reports of AUC,
#: best accuracy, best F1, best balanced accuracy and average precision: 0.43 ns for the five at 10^4 items and 0.50
#: at 10^6, best accuracy alone 0.11 and 0.23 (10 models; the arrangements' sampling is shared), rounded up.
LANE_ARRANGEMENT_STEP_SECONDS = 2e-10
#: Single-core seconds per (pair, item) of DeLong's paired test (the placements of both models).
DELONG_ITEM_SECONDS = 2e-7
#: Single-core seconds per (resample, model, item) step of the report's bootstrap intervals, every metric scored in
#: the same pass (measured 1.8 ns at 10^4 items and 3.05 ns at 10^6 for the 5 default metrics together, 10 models,
#: 2,000 resamples, load 5-6 on 2 cores), rounded up; charged once, to the first metric's intervals.
RESAMPLE_STEP_SECONDS = 4e-9
#: The same with the lane kernel (:mod:`tablegen.compute.kernels.resample_lanes`, the lane metrics): 0.76 ns at 10^4
#: items and 0.86 ns at 10^6 (2026-11-29, AVX-512 EPYC), rounded up.
LANE_RESAMPLE_STEP_SECONDS = 1.2e-9
#: Single-core seconds per (swap, item) step of a pair's swap-permutation pass, which scores every metric the report
#: tests by the swap permutation at once (:class:`~tablegen.compare.pairwise.tests.SwapNulls`): measured 4.2-4.9 ns
#: for one to four metrics at 10^4 items (2026-11-29, an AVX-512 EPYC core), rounded up; charged once, to the first
#: swap-tested metric's paired step (where metrics have different winners their pairs differ, and the estimate is
#: low by those passes).
SWAP_STEP_SECONDS = 6e-9
#: The same with the lane kernel (:mod:`tablegen.compute.kernels.swap_lanes`, the lane metrics): 1.48 ns for four
#: metrics at 10^4 items and 2.51 ns at 10^6, 0.99 and 1.44 for average precision alone, rounded up.
LANE_SWAP_STEP_SECONDS = 3e-9
#: Single-core seconds of a pair's paired tests besides its patterns (checks, bounds, the merged order, DeLong's
#: placements at small n): measured 4.5 ms per pair with the five default metrics at 60 items (199 pairs, 0.9 s),
#: rounded up; charged with the swap pass.
PAIR_SECONDS = 5e-3


def lane_metrics(specs) -> bool:
    """Whether the lane kernels score these metrics (the max-T test's arrangements, the swap patterns and the
    bootstrap resamples, 64 or 32 at a time): AUC, best accuracy, best F1, best balanced accuracy and average
    precision only (best MCC and the counts at k take the one-at-a-time kernels)."""
    from tablegen.compute.kernels.permutation_lanes import LANE_COLUMNS
    from tablegen.compute.kernels.ranking import BASE_COLUMNS

    names = {BASE_COLUMNS[column] for column in LANE_COLUMNS}
    return all(spec.counted_entry().name in names for spec in specs)


@dataclass(frozen=True)
class EvaluationCost:
    """The estimated single-core seconds of each step of :func:`tablegen.evaluate`: ``steps`` maps ("verdicts",) and
    (metric, "max-T arrangements" | "max-T critical value" | "detectable" | "paired" | "intervals") to seconds (the
    max-T test's label arrangements, and its critical value's exact law of the competitors not given; the detectable
    AUC's search where it runs); ``seconds`` is their sum.

    With ``device="cuda"``, ``gpu`` maps each step (or the part of a step) that runs on the GPU to its seconds in
    ``steps``: what it would cost on one CPU core, not its time on the GPU, which tablegen does not estimate (no GPU
    cost model has been measured on hardware).  ``cpu_seconds`` is then the CPU's part alone, the figure the time
    guard holds against the limit (:func:`check_report_time`); the GPU's steps keep their CPU estimates in ``steps``
    as the weights of the progress told.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.r_[np.ones(50), np.zeros(50)]
    >>> cost = evaluation_cost(y, {"a": np.arange(100.0), "b": np.arange(100.0) % 7}, metrics=["auc"])
    >>> sorted(cost.steps)[:2], cost.seconds == sum(cost.steps.values()) == cost.cpu_seconds
    ([('auc', 'detectable'), ('auc', 'intervals')], True)
    """

    metrics: tuple
    steps: dict
    gpu: dict = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return float(sum(self.steps.values()))

    @property
    def cpu_seconds(self) -> float:
        """The estimated single-core seconds of the work the CPU does (every step but the GPU's parts)."""
        return max(0.0, self.seconds - float(sum(self.gpu.values())))

    def describe(self) -> str:
        """The steps' estimates in words, the largest first; a step run on the GPU is named so, without seconds."""
        cpu = {key: seconds - self.gpu.get(key, 0.0) for key, seconds in self.steps.items()}
        ranked = sorted(cpu.items(), key=lambda item: -item[1])
        words = [f"{' '.join(key)} {seconds:.2g} s" for key, seconds in ranked if key not in self.gpu or seconds > 0]
        on_gpu = [" ".join(key) for key in self.steps if key in self.gpu]
        if on_gpu:
            words.append(f"on the GPU, not estimated: {', '.join(on_gpu)}")
        return ", ".join(words)

    def summary(self) -> str:
        """The estimate in words: ``about 12 s of work on one core``, or with a GPU the CPU's part and the steps on
        the GPU, whose time is not estimated.

        Examples
        --------
        >>> cost = EvaluationCost(("auc",), {("verdicts",): 2.0, ("auc", "intervals"): 30.0})
        >>> cost.summary()
        'about 32 s of work on one core'
        >>> on_device(cost, "cuda", [("auc", "intervals")]).summary()
        'about 2 s of CPU work on one core, besides 1 step on the GPU whose time is not estimated'
        """
        if not self.gpu:
            return f"about {self.seconds:.2g} s of work on one core"
        return (f"about {self.cpu_seconds:.2g} s of CPU work on one core, besides {len(self.gpu)} "
                f"step{'s' if len(self.gpu) > 1 else ''} on the GPU whose time is not estimated")


def on_device(cost: EvaluationCost, device: str, steps: Iterable) -> EvaluationCost:
    """``cost`` with ``steps`` (keys of ``cost.steps``, or (key, seconds) for the part of a step) marked as run on
    the GPU where ``device`` is ``"cuda"``; unchanged on the CPU.

    Examples
    --------
    >>> cost = EvaluationCost(("auc",), {("verdicts",): 2.0, ("auc", "intervals"): 30.0})
    >>> on_device(cost, "cuda", [("auc", "intervals")]).cpu_seconds, on_device(cost, "cpu", [("auc", "intervals")]).gpu
    (2.0, {})
    """
    if device != "cuda":
        return cost
    gpu = dict(cost.gpu)
    for step in steps:
        key, seconds = (step, cost.steps[step]) if step in cost.steps else step
        gpu[key] = gpu.get(key, 0.0) + seconds
    return replace(cost, gpu=gpu)


def check_report_time(cost: EvaluationCost, what: str, way_out: tuple, limit: float | None) -> None:
    """Refuse, before any work, a report whose estimate exceeds ``limit`` (default ``TABLEGEN_TIME_LIMIT``):
    on the CPU its whole estimate; with a GPU (``cost.gpu``) the CPU's part alone, the steps on the GPU named as not
    estimated (their CPU seconds are no measure of a GPU's time, and no GPU cost model has been measured on
    hardware).

    Examples
    --------
    >>> from tablegen.errors import ResourceLimitError
    >>> cost = on_device(EvaluationCost(("auc",), {("verdicts",): 2.0, ("auc", "intervals"): 30.0}), "cuda",
    ...                  [("auc", "intervals")])
    >>> check_report_time(cost, "a report", ("ask less",), limit=10.0)  # 2 s on the CPU: within
    >>> try:
    ...     check_report_time(cost, "a report", ("ask less",), limit=1.0)
    ... except ResourceLimitError as error:
    ...     print(error)  # doctest: +NORMALIZE_WHITESPACE
    the CPU's part of a report (auc intervals on the GPU: not estimated) would take about 2 s on one core, more than
    the limit of 1 s; ask less
    """
    from tablegen.compute.limits import check_time

    if cost.gpu:
        steps = ", ".join(" ".join(key) for key in cost.gpu)
        what = f"the CPU's part of {what} ({steps} on the GPU: not estimated)"
    check_time(cost.cpu_seconds, what, way_out, limit=limit)


def multiclass_gpu_steps(cost: EvaluationCost, true_counts) -> list:
    """The steps of the K-class report (:func:`~tablegen.compare.report.multiclass.multiclass_cost`) run on the GPU
    with ``device="cuda"``: the label metrics' and the probability metrics' passes of random label permutations (an
    enumeration of the arrangements runs on the CPU), both bootstraps' resamples, and the paired tests' swap
    patterns.

    Examples
    --------
    >>> cost = EvaluationCost(("accuracy",), {("null",): 1.0, ("bootstrap",): 2.0, ("verdicts",): 0.5,
    ...                                       ("accuracy", "paired"): 0.0})
    >>> multiclass_gpu_steps(cost, [200, 200, 200]), multiclass_gpu_steps(cost, [2, 2, 1])
    ([('null',), ('bootstrap',), ('accuracy', 'paired')], [('bootstrap',), ('accuracy', 'paired')])
    """
    from tablegen.compare.report.multiclass_tests import enumerated_arrangements
    from tablegen.lookup.multiclass_scores import EXACT_ARRANGEMENTS

    sampled = {"null": enumerated_arrangements(true_counts) is None,
               "scores null": enumerated_arrangements(true_counts, EXACT_ARRANGEMENTS) is None}
    return [key for key in cost.steps
            if key[-1] in ("bootstrap", "scores bootstrap", "paired", "scores paired") or sampled.get(key[-1], False)]


def _swap_patterns(R: int | None, alpha: float, pairs: int) -> int:
    """The swap patterns a pair is charged: R where given, else the early look's l_e for ``pairs`` pairs at level
    ``alpha`` (the cap where there is no look).

    Examples
    --------
    >>> _swap_patterns(None, 0.05, 9), _swap_patterns(2_000, 0.05, 9), _swap_patterns(None, 0.05, 199)
    (359, 2000, 10000)
    """
    from tablegen.compare.pairwise.sequential import early_look
    from tablegen.compare.pairwise.tests import DEFAULT_SWAPS

    if R is not None:
        return R
    look = early_look(alpha, max(pairs, 1), DEFAULT_SWAPS)
    return DEFAULT_SWAPS if look is None else look.drawn


def _arrangements_charged(count: int, look, first: bool) -> int:
    """The max-T arrangements a metric is charged: all ``count`` without an early ``look`` (R given, or every
    arrangement enumerated); with one, the look's l_e (each metric's share of the pass that scores them all), and the
    first metric the whole ``count``: one metric whose count goes on past the look, to its h-th reaching arrangement
    or ``count`` (where several metrics' counts go on, each draws up to ``count``, and the estimate is low by those;
    charging every metric ``count`` made 10 models x 10^6 items' arrangements 100 s for ~8-11 s taken).

    Examples
    --------
    >>> from tablegen.compare.pairwise.sequential import max_t_look
    >>> look = max_t_look(0.05, 10_000)
    >>> [_arrangements_charged(10_000, look, first) for look, first in ((None, False), (look, True), (look, False))]
    [10000, 10000, 199]
    """
    if look is None:
        return count
    return count if first else look.drawn


def evaluation_cost(labels: ArrayLike, scores: ArrayLike | Mapping[str, ArrayLike], *, C: int | None = None,
                    metrics: list[str] | None = None, method: str = "auto", R: int | None = None,
                    positive_label: object = None, device: str = "cpu", alpha: float = 0.05) -> EvaluationCost:
    """The estimated single-core seconds of :func:`tablegen.evaluate` on these arguments, step by step, before any work
    (an estimate from per-step costs measured on one machine, rounded up; the exact nulls' from the metric
    registry's cost models).  With ``device="cuda"`` the steps that run on the GPU are marked
    (:attr:`EvaluationCost.gpu`): the simulated verdicts, the max-T test's random arrangements (an enumeration runs
    on the CPU), the swap-permutation paired tests (DeLong's on the CPU) and the bootstrap resamples.

    With ``R`` unset each swap-permutation pair is charged the patterns of its early look at level ``alpha``
    (:func:`~tablegen.compare.pairwise.sequential.early_look`: where a clear winner's pairs stop), not the cap: a
    pair near the threshold draws more, up to 10,000, and then takes up to 10,000/l_e times its share of the estimate
    (charging every pair the cap made the estimate of 10 models x 10^6 items 4,773 s, over the default hour's limit,
    for a report that takes about 330 s).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = np.r_[np.ones(3000), np.zeros(7000)]
    >>> cost = evaluation_cost(y, {f"m{i}": rng.normal(size=10_000) for i in range(5)}, C=10, metrics=["auc"])
    >>> 1 < cost.seconds < 60
    True
    """
    from tablegen.compare.pairwise.bootstrap import BOOTSTRAP_RESAMPLES
    from tablegen.compare.pairwise.sequential import max_t_look
    from tablegen.compare.selection.engine import DEFAULT_PERMUTATIONS, arrangements, exact_fits
    from tablegen.compute.limits import time_limit_seconds
    from tablegen.compute.metrics import get_metric
    from tablegen.compute.metrics_from_scores import (
        BASE_SCORE_METRICS,
        check_binary_labels,
        check_model_scores,
        check_score_metric,
    )
    from tablegen.compute.validation import check_alpha, check_competitors
    from tablegen.lookup.api import SIMULATION_SECONDS

    y = check_binary_labels(labels, positive_label)
    models = check_model_scores(scores, y.size)
    alpha = check_alpha("alpha", alpha)
    if metrics is None:
        metrics = BASE_SCORE_METRICS
    names = [metrics] if isinstance(metrics, str) or not isinstance(metrics, Iterable) else list(metrics)
    # the names are checked here as the report checks them; what else is wrong with them it refuses then
    specs = [get_metric(check_score_metric(name)) for name in dict.fromkeys(names) if isinstance(name, str)]
    n, K = y.size, len(models)
    P = int(y.sum())
    C = K if C is None else max(check_competitors(C), K)
    enumerated = exact_fits(n, P, K)
    arrangement_count = arrangements(n, P) if enumerated else (DEFAULT_PERMUTATIONS if R is None else R)
    look = None if enumerated or R is not None else max_t_look(alpha, arrangement_count)
    patterns = _swap_patterns(R, alpha, K - 1)
    steps, gpu = {("verdicts",): 0.0}, []
    tied_models = functools.cache(lambda: sum(1 for s in models.values() if np.unique(s).size < n))
    lanes = lane_metrics(specs)
    arrangement_step = LANE_ARRANGEMENT_STEP_SECONDS if lanes and not enumerated else ARRANGEMENT_STEP_SECONDS
    swap_step = LANE_SWAP_STEP_SECONDS if lanes else SWAP_STEP_SECONDS
    resample_step = LANE_RESAMPLE_STEP_SECONDS if lanes else RESAMPLE_STEP_SECONDS
    swap_charged = False  # one pass per pair scores every swap-tested metric: charged to the first
    for spec in specs:
        null_seconds = spec.exact_cost(P, n - P)[0] if spec.has_exact else math.inf
        exact = method in ("auto", "exact") and null_seconds <= SIMULATION_SECONDS
        # the verdict's two; each tied model's own p-value under its ties (AUC; an untied model's is the shared null's)
        queries = 2 + (tied_models() if spec.tied_null_routine and exact else 0)
        steps["verdicts",] += queries * null_seconds if exact else SIMULATION_SECONDS  # one pass for both answers
        gpu += [] if exact else [(("verdicts",), SIMULATION_SECONDS)]
        # the competitors not given need the exact null, refused (a note) beyond the time limit
        search = spec.search_seconds(P, n - P) if C > K and spec.has_exact else 0.0
        extra = search if search <= time_limit_seconds() else 0.0
        steps[spec.name, "max-T arrangements"] = arrangement_step * _arrangements_charged(
            arrangement_count, look, spec is specs[0]) * K * n
        steps[spec.name, "max-T critical value"] = extra
        steps[spec.name, "detectable"] = _detectable_seconds(spec.name, P, n - P)
        swapped = spec.paired_test != "delong"
        paired = 0.0 if K < 2 or spec.k is not None or (swapped and swap_charged) else (
            (K - 1) * (n * swap_step * patterns + PAIR_SECONDS if swapped else n * DELONG_ITEM_SECONDS))
        swap_charged = swap_charged or (swapped and paired > 0)
        steps[spec.name, "paired"] = paired
        # one pass per (model, resample) scores every metric: the first metric's step does it, the rest read it
        steps[spec.name, "intervals"] = K * n * resample_step * BOOTSTRAP_RESAMPLES if spec is specs[0] else 0.0
        gpu += [(spec.name, "intervals")] + ([] if enumerated else [(spec.name, "max-T arrangements")])
        gpu += [(spec.name, "paired")] if paired > 0 and spec.paired_test != "delong" else []
    return on_device(EvaluationCost(tuple(spec.name for spec in specs), steps), device, gpu)


def _detectable_seconds(metric: str, P: int, N: int) -> float:
    """The estimated seconds of the report's detectable-AUC line: its search's, where it fits the line's budget
    (else the line is a note and costs nothing)."""
    from tablegen.compare.report.detectable import BUDGET_SECONDS, estimated_seconds

    if min(P, N) < 1:
        return 0.0
    seconds = estimated_seconds(metric, P, N)
    return seconds if seconds is not None and seconds <= BUDGET_SECONDS else 0.0


class ReportSteps:
    """Tells ``progress(done, total)`` of each step of :func:`tablegen.evaluate` as it ends, and within a step of
    its units (:meth:`within`), in estimated seconds: ``done`` never falls.

    Examples
    --------
    >>> cost = EvaluationCost(("auc",), {("verdicts",): 1.0, ("auc", "max-T arrangements"): 10.0})
    >>> told = []
    >>> steps = ReportSteps(cost, lambda done, total: told.append(done))
    >>> steps.done("verdicts")
    >>> within = steps.within("auc", "max-T arrangements")
    >>> within(1, 2); within(2, 2)
    >>> steps.done("auc", "max-T arrangements"); steps.finish()
    >>> told
    [0.0, 1.0, 6.0, 11.0]
    """

    def __init__(self, cost: EvaluationCost, progress):
        self.cost, self.progress = cost, progress
        self.total = max(cost.seconds, 1e-9)
        self.ended = self.done_seconds = 0.0  # the estimates of the steps ended; what was last told
        if progress is not None:
            progress(0.0, self.total)

    def tell(self, seconds: float) -> None:
        """Tell ``seconds`` of estimated work done (never less than told before, never past the total)."""
        if self.progress is not None and seconds > self.done_seconds:
            self.done_seconds = min(seconds, self.total)
            self.progress(self.done_seconds, self.total)

    def within(self, *step: str):
        """``progress(done, total)`` of the units of ``step`` (arrangements scored), told as a share of its
        estimate; None without ``progress``."""
        if self.progress is None:
            return None
        start, seconds = self.ended, self.cost.steps.get(step, 0.0)
        return lambda done, total: self.tell(start + seconds * done / max(total, 1))

    def done(self, *step: str) -> None:
        self.ended += self.cost.steps.get(step, 0.0)
        logger.debug("evaluate: %s done (%.3g of %.3g estimated s)", " ".join(step), self.ended, self.total)
        self.tell(self.ended)

    def finish(self) -> None:
        self.tell(self.total)
