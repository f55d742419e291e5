"""The compare commands refuse, before any work (exit 2, naming the option), options that would be silently
ignored (the Bayesian options of ``compare datasets`` without ``--bayesian``) and values outside their meaning
(a ROPE holding every possible difference, a test fraction of 0, a decision probability below 1/2)."""

from __future__ import annotations

import pytest
from clitools import tablegen

RESULTS = "dataset,A,B,C\n" + "".join(f"d{i},{0.7 + i / 100},{0.72 + (i % 3) / 100},{0.69 + i / 90}\n"
                                      for i in range(8))
FOLDS = "A,B\n" + "".join(f"{0.8 + (i % 4) / 100},{0.79 + (i % 5) / 100}\n" for i in range(10))


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "results.csv").write_text(RESULTS)
    (tmp_path / "folds.csv").write_text(FOLDS)
    (tmp_path / "a.csv").write_text("40 5\n6 49\n")
    (tmp_path / "b.csv").write_text("38 7\n5 50\n")
    return tmp_path


@pytest.mark.parametrize("option", [["--rope", "0.1"], ["--prior", "1"], ["--samples", "-1"], ["--seed", "3"],
                                    ["--probability", "0.9"], ["--bayes-plot", "b.png"]], ids=lambda o: o[0])
def test_a_bayesian_option_without_bayesian_is_refused(option, workdir):
    code, err = tablegen(["compare", "datasets", "results.csv", *option], workdir)
    assert code == 2 and f"{option[0]} needs --bayesian" in err, err


@pytest.mark.parametrize(("argv", "option"), [
    (["compare", "datasets", "results.csv", "--bayesian", "--rope", "2"], "--rope"),
    (["compare", "datasets", "results.csv", "--bayesian", "--probability", "0.3"], "--probability"),
    (["compare", "datasets", "results.csv", "--bayesian", "--samples", "99"], "--samples"),
    (["compare", "cv", "folds.csv", "--rope", "2"], "--rope"),
    (["compare", "cv", "folds.csv", "--rho", "0"], "--rho"),
    (["compare", "f1", "a.csv", "b.csv", "--mu", "independent", "--rope", "2"], "--rope"),
    (["compare", "f1", "a.csv", "b.csv", "--mu", "independent", "--rope=-1,0.1"], "--rope"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_a_value_outside_its_meaning_is_refused_naming_the_option(argv, option, workdir):
    code, err = tablegen(argv, workdir)
    assert code == 2 and f"error: {option} " in err, err


def test_a_memory_sized_draw_count_is_refused_with_its_estimate(workdir):
    code, err = tablegen(["compare", "datasets", "results.csv", "--bayesian", "--samples", str(10**13)], workdir)
    assert code == 5 and "TB of memory" in err and "--samples" in err, err
