"""What a benchmark figure depends on, for its header: the CPU model and its vector width.

Imported by the ``bench_*.py`` scripts, which run as ``python benchmarks/bench_<name>.py`` (this
directory is then on ``sys.path``).

Examples
--------
>>> vector_width() in ("AVX-512", "AVX2", "no AVX2", "unknown vector width")
True
"""

from __future__ import annotations

import platform


def _cpuinfo() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return ""


def vector_width() -> str:
    """AVX-512 or AVX2 (what the CPU kernels' speed depends on), from /proc/cpuinfo where present."""
    flags = next((line for line in _cpuinfo().splitlines() if line.startswith("flags")), None)
    if flags is None:
        return "unknown vector width"
    words = flags.split()
    return "AVX-512" if "avx512f" in words else "AVX2" if "avx2" in words else "no AVX2"


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (or :func:`platform.processor` elsewhere)."""
    for line in _cpuinfo().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


#: Where a benchmark writes the figures the documentation shows (the pages include these files).
RESULTS = __import__("pathlib").Path(__file__).resolve().parent / "results"


def shown_path(path: str) -> str:
    """``path`` as a report shows it: relative to the repository where it lies inside it (a results page never
    records a machine's absolute path), else its last two parts.

    Examples
    --------
    >>> shown_path(str(RESULTS.parent.parent / "tablegen" / "__init__.py"))
    'tablegen/__init__.py'
    >>> shown_path("/opt/venv/bin/python")
    'bin/python'
    """
    resolved = __import__("pathlib").Path(__import__("os").path.abspath(path))
    try:
        return str(resolved.relative_to(RESULTS.parent.parent))
    except ValueError:
        return "/".join(resolved.parts[-2:])


def child_environment(**overrides: str) -> dict:
    """The environment of a measured child process: this one's, with ``overrides``, and Python's bytecode cache on.

    An installed package runs from compiled bytecode (pip compiles it at install; an editable install writes it on
    first import), but ``PYTHONDONTWRITEBYTECODE`` in the caller's environment would have every child compile each
    module changed since the cache was last written from its source again (57 modules, 0.07 s of CPU inside a
    report measured here): the child writes and reads the cache whatever the caller's setting.
    """
    import os

    environment = {**os.environ, **overrides}
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


def load_average() -> str:
    """The 1-minute load average (how busy the machine was: figures from a loaded machine are noisier)."""
    try:
        return f"{__import__('os').getloadavg()[0]:.1f}"
    except OSError:
        return "unknown"


def record(name: str, command: str, lines: list[str], *, load_at_start: str | None = None) -> None:
    """Write ``lines`` (what the benchmark printed) to ``benchmarks/results/<name>.md`` with the date, the
    machine, the load average and the command, so the docs show figures the script produced, never figures
    typed by hand."""
    import datetime

    RESULTS.mkdir(exist_ok=True)
    load = f"load average {load_at_start} at the start, {load_average()} at the end" if load_at_start else (
        f"load average {load_average()} at the end")
    header = (f"Measured {datetime.date.today()} on {cpu_model()} ({vector_width()}; {load}) by `{command}`; "
              "written by the script, not by hand:")
    (RESULTS / f"{name}.md").write_text(f"{header}\n\n{as_markdown(lines)}")


def as_markdown(lines: list[str]) -> str:
    """What a benchmark printed, for a docs page: its Markdown tables and lists as such, everything else verbatim
    in text blocks (so a printed ``#`` line never becomes a heading of the page).

    Examples
    --------
    >>> print(as_markdown(["load 0.1", "| a | b |", "|---|---|", "| 1 | 2 |", "done"]))
    ```text
    load 0.1
    ```
    <BLANKLINE>
    | a | b |
    |---|---|
    | 1 | 2 |
    <BLANKLINE>
    ```text
    done
    ```
    <BLANKLINE>
    """
    blocks: list[tuple[bool, list[str]]] = []
    for line in lines:
        is_table = line.lstrip().startswith("|") and line.rstrip().endswith("|")
        if not blocks or blocks[-1][0] != is_table:
            blocks.append((is_table, []))
        blocks[-1][1].append(line.strip() if is_table else line)
    parts = []
    for is_table, block in blocks:
        if is_table:
            parts.append("\n".join(block) + "\n")
        elif all(text.startswith("- ") or not text.strip() for text in block) and any(block):
            parts.append("\n".join(text for text in block if text.strip()) + "\n")  # a list stays a list
        elif any(text.strip() for text in block):
            while not block[0].strip():
                block.pop(0)
            while not block[-1].strip():
                block.pop()
            parts.append("```text\n" + "\n".join(block) + "\n```\n")
    return "\n".join(parts)


class _Tee:
    """A text stream that writes through to ``stream`` and keeps a copy of what was written."""

    def __init__(self, stream):
        self.stream, self.parts = stream, []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


@__import__("contextlib").contextmanager
def recording(name: str):
    """Run a benchmark's ``main()`` inside this to have everything it prints recorded by :func:`record`
    (only when it finishes normally; the command recorded is the one that ran, arguments included)."""
    import shlex
    import sys

    load_at_start, tee = load_average(), _Tee(sys.stdout)
    sys.stdout = tee
    try:
        yield
    finally:
        sys.stdout = tee.stream
    script = "benchmarks/" + __import__("pathlib").Path(sys.argv[0]).name
    command = " ".join([".venv/bin/python", script, *map(shlex.quote, sys.argv[1:])])
    record(name, command, "".join(tee.parts).rstrip("\n").splitlines(), load_at_start=load_at_start)
