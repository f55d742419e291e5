"""Dask overhead of the batch job against running the same cells serially (issue 3 §7, target <= 10%).

    .venv/bin/python benchmarks/bench_dask_overhead.py        # about 3 minutes on 2 cores

The same job (P, N in {20, 30, ..., 100}, R = 1,000,000, default metrics, C = 10/100/1000,
alpha = 0.01/0.05, exact values, chunks of 1 x 9 cells) is run into fresh stores, alternating:

* ``serial``: every task in this process, one after another (one core);
* ``dask, 1 worker``: a LocalCluster of one single-threaded worker process (one core), started and
  warmed (a small job at R = 100,000, as the serial process is warmed) beforehand; the cluster
  start-up is timed separately;
* ``dask, 2 workers``: two single-threaded worker processes (both cores of this machine).

Each configuration runs ``--repeats`` times (default 2); the best wall time is kept.  The overhead
is dask-1-worker / serial - 1; the stores are checked to be bit-identical before timing counts.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import distributed

from tablegen.batch.config import config_from_mapping
from tablegen.batch.executors import worker_environment
from tablegen.batch.job import run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import recording  # noqa: E402

GRID = [20, 30, 40, 50, 60, 70, 80, 90, 100]


def job(store: Path, replicates: int):
    return config_from_mapping({
        "name": "overhead", "grid": {"P": GRID, "N": GRID}, "replicates": replicates, "seed": 7,
        "Cs": [10, 100, 1000], "alphas": [0.01, 0.05], "chunks": {"P": 1, "N": 9}, "store": {"url": str(store)},
    })


def timed_run(config, **kwargs) -> float:
    start = time.perf_counter()
    run(config, **kwargs)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tablegen-overhead-"))
    run(job(root / "warm.zarr", 100_000), executor="serial")  # compile / load the numba cache
    best = {"serial": float("inf"), "dask, 1 worker": float("inf"), "dask, 2 workers": float("inf")}
    startup = float("inf")
    try:
        for repeat in range(args.repeats):
            store = root / f"serial-{repeat}.zarr"
            best["serial"] = min(best["serial"], timed_run(job(store, args.replicates), executor="serial"))
            for workers in (1, 2):
                start = time.perf_counter()
                with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                              dashboard_address=":0", env=worker_environment()) as cluster, \
                        distributed.Client(cluster) as client:
                    client.wait_for_workers(workers)
                    startup = min(startup, time.perf_counter() - start)
                    # warm the workers as the serial process was warmed: imports, numba cache, scipy
                    run(job(root / f"warm-{workers}-{repeat}.zarr", 100_000), executor="dask", client=client)
                    label = f"dask, {workers} worker{'s' if workers > 1 else ''}"
                    dask_store = root / f"dask{workers}-{repeat}.zarr"
                    best[label] = min(best[label], timed_run(job(dask_store, args.replicates),
                                                             executor="dask", client=client))
                same = all(a.read_bytes() == b.read_bytes() for a, b in zip(
                    sorted(p for p in store.rglob("c/*") if p.is_file()),
                    sorted(p for p in dask_store.rglob("c/*") if p.is_file())))
                if not same:
                    raise SystemExit(f"{dask_store} differs from {store}: timing discarded")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    cells = len(GRID) ** 2
    print(f"{cells} cells, R = {args.replicates:,}, best of {args.repeats}:")
    for label, seconds in best.items():
        print(f"  {label:<16} {seconds:7.2f} s  {cells * args.replicates / seconds / 1e6:6.2f} M cell-replicates/s  "
              f"ratio to serial {seconds / best['serial']:.3f}")
    print(f"  LocalCluster start-up (1 or 2 workers): {startup:.2f} s, not included above")
    overhead = 100 * (best['dask, 1 worker'] / best['serial'] - 1)
    print(f"dask overhead (1 worker vs serial, same core count): {overhead:+.1f}%")


if __name__ == "__main__":
    with recording("dask_overhead"):
        main()
