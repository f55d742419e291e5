"""The public API is typed and documented: every name of ``tablegen``'s ``_PUBLIC``
map and of ``tablegen.compare`` has annotations on each parameter and on the return (functions and
public methods of classes), and a numpydoc docstring with an Examples section.

``GAPS`` lists what is still missing, name by name, as strict expected failures: completing one
makes its test pass unexpectedly, which fails until the entry is removed, so the list only shrinks
(it is empty: every public name is annotated and has examples).
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

import tablegen
import tablegen.compare

PUBLIC = sorted([("tablegen", name) for name in tablegen._PUBLIC]
                + [("tablegen.compare", name) for name in tablegen.compare.__all__])

#: (module, name) -> what it lacks; empty now that every public name is complete (a new gap goes here, never silently)
GAPS: dict[tuple[str, str], str] = {}


def signatures(obj) -> list[tuple[str, inspect.Signature]]:
    """The signatures to check: a function's own; a class's constructor (dataclass fields or its
    ``__init__``) and each public method it defines."""
    if not inspect.isclass(obj):
        return [(obj.__name__, inspect.signature(obj))]
    found = []
    if "__init__" in vars(obj) and not issubclass(obj, BaseException):
        found.append((f"{obj.__name__}.__init__", inspect.signature(obj.__init__)))
    for name, member in vars(obj).items():
        if not name.startswith("_") and inspect.isfunction(member):
            found.append((f"{obj.__name__}.{name}", inspect.signature(member)))
    return found


def problems(obj) -> list[str]:
    """What ``obj`` lacks: parameter or return annotations, a docstring Examples section."""
    found = []
    for where, signature in signatures(obj):
        bare = [p.name for p in signature.parameters.values()
                if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
        if bare:
            found.append(f"{where}: parameters {bare} not annotated")
        if signature.return_annotation is inspect.Signature.empty and not where.endswith("__init__"):
            found.append(f"{where}: return not annotated")
    if not re.search(r"^Examples\n--------$", inspect.getdoc(obj) or "", flags=re.M):
        found.append(f"{getattr(obj, '__name__', obj)}: no numpydoc Examples section")
    return found


@pytest.mark.parametrize("module, name", [
    pytest.param(module, name, marks=pytest.mark.xfail(reason=GAPS[(module, name)], strict=True))
    if (module, name) in GAPS else (module, name) for module, name in PUBLIC])
def test_public_name_is_annotated_and_has_examples(module, name):
    obj = getattr(importlib.import_module(module), name)
    assert not problems(obj), problems(obj)


def test_gaps_name_only_public_names():
    assert set(GAPS) <= set(PUBLIC)


def test_the_check_finds_what_is_missing():
    def bare(x, y: int = 1):
        """No examples here."""

    def typed(x: int) -> int:
        """Typed.

        Examples
        --------
        >>> typed(1)
        1
        """
        return x

    assert problems(bare) == ["bare: parameters ['x'] not annotated", "bare: return not annotated",
                              "bare: no numpydoc Examples section"]
    assert problems(typed) == []


# -- one default level ------------------------------------------------------------------------------------
#: Every public ``alpha`` default.  Two values, each for a reason its docstring states: 0.01 where the answer is
#: Forman & Cohen's question (the best of C random classifiers: their tables, and the bundled table, are at
#: alpha = 0.01, so the default question is answered from them), 0.05 for comparisons of real classifiers (the
#: field's convention: Demšar 2006, Benavoli et al. 2016) and for ``evaluate``, whose report gives one level to
#: every verdict.  None: "the result's own level" (a method of a result).  A new public alpha must be added here.
ALPHA_DEFAULTS = {
    "tablegen.critical_value": 0.01, "tablegen.significance_test": 0.01,
    "tablegen.significance_test_from_scores": 0.01, "tablegen.topk_bounds": 0.01, "tablegen.topk_test": 0.01,
    "tablegen.power": 0.01, "tablegen.sample_size": 0.01, "tablegen.minimum_detectable": 0.01,
    "tablegen.max_models": 0.01, "tablegen.plot_power_curve": 0.01,
    "tablegen.Table.critical_value": 0.01, "tablegen.Table.significance_test": 0.01,
    "tablegen.Table.answer_checked": None, "tablegen.Table.contains": None,
    "tablegen.Table.minimum_detectable_auc": 0.01,
    "tablegen.MulticlassTable.holds": 0.01, "tablegen.MulticlassTable.critical_hits": 0.01,
    "tablegen.MulticlassTable.critical_value": 0.01, "tablegen.MulticlassTable.hits_grid": 0.01,
    "tablegen.evaluate": 0.05, "tablegen.compare.evaluate": 0.05, "tablegen.multiclass_test": 0.05,
    "tablegen.multiclass_scores_test": 0.05,
    "tablegen.compare.evaluate_multiclass": 0.05,
    "tablegen.compare.selection_test": 0.05, "tablegen.compare.selection_tests": 0.05,
    "tablegen.compare.paired_test": 0.05,
    "tablegen.compare.pairwise_tests": 0.05, "tablegen.compare.mcnemar_power": 0.05,
    "tablegen.compare.mcnemar_sample_size": 0.05, "tablegen.compare.paired_auc_power": 0.05,
    "tablegen.compare.paired_auc_sample_size": 0.05, "tablegen.compare.paired_auc_power_from_scores": 0.05,
    "tablegen.compare.across_datasets": 0.05,
    "tablegen.compare.PairedTestResult.significant": 0.05, "tablegen.compare.PairedTestResult.sentence": None,
}


def alpha_defaults() -> dict[str, object]:
    """Every public function's and public method's ``alpha`` default, by dotted name."""
    found = {}
    for module, name in PUBLIC:
        obj = getattr(importlib.import_module(module), name)
        for where, signature in signatures(obj):
            parameter = signature.parameters.get("alpha")
            if parameter is not None and not where.endswith("__init__"):
                found[f"{module}.{where}"] = parameter.default
    return found


def test_every_public_alpha_default_is_pinned():
    assert alpha_defaults() == ALPHA_DEFAULTS


@pytest.mark.parametrize("name", [n for n, v in ALPHA_DEFAULTS.items() if v == 0.01 and n.count(".") == 1])
def test_a_default_of_0_01_says_why(name):
    """A function whose default differs from the comparisons' 0.05 names the reason in its docstring."""
    module, function = name.rsplit(".", 1)
    doc = inspect.getdoc(getattr(importlib.import_module(module), function))
    assert re.search(r"default 0\.01[^)]*Forman", " ".join(doc.split())), doc
