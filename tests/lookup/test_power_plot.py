"""The power curve draws tablegen.power's exact values, one line per C, and nothing else."""

from __future__ import annotations

import numpy as np
import pytest

import tablegen as tg
from tablegen.errors import TablegenInputError
from tablegen.lookup.power_plot import default_sizes, plot_power_curve


def test_each_line_is_the_exact_power_at_every_size():
    sizes = [10, 17, 24, 25, 26, 40]
    figure = plot_power_curve("best_accuracy", 0.8, 0.5, Cs=(10, 1), alpha=0.05, sizes=sizes)
    lines = [line for line in figure.axes[0].get_lines() if line.get_label().startswith("C = ")]
    assert [line.get_label() for line in lines] == ["C = 1", "C = 10"]  # sorted
    for line, C in zip(lines, (1, 10)):
        assert list(line.get_xdata()) == sizes
        P = [int(np.floor(0.5 * n + 0.5)) for n in sizes]
        expected = [tg.power("best_accuracy", p, n - p, C, 0.05, auc=0.8).power for p, n in zip(P, sizes)]
        assert list(line.get_ydata()) == expected
    # the saw-tooth of docs/explanation/power.md: 24 items reach 0.8, 25 and 26 fall back below
    one = dict(zip(sizes, lines[0].get_ydata()))
    assert one[24] >= 0.8 > one[25] > one[26]


def test_the_default_sizes_run_every_size_until_the_largest_c_is_detected():
    sizes = default_sizes("best_f1", 0.8, 0.5, 100, alpha=0.05)
    assert sizes[0] == 2 and np.all(np.diff(sizes) == 1)
    last = tg.power("best_f1", sizes[-1] // 2, sizes[-1] - sizes[-1] // 2, 100, 0.05, auc=0.8).power
    half = tg.power("best_f1", sizes[-1] // 4, sizes[-1] // 2 - sizes[-1] // 4, 100, 0.05, auc=0.8).power
    assert last >= 0.95 > half  # doubling: the first power of two from 16 at 0.95 or more


def test_the_default_sizes_stop_inside_the_exact_domain():
    sizes = default_sizes("auc", 0.55, 0.5, 1000, alpha=0.05)  # never reaches 0.95 inside the exact programme
    assert sizes[-1] == 512 and tg.power("auc", 256, 256, 1000, 0.05, auc=0.55).method == "exact"


def test_a_size_beyond_the_exact_programme_is_refused_and_nothing_written(tmp_path):
    path = tmp_path / "curve.png"
    with pytest.raises(TablegenInputError, match=r"sizes: no exact Lehmann power of auc at P = 1,000, N = 1,000"):
        plot_power_curve("auc", 0.7, 0.5, Cs=(1,), alpha=0.05, sizes=[100, 2000], path=path)
    assert not path.exists()


def test_the_figure_is_written(tmp_path):
    path = tmp_path / "curve.svg"
    plot_power_curve("best_f1", 0.75, 0.3, Cs=(1, 10, 100, 1000), alpha=0.05, sizes=range(10, 200, 10), path=path)
    assert path.read_text().lstrip().startswith("<?xml")


@pytest.mark.parametrize("kwargs, message", [
    (dict(Cs=()), "Cs must hold 1 to 12 values of C, got 0"),
    (dict(Cs=(1, 0)), "Cs: C must be an integer >= 1, got 0"),
    (dict(sizes=[1, 5]), "sizes must be an integer >= 2, got 1"),
    (dict(prevalence=1.0), "prevalence must be in (0, 1)"),
    (dict(auc=0.3), "auc must be in [0.5, 1), got 0.3"),
    (dict(path=3), "path must be None, an image file name or a file object"),
])
def test_bad_input_names_the_argument(kwargs, message):
    arguments = dict(metric="best_f1", auc=0.75, prevalence=0.5, Cs=(1, 10), alpha=0.05, sizes=[10, 20])
    with pytest.raises(TablegenInputError) as raised:
        plot_power_curve(**{**arguments, **kwargs})
    assert message in str(raised.value)
