"""pytest: doctest collection skips the modules that import ``numba.cuda`` at import time.

Importing ``numba.cuda`` without the simulator fails where no CUDA driver is installed, and picks
the simulator or the hardware once per process; these modules' kernels are tested in a child
process under the simulator by ``tests/test_cuda_sim.py`` instead.
"""

collect_ignore = ["rng.py", "ranking.py", "minority.py", "driver.py"]
