"""The metric registry owns its metric: nothing else branches on a metric's name.

The package source is read with :mod:`ast`.  A metric name (a registry name, or ``tp_at_<k>`` /
``precision_at_<k>``) written as a string literal outside the registry
(``tablegen/compute/metrics.py``) and the kernels' column table (``BASE_COLUMNS`` in
``tablegen/compute/kernels/ranking.py``) is a branch on the name when it is compared with (``==``,
``!=``, ``in``), used as a dict key or a subscript, or matched in a ``match`` case — which is how a
metric's behaviour leaks out of its entry.  Docstrings, messages and default arguments are not
branches.  The routines the entries name must live in layers below the registry, and resolve.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import re

import pytest

from tablegen.compute.metrics import BASE_METRICS, DEFAULT_METRICS, get_metric, metric_entries

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "tablegen"
REGISTRY = PACKAGE / "compute" / "metrics.py"
#: The kernels' output columns are named once, in their column table.
COLUMN_TABLES = {PACKAGE / "compute" / "kernels" / "ranking.py": "BASE_COLUMNS"}
#: Known branches outside the registry, each with who owns it; the test also fails if one is gone
#: (then delete its line), so this list only shrinks.
#: (Empty: scoring real classifier scores and its tie note moved into the entries, ``from_scores`` and
#: ``ties_conservative``.)
KNOWN: set[str] = set()
_NAMED = re.compile(r"^(tp|precision)_at_[1-9][0-9]*$")


def is_metric_name(value) -> bool:
    return isinstance(value, str) and (value in BASE_METRICS or _NAMED.match(value) is not None)


def _column_table_nodes(tree: ast.AST, name: str) -> set[int]:
    """ids of the constants inside the assignment of ``name`` (the column table itself)."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            inside |= {id(c) for c in ast.walk(node.value)}
    return inside


