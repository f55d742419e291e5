"""Resource limits every entry point checks before work: memory, from the machine or the environment.

``TABLEGEN_MEMORY_LIMIT`` (bytes, or with a unit: ``"8GB"``, ``"512MiB"``) overrides the default,
half of this machine's physical memory.
"""

from __future__ import annotations

import os
import re

from tablegen.errors import Argument, ResourceLimitError, TablegenInputError

_UNITS = {"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KIB": 2**10, "MIB": 2**20,
          "GIB": 2**30, "TIB": 2**40}


def memory_limit_bytes() -> float:
    """The most memory one routine may plan to use: ``TABLEGEN_MEMORY_LIMIT`` or half the machine's.

    Examples
    --------
    >>> memory_limit_bytes() > 0
    True
    """
    text = os.environ.get("TABLEGEN_MEMORY_LIMIT", "").strip()
    if text:
        return parse_bytes(text, "TABLEGEN_MEMORY_LIMIT")
    return physical_memory_bytes() / 2


def physical_memory_bytes() -> int:
    """This machine's physical memory: ``sysconf`` on POSIX (the kernel's total, as psutil reports it, without
    importing psutil into every lookup), else :func:`psutil.virtual_memory`.

    Examples
    --------
    >>> physical_memory_bytes() > 0
    True
    """
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows) or no such name
        import psutil

        return psutil.virtual_memory().total


def parse_bytes(text: str, name: str) -> float:
    """``"8GB"`` -> 8e9; a plain number is bytes.  ValueError naming ``name`` if it is not a size.

    Examples
    --------
    >>> parse_bytes("1.5 GiB", "limit")
    1610612736.0
    """
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", text)
    unit = match.group(2).upper() if match else None
    if match is None or unit not in _UNITS or float(match.group(1)) <= 0:
        raise TablegenInputError(f"{name} must be a positive size such as 8GB or 512MiB, got {text!r}")
    return float(match.group(1)) * _UNITS[unit]


# -- memory guards of simulate/simulate_cell (R), grids and top-k (issue 16) -------------------------------



def format_bytes(count: float) -> str:
    """``"7.9 GB"``: bytes in decimal units, three significant digits.

    Examples
    --------
    >>> format_bytes(7.9e9)
    '7.9 GB'
    """
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count:.0f} B"


def check_memory(estimate: float, what: str, way_out: str | tuple[str | Argument, ...]) -> None:
    """Raise :class:`ResourceLimitError` with the estimate and ``way_out`` if ``estimate`` bytes exceed the limit.

    ``way_out`` is text, or text and :class:`~tablegen.errors.Argument` parts where it names arguments
    (then the command line says them as options).

    Examples
    --------
    >>> check_memory(1e3, "a tiny job", "none needed")
    >>> try:
    ...     check_memory(1e30, "a huge job", ("use ", Argument("method", "simulate")))
    ... except ResourceLimitError as error:
    ...     print(str(error).split("; ")[-1], "|", error.option_message().split("; ")[-1])
    use method='simulate' | use --method simulate
    """
    limit = memory_limit_bytes()
    if estimate > limit:
        raise _limit_error(
            f"{what} would need about {format_bytes(estimate)} of memory, more than the limit of "
            f"{format_bytes(limit)} (half of this machine's memory unless TABLEGEN_MEMORY_LIMIT says otherwise); ",
            way_out)


def _limit_error(text: str, way_out: str | tuple[str | Argument, ...]) -> ResourceLimitError:
    parts = (way_out,) if isinstance(way_out, str) else tuple(way_out)
    return ResourceLimitError.naming(text, *parts)


def tails_memory(metrics: int, capacity: int, block_size: int, counted_slots: tuple[int, ...] = ()) -> float:
    """Peak bytes of a Monte Carlo pass keeping ``capacity`` samples for each of ``metrics`` metrics and
    counting others per value at ``counted_slots`` slots each (an upper bound).

    A kept tail (a bucketed stream, or a streaming top-k where a metric's range is unbounded or its ties
    heavy) comes to at most about 40 bytes per retained sample: a pass's peak RSS grows by 32 (average
    precision) and 24 (best MCC) bytes per retained sample besides its block at R = 10⁷, (30, 30), numba's
    arrays included; tracemalloc saw 42 for the streaming top-k alone at R = 10⁶, seven metrics.  A counted
    tail takes at most 64 bytes a slot (53: the value's 64 bits in its table and in the counter's copy, an
    occupied flag, the listed value, four counts; 12 more while its tail is read).  Besides, a block of scores:
    8 bytes per replicate and column.

    Examples
    --------
    >>> format_bytes(tails_memory(1, 10**6, 4096, counted_slots=(4096, 4096)))
    '40.9 MB'
    """
    columns = metrics + len(counted_slots)
    return 40.0 * metrics * capacity + 64.0 * sum(counted_slots) + 8.0 * block_size * (columns + 8)


#: Bytes per rank of the tables every ranking kernel reads: two float64s (inverses and harmonic numbers,
#: or the lane kernel's two inverse tables).
BASE_TABLE_BYTES_PER_RANK = 16.0


