"""numba's ``njit`` with its on-disk cache: the one jit decorator every cached kernel uses.

A kernel compiled in one process is loaded from ``__pycache__`` (or ``NUMBA_CACHE_DIR``) in the next,
so a lookup does not pay the compile time again.  Numba invalidates a kernel's cache
when its own file changes, not when a callee in another file does; each kernel's tests compare it
with an independent reference, which would catch a stale cache.
"""

from __future__ import annotations

import logging

import numba as nb

logger = logging.getLogger(__name__)


def jit_cached(**options):
    """``numba.njit(cache=True, **options)`` where a writable cache place exists (else without, warned).

    Examples
    --------
    >>> @jit_cached(nogil=True)
    ... def add_one(x):
    ...     return x + 1
    >>> add_one(41)
    42
    """
    def decorate(function):
        try:
            return nb.njit(cache=True, **options)(function)
        except RuntimeError as error:  # numba found no writable cache location
            logger.warning("numba cache unavailable (%s); %s compiles in every process", error, function.__name__)
            return nb.njit(**options)(function)

    return decorate


def variant_name(function, name: str):
    """``function`` renamed ``name`` (``__name__`` and ``__qualname__``), for a kernel variant made by a factory.

    Numba names a compiled function's symbol after its qualified name plus a per-process counter, and
    its cache files after the qualified name: two variants of one closure (say with and without an
    optional metric) compiled in different processes can get the same symbol, and when both are
    loaded from the cache into one process, calls to one reach the other.  A name of its own per
    variant keeps their symbols and cache files apart.

    Examples
    --------
    >>> def make(flag):
    ...     def kernel(x):
    ...         return x + 1 if flag else x
    ...     return variant_name(kernel, f"kernel_{int(flag)}")
    >>> make(True).__qualname__
    'kernel_1'
    """
    function.__name__ = function.__qualname__ = name
    return function
