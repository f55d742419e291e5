"""The layering contract: arrows point down only.

Every ``import`` in the package — at module level or inside a function, ``from x import y`` or
``importlib.import_module("x")`` with a literal name — is read from the source with :mod:`ast`, and
each must go to the same layer or a lower one.  A lazy import is still an arrow: it is checked too.
The package's ``__init__`` (the public facade, whose lazy map names every layer) is the only exemption.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "tablegen"

#: Layers from the bottom up; a module may import from its own layer and the layers before it.
LAYERS = (
    ("tablegen._version", "tablegen._lazy", "tablegen.errors", "tablegen.common"),
    ("tablegen.compute.kernels",),
    ("tablegen.compute.stats", "tablegen.compute.limits", "tablegen.compute.accumulator"),
    ("tablegen.compute.exact",),
    ("tablegen.compute.metric_scorers",),
    ("tablegen.compute.metrics", "tablegen.compute.metrics_from_scores", "tablegen.compute.metric_nulls",
     "tablegen.compute.metric_routines"),
    ("tablegen.compute.validation", "tablegen.compute.mc"),
    ("tablegen.compute.cell", "tablegen.compute"),
    ("tablegen.store",),
    ("tablegen.batch",),
    ("tablegen.lookup",),
    ("tablegen.compare",),
    ("tablegen.cli",),
)
EXEMPT = {"tablegen", "tablegen.__main__"}
#: Third-party packages a layer must never import (kernels and the cell engine compute;
#: they never touch dask, zarr or xarray; the store does not schedule).
FORBIDDEN = {
    "tablegen.compute": ("dask", "distributed", "zarr", "xarray", "fsspec"),
    "tablegen.store": ("distributed",),
}


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(name: str) -> int | None:
    """The index in LAYERS of the longest prefix naming ``name``'s layer, or None (not a layer)."""
    best, best_length = None, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    return best


def imported_names(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in ``tree``, relative ones resolved."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            # ``from tablegen.store import zarr_store`` imports the submodule: count it too
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names
                      if base.startswith("tablegen") and _is_package_dir(f"{base}.{alias.name}")]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value))
    return found


def _is_package_dir(name: str) -> bool:
    path = PACKAGE.parent / name.replace(".", "/")
    return path.is_dir() or path.with_suffix(".py").exists()


def package_modules() -> list[pathlib.Path]:
    return sorted(PACKAGE.rglob("*.py"))


def violations(path: pathlib.Path) -> list[str]:
    module = module_name(path)
    if module in EXEMPT:
        return []
    own = layer_of(module)
    assert own is not None, f"{module} is in no layer: add it to LAYERS"
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for line, target in imported_names(tree, module, path.name == "__init__.py"):
        top = target.split(".")[0]
        for scope, packages in FORBIDDEN.items():
            if (module == scope or module.startswith(scope + ".")) and top in packages:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} imports {target} "
                             f"({scope} never does)")
        if top != "tablegen" or target == "tablegen":
            continue
        level = layer_of(target)
        if level is None:
            found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {target} is in no layer (an old path?)")
        elif level > own:
            found.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} (layer {own}) imports {target} "
                         f"(layer {level}): arrows point down only")
    return found


def test_every_module_imports_down_only():
    problems = [problem for path in package_modules() for problem in violations(path)]
    assert not problems, "upward or unknown imports:\n" + "\n".join(problems)


def test_no_module_borrows_another_modules_private_names():
    """``from tablegen.x import _name`` across modules is a hidden arrow: what is shared is public."""
    problems = []
    for path in package_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tablegen"):
                problems += [f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.module}.{alias.name}"
                             for alias in node.names
                             if alias.name.startswith("_") and alias.name != "__version__"]
    assert not problems, "private names imported from another module:\n" + "\n".join(problems)


@pytest.mark.parametrize("source, message", [
    ("from tablegen.cli.main import main\n", "arrows point down only"),
    ("import tablegen.lookup.table\n", "arrows point down only"),
    ("def f():\n    from tablegen.batch import job\n", "arrows point down only"),
    ("import importlib\nimportlib.import_module('tablegen.store.zarr_store')\n", "arrows point down only"),
    ("import xarray as xr\n", "never does"),
    ("from tablegen.table import Table\n", "in no layer"),
])
def test_the_contract_catches_an_upward_import(tmp_path, monkeypatch, source, message):
    """The checker itself: a compute module importing upwards (or xarray, or an old path) is reported."""
    fake = PACKAGE / "compute" / "_layering_probe.py"
    monkeypatch.setattr(pathlib.Path, "read_text", lambda self, *a, **k: source if self == fake
                        else pathlib.Path.read_bytes(self).decode())
    problems = violations(fake)
    assert problems and message in problems[0], problems