def ranking_memory(P: int, N: int, bytes_per_rank: float = BASE_TABLE_BYTES_PER_RANK) -> float:
    """Bytes of a ranking kernel's tables, an upper bound: ``bytes_per_rank`` per rank 0..P+N (the shared
    tables, plus what the requested metrics' extra kernel work reads: their registry entries'
    ``table_bytes_per_rank``), the minority kernel's bitmap (a bit per rank) and positions (min(P, N)
    int64s), 1 MB besides (buffers).

    Examples
    --------
    >>> format_bytes(ranking_memory(20, 10**9))
    '16.1 GB'
    """
    ranks = P + N + 9  # the lane kernel's tables reach P + N + STEPS
    return bytes_per_rank * ranks + ranks / 8.0 + 8.0 * min(P, N) + 1e6


def grid_memory(cells: int, chunks: int) -> float:
    """Peak bytes on the client of planning and running a grid: about 16 bytes per cell (done flags and
    masks) and 4 kB per chunk (its plan entry, dask task and future)."""
    return 16.0 * cells + 4096.0 * chunks


def axis_memory(values: int) -> float:
    """Bytes of a config's grid axis held as a tuple of ``values`` Python ints: about 40 each (an 8-byte
    reference and a 32-byte int)."""
    return 40.0 * values


def topk_memory(P: int, K: int, levels: int = 1) -> float:
    """Peak bytes of the top-k sweep: three arrays of P + 3 values, K rows of bounds per level, 64 kB besides."""
    return 24.0 * (P + 3) + 8.0 * K * (2 * levels + 6) + 65536.0


#: Single-core seconds per step of the top-k sweep (one count of one k: pmf, tails, bounds), measured at
#: 6.3-7.3 ns on a 2-core Xeon (P = 2e4..1e5, K up to 1e6), rounded up.
TOPK_SECONDS_PER_STEP = 8e-9


def topk_seconds(P: int, K: int, sweeps: int = 1) -> float:
    """Single-core seconds of ``sweeps`` top-k sweeps to K over P positives: each k steps through its
    min(k, P) + 1 possible counts.

    Examples
    --------
    >>> round(topk_seconds(10**6, 10**6))
    4000
    """
    steps = K * (K + 1) / 2 + K if K <= P else P * (P + 1) / 2 + (K - P) * P + K
    return TOPK_SECONDS_PER_STEP * steps * sweeps


def f1_draws_memory(samples: int, classes: int, posteriors: int) -> float:
    """Peak bytes of ``samples`` posterior F1 draws of ``posteriors`` confusion matrices over ``classes`` classes,
    an upper bound: 16 bytes per draw, class and matrix (the μ draws and their working copy), 100 per draw besides
    (η draws, the F1 draws, their difference).  tracemalloc peaks: 35-43 bytes per draw and class at 3 classes,
    24 at 30, 14 at 100.

    Examples
    --------
    >>> format_bytes(f1_draws_memory(10**8, 3, 2))
    '19.6 GB'
    """
    return (16.0 * classes * posteriors + 100.0) * samples


#: Single-core seconds per posterior F1 draw, per squared class count and per draw (measured 15-16 ns * M**2 at
#: M = 30 and 100 classes, 0.4 us per draw at M = 3), rounded up.
F1_SECONDS_PER_DRAW_CLASS2, F1_SECONDS_PER_DRAW = 20e-9, 0.5e-6


def f1_draws_seconds(samples: int, classes: int, posteriors: int) -> float:
    """Single-core seconds of ``samples`` posterior F1 draws of ``posteriors`` matrices over ``classes`` classes.

    Examples
    --------
    >>> round(f1_draws_seconds(50_000, 1000, 2))
    2000
    """
    return samples * posteriors * (F1_SECONDS_PER_DRAW_CLASS2 * classes**2 + F1_SECONDS_PER_DRAW)


def time_limit_seconds() -> float:
    """The most single-core seconds a lookup may plan to spend: ``TABLEGEN_TIME_LIMIT`` or one hour.

    Examples
    --------
    >>> time_limit_seconds() > 0
    True
    """
    text = os.environ.get("TABLEGEN_TIME_LIMIT", "").strip()
    if not text:
        return 3600.0
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise TablegenInputError(f"TABLEGEN_TIME_LIMIT must be a positive number of seconds, got {text!r}")
    return seconds


def check_time(estimate: float, what: str, way_out: str | tuple[str | Argument, ...],
               limit: float | None = None) -> None:
    """Raise :class:`ResourceLimitError` if ``estimate`` seconds exceed ``limit`` (default
    :func:`time_limit_seconds`; ``way_out`` as in :func:`check_memory`).

    Examples
    --------
    >>> check_time(1.0, "a quick lookup", "none needed")
    >>> try:
    ...     check_time(90.0, "a report", "ask less", limit=60.0)
    ... except ResourceLimitError as error:
    ...     print(error)
    a report would take about 90 s on one core, more than the limit of 60 s; ask less
    """
    if limit is not None and not (isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit > 0):
        raise TablegenInputError.naming(Argument("max_seconds"), f" must be a positive number of seconds, got "
                                        f"{limit!r}")
    source = "" if limit is not None else " (TABLEGEN_TIME_LIMIT)"
    limit = time_limit_seconds() if limit is None else float(limit)
    if estimate > limit:
        raise _limit_error(
            f"{what} would take about {_seconds(estimate)} s on one core, more than the limit of {_seconds(limit)} s"
            f"{source}; ", way_out)


def _seconds(value: float) -> str:
    """``1,234`` from 10 s up, ``0.5`` below (two significant digits)."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"
