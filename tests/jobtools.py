"""Helpers shared by the batch-job tests: small configs and byte-level store comparison."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import zarr

from tablegen.batch.config import config_from_mapping

#: Attributes that legitimately differ between two runs of the same job.
RUN_ATTRIBUTES = {"created", "completed", "command", "history"}


def small_config(store, **changes):
    """A job of 12 cells (P 5..20 x N 8..24) at R = 40,000 in chunks of 2 x 2, store at ``store``."""
    data = {
        "name": "test",
        "grid": {"P": [5, 10, 15, 20], "N": [8, 16, 24]},
        "replicates": 40_000,
        "seed": 11,
        "metrics": ["auc", "best_accuracy", "best_f1", "tp_at_3"],
        "Cs": [10, 100],
        "alphas": [0.01, 0.05],
        "chunks": {"P": 2, "N": 2},
        "store": {"url": str(store)},
        "cluster": {"workers": 2},
    }
    data.update(changes)
    return config_from_mapping(data)


def store_files(path) -> dict[str, bytes]:
    """Every file of a local store by relative path, the root metadata (run attributes) left out."""
    root = Path(path)
    return {str(f.relative_to(root)): f.read_bytes() for f in sorted(root.rglob("*"))
            if f.is_file() and str(f.relative_to(root)) != "zarr.json"}


def root_attributes(path) -> dict:
    """The store's root attributes without the per-run ones (and the config without where it ran)."""
    attrs = json.loads((Path(path) / "zarr.json").read_text())["attributes"]
    attrs = {k: v for k, v in attrs.items() if k not in RUN_ATTRIBUTES}
    config = json.loads(attrs["config"])
    attrs["config"] = {k: v for k, v in config.items() if k not in ("store_url", "cluster", "name")}
    return attrs


def assert_stores_bit_identical(a, b) -> None:
    """Same files with the same bytes (same chunking), same attributes but for the per-run ones."""
    files_a, files_b = store_files(a), store_files(b)
    assert sorted(files_a) == sorted(files_b), (f"only in {a}: {sorted(set(files_a) - set(files_b))}; "
                                                f"only in {b}: {sorted(set(files_b) - set(files_a))}")
    differing = [name for name in files_a if files_a[name] != files_b[name]]
    assert not differing, f"files differ: {differing}"
    assert root_attributes(a) == root_attributes(b)


def assert_store_values_identical(a, b) -> None:
    """Same arrays bit for bit (NaN payloads included), whatever the chunking of either store."""
    group_a, group_b = zarr.open_group(str(a), mode="r"), zarr.open_group(str(b), mode="r")
    assert sorted(group_a.array_keys()) == sorted(group_b.array_keys())
    for name in group_a.array_keys():
        values_a, values_b = np.asarray(group_a[name][...]), np.asarray(group_b[name][...])
        assert values_a.dtype == values_b.dtype and values_a.shape == values_b.shape, name
        if values_a.dtype.kind in "fiub":
            assert values_a.tobytes() == values_b.tobytes(), f"variable {name} differs"
        else:
            assert list(values_a) == list(values_b), f"coordinate {name} differs"
