"""numba-cuda twins of the Monte Carlo kernels: same streams, same scores, bit for bit.

Importing this package imports no CUDA code; :mod:`tablegen.compute.kernels.cuda.device` decides, without
touching a GPU unless asked, which device a run uses.  The kernels themselves live in
:mod:`~tablegen.compute.kernels.cuda.ranking` (sequential sampling, the twin of the lane and scalar kernels)
and :mod:`~tablegen.compute.kernels.cuda.minority` (Floyd sampling of the minority class); the host side
(launches, device-side tail filtering) in :mod:`~tablegen.compute.kernels.cuda.driver`.  Those modules import
``numba.cuda`` when they are first imported, so only code that has chosen ``device="cuda"`` imports
them.
"""
