"""Job configuration: a YAML file validated into a frozen, hashed :class:`JobConfig`.

Schema (every field is checked before anything is written; errors name the field)::

    name: laptop                      # free text
    grid:
      P: [20, 30, 40]                 # a list of integers >= 1, or
      N: {start: 20, stop: 100, step: 10}   # an inclusive range
    replicates: 100000                # R per cell (>= the minimum of every (C, alpha))
    seed: 2005                        # root seed, integer >= 0
    metrics: [auc, best_f1, tp_at_10] # optional; default: every base metric and tp_at_10
    Cs: [10, 100, 1000]
    alphas: [0.01]
    exact: true                       # optional (default true): exact values beside the Monte Carlo
    chunks: {P: 4, N: 4}              # cells per Zarr (inner) chunk along each axis: what a lookup reads
    shard: {P: 8, N: 1}               # optional: chunks per shard along each axis (default 1 x 1); a task
                                      # writes one shard, one object per array (docs/reference/store.md)
    store: {url: laptop.zarr, storage_options: {}}   # local path or fsspec URL
    cluster: {workers: 2}             # or {scheduler_address: tcp://host:8786} or {scheduler_file: f.json};
                                      # optional worker_grace: 300 (s without workers before the run stops)
                                      # and connect_timeout: 30 (s to reach a scheduler)
    device: cpu                       # optional: cpu (default), cuda (GPUs, one dask worker each) or auto
    power: {levels: [0.5, 0.8, 0.9]}  # optional: tabulate the minimum detectable AUC (exact Lehmann power) at
                                      # these target powers (a schema-5 store); max_seconds: 0.05 leaves NaN
                                      # where one exact power probability is estimated over 0.05 s

``JobConfig.result_hash`` covers what determines the stored values and their layout (grid,
replicates, seed, metrics, Cs, alphas, exact, tail probabilities, chunks, shard unless 1 x 1, power where
given) and not where
or how the job runs (store, cluster, device), so a store can be resumed from another machine — or on GPUs
after CPUs, which give the same values bit for bit — but never with a different
result-determining setting.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tablegen.compute.limits import axis_memory, check_memory
from tablegen.compute.metrics import DEFAULT_METRICS, metric_entries
from tablegen.compute.stats import DEFAULT_TAIL_PROBABILITIES
from tablegen.compute.validation import (
    check_alpha,
    check_class_size,
    check_competitors,
    check_integer,
    check_metric,
    check_replicates,
    check_seed,
    check_unique_list,
)
from tablegen.errors import TablegenInputError

_TOP_LEVEL = {"kind", "name", "grid", "replicates", "seed", "metrics", "Cs", "alphas", "exact", "chunks", "shard",
              "store", "cluster", "device", "power"}
_DEVICES = ("cpu", "cuda", "auto")
_REQUIRED = {"grid", "replicates", "seed", "Cs", "alphas", "chunks", "store"}
_CLUSTER_KINDS = ("workers", "scheduler_address", "scheduler_file")
#: Optional cluster settings (seconds): how long a run may have no worker before it stops, and how long
#: connecting to a scheduler may take (checked before the store is created or locked).
_CLUSTER_OPTIONS = ("worker_grace", "connect_timeout")


#: How a run executes its tasks: a dask cluster (default) or all in this process.
EXECUTORS = ("dask", "serial")

@dataclass(frozen=True)
class JobConfig:
    """A validated job configuration (see the module docstring for the YAML schema).

    Made by :func:`load_config` (from a YAML file) or :func:`config_from_mapping`, and frozen.
    :attr:`result_hash` covers what determines the stored values, not where they are stored or
    computed: a store can be resumed by a config whose hash matches its own.

    Examples
    --------
    >>> config = load_config("configs/smoke.yaml")  # from the repository root
    >>> config.P, config.N, config.replicates, config.chunks
    ((5, 10, 20), (10, 20, 30), 40000, (2, 2))
    >>> from dataclasses import replace
    >>> moved = replace(config, store_url="elsewhere.zarr", device="cuda")
    >>> moved.result_hash == config.result_hash
    True
    >>> replace(config, seed=1).result_hash == config.result_hash
    False
    """

    name: str
    P: tuple[int, ...]
    N: tuple[int, ...]
    replicates: int
    seed: int
    metrics: tuple[str, ...]
    Cs: tuple[int, ...]
    alphas: tuple[float, ...]
    exact: bool
    chunks: tuple[int, int]
    store_url: str
    storage_options: dict = field(default_factory=dict, compare=False, hash=False)
    cluster: dict = field(default_factory=dict, compare=False, hash=False)
    device: str = field(default="cpu", compare=False, hash=False)
    tail_probabilities: tuple[float, ...] = DEFAULT_TAIL_PROBABILITIES
    shard: tuple[int, int] = (1, 1)
    power_levels: tuple[float, ...] = ()
    power_max_seconds: float | None = None

    @property
    def metric_entries(self) -> tuple:
        """The registry entries of :attr:`metrics` (one look-up; the engine is handed these)."""
        return metric_entries(self.metrics)

    @property
    def cells(self) -> int:
        """Number of (P, N) cells in the grid."""
        return len(self.P) * len(self.N)

    @property
    def sharded(self) -> bool:
        """Whether a task writes a shard of several Zarr chunks (``shard`` other than 1 x 1: a schema-4 store)."""
        return tuple(self.shard) != (1, 1)

    @property
    def task_cells(self) -> tuple[int, int]:
        """Cells of one task along P and N: a shard of ``shard`` chunks of ``chunks`` cells.

        Examples
        --------
        >>> from dataclasses import replace
        >>> replace(load_config("configs/smoke.yaml"), shard=(3, 1)).task_cells
        (6, 2)
        """
        return self.chunks[0] * self.shard[0], self.chunks[1] * self.shard[1]

    def result_fields(self) -> dict[str, Any]:
        """The fields that determine the stored values and their layout (``shard`` where it is not 1 x 1, and
        ``power`` where the job tabulates the minimum detectable AUC, so that a config written before either
        keeps its hash)."""
        data = asdict(self)
        keys = ("P", "N", "replicates", "seed", "metrics", "Cs", "alphas", "exact", "chunks", "tail_probabilities")
        return ({key: data[key] for key in keys} | ({"shard": data["shard"]} if self.sharded else {})
                | ({"power": self.power_record()} if self.power_levels else {}))

    def power_record(self) -> dict:
        """The ``power:`` section as recorded and hashed (``max_seconds`` only where it is set).

        Examples
        --------
        >>> from dataclasses import replace
        >>> replace(load_config("configs/smoke.yaml"), power_levels=(0.5, 0.8)).power_record()
        {'levels': [0.5, 0.8]}
        """
        record = {"levels": list(self.power_levels)}
        return record | ({"max_seconds": self.power_max_seconds} if self.power_max_seconds is not None else {})

    @property
    def result_hash(self) -> str:
        """SHA-256 of the canonical JSON of :meth:`result_fields`."""
        text = json.dumps(self.result_fields(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()


def _fail(field_name: str, message: str):
    raise TablegenInputError(f"config field {field_name}: {message}")


def _checked(field_name: str, check, *args):
    """Run a validation helper, re-raising its error under the config field's name."""
    try:
        return check(*args)
    except TablegenInputError as error:
        _fail(field_name, str(error))
    except (TypeError, ValueError, AttributeError, OverflowError):  # e.g. None where a list belongs
        _fail(field_name, f"is not valid here, got {args[-1]!r}")


