"""A store opens from xarray, the pangeo way, without a warning: ``xr.open_zarr(path, consolidated=False)``,
as :func:`tablegen.open_store`'s docstring says (stores carry no consolidated metadata)."""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr

import tablegen
from tablegen.store.schema import bundled_table_path


def test_open_zarr_without_consolidated_metadata_and_open_store_warn_nothing():
    path = bundled_table_path()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        plain = xr.open_zarr(path, consolidated=False)
        ours = tablegen.open_store(path)
    assert dict(plain.sizes) == dict(ours.sizes) and set(plain.data_vars) == set(ours.data_vars)
    np.testing.assert_array_equal(plain.critical_value.values, ours.critical_value.values)


def test_a_bare_open_zarr_is_the_call_that_warns():  # what the docstring steers users away from
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        xr.open_zarr(bundled_table_path())
    assert any(issubclass(w.category, RuntimeWarning) and "consolidated" in str(w.message) for w in caught)
