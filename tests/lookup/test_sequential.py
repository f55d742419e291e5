"""The sequential simulated verdict (tablegen.lookup.sequential): it stops early only where decided, agrees with the
exact verdict but with probability <= delta, its intervals cover at >= 95%, and the fixed-R answers are unchanged."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tablegen.compute.accumulator import tail_merge
from tablegen.compute.cell import DEFAULT_SEED
from tablegen.compute.mc import simulate_tails_and_counts
from tablegen.compute.metrics import get_metric
from tablegen.lookup.api import critical_value, p_value, significance_test, simulation_replicates
from tablegen.lookup.from_scores import significance_test_from_scores
from tablegen.lookup.sequential import (
    SEQUENTIAL_NOTE_START,
    SEQUENTIAL_RISK,
    clear_look,
    decision,
    interval_level,
    looks,
)

HEAD = json.loads((Path(__file__).parents[1] / "data" / "sequential_head" / "expected.json").read_text())


@pytest.mark.parametrize("name", ["ap_fixed", "auc_fixed"])
def test_a_given_R_answers_as_before_bit_for_bit(name):
    """(b) R given: the fixed-R run, the same answer as before the sequential rule (tests/data/sequential_head)."""
    assert significance_test(**HEAD[name]["arguments"]).to_dict() == HEAD[name]["result"]


def test_an_undecided_run_ends_on_the_fixed_R_values():
    """(c) A score whose tail is t* itself: no look decides, the last look has every ranking of the default R and the
    same critical value, p-value and verdict as before; only the intervals are the simultaneous ones (wider)."""
    arguments, before = HEAD["auc_undecided"]["arguments"], HEAD["auc_undecided"]["result"]
    result = significance_test(**arguments)
    assert result.replicates == before["replicates"] == simulation_replicates(20, 20, 10, arguments["alpha"])
    assert (result.significant, result.critical_value.value, result.p_value.value) == (
        before["significant"], before["critical_value"]["value"], before["p_value"]["value"])
    for answer, old in ((result.critical_value, before["critical_value"]), (result.p_value, before["p_value"])):
        assert answer.ci_low <= old["ci_low"] <= old["ci_high"] <= answer.ci_high
    assert len(result.notes) == 1
    assert result.notes[0].startswith(SEQUENTIAL_NOTE_START) and "ran to its last look" in result.notes[0]


def test_a_clear_verdict_stops_early_on_a_prefix_of_the_fixed_run():
    """A score far above the critical value is decided after a few thousand rankings (before: all 10^7); the answer
    is the fixed-R one at that R (the same stream), says where it stopped and why, and from_scores passes it on."""
    result = significance_test("auc", 20, 20, C=10, alpha=0.05, score=0.8, method="simulate")
    steps = looks(simulation_replicates(20, 20, 10, 0.05), 10, 0.05)
    assert result.replicates in steps[:-1] and result.significant and result.settled
    fixed = critical_value("auc", 20, 20, C=10, alpha=0.05, method="simulate", R=result.replicates)
    assert result.critical_value.value == fixed.value and result.critical_value.seed == fixed.seed == DEFAULT_SEED
    fixed_p = p_value("auc", 20, 20, C=10, score=0.8, method="simulate", R=result.replicates)
    assert result.p_value.bound == fixed_p.bound and result.p_value.ci_high >= fixed_p.ci_high
    assert result.p_value.value == fixed_p.value if fixed_p.bound == "" else result.p_value.value >= fixed_p.value
    assert "stopped early, at R = " in result.notes[0] and "lies below t*" in result.notes[0]
    y = np.r_[np.ones(20), np.zeros(20)]
    scores = np.r_[np.linspace(1.0, 2.0, 20), np.linspace(0.0, 1.5, 20)]  # AUC 0.8 or so, untied
    verdict = significance_test_from_scores(y, {"m": scores}, metrics=["auc"], C=10, alpha=0.05,
                                            method="simulate")["auc"]
    assert verdict.result.replicates < steps[-1] and any("stopped early" in note for note in verdict.notes)
    assert "stopped early" in verdict.sentence()


def test_stretches_of_the_stream_merge_into_the_whole_run():
    """simulate_tails_and_counts(first=): two stretches' tails, at one capacity, merge into the whole run's, and their
    counts add (what the looks rely on)."""
    metric = get_metric("average_precision")
    whole_tails, whole_counts = simulate_tails_and_counts(30, 50, 5_000, 9, [metric], 40, {metric.name: 0.5})
    parts = [simulate_tails_and_counts(30, 50, count, 9, [metric], 40, {metric.name: 0.5}, first=first)
             for first, count in ((0, 1_234), (1_234, 3_766))]
    merged = tail_merge(parts[0][0][metric.name], parts[1][0][metric.name])
    assert np.array_equal(merged.values, whole_tails[metric.name].values)
    assert np.array_equal(merged.counts, whole_tails[metric.name].counts) and merged.seen == 5_000
    assert parts[0][1][metric.name] + parts[1][1][metric.name] == whole_counts[metric.name]


#: (metric, P, N, scores): exact nulls cheap, scores whose tails are from 0.04 t* to 200 t* (C = 10, alpha = 0.05)
CELLS = [("auc", 20, 20, (0.69, 0.71, 0.72, 0.75, 0.76, 0.78)),
         ("best_f1", 30, 40, (0.6, 0.64, 0.66, 0.69, 0.7, 0.72))]


def _agreement_and_coverage(seeds):
    """(runs stopped early, of them disagreeing with the exact verdict, runs, intervals covering the exact values
    (two per run))."""
    early = wrong = runs = covered = 0
    for metric, P, N, scores in CELLS:
        final = simulation_replicates(P, N, 10, 0.05)
        cv = critical_value(metric, P, N, C=10, alpha=0.05, method="exact").value
        for score in scores:
            exact = significance_test(metric, P, N, C=10, alpha=0.05, score=score, method="exact")
            for seed in seeds:
                result = significance_test(metric, P, N, C=10, alpha=0.05, score=score, method="simulate", seed=seed)
                runs += 1
                if result.replicates < final:
                    early += 1
                    wrong += result.significant != exact.significant
                covered += result.critical_value.ci_low - 1e-12 <= cv <= result.critical_value.ci_high + 1e-12
                covered += result.p_value.ci_low <= exact.p_value.value * (1 + 1e-12) and \
                    exact.p_value.value <= result.p_value.ci_high * (1 + 1e-12)
    return early, wrong, runs, covered


def _check(early, wrong, runs, covered):
    # disagreements: at most what Binomial(early, delta) exceeds with probability < 1e-3
    assert wrong <= stats.binom.ppf(1 - 1e-3, early, SEQUENTIAL_RISK)
    # coverage: at least 95% of the intervals but for a one-sided 1e-3 binomial allowance
    assert covered >= stats.binom.ppf(1e-3, 2 * runs, 0.95)
    assert early == runs  # none of these scores needs the last look


def test_verdicts_agree_with_exact_and_intervals_cover():
    """(a) Forced simulations at cells with exact nulls, 15 seeds: the early verdicts agree with the exact ones, the
    reported intervals hold the exact critical value and p-value."""
    _check(*_agreement_and_coverage(range(1, 16)))


@pytest.mark.slow
def test_verdicts_agree_with_exact_and_intervals_cover_over_many_seeds():
    """(a) As above over 400 seeds (4,800 runs): disagreement rate consistent with <= delta, coverage >= 95%."""
    _check(*_agreement_and_coverage(range(100, 500)))


def test_the_look_schedule_and_the_level_of_each_looks_intervals():
    """The looks: a doubling schedule from 1,000 with the clear-winner look, ending at the policy's R; each look's
    intervals at 1 - 0.05/J (their simultaneous coverage is counted against exact values in the tests above)."""
    steps = looks(10_000_000, 10, 0.05)
    clear = clear_look(len(steps), 10, 0.05)
    assert clear in steps and decision(0, clear, 10, 0.05, len(steps)) and not decision(0, clear - 1, 10, 0.05,
                                                                                        len(steps))
    doubling = [R for R in steps[:-1] if R != clear]
    assert doubling[0] == 1_000 and steps[-1] == 10_000_000 and all(b == 2 * a for a, b in zip(doubling, doubling[1:]))
    assert interval_level(len(steps)) == 1 - 0.05 / len(steps)


#: The child of the device test: under numba-cuda's simulator, each answer with device="cuda" as JSON, and how many
#: blocks the CUDA cell scored (an accepted, ignored device would leave it at 0).
DEVICE_CHILD = r"""
import json, sys
import numpy as np
from tablegen.compute.kernels.cuda import driver
from tablegen.lookup.from_scores import significance_test_from_scores
from tablegen.lookup.api import significance_test
blocks = [0]
candidates = driver.CudaCell.candidates
def counted(self, *args, **kwargs):
    blocks[0] += 1
    return candidates(self, *args, **kwargs)
