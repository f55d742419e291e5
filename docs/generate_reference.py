"""The generated reference pages: every public Python name, and every command with its options.

Called by ``conf.py`` at each build, so the reference is the code's: a new public name or option appears
without anyone editing a page, and a docstring that does not render fails the build (``-W``).
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


def public_names(module_name: str) -> list[str]:
    """The public names a package's lazy map declares (``__all__``), in their order."""
    module = __import__(module_name, fromlist=["__all__"])
    return [name for name in module.__all__ if not name.startswith("_") and name != "__version__"]


def _directive(module_name: str, name: str) -> str:
    obj = getattr(__import__(module_name, fromlist=[name]), name)  # docstrings are reStructuredText: eval-rst
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):  # on the errors page, with the exit codes
            return f"`{name}`: see [Errors and exit codes](errors.md)."
        fields = [f.name for f in dataclasses.fields(obj)] if dataclasses.is_dataclass(obj) else []
        exclude = f"\n   :exclude-members: {', '.join(fields)}" if fields else ""  # its Attributes section has them
        return f"```{{eval-rst}}\n.. autoclass:: {module_name}.{name}\n   :members:{exclude}\n```"
    return f"```{{eval-rst}}\n.. autofunction:: {module_name}.{name}\n```"


def api_page() -> str:
    lines = ["# Python API", "",
             "Every public name, from its docstring (numpy style: parameters, returns, examples; the examples run "
             "in the test suite).  `import tablegen` is cheap: names resolve on first use.", ""]
    for heading, module_name, summary in API_SECTIONS:
        lines += [f"## {heading}", "", f"`{module_name}`: {summary}", ""]
        for name in public_names(module_name):
            lines += [_directive(module_name, name), ""]
    return "\n".join(lines)


def cli_page() -> str:
    import os

    from tablegen.cli.main import build_parser, command_parsers

    os.environ["COLUMNS"] = "100"  # argparse wraps help to the terminal: the page is the same everywhere
    parser = build_parser()
    lines = ["# Command line: every command's options", "",
             "Every command of `tablegen`, with the help its parser prints (`tablegen COMMAND --help`); the exit "
             "codes are on [Errors and exit codes](errors.md).", ""]
    for words, leaf in command_parsers(parser):
        lines += [f"## `tablegen {' '.join(words)}`", "", "```text", leaf.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


def write_reference_pages(folder: Path) -> None:
    """Write ``api.md`` and ``cli.md`` into ``folder`` (only when their text changes, so builds stay incremental)."""
    folder.mkdir(exist_ok=True)
    for name, text in (("api.md", api_page()), ("cli.md", cli_page())):
        path = folder / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
