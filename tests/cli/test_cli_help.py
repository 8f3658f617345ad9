"""Every flag of every command says what it does, and the default when it has one."""

from __future__ import annotations

import argparse
import re

import pytest

from searchtrace.cli import build_parser, main


def _options(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("searchtrace",)):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, (*path, name))
        elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield " ".join(path), action


def test_every_option_of_every_command_has_help():
    missing = [f"{cmd} {a.option_strings or a.dest}" for cmd, a in _options(build_parser()) if not a.help]
    assert missing == []


def test_every_option_with_a_default_names_it():
    silent = []
    for cmd, action in _options(build_parser()):
        default = action.default
        if action.option_strings and default not in (None, False, argparse.SUPPRESS) and \
                "default" not in (action.help or ""):
            silent.append(f"{cmd} {action.option_strings} (default {default!r})")
    assert silent == []


def test_version(capsys):
    from searchtrace import __version__

    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"searchtrace {__version__}"
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", __version__)
