"""Which device runs the Monte Carlo: ``"cpu"``, ``"cuda"`` or ``"auto"`` (no CUDA import unless needed).

``"auto"`` picks ``"cuda"`` when numba-cuda is installed and a CUDA GPU is visible, else ``"cpu"``; it
looks for the NVIDIA driver on the file system first, so a machine without one never imports
``numba.cuda``.  ``"cuda"`` on a machine without numba-cuda or without a GPU is an input error.
numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``, set before ``numba.cuda`` is first imported)
counts as a device for ``"cuda"`` (that is how the twins are tested without a GPU), never for
``"auto"``.  The device changes where rankings are scored, never what they score: both devices
draw the same streams and return the same tails, bit for bit.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from pathlib import Path

DEVICES = ("cpu", "cuda", "auto")
#: GPU scratch memory one launch of a kernel with a scratch row per replicate may hold (1 GiB): fewer replicates
#: run per launch where the rows are long, never more memory.
SCRATCH_BYTES = 1 << 30
#: Files that exist where an NVIDIA driver is loaded (Linux; WSL exposes its libcuda here).
_DRIVER_MARKERS = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/usr/lib/wsl/lib/libcuda.so")
logger = logging.getLogger(__name__)


def numba_cuda_installed() -> bool:
    """Whether the numba-cuda package (not numba's deprecated built-in target) is installed."""
    return importlib.util.find_spec("numba_cuda") is not None


def simulator_requested() -> bool:
    """Whether ``NUMBA_ENABLE_CUDASIM`` asks numba-cuda for its simulator."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def _driver_present() -> bool:
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    return any(Path(marker).exists() for marker in _DRIVER_MARKERS)


def gpu_count() -> int:
    """Number of CUDA GPUs numba-cuda sees (0 without numba-cuda, a driver or a GPU; 1 under the simulator).

    Imports ``numba.cuda`` only when numba-cuda is installed and a driver (or the simulator) is there.

    Examples
    --------
    >>> gpu_count() >= 0
    True
    """
    if not numba_cuda_installed() or not (_driver_present() or simulator_requested()):
        return 0
    try:
        from numba import cuda

        return len(cuda.gpus) if cuda.is_available() else 0
    except Exception as error:  # noqa: BLE001 - missing bindings or a broken driver: no usable GPU
        logger.info("CUDA driver present but unusable: %s", error)
        return 0


def resolve_device(device: str) -> str:
    """``"cpu"`` or ``"cuda"`` for a requested ``device``; raises TablegenInputError if it cannot be had.

    Parameters
    ----------
    device : {"cpu", "cuda", "auto"}
        ``"auto"`` is ``"cuda"`` when numba-cuda is installed and a real GPU is visible, else ``"cpu"``.

    Examples
    --------
    >>> resolve_device("cpu")
    'cpu'
    """
    from tablegen.errors import Argument, TablegenInputError

    if not isinstance(device, str) or device not in DEVICES:
        raise TablegenInputError.naming(Argument("device"), f" must be one of {', '.join(map(repr, DEVICES))}, "
                                        f"got {device!r}")
    if device == "cpu":
        return "cpu"
    if device == "auto":
        chosen = "cuda" if not simulator_requested() and gpu_count() > 0 else "cpu"
        logger.info("device='auto' chose %r", chosen)
        return chosen
    if not numba_cuda_installed():
        raise TablegenInputError.naming(Argument("device", "cuda"), " needs numba-cuda, which is not installed "
                                        "(pip install 'tablegen[cuda]'), or use ", Argument("device", "cpu"))
    if gpu_count() == 0:
        raise TablegenInputError.naming(Argument("device", "cuda"), " but no CUDA GPU is available on this machine "
                                        "(no NVIDIA driver, or CUDA_VISIBLE_DEVICES hides every GPU); use ",
                                        Argument("device", "cpu"), " or ", Argument("device", "auto"))
    return "cuda"


def twin(kernel, device: str):
    """The kernel to call on ``device`` (``"cpu"`` or ``"cuda"``, as :func:`resolve_device` returns it): ``kernel``
    itself on the CPU; on the GPU its CUDA twin, the function ``<name>_cuda`` of the module of the same name under
    :mod:`tablegen.compute.kernels.cuda` (imported only then), which takes the same arguments and fills the same
    outputs with the same values, bit for bit.

    Examples
    --------
    >>> from tablegen.compute.kernels.resample import resample_metrics
    >>> twin(resample_metrics, "cpu") is resample_metrics
    True
    """
    import importlib

    if device == "cpu":
        return kernel
    if device != "cuda":
        raise ValueError(f"twin() takes a resolved device, 'cpu' or 'cuda', got {device!r}")
    package = "tablegen.compute.kernels."
    if not kernel.__module__.startswith(package):
        raise ValueError(f"{kernel.__module__}.{kernel.__name__} is not a tablegen kernel")
    module = importlib.import_module(package + "cuda." + kernel.__module__[len(package):])
    return getattr(module, kernel.__name__ + "_cuda")


def replicates_per_launch(threads: int, total: int, row_bytes: int) -> int:
    """How many replicates one launch runs: at most ``threads`` and ``total``, and at most :data:`SCRATCH_BYTES` of
    scratch at ``row_bytes`` a replicate (at least one).

    Examples
    --------
    >>> replicates_per_launch(4096, 10_000, 4 * 10**6)   # 10^6 items of 4-byte scratch: 268 rows, not 4,096
    268
    >>> replicates_per_launch(4096, 100, 64)
    100
    """
    return max(1, min(threads, total, SCRATCH_BYTES // max(1, row_bytes)))
