"""``--storage-options``: every command that opens a store passes its fsspec options through, and refuses
anything but a JSON object naming the option."""

from __future__ import annotations

import json

import fsspec
import pytest
from fsspec.implementations.memory import MemoryFileSystem

from tablegen.cli.main import main


class GuardedMemoryFileSystem(MemoryFileSystem):
    """An in-memory filesystem that opens only with ``token="secret"`` (like an object store's credentials)."""

    protocol = "tgguarded"

    def __init__(self, token=None, **kwargs):
        if token != "secret":
            raise PermissionError(f"tgguarded: wrong token {token!r}")
        super().__init__(**kwargs)


OPTIONS = '{"token": "secret"}'


@pytest.fixture(scope="module")
def guarded_store(tmp_path_factory):
    """A finished small store at tgguarded://… (written by `tablegen run --storage-options`)."""
    fsspec.register_implementation("tgguarded", GuardedMemoryFileSystem, clobber=True)
    url = "tgguarded://cli-storage/s.zarr"
    config = tmp_path_factory.mktemp("guarded") / "job.yaml"
    config.write_text("grid: {P: [5, 10], N: [8]}\nreplicates: 2000\nseed: 11\nmetrics: [auc, best_accuracy]\n"
                      "Cs: [10]\nalphas: [0.05]\nchunks: {P: 1, N: 1}\nstore: {url: memory://unused.zarr}\n")
    assert main(["run", str(config), "--store", url, "--storage-options", OPTIONS, "--executor", "serial"]) == 0
    yield url
    GuardedMemoryFileSystem(token="secret").rm(url, recursive=True)


def _commands(url):
    return {
        "info": ["info", url, "--json"],
        "verify": ["verify", url, "--json"],
        "export": ["export", url, "--metric", "auc", "--C", "10", "--alpha", "0.05", "--json"],
        "lookup": ["lookup", "best_accuracy", "--P", "5", "--N", "8", "--C", "10", "--alpha", "0.05",
                   "--method", "table", "--table", url, "--json"],
        "test": ["test", "best_accuracy", "0.9", "--P", "5", "--N", "8", "--C", "10", "--alpha", "0.05",
                 "--method", "table", "--table", url, "--json"],
        "p-value": ["p-value", "auc", "0.9", "--P", "5", "--N", "8", "--C", "10", "--method", "table",
                    "--table", url, "--json"],
    }


@pytest.mark.parametrize("command", list(_commands("x")))
def test_every_store_command_passes_the_options_through(guarded_store, command, capsys):
    arguments = _commands(guarded_store)[command]
    assert main(arguments + ["--storage-options", OPTIONS]) == 0
    json.loads(capsys.readouterr().out)  # the store was read: a JSON answer
    assert main(arguments) == 2  # without them the filesystem refuses, and the store is named
    assert f"store {guarded_store!r} cannot be" in capsys.readouterr().err


def test_run_resumes_with_the_options(guarded_store, tmp_path, capsys):
    config = tmp_path / "job.yaml"
    config.write_text("grid: {P: [5, 10], N: [8]}\nreplicates: 2000\nseed: 11\nmetrics: [auc, best_accuracy]\n"
                      "Cs: [10]\nalphas: [0.05]\nchunks: {P: 1, N: 1}\nstore: {url: memory://unused.zarr}\n")
    assert main(["run", str(config), "--store", guarded_store, "--storage-options", OPTIONS,
                 "--executor", "serial", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cells_skipped"] == 2


@pytest.mark.parametrize("text, message", [
    ("{anon: true}", "--storage-options is not valid JSON"),
    ('["anon"]', "--storage-options must be a JSON object such as '{\"anon\": true}', got a list"),
    ("true", "--storage-options must be a JSON object"),
])
@pytest.mark.parametrize("command", [
    ["info", "memory://x.zarr"],
    ["lookup", "auc", "--P", "5", "--N", "8", "--C", "10", "--table", "memory://x.zarr"],
    ["export", "memory://x.zarr", "--metric", "auc", "--C", "10"],
    ["plot", "memory://x.zarr", "--metric", "auc", "--C", "10", "-o", "x.png"],
    ["verify", "memory://x.zarr"],
    ["run", "configs/smoke.yaml", "--store", "memory://x.zarr", "--executor", "serial"],
], ids=lambda c: c[0])
def test_bad_storage_options_exit_2_naming_the_option(command, text, message, capsys):
    assert main(command + ["--storage-options", text]) == 2
    assert message in capsys.readouterr().err


def test_storage_options_without_a_store_are_refused(capsys):
    assert main(["lookup", "auc", "--P", "5", "--N", "8", "--C", "10", "--storage-options", "{}"]) == 2
    assert "--storage-options applies to a --table store" in capsys.readouterr().err
    assert main(["info", "--storage-options", "{}"]) == 2
    assert "--storage-options applies to a store given by path or URL" in capsys.readouterr().err
