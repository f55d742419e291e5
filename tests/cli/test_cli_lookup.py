"""The lookup commands: lookup, test, export, plot, and info/verify on the bundled table."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from tablegen import critical_value, open_table, p_value, significance_test
from tablegen.cli.main import main
from tablegen.lookup.export import appendix_grid, format_appendix


def run_cli(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_lookup_prints_the_value_and_its_method(capsys):
    code, out, _ = run_cli(capsys, "lookup", "auc", "--P", "100", "--N", "300", "--C", "1000")
    assert code == 0
    assert out.splitlines()[0] == ("auc critical value for the best of C = 1,000 at P = 100, N = 300, "
                                   f"alpha = 0.01: {critical_value('auc', 100, 300, 1000).value:.6g} (exact)")
    code, out, _ = run_cli(capsys, "lookup", "average_precision", "--P", "1000", "--N", "1000", "--C", "1000",
                           "--alpha", "0.05")
    assert code == 0 and "Monte Carlo, R = 10,000,000, from the bundled table, 95% CI [" in out
    code, out, err = run_cli(capsys, "lookup", "average_precision", "--P", "2000", "--N", "300", "--C", "10",
                             "--R", "100000")
    assert code == 0 and "Monte Carlo, R = 100,000, seed 2005, simulated now, 95% CI [" in out
    assert "100,000/100,000 replicates  100.0%" in err  # progress on the command line


def test_lookup_json_matches_the_python_answer(capsys):
    code, out, _ = run_cli(capsys, "lookup", "best_f1", "--P", "1000", "--N", "20", "--C", "100", "--json")
    data = json.loads(out)
    assert code == 0 and data["critical_value"] == critical_value("best_f1", 1000, 20, 100).to_dict()


@pytest.mark.parametrize("score,verdict", [("0.70", "is significant"), ("0.60", "is not significant")])
def test_test_says_the_verdict_in_one_sentence_and_exits_0_either_way(capsys, score, verdict):
    code, out, _ = run_cli(capsys, "test", "auc", score, "--P", "150", "--N", "484", "--C", "114")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 3
    assert lines[0].startswith(f"auc = {float(score):g} {verdict} at alpha = 0.01")
    assert lines[1].lstrip().startswith("critical value") and lines[1].endswith("(exact)")
    assert lines[2].lstrip().startswith("p-value")


def test_test_json_and_bound_formatting(capsys):
    code, out, _ = run_cli(capsys, "test", "average_precision", "0.6", "--P", "100", "--N", "300", "--C", "1000",
                           "--json")
    data = json.loads(out)
    assert code == 0 and data["significant"] is True and data["method"] == "table"
    assert data["p_value"]["bound"] == "<" and data["p_value"]["value"] > 0
    code, out, _ = run_cli(capsys, "test", "average_precision", "0.6", "--P", "100", "--N", "300", "--C", "1000")
    assert "p-value         < 0.000557  (Monte Carlo, R = 10,000,000, from the bundled table" in out


def test_test_with_simulation_shows_progress_and_is_reproducible(capsys):
    argv = ["test", "average_precision", "0.35", "--P", "150", "--N", "484", "--C", "114", "--method", "simulate",
            "--R", "100000", "--seed", "3", "--json"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 0 and "100,000/100,000 replicates  100.0%" in err
    expected = significance_test("average_precision", 150, 484, 114, score=0.35, method="simulate", R=100_000, seed=3)
    assert json.loads(out) == json.loads(json.dumps(expected.to_dict()))


@pytest.mark.parametrize("argv,message", [
    (["lookup", "auc", "--P", "0", "--N", "300", "--C", "10"], "P must be an integer >= 1, got 0"),
    (["lookup", "auc", "--P", "10", "--N", "300", "--C", "0"], "C must be an integer >= 1, got 0"),
    (["lookup", "auc", "--P", "10", "--N", "300", "--C", "10", "--alpha", "1.5"], r"alpha must be in (0, 1)"),
    (["lookup", "aucc", "--P", "10", "--N", "300", "--C", "10"], "unknown metric 'aucc'"),
    (["lookup", "auc", "--P", "100", "--N", "300", "--C", "50", "--method", "table"],
     "C = 50 is not in this table (bundled table; C: 10, 100, 1000)"),
    (["lookup", "auc", "--P", "100", "--N", "300", "--C", "10", "--alpha", "0.02", "--method", "table"],
     "alpha = 0.02 is not in this table"),
    (["lookup", "auc", "--P", "100", "--N", "300", "--C", "10", "--table", "/nonexistent.zarr"], "does not exist"),
    (["test", "auc", "1.5", "--P", "100", "--N", "300", "--C", "10"], "score = 1.5 is outside the range of auc"),
    (["export", "/nonexistent.zarr", "--metric", "auc", "--C", "10"], "does not exist"),
    (["export", "--metric", "auc", "--C", "30"], "C = 30 is not in bundled table (C: 10, 100, 1000)"),
    (["export", "--metric", "average_precision", "--C", "10", "--values", "exact"], "holds no exact values"),
    (["export", "--metric", "auc", "--C", "10", "-o", "/nonexistent/dir/t.md"],
     "-o /nonexistent/dir/t.md: the directory /nonexistent/dir"),
    (["lookup", "auc", "--P", "20", "--N", "20", "--C", "1000", "--R", "1000", "--method", "exact"],
     "--R applies only to simulated answers (--method simulate or auto), not to --method exact"),
    (["export", "--metric", "auc", "--C", "10", "--digits", "-1"], "--digits must be in 0..15"),
    (["plot", "--metric", "auc", "--C", "10", "-o", "/nonexistent/dir/x.png"],
     "-o /nonexistent/dir/x.png: the directory /nonexistent/dir"),
    (["info", "/nonexistent.zarr"], "does not exist"),
])
def test_bad_input_exits_2_naming_the_argument(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and message in err and out == ""


def test_export_csv_is_the_appendix_grid(capsys):
    code, out, _ = run_cli(capsys, "export", "--metric", "best_accuracy", "--C", "10", "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0 and rows[0][0] == "Pos\\Neg"
    table = open_table()
    assert [int(n) for n in rows[0][1:]] == list(table.ds.N.values)
    assert [int(r[0]) for r in rows[1:]] == list(table.ds.P.values)
    assert rows[1][1] == "0.775"  # (20, 20): the exact value, as published
    values = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    expected = appendix_grid(table, "best_accuracy", 10).value.values
    assert np.allclose(values, expected, atol=0.0005 + 1e-12)


def test_export_markdown_and_latex_mark_monte_carlo_values(capsys, tmp_path):
    target = tmp_path / "auc.md"
    code, out, _ = run_cli(capsys, "export", "--metric", "auc", "--C", "1000", "-o", str(target))
    text = target.read_text()
    assert code == 0 and out.strip() == f"wrote {target}"
    lines = text.splitlines()
    assert lines[0].startswith("Critical values of auc for the best of C = 1000 random classifiers, alpha = 0.01")
    assert lines[2].startswith("| Pos \\ Neg | 20 | 30 |") and len(lines[4].split("|")) == 22
    assert "| **1000** |" in text and "*" not in lines[-1].replace("**", "")  # exact AUC in every cell
    code, out, _ = run_cli(capsys, "export", "--metric", "average_precision", "--C", "1000")
    assert code == 0 and "Monte Carlo" in out.splitlines()[0] and "*" not in out.replace("**", "")
    mixed = appendix_grid(open_table(), "auc", 1000)
    mixed["exact"][-1, -1] = False  # as a store whose largest AUC cell had no exact value
    lines = format_appendix(mixed, "markdown").splitlines()
    assert lines[-3].endswith("* |") and lines[-1].startswith("* Monte Carlo estimate")
    code, out, _ = run_cli(capsys, "export", "--metric", "tp_at_10", "--C", "100", "--format", "latex")
    assert out.splitlines()[1] == "\\begin{tabular}{r|" + "r" * 19 + "}"
    expected = int(appendix_grid(open_table(), "tp_at_10", 100).value[0, 0])
    assert out.splitlines()[4].split(" & ")[1] == str(expected)  # a count: no decimals
    assert out.rstrip().endswith("\\end{tabular}")


def test_format_appendix_shows_unfinished_cells_as_dashes():
    grid = appendix_grid(open_table(), "auc", 10)
    grid["value"][0, 0] = np.nan
    assert format_appendix(grid, "markdown").splitlines()[4].startswith("| **20** | – |")
    assert format_appendix(grid, "csv").splitlines()[1].startswith("20,,")


@pytest.mark.parametrize("kind", ["contour", "surface"])
def test_plot_writes_a_picture_with_content(capsys, tmp_path, kind):
    import matplotlib.image

    target = tmp_path / f"auc_{kind}.png"
    code, out, _ = run_cli(capsys, "plot", "--metric", "auc", "--C", "1000", "--kind", kind, "-o", str(target))
    assert code == 0 and out.strip() == f"wrote {target}"
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = matplotlib.image.imread(target)
    assert pixels.shape[0] > 400 and pixels.shape[1] > 600
    assert len(np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0)) > 50  # colours, not a blank canvas


def test_info_and_verify_default_to_the_bundled_table(capsys):
    code, out, _ = run_cli(capsys, "info")
    assert code == 0 and out.startswith("bundled table: complete, 361 of 361 cells done")
    assert "command: tablegen run configs/paper.yaml" in out and "R = 10,000,000 per cell" in out
    code, out, _ = run_cli(capsys, "verify", "--json")
    report = json.loads(out)
    assert code == 0 and report["checked"] == 10_830 and report["coverage"] >= 0.95


def test_export_of_an_unfinished_store_warns_and_leaves_cells_empty(capsys, tmp_path):
    from jobtools import small_config

    from tablegen.batch.job import create_job_store

    create_job_store(small_config(tmp_path / "partial.zarr"))
    code, out, err = run_cli(capsys, "export", str(tmp_path / "partial.zarr"), "--metric", "auc", "--C", "10")
    assert code == 2 and "no finished cell to export" in err and "is unfinished; 12 cells are left empty" in err
    code, out, err = run_cli(capsys, "lookup", "auc", "--P", "5", "--N", "8", "--C", "10", "--method", "table",
                             "--table", str(tmp_path / "partial.zarr"))
    assert code == 2 and "cell (P = 5, N = 8) of" in err and "is not finished" in err


def test_p_value_command_prints_the_p_value_and_its_source(capsys):
    code, out, _ = run_cli(capsys, "p-value", "auc", "0.65", "--P", "100", "--N", "300", "--C", "1000")
    expected = p_value("auc", 100, 300, C=1000, score=0.65)
    assert code == 0 and out.strip() == ("auc = 0.65 against the best of C = 1,000 random classifiers at P = 100, "
                                         f"N = 300: p-value {expected.formatted(4)} (exact)")
    code, out, _ = run_cli(capsys, "p-value", "auc", "0.65", "--P", "100", "--N", "300", "--C", "1000", "--json")
    assert code == 0 and json.loads(out)["p_value"] == expected.to_dict()


def test_help_shows_defaults_and_verbose_is_accepted_after_the_subcommand(capsys):
    with pytest.raises(SystemExit):
        run_cli(capsys, "lookup", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "significance level (default: 0.01)" in text and "(default: auto)" in text
    assert "(default: None)" not in text
    code, out, _ = run_cli(capsys, "lookup", "auc", "--P", "100", "--N", "300", "--C", "10", "-v")
    assert code == 0 and out.startswith("auc critical value")
