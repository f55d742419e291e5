"""evaluate's progress and budget: progress(done, total) in estimated seconds, never falling, ending at the total;
a report estimated beyond the time limit (max_seconds, else TABLEGEN_TIME_LIMIT) refused before any work, with
its estimate, as the lookups refuse theirs."""

from __future__ import annotations

import numpy as np
import pytest

import tablegen
from tablegen.compare.report.cost import evaluation_cost
from tablegen.errors import ResourceLimitError, TablegenInputError


def _question(n=200, K=3, seed=4):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n // 3), np.zeros(n - n // 3)]
    return y, {f"m{i}": 0.5 * y + rng.normal(size=n) for i in range(K)}


def test_progress_is_told_of_monotone_work_ending_at_the_total_and_changes_no_number():
    y, models = _question()
    calls = []
    told = tablegen.evaluate(y, models, C=6, metrics=["auc", "best_f1"], R=300,
                             progress=lambda done, total: calls.append((done, total)))
    assert len(calls) >= 2 + 3 * 2  # the start, the verdicts, the steps of each metric
    totals = {total for _, total in calls}
    assert len(totals) == 1 and totals.pop() > 0
    done = [d for d, _ in calls]
    assert done[0] == 0.0 and done[-1] == calls[-1][1]
    assert all(a <= b for a, b in zip(done, done[1:]))
    quiet = tablegen.evaluate(y, models, C=6, metrics=["auc", "best_f1"], R=300)
    assert repr(told.to_dict()) == repr(quiet.to_dict())


@pytest.fixture
def no_work(monkeypatch):
    """Fails the test if the report starts computing."""
    import tablegen.lookup.from_scores as from_scores

    def refuse(*args, **kwargs):
        raise AssertionError("the report started work it should have refused")

    monkeypatch.setattr(from_scores, "significance_test_from_scores", refuse)


def test_a_report_over_max_seconds_is_refused_up_front_with_its_estimate(no_work):
    y, models = _question()
    estimate = evaluation_cost(y, models, metrics=["auc"]).seconds
    with pytest.raises(ResourceLimitError, match=r"would take about .* s on one core, more than the limit of "
                                                 r"1e-06 s; .*max_seconds") as error:
        tablegen.evaluate(y, models, metrics=["auc"], max_seconds=1e-6)
    assert error.value.exit_code == 5
    assert f"{estimate:.2g}" in str(error.value)


def test_tablegen_time_limit_refuses_as_for_the_lookups(no_work, monkeypatch):
    y, models = _question()
    monkeypatch.setenv("TABLEGEN_TIME_LIMIT", "1e-6")
    with pytest.raises(ResourceLimitError, match=r"TABLEGEN_TIME_LIMIT"):
        tablegen.evaluate(y, models, metrics=["auc"])


@pytest.mark.parametrize("bad", [0, -1.0, "ten", True, float("nan")])
def test_a_bad_max_seconds_is_refused_naming_it(bad):
    y, models = _question()
    with pytest.raises(TablegenInputError, match="max_seconds"):
        tablegen.evaluate(y, models, metrics=["auc"], max_seconds=bad)


def test_the_estimate_grows_with_the_work_and_names_its_steps():
    y, models = _question(n=3000, K=3)
    small = evaluation_cost(y, models, C=3, metrics=["auc"])
    more_models = evaluation_cost(y, {**models, "m3": models["m0"][::-1]}, C=4, metrics=["auc"])
    more_metrics = evaluation_cost(y, models, C=3, metrics=["auc", "best_f1"])
    competitors = evaluation_cost(y, models, C=30, metrics=["auc"])  # the exact null's queries join the max-T step
    assert small.seconds < more_models.seconds and small.seconds < more_metrics.seconds
    assert small.steps["auc", "max-T critical value"] == 0.0 < competitors.steps["auc", "max-T critical value"]
    assert set(more_metrics.steps) == {("verdicts",), *((m, s) for m in ("auc", "best_f1")
                                                        for s in ("max-T arrangements", "max-T critical value",
                                                                  "detectable", "paired", "intervals"))}
    assert "auc max-T arrangements" in small.describe()


def test_the_selection_test_tells_of_its_arrangements_block_by_block(monkeypatch):
    from tablegen.compare import selection_test
    from tablegen.compare.selection import engine

    y, models = _question()
    quiet = selection_test(y, models, metric="auc", R=2000)
    monkeypatch.setattr(engine, "BLOCK", 512)
    calls = []
    told = selection_test(y, models, metric="auc", R=2000, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(512, 2000), (1024, 2000), (1536, 2000), (2000, 2000)]
    assert repr(told.to_dict()) == repr(quiet.to_dict())


def test_evaluate_tells_of_progress_within_the_max_t_step(monkeypatch):
    from tablegen.compare.selection import engine

    y, models = _question()
    monkeypatch.setattr(engine, "BLOCK", 256)
    calls = []
    tablegen.evaluate(y, models, metrics=["auc"], R=2000, progress=lambda done, total: calls.append(done))
    assert len(calls) >= 2 + 2000 // 256  # the start, the verdicts, the blocks, the steps after
    assert all(a < b for a, b in zip(calls, calls[1:]))  # told only when it moves


