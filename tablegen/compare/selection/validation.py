"""The checked question of :func:`tablegen.compare.selection_test`: labels, models, metric, C, R, seed, method."""

from __future__ import annotations

import math
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
    """A checked selection test: the metric's entry (in count space for precision_at_k), the applicable
    models sorted once, their observed values (computed by the kernel that scores the arrangements)."""

    spec: Metric
    entry: Metric
    models: tuple
    observed: np.ndarray
    sorted_models: SortedModels
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
        seconds, memory = self.entry.exact_cost(P, N)
        what = f"the exact null of {self.spec.name} at P = {P}, N = {N} (for the {extra} competitors not given)"
        check_memory(memory, what, ("give every model's scores (", Argument("C"), " = the number of models)"))
        check_time(seconds, what, ("give every model's scores (", Argument("C"), " = the number of models)"))
        return self.nulls.untied(self.entry, P, N)


def checked_selection(labels, scores, metric, C, R, seed, alpha, positive_label, method,
                      device="cpu", nulls=None) -> SelectionQuestion:
    """Check every argument once (errors name the argument) and prepare the models (``nulls``: where the exact
    nulls are built and kept, :class:`~tablegen.compute.metric_nulls.ExactNulls`; a new one if None)."""
    from tablegen.compute.kernels.cuda.device import resolve_device
    from tablegen.compute.kernels.permutation import score_model
    from tablegen.compute.kernels.ranking import mcc_weights

    y = check_binary_labels(labels, positive_label)
    models = check_model_scores(scores, y.size)
    device = resolve_device(device)
    spec = get_metric(check_score_metric(metric))
    alpha = check_alpha("alpha", alpha)
    if method not in METHODS:
        raise TablegenInputError.naming(Argument("method"), f" must be one of {', '.join(METHODS)}, got {method!r}")
    K = len(models)
    C = K if C is None else check_competitors(C)
    if C < K:
        raise TablegenInputError.naming(Argument("C"), f" = {C} is less than the {K} models given: C counts every "
                                        "model tried, so it is at least the number given")
    applicable, not_applicable = _applicable(spec, y, models)
    n, P = y.size, int(y.sum())
    entry = spec.counted_entry()
    column = TP_COLUMN if entry.k is not None else BASE_COLUMNS.index(entry.kernel_column)
    k_cut = int(entry.k) if entry.k is not None else 0
    sorted_models = models_sorted(np.array([models[m] for m in applicable]))
    weights = mcc_weights(P, n - P, n + 1)
    labels_u8 = y.astype(np.uint8)
    observed = np.array([score_model(labels_u8, sorted_models.orders[i], sorted_models.group_ends[i], P, column,
                                     k_cut, weights) for i in range(len(applicable))])
    R = _replicates(R, alpha, method, n, P, len(applicable))
    seed = DEFAULT_SEED if seed is None else check_seed("seed", seed, allow_none=False)
    key = cell_key(seed, P, n - P)  # the streams of (P, N) under the root seed, as everywhere
    return SelectionQuestion(spec, entry, tuple(applicable), observed, sorted_models, P, n, C, R, seed, alpha, method,
                             column, k_cut, weights, key, not_applicable,
                             device, checked_nulls(nulls))


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
