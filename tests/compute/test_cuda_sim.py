"""The numba-cuda twins of the ranking kernels, run in numba-cuda's simulator, against the CPU kernels.

The simulator is chosen when ``numba.cuda`` is first imported, so the CUDA side runs in a child
process started with ``NUMBA_ENABLE_CUDASIM=1`` (this file is also that child's script: ``python
tests/compute/test_cuda_sim.py MODE OUT.npz``); the CPU side runs here.  Nothing in this pytest process
imports ``numba.cuda`` because of these tests.  Without numba-cuda every test that needs it is
skipped with a reason that names the missing package (shown by ``-ra``).

Rejections are forced by replicates whose very first bounded draw is rejected, found once by a
vectorised search and re-checked here against the pure-Python stream of ``tests/compute/test_rng.py``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve()
SEED = 2005
CUTOFFS = (1, 5, 10, 5000)
#: (P, N, first replicate, count): lane-kernel cells and minority-kernel cells (both orientations).
SCORE_CASES = [(1, 1, 0, 8), (3, 4, 1000, 40), (7, 9, 0, 40), (13, 2, 77, 24), (40, 3, 5, 16),
               (2, 300, 0, 24), (300, 2, 9, 24), (1, 250, 3, 16), (17, 230, 0, 8)]
#: Replicates whose first bounded draw is rejected (bound P + N for the sequential kernel,
#: max(P, N) + 1 for Floyd's first draw); checked by test_forced_replicates_really_reject.
REJECTING = [(20, 30, 23670736), (3, 3000, 2310560), (3000, 3, 2033873)]
#: (P, N, R, block size on the device) for whole cells through simulate_cell.
CELL_CASES = [(5, 7, 200, 64), (2, 300, 200, 48), (300, 2, 200, 48)]
CELL_OPTIONS = dict(Cs=(10,), alphas=(0.05,), tail_probabilities=(0.02, 0.05, 0.1), exact=False)


def _job(store, device):
    """A job of 4 cells (two lane-kernel cells, two minority-kernel cells) at R = 200, 1 x 1 chunks."""
    from tablegen.batch.config import config_from_mapping

    return config_from_mapping({"grid": {"P": [2, 4], "N": [5, 300]}, "replicates": 200, "seed": SEED,
                                "Cs": [10], "alphas": [0.05], "chunks": {"P": 1, "N": 1},
                                "store": {"url": str(store)}, "device": device,
                                "metrics": ["auc", "best_f1", "average_precision", "tp_at_3"]})


def _ks(P, N):
    return np.array(sorted({min(k, P + N) for k in CUTOFFS}), dtype=np.int64)


# --- the child process (simulator) ---------------------------------------------------------------

def _child(mode: str, path: str) -> None:
    import warnings

    warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)  # numpy uint64 scalars wrap
    from tablegen.compute.kernels.cuda.device import resolve_device
    from tablegen.compute.kernels.cuda.driver import CudaCell
    from tablegen.compute.mc import cell_key

    if mode == "ptx":
        return _compile_ptx(path)
    results = {"resolved": np.array([resolve_device("cuda"), resolve_device("auto")])}
    if mode == "fast":
        for P, N, first, count in SCORE_CASES:
            for with_mcc in (True, False):
                cell = CudaCell(P, N, cell_key(SEED, P, N), _ks(P, N), block_size=count, with_mcc=with_mcc)
                results[f"scores_{P}_{N}_{with_mcc}"] = cell.scores(first, count)
        for P, N, replicate in REJECTING:
            cell = CudaCell(P, N, cell_key(SEED, P, N), _ks(P, N), block_size=2, with_mcc=True)
            results[f"reject_{P}_{N}"] = cell.scores(replicate, 2)
        cell = CudaCell(30, 40, cell_key(SEED, 30, 40), _ks(30, 40), block_size=64, with_mcc=True)
        kept, counts = cell.candidates(0, 64, [0, 2, 5], [-np.inf, 0.6, 0.0], [0.55, np.inf, 2.0])
        results.update({f"kept_{c}": values for c, values in enumerate(kept)}, counts=np.array(counts))
        results.update(_permutation_counts("cuda"))
        results.update(_resample_values("cuda"))
    elif mode == "store":
        from tablegen.batch.job import run

        run(_job(Path(path).with_suffix(".zarr"), "cuda"), executor="serial")
    else:
        import tablegen.compute.kernels.cuda.driver as driver
        from tablegen.lookup.simulate import simulate_cell

        for P, N, R, block in CELL_CASES:
            driver.DEVICE_BLOCK_SIZE = block  # several blocks, so the device filter meets full tails
            ds = simulate_cell(P, N, R, SEED, device="cuda", **CELL_OPTIONS)
            for name in ds.data_vars:
                results[f"cell_{P}_{N}_{name}"] = ds[name].values
            results[f"cell_{P}_{N}_device"] = np.array(ds.attrs["device"])
    np.savez(path, **results)


#: The label-permutation kernel's cases: (items, positives, models, replicates, first replicate).
PERMUTATION_CASES = [(14, 5, 3, 40, 0), (9, 6, 2, 24, 1000)]


def _permutation_counts(device: str) -> dict:
    """Maxima and hit counts of the label-permutation kernel for every metric column, tied scores included."""
    from tablegen.compare.selection.engine import models_sorted, null_counts
    from tablegen.compute.kernels.ranking import mcc_weights

    results = {}
    for n, P, K, R, first in PERMUTATION_CASES:
        rng = np.random.default_rng(n)
        sorted_models = models_sorted(np.round(rng.normal(size=(K, n)), 1))
        thresholds = np.linspace(0.55, 0.75, K)
        for column, k_cut in ((0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 4)):
            limits = thresholds * (P if column == 6 else 1)
            counts = null_counts(sorted_models, P, column, k_cut, mcc_weights(P, n - P, n + 1), limits,
                                 np.arange(K), exact=False, R=R, key=(np.uint64(n), np.uint64(first)), device=device)
            results.update({f"perm_{n}_{column}_maxima": counts.maxima, f"perm_{n}_{column}_raw": counts.raw_hits,
                            f"perm_{n}_{column}_step": counts.step_hits})
    results.update(_permutation_counts_with_a_look(device))
    return results


def _permutation_counts_with_a_look(device: str) -> dict:
    """A fused pass with an early look at 10 of 200 arrangements (H = 3): AUC's thresholds out of reach (stops at the
    look), accuracy's within reach now and then (goes on, block by block, until 3 arrangements reach each count
    between)."""
    from tablegen.compare.pairwise.sequential import EarlyLook
    from tablegen.compare.selection.engine import MetricPlan, models_sorted, null_counts_all
    from tablegen.compute.kernels.ranking import mcc_weights

    n, P, K = 14, 5, 3
    sorted_models = models_sorted(np.round(np.random.default_rng(n).normal(size=(K, n)), 1))
    plans = [MetricPlan(0, 0, np.arange(K), np.full(K, 1.5), np.arange(K)),
             MetricPlan(1, 0, np.arange(K), np.full(K, 0.78), np.arange(K))]
    found = null_counts_all(sorted_models, P, plans, mcc_weights(P, n - P, n + 1), exact=False, R=200,
                            key=(np.uint64(n), np.uint64(3)), device=device, look=EarlyLook(10, 0, 3, 3))
    return {f"look_{t}_{part}": np.asarray(value) for t, counts in enumerate(found)
            for part, value in (("maxima", counts.maxima), ("raw", counts.raw_hits), ("step", counts.step_hits),
                                ("early", counts.stopped_early),
                                *((f"{kind}_{field}", getattr(c, field)) for kind, c in zip("rps", counts.looked)
                                  for field in ("at_look", "hits", "drawn")))}


#: The bootstrap kernel's cases: (items, models, resamples, first resample, decimals of the scores: ties; None:
#: untied, the CPU kernel's walk without group-end tests).
RESAMPLE_CASES = [(23, 3, 40, 0, 1), (9, 2, 24, 1000, 1), (31, 2, 16, 5, None)]


def _resample_values(device: str) -> dict:
    """Every model's value on each bootstrap resample, for every metric column (tp_at_k at k = 4 and k = n), one
    column at a time and all in one pass."""
    from tablegen.compute.kernels import resample as kernels

    resample_values, resample_metrics = kernels.resample_values, kernels.resample_metrics

    if device == "cuda":  # 7 resamples a launch: several launches per case, each starting where the last ended
        from functools import partial

        from tablegen.compute.kernels.cuda.resample import resample_metrics_cuda, resample_values_cuda

        resample_values = partial(resample_values_cuda, threads=7)
        resample_metrics = partial(resample_metrics_cuda, threads=7)
    results = {}
    for n, K, R, first, decimals in RESAMPLE_CASES:
        rng = np.random.default_rng(n)
        labels = (np.arange(n) % 3 == 0).astype(np.int64)
        scores = rng.normal(size=(K, n))
        orders, ends = kernels.sorted_models(scores if decimals is None else np.round(scores, decimals))
        positives, negatives = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
        for column, k_cut in ((0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 4), (6, n)):
            out = np.empty((R, K))
            resample_values(orders, ends, labels, positives, negatives, column, k_cut, np.uint64(n),
                            np.uint64(first + 7), first, out)
            results[f"resample_{n}_{column}_{k_cut}"] = out
        want, cuts = kernels.metric_choice(range(6), [4, n])
        out = np.empty((R, K, 8))
        resample_metrics(kernels.pass_codes(orders, ends, labels), positives.size, negatives.size, want, cuts,
                         np.uint64(n), np.uint64(first + 7), first, out)
        results[f"resample_{n}_every_metric"] = out
    return results


def _compile_ptx(path: str) -> None:
    """PTX of the three kernels for sm_90 (needs libNVVM and NVRTC, not a GPU): counts of float ops."""
    from numba import cuda, types

    from tablegen.compute.kernels.cuda.driver import filter_kernel
    from tablegen.compute.kernels.cuda.minority import minority_kernel
    from tablegen.compute.kernels.cuda.permutation import permutation_kernel
    from tablegen.compute.kernels.cuda.ranking import sequential_kernel
    from tablegen.compute.kernels.cuda.resample import resample_kernel

    i64, u64, f64 = types.int64, types.uint64, types.float64
    ints, floats = types.Array(i64, 1, "C"), types.Array(f64, 1, "C")
    scores, bitmap = types.Array(f64, 2, "A"), types.Array(u64, 2, "C")
    flag = types.boolean  # with_mcc
    kernels = {"sequential": (sequential_kernel, (i64, i64, u64, u64, i64, ints, floats, floats, flag, scores)),
               "minority": (minority_kernel,
                            (i64, i64, u64, u64, i64, ints, floats, floats, floats, flag, bitmap, scores)),
               "filter": (filter_kernel, (scores, ints, floats, floats, types.Array(f64, 2, "C"), ints, ints)),
               "permutation": (permutation_kernel,
                               (types.Array(i64, 2, "C"), types.Array(types.uint8, 2, "C"), types.Array(i64, 2, "C"),
                                i64, ints, ints, floats, types.Array(i64, 2, "C"), ints, types.Array(f64, 2, "C"),
                                types.Array(i64, 2, "C"), u64, u64, i64, types.Array(types.uint8, 2, "C"),
                                types.Array(f64, 3, "C"), types.Array(f64, 2, "A"), types.Array(i64, 2, "C"),
                                types.Array(i64, 2, "C"))),
               "resample": (resample_kernel,
                            (types.Array(types.uint32, 2, "C"), i64, i64, types.Array(types.uint8, 1, "C"), ints, u64,
                             u64, i64, types.Array(types.int32, 2, "C"), types.Array(f64, 3, "A")))}
    counts = {}
    for name, (kernel, signature) in kernels.items():
        ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=(9, 0))
        counts[name] = np.array([ptx.count(op) for op in ("fma.rn.f64", "mul.rn.f64", "add.rn.f64", "div.rn.f64")])
    np.savez(path, **counts)


def _run_child(mode, tmp_path_factory):
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: the CUDA kernels are NOT tested (pip install -e '.[test]')")
    out = tmp_path_factory.mktemp("cuda_sim") / f"{mode}.npz"
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run([sys.executable, str(HERE), mode, str(out)], env=env, capture_output=True, text=True,
                          cwd=HERE.parents[2])
    assert done.returncode == 0, done.stderr[-4000:]
    with np.load(out) as data:
        return dict(data)


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    """Every ranking's scores from the CUDA kernels in the simulator (one child process)."""
    return _run_child("fast", tmp_path_factory)


