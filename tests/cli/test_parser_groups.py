"""What a command line loads at start-up: only its own command's parsers (the groups name every command exactly),
and one BLAS thread."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest
from progresstools import HANG_SECONDS

from tablegen.cli.main import PARSER_GROUPS, build_parser


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    (group,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return list(group.choices)


def test_the_groups_list_every_command_in_help_order():
    assert _commands(build_parser()) == [command for _, _, commands in PARSER_GROUPS for command in commands]


@pytest.mark.parametrize("commands", [commands for _, _, commands in PARSER_GROUPS], ids=lambda c: c[0])
def test_each_group_adds_exactly_its_commands(commands):
    for command in commands:
        assert _commands(build_parser(command)) == list(commands)


def test_an_unknown_command_builds_every_parser_and_is_refused_listing_them():
    assert _commands(build_parser("lookp")) == _commands(build_parser())
    with pytest.raises(SystemExit):
        build_parser("lookp").parse_args(["lookp"])


def test_a_lookup_imports_no_other_commands_modules_and_uses_one_blas_thread():
    others = [module for module, _, commands in PARSER_GROUPS if "lookup" not in commands]
    code = ("import os, sys; from tablegen.cli import main; "  # the console script's entry point
            "code = main(['lookup', 'auc', '--P', '10', '--N', '20', '--C', '10']); "
            f"print(code, os.environ['OPENBLAS_NUM_THREADS'], *[m for m in {others!r} + ['tablegen.batch.config'] "
            "if m in sys.modules])")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_SECONDS,
                         env=env).stdout
    assert out.splitlines()[-1] == "0 1", out



def test_a_blas_thread_count_the_user_set_is_kept(monkeypatch):
    from tablegen.cli import single_threaded_blas

    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    single_threaded_blas()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
