"""The generated reference pages: every public Python name, and every command with its options.

Called by ``conf.py`` at each build, so the reference is the code's: a new public name or option appears
without anyone editing a page, and a docstring that does not render fails the build (``-W``).  ``api.md``
lists the public names in autosummary tables; autosummary then writes one page per function or class
(``reference/api/<module>.<name>.rst``, from ``docs/_templates/autosummary/``).  All three are gitignored.
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

#: (page heading, module whose lazy map lists its public names, one line on what they answer).
API_SECTIONS = (
    ("Lookups, tests from scores, tables and the batch job", "tablegen",
     "Critical values and p-values (exact, the bundled table or Monte Carlo), significance from labels and "
     "scores, the report of every answer (`evaluate`), top-k tests, tables and stores, the batch job."),
    ("Comparing real classifiers", "tablegen.compare",
     "The best of the models you tried (max-T), across data sets (Benavoli et al.), two classifiers' F1 "
     "(Zhang et al.), the report."),
)
#: The folder, beside ``api.md``, where autosummary writes the page of each public name.
API_FOLDER = "api"


def public_names(module_name: str) -> list[str]:
    """The public names a package's lazy map declares (``__all__``), in their order."""
    module = __import__(module_name, fromlist=["__all__"])
    return [name for name in module.__all__ if not name.startswith("_") and name != "__version__"]


def _object(module_name: str, name: str) -> object:
    return getattr(__import__(module_name, fromlist=[name]), name)


def _kind(module_name: str, name: str) -> str:
    """'error' (documented on the errors page, with the exit codes), 'class' or 'function'."""
    obj = _object(module_name, name)
    if inspect.isclass(obj):
        return "error" if issubclass(obj, BaseException) else "class"
    return "function"


def dataclass_fields() -> dict[str, list[str]]:
    """Each public dataclass's fields by full name (its numpy "Attributes" section documents them, not autodoc)."""
    fields = {}
    for _, module_name, _ in API_SECTIONS:
        for name in public_names(module_name):
            obj = _object(module_name, name)
            if inspect.isclass(obj) and dataclasses.is_dataclass(obj):
                fields[f"{module_name}.{name}"] = [field.name for field in dataclasses.fields(obj)]
    return fields


def _autosummary(module_name: str, names: list[str]) -> list[str]:
    """A table of ``names`` (first line of each docstring), each linked to its own generated page."""
    return ["```{eval-rst}", f".. currentmodule:: {module_name}", "", ".. autosummary::",
            f"   :toctree: {API_FOLDER}", "   :nosignatures:", "", *(f"   {name}" for name in names), "```", ""]


def api_page() -> str:
    lines = ["# Python API", "",
             "Every public name, one page each, from its docstring (numpy style: parameters, returns, examples; "
             "the examples run in the test suite).  `import tablegen` is cheap: names resolve on first use.", ""]
    for heading, module_name, summary in API_SECTIONS:
        lines += [f"## {heading}", "", f"`{module_name}`: {summary}", ""]
        names = public_names(module_name)
        kinds = {name: _kind(module_name, name) for name in names}
        for kind, title in (("function", "Functions"), ("class", "Results and other classes")):
            chosen = [name for name in names if kinds[name] == kind]
            if chosen:
                lines += [f"### {title}", "", *_autosummary(module_name, chosen)]
        errors = [name for name in names if kinds[name] == "error"]
        if errors:
            lines += [f"Errors: {', '.join(f'`{name}`' for name in errors)}, on [Errors and exit codes](errors.md).",
                      ""]
    return "\n".join(lines)


def cli_page(columns: int = 85) -> str:
    """Every command's help, wrapped to ``columns`` characters (what a code block shows at 1280 px)."""
    import os

    from tablegen.cli.main import build_parser, command_parsers

    os.environ["COLUMNS"] = str(columns + 2)  # argparse wraps its help to the terminal's width less 2
    parser = build_parser()
    lines = ["# Command line: every command's options", "",
             "Every command of `tablegen`, with the help its parser prints (`tablegen COMMAND --help`); the exit "
             "codes are on [Errors and exit codes](errors.md).", ""]
    for words, leaf in command_parsers(parser):
        lines += [f"## `tablegen {' '.join(words)}`", "", "```text", _fit(leaf.format_help().rstrip(), columns), "```",
                  ""]
    return "\n".join(lines)


def _fit(text: str, columns: int) -> str:
    """Help text with each line longer than ``columns`` broken at spaces, continued one space right of its indent
    (argparse cannot break inside a group of exclusive options in the usage line)."""
    import textwrap

    out = []
    for line in text.splitlines():
        indent = line[:len(line) - len(line.lstrip())]
        out += textwrap.wrap(line, columns, subsequent_indent=indent + " ", break_long_words=False,
                             break_on_hyphens=False, drop_whitespace=True) if len(line) > columns else [line]
    return "\n".join(out)


def _remove_stale_pages(folder: Path) -> None:
    """Delete generated pages of names no longer public (an orphan page would fail the build under -W)."""
    current = {f"{module_name}.{name}" for _, module_name, _ in API_SECTIONS for name in public_names(module_name)}
    for page in (folder / API_FOLDER).glob("*.rst"):
        if page.stem not in current:
            page.unlink()


def write_reference_pages(folder: Path, columns: int = 85) -> None:
    """Write ``api.md`` and ``cli.md`` into ``folder`` (only when their text changes, so builds stay incremental)."""
    folder.mkdir(exist_ok=True)
    for name, text in (("api.md", api_page()), ("cli.md", cli_page(columns))):
        path = folder / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    _remove_stale_pages(folder)
