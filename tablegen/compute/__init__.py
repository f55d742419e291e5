"""Pure computation, no I/O (the lowest layer).

- :mod:`~tablegen.compute.metrics`: the metric registry — each metric's definition, range, exact
  routine, kernel column and cost live in its one entry;
- :mod:`~tablegen.compute.stats`, :mod:`~tablegen.compute.accumulator`: order statistics, confidence
  intervals and the bounded top tails a simulation keeps;
- :mod:`~tablegen.compute.mc`, :mod:`~tablegen.compute.cell`: the Monte Carlo engine and the cell
  engine (one (P, N) cell's numbers, as numpy);
- :mod:`~tablegen.compute.kernels`: numba CPU kernels, and ``kernels/cuda`` their numba-cuda twins;
- :mod:`~tablegen.compute.exact`: exact null distributions.

Nothing here imports dask, distributed, zarr or xarray, nor any higher layer (``tests/contracts/test_layers.py``).
"""
