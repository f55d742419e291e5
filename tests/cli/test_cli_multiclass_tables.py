"""tablegen info, export and plot of a multi-class table (the store of a kind: multiclass job): what info prints,
every exported value against the exact routine (and K = 2 against scipy's hypergeometric law), a damaged store
refused naming what is damaged, and bad options named.  Before these commands knew the kind, info and export
stopped with a traceback (AttributeError: 'MulticlassTable' object has no attribute 'ds' / 'coordinate')."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import numpy as np
import pytest

import tablegen
from tablegen.batch.config import config_from_mapping
from tablegen.batch.multiclass_job import prepare_multiclass_store, run_multiclass, run_multiclass_chunk
from tablegen.cli.main import main
from tablegen.store.lock import StoreLock

GRID = {"kind": "multiclass", "grid": {"K": [2, 3, 5], "n_per_class": [5, 20]}, "Cs": [1, 10, 100],
        "alphas": [0.05, 0.01], "chunks": {"K": 1, "n_per_class": 1}}


def output(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(word) for word in argv])
        except SystemExit as exit_:
            code = exit_.code
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("multiclass-tables") / "m.zarr"
    run_multiclass(config_from_mapping(GRID | {"store": {"url": str(path)}}), executor="serial")
    return str(path)


def _copy(store: str, tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(store, tmp_path / "copy.zarr")
    return tmp_path / "copy.zarr"


def _flip(chunk: Path) -> None:
    data = bytearray(chunk.read_bytes())
    data[len(data) // 2] ^= 0x10
    chunk.write_bytes(bytes(data))


# -- info ------------------------------------------------------------------------------------------------------
def test_info_prints_what_a_multiclass_store_holds(store):
    code, text, err = output(["info", store])
    assert code == 0 and "Traceback" not in err, err
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(store) for f in files)
    for line in (f"{store}: multi-class table (kind: multiclass), complete, 6 of 6 cells done", "  K: 2, 3, 5",
                 "  n_per_class: 5, 20", "  metrics: accuracy, kappa, balanced_accuracy, macro_f1",
                 "  C: 1, 10, 100; alpha: 0.05, 0.01", "nothing is simulated, so there is no R or seed",
                 "(schema tablegen-multiclass-critical-values version 1)", "  integrity: 6 chunks match the manifest",
                 f"({size:,} bytes)"):
        assert line in text, (line, text)
    assert "missing cells" not in text


def test_info_json_holds_the_grid_done_cells_and_size(store):
    code, text, _ = output(["info", store, "--json"])
    report = json.loads(text)
    assert code == 0 and report["kind"] == "multiclass" and report["method"] == "exact"
    assert report["grid"] == {"K": [2, 3, 5], "n_per_class": [5, 20],
                              "metric": ["accuracy", "kappa", "balanced_accuracy", "macro_f1"], "C": [1, 10, 100],
                              "alpha": [0.05, 0.01]}
    assert (report["cells"], report["cells_done"], report["missing"]) == (6, 6, [])
    assert report["schema"] == "tablegen-multiclass-critical-values" and report["schema_version"] == 1
    assert report["size_bytes"] == sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(store) for f in fs)
    assert "config" not in report["provenance"] and report["provenance"]["complete"] is True


def _half_written(tmp_path: Path) -> Path:
    path = tmp_path / "half.zarr"
    config = config_from_mapping(GRID | {"store": {"url": str(path)}})
    with StoreLock(str(path)):
        plan = prepare_multiclass_store(config)
        for chunk in plan.remaining[:4]:
            run_multiclass_chunk(config, chunk)
    return path


def test_info_and_export_of_an_unfinished_store(tmp_path):
    path = _half_written(tmp_path)
    done = tablegen.open_table(str(path)).done()
    missing = [(K, n) for k, K in enumerate((2, 3, 5)) for j, n in enumerate((5, 20)) if not done[k, j]]
    code, text, _ = output(["info", path])
    assert code == 0 and "INCOMPLETE, 4 of 6 cells done" in text
    assert "missing cells (K, n_per_class): " + ", ".join(f"({K}, {n})" for K, n in missing) in text
    code, text, err = output(["export", path, "--metric", "accuracy", "--C", "10", "--json"])
    grid = json.loads(text)
    assert code == 0 and "is unfinished; 2 cells are left empty" in err
    empty = [(K, n) for i, K in enumerate(grid["K"]) for j, n in enumerate(grid["n_per_class"])
             if grid["value"][i][j] is None]
    assert empty == missing and all(grid["method"][grid["K"].index(K)][grid["n_per_class"].index(n)] is None
                                    for K, n in missing)


@pytest.mark.parametrize("target, named", [
    (("critical_hits", "c", "0", "0", "1", "0"), "region 1,0 (K 3..3 x n_per_class 5..5): a chunk cannot be decoded"),
    (("done", "c", "2", "1"), "region 2,1 (K 5..5 x n_per_class 20..20): a chunk cannot be decoded"),
])
def test_info_and_export_refuse_a_damaged_store_naming_the_region(store, tmp_path, target, named):
    path = _copy(store, tmp_path)
    _flip(path.joinpath(*target))
    code, text, err = output(["info", path])
    assert code == 3 and named in err and "Traceback" not in err and not text, err
    out = tmp_path / "grid.csv"
    code, text, err = output(["export", path, "--metric", "accuracy", "--C", "10", "--format", "csv", "-o", out])
    assert code == 3 and "is damaged" in err and not out.exists(), err
    assert ("K = 3, n_per_class = 5" if "critical_hits" in target else "K = 5, n_per_class = 20") in err


def test_info_and_export_refuse_edited_metadata(store, tmp_path):
    path = _copy(store, tmp_path)
    meta = json.loads((path / "zarr.json").read_text())
    meta["attributes"]["method"] = "monte carlo"
    (path / "zarr.json").write_text(json.dumps(meta))
    for argv in (["info", path], ["export", path, "--metric", "accuracy", "--C", "10"]):
        code, text, err = output(argv)
        assert code == 3 and "attribute method differs from the manifest's record" in err and not text, (argv, err)


# -- export ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("metric", ["accuracy", "kappa", "balanced_accuracy", "macro_f1"])
def test_export_json_holds_every_exact_value_keyed_by_k_and_n(store, metric):
    for C in (1, 10, 100):
        for alpha in (0.05, 0.01):
            code, text, _ = output(["export", store, "--metric", metric, "--C", C, "--alpha", alpha, "--json"])
            grid = json.loads(text)
            assert code == 0 and (grid["kind"], grid["metric"], grid["C"], grid["alpha"]) == (
                "multiclass", metric, C, alpha)
            assert (grid["K"], grid["n_per_class"]) == ([2, 3, 5], [5, 20])
            for i, K in enumerate(grid["K"]):
                for j, n in enumerate(grid["n_per_class"]):
                    exact = tablegen.critical_value(metric, K=K, n_per_class=n, C=C, alpha=alpha, method="exact")
                    assert grid["value"][i][j] == exact.value and grid["method"][i][j] == "exact"
                    assert grid["exact"][i][j] is True and isinstance(grid["critical_hits"][i][j], int)


def test_export_of_k_2_agrees_with_the_hypergeometric_law(store):
    """K = 2, n_per_class = m, predicted counts m: the hits are 2 TP with TP ~ hypergeom(2m, m, m) (scipy), so the
    critical hits are 2t for the largest t whose best-of-C p-value 1 - Pr(TP < t)**C is above alpha."""
    from scipy.stats import hypergeom

    code, text, _ = output(["export", store, "--metric", "accuracy", "--C", 10, "--alpha", 0.05, "--json"])
    grid = json.loads(text)
    for j, m in enumerate(grid["n_per_class"]):
        law = hypergeom(2 * m, m, m)
        t = max(t for t in range(m + 1) if 1 - law.cdf(t - 1) ** 10 > 0.05)
        assert grid["critical_hits"][0][j] == 2 * t and grid["value"][0][j] == t / m


def test_export_markdown_csv_and_latex_lay_out_k_by_n(store, tmp_path):
    values = [[tablegen.critical_value("kappa", K=K, n_per_class=n, C=100, alpha=0.05, method="exact").value
               for n in (5, 20)] for K in (2, 3, 5)]
    code, text, _ = output(["export", store, "--metric", "kappa", "--C", 100, "--alpha", 0.05, "--format", "csv"])
    assert code == 0 and text.splitlines() == ["K\\n_per_class,5,20"] + [
        f"{K}," + ",".join(f"{v:.3f}" for v in row) for K, row in zip((2, 3, 5), values)]
    code, text, _ = output(["export", store, "--metric", "kappa", "--C", 100, "--alpha", 0.05])
    assert code == 0 and "Critical values of kappa for the best of C = 100 random classifiers, alpha = 0.05" in text
    assert "(exact; " in text and "| K \\ n | 5 | 20 |" in text and "* Monte Carlo" not in text
    assert f"| **3** | {values[1][0]:.3f} | {values[1][1]:.3f} |" in text
    out = tmp_path / "t.tex"
    code, text, _ = output(["export", store, "--metric", "kappa", "--C", 100, "--alpha", 0.05, "--format", "latex",
                            "-o", out])
    assert code == 0 and "$K \\backslash n$ & 5 & 20 \\\\" in out.read_text()
    assert f"5 & {values[2][0]:.3f} & {values[2][1]:.3f} \\\\" in out.read_text()


def test_export_default_alpha_is_0_01_where_held(store):
    code, text, _ = output(["export", store, "--metric", "accuracy", "--C", 10, "--json"])
    assert code == 0 and json.loads(text)["alpha"] == 0.01


@pytest.mark.parametrize("argv, named", [
    (["--metric", "auc", "--C", "10"], "--metric must be one of accuracy, kappa"),
    (["--metric", "accuracy", "--C", "7"], "C = 7 is not in"),
    (["--metric", "accuracy", "--C", "10", "--alpha", "0.1"], "alpha = 0.1 is not in"),
    (["--metric", "accuracy", "--C", "10", "--values", "monte-carlo"], "--values monte-carlo: "),
    (["--metric", "accuracy", "--C", "0"], "C must be an integer >= 1"),
])
def test_export_bad_options_are_named(store, tmp_path, argv, named):
    out = tmp_path / "x.md"
    code, text, err = output(["export", store, *argv, "-o", out])
    assert code == 2 and named in err and not out.exists(), err


def test_plot_refuses_a_multiclass_store_pointing_at_export(store, tmp_path):
    code, _, err = output(["plot", store, "--metric", "accuracy", "--C", "10", "-o", tmp_path / "p.png"])
    assert code == 2 and "is a multi-class table" in err and "tablegen export" in err
    assert not (tmp_path / "p.png").exists()


def test_the_binary_export_is_unchanged():
    code, text, _ = output(["export", "--metric", "best_accuracy", "--C", "10", "--format", "csv"])
    assert code == 0 and text.startswith("Pos\\Neg,20,30,") and "\n20,0.775," in text
    record = json.loads(output(["export", "--metric", "best_accuracy", "--C", "10", "--json"])[1])
    assert list(record) == ["metric", "C", "alpha", "values", "source", "replicates", "P", "N", "value", "exact"]
    assert np.isclose(record["value"][0][0], 0.775)
