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


def record(name: str, command: str, lines: list[str]) -> None:
    """Write ``lines`` (what the benchmark printed) to ``benchmarks/results/<name>.md`` with the date, the
    machine and the command, so the docs show figures the script produced, never figures typed by hand."""
    import datetime

    RESULTS.mkdir(exist_ok=True)
    header = (f"Measured {datetime.date.today()} on {cpu_model()} ({vector_width()}) by `{command}`; written by the "
              "script, not by hand:")
    body = "\n".join(lines)
    (RESULTS / f"{name}.md").write_text(f"{header}\n\n```text\n{body}\n```\n")
