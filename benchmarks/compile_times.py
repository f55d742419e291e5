"""Where a test run's numba compile time goes: a pytest plugin recording every compile (a cache miss) with its CPU
seconds, then a table of the dispatchers that cost the most.

    PYTHONPATH=benchmarks NUMBA_CACHE_DIR=$(mktemp -d) .venv/bin/python -m pytest -m "not slow" -q -p compile_times

Each ``numba:compile`` event (numba's event API: a dispatcher compiling one signature, not loading it from the
cache) is timed in process CPU seconds, *exclusive* of the compiles nested in it (a jitted callee compiled while its
caller is typed), so the column adds up to the run's compile time.  Every process of the run (pytest-xdist workers
included) writes its records to ``COMPILE_TIMES_DIR`` (default: a fresh temporary folder, named at the end); the
controller then prints the top ``COMPILE_TIMES_TOP`` (default 20) dispatchers: seconds, compiles, distinct
signatures, and the test that first compiled each.  Processes a test starts itself (the command line's tests) are
not recorded.  Look for a dispatcher compiled for several signatures (a caller passing int32 here and int64 there,
a literal 0 typed in a loop, a doctest with another dtype) and for numba's own helpers that format error messages
(``ol_raise_with_shape_context``, ``check_axis_bounds``): ``tablegen/compute/kernels/jit.py`` says how the kernels
avoid them.
"""

from __future__ import annotations

import collections
import glob
import json
import os
import tempfile
import time

import pytest

_records: list[dict] = []
_stack: list[list[float]] = []
_current = {"test": "<collection>"}


def _install() -> None:
    from numba.core import event

    class _Recorder(event.Listener):
        def on_start(self, ev):
            _stack.append([time.process_time(), 0.0])

        def on_end(self, ev):
            start, nested = _stack.pop()
            seconds = time.process_time() - start
            if _stack:
                _stack[-1][1] += seconds
            function = ev.data["dispatcher"].py_func
            _records.append({"name": f"{function.__module__}.{function.__qualname__}",
                             "args": str(tuple(ev.data["args"])), "seconds": seconds - nested,
                             "test": _current["test"]})

    event.register("numba:compile", _Recorder())


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist) names the folder for all
        os.environ.setdefault("COMPILE_TIMES_DIR", tempfile.mkdtemp(prefix="compile-times-"))
    _install()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current["test"] = item.nodeid
    yield


def pytest_unconfigure(config):
    folder = os.environ["COMPILE_TIMES_DIR"]
    with open(os.path.join(folder, f"compile-{os.getpid()}.json"), "w") as stream:
        json.dump(_records, stream)
    if not hasattr(config, "workerinput"):
        _report(folder, int(os.environ.get("COMPILE_TIMES_TOP", "20")))


def _report(folder: str, top: int) -> None:
    records = [r for path in glob.glob(os.path.join(folder, "compile-*.json")) for r in json.load(open(path))]
    seconds, compiles, signatures, first = collections.Counter(), collections.Counter(), {}, {}
    for r in records:
        seconds[r["name"]] += r["seconds"]
        compiles[r["name"]] += 1
        signatures.setdefault(r["name"], set()).add(r["args"])
        first.setdefault(r["name"], r["test"])
    print(f"\nnumba compiles: {len(records)}, {sum(seconds.values()):.1f} s of CPU (records in {folder})")
    print("| seconds | compiles | signatures | dispatcher | first compiled by |\n|---:|---:|---:|---|---|")
    for name, total in seconds.most_common(top):
        print(f"| {total:.2f} | {compiles[name]} | {len(signatures[name])} | {name} | {first[name]} |")
