"""Every entry point rejects bad input up front, naming the argument."""

import pytest

import tablegen
from tablegen import TablegenInputError, critical_value, p_value, significance_test, simulate_cell
from tablegen.compute.stats import minimum_replicates

GOOD = dict(P=20, N=30)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(P=0), "P must be an integer >= 1, got 0"),
        (dict(P=2.5), "P must be an integer >= 1, got 2.5"),
        (dict(P=True), "P must be an integer >= 1, got True"),
        (dict(N=-3), "N must be an integer >= 1, got -3"),
        (dict(N="10"), "N must be an integer >= 1, got '10'"),
        (dict(C=0), "C must be an integer >= 1, got 0"),
        (dict(alpha=0), r"alpha must be in \(0, 1\), got 0"),
        (dict(alpha=1.0), r"alpha must be in \(0, 1\), got 1.0"),
        (dict(alpha="0.05"), "alpha must be a number"),
        (dict(metric="aucc"), "unknown metric 'aucc'; did you mean 'auc'\\? Known metrics: auc, best_accuracy"),
        (dict(metric="tp_at_0"), "unknown metric 'tp_at_0'"),
        (dict(method="magic"), "method must be one of 'auto', 'exact', 'table', 'simulate', got 'magic'"),
        (dict(metric="average_precision", method="exact"),
         "has no exact null distribution at P = 20, N = 30; use method='simulate'"),
        (dict(table=3), "table must be a tablegen Table, a store path or None"),
        (dict(method="table", table="/nonexistent/store.zarr"), "store '/nonexistent/store.zarr' does not exist"),
        (dict(method="table", C=50), r"C = 50 is not in this table \(bundled table; C: 10, 100, 1000\)"),
        (dict(method="table", alpha=0.02), r"alpha = 0.02 is not in this table"),
        (dict(method="table", P=25), r"P = 25 is not in this table .* never interpolate"),
        (dict(method="simulate", C=1000, R=1000), "R = 1000 is too small for C = 1000, alpha = 0.01"),
        (dict(method="simulate", seed=-1), "seed must be an integer >= 0"),
    ],
)
def test_critical_value_and_significance_test_reject(kwargs, message):
    args = dict(metric="auc", **GOOD, C=10, alpha=0.01) | kwargs
    with pytest.raises(TablegenInputError, match=message):
        critical_value(**args)
    with pytest.raises(TablegenInputError, match=message):
        significance_test(**args, score=0.7)


def test_exact_beyond_the_memory_limit_is_refused_when_forced_and_avoided_by_auto(monkeypatch):
    monkeypatch.setenv("TABLEGEN_MEMORY_LIMIT", "1kB")
    with pytest.raises(TablegenInputError, match=r"method='exact': exact best_f1 at P = 200, N = 300 would need "
                                                 r"about .* of memory, more than the limit of 1 kB"):
        critical_value("best_f1", 200, 300, C=10, method="exact")
    answer = critical_value("best_f1", 200, 300, C=10)  # auto: the bundled table holds the cell
    assert answer.method in ("table", "exact") and answer.source == "bundled table"


def test_a_lookup_beyond_the_time_limit_is_refused_with_the_estimate_and_a_way_out(monkeypatch):
    from tablegen.errors import ResourceLimitError

    with pytest.raises(ResourceLimitError, match=r"simulating auc at P = 20, N = 20 with R = 39\d,\d{3},\d{3},\d{3} "
                                                 r"would take about .* s on one core, more than the limit of 3,600 s "
                                                 r"\(TABLEGEN_TIME_LIMIT\); pass a smaller R"):
        critical_value("auc", 20, 20, C=10**9, method="simulate")
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1e-9")
    with pytest.raises(ResourceLimitError, match="method='exact': exact auc at P = 200, N = 300 would take"):
        critical_value("auc", 200, 300, C=10, method="exact")
    assert critical_value("auc", 200, 300, C=10).method == "exact"  # auto: not forced, not refused


def test_memory_limit_setting_is_checked(monkeypatch):
    monkeypatch.setenv("TABLEGEN_MEMORY_LIMIT", "lots")
    with pytest.raises(TablegenInputError, match="TABLEGEN_MEMORY_LIMIT must be a positive size such as 8GB"):
        critical_value("best_f1", 200, 300, C=10)


@pytest.mark.parametrize("function,kwargs", [(critical_value, {}), (p_value, dict(score=0.7)),
                                             (significance_test, dict(score=0.7))])
