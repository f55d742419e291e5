"""The reliability probe's bad inputs, each refused before any work with the documented exit code and a message
naming the argument or the package to install (tablegen.errors lists the codes): store URLs whose backend is
missing, unknown or out of reach; integers beyond 64 bits; binary files given as CSV; outputs naming a directory;
clusters too large for the machine and scheduler addresses that are not addresses; out-of-space and cluster
start-up failures during a run."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import socket

import pytest
from clitools import tablegen

from tablegen.cli.main import main
from tablegen.errors import RunStoppedError, TablegenInputError

BUNDLED = os.path.join(os.path.dirname(__import__("tablegen").__file__), "data", "paper.zarr")


def _closed_port() -> int:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return listener.getsockname()[1]  # nothing listens there once the socket is closed


@pytest.fixture
def files(tmp_path):
    (tmp_path / "binary.dat").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    (tmp_path / "zeros.dat").write_bytes(b"\x00" * 64)
    (tmp_path / "a.csv").write_text("40 5\n6 49\n")
    (tmp_path / "garbage.json").write_text("{not json")
    (tmp_path / "adir").mkdir()
    (tmp_path / "tiny.yaml").write_text("grid: {P: [5], N: [6]}\nreplicates: 2000\nseed: 1\nmetrics: [auc]\n"
                                        "Cs: [10]\nalphas: [0.01]\nexact: false\nchunks: {P: 1, N: 1}\n"
                                        "store: {url: tiny.zarr}\n")
    return tmp_path


def config_with(files, line: str) -> str:
    path = files / "extra.yaml"
    path.write_text((files / "tiny.yaml").read_text() + line + "\n")
    return str(path)


CASES = [  # (argv, exit code, what the message says); {port} is a closed local port
    (["info", "s3://no-bucket/t.zarr"], 2, "Install s3fs"),
    (["verify", "s3://no-bucket/t.zarr"], 2, "Install s3fs"),
    (["info", "gs://no-bucket/t.zarr"], 2, "gcsfs"),
    (["info", "bogus://x/t.zarr"], 2, "unknown protocol 'bogus'"),
    (["verify", "bogus://x/t.zarr"], 2, "unknown protocol 'bogus'"),
    (["lookup", "auc", "--P", "20", "--N", "20", "--C", "10", "--table", "bogus://x/t.zarr"], 2, "unknown protocol"),
    (["info", "ftp://127.0.0.1:{port}/t.zarr"], 4, "could not be reached"),
    (["info", BUNDLED, "--storage-options", '{"anon": true}'], 2, "apply to an fsspec URL"),
    (["simulate", "--P", "10", "--N", "10", "--R", "9223372036854775808"], 2, "--R must be at most 2**53"),
    (["simulate", "--P", "10", "--N", "10", "--seed", "18446744073709551616"], 2, "--seed must be below 2**64"),
    (["lookup", "auc", "--P", "20", "--N", "20", "--C", "1" + "0" * 301, "--method", "exact"], 2, "at most 1e300"),
    (["evaluate", "a.csv", "--R", "9223372036854775808"], 2, "--R must be at most"),
    (["compare", "f1", "binary.dat", "a.csv"], 2, "binary.dat: not a text CSV file"),
    (["compare", "f1", "a.csv", "zeros.dat"], 2, "zeros.dat: not a text CSV file"),
    (["topk", "--P", "10", "--N", "90", "--counts-file", "binary.dat"], 2, "--counts-file binary.dat: not a text"),
    (["topk", "--P", "10", "--N", "90", "--counts-file", "adir"], 2, "is a directory"),
    (["compare", "f1", "a.csv", "a.csv", "--samples", "1000000000000"], 5, "use fewer --samples"),
    (["topk", "--P", "1000000", "--N", "1000000", "--K", "2000000"], 5, "would take about"),
    (["topk", "--P", "10", "--N", "90", "--counts", "1", "1", "2", "--plot", "adir"], 2, "--plot adir: is a directory"),
    (["plot", BUNDLED, "--metric", "auc", "--C", "10", "-o", "adir"], 2, "-o adir: is a directory"),
    (["plot", BUNDLED, "--metric", "auc", "--C", "10", "-o", "nowhere/x.png"], 2, "does not exist"),
    (["plot", BUNDLED, "--metric", "auc", "--C", "10", "-o", "x.bogus"], 2, "not an image format"),
    (["export", BUNDLED, "--metric", "auc", "--C", "10", "-o", "adir"], 2, "-o adir: is a directory"),
    (["test", "auc", "0.9", "--P", "20", "--N", "20", "--C", "10", "--metrics", "auc"], 2, "only with --scores-file"),
    (["run", "tiny.yaml", "--workers", "1000"], 2, "worker processes (4 per core"),
    (["run", "tiny.yaml", "--scheduler-address", "nope"], 2, "--scheduler-address is not a scheduler address"),
    (["run", "tiny.yaml", "--scheduler-address", "tcp://node1", "--dry-run"], 2, "(no port)"),
    (["run", "tiny.yaml", "--scheduler-file", "missing.json"], 2, "no such file"),
    (["run", "tiny.yaml", "--scheduler-file", "garbage.json"], 2, "not a dask scheduler file"),
    (["run", "tiny.yaml", "--scheduler-file", "binary.dat"], 2, "not a dask scheduler file"),
    (["run", "tiny.yaml", "--executor", "serial", "--workers", "2"], 2, "--workers applies to --executor dask"),
]


@pytest.mark.parametrize("argv, code, message", CASES, ids=lambda v: " ".join(v)[:60] if isinstance(v, list) else "")
def test_refused_before_any_work(argv, code, message, files):
    argv = [word.format(port=_closed_port()) if "{port}" in word else word for word in argv]
    before = sorted(os.listdir(files))
    got, err = tablegen(argv, files)
    assert (got, message in err) == (code, True), err
    assert err.startswith("tablegen: error: ") and "Traceback" not in err
    assert sorted(os.listdir(files)) == before  # nothing written


NUMBERS_WITH_A_MINUS = ["-inf", "-Infinity", "-1e400", "-1e-3", "-nan", "-0.5"]


@pytest.mark.parametrize("command", ["test", "p-value"])  # every command with a numeric positional (SCORE)
@pytest.mark.parametrize("score", NUMBERS_WITH_A_MINUS)
def test_a_negative_score_reaches_the_check_naming_score(command, score, files):
    """Once: ``test auc -inf`` ended in argparse's "unrecognized arguments: -inf"; every text float() reads
    with a minus sign is the SCORE, refused by the check that names it (as nan, inf and 1e400 are)."""
    code, err = tablegen([command, "auc", score, "--P", "100", "--N", "300", "--C", "10"], files)
    assert code == 2 and err.startswith("tablegen: error: score") and "unrecognized" not in err, err


def test_a_negative_option_value_reaches_the_check_naming_the_option(files):
    code, err = tablegen(["test", "auc", "0.7", "--P", "100", "--N", "300", "--C", "10", "--alpha", "-inf"], files)
    assert code == 2 and err.startswith("tablegen: error: alpha must be in (0, 1), got -inf"), err


def test_the_numeric_positionals_are_the_ones_checked_above():
    """The commands with a numeric positional are exactly those the test above runs (a new one is added there)."""
    from tablegen.cli.main import build_parser, command_parsers

    numeric = sorted(words[0] for words, parser in command_parsers(build_parser()) for action in parser._actions
                     if not action.option_strings and action.type in (int, float))
    assert numeric == ["p-value", "test"]


def test_config_integers_beyond_64_bits_are_refused(files):
    big_r = (files / "tiny.yaml").read_text().replace("replicates: 2000", "replicates: 9223372036854775808")
    (files / "r.yaml").write_text(big_r)
    big_seed = (files / "tiny.yaml").read_text().replace("seed: 1", "seed: 18446744073709551616")
    (files / "s.yaml").write_text(big_seed)
    for name, expected in (("r.yaml", "config field replicates: R must be at most 2**53"),
                           ("s.yaml", "config field seed: seed must be below 2**64")):
        code, err = tablegen(["run", name, "--dry-run"], files)
        assert code == 2 and expected in err, err


@pytest.mark.parametrize("cluster, message", [
    ("cluster: {workers: 1000}", "cap of"),
    ("cluster: {scheduler_address: 'tcp://node1'}", "config field cluster.scheduler_address"),
    ("cluster: {scheduler_address: 'ftp://h:1'}", "protocol 'ftp'"),
])
def test_config_clusters_that_cannot_be_are_usage_errors(cluster, message, files):
    code, err = tablegen(["run", config_with(files, cluster)], files)
    assert code == 2 and message in err, err
    assert not (files / "tiny.zarr").exists()


def test_python_lookups_name_alpha_and_metric():
    from tablegen import critical_value, significance_test

    for call, name in ((lambda: critical_value("best_f1", 20, 20, C=10, alpha=None), "alpha is required"),
                       (lambda: significance_test("auc", 20, 20, C=10, alpha=None, score=0.9), "alpha is required"),
                       (lambda: critical_value(["auc"], 20, 20, C=10), "metric: unknown metric ['auc']")):
        with pytest.raises(TablegenInputError) as raised:
            call()
        assert str(raised.value).startswith(name)


def test_topk_test_refuses_nan_counts():
    from tablegen import topk_test

    with pytest.raises(TablegenInputError, match=r"observed\[1\] \(k = 2\) is NaN"):
        topk_test([1, float("nan"), 2], 10, 90)


@pytest.mark.slow  # matplotlib and the top-k kernel: seconds from a cold cache
def test_an_image_without_a_suffix_is_reported_as_the_png_written(files):
    code, _ = tablegen(["topk", "--P", "10", "--N", "90", "--counts", "1", "1", "2", "--plot", "band"], files)
    out = io.StringIO()
    assert code == 0 and (files / "band.png").exists() and not (files / "band").exists()
    here = os.getcwd()
    os.chdir(files)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main(["topk", "--P", "10", "--N", "90", "--counts", "1", "1", "2", "--plot", "again"])
    finally:
        os.chdir(here)
    assert "wrote again.png" in out.getvalue()


def test_a_full_disk_stops_the_run_resumably(files, monkeypatch):
    """Fault injection: the first chunk's write finds no space left; the run stops with exit code 4 and a
    message, not an OSError traceback (a real full tmpfs: the slow test below)."""
    from tablegen.batch import executors

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(executors, "run_chunk", full)
    code, err = tablegen(["run", "tiny.yaml", "--executor", "serial"], files)
    assert code == 4 and "no space left" in err and "run the same command again to resume" in err, err


def test_a_cluster_that_fails_to_start_stops_the_run(files, monkeypatch):
    """A worker dying as the LocalCluster starts ("Nanny failed to start") stops the run with exit code 4."""
    import distributed

    from tablegen.batch import executors

    class Failing:
        def __init__(self, *args, **kwargs):
            raise RuntimeError("Nanny failed to start.")

    monkeypatch.setattr(distributed, "LocalCluster", Failing)
    with pytest.raises(RunStoppedError, match="did not start .*Nanny failed to start"):
        with executors._local_cluster(2):
            pass


@pytest.mark.slow
def test_a_real_full_disk_stops_the_run_and_a_resume_finishes_it(files):
    """A 128 KiB tmpfs (mounted where the test may: root on Linux; skipped elsewhere) fills during the run."""
    import subprocess

    mount = files / "tiny"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", str(mount)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (the fault-injection test covers the message)")
    try:
        big = (files / "tiny.yaml").read_text().replace("P: [5]", "P: [5, 6, 7, 8, 9, 10]").replace("N: [6]",
                                                                                                  "N: [6, 7, 8, 9]")
        (files / "big.yaml").write_text(big)
        argv = ["run", "big.yaml", "--executor", "serial", "--store", str(mount / "s.zarr")]
        code, err = tablegen(argv, files)
        assert code == 4 and "no space left" in err, err
        subprocess.run(["mount", "-o", "remount,size=4m", str(mount)], check=True)
        code, err = tablegen(argv, files)
        assert code == 0, err
        code, err = tablegen(["verify", str(mount / "s.zarr")], files)
        assert code == 0, err
    finally:
        subprocess.run(["umount", str(mount)], check=False)


@pytest.mark.parametrize("argv,environment,message", [
    # the probe: 10^8 draws passed 8.6 GB under a 4 GB limit
    (["--samples", "100000000"], {"TABLEGEN_MEMORY_LIMIT": "4GB"}, "would need about"),
    # the probe: 1,000 classes ran past 300 s unrefused
    ([], {"TABLEGEN_TIME_LIMIT": "300"}, "would take about"),
])
def test_compare_f1_beyond_the_limits_is_refused_with_its_estimate(argv, environment, message, files, monkeypatch):
    """compare f1 estimates its draws' memory and time before drawing: exit 5, the estimate and the way out."""
    classes = 2 if argv else 1000
    matrix = "\n".join(" ".join(str(40 if i == j else 1) for j in range(classes)) for i in range(classes))
    (files / "m.csv").write_text(matrix + "\n")
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    code, err = tablegen(["compare", "f1", "m.csv", "m.csv", *argv], files)
    assert code == 5 and message in err and "use fewer --samples" in err, err
