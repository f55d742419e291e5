"""numba kernels: loops that fill preallocated outputs (STYLE 1); numba-cuda twins in ``cuda/``."""
