"""The checked questions of :func:`tablegen.compare.selection_tests`: labels, models, metrics, C, R, seed, method
(one :class:`SelectionQuestion` per metric, the models sorted once for all of them)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from tablegen.compare.selection.engine import (
    DEFAULT_PERMUTATIONS,
    EXACT_ARRANGEMENTS,
    SortedModels,
    exact_fits,
    models_sorted,
)
from tablegen.compute.cell import DEFAULT_SEED
from tablegen.compute.kernels.ranking import BASE_COLUMNS, TP_COLUMN
from tablegen.compute.limits import check_memory, check_time, memory_limit_bytes
from tablegen.compute.mc import cell_key
from tablegen.compute.metric_nulls import ExactNulls, checked_nulls
from tablegen.compute.metrics import Metric, get_metric
from tablegen.compute.metrics_from_scores import (
    check_binary_labels,
    check_model_scores,
    check_score_metric,
    threshold_groups,
)
from tablegen.compute.stats import minimum_replicates
from tablegen.compute.validation import check_alpha, check_competitors, check_integer, check_seed
from tablegen.errors import Argument, TablegenInputError

METHODS = ("auto", "exact", "permutation")
#: The effective C is left out where one random ranking's exact law would take longer than this.
EFFECTIVE_C_SECONDS = 5.0


@dataclass(frozen=True)
class SelectionQuestion:
    """A checked selection test: the metric's entry (in count space for precision_at_k), every model given sorted
    once (``sorted_all``, shared by the metrics of one call) with the rows of the applicable ones (``members``), and
    their observed values (computed by the kernel that scores the arrangements)."""

    spec: Metric
    entry: Metric
    models: tuple
    observed: np.ndarray
    sorted_all: SortedModels
    members: np.ndarray
    P: int
    n: int
    C: int
    R: int
    seed: int
    alpha: float
    method: str
    column: int
    k_cut: int
    weights: np.ndarray
    key: tuple
    not_applicable: dict = field(default_factory=dict)
    device: str = "cpu"
    nulls: ExactNulls = field(default_factory=ExactNulls)
    look: object = None  # the early look of a permutation test with R unset (EarlyLook), else None

    @property
    def divisor(self) -> int:
        """min(k, n) for precision_at_k (the kernel counts TP), else 1."""
        return self.spec.count_divisor(self.P, self.n - self.P)

    @property
    def top(self) -> float:
        """The metric's largest value at (P, N), in the kernel's terms."""
        return float(self.entry.range(self.P, self.n - self.P)[1])

    def single_null(self):
        """The exact law of one random ranking's value where tablegen has it within the limits, else None
        (for the effective C, which is descriptive)."""
        P, N = self.P, self.n - self.P
        if not (self.entry.has_exact and self.entry.exact_at(P, N)):
            return None
        seconds, memory = self.entry.exact_cost(P, N)
        if seconds > EFFECTIVE_C_SECONDS or memory > memory_limit_bytes():
            return None
        return self.nulls.untied(self.entry, P, N)

    def extra_null(self, extra: int):
        """The exact law (or rigorous bracket) of one random ranking's value, for the C - K competitors not given;
        None if none are."""
        if extra == 0:
            return None
        P, N = self.P, self.n - self.P
        if not self.entry.has_exact:  # exact, or a rigorous bracket whose conservative end is used
            raise TablegenInputError.naming(
                Argument("C"), f" = {self.C} adds {extra} random competitors not given, whose law tablegen needs "
                f"exactly, and {self.spec.name} has no exact null: give every model's scores "
                "(C = the number of models)")
        memory = self.entry.exact_cost(P, N)[1]
        seconds = self.entry.search_seconds(P, N)  # the critical value's search and the models' tails
        what = f"the exact null of {self.spec.name} at P = {P}, N = {N} (for the {extra} competitors not given)"
        check_memory(memory, what, ("give every model's scores (", Argument("C"), " = the number of models)"))
        check_time(seconds, what, ("give every model's scores (", Argument("C"), " = the number of models)"))
        return self.nulls.untied(self.entry, P, N)


def checked_selection(labels, scores, metric, C, R, seed, alpha, positive_label, method,
                      device="cpu", nulls=None) -> SelectionQuestion:
    """:func:`checked_selections` of one metric (errors name ``metric``)."""
    if not isinstance(metric, str):
        raise TablegenInputError.naming(Argument("metric"), f" must be a metric name, got {metric!r}")
    return checked_selections(labels, scores, [metric], C, R, seed, alpha, positive_label, method, device, nulls,
                              argument="metric")[0]


def checked_selections(labels, scores, metrics, C, R, seed, alpha, positive_label, method, device="cpu", nulls=None,
                       argument: str = "metrics", refused: dict | None = None) -> list[SelectionQuestion]:
    """Check every argument once (errors name the argument; ``argument``: the name of ``metrics``) and prepare the
    models, sorted once for every metric (``nulls``: where the exact nulls are built and kept,
    :class:`~tablegen.compute.metric_nulls.ExactNulls`; a new one if None).  One question per metric, in the order
    given, a metric named twice asked once; a metric's own error (defined for no model given; an exact null over
    budget for its models) is raised, or kept in ``refused`` (metric -> error) and the metric left out."""
    from tablegen.compute.kernels.cuda.device import resolve_device
    from tablegen.compute.kernels.ranking import mcc_weights

    y = check_binary_labels(labels, positive_label)
    models = check_model_scores(scores, y.size)
    device = resolve_device(device)
    specs = [get_metric(check_score_metric(name)) for name in _metric_names(metrics, argument)]
    alpha = check_alpha("alpha", alpha)
    if method not in METHODS:
        raise TablegenInputError.naming(Argument("method"), f" must be one of {', '.join(METHODS)}, got {method!r}")
    K = len(models)
    C = K if C is None else check_competitors(C)
    if C < K:
        raise TablegenInputError.naming(Argument("C"), f" = {C} is less than the {K} models given: C counts every "
                                        "model tried, so it is at least the number given")
    seed = DEFAULT_SEED if seed is None else check_seed("seed", seed, allow_none=False)
    n, P = y.size, int(y.sum())
    sorted_all = models_sorted(np.array(list(models.values())))
    weights = mcc_weights(P, n - P, n + 1)
    key = cell_key(seed, P, n - P)  # the streams of (P, N) under the root seed, as everywhere
    nulls = checked_nulls(nulls)
    questions = []
    for spec in _unique(specs):
        try:
            applicable, not_applicable = _applicable(spec, y, models)
            replicates = _replicates(R, alpha, method, n, P, len(applicable))
        except TablegenInputError as error:
            if refused is None:
                raise
            refused[spec.name] = error
            continue
        entry = spec.counted_entry()
        column = TP_COLUMN if entry.k is not None else BASE_COLUMNS.index(entry.kernel_column)
        k_cut = int(entry.k) if entry.k is not None else 0
        members = np.array([list(models).index(m) for m in applicable], np.int64)
        observed = _observed(y, sorted_all, members, P, column, k_cut, weights)
        questions.append(SelectionQuestion(spec, entry, tuple(applicable), observed, sorted_all, members, P, n, C,
                                           replicates, seed, alpha, method, column, k_cut, weights, key,
                                           not_applicable, device, nulls,
                                           _look(R, replicates, alpha, K * n * replicates)))
    return questions


def _metric_names(metrics, argument: str) -> list:
    """``metrics`` as a list of names (one name alone too); an empty one refused naming ``argument``."""
    names = [metrics] if isinstance(metrics, str) else list(metrics) if isinstance(metrics, Iterable) else [metrics]
    if not names:
        raise TablegenInputError.naming(Argument(argument), " is empty: name at least one metric")
    return names


def _unique(specs: list[Metric]) -> list[Metric]:
    """Each metric once, where it first appears."""
    return list({spec.name: spec for spec in specs}.values())


def _observed(y: np.ndarray, sorted_all: SortedModels, members: np.ndarray, P: int, column: int, k_cut: int,
              weights: np.ndarray) -> np.ndarray:
    """Each member's value on the real labels, by the kernel that scores the arrangements."""
    from tablegen.compute.kernels.permutation import score_model

    labels_u8 = y.astype(np.uint8)
    return np.array([score_model(labels_u8, sorted_all.orders[i], sorted_all.group_ends[i], P, column, k_cut, weights)
                     for i in members])