def _cpu_scores(P, N, first, count, with_mcc=True):
    from tablegen.compute.kernels.minority import simulate_minority_block, uses_minority_sampling
    from tablegen.compute.kernels.ranking import BASE_COLUMNS, simulate_block
    from tablegen.compute.mc import cell_key

    ks, (key0, key1) = _ks(P, N), cell_key(SEED, P, N)
    out = np.empty((count, len(BASE_COLUMNS) + ks.size))
    kernel = simulate_minority_block if uses_minority_sampling(P, N) else simulate_block
    kernel(P, N, key0, key1, first, ks, out, np.empty((0, 0), np.uint8), with_mcc)
    return out


# --- the tests -----------------------------------------------------------------------------------

def test_label_permutations_score_like_the_cpu_kernel(sim):
    """The max-T kernel's twin: every replicate's maximum and every hit count, bit for bit, every metric."""
    cpu = _permutation_counts("cpu")
    assert len(cpu) == 3 * 7 * len(PERMUTATION_CASES) + 26
    assert cpu["look_0_early"] and not cpu["look_1_early"] and cpu["look_0_maxima"].size == 10
    assert 10 < cpu["look_1_maxima"].size < 200
    for name, values in cpu.items():
        assert np.array_equal(sim[name], values), name


def test_an_early_look_splits_a_pass_without_changing_what_goes_on():
    """The plan that goes past the look has the maxima and counts of a run without one of as many arrangements
    (replicates 10 on drawn after the look, for it alone, block by block); the one that stopped has those of a run
    of 10; each count still going at the look stopped at its H-th reaching arrangement."""
    from tablegen.compare.selection.engine import MetricPlan, models_sorted, null_counts_all
    from tablegen.compute.kernels.ranking import mcc_weights

    looked = _permutation_counts_with_a_look("cpu")
    n, P, K = 14, 5, 3
    sorted_models = models_sorted(np.round(np.random.default_rng(n).normal(size=(K, n)), 1))
    weights, key = mcc_weights(P, n - P, n + 1), (np.uint64(n), np.uint64(3))
    plan = MetricPlan(1, 0, np.arange(K), np.full(K, 0.78), np.arange(K))
    drawn = looked["look_1_maxima"].size

    def fixed(R):
        return null_counts_all(sorted_models, P, [plan], weights, exact=False, R=R, key=key)[0]

    whole = fixed(drawn)
    first = null_counts_all(sorted_models, P, [MetricPlan(0, 0, np.arange(K), np.full(K, 1.5), np.arange(K))],
                            weights, exact=False, R=10, key=key)[0]
    assert np.array_equal(looked["look_1_maxima"], whole.maxima) and np.array_equal(looked["look_1_raw"],
                                                                                    whole.raw_hits)
    assert np.array_equal(looked["look_0_maxima"], first.maxima) and np.array_equal(looked["look_0_step"],
                                                                                    first.step_hits)
    going = [(j, L) for j, (x, L) in enumerate(zip(looked["look_1_r_at_look"], looked["look_1_r_drawn"]))
             if 0 < x < 3]
    assert going, "no raw count between e and H: the case does not test the sequential part"
    for j, L in going:
        if L < 200:  # the H-th reaching arrangement is the L-th
            assert fixed(L).raw_hits[j] == 3 and fixed(L - 1).raw_hits[j] == 2, (j, L)