def _axis(name: str, value) -> tuple[int, ...]:
    if isinstance(value, dict):
        unknown = set(value) - {"start", "stop", "step"}
        if unknown or not {"start", "stop"} <= set(value):
            _fail(name, "a range needs start and stop (and optionally step), got keys "
                        f"{sorted(value)}")
        start = _checked(f"{name}.start", check_integer, "start", value["start"], 1)
        stop = _checked(f"{name}.stop", check_integer, "stop", value["stop"], start)
        _checked(f"{name}.stop", check_class_size, "stop", stop)
        step = _checked(f"{name}.step", check_integer, "step", value.get("step", 1), 1)
        values = range(start, stop + 1, step)
        check_memory(axis_memory(len(values)), f"config field {name}: a range of {len(values):,} values",
                     "use a larger step, or split the grid into several jobs")
        return tuple(values)
    if not isinstance(value, list) or not value:
        _fail(name, f"must be a non-empty list of integers or a {{start, stop, step}} range, got {value!r}")
    values = tuple(_checked(f"{name}[{i}]", check_class_size, "value", v) for i, v in enumerate(value))
    if list(values) != sorted(set(values)):
        _fail(name, f"must be strictly increasing, got {list(values)}")
    return values


def _chunks(value, name: str = "chunks", what: str = "cells per Zarr chunk") -> tuple[int, int]:
    if not isinstance(value, dict) or set(value) != {"P", "N"}:
        _fail(name, f"must be a mapping with keys P and N ({what} along each axis), got {value!r}")
    return tuple(_checked(f"{name}.{axis}", check_integer, axis, value[axis], 1) for axis in ("P", "N"))


