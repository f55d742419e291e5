"""Every random stream of tablegen has its own spawn-key tag: two kernels keyed with the same tag and the same (n, K)
or (P, N) would draw the same numbers (the K-class report's label bootstrap and its probability metrics' permutations
once shared 0x3C1B, so their answers were correlated)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tablegen"


def _tags() -> list[tuple[str, int]]:
    """(module:name, value) of every module-level integer constant whose name ends in _TAG."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                for name, value in zip(names, values):
                    if isinstance(name, ast.Name) and name.id.endswith("_TAG") and \
                            isinstance(value, ast.Constant) and isinstance(value.value, int):
                        found.append((f"{path.relative_to(PACKAGE.parent)}:{name.id}", value.value))
    return found


def test_the_tags_are_found():
    names = {name.rsplit(":", 1)[1] for name, _ in _tags()}
    assert {"MULTICLASS_TAG", "MULTICLASS_SCORES_TAG", "SCORES_SWAP_TAG", "BOOTSTRAP_TAG", "PERMUTATION_TAG",
            "SWAP_TAG", "BINORMAL_TAG", "LEHMANN_TAG"} <= names


def test_every_stream_tag_is_distinct():
    seen: dict[int, str] = {}
    clashes = []
    for name, value in _tags():
        if value in seen:
            clashes.append(f"{name} = {value:#x} = {seen[value]}")
        seen.setdefault(value, name)
    assert not clashes, clashes
