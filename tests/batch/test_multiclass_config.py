"""The kind: multiclass job config: the smoke and appendix configs load, every bad field is named, the hash covers
what determines the values and not where the job runs, and binary configs are unchanged by the kind field."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from tablegen.batch.config import config_from_mapping, load_config
from tablegen.batch.multiclass_config import MulticlassConfig
from tablegen.errors import TablegenInputError


def mapping(**changes):
    data = {"kind": "multiclass", "grid": {"K": [2, 3], "n_per_class": [5, 10]}, "Cs": [1, 10],
            "alphas": [0.05], "chunks": {"K": 1, "n_per_class": 2}, "store": {"url": "t.zarr"}}
    return data | changes


def test_the_configs_of_the_repository_load():
    smoke, appendix = load_config("configs/multiclass_smoke.yaml"), load_config("configs/multiclass.yaml")
    assert isinstance(smoke, MulticlassConfig) and smoke.cells == 9
    assert appendix.K == tuple(range(2, 21)) and appendix.n_per_class == (5, 10, 20, 50, 100, 200, 500, 1000)
    assert appendix.metrics == ("accuracy", "kappa", "balanced_accuracy", "macro_f1") and appendix.cells == 152


def test_the_hash_covers_the_values_not_where_they_are_computed():
    config = config_from_mapping(mapping())
    assert replace(config, store_url="x.zarr", cluster={"workers": 9}).result_hash == config.result_hash
    for change in ({"Cs": (1, 100)}, {"K": (2, 4)}, {"chunks": (2, 2)}, {"metrics": ("kappa",)}):
        assert replace(config, **change).result_hash != config.result_hash


def test_a_binary_config_says_kind_binary_or_nothing():
    binary = load_config("configs/smoke.yaml")
    import yaml

    data = yaml.safe_load(open("configs/smoke.yaml"))
    assert config_from_mapping(data | {"kind": "binary"}, "configs/smoke.yaml") == binary


@pytest.mark.parametrize("changes, field", [
    ({"kind": "ternary"}, "kind"),
    ({"replicates": 1000}, "replicates"),
    ({"seed": 1}, "seed"),
    ({"grid": {"K": [1, 2], "n_per_class": [5]}}, "grid.K"),
    ({"grid": {"K": [3, 2], "n_per_class": [5]}}, "grid.K"),
    ({"grid": {"K": [2], "n_per_class": [0]}}, "grid.n_per_class[0]"),
    ({"grid": {"P": [2], "N": [5]}}, "grid"),
    ({"metrics": ["auc"]}, "metrics[0]"),
    ({"metrics": ["accuracy", "accuracy"]}, "metrics"),
    ({"Cs": [0]}, "Cs"),
    ({"alphas": [1.5]}, "alphas"),
    ({"chunks": {"P": 1, "N": 1}}, "chunks"),
    ({"chunks": {"K": 0, "n_per_class": 1}}, "chunks.K"),
    ({"store": {}}, "store"),
    ({"device": "cuda"}, "device"),
    ({"colour": "red"}, "colour"),
])
def test_bad_fields_are_named(changes, field):
    with pytest.raises(TablegenInputError, match=rf"config field {re.escape(field)}(?![\w.\[])"):
        config_from_mapping(mapping(**changes))


def test_missing_fields_are_named():
    data = mapping()
    del data["Cs"]
    with pytest.raises(TablegenInputError, match="config field Cs: missing"):
        config_from_mapping(data)