def test_importing_the_package_installs_no_import_hook():
    """``import tablegen`` leaves the import system alone: no finder of ours, and no flat old path imports."""
    import importlib
    import subprocess
    import sys

    code = ("import sys; before = list(sys.meta_path); import tablegen; assert sys.meta_path == before, sys.meta_path\n"
            "import importlib\n"
            "try:\n    importlib.import_module('tablegen.api')\nexcept ModuleNotFoundError:\n    pass\n"
            "else:\n    raise SystemExit('tablegen.api imported')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert importlib.util.find_spec("tablegen.lookup.api") is not None


def test_the_store_knows_templates_urls_and_regions_not_jobs():
    """No store module takes a job's config or reads a field only a job has (its URL, seed, R, cluster, ...):
    the batch job passes the store a template, a URL and its provenance attributes."""
    job_only = {"store_url", "storage_options", "result_hash", "result_fields", "replicates", "seed", "cluster",
                "device", "exact", "name"}
    problems = []
    for path in sorted((PACKAGE / "store").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in job_only and isinstance(node.value, ast.Name):
                problems.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr}")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                problems += [f"{path.name}:{node.lineno}: {node.name}({arg.arg})" for arg in node.args.args
                             if arg.arg in ("config", "job")]
    assert not problems, "the store reads a job's config:\n" + "\n".join(problems)


def test_no_pytest_configuration_inside_the_package():
    """No conftest.py ships inside tablegen/; the doctest exclusions live in pyproject.toml and name real modules."""
    import re
    import tomllib

    assert not list(PACKAGE.rglob("conftest.py"))
    addopts = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    ignored = re.findall(r"--ignore-glob=\*/(\S+)", addopts)
    assert ignored and all(len(list(PACKAGE.rglob(pattern.split("/", 1)[1]))) == 1 for pattern in ignored), ignored


def test_no_import_cycles():
    """No two modules import each other, directly or around a loop, counting lazy imports inside functions
    (the package façades' lazy maps are not imports: they name modules as strings; nor are the imports under
    ``if TYPE_CHECKING:``, which only annotations read)."""
    graph: dict[str, set[str]] = {}
    modules = {module_name(path): path for path in package_modules()}
    for module, path in modules.items():
        targets = {target for _, target in imported_names(_without_type_checking(ast.parse(path.read_text())),
                                                          module, path.name == "__init__.py")}
        # "from tablegen.x import y" names module tablegen.x.y when that is a module, else package tablegen.x
        graph[module] = {target for target in targets if target in modules and target != module}
    index, low, on_stack, stack, cycles, counter = {}, {}, set(), [], [], [0]

    def visit(node):  # Tarjan's strongly connected components
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert not cycles, f"import cycles: {cycles}"


def _without_type_checking(tree: ast.Module) -> ast.Module:
    """``tree`` without its top-level ``if TYPE_CHECKING:`` blocks."""
    tree.body = [node for node in tree.body if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                                                    and node.test.id == "TYPE_CHECKING")]
    return tree


def test_tests_are_filed_by_layer_and_say_what_they_check():
    """Every test module sits in the folder of the layer it tests (tests/compute, store, batch, lookup, compare,
    cli, contracts, docs), and no test names an issue number or a commit instead of saying what it checks."""
    import re

    tests = PACKAGE.parent / "tests"
    folders = {"compute", "store", "batch", "lookup", "compare", "cli", "contracts", "docs"}
    assert not list(tests.glob("test_*.py")), "test modules directly under tests/"
    placed = {path.parent.name for path in tests.rglob("test_*.py")}
    assert placed <= folders, placed - folders
    pattern = re.compile(r"\bissue \d+|\bgit [0-9a-f]{7,}\b|STYLE \d+", re.IGNORECASE)
    found = [f"{path.relative_to(tests)}:{number}" for path in tests.rglob("*.py")
             for number, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert not found, found
