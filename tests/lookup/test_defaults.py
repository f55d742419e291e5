"""One default R and one default seed for every simulation a user does not configure."""

from __future__ import annotations

import re

import pytest

from tablegen.cli.main import main
from tablegen.compute.cell import DEFAULT_SEED
from tablegen.errors import TablegenInputError
from tablegen.lookup.api import critical_value, simulation_replicates


def test_lookups_and_the_engine_share_one_default_seed():
    assert DEFAULT_SEED == 2005  # one default, defined once (tablegen.compute.cell)


def test_a_simulated_lookup_reports_the_default_r_and_seed():
    answer = critical_value("average_precision", 7, 9, C=10, alpha=0.05, method="simulate")
    assert (answer.replicates, answer.seed) == (simulation_replicates(7, 9, 10, 0.05), DEFAULT_SEED)


def test_tablegen_simulate_uses_the_same_defaults(capsys):
    assert main(["simulate", "--P", "7", "--N", "9", "--metrics", "best_accuracy", "--C", "10", "100",
                 "--alpha", "0.05", "--no-exact"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    R = max(simulation_replicates(7, 9, C, 0.05) for C in (10, 100))
    assert re.fullmatch(rf"P = 7, N = 9, R = {R:,}, seed = {DEFAULT_SEED}", first), first


@pytest.mark.parametrize("args, name", [((0, 9, 10), "P"), ((7, 9, 0), "C"), ((7, 9, 10, 1.5), "alpha")])
def test_the_default_r_refuses_bad_arguments_by_name(args, name):
    with pytest.raises(TablegenInputError, match=rf"^{name} must"):
        simulation_replicates(*args)
