"""The size search along a line of test sets, shared by :func:`tablegen.sample_size`'s exact search
(:mod:`tablegen.lookup.planning`) and its Monte Carlo one (:mod:`tablegen.lookup.planning_mc`): doubling, bisection,
the scan down from a boundary, and the scan below a bound.  Each takes ``reaches``, a predicate on the size.
"""

from __future__ import annotations


def scan_window(n: int) -> int:
    """W = max(16, n/16): how many sizes in a row a scan about size n takes to end (:func:`tablegen.sample_size`).

    Examples
    --------
    >>> scan_window(100), scan_window(1000)
    (16, 62)
    """
    return max(16, n // 16)


def bisect_line(reaches, smallest: int, max_size: int) -> tuple[int | None, int | None]:
    """(lo, hi): doubling from ``smallest`` until ``reaches(hi)``, then bisection to hi - lo = 1 with ``reaches(hi)``
    and not ``reaches(lo)`` (lo None when ``smallest`` reaches); hi None when the doubling reached ``max_size``
    without reaching, lo then the last size that missed below it.

    Examples
    --------
    >>> bisect_line(lambda n: n >= 37, 1, 1000), bisect_line(lambda n: False, 1, 100)
    ((36, 37), (64, None))
    """
    lo, hi = None, smallest
    while not reaches(hi):
        if hi >= max_size:
            return lo, None
        lo, hi = hi, min(2 * hi, max_size)
    while lo is not None and hi - lo > 1:
        middle = (lo + hi) // 2
        lo, hi = (lo, middle) if reaches(middle) else (middle, hi)
    return lo, hi


def scan_down(reaches, hi: int, smallest: int, window: int) -> int:
    """The lowest size that reaches, scanning down from ``hi`` (which reaches) until ``window`` sizes in a row miss
    or ``smallest`` is passed.

    Examples
    --------
    >>> scan_down(lambda n: n in (40, 30, 20, 2), 40, 1, 16)  # 2 lies beyond 17 sizes in a row that miss
    20
    """
    first, below_run, n = hi, 0, hi - 1
    while n >= smallest and below_run < window:
        if reaches(n):
            first, below_run = n, 0
        else:
            below_run += 1
        n -= 1
    return first


def below_bound(reaches, floor: int, bound: int) -> int | None:
    """The largest size in [floor, bound) that reaches, or None: where the doubling reached the bound without
    reaching the target.

    Examples
    --------
    >>> below_bound(lambda n: n % 7 == 0, 80, 100), below_bound(lambda n: False, 80, 100)
    (98, None)
    """
    for n in range(bound - 1, floor - 1, -1):
        if reaches(n):
            return n
    return None