def _applicable(spec: Metric, y: np.ndarray, models: dict) -> tuple[list[str], dict[str, str]]:
    """The models the metric is defined for (tp_at_k: no tied group straddles k), and why not for the others."""
    if spec.k is None:  # defined on every model's scores (Metric.score_groups raises only at a cut-off k)
        return list(models), {}
    applicable, not_applicable = [], {}
    for name, s in models.items():
        try:
            spec.score_groups(threshold_groups(y, s))
            applicable.append(name)
        except TablegenInputError as error:
            not_applicable[name] = str(error)
    if not applicable:
        raise TablegenInputError.naming(Argument("metric"), f" {spec.name} is not defined for any model given: "
                                        f"{next(iter(not_applicable.values()))}")
    return applicable, not_applicable


def _look(R, replicates: int, alpha: float, steps: float):
    """The early look of a permutation test whose R was left to tablegen (:func:`.sequential.max_t_look`), else
    None (R given, or every arrangement enumerated); sequential past the look where a run of R costs more than
    :data:`.engine.SEQUENTIAL_STEPS` (``steps``: models x items x R)."""
    if R is not None or replicates == 0:
        return None
    from tablegen.compare.pairwise.sequential import max_t_look
    from tablegen.compare.selection.engine import SEQUENTIAL_STEPS

    return max_t_look(alpha, replicates, sequential=steps > SEQUENTIAL_STEPS)


def _replicates(R, alpha: float, method: str, n: int, P: int, K: int) -> int:
    """R for a permutation test (checked), or 0 when the exact null is enumerated."""
    exact = method == "exact" or (method == "auto" and exact_fits(n, P, K))
    if method == "exact" and not exact_fits(n, P, K):
        raise TablegenInputError.naming(
            Argument("method", "exact"), f": C({n}, {P}) = {math.comb(n, P):.3g} label arrangements x {K} models is "
            f"over the exact budget ({EXACT_ARRANGEMENTS:,} arrangements); use ", Argument("method", "permutation"),
            " or ", Argument("method", "auto"))
    if exact:
        if R is not None:
            raise TablegenInputError.naming(Argument("R"), f" applies to a permutation test; here every one of the "
                                            f"{math.comb(n, P):,} label arrangements is enumerated (exact)")
        return 0
    R = DEFAULT_PERMUTATIONS if R is None else check_integer("R", R, minimum_replicates(1, alpha))
    check_memory(8.0 * R, f"a permutation test with R = {R:,}", ("use a smaller ", Argument("R")))
    return R
