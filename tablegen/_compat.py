"""Old import paths of the flat layout (before the DESIGN §3 tree), kept working as aliases.

``import tablegen.plot`` (say) still works, and gives the very module ``tablegen.lookup.plot``, not a
copy: monkeypatching either name patches both.  The one exception is ``tablegen.exact``, whose
name-keyed functions (:data:`MOVED_NAMES`) moved to the metric registry: it is a thin module that
answers from ``tablegen.compute.exact`` and, for those names, ``tablegen.compute.metrics``.
Each old path warns once with a :class:`DeprecationWarning` naming the new one.  Submodules of a
moved package follow their package (``tablegen.exact.auc_fft`` is ``tablegen.compute.exact.auc_fft``).
``tablegen.store`` and ``tablegen.cli`` are packages now, under the same names:
``tablegen.store.open_store`` and ``tablegen.cli.main`` still resolve, from their packages.  New code
imports the new paths; ``tests/test_layers.py`` checks that the package itself never uses these aliases.

The finder answers only the old names (a prefix test on each other import, nothing more).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

#: Old module path -> new module path (README §14 lists them).
MOVED = {
    "tablegen.accumulator": "tablegen.compute.accumulator",
    "tablegen.answers": "tablegen.lookup.answers",
    "tablegen.api": "tablegen.lookup.api",
    "tablegen.cell": "tablegen.lookup.simulate",  # simulate_cell; the engine is tablegen.compute.cell
    "tablegen.cli_compare": "tablegen.cli.compare",
    "tablegen.cli_compare_datasets": "tablegen.cli.compare_datasets",
    "tablegen.cli_compare_f1": "tablegen.cli.compare_f1",
    "tablegen.cli_lookup": "tablegen.cli.lookup",
    "tablegen.cli_progress": "tablegen.cli.progress",
    "tablegen.cli_scores": "tablegen.cli.scores",
    "tablegen.cli_topk": "tablegen.cli.topk",
    "tablegen.compare.f1_kernel": "tablegen.compute.kernels.f1",
    "tablegen.config": "tablegen.batch.config",
    "tablegen.cost": "tablegen.batch.cost",
    "tablegen.exact": "tablegen.compute.exact",
    "tablegen.export": "tablegen.lookup.export",
    "tablegen.figures": "tablegen.lookup.figures",
    "tablegen.gpu_cluster": "tablegen.batch.gpu_cluster",
    "tablegen.job": "tablegen.batch.job",
    "tablegen.kernels": "tablegen.compute.kernels",
    "tablegen.limits": "tablegen.compute.limits",
    "tablegen.lock": "tablegen.store.lock",
    "tablegen.mc": "tablegen.compute.mc",
    "tablegen.metrics": "tablegen.compute.metrics",
    "tablegen.metrics_from_scores": "tablegen.compute.metrics_from_scores",
    "tablegen.plan": "tablegen.batch.plan",
    "tablegen.plot": "tablegen.lookup.plot",
    "tablegen.stats": "tablegen.compute.stats",
    "tablegen.store_integrity": "tablegen.store.integrity",
    "tablegen.store_migrate": "tablegen.store.migrate",
    "tablegen.store_report": "tablegen.store.report",
    "tablegen.store_schema": "tablegen.store.schema",
    "tablegen.table": "tablegen.lookup.table",
    "tablegen.topk": "tablegen.lookup.topk",
    "tablegen.validation": "tablegen.compute.validation",
}


#: Names an old module had that now live elsewhere: old module -> (their new module, the names).  The
#: name-keyed exact API moved from ``tablegen.exact`` to the metric registry (the registry owns its
#: metric's exact routine, and ``compute.exact`` no longer imports the registry).
MOVED_NAMES = {
    "tablegen.exact": ("tablegen.compute.metrics", frozenset({
        "has_exact", "null_distribution", "tabulated_null", "exact_cost", "exact_critical_value",
        "exact_tail_ge", "exact_p_value"})),
}


def new_name(old: str) -> str | None:
    """The new module path for an old one, or None if ``old`` was not moved.

    Examples
    --------
    >>> new_name("tablegen.exact.auc_fft")
    'tablegen.compute.exact.auc_fft'
    >>> new_name("tablegen.lookup.api") is None
    True
    """
    for prefix in sorted(MOVED, key=len, reverse=True):
        if old == prefix or old.startswith(prefix + "."):
            return MOVED[prefix] + old[len(prefix):]
    return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        module = importlib.import_module(self.target)
        if spec.name in MOVED_NAMES:
            return _ForwardingModule(spec.name, module, *MOVED_NAMES[spec.name])
        return module

    def exec_module(self, module):
        pass  # already executed under its new name


class _ForwardingModule(types.ModuleType):
    """An old module some of whose names moved to another module: it answers both (the only alias
    that is not the new module itself)."""

    def __init__(self, name: str, module: types.ModuleType, elsewhere: str, names: frozenset):
        super().__init__(name, module.__doc__)
        self.__path__ = list(getattr(module, "__path__", []))
        self._tablegen_targets = (module, elsewhere, names)

    def __getattr__(self, attribute: str):
        module, elsewhere, names = self.__dict__["_tablegen_targets"]
        if attribute in names:
            return getattr(importlib.import_module(elsewhere), attribute)
        return getattr(module, attribute)


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Resolves an old ``tablegen.*`` module path to the module at its new path."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("tablegen."):
            return None
        target_name = new_name(fullname)
        if target_name is None:
            return None
        warnings.warn(
            f"{fullname} has moved to {target_name}; the old path is a compatibility alias",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.util.spec_from_loader(fullname, _AliasLoader(target_name))


def install() -> None:
    """Put the finder first on :data:`sys.meta_path`, once.

    First, so that a submodule of a moved package (``tablegen.exact.auc_fft``) is the new module and
    not a second copy loaded from the package's directory under the old name.
    """
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
