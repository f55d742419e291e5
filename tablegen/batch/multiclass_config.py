"""The config of a multi-class table job (``kind: multiclass``): a grid of balanced K-class designs.

Schema (every field is checked before anything is written; errors name the field)::

    kind: multiclass                  # required: a binary job has no kind (or kind: binary)
    name: multiclass-smoke            # free text
    grid:
      K: {start: 2, stop: 20}         # classes: a list of integers >= 2, or an inclusive range
      n_per_class: [5, 10, 20]        # items of each class: a list of integers >= 1, or a range
    metrics: [accuracy, kappa, balanced_accuracy, macro_f1]   # optional; default all four
    Cs: [1, 10, 100]
    alphas: [0.05, 0.01]
    chunks: {K: 4, n_per_class: 2}    # cells per Zarr chunk (what one task computes and writes)
    store: {url: multiclass.zarr}     # local path or fsspec URL (storage_options as for a binary job)
    cluster: {workers: 2}             # as for a binary job (tablegen.batch.config)

Every value is exact (:mod:`tablegen.compute.exact.balanced_multiclass`): the design is balanced and the random
classifiers share its balanced predicted counts, where balanced accuracy and macro-F1 equal accuracy and kappa is
affine in it, so the job simulates nothing and takes no ``replicates`` or ``seed`` (refused, saying why).  The
exact routine runs on CPUs (``device: cpu``, the default).

:attr:`MulticlassConfig.result_hash` covers what determines the stored values and their layout (kind, grid,
metrics, Cs, alphas, chunks), not where the job runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from tablegen.compute.exact.balanced_multiclass import BALANCED_METRICS, MAX_CLASSES, check_balanced_metric
from tablegen.compute.validation import check_alpha, check_competitors, check_integer, check_unique_list
from tablegen.errors import TablegenInputError

__all__ = ["KIND", "MulticlassConfig", "multiclass_config_from_mapping"]

#: The ``kind`` of a multi-class table job.
KIND = "multiclass"
_FIELDS = {"kind", "name", "grid", "metrics", "Cs", "alphas", "chunks", "store", "cluster", "device"}
_REQUIRED = {"kind", "grid", "Cs", "alphas", "chunks", "store"}
#: Fields of a binary job that mean nothing here, and why.
_NOT_HERE = {"replicates": "every value of a balanced multi-class table is exact (balanced accuracy and macro-F1 "
                           "equal accuracy on a balanced design): nothing is simulated",
             "seed": "nothing is simulated: every value is exact",
             "exact": "every value is exact",
             "shard": "a task writes one chunk (one object per array)",
             "power": "the minimum detectable AUC is a binary table's"}


@dataclass(frozen=True)
class MulticlassConfig:
    """A validated ``kind: multiclass`` job (see the module docstring for the YAML).

    Examples
    --------
    >>> from tablegen.batch.config import load_config
    >>> config = load_config("configs/multiclass_smoke.yaml")  # from the repository root
    >>> config.K, config.n_per_class, config.cells
    ((2, 3, 5), (5, 10, 20), 9)
    >>> from dataclasses import replace
    >>> replace(config, store_url="elsewhere.zarr").result_hash == config.result_hash
    True
    """

    name: str
    K: tuple[int, ...]
    n_per_class: tuple[int, ...]
    metrics: tuple[str, ...]
    Cs: tuple[int, ...]
    alphas: tuple[float, ...]
    chunks: tuple[int, int]
    store_url: str
    storage_options: dict = field(default_factory=dict, compare=False, hash=False)
    cluster: dict = field(default_factory=dict, compare=False, hash=False)
    device: str = field(default="cpu", compare=False, hash=False)

    kind = KIND

    @property
    def cells(self) -> int:
        """Number of (K, n_per_class) cells in the grid."""
        return len(self.K) * len(self.n_per_class)

    def result_fields(self) -> dict[str, Any]:
        """The fields that determine the stored values and their layout."""
        data = asdict(self)
        return {"kind": KIND} | {key: data[key] for key in ("K", "n_per_class", "metrics", "Cs", "alphas", "chunks")}

    @property
    def result_hash(self) -> str:
        """SHA-256 of the canonical JSON of :meth:`result_fields`."""
        text = json.dumps(self.result_fields(), sort_keys=True, separators=(",", ":"), allow_nan=False)
        return hashlib.sha256(text.encode()).hexdigest()


def _fail(name: str, message: str):
    raise TablegenInputError(f"config field {name}: {message}")


def _checked(name: str, check, *args):
    try:
        return check(*args)
    except TablegenInputError as error:
        _fail(name, str(error))
    except (TypeError, ValueError, AttributeError, OverflowError):
        _fail(name, f"is not valid here, got {args[-1]!r}")


def _chunks(value) -> tuple[int, int]:
    if not isinstance(value, dict) or set(value) != {"K", "n_per_class"}:
        _fail("chunks", f"must be a mapping with keys K and n_per_class (cells per Zarr chunk along each axis), got "
                        f"{value!r}")
    return tuple(_checked(f"chunks.{axis}", check_integer, axis, value[axis], 1) for axis in ("K", "n_per_class"))


def multiclass_config_from_mapping(data: dict, source: str, axis: Callable[[str, Any], tuple[int, ...]],
                                   where: Callable[[dict], tuple[str, dict, dict, str]]) -> MulticlassConfig:
    """Validate a parsed ``kind: multiclass`` YAML mapping: what :func:`tablegen.batch.config.config_from_mapping`
    (and so ``load_config``) hands on when it reads one, with its checks of a grid axis (``axis``,
    :func:`~tablegen.batch.config.grid_axis`) and of where a job runs (``where``,
    :func:`~tablegen.batch.config.where_it_runs`), the same for every kind of job.

    Examples
    --------
    >>> from tablegen.batch.config import config_from_mapping
    >>> config = config_from_mapping({"kind": "multiclass", "grid": {"K": [3], "n_per_class": [5]},
    ...     "Cs": [1], "alphas": [0.05], "chunks": {"K": 1, "n_per_class": 1}, "store": {"url": "t.zarr"}})
    >>> config.metrics
    ('accuracy', 'kappa', 'balanced_accuracy', 'macro_f1')
    """
    if not isinstance(data, dict):
        raise TablegenInputError(f"{source}: a job config must be a YAML mapping, got {type(data).__name__}")
    if data.get("kind") != KIND:
        _fail("kind", f"must be {KIND!r} here, got {data.get('kind')!r}")
    for name, why in _NOT_HERE.items():
        if name in data:
            _fail(name, f"does not apply to a kind: multiclass job ({why}); leave it out")
    unknown, missing = set(map(str, data)) - _FIELDS, _REQUIRED - set(data)
    if unknown:
        _fail(", ".join(sorted(unknown)), f"unknown field(s); known fields: {', '.join(sorted(_FIELDS))}")
    if missing:
        _fail(", ".join(sorted(missing)), "missing")
    grid = data["grid"]
    if not isinstance(grid, dict) or set(grid) != {"K", "n_per_class"}:
        _fail("grid", f"must be a mapping with keys K and n_per_class, got {grid!r}")
    K = axis("grid.K", grid["K"])
    if K[0] < 2 or K[-1] > MAX_CLASSES:
        _fail("grid.K", f"must hold numbers of classes in [2, {MAX_CLASSES}], got {list(K)}")
    n_per_class = axis("grid.n_per_class", grid["n_per_class"])
    metrics = data.get("metrics", list(BALANCED_METRICS))
    if not isinstance(metrics, list) or not metrics:
        _fail("metrics", f"must be a non-empty list of {', '.join(BALANCED_METRICS)}, got {metrics!r}")
    metrics = tuple(_checked(f"metrics[{i}]", check_balanced_metric, m) for i, m in enumerate(metrics))
    if len(set(metrics)) != len(metrics):
        _fail("metrics", f"has duplicates: {list(metrics)}")
    Cs = _checked("Cs", check_unique_list, "Cs", data["Cs"], lambda n, v: check_competitors(v))
    alphas = _checked("alphas", check_unique_list, "alphas", data["alphas"], check_alpha)
    url, options, cluster, device = where(data)
    if device == "cuda":
        _fail("device", "the exact multi-class routine runs on CPUs (Python integers); use cpu or auto")
    name = data.get("name")
    return MulticlassConfig(name=str(name) if name is not None else source.rsplit("/", 1)[-1].rsplit(".", 1)[0],
                            K=K, n_per_class=n_per_class, metrics=metrics, Cs=Cs, alphas=alphas,
                            chunks=_chunks(data["chunks"]), store_url=url, storage_options=options, cluster=cluster,
                            device=device)
