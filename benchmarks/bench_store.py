"""A store at scale: objects written, bytes, the time of a run's writes and of ``tablegen verify --integrity``,
sharded (schema 4) against unsharded (schema 3), and what fsync costs per task.

    .venv/bin/python benchmarks/bench_store.py                 # P, N = 1..316 (99,856 cells): about 16 minutes
    .venv/bin/python benchmarks/bench_store.py --size 40       # a quick look (1,600 cells)

One job (two metrics, C = 10, alpha = 0.05, R = 1,000, no exact values; inner chunks of 1 x 10 cells, which is
what a lookup reads) runs serially twice into fresh local stores: unsharded (one task and one object per chunk
and array) and with shards of 10 x 32 chunks (one task and one object per shard and array).  The run's writes
(:func:`tablegen.store.zarr_store.write_chunk`: data, manifest entry, done flags, with their fsyncs) are timed
inside the run, wall and CPU, and the fsyncs on their own; ``tablegen verify --integrity`` then runs on each
store in a fresh process (wall, and the CPU time of that process), and its integrity check alone
(:func:`tablegen.store.integrity.check_integrity`) in this one.  The two stores' arrays are compared value
for value.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from machine import cpu_model, load_average, recording, vector_width  # noqa: E402

import tablegen.batch.tasks as tasks  # noqa: E402
from tablegen.batch.config import config_from_mapping  # noqa: E402
from tablegen.batch.job import run  # noqa: E402
from tablegen.batch.plan import make_plan  # noqa: E402
from tablegen.store import shards  # noqa: E402
from tablegen.store.integrity import check_integrity  # noqa: E402
from tablegen.store.schema import VARIABLES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class Clock:
    """Accumulated wall and CPU seconds of the calls wrapped by :meth:`wrap`."""

    def __init__(self):
        self.wall = self.cpu = 0.0
        self.calls = 0

    def wrap(self, function):
        def timed(*args, **kwargs):
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.wall += time.perf_counter() - wall
                self.cpu += time.process_time() - cpu
                self.calls += 1
        return timed


def _config(store: Path, size: int, shard: dict | None):
    data = {"name": "bench-store", "grid": {"P": {"start": 1, "stop": size}, "N": {"start": 1, "stop": size}},
            "replicates": 1000, "seed": 2005, "metrics": ["auc", "best_accuracy"], "Cs": [10], "alphas": [0.05],
            "exact": False, "chunks": {"P": 1, "N": 10}, "store": {"url": str(store)}}
    return config_from_mapping(data | ({"shard": shard} if shard else {}))


def _objects(store: Path) -> tuple[int, int, int]:
    """(files in all, chunk or shard files of the (P, N)-chunked arrays, bytes in all)."""
    files = [p for p in store.rglob("*") if p.is_file()]
    chunked = [p for p in files if p.relative_to(store).parts[0] in VARIABLES and "c" in p.relative_to(store).parts]
    return len(files), len(chunked), sum(p.stat().st_size for p in files)


def _verify(store: Path) -> tuple[float, float, int]:
    """Wall and CPU seconds of ``tablegen verify --integrity`` in a fresh process, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tablegen", "verify", str(store), "--integrity"],
                          capture_output=True, cwd=ROOT, text=True)
    code = done.returncode
    if code != 0:
        print(done.stdout[-2000:], done.stderr[-2000:])
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), code


def _one(folder: Path, size: int, shard: dict | None) -> dict:
    store = folder / ("sharded.zarr" if shard else "unsharded.zarr")
    config = _config(store, size, shard)
    writes, syncs = Clock(), Clock()
    real_write, real_sync = tasks.write_chunk, shards.Durable.sync
    tasks.write_chunk, shards.Durable.sync = writes.wrap(real_write), syncs.wrap(real_sync)
    try:
        start, cpu = time.perf_counter(), time.process_time()
        run(config, executor="serial")
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        tasks.write_chunk, shards.Durable.sync = real_write, real_sync
    files, chunked, size_bytes = _objects(store)
    verify_wall, verify_cpu, code = _verify(store)
    check_start, check_cpu_start = time.perf_counter(), time.process_time()
    checked = check_integrity(str(store))
    check_wall, check_cpu = time.perf_counter() - check_start, time.process_time() - check_cpu_start
    assert checked.ok
    return {"store": store, "tasks": len(make_plan(config).chunks), "files": files, "chunked": chunked,
            "bytes": size_bytes, "run_wall": wall, "run_cpu": cpu, "write_wall": writes.wall, "write_cpu": writes.cpu,
            "sync_wall": syncs.wall, "syncs": syncs.calls, "verify_wall": verify_wall, "verify_cpu": verify_cpu,
            "verify_code": code,
            "check_wall": check_wall, "check_cpu": check_cpu, "inner": checked.chunks_checked}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=316, help="P and N run over 1..SIZE (default 316)")
    args = parser.parse_args()
    print(f"machine: {cpu_model()} ({vector_width()}), {os.cpu_count()} cores, load average {load_average()}")
    print(f"grid P, N = 1..{args.size} ({args.size ** 2:,} cells), R = 1,000, 2 metrics, C = 10, alpha = 0.05, "
          "inner chunks 1 x 10 cells; local disk, serial run")
    folder = Path(tempfile.mkdtemp(prefix="bench-store-"))
    try:
        rows = [("unsharded (schema 3)", _one(folder, args.size, None)),
                ("shards of 10 x 32 chunks (schema 4)", _one(folder, args.size, {"P": 10, "N": 32}))]
        from jobtools import assert_store_values_identical

        assert_store_values_identical(rows[0][1]["store"], rows[1][1]["store"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print()
    print("| layout | tasks | files in all | chunk/shard objects | MB | run wall s | writes wall s | writes CPU s "
          "| fsync s (per task ms) | verify --integrity wall s | verify CPU s | of which the integrity check s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in rows:
        print(f"| {name} | {r['tasks']:,} | {r['files']:,} | {r['chunked']:,} | {r['bytes'] / 1e6:.1f} "
              f"| {r['run_wall']:.1f} | {r['write_wall']:.1f} | {r['write_cpu']:.1f} "
              f"| {r['sync_wall']:.1f} ({1e3 * r['sync_wall'] / r['tasks']:.1f}) | {r['verify_wall']:.1f} "
              f"| {r['verify_cpu']:.1f} | {r['check_wall']:.1f} ({r['check_cpu']:.1f} CPU) |")
    print()
    print(f"- the two stores hold the same values (every array compared bit for bit); verify exit codes "
          f"{rows[0][1]['verify_code']} and {rows[1][1]['verify_code']}")
    print(f"- the integrity check decodes and hashes {rows[0][1]['inner']:,} and {rows[1][1]['inner']:,} chunks "
          "(each variable's chunks, inner chunks of the shards); the rest of verify is its Monte Carlo against "
          "exact report, read through xarray and dask one chunk per task")
    print(f"- fsync: {rows[0][1]['syncs']:,} and {rows[1][1]['syncs']:,} calls of Durable.sync (data, manifest entry, "
          "done flags: each file, then its folders), timed within the writes")


if __name__ == "__main__":
    with recording("store"):
        main()
