"""The command line (``tablegen``): argument parsing, progress display and error presentation.

The top layer: it validates what the user typed, calls the library and prints; see
:func:`tablegen.cli.main.main`.
"""


def main(argv=None) -> int:
    """Run the ``tablegen`` command line; see :func:`tablegen.cli.main.main`."""
    single_threaded_blas()
    from tablegen.cli.main import main as _main

    return _main(argv)


def single_threaded_blas() -> None:
    """One OpenBLAS thread for the command line unless ``OPENBLAS_NUM_THREADS`` says otherwise, set before numpy
    is imported.  No command does linear algebra large enough to gain from threads, and starting OpenBLAS's
    thread pool cost a cold lookup about 0.1 s of CPU (``benchmarks/bench_startup.py``); the batch job's
    workers get one thread from dask's nanny anyway."""
    import os

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