def test_bootstrap_resamples_score_like_the_cpu_kernel(sim):
    cpu = _resample_values("cpu")
    assert len(cpu) == 27 and any(np.isnan(v).any() for v in cpu.values())  # copies straddling k = 4: NaN
    for name, values in cpu.items():
        assert sim[name].tobytes() == values.tobytes(), name


def test_simulator_counts_as_cuda_for_cuda_and_not_for_auto(sim):
    assert list(sim["resolved"]) == ["cuda", "cpu"]


@pytest.mark.parametrize("with_mcc", [True, False])  # False: best MCC skipped, its column NaN on both
@pytest.mark.parametrize("P,N,first,count", SCORE_CASES)
def test_every_ranking_scores_like_the_cpu_kernel(sim, P, N, first, count, with_mcc):
    cpu = _cpu_scores(P, N, first, count, with_mcc)
    assert np.isnan(cpu).any() == (not with_mcc)
    np.testing.assert_array_equal(sim[f"scores_{P}_{N}_{with_mcc}"], cpu, strict=True)
    assert sim[f"scores_{P}_{N}_{with_mcc}"].tobytes() == cpu.tobytes()  # bit for bit (signed zeros too)


def test_forced_replicates_really_reject():
    from test_rng import py_replicate_state, py_xoshiro

    from tablegen.compute.kernels.minority import uses_minority_sampling
    from tablegen.compute.mc import cell_key

    for P, N, replicate in REJECTING:
        key0, key1 = cell_key(SEED, P, N)
        first, _ = py_xoshiro(py_replicate_state(int(key0), int(key1), replicate))
        bound = max(P, N) + 1 if uses_minority_sampling(P, N) else P + N  # Floyd: j + 1 = n - m + 1
        assert ((first >> 32) * bound) % 2**32 < (2**32 - bound) % bound, (P, N, replicate)


