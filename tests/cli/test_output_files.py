"""A command's ``-o FILE`` is written whole or not at all: a disk that fills while it is written (a fault-injecting
writer: the first half of the bytes land, then ``OSError(ENOSPC)``) leaves an existing FILE as it was and no
partial or temporary file, and the command exits 4 with the disk-full message, as a run does."""

from __future__ import annotations

import contextlib
import errno
import io
import os

import pytest
from clitools import tablegen

import tablegen.common.outputs as outputs
from tablegen.cli.main import main
from tablegen.store.schema import bundled_table_path

EXPORT = ["export", bundled_table_path(), "--metric", "auc", "--C", "10", "-o", "t.md"]
PLOT = ["plot", bundled_table_path(), "--metric", "auc", "--C", "10", "-o", "p.png"]


class _FillingHandle:
    """A text file handle on a disk that fills half-way through the first write."""

    def __init__(self, handle):
        self.handle = handle

    def write(self, text: str) -> int:
        self.handle.write(text[:len(text) // 2])
        self.handle.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.handle.close()


def _filling_open(file, mode="r", **kwargs):
    return _FillingHandle(open(file, mode, **kwargs))


@pytest.mark.parametrize("existing", [True, False], ids=["over an existing file", "a new file"])
def test_export_on_a_full_disk_leaves_no_partial_file_and_exits_4(existing, tmp_path, monkeypatch):
    if existing:
        (tmp_path / "t.md").write_text("the table of yesterday\n")
    monkeypatch.setattr(outputs, "open", _filling_open, raising=False)  # the module's own open: no other file
    code, err = tablegen(EXPORT, tmp_path)
    assert code == 4 and "-o t.md: no space left on the disk (No space left on device)" in err, err
    assert "nothing was written and t.md is as it was" in err
    assert os.listdir(tmp_path) == (["t.md"] if existing else [])
    if existing:
        assert (tmp_path / "t.md").read_text() == "the table of yesterday\n"


def test_export_replaces_the_file_whole_with_a_new_files_permissions(tmp_path):
    (tmp_path / "t.md").write_text("old\n")
    os.chmod(tmp_path / "t.md", 0o600)
    code, err = tablegen(EXPORT, tmp_path)
    assert code == 0, err
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(EXPORT[:-2]) == 0
    assert (tmp_path / "t.md").read_text() == printed.getvalue() and os.listdir(tmp_path) == ["t.md"]
    (tmp_path / "plain").write_text("")  # what any new file gets here (0666 less the umask)
    assert os.stat(tmp_path / "t.md").st_mode == os.stat(tmp_path / "plain").st_mode


def test_a_picture_on_a_full_disk_leaves_the_old_one_and_exits_4(tmp_path, monkeypatch):
    import matplotlib.figure

    def filling_savefig(self, fname, **kwargs):
        with open(fname, "wb") as handle:
            handle.write(b"\x89PNG\r\n\x1a\n" + bytes(1000))
        raise OSError(errno.ENOSPC, "No space left on device")

    (tmp_path / "p.png").write_bytes(b"the picture of yesterday")
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", filling_savefig)
    code, err = tablegen(PLOT, tmp_path)
    assert code == 4 and "-o p.png: no space left on the disk" in err, err
    assert os.listdir(tmp_path) == ["p.png"] and (tmp_path / "p.png").read_bytes() == b"the picture of yesterday"
