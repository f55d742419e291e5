"""A command line builds only its own command's parsers, and the groups name every command exactly."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

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


def test_a_lookup_imports_no_other_commands_modules():
    others = [module for module, _, commands in PARSER_GROUPS if "lookup" not in commands]
    code = ("import sys; from tablegen.cli.main import main; "
            "code = main(['lookup', 'auc', '--P', '10', '--N', '20', '--C', '10']); "
            f"print(code, *[m for m in {others!r} + ['tablegen.batch.config'] if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert out.splitlines()[-1] == "0", out