def _store(value) -> tuple[str, dict]:
    if not isinstance(value, dict) or not isinstance(value.get("url"), str) or not value["url"]:
        _fail("store", f"must be a mapping with a non-empty url, got {value!r}")
    unknown = set(value) - {"url", "storage_options"}
    if unknown:
        _fail("store", f"unknown keys {sorted(unknown)}")
    options = value.get("storage_options", {}) or {}
    if not isinstance(options, dict):
        _fail("store.storage_options", f"must be a mapping, got {options!r}")
    if options and "://" not in value["url"]:
        _fail("store.storage_options", f"only apply to an fsspec URL (s3://..., gs://..., memory://...); "
                                       f"{value['url']!r} is a local path")
    return value["url"], dict(options)


def _cluster_options(value: dict) -> dict:
    """``worker_grace`` and ``connect_timeout`` (seconds > 0) of a cluster mapping, checked."""
    options = {}
    for key in _CLUSTER_OPTIONS:
        if key in value:
            number = value[key]
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not 0 < number < float("inf"):
                _fail(f"cluster.{key}", f"must be a number of seconds > 0, got {number!r}")
            options[key] = float(number)
    return options


def _cluster(value) -> dict:
    value = {"workers": 2} if value is None else value
    options = _cluster_options(value) if isinstance(value, dict) else {}
    value = {k: v for k, v in value.items() if k not in _CLUSTER_OPTIONS} if isinstance(value, dict) else value
    if not isinstance(value, dict) or len(set(value) & set(_CLUSTER_KINDS)) != 1 or set(value) - set(_CLUSTER_KINDS):
        _fail("cluster", f"must have exactly one of {', '.join(_CLUSTER_KINDS)}, got {value!r}")
    if "workers" in value:
        return {"workers": _checked("cluster.workers", check_integer, "workers", value["workers"], 1), **options}
    (kind, target), = value.items()
    if not isinstance(target, str) or not target:
        _fail(f"cluster.{kind}", f"must be a non-empty string, got {target!r}")
    problem = scheduler_address_problem(target) if kind == "scheduler_address" else None
    if problem:
        _fail(f"cluster.{kind}", problem)
    return {kind: target, **options}


#: dask's network protocols that a scheduler address may name (``inproc`` lives in one process only).
SCHEDULER_PROTOCOLS = ("tcp", "tls", "ws", "wss", "ucx")


