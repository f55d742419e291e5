"""What a new process imports to answer a lookup: only what the question needs.

A lookup that runs a lattice programme imports numba and the one kernel module it needs, and numba's CPU
target is built without ``scipy.linalg`` (numba's BLAS check finds the module's file instead of importing
it) and without psutil (the machine's memory comes from ``sysconf``); a bundled-table lookup imports no
numba and no SciPy module that computes; neither imports the simulation engine (``tablegen.compute.cell``).
numba's objects are moved to the collector's oldest generation after the load, collectable as ever.  Each
case runs in a fresh interpreter, so nothing this test process imported earlier can hide an import.
``benchmarks/bench_startup.py`` times the same lookups.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from progresstools import HANG_SECONDS

#: Modules a lookup imports only where its question needs them.
WATCHED = ("numba", "scipy.linalg", "scipy.stats", "psutil", "zarr", "dask", "xarray", "pandas")


def fresh(code: str, env: dict | None = None) -> dict:
    """Run ``code`` in a new interpreter; it leaves its findings in ``found`` (a dict), returned here, with
    ``imported``: the tablegen modules and the watched modules it imported."""
    program = (f"import sys, json\nfound = {{}}\n{code}\n"
               f"found['imported'] = sorted(m for m in sys.modules if m.startswith('tablegen.') or m in {WATCHED!r})\n"
               "print(json.dumps(found))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=HANG_SECONDS,
                          check=False, **({"env": env} if env else {}))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_lattice_lookup_imports_numba_and_its_one_kernel_module_but_no_blas_nor_psutil():
    import tablegen

    here = tablegen.critical_value("best_f1", 300, 900, C=10)
    found = fresh("import tablegen\n"
                  "answer = tablegen.critical_value('best_f1', 300, 900, C=10)\n"
                  "found['value'], found['method'] = float(answer), answer.method")
    assert (found["value"], found["method"]) == (float(here), here.method) == (float(here), "exact")
    imported = found["imported"]
    assert "numba" in imported
    assert "scipy.linalg" not in imported and "psutil" not in imported and "scipy.stats" not in imported
    kernels = [m for m in imported if m.startswith("tablegen.compute.kernels.") and ".cuda" not in m]
    assert kernels == ["tablegen.compute.kernels.jit", "tablegen.compute.kernels.lattice"]
    assert not {"zarr", "dask", "xarray", "pandas"} & set(imported)
    assert "tablegen.compute.cell" not in imported  # the simulation engine: only answers that simulate need it


def test_a_table_lookup_imports_no_numba_and_no_scipy_that_computes():
    found = fresh("import tablegen\n"
                  "answer = tablegen.critical_value('average_precision', 100, 300, C=10, method='table')\n"
                  "found['method'] = answer.method")
    assert found["method"] == "table"
    assert not {"numba", "scipy.linalg", "scipy.stats", "psutil", "dask", "xarray", "pandas"} & set(found["imported"])
    assert not [m for m in found["imported"] if m.startswith("tablegen.compute.kernels.") and ".cuda" not in m]
    assert "tablegen.compute.cell" not in found["imported"]


def test_numba_keeps_its_own_blas_check_and_compiles_blas_calls_after_loading():
    """The file-based probe is in place only while numba's target loads: afterwards ``ensure_blas`` is numba's
    again, in ``numba.np.linalg`` and in ``numba.np.arraymath``, numba's verdict is the one its own check gives
    here (SciPy has BLAS), and a kernel that calls BLAS compiles, importing ``scipy.linalg`` only then."""
    found = fresh("import gc, numba.np.linalg as linalg\n"
                  "original = linalg.ensure_blas\n"
                  "import tablegen.compute.kernels.jit as jit\n"
                  "import numba.np.arraymath as arraymath\n"
                  "found['same'] = linalg.ensure_blas is original and arraymath.ensure_blas is original\n"
                  "found['have_blas'] = arraymath._HAVE_BLAS\n"
                  "found['linalg_before'] = 'scipy.linalg' in sys.modules\n"
                  "found['gc'] = gc.isenabled()\n"
                  "import numpy as np\n"
                  "dot = jit.nb.njit(lambda a, b: np.dot(a, b))\n"
                  "found['dot'] = float(dot(np.arange(3.0), np.arange(3.0)))\n"
                  "found['linalg_after'] = 'scipy.linalg' in sys.modules")
    assert found["same"] and found["have_blas"] and found["gc"]
    assert not found["linalg_before"] and found["linalg_after"]
    assert found["dot"] == 5.0


def test_where_scipy_has_no_blas_numba_is_told_so_as_its_own_check_would(tmp_path):
    found = fresh("import scipy\n"
                  f"scipy.__path__ = [{str(tmp_path)!r}]  # a SciPy without linalg/cython_blas\n"
                  "import tablegen.compute.kernels.jit\n"
                  "import numba.np.arraymath as arraymath\n"
                  "found['have_blas'] = arraymath._HAVE_BLAS")
    assert found["have_blas"] is False


@pytest.mark.parametrize("enabled", [True, False])
def test_loading_numba_leaves_the_collector_as_it_found_it(enabled):
    found = fresh(f"import gc\n{'' if enabled else 'gc.disable()'}\n"
                  "import tablegen.compute.kernels.jit\n"
                  "found['enabled'] = gc.isenabled()")
    assert found["enabled"] is enabled


def test_the_machines_memory_is_what_psutil_reports():
    psutil = pytest.importorskip("psutil")
    from tablegen.compute.limits import physical_memory_bytes

    assert physical_memory_bytes() == psutil.virtual_memory().total


def test_the_memory_limit_is_half_the_machine_unless_set(monkeypatch):
    from tablegen.compute.limits import memory_limit_bytes, physical_memory_bytes

    monkeypatch.delenv("TABLEGEN_MEMORY_LIMIT", raising=False)
    assert memory_limit_bytes() == physical_memory_bytes() / 2
    monkeypatch.setenv("TABLEGEN_MEMORY_LIMIT", "1GB")
    assert memory_limit_bytes() == 1e9


def test_numbas_objects_go_to_the_oldest_generation_and_stay_collectable():
    """After loading numba the young generations are nearly empty (its objects were moved to the oldest), nothing
    is left frozen, and garbage made before the load is still collected."""
    found = fresh("import gc, weakref\n"
                  "class Node: pass\n"
                  "node = Node(); node.me = node; gone = []\n"
                  "watch = weakref.ref(node, lambda _: gone.append(True))\n"
                  "del node  # a garbage cycle, not yet collected\n"
                  "import tablegen.compute.kernels.jit\n"
                  "found['young'] = len(gc.get_objects(0)) + len(gc.get_objects(1))\n"
                  "found['oldest'] = len(gc.get_objects(2))\n"
                  "found['frozen'] = gc.get_freeze_count()\n"
                  "gc.collect()\n"
                  "found['collected'] = gone == [True]")
    assert found["frozen"] == 0 and found["collected"]
    assert found["oldest"] > 50_000 and found["young"] < found["oldest"] / 20


def test_a_programs_own_frozen_objects_stay_frozen():
    """A program that froze its objects (``gc.freeze()``, say before forking workers) finds them still frozen:
    outside every generation the collector walks."""
    found = fresh("import gc\n"
                  "kept = [[i] for i in range(1000)]\n"
                  "gc.freeze()\n"
                  "import tablegen.compute.kernels.jit\n"
                  "walked = {id(o) for o in gc.get_objects()}\n"
                  "found['walked'] = sum(id(o) in walked for o in [kept, *kept])\n"
                  "found['frozen'] = gc.get_freeze_count()")
    assert found["walked"] == 0 and found["frozen"] > 1000


def test_a_programs_unclosed_file_in_a_reference_cycle_is_still_written_at_exit(tmp_path):
    """The exit's garbage collections are kept (skipping them would cut the exit's CPU after loading numba): a
    buffered file that only a garbage cycle holds at exit is finalised, so what was written to it is flushed."""
    path = tmp_path / "out.txt"
    code = ("import tablegen\n"
            "tablegen.critical_value('best_f1', 30, 90, C=10)\n"
            f"handle = open({str(path)!r}, 'w')\n"
            "handle.write('written')\n"
            "class Holder: pass\n"
            "holder = Holder(); holder.me = holder; holder.handle = handle\n"
            "del handle\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_SECONDS)
    assert done.returncode == 0, done.stderr
    assert path.read_text() == "written"
