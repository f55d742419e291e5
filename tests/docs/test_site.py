"""The documentation site builds from docs/ with warnings as errors, and its generated reference is complete."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a whole Sphinx build (about 10 s): the fast loop leaves it to CI
def test_the_site_builds_with_warnings_as_errors(tmp_path):
    from sphinx.cmd.build import build_main

    out = tmp_path / "html"
    assert build_main(["-W", "--keep-going", "-q", "-b", "html", str(ROOT / "docs"), str(out)]) == 0
    api = (out / "reference" / "api.html").read_text()
    for name in ("critical_value", "evaluate", "selection_test", "across_datasets", "f1_posterior"):
        assert f'id="tablegen.{name}"' in api or f'id="tablegen.compare.{name}"' in api, name
    assert "tablegen evaluate" in (out / "reference" / "cli.html").read_text()
    assert (out / "how-to" / "predictions.html").exists() and (out / "explanation" / "selection-test.html").exists()


def test_the_generated_reference_names_every_public_name_and_command():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from generate_reference import api_page, cli_page, public_names
    finally:
        sys.path.remove(str(ROOT / "docs"))
    import tablegen
    import tablegen.compare

    api = api_page()
    for module, names in (("tablegen", tablegen.__all__), ("tablegen.compare", tablegen.compare.__all__)):
        for name in names:
            if name.startswith("_") or name == "__version__":
                continue
            assert f"{module}.{name}" in api or f"`{name}`: see [Errors" in api, name
    assert public_names("tablegen.compare") == [n for n in tablegen.compare.__all__ if not n.startswith("_")]
    cli = cli_page()
    for command in ("lookup", "test", "p-value", "evaluate", "topk", "compare datasets", "compare f1", "run",
                    "verify", "export", "plot", "info"):
        assert f"## `tablegen {command}`" in cli, command
