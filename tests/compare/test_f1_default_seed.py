"""The F1 comparison repeats by default: a fixed root seed unless one is given (``None``: fresh entropy)."""

from __future__ import annotations

import numpy as np

from tablegen.cli.main import main
from tablegen.compare import f1_posterior
from tablegen.compare.f1.posterior import f1_score_posterior

A = [[45, 3, 2], [4, 40, 6], [1, 2, 47]]
B = [[44, 4, 2], [6, 38, 6], [2, 3, 45]]


def test_the_default_seed_is_fixed_and_an_explicit_seed_still_rules():
    first, again = f1_posterior(A, B, samples=1_000), f1_posterior(A, B, samples=1_000)
    assert first.seed == again.seed == 2005
    np.testing.assert_array_equal(first.delta, again.delta)
    other = f1_posterior(A, B, samples=1_000, seed=7)
    assert other.seed == 7 and not np.array_equal(other.delta, first.delta)
    assert f1_posterior(A, B, samples=1_000, seed=None).seed != 2005  # fresh entropy, reported
    assert f1_score_posterior(A, samples=1_000).seed == 2005


def test_compare_f1_prints_the_same_numbers_twice(tmp_path, capsys):
    for name, matrix in (("a.csv", A), ("b.csv", B)):
        (tmp_path / name).write_text("\n".join(",".join(map(str, row)) for row in matrix) + "\n")
    outputs = []
    for _ in range(2):
        assert main(["compare", "f1", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--samples", "1000",
                     "--json"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and '"seed": 2005' in outputs[0]