@pytest.mark.parametrize("P,N,replicate", REJECTING)
def test_rejected_draws_are_redrawn_like_the_cpu_kernel(sim, P, N, replicate):
    assert sim[f"reject_{P}_{N}"].tobytes() == _cpu_scores(P, N, replicate, 2).tobytes()


def test_device_filter_returns_exactly_the_candidates(sim):
    cpu = _cpu_scores(30, 40, 0, 64)
    floors, thresholds = [-np.inf, 0.6, 0.0], [0.55, np.inf, 2.0]
    for c, column in enumerate([0, 2, 5]):
        values = cpu[:, column]
        np.testing.assert_array_equal(np.sort(sim[f"kept_{c}"]), np.sort(values[values > floors[c]]))
    assert list(sim["counts"]) == [int(np.count_nonzero(cpu[:, c] >= t)) for c, t in zip([0, 2, 5], thresholds)]


@pytest.mark.slow
@pytest.mark.parametrize("P,N,R,block", CELL_CASES)
def test_finalised_cell_is_the_cpu_cell_bit_for_bit(tmp_path_factory, P, N, R, block):
    from tablegen.lookup.simulate import simulate_cell

    cells = _cells(tmp_path_factory)
    cpu = simulate_cell(P, N, R, SEED, device="cpu", **CELL_OPTIONS)
    for name in cpu.data_vars:
        assert cells[f"cell_{P}_{N}_{name}"].tobytes() == cpu[name].values.tobytes(), name
    assert str(cells[f"cell_{P}_{N}_device"]) == "cuda" and cpu.attrs["device"] == "cpu"


