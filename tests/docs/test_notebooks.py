"""The notebooks in ``notebooks/`` run top to bottom and print what they should.

Each notebook is executed with nbclient on a ``python3`` kernel, checked to run on this test's own
interpreter (the venv), with no cell error and nothing on stderr; then its printed figures are read
back and checked.  The committed notebooks must carry no outputs.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from progresstools import HANG_SECONDS

import tablegen
from tablegen.batch.config import config_from_mapping
from tablegen.batch.job import run
from tablegen.compute.metric_nulls import exact_critical_value

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAMES = ["01_reproduce_appendix.ipynb", "02_figures.ipynb", "03_is_my_winner_significant.ipynb",
         "04_comparing_classifiers.ipynb", "05_bayesian_f1.ipynb", "00_from_predictions.ipynb"]
KERNEL_CHECK = "import sys; print(sys.executable)"


def execute(name: str, parameters: dict | None = None) -> nbformat.NotebookNode:
    """Run a notebook (parameters injected after its ``parameters`` cell) and return it with outputs."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    if parameters:
        at = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
        source = "\n".join(f"{key} = {value!r}" for key, value in parameters.items())
        nb.cells.insert(at + 1, nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]}))
    nb.cells.append(nbformat.v4.new_code_cell(KERNEL_CHECK))
    NotebookClient(nb, kernel_name="python3", timeout=HANG_SECONDS,  # per cell: a hang, not a slow machine
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()  # raises on a cell error
    check = nb.cells.pop()
    assert check.outputs[0]["text"].strip() == sys.executable, "the python3 kernel is not this interpreter"
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    stderr = [o["text"] for o in outputs if o.output_type == "stream" and o["name"] == "stderr"]
    assert not stderr, f"{name} wrote to stderr: {stderr}"
    return nb


def printed(nb) -> str:
    return "".join(o["text"] for c in nb.cells if c.cell_type == "code" for o in c.outputs
                   if o.output_type == "stream")


def images(nb) -> int:
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def agreement_counts(text: str) -> dict[str, tuple[int, int]]:
    """{metric: (cells equal to three places, cells compared)} from notebook 1's summary lines."""
    return {m: (int(equal), int(cells)) for m, equal, cells in
            re.findall(r"^(\w+): (\d+) of (\d+) cells equal to three places", text, flags=re.M)}


# -- the committed files ------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_is_valid_and_stripped(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat == 4 and nb.metadata["kernelspec"]["name"] == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)
    assert "%matplotlib" not in "".join(c.source for c in code)


@pytest.mark.parametrize("name", NAMES[:2])
def test_first_code_cell_is_the_store_parameter(name):
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "parameters" in first.metadata.get("tags", [])
    assert re.search(r"^STORE = None\b", first.source, flags=re.M)


@pytest.mark.parametrize("name", NAMES)
def test_every_tablegen_name_a_notebook_uses_exists(name):
    """The fast loop's guard for the slow runs below: each ``from tablegen... import x`` and each
    ``tablegen.x`` a notebook uses resolves (a moved module or renamed function fails here)."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    tree = ast.parse("\n".join(c.source for c in nb.cells if c.cell_type == "code"))
    used = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module.split(".")[0] == "tablegen":
            module = importlib.import_module(node.module)
            missing = [a.name for a in node.names if not hasattr(module, a.name)]
            assert not missing, f"{name}: {node.module} has no {missing}"
            used += len(node.names)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "tablegen":
            assert hasattr(tablegen, node.attr), f"{name}: tablegen has no {node.attr}"
            used += 1
    assert used, f"{name} uses no tablegen name"


# -- running them -------------------------------------------------------------------------------
@pytest.mark.slow
def test_reproduce_appendix_with_the_bundled_table():
    nb = execute(NAMES[0])
    text = printed(nb)
    counts = agreement_counts(text)
    # The published tables hold four metrics on the 19 x 19 appendix grid.
    assert {m: cells for m, (_, cells) in counts.items()} == dict.fromkeys(
        ["auc", "best_accuracy", "best_f1", "tp_at_10"], 361)
    assert counts["tp_at_10"][0] == 361  # exact hypergeometric values: every cell (tests/compute/test_published.py)
    assert counts["best_accuracy"][0] == 360  # all but the one-step slip at (90, 100)
    assert counts["best_f1"][0] >= 0.95 * 361
    assert counts["auc"][0] >= 0.85 * 361
    assert "best_balanced_accuracy: no published values" in text
    inside = re.findall(r"^(\w+): exact value inside the 95% interval in (\d+) of (\d+) cells", text, flags=re.M)
    assert len(inside) == 5 and all(int(k) >= 0.9 * int(n) > 0 for _, k, n in inside), inside
    tables = [o for c in nb.cells for o in c.get("outputs", []) if "text/markdown" in o.get("data", {})]
    assert len(tables) == 5 and all("Pos \\ Neg" in o.data["text/markdown"] for o in tables)
    assert images(nb) == 1


@pytest.mark.slow
def test_reproduce_appendix_reads_any_store(tmp_path):
    store = tmp_path / "tiny.zarr"
    config = config_from_mapping({
        "name": "notebook-test", "grid": {"P": [20, 30], "N": [20, 40]}, "replicates": 20_000, "seed": 7,
        "metrics": ["auc", "best_accuracy", "best_f1", "tp_at_10", "best_balanced_accuracy"],
        "Cs": [10], "alphas": [0.01], "chunks": {"P": 1, "N": 2}, "store": {"url": str(store)},
        "cluster": {"workers": 1}})
    run(config, executor="serial")
    text = printed(execute(NAMES[0], {"STORE": str(store)}))
    assert "store: 2 x 2 cells" in text
    counts = agreement_counts(text)
    assert {m: cells for m, (_, cells) in counts.items()} == dict.fromkeys(
        ["auc", "best_accuracy", "best_f1", "tp_at_10"], 4)
    assert counts["tp_at_10"][0] == 4 and counts["best_accuracy"][0] == 4  # exact values, as in the paper


@pytest.mark.slow
def test_figures():
    nb = execute(NAMES[1])
    text = printed(nb)
    assert "12 figures drawn from bundled table" in text
    assert images(nb) == 13  # Fig. 1 and the twelve surfaces and contours, all displayed inline
    rows = re.findall(r"^\s+(auc|best_accuracy|best_f1)\s+C = 10: ([\d.]+)\s+C = 100: ([\d.]+)\s+C = 1000: ([\d.]+)",
                      text, flags=re.M)
    assert [r[0] for r in rows] == ["auc", "best_accuracy", "best_f1"]
    for metric, *values in rows:
        for C, value in zip((10, 100, 1000), values):
            assert float(value) == pytest.approx(exact_critical_value(metric, 10, 1000, C, 0.01), abs=5e-5)


@pytest.mark.slow
def test_is_my_winner_significant():
    nb = execute(NAMES[2])
    text = printed(nb)
    assert "auc = 0.6 is not significant at alpha = 0.01" in text
    assert "auc = 0.99 is significant" in text and "best_accuracy = 0.97 is significant" in text
    assert "best_accuracy = 0.665 is not significant" in text
    # The bar rises with C and so does the p-value of one score.
    by_C = re.findall(r"^C = +(\d+): critical AUC ([\d.]+)\s+p-value of 0.6: ([\d.e-]+)", text, flags=re.M)
    assert [int(c) for c, _, _ in by_C] == [1, 10, 114, 1000]
    for column in (1, 2):
        values = [float(row[column]) for row in by_C]
        assert values == sorted(values) and len(set(values)) == 4
    assert re.search(r"simulated with R = 200,000 \(seed 2005\): m\* = 0\.\d+, 95% CI", text)
    # More data of the same mix lowers the bar at every step; the balanced mix has the lowest bar.
    same_mix = text.split("same mix")[1].split("negatives only")[0]
    bars = [float(v) for v in re.findall(r"critical AUC ([\d.]+)", same_mix)]
    assert len(bars) == 7 and all(a > b for a, b in zip(bars, bars[1:]))
    assert re.search(r"^auc: lowest critical value [\d.]+ at P = 317, N = 317", text, flags=re.M)
    assert images(nb) == 2


@pytest.mark.slow
def test_comparing_classifiers():
    pytest.importorskip("sklearn")
    nb = execute(NAMES[3])
    text = printed(nb)
    # Across data sets, on the paper's Table 2 (tests/compare/test_compare_datasets.py checks these numbers).
    assert "chi2 = 19.2 (df 6), p = 0.00383" in text
    assert "Holm-adjusted: 3 of 21 pairs differ at alpha = 0.05: C3 beats C4" in text
    assert "mean ranks (1 = best): C3 3.343, C2 3.574, C6 3.759, C5 3.991, C1 4.139, C7 4.306, C4 4.889" in text
    assert "C2 vs C4: in the full pool they differ (z = 3.163, critical 2.948); the verdict flips in 5 of 32" in text
    assert "C4 vs C6: in the full pool they do not differ" in text
    # From predictions: every metric answered, the strong models significant, the weak ones mixed.
    assert "test set: P = 100, N = 200" in text
    strong = re.findall(r"^\w[\w ()-]* wins on (\w+): \1 = [\d.]+ is significant at alpha = 0.01", text, flags=re.M)
    assert strong == ["auc", "best_accuracy", "best_f1", "best_balanced_accuracy", "average_precision", "tp_at_50"]
    weak = re.findall(r"^  (\w+) .* p +[<\d.e -]+  (significant|not significant)$", text, flags=re.M)
    assert [m for m, _ in weak] == strong[:5] and {v for _, v in weak} == {"significant", "not significant"}
    assert "not defined for: {" in text and "no cut-off keeps ties together" in text
    assert images(nb) == 1


@pytest.mark.slow
def test_from_predictions():
    pytest.importorskip("sklearn")
    nb = execute("00_from_predictions.ipynb")
    text = printed(nb)
    assert "test set: P = 30, N = 50; 10 models" in text
    # the search's winner: not significant against ten independent random classifiers, significant against
    # the label-permutation null of the ten models themselves (they rank the items almost alike)
    for metric in ("auc", "best_accuracy"):
        assert re.search(rf"wins on {metric}: {metric} = [\d.]+ is not significant at alpha = 0.05", text)
        assert re.search(rf"'s {metric} = [\d.]+ is significantly better than the best of the 10 models given", text)
    effective = float(re.search(r"^effective C: ([\d.]+) of 10 models", text, flags=re.M).group(1))
    assert 1 < effective < 3
    independent, permuted = (float(v) for v in re.findall(r"^critical AUC, best of .*: ([\d.]+)$", text, flags=re.M))
    assert permuted < independent
    assert "significant: ['logistic C=" in text and "\\begin{tabular}{llrrrlrrl}" in text
    assert images(nb) == 1


@pytest.mark.slow
def test_bayesian_f1():
    pytest.importorskip("sklearn")
    nb = execute(NAMES[4])
    text = printed(nb)
    assert "test set: 899 digits, 10 classes" in text
    # A clear winner: the HDI of delta lies wholly right of the ROPE, and every frequentist test agrees.
    assert re.search(r"^SVM ≫ LR on macro F1: δ = ψ\(SVM\) − ψ\(LR\) has posterior mean \+0\.0\d+ and 95% HDI "
                     r"\[\+0\.0\d+, \+0\.0\d+\], wholly right of the ROPE", text, flags=re.M)
    assert "decision: SVM ≫ LR" in text and "50,000 independent draws" in text
    tests = re.findall(r"^(micro sign|macro sign|micro proportions|macro paired t)[\w() -]*?\s+[\d.]+\s+\d+\s+"
                       r"([\d.e-]+)\s+(\S+)$", text, flags=re.M)
    assert [t[0] for t in tests] == ["micro sign", "macro sign", "micro proportions", "macro paired t"]
    assert all(float(p) <= 0.01 and symbol == "≫" for _, p, symbol in tests)
    # A close call: the HDI overlaps the ROPE of 0.005; with a ROPE of 0.02 the two are equivalent.
    assert re.search(r"^SVM [<>] kNN on macro F1: .* overlapping the ROPE", text, flags=re.M)
    assert re.search(r"^with a ROPE of ±0.02: SVM ≈ kNN", text, flags=re.M)
    assert re.search(r"^SVM alone: macro F1 = 0\.9877 on the test set; posterior mean 0\.98\d+", text, flags=re.M)
    joint, independent = map(float, re.search(r"one μ ([\d.]+), independent μ \(the paper\) ([\d.]+)", text).groups())
    assert abs(joint / independent - 1) < 0.05  # balanced classes: sharing μ changes little here
    assert re.search(r"^SVM ≫ NB on macro F1: .* BF01 < ", text, flags=re.M)
    assert images(nb) == 2