def test_with_r_unset_a_swap_tested_pair_is_charged_its_early_look_not_the_cap():
    """10 models x 10^6 items: charged the cap, every swap-tested pair made the estimate 4,773 s, over the default
    hour, so the report (about 330 s of CPU) was refused; each pair is charged the look's l_e = 359 patterns now,
    R given still R, and the estimate is under the default limit.  One pass per pair scores every swap-tested
    metric: charged once, to the first of them (best accuracy here), the others nothing.  The default metrics are
    scored 64 patterns at a time (the lane kernel's step); with best MCC asked, one at a time (the swap kernel's)."""
    from tablegen.compare.report.cost import LANE_SWAP_STEP_SECONDS as SWAP_STEP_SECONDS
    from tablegen.compare.report.cost import PAIR_SECONDS
    from tablegen.compare.report.cost import SWAP_STEP_SECONDS as ONE_AT_A_TIME

    n = 10**6
    rng = np.random.default_rng(5)
    y = (rng.random(n) < 0.3).astype(np.int64)
    models = {f"m{i}": (0.2 + 0.1 * i) * y + rng.normal(size=n) for i in range(10)}
    unset = evaluation_cost(y, models, C=100)
    given = evaluation_cost(y, models, C=100, R=10_000)
    assert unset.steps["best_accuracy", "paired"] == pytest.approx(9 * (n * SWAP_STEP_SECONDS * 359 + PAIR_SECONDS),
                                                                   rel=1e-12)
    assert given.steps["best_accuracy", "paired"] == pytest.approx(
        9 * (n * SWAP_STEP_SECONDS * 10_000 + PAIR_SECONDS), rel=1e-12)
    for metric in ("best_f1", "best_balanced_accuracy", "average_precision"):  # the same pass
        assert unset.steps[metric, "paired"] == given.steps[metric, "paired"] == 0.0
    assert unset.seconds < given.seconds and unset.seconds < 3600.0  # TABLEGEN_TIME_LIMIT's default: an hour
    stricter = evaluation_cost(y, models, C=100, alpha=0.01)  # l_e = 1,799: a stricter level draws more
    assert stricter.steps["best_accuracy", "paired"] == pytest.approx(
        9 * (n * SWAP_STEP_SECONDS * 1_799 + PAIR_SECONDS), rel=1e-12)
    alone = evaluation_cost(y, models, C=100, metrics=["average_precision"])  # the first swap-tested metric
    assert alone.steps["average_precision", "paired"] == unset.steps["best_accuracy", "paired"]
    with_mcc = evaluation_cost(y, models, C=100, metrics=["best_accuracy", "best_mcc"])
    assert with_mcc.steps["best_accuracy", "paired"] == pytest.approx(9 * (n * ONE_AT_A_TIME * 359 + PAIR_SECONDS),
                                                                      rel=1e-12)


def test_the_verdicts_charge_a_null_of_its_own_only_to_a_tied_model():
    """AUC's per-model p-values: an untied model's comes from the one no-ties null the verdict builds, a tied
    model's from its own null given its ties: charged 2 answers, plus one per tied model (was one per model)."""
    from tablegen.compute.metrics import get_metric

    y, models = _question(n=3000, K=3)
    P = int(y.sum())
    one = get_metric("auc").exact_cost(P, y.size - P)[0]
    untied = evaluation_cost(y, models, metrics=["auc"])
    tied = evaluation_cost(y, {**models, "rounded": np.round(models["m0"], 1)}, metrics=["auc"])
    assert untied.steps["verdicts",] == pytest.approx(2 * one, rel=1e-12)
    assert tied.steps["verdicts",] == pytest.approx(3 * one, rel=1e-12)


@pytest.mark.slow  # average precision's programme kernel (~6 s from a cold numba cache)
def test_the_fold_of_a_bracketed_law_tells_progress_as_each_programme_ends(monkeypatch):
    """Average precision past enumeration with competitors not given: its two fine programmes can take minutes each
    (600, 1,400); the report tells its progress as each ends, within the step's estimate, not only once both have."""
    from tablegen.compute.exact import average_precision as ap

    rng = np.random.default_rng(3)
    y = np.r_[np.ones(20), np.zeros(40)]
    models = {f"m{i}": (0.5 + 0.5 * i) * y + rng.normal(size=60) for i in range(2)}
    calls, marks = [], []
    real = ap._programme

    def recording(*args, **kwargs):
        out = real(*args, **kwargs)
        if args[2] == ap.FINE_GRID:
            marks.append(len(calls))  # the calls told before this programme ended
        return out

    monkeypatch.setattr(ap, "_programme", recording)
    tablegen.evaluate(y, models, C=10, metrics=["average_precision"], progress=lambda d, t: calls.append((d, t)))
    assert len(marks) == 2 and marks[0] < marks[1] < len(calls)  # a call after each programme, before the next
    told = [done for done, _ in calls]
    assert told[marks[0]] < told[marks[1]] < calls[-1][1] == told[-1]
    assert all(a < b for a, b in zip(told, told[1:]))