_CELLS = {}


@pytest.mark.slow
def test_store_computed_on_the_gpu_is_the_cpu_store_bit_for_bit(tmp_path_factory):
    from jobtools import assert_store_values_identical, root_attributes

    from tablegen.batch.job import run

    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: the CUDA job path is NOT tested")
    out = tmp_path_factory.mktemp("cuda_store") / "store.npz"
    done = subprocess.run([sys.executable, str(HERE), "store", str(out)], capture_output=True, text=True,
                          env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}, cwd=HERE.parents[2])
    assert done.returncode == 0, done.stderr[-4000:]
    cpu = out.parent / "cpu.zarr"
    run(_job(cpu, "cpu"), executor="serial")
    assert_store_values_identical(out.with_suffix(".zarr"), cpu)
    gpu_attrs, cpu_attrs = root_attributes(out.with_suffix(".zarr")), root_attributes(cpu)
    assert gpu_attrs["config"].pop("device") == "cuda" and cpu_attrs["config"].pop("device") == "cpu"
    assert gpu_attrs == cpu_attrs  # same config hash, seed, stream; only the device differs


def _cells(tmp_path_factory):
    if not _CELLS:
        _CELLS.update(_run_child("cells", tmp_path_factory))
    return _CELLS


# --- no GPU: CPU runs import no CUDA code, device="cuda" is an input error -----------------------

def _python(code, **env):
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True,
                          cwd=HERE.parents[2])
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


def test_cpu_run_imports_no_cuda_code_and_cuda_without_a_gpu_is_an_input_error():
    # One child process without a GPU (CUDA_VISIBLE_DEVICES hides any): a CPU cell first, then the
    # modules it imported, then the errors for device="cuda" and for a device that does not exist.
    out = _python("import sys\n"
                  "from tablegen.lookup.simulate import simulate_cell\n"
                  "from tablegen.errors import TablegenInputError\n"
                  "simulate_cell(4, 6, 2000, 1, Cs=[10], device='cpu')\n"
                  "print(sorted(m for m in sys.modules if m.startswith(('numba.cuda', 'numba_cuda'))))\n"
                  "for device in ('cuda', 'gpu'):\n"
                  "    try:\n"
                  "        simulate_cell(4, 6, 2000, 1, Cs=[10], device=device)\n"
                  "    except TablegenInputError as error:\n"
                  "        print(error)\n", CUDA_VISIBLE_DEVICES="", NUMBA_ENABLE_CUDASIM="0")
    modules, cuda_error, unknown_error = out.strip().splitlines()
    assert modules == "[]"
    assert "device='cuda'" in cuda_error and ("numba-cuda" in cuda_error or "no CUDA GPU" in cuda_error)
    assert unknown_error.startswith("device must be one of") and "'gpu'" in unknown_error


