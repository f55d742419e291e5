"""Helpers shared by the command-line tests: run ``tablegen`` in a folder, and fail instead of hanging."""

from __future__ import annotations

import contextlib
import io
import os
import signal

from tablegen.cli.main import main


def tablegen(argv, cwd) -> tuple[int, str]:
    """Exit code and standard error of ``tablegen argv`` (words made strings) run in ``cwd``."""
    err, here = io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                code = main([str(word) for word in argv])
            except SystemExit as exit_:
                code = exit_.code
    finally:
        os.chdir(here)
    return code, err.getvalue()


@contextlib.contextmanager
def bounded(seconds: int):
    """Fail (instead of hanging) if the block runs longer than ``seconds``."""
    def hang(signum, frame):
        raise AssertionError(f"no answer within {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
