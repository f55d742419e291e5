"""The batch job: config, plan, cost model, executors, run, launchers.

Orchestration only: it plans the (P, N) grid in chunks, sends each chunk to the cell engine
(:mod:`tablegen.compute.cell`) on a serial, dask CPU or dask GPU executor, and writes what comes back
through :mod:`tablegen.store`.  It computes no statistics itself.  :func:`tablegen.run` is the entry
point; :mod:`tablegen.batch.job` holds it.
"""