def test_device_is_provenance_not_part_of_the_config_hash(tmp_path):
    from dataclasses import replace

    from jobtools import small_config

    from tablegen.batch.job import check_resumable, create_job_store
    from tablegen.errors import TablegenInputError
    from tablegen.store.zarr_store import open_store

    config = small_config(tmp_path / "s.zarr", device="cuda")
    assert config.device == "cuda" and config.result_hash == replace(config, device="cpu").result_hash
    create_job_store(config)
    assert json.loads(open_store(config.store_url).attrs["config"])["device"] == "cuda"
    check_resumable(replace(config, device="cpu"))  # a CPU run may resume a GPU run's store
    with pytest.raises(TablegenInputError, match="config field device"):
        small_config(tmp_path / "t.zarr", device="tpu")


@pytest.mark.slow
def test_fallback_gpu_cluster_pins_one_gpu_per_worker():
    from distributed import Client

    from tablegen.batch.gpu_cluster import gpu_cluster

    with gpu_cluster({}, gpus=["5", "7"]) as cluster, Client(cluster) as client:
        seen = client.run(lambda: os.environ["CUDA_VISIBLE_DEVICES"])
    assert sorted(seen.values()) == ["5", "7"]


@pytest.mark.slow
def test_benchmark_runs_its_checks_in_the_simulator():
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: benchmarks/bench_cuda.py is NOT exercised")
    script = HERE.parents[2] / "benchmarks" / "bench_cuda.py"
    done = subprocess.run([sys.executable, str(script), "--simulator"], capture_output=True, text=True,
                          cwd=HERE.parents[2])
    assert done.returncode == 0, done.stderr[-4000:]
    assert "bit-identical: yes" in done.stdout and "NOT" not in done.stdout


@pytest.mark.slow
def test_kernels_compile_for_a_gpu_without_fused_multiply_adds(tmp_path):
    """The simulator runs Python and types nothing: compile the real kernels to PTX (sm_90) too.

    NVVM contracts a * b + c into fma.rn.f64 unless told not to (it does for a plain loop), which
    would change average precision's last bits; the kernels must show explicit mul.rn / add.rn and
    IEEE div.rn only.  Needs libNVVM and NVRTC (e.g. pip install nvidia-cuda-nvcc-cu12
    nvidia-cuda-nvrtc-cu12, or a CUDA toolkit), not a GPU.
    """
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed: the kernels' PTX is NOT checked")
    out = tmp_path / "ptx.npz"
    done = subprocess.run([sys.executable, str(HERE), "ptx", str(out)], capture_output=True, text=True,
                          env={**os.environ, "NUMBA_ENABLE_CUDASIM": "0"}, cwd=HERE.parents[2])
    if done.returncode != 0 and ("NotFound" in done.stderr or "not found" in done.stderr.lower()):
        reason = done.stderr.strip().splitlines()[-1][:200]
        pytest.skip(f"no libNVVM/NVRTC here: the kernels' PTX is NOT checked ({reason})")
    assert done.returncode == 0, done.stderr[-4000:]
    with np.load(out) as counts:
        found = {k: [int(c) for c in counts[k]] for k in counts.files}
    # No kernel fuses; each shows at least its explicit mul.rn (average precision's: 1 sequential, 2 minority,
    # 1 permutation, 1 resample; best MCC's G w_k the same, AUC's 0.5 B in the resample kernel) and IEEE divisions.
    # numba-cuda 0.30 with NVVM 12.9 also emits
    # a plain mul.rn for a few products of integers' floats (3 sequential, 6 minority in all), never an fma.
    explicit_mul = {"sequential": 2, "minority": 4, "permutation": 2, "filter": 0, "resample": 2}
    for kernel, (fma, mul, add, div) in found.items():
        assert fma == 0 and mul >= explicit_mul[kernel], found
    assert found["sequential"][3] > 0 and found["minority"][3] > 0 and found["permutation"][3] > 0, found


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