def test_C_is_required_and_the_error_says_what_it_means(function, kwargs):
    with pytest.raises(TablegenInputError, match="C is required: the number of classifiers compared on this test "
                                                 r"set, counting every model tried \(discarded ones too\)"):
        function("auc", 20, 30, **kwargs)


@pytest.mark.parametrize("function", [p_value, significance_test])
def test_a_missing_score_is_an_input_error(function):
    with pytest.raises(TablegenInputError, match="score must be a number, got None"):
        function("auc", 20, 30, C=10, score=None)


@pytest.mark.parametrize("score,message", [
    (0.9, r"score = 0.9: tp_at_10 is a count of positives among the top 10, a whole number; 0.9 looks like a "
          "precision: use precision_at_10"),
    (2.5, r"score = 2.5: tp_at_10 is a count of positives among the top 10, a whole number$"),
])
def test_a_fractional_count_is_refused_and_a_precision_named(score, message):
    with pytest.raises(TablegenInputError, match=message):
        significance_test("tp_at_10", 100, 300, C=10, score=score)


def test_a_count_passed_as_a_precision_names_tp_at_k():
    with pytest.raises(TablegenInputError, match=r"outside the range of precision_at_10 .*; a count of positives "
                                                 "among the top 10 is tp_at_10"):
        p_value("precision_at_10", 100, 300, C=10, score=7)


def test_precision_at_k_cannot_be_stored_by_a_run():
    with pytest.raises(TablegenInputError, match=r"metrics: precision_at_10 is tp_at_10 / min\(k, P \+ N\)"):
        simulate_cell(20, 20, R=1000, seed=1, metrics=["precision_at_10"], Cs=[10])


def test_too_small_R_names_the_minimum():
    needed = minimum_replicates(1000, 0.01)
    with pytest.raises(TablegenInputError, match=f"need[s]? R >= {needed}"):
        critical_value("auc", 20, 30, C=1000, method="simulate", R=needed - 1, seed=1)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(score=1.2), r"score = 1.2 is outside the range of auc at P = 20, N = 30: \[0, 1\]"),
        (dict(score=-0.1), "score = -0.1 is outside the range"),
        (dict(score=float("nan")), "score must be a number"),
        (dict(metric="best_accuracy", score=0.5), r"outside the range of best_accuracy .*\[0.6, 1\]"),
        (dict(metric="tp_at_10", score=11), r"outside the range of tp_at_10 .*\[0, 10\]"),
        (dict(C=-2), "C must be an integer >= 1"),
        (dict(P=None), "P must be an integer >= 1, got None"),
    ],
)
def test_p_value_and_significance_test_reject(kwargs, message):
    args = dict(metric="auc", score=0.7, **GOOD, C=10) | kwargs
    with pytest.raises(TablegenInputError, match=message):
        p_value(**args)
    with pytest.raises(TablegenInputError, match=message):
        significance_test(**args)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(R=100, Cs=(1000,)), "R = 100 is too small for C = 1000"),
        (dict(seed=None), "seed must be an integer >= 0, got None"),
        (dict(metrics=["auc", "auc"]), "metrics has duplicates"),
        (dict(metrics=[]), "metrics must name at least one metric"),
        (dict(metrics=["f2"]), "unknown metric 'f2'"),
        (dict(Cs=(10, 10)), "Cs has duplicates"),
        (dict(Cs=()), "Cs must hold at least one value"),
        (dict(alphas=(0.01, 2.0)), r"alphas\[1\] must be in \(0, 1\)"),
        (dict(block_size=0), "block_size must be an integer >= 1"),
    ],
)
def test_simulate_cell_rejects_before_any_work(kwargs, message, monkeypatch):
    def no_kernel(*args, **kwargs):
        raise AssertionError("the kernel ran before validation finished")

    monkeypatch.setattr(tablegen.compute.mc, "simulate_block", no_kernel)
    args = dict(P=20, N=30, R=10_000, seed=1, Cs=(10,)) | kwargs
    with pytest.raises(TablegenInputError, match=message):
        simulate_cell(**args)


def test_input_errors_are_value_errors():
    assert issubclass(TablegenInputError, ValueError)


def test_below_the_ci_minimum_the_upper_end_is_the_metric_maximum():
    """At C = 1000, alpha = 0.01, R = 100,000 (laptop.yaml) the CI's upper order statistic does not
    exist (q**R > 0.025); the estimate does, and ci_high falls back to the metric's maximum."""
    answer = critical_value("best_accuracy", 20, 20, C=1000, alpha=0.01, method="simulate",
                            R=100_000, seed=3)
    assert answer.ci_high == 1.0
    assert answer.ci_low <= answer.value < 1.0
