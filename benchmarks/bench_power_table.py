"""What the minimum detectable AUC adds to a table's run: a job (default ``configs/laptop.yaml``) run serially
without and with a ``power:`` section, alternately, each into a fresh store, in this process (the serial executor:
every computation is counted in this process's CPU time, which a shared machine inflates far less than wall time).
Prints, per run, CPU and wall seconds and the load average, then the ratio of median CPU times; and the CPU
seconds of one cell's search (every default metric, C = 10, 100, 1000, alpha = 0.01, power 0.5, 0.8, 0.9) at a
few cells, with and without the bound.

Usage::

    NUMBA_NUM_THREADS=1 python benchmarks/bench_power_table.py --max-seconds 0.01 --repeat 1
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time

import yaml
from machine import cpu_model, vector_width

from tablegen.batch.config import config_from_mapping
from tablegen.batch.job import resolve_config, run

LEVELS = [0.5, 0.8, 0.9]
CELLS = ((20, 20), (100, 100), (300, 300), (1000, 1000))


def one_run(data: dict, folder: str, power: dict | None) -> tuple[float, float]:
    """(CPU, wall) seconds of one serial run of ``data`` (with ``power`` as its power: section)."""
    mapping = dict(data, store={"url": os.path.join(folder, "t.zarr")})
    if power is not None:
        mapping["power"] = power
    shutil.rmtree(mapping["store"]["url"], ignore_errors=True)
    config = resolve_config(config_from_mapping(mapping, "bench"))
    cpu, wall = time.process_time(), time.perf_counter()
    run(config, executor="serial")
    return time.process_time() - cpu, time.perf_counter() - wall


def per_cell(max_seconds: float | None) -> None:
    from tablegen.compute.exact.detectable import cell_detectable_aucs
    from tablegen.compute.metrics import DEFAULT_METRICS, get_metric

    specs = [get_metric(m) for m in DEFAULT_METRICS]
    cell_detectable_aucs(specs[1], 20, 20, [10], [0.01], [0.5])  # compile
    for P, N in CELLS:
        cpu = time.process_time()
        for spec in specs:
            cell_detectable_aucs(spec, P, N, [10, 100, 1000], [0.01], LEVELS, max_seconds)
        print(f"cell ({P}, {N}), max_seconds {max_seconds}: {time.process_time() - cpu:.3f} s CPU", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/laptop.yaml")
    parser.add_argument("--max-seconds", type=float, default=0.01)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"{cpu_model()} ({vector_width()}), {os.cpu_count()} cores; load {os.getloadavg()}", flush=True)
    data = yaml.safe_load(open(args.config, encoding="utf-8"))
    power = {"levels": LEVELS, "max_seconds": args.max_seconds}
    off, on = [], []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.repeat):
            for label, times, section in (("without power", off, None), ("with power", on, power)):
                cpu, wall = one_run(data, folder, section)
                times.append(cpu)
                print(f"{label}: {cpu:.1f} s CPU, {wall:.1f} s wall, load {os.getloadavg()}", flush=True)
    print(f"ratio of median CPU seconds: {statistics.median(on) / statistics.median(off):.3f}")
    per_cell(args.max_seconds)


if __name__ == "__main__":
    main()