def scheduler_address_problem(address: object) -> str | None:
    """What is wrong with ``address`` as a dask scheduler address (``tcp://host:8786``, ``host:8786``), or None.

    Checked before anything is reached, so that a typo is a usage error, not an unreachable scheduler.

    Examples
    --------
    >>> scheduler_address_problem("tcp://10.0.0.5:8786") is None, scheduler_address_problem("[::1]:8786") is None
    (True, True)
    >>> scheduler_address_problem("tcp://node1")
    "is not a scheduler address such as tcp://host:8786 (no port), got 'tcp://node1'"
    """
    if not isinstance(address, str):
        return f"must be a string such as tcp://host:8786, got {address!r}"
    protocol, _, location = address.rpartition("://")
    protocol = protocol or "tcp"
    why = None
    if protocol not in SCHEDULER_PROTOCOLS:
        why = f"protocol {protocol!r} is not one of {', '.join(SCHEDULER_PROTOCOLS)}"
    else:
        host, colon, port = location.rpartition(":")
        host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        if not colon or not port:
            why = "no port"
        elif not port.isdigit() or not 0 < int(port) < 65536:
            why = f"port {port!r} is not in 1..65535"
        elif not host or any(c.isspace() or c in "/?#@[]" for c in host):
            why = f"host {host!r} is not a host name or IP address"
    return None if why is None else f"is not a scheduler address such as tcp://host:8786 ({why}), got {address!r}"


def _power(value) -> tuple[tuple[float, ...], float | None]:
    """The ``power:`` section: ``levels`` (target powers in (0, 1), strictly increasing) and, optionally,
    ``max_seconds`` (> 0); absent: no minimum detectable AUC (``((), None)``)."""
    if value is None:
        return (), None
    if not isinstance(value, dict) or "levels" not in value or set(value) - {"levels", "max_seconds"}:
        _fail("power", f"must be a mapping with levels (and optionally max_seconds), got {value!r}")
    levels = value["levels"]
    if not isinstance(levels, list) or not levels:
        _fail("power.levels", f"must be a non-empty list of target powers in (0, 1), got {levels!r}")
    for i, level in enumerate(levels):
        if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < level < 1.0:
            _fail(f"power.levels[{i}]", f"must be a target power in (0, 1), got {level!r}")
    if levels != sorted(set(levels)):
        _fail("power.levels", f"must be strictly increasing, got {levels}")
    bound = value.get("max_seconds")
    if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float))
                              or not 0.0 < bound < float("inf")):
        _fail("power.max_seconds", f"must be a number of seconds > 0, got {bound!r}")
    return tuple(float(level) for level in levels), None if bound is None else float(bound)


def _device(value) -> str:
    """Where the job scores rankings; resolved on each worker (``auto``), never part of the hash."""
    if value not in _DEVICES:
        _fail("device", f"must be one of {', '.join(_DEVICES)}, got {value!r}")
    return value


def _field_name(key: object) -> str:
    """A YAML key as a message names it: a string as it is, anything else (``? 1``, ``? null``) by repr."""
    return key if isinstance(key, str) else repr(key)


def grid_axis(name: str, value) -> tuple[int, ...]:
    """A grid axis of any kind of job: a strictly increasing list of integers >= 1, or an inclusive
    ``{start, stop, step}`` range; errors name the field ``name``.

    Examples
    --------
    >>> grid_axis("grid.K", {"start": 2, "stop": 6, "step": 2})
    (2, 4, 6)
    """
    return _axis(name, value)


def where_it_runs(data: dict) -> tuple[str, dict, dict, str]:
    """``(store url, storage options, cluster, device)`` of a config mapping of any kind, checked (errors name the
    field): what says where a job runs, not what it computes.

    Examples
    --------
    >>> where_it_runs({"store": {"url": "t.zarr"}})
    ('t.zarr', {}, {'workers': 2}, 'cpu')
    """
    url, options = _store(data.get("store"))
    return url, options, _cluster(data.get("cluster")), _device(data.get("device", "cpu"))


