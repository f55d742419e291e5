"""Tables of a comparison across data sets (tablegen.compare.comparison_table) and the options of
`tablegen compare datasets` that draw and print them.

References: the pair rows against the result's own fields and bayesian_pairs' probabilities; the Markdown
table read back cell by cell.
"""

from __future__ import annotations

import json

import pytest

from tablegen.cli.main import main
from tablegen.compare import across_datasets, bayesian_pairs, comparison_table
from tablegen.errors import TablegenInputError
from tests.conftest import DATA

PAPER = str(DATA / "benavoli2016_table2_accuracies.csv")


def test_markdown_rows_carry_the_adjusted_p_values_and_the_bayesian_probabilities():
    result = across_datasets(PAPER, test="sign", correction="hommel")
    bayes = bayesian_pairs(PAPER, test="sign", rope=1.0, samples=1000)
    text = comparison_table(result, bayes, "markdown")
    rows = [line.strip("|").split(" | ") for line in text.splitlines() if " vs " in line]
    assert len(rows) == 21
    for row, c in zip(rows, result.pairwise):
        pair = bayes.pair(c.a, c.b)
        assert row[0].strip() == f"{c.a} vs {c.b}" and row[1] == f"{c.wins}/{c.losses}/{c.ties}"
        assert float(row[5]) == pytest.approx(pair.p_a_better, abs=1e-4) and row[8].strip() == pair.verdict
    assert "Hommel p" in text and "largest Monte Carlo standard error" in text


def test_latex_and_text_formats():
    result = across_datasets(PAPER)
    latex = comparison_table(result, format="latex")
    assert latex.count(r"\begin{table}") == 2 and "Holm p" in latex
    assert comparison_table(result, format="text").splitlines()[3].startswith("C3 ")
    with pytest.raises(TablegenInputError, match="format must be one of"):
        comparison_table(result, format="html")
    with pytest.raises(TablegenInputError, match="run both on the same table"):
        comparison_table(result, bayesian_pairs([[1, 2], [2, 3.0]], samples=100))


def test_command_line_draws_prints_and_refuses(tmp_path, capsys):
    cd, bayes = tmp_path / "cd.png", tmp_path / "bayes.png"
    argv = ["compare", "datasets", PAPER, "--bayesian", "--rope", "1", "--samples", "500"]
    assert main(argv + ["--json", "--cd", str(cd), "--bayes-plot", str(bayes)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["bayesian"]["pairs"]) == 21 and cd.stat().st_size > 5000 and bayes.stat().st_size > 5000
    assert main(argv + ["--format", "markdown"]) == 0 and "| C1 vs C2 |" in capsys.readouterr().out
    assert main(["compare", "datasets", PAPER, "--bayes-plot", str(bayes)]) == 2
    assert "--bayes-plot needs --bayesian" in capsys.readouterr().err
    assert main(["compare", "datasets", PAPER, "--cd", str(cd), "--cd-method", "nemenyi"]) == 2
    assert "--mean-ranks-posthoc" in capsys.readouterr().err
