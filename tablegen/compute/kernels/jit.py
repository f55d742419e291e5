"""numba's ``njit`` with its on-disk cache: the one jit decorator every cached kernel uses.

A kernel compiled in one process is loaded from ``__pycache__`` (or ``NUMBA_CACHE_DIR``) in the next,
so a lookup does not pay the compile time again.  Numba invalidates a kernel's cache
when its own file changes, not when a callee in another file does; each kernel's tests compare it
with an independent reference, which would catch a stale cache.

Importing this module imports numba and builds its CPU target (what the first kernel call would do)
with the cyclic garbage collector paused, its objects then moved to the collector's oldest generation, and
without importing ``scipy.linalg`` (see :func:`_load_numba`): in a new process about 0.25 s of CPU instead of
0.5 s, and less for the collector to walk afterwards (``benchmarks/bench_startup.py``).  Only the modules of
kernels a question needs import it.

Compile time from a cold cache (the fast test loop and CI start cold) is kept down by three habits in the
kernels, each measured with numba's ``numba:compile`` events:

- a loop variable a kernel passes to another jitted function starts as ``np.int64(0)``, not the literal ``0``:
  typing the loop, numba compiles the callee once for ``Literal[int](0)`` and again for int64, and never uses
  the first (the lane kernel compiled four callees twice, 5 s);
- a large helper that several kernels (or one kernel at several calls) use is a plain ``nb.njit`` function, which
  numba compiles once per signature and LLVM inlines or calls, not ``inline="always"``, which copies and retypes
  its IR at every call; small helpers inside hot loops stay inlined (check the loop's speed side by side);
- an array is copied into a slice element by element, not by ``a[i, :] = b`` or ``a[:k] = b[lo:hi]``, for
  which numba compiles a shape-mismatch error message (string formatting, 1-2 s of CPU once per process and
  array rank); a sum along an axis is a loop too (``a.sum(axis=1)`` compiles its axis check's message).
"""

from __future__ import annotations

import contextlib
import gc
import importlib.machinery
import logging
import os
import sys

logger = logging.getLogger(__name__)


@contextlib.contextmanager
def collection_paused():
    """Python's cyclic garbage collector paused inside the block, then restored as it was.

    Importing numba and building its CPU target allocate some 100,000 long-lived objects (type
    templates, registries) and no garbage: the collector's passes over them while they are being
    built cost a new process about 0.1 s of CPU and free nothing.

    Examples
    --------
    >>> import gc
    >>> with collection_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def _blas_probe_from_files():
    """numba's check that SciPy's BLAS exists made by finding its module file instead of importing it.

    ``numba.np.arraymath`` (loaded with numba's CPU target) calls ``numba.np.linalg.ensure_blas`` once at import
    to decide whether ``np.dot`` and friends compile; that imports ``scipy.linalg.cython_blas``, hence all of
    ``scipy.linalg`` (about 0.12 s of CPU in a new process), which no kernel here uses.  Inside this block the
    check finds the module's file and checks SciPy's integer width as numba does; numba's own ``ensure_blas``
    is back in place after it, so a kernel that does use BLAS imports it for real when it compiles.  Where
    numba's internals differ from these names the block changes nothing.
    """
    try:
        from numba.np import linalg
    except ImportError:  # pragma: no cover - a numba without this module
        yield
        return
    original = getattr(linalg, "ensure_blas", None)
    check_width = getattr(linalg, "_check_lapack_int_width", lambda: None)  # older numbas make no such check
    if original is None or "numba.np.arraymath" in sys.modules:  # the check was made already
        yield
        return

    def ensure_blas():
        import scipy

        places = [os.path.join(place, "linalg") for place in scipy.__path__]
        if importlib.machinery.PathFinder.find_spec("cython_blas", places) is None:
            raise ImportError("scipy 0.16+ is required for linear algebra")
        check_width()

    linalg.ensure_blas = ensure_blas
    try:
        yield
    finally:
        linalg.ensure_blas = original
        arraymath = sys.modules.get("numba.np.arraymath")
        if getattr(arraymath, "ensure_blas", None) is ensure_blas:
            arraymath.ensure_blas = original


def _load_numba():
    """numba, with its CPU target built while the collector is paused and SciPy's BLAS is found by its file; the
    objects made meanwhile are then moved to the collector's oldest generation (:func:`_promote_to_oldest`)."""
    with collection_paused(), _blas_probe_from_files():
        import numba

        try:
            from numba.core.registry import cpu_target

            cpu_target.target_context.refresh()  # what the first kernel load would do
        except (ImportError, AttributeError):  # pragma: no cover - numba's internals moved
            pass
        _promote_to_oldest()
    return numba


def _promote_to_oldest():
    """Move every object the collector tracks into its oldest generation (``gc.freeze()`` then ``gc.unfreeze()``,
    which puts the frozen objects back there), unless a program froze objects of its own.

    numba's objects, made while the collector was paused, would otherwise all sit in the youngest generation, to
    be walked by a young collection and again by a middle one before they reach the oldest, where long-lived
    objects belong (some 0.07 s of CPU in a new process).  Nothing is exempted from collection: the oldest
    generation is collected as usual; young garbage of the moment is collected by the next full collection
    instead of the next young one.

    Examples
    --------
    >>> import gc
    >>> _promote_to_oldest()
    >>> gc.get_count()[0] < 700, gc.get_freeze_count()
    (True, 0)
    """
    if gc.get_freeze_count() == 0:  # a program's own gc.freeze() is kept as it is
        gc.freeze()
        gc.unfreeze()


nb = _load_numba()


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