def config_from_mapping(data: dict, source: str = "<mapping>") -> JobConfig:
    """Validate a parsed YAML mapping into a :class:`JobConfig` (a ``kind: multiclass`` mapping into a
    :class:`~tablegen.batch.multiclass_config.MulticlassConfig`; a binary job has no kind, or ``kind: binary``).

    Raises
    ------
    TablegenInputError
        On any bad field; the message names it (``config field grid.P[2]: ...``).
    """
    if not isinstance(data, dict):
        raise TablegenInputError(f"{source}: a job config must be a YAML mapping, got {type(data).__name__}")
    if data.get("kind", "binary") != "binary":
        from tablegen.batch.multiclass_config import KIND, multiclass_config_from_mapping

        if data["kind"] != KIND:
            _fail("kind", f"must be binary (the default) or {KIND}, got {data['kind']!r}")
        return multiclass_config_from_mapping(data, source, grid_axis, where_it_runs)
    unknown, missing = set(data) - _TOP_LEVEL, _REQUIRED - set(data)
    if unknown:
        known = ", ".join(sorted(_TOP_LEVEL))
        _fail(", ".join(sorted(map(_field_name, unknown))), f"unknown field(s); known fields: {known}")
    if missing:
        _fail(", ".join(sorted(missing)), "missing")
    grid = data["grid"]
    if not isinstance(grid, dict) or set(grid) != {"P", "N"}:
        _fail("grid", f"must be a mapping with keys P and N, got {grid!r}")
    Cs = _checked("Cs", check_unique_list, "Cs", data["Cs"], lambda n, v: check_competitors(v))
    alphas = _checked("alphas", check_unique_list, "alphas", data["alphas"], check_alpha)
    metrics = data.get("metrics", list(DEFAULT_METRICS))
    if not isinstance(metrics, list) or not metrics:
        _fail("metrics", f"must be a non-empty list of metric names, got {metrics!r}")
    metrics = tuple(_checked(f"metrics[{i}]", check_metric, "metric", m) for i, m in enumerate(metrics))
    if len(set(metrics)) != len(metrics):
        _fail("metrics", f"has duplicates: {list(metrics)}")
    if not isinstance(data.get("exact", True), bool):
        _fail("exact", f"must be true or false, got {data['exact']!r}")
    url, options = _store(data["store"])
    power_levels, power_max_seconds = _power(data.get("power"))
    return JobConfig(
        name=str(data.get("name", Path(source).stem)),
        P=_axis("grid.P", grid["P"]),
        N=_axis("grid.N", grid["N"]),
        replicates=_checked("replicates", check_replicates, data["replicates"], Cs, alphas),
        seed=_checked("seed", check_seed, "seed", data["seed"], False),
        metrics=metrics,
        Cs=Cs,
        alphas=alphas,
        exact=data.get("exact", True),
        chunks=_chunks(data["chunks"]),
        shard=_chunks(data.get("shard", {"P": 1, "N": 1}), "shard", "chunks per shard"),
        store_url=url,
        storage_options=options,
        cluster=_cluster(data.get("cluster")),
        device=_device(data.get("device", "cpu")),
        power_levels=power_levels,
        power_max_seconds=power_max_seconds,
    )


def load_config(path: str | os.PathLike[str]) -> JobConfig:
    """Read and validate a YAML job config.

    Examples
    --------
    >>> load_config("configs/smoke.yaml").cells  # from the repository root
    9
    """
    if not isinstance(path, (str, os.PathLike)) or not str(path):
        raise TablegenInputError(f"path must be the path of a YAML job config, got {path!r}")
    path = Path(path)
    if not path.is_file():
        raise TablegenInputError(f"config file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise TablegenInputError(f"config file {str(path)!r} is not valid YAML: {error}") from None
    except UnicodeDecodeError as error:
        raise TablegenInputError(f"config file {str(path)!r} is not UTF-8 text ({error.reason} at byte "
                                 f"{error.start})") from None
    except OSError as error:
        raise TablegenInputError(f"config file {str(path)!r} cannot be read ({error.strerror or error})") from None
    return config_from_mapping(data, source=str(path))
