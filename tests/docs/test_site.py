"""The documentation site builds from docs/ with warnings as errors, its generated reference is complete (one page
per public function or class), and its code blocks fit a 1280 px screen: a line longer than fits wraps instead of
scrolling."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def docs_modules():
    """``generate_reference`` and ``code_blocks`` from docs/ (not a package: imported by path, as conf.py does)."""
    sys.path.insert(0, str(DOCS))
    try:
        import code_blocks
        import generate_reference
    finally:
        sys.path.remove(str(DOCS))
    return generate_reference, code_blocks


def public(module_name: str) -> list[str]:
    module = __import__(module_name, fromlist=["__all__"])
    return [name for name in module.__all__ if not name.startswith("_") and name != "__version__"]


@pytest.mark.slow  # a whole Sphinx build (about 10 s): the fast loop leaves it to CI
def test_the_site_builds_with_warnings_as_errors(tmp_path, docs_modules):
    from sphinx.cmd.build import build_main

    _, code_blocks = docs_modules
    out = tmp_path / "html"
    assert build_main(["-W", "--keep-going", "-q", "-b", "html", str(DOCS), str(out)]) == 0
    assert "pydata-sphinx-theme" in (out / "index.html").read_text()
    for module_name in ("tablegen", "tablegen.compare"):  # one page per public function or class
        for name in public(module_name):
            obj = getattr(__import__(module_name, fromlist=[name]), name)
            if isinstance(obj, type) and issubclass(obj, BaseException):
                continue  # on the errors page, with the exit codes
            page = out / "reference" / "api" / f"{module_name}.{name}.html"
            assert f'id="{module_name}.{name}"' in page.read_text(), page.name
    api = (out / "reference" / "api.html").read_text()
    for name in ("tablegen.critical_value", "tablegen.compare.across_datasets"):
        assert f'href="api/{name}.html"' in api, name
    assert "tablegen evaluate" in (out / "reference" / "cli.html").read_text()
    assert (out / "how-to" / "predictions.html").exists() and (out / "explanation" / "selection-test.html").exists()

    # Code blocks: every line in a span; a line longer than a block shows at 1280 px only in a block that wraps.
    wrapped = {}
    for page in out.rglob("*.html"):
        for classes, lines in code_blocks.pre_blocks(page.read_text()):
            assert "tg-lines" in classes.split(), f"{page.relative_to(out)}: a code block the wrapping misses"
            long = [line for line in lines if len(line) > code_blocks.CODE_COLUMNS]
            if long:
                assert "tg-long" in classes.split(), f"{page.relative_to(out)}: {long[0]!r} is not marked"
                wrapped[page.relative_to(out).as_posix()] = len(long)
    assert "reference/cli.html" not in wrapped  # the generated help is written to the width: nothing wraps
    assert wrapped  # the check saw long lines (the explanation pages' benchmark records are wider than a screen)
    css = (out / "_static" / "tablegen.css").read_text()
    assert "pre.tg-lines { white-space: pre-wrap;" in css and "text-indent: calc(-1 * var(--tg-hang" in css


def test_the_generated_reference_names_every_public_name_and_command(docs_modules):
    generate_reference, code_blocks = docs_modules
    api = generate_reference.api_page()
    for module_name in ("tablegen", "tablegen.compare"):
        section = api.split(f".. currentmodule:: {module_name}\n", 1)[1]
        for name in public(module_name):
            assert f"\n   {name}\n" in section or f"`{name}`, on [Errors" in api or f"`{name}`: " in api, name
    assert api.count(":toctree: api") >= 4  # functions and classes of both packages, one page each
    assert generate_reference.public_names("tablegen.compare") == public("tablegen.compare")
    assert set(generate_reference.dataclass_fields()["tablegen.compare.Evaluation"]) >= {"P", "N", "C", "reports"}
    cli = generate_reference.cli_page(code_blocks.CODE_COLUMNS)
    for command in ("lookup", "test", "p-value", "evaluate", "topk", "compare datasets", "compare f1", "run",
                    "verify", "export", "plot", "info"):
        assert f"## `tablegen {command}`" in cli, command
    help_lines = [line for line in cli.splitlines() if not line.startswith(("#", "Every"))]
    assert max(map(len, help_lines)) <= code_blocks.CODE_COLUMNS


def test_code_block_lines_become_spans_that_keep_their_highlighting(docs_modules):
    _, code_blocks = docs_modules
    long = "x" * (code_blocks.CODE_COLUMNS + 1)
    body = ('<div class="highlight"><pre><span class="s2">"""two\n    lines"""</span> &lt;b&gt;\n'
            f'        {long}\n</pre></div>')
    out = code_blocks.split_lines(body)
    assert out.count('class="tg-line"') == 3 and 'class="tg-lines tg-long"' in out
    assert out.count("<span") == out.count("</span>")  # the string's span is closed and opened again per line
    assert '<span class="s2">    lines"""</span>' in out and "--tg-hang: 12ch" in out  # 8 spaces of indent + 4
    [(classes, lines)] = code_blocks.pre_blocks(out)
    assert lines == ['"""two', '    lines""" <b>', f"        {long}"] and classes == "tg-lines tg-long"
    assert code_blocks.split_lines(out) == out  # a body split once is left as it is
    short = code_blocks.split_lines("<pre>a\n\nb\n</pre>")
    assert short.count('class="tg-line"') == 3 and "tg-long" not in short  # an empty line keeps its span


def test_long_api_names_break_between_words_in_the_navigation(docs_modules):
    _, code_blocks = docs_modules
    nav = '<a class="reference internal" href="tablegen.compare.plot_cd.html">compare.plot_cd</a>'
    assert ">compare.<wbr>plot_<wbr>cd</a>" in code_blocks.breakable_names(nav)
    other = '<a class="reference internal" href="../how-to/look-up.html">look_up</a>'
    assert code_blocks.breakable_names(other) == other