def branches(path: pathlib.Path) -> list[str]:
    """Every place in ``path`` that branches on a metric-name literal (see the module docstring)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    exempt = _column_table_nodes(tree, COLUMN_TABLES[path]) if path in COLUMN_TABLES else set()
    found = []

    def flag(node, how):
        for constant in ast.walk(node):
            if (isinstance(constant, ast.Constant) and is_metric_name(constant.value)
                    and id(constant) not in exempt):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{constant.lineno}: {constant.value!r} {how}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            flag(node, "compared")
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                if key is not None:
                    flag(key, "as a dict key")
        elif isinstance(node, ast.Subscript):
            flag(node.slice, "as a subscript")
        elif isinstance(node, ast.match_case):
            flag(node.pattern, "matched")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(getattr(node, "value", None), ast.Tuple):
            flag(node.value, "in a tuple of names")
    return found


def package_sources() -> list[pathlib.Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p != REGISTRY)


def test_nothing_outside_the_registry_branches_on_a_metric_name():
    problems = {}
    for path in package_sources():
        found = branches(path)
        if found:
            problems[str(path.relative_to(PACKAGE.parent))] = found
    unknown = {path: found for path, found in problems.items() if path not in KNOWN}
    assert not unknown, "metric-name branches outside the registry:\n" + "\n".join(
        line for found in unknown.values() for line in found)
    assert set(problems) == KNOWN, f"no longer branching (delete from KNOWN): {sorted(KNOWN - set(problems))}"


def test_the_check_finds_a_branch_when_there_is_one(tmp_path, monkeypatch):
    source = tmp_path / "probe.py"
    source.write_text('def f(metric, table):\n    """auc is fine here"""\n'
                      '    x = {"best_f1": 1}\n    y = table["tp_at_10"]\n'
                      '    if metric == "auc":\n        return x, y\n    print("auc")\n')
    monkeypatch.setattr(pathlib.Path, "relative_to", lambda self, other: self)
    found = branches(source)
    assert [line.split(": ", 1)[1] for line in found] == [
        "'best_f1' as a dict key", "'tp_at_10' as a subscript", "'auc' compared"]


@pytest.mark.parametrize("name", [*BASE_METRICS, "tp_at_10", "precision_at_3"])
def test_every_named_routine_resolves_below_the_registry(name):
    spec = get_metric(name)
    routines = [spec.exact_routine, spec.cost_routine, spec.cells_routine, spec.cells_cost_routine,
                spec.tabulated_routine]
    for path in filter(None, routines):
        module, attribute = path.split(":")
        assert module.startswith("tablegen.compute.exact"), path
        assert callable(getattr(importlib.import_module(module), attribute)), path
    assert (spec.kernel_column is None) == (spec.k is not None)
    for scorer in (spec.reference, spec.from_scores):  # the scorers too live below the registry
        assert scorer.__module__ == "tablegen.compute.metric_scorers", (name, scorer)
    assert spec.exact_work in ("none", "negligible", "per_cell", "shared")


def test_the_registry_answers_what_callers_used_to_branch_on():
    assert [m for m in DEFAULT_METRICS if get_metric(m).exact_work == "shared"] == ["auc"]
    assert [m for m in DEFAULT_METRICS if get_metric(m).exact_work == "per_cell"] == ["best_f1",
                                                                                     "best_balanced_accuracy",
                                                                                     "average_precision"]
    # average precision is exact only where its arrangements are enumerated (exact_at)
    assert not get_metric("average_precision").exact_at(20, 20)  # a bracket there, for lookups only
    assert get_metric("average_precision").exact_cost(10, 10)[0] < 1
    assert get_metric("best_accuracy").exact_work == get_metric("tp_at_10").exact_work == "negligible"
    nulls = dict(get_metric("auc").exact_nulls([(3, 4), (5, 2)]))
    assert sorted(nulls) == [(3, 4), (5, 2)] and nulls[3, 4].values.size == 13
    assert dict(get_metric("average_precision").exact_nulls([(20, 20)])) == {}
    assert list(dict(get_metric("average_precision").exact_nulls([(3, 4)]))) == [(3, 4)]


def test_importing_the_registry_loads_no_routine():
    import subprocess
    import sys

    code = ("import sys, tablegen.compute.metrics as m; m.get_metric('auc'); m.get_metric('tp_at_5')\n"
            "print(sorted(x for x in sys.modules if x.startswith(('tablegen.compute.exact', 'tablegen.compute.kernels',"
            " 'numba', 'scipy'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_metrics_kernel_work_is_its_entrys_to_say():
    """Cost factors and table bytes come from the requested entries, combined by KernelLayout: a new metric with
    its own extra kernel work changes plans and memory guards through its entry alone."""
    import dataclasses

    import numpy as np

    from tablegen.compute.mc import KernelLayout

    new = dataclasses.replace(get_metric("auc"), name="new", kernel_variant="new", lane_cost_factor=2.0,
                              minority_cost_factor=1.5, table_bytes_per_rank=4.0)
    mcc = get_metric("best_mcc")
    layout = KernelLayout(np.empty(0, np.int64), {}, (new, mcc, get_metric("auc")))
    assert layout.variants == {"new", "mcc"} and layout.with_mcc
    assert layout.lane_cost_factor == 2.0 * mcc.lane_cost_factor
    assert layout.minority_cost_factor == 1.5 * mcc.minority_cost_factor
    assert layout.table_bytes_per_rank == 16.0 + 4.0 + mcc.table_bytes_per_rank
    plain = KernelLayout.for_metrics(metric_entries(["auc", "tp_at_5"]), 20, 30)
    assert (plain.lane_cost_factor, plain.minority_cost_factor, plain.table_bytes_per_rank) == (1.0, 1.0, 16.0)


#: Below the entry points the engine is handed registry entries (Metric objects) and asks them: these modules
#: never look a metric up by name (one look-up per question, made where the question is checked).
ENGINE_MODULES = ("compute/mc.py", "compute/cell.py", "compute/cost.py", "lookup/from_scores.py")


def _names_looked_up(source: str) -> list[int]:
    """Lines of ``source`` that call or import ``get_metric``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "get_metric":
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and any(alias.name == "get_metric" for alias in node.names):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("module", ENGINE_MODULES)
def test_the_engine_is_handed_entries_not_names(module):
    assert _names_looked_up((PACKAGE / module).read_text()) == [], f"{module} looks a metric up by name"


def test_the_engine_check_finds_a_look_up():
    assert _names_looked_up("from tablegen.compute.metrics import get_metric\nspec = get_metric('auc')\n") == [1, 2]
