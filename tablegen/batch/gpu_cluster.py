"""A local dask cluster with one single-threaded worker per GPU (for ``device: cuda``).

With dask-cuda installed this is its ``LocalCUDACluster`` (which pins each worker to one GPU and
knows the machine's topology); otherwise a :class:`distributed.SpecCluster` of one worker process
(a nanny) per visible GPU, each started with ``CUDA_VISIBLE_DEVICES`` set to its GPU alone, so that
every worker's numba-cuda sees exactly one device.  Each worker scores whole cells on its GPU
(:func:`tablegen.compute.cell.simulate_cell` with ``device="cuda"``), in launches of
:data:`tablegen.compute.kernels.cuda.driver.DEVICE_BLOCK_SIZE` replicates.
"""

from __future__ import annotations

import importlib.util
import logging
import os

logger = logging.getLogger(__name__)


def visible_gpus() -> list[str]:
    """The GPU ids this process may use: ``CUDA_VISIBLE_DEVICES`` if set, else 0..count-1.

    Examples
    --------
    >>> import os
    >>> os.environ.get("CUDA_VISIBLE_DEVICES") == "" or isinstance(visible_gpus(), list)
    True
    """
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [gpu.strip() for gpu in listed.split(",") if gpu.strip() and gpu.strip() != "-1"]
    from tablegen.compute.kernels.cuda.device import gpu_count

    return [str(i) for i in range(gpu_count())]


def gpu_worker_specs(gpus: list[str], env: dict[str, str]) -> dict[str, dict]:
    """SpecCluster worker specs: one single-threaded nanny per GPU id, seeing only that GPU.

    Examples
    --------
    >>> specs = gpu_worker_specs(["0", "3"], {"NUMBA_NUM_THREADS": "1"})
    >>> specs["gpu-3"]["options"]["env"]["CUDA_VISIBLE_DEVICES"]
    '3'
    """
    from distributed import Nanny

    return {f"gpu-{gpu}": {"cls": Nanny, "options": {"nthreads": 1, "env": {**env, "CUDA_VISIBLE_DEVICES": gpu}}}
            for gpu in gpus}


def gpu_cluster(env: dict[str, str], gpus: list[str] | None = None):
    """A running local cluster with one worker per GPU (use as a context manager).

    Parameters
    ----------
    env : dict
        Environment for the worker processes (:func:`tablegen.batch.executors.worker_environment`).
    gpus : list of str, optional
        GPU ids (default: :func:`visible_gpus`).

    Raises
    ------
    TablegenInputError
        If no GPU is visible.
    """
    from tablegen.errors import TablegenInputError

    gpus = visible_gpus() if gpus is None else gpus
    if not gpus:
        raise TablegenInputError("device='cuda' but no GPU is visible to start dask workers on "
                                 "(CUDA_VISIBLE_DEVICES, driver); use device='cpu'")
    if importlib.util.find_spec("dask_cuda") is not None:
        from dask_cuda import LocalCUDACluster

        logger.info("dask-cuda LocalCUDACluster on GPUs %s", ",".join(gpus))
        return LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(gpus), threads_per_worker=1, env=env,
                                dashboard_address=":0")
    from distributed import Scheduler, SpecCluster

    logger.info("one dask worker process per GPU on GPUs %s (dask-cuda not installed)", ",".join(gpus))
    return SpecCluster(workers=gpu_worker_specs(gpus, env),
                       scheduler={"cls": Scheduler, "options": {"dashboard_address": ":0"}})
