"""Lookups read a store with zarr alone and check what they read against the manifest: only the chunks of the
cells asked, each digest kept for the table's life; a root that says "schema version 1" turns nothing off."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

from tablegen.errors import StoreIntegrityError
from tablegen.lookup.table import open_table
from tablegen.store.schema import bundled_table_path


def test_a_lookup_checks_the_chunks_it_reads_against_the_manifest_and_keeps_their_digests():
    table = open_table(reuse=False)
    table.critical_value("average_precision", 100, 300, C=10)
    chunks = {key for key in table.digests if "/c/" in key}
    row = list(table.coordinate("P")).index(100)  # the bundled table's chunks are one P row each
    assert chunks == {f"{name}/c/{'0/0/0/' if name not in ('done', 'replicates') else ''}{row}/0"
                      for name in ("critical_value", "ci_low", "ci_high", "exact_critical_value", "done", "replicates")}
    recorded = json.loads((Path(bundled_table_path()) / "manifest" / "zarr.json").read_text())["attributes"]["chunks"]
    group = zarr.open_group(bundled_table_path(), mode="r")
    for key in chunks:  # an independent digest: the chunk decoded by zarr, hashed here
        name = key.split("/")[0]
        values = np.ascontiguousarray(group[name].blocks[(0,) * (group[name].ndim - 2) + (row, 0)])
        assert table.digests[key] == recorded[key] == hashlib.sha256(values.tobytes()).hexdigest()
    table.p_value("auc", 100, 300, C=10, score=0.65)
    assert f"tail_quantile/c/0/0/{row}/0" in table.digests and len(table.digests) == len(chunks) + 1 + 6


def test_a_root_saying_schema_version_1_does_not_turn_the_checks_off(tmp_path):
    store = tmp_path / "t.zarr"
    shutil.copytree(bundled_table_path(), store)
    root = json.loads((store / "zarr.json").read_text())
    root["attributes"]["schema_version"] = 1
    (store / "zarr.json").write_text(json.dumps(root))
    with pytest.raises(StoreIntegrityError, match="schema_version = 1, but the manifest records schema version 5"):
        open_table(str(store), allow_unverified=True)


def test_a_cold_table_lookup_imports_neither_xarray_dask_nor_pandas():
    code = ("import sys, tablegen; a = tablegen.critical_value('average_precision', 100, 300, C=10, method='table'); "
            "print(a.method, *[m for m in ('xarray', 'dask', 'pandas') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["table"]
