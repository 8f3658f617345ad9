"""Each ``TraceFilter`` field declares its command-line flag (or that it has none), and ``traces list`` and
``traces export`` take the flags from those declarations: a new filter is its field in ``records.py`` and its
test in ``filter_sql.py`` (a column) or ``span_match.py`` (a span's attributes), never a third file."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field, fields

import pytest

from searchtrace.traces import cli
from searchtrace.traces.store.records import FLAG, Flag, TraceFilter

COMMANDS = ("list", "export")
FLAGGED = [(f.name, f.metadata[FLAG]) for f in fields(TraceFilter) if f.metadata.get(FLAG) is not None]


def parser(command: str) -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="searchtrace")
    cli.register(root.add_subparsers(dest="command", required=True))
    sub = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction)).choices["traces"]
    return next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction)).choices[command]


def parsed(command: str, *argv: str) -> TraceFilter:
    return cli._filter(parser(command).parse_args(list(argv)))


def undeclared(record: type) -> list[str]:
    """The fields of ``record`` that say neither their flag nor that they have none."""
    return [f.name for f in fields(record) if FLAG not in f.metadata or not isinstance(f.metadata[FLAG], Flag | None)]


def cases() -> list[tuple[str, list[str], object]]:
    """(field, argv, the field's value) for every flag, generated from the declarations: a value-taking flag
    given its example, a switch (and its opposite) alone, an optional value left out."""
    out: list[tuple[str, list[str], object]] = []
    for name, flag in FLAGGED:
        if flag.switch:
            out.append((name, [flag.name], flag.const))
            if flag.opposite:
                out.append((name, [flag.opposite[0]], not flag.const))
            continue
        if flag.nargs == "?":
            out.append((name, [flag.name], flag.const))
        text = flag.example if flag.example is not None else (flag.choices[0] if flag.choices else None)
        assert text is not None, f"{flag.name} takes a value: it declares an example (or its choices)"
        value = flag.parse(text) if flag.parse else text
        out.append((name, [flag.name, text], flag.convert(value) if flag.convert else value))
    return out


def test_every_field_declares_its_flag_or_none():
    assert undeclared(TraceFilter) == []


def test_a_field_added_without_a_declaration_is_caught():
    @dataclass(frozen=True)
    class Wider(TraceFilter):
        new_filter: str | None = None

    @dataclass(frozen=True)
    class Declared(TraceFilter):
        new_filter: str | None = field(default=None, metadata={FLAG: None})

    assert undeclared(Wider) == ["new_filter"]
    assert undeclared(Declared) == []


def test_the_fields_without_a_flag_are_those_the_command_line_never_set():
    assert [f.name for f in fields(TraceFilter) if f.metadata[FLAG] is None] == ["best_band", "sources", "dataset"]


def test_flags_are_unique_and_their_destinations_too():
    names = [n for _, flag in FLAGGED for n in (flag.name, *(flag.opposite[:1] if flag.opposite else ()))]
    assert len(names) == len(set(names))
    assert len({flag.dest for _, flag in FLAGGED}) == len(FLAGGED)


@pytest.mark.parametrize("command", COMMANDS)
def test_every_declared_flag_is_on_the_command(command):
    taken = {s for a in parser(command)._actions for s in a.option_strings}
    for _, flag in FLAGGED:
        assert flag.name in taken
        if flag.opposite:
            assert flag.opposite[0] in taken


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("name", "argv", "value"), cases(), ids=lambda x: " ".join(x) if isinstance(x, list) else None)
def test_each_flag_sets_its_field_and_only_it(command, name, argv, value):
    flt = parsed(command, *argv)
    assert getattr(flt, name) == value
    assert getattr(flt, name) != getattr(parsed(command), name)
    assert dataclasses.replace(flt, **{name: getattr(parsed(command), name)}) == parsed(command)


def test_the_examples_cover_the_ones_asked():
    assert parsed("list", "--doc", "d1").doc_id == "d1"
    assert parsed("list", "--query", "Harbour").query_text == "Harbour"
    assert parsed("export", "--attribute", " k =v=w").attribute == ("k", "v=w")
    assert parsed("list", "--kind", "load").kind is not None and parsed("list", "--kind", "load").kind.value == "load"
    assert parsed("list", "--errors").errors is True and parsed("list").errors is None


def test_defaults_are_the_fields_but_for_the_limit_of_export():
    assert parsed("list") == TraceFilter()
    assert parsed("export") == TraceFilter(limit=None)


def test_no_confident_and_confident_exclude_each_other(capsys):
    with pytest.raises(SystemExit):
        parsed("list", "--confident", "--no-confident")
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "says"), [
    (["--since", "yesterday"], "expected an ISO date/time"),
    (["--min-latency-ms", "-1"], "expected a float >= 0"),
    (["--limit", "x"], "expected a int >= 0"),
    (["--attribute", "novalue"], "expected KEY=VALUE"),
])
def test_a_declared_parser_s_message_is_the_error(argv, says, capsys):
    with pytest.raises(SystemExit):
        parsed("list", *argv)
    assert f"argument {argv[0]}: {says}" in capsys.readouterr().err
