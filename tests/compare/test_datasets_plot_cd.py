"""tablegen.compare.plot_cd: the critical-difference diagram from a result of across_datasets or from the scores."""

from __future__ import annotations

import pytest

import tablegen.compare
from tablegen.compare import across_datasets, plot_cd
from tablegen.errors import TablegenInputError

X = [[0.9, 0.8, 0.7, 0.6], [0.85, 0.8, 0.75, 0.7], [0.95, 0.7, 0.72, 0.71], [0.8, 0.78, 0.6, 0.5],
     [0.91, 0.81, 0.79, 0.62], [0.88, 0.86, 0.7, 0.69]]


def drawn(figure) -> list:
    """What the diagram says: every text and the title of its axes."""
    ax = figure.axes[0]
    return [ax.get_title()] + [(t.get_text(), t.get_position()) for t in ax.texts]


@pytest.mark.parametrize("method", ["tests", "nemenyi"])
def test_the_function_draws_what_the_method_draws(method):
    result = across_datasets(X, mean_ranks_posthoc=method != "tests")
    assert drawn(plot_cd(result, method=method)) == drawn(result.plot_cd(method=method))
    assert drawn(plot_cd(X, method=method)) == drawn(result.plot_cd(method=method))  # from the scores


def test_options_go_to_across_datasets_from_scores_and_are_refused_with_a_result(tmp_path):
    lower = [[1 - v for v in row] for row in X]
    assert drawn(plot_cd(lower, higher_is_better=False, alpha=0.1)) == drawn(across_datasets(X, alpha=0.1).plot_cd())
    with pytest.raises(TablegenInputError, match="options \\['alpha'\\] are for scores"):
        plot_cd(across_datasets(X), alpha=0.1)
    plot_cd(X, tmp_path / "cd.png")
    assert (tmp_path / "cd.png").stat().st_size > 0


def test_plot_cd_is_public():
    assert "plot_cd" in tablegen.compare.__all__ and tablegen.compare.plot_cd is plot_cd