driver.CudaCell.candidates = counted
device = sys.argv[1]
y = np.r_[np.ones(8), np.zeros(12)]
scores = {"a": np.r_[np.linspace(1.0, 2.0, 8), np.linspace(0.0, 1.2, 12)], "b": np.linspace(0.0, 1.0, 20)}
out = {"fixed": significance_test_from_scores(y, scores, metrics=["average_precision"], C=10, alpha=0.05,
                                              method="simulate", R=300, seed=3, device=device).to_dict(),
       "sequential": significance_test("auc", 8, 12, C=10, alpha=0.05, score=0.3, method="simulate",
                                       device=device).to_dict()}
print(json.dumps({"answers": out, "blocks": blocks[0]}))
"""


@pytest.mark.slow  # 2.4-4.9 s: in the full suite, out of the fast loop (<= 2 min)
def test_device_reaches_the_simulation():
    """(b2) ``device="cuda"`` of significance_test_from_scores and significance_test reaches the simulation engine
    (numba-cuda's simulator in a child process: the CUDA cell scores the rankings), with the CPU's answers bit for
    bit, the fixed-R and the sequential run alike."""
    import importlib.util
    import os
    import subprocess
    import sys

    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: device='cuda' of the simulated verdict is NOT tested")
    runs = {}
    for device, simulator in (("cuda", "1"), ("cpu", "0")):
        done = subprocess.run([sys.executable, "-c", DEVICE_CHILD, device], capture_output=True, text=True,
                              env={**os.environ, "NUMBA_ENABLE_CUDASIM": simulator})
        assert done.returncode == 0, done.stderr[-4000:]
        runs[device] = json.loads(done.stdout.strip().splitlines()[-1])
    assert runs["cuda"]["blocks"] > 1 and runs["cpu"]["blocks"] == 0
    assert runs["cuda"]["answers"] == runs["cpu"]["answers"]
    assert runs["cpu"]["answers"]["sequential"]["replicates"] == 1_000  # decided at the first look
