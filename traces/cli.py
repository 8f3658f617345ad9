"""``searchtrace traces``: list, show, export and prune the traces in the local store.

Exit codes as in the main CLI: 0 success, 1 failure (unknown trace, unreadable
store), 2 invalid input.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from searchtrace.database import add_store_argument, resolve_store_url
from searchtrace.errors import ExitCode
from searchtrace.home import Home, add_home_argument
from searchtrace.terminal import fit, width
from searchtrace.traces.receive.cli import register as register_collect
from searchtrace.traces.views.listing import SHORT_ID

if TYPE_CHECKING:  # the store pulls in the OpenTelemetry SDK, rich is slow to import: imported where used (sqlite3
    # too; the records load when the filter flags are built, from the fields' declarations)
    from searchtrace.traces.store.protocol import TraceStoreProtocol
    from searchtrace.traces.store.records import Flag, TraceDetail, TraceFilter, TraceSummary

MIN_PREFIX = 8
"""Fewest hex digits of a trace id ``traces show`` takes."""
_TRACE_ID = re.compile(rf"[0-9a-f]{{{MIN_PREFIX},32}}")


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``traces`` command and its subcommands (and ``collect``, the receiver) to a CLI's subparsers."""
    register_collect(subparsers)
    parser = subparsers.add_parser("traces", help="list, show, export and prune stored traces")
    sub = parser.add_subparsers(dest="traces_command", required=True)

    p = sub.add_parser("list", help="list traces, newest first",
                       description="List traces, newest first. The table fits the terminal's width ($COLUMNS; "
                                   "80 in a pipe): it shows the columns that fit, trace ids cut to their first "
                                   f"{SHORT_ID} digits (traces show takes them) and long text cut with '…'.")
    _add_filters(p, default_limit=50)
    output = p.add_mutually_exclusive_group()
    output.add_argument("--format", choices=list(_LIST_FORMATS), default="table",
                        help="table (default), tsv (every column, tab-separated, a header row, nothing cut) or json")
    output.add_argument("--json", dest="format", action="store_const", const="json", help="as --format json")
    p.add_argument("--wide", action="store_true", help="the table with every column, nothing cut, whatever the width")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="a trace's span tree with durations and key attributes",
                       description="A trace's span tree. Lines fit the terminal's width ($COLUMNS; 80 in a pipe): "
                                   "the attributes that do not fit on a span's line wrap onto indented lines below "
                                   "it, and a value longer than a line is cut with '…'.")
    p.add_argument("trace_id", help=f"32 hex digits, as in a search response's traceId, or a unique prefix of at "
                                    f"least {MIN_PREFIX} (traces list shows {SHORT_ID})")
    p.add_argument("--wide", action="store_true", help="one line per span, nothing cut, whatever the width")
    add_home_argument(p)
    add_store_argument(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("id-key", help="name the metadata key that holds a service's document ids, or list them",
                       description="Another retriever's spans may send no document.id (LangChain's put the id in "
                                   "document.metadata). Name the metadata key that holds it, per service "
                                   "(service.name): its stored searches are read again with it, and every later "
                                   "one. Without arguments, list the keys set; with SERVICE alone, show its key.")
    p.add_argument("service", nargs="?", help="the service (its resource's service.name); '*': every service "
                                              "without a key of its own")
    p.add_argument("key", nargs="?", help="the metadata key holding the document id")
    p.add_argument("--forget", action="store_true", help="forget SERVICE's key (its documents become unidentified)")
    add_home_argument(p)
    add_store_argument(p)
    p.set_defaults(func=cmd_id_key)

    p = sub.add_parser("export", help="write traces as OTLP JSON lines, one trace per line")
    p.add_argument("--format", choices=["jsonl"], default="jsonl", help="output format (default: jsonl)")
    p.add_argument("--out", help="output file (default: standard output)")
    _add_filters(p, default_limit=None)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("prune", help="delete old traces and give the space back (give at least one option)")
    p.add_argument("--older-than-days", type=_non_negative(float), metavar="N",
                   help="traces that started over N days ago")
    p.add_argument("--keep-last", type=_non_negative(int), metavar="N", help="all but the newest N traces")
    add_home_argument(p)
    add_store_argument(p)
    p.set_defaults(func=cmd_prune)

    p = sub.add_parser("status", help="where traces are kept, how many, and how many were dropped",
                       description="Where traces are kept (the home's file or the shared store), how many there "
                                   "are; the spans this home's processes lost on their way to a store or collector "
                                   "(how many, why, where to, since when: a full disk, a full buffer, a store out "
                                   "of reach, a failed export), from <home>/traces.losses; stores set aside as "
                                   "damaged; and, for a shared store, the spans every process dropped while it was "
                                   "out of reach with its buffer full.")
    add_home_argument(p)
    add_store_argument(p)
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("repair", help="set a damaged store aside, start a new one, and copy into it what "
                                      "SQLite can still read of the damaged ones")
    add_home_argument(p)
    p.set_defaults(func=cmd_repair)
    return parser


# -- handlers --------------------------------------------------------------------


def _store_errors(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Report an unreadable or locked store as one line and exit 1, not a traceback."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace) -> int:
        import sqlite3

        try:
            return handler(args)
        except sqlite3.Error as exc:
            fix = "; run `searchtrace traces repair`" if isinstance(exc, sqlite3.DatabaseError) and (
                "malformed" in str(exc) or "not a database" in str(exc)) else ""
            print(f"error: trace store {_store_file(args)}: {exc}{fix}", file=sys.stderr)
            return ExitCode.FAILURE

    return run


@_store_errors
def cmd_list(args: argparse.Namespace) -> int:
    if args.wide and args.format != "table":
        print(f"error: --wide goes with the table, not --format {args.format} (which is never cut)", file=sys.stderr)
        return ExitCode.INVALID
    columns = None if args.wide or args.format != "table" else width()  # a bad $COLUMNS is said before any work
    store = _open(args)
    summaries = store.list_traces(_filter(args)) if store else []
    if not summaries and args.format == "table":
        print(f"no traces{'' if store else ' yet'} in {_store_file(args)}", file=sys.stderr)
    elif store is not None and args.format in _WITH_SEARCHES and any(s.foreign for s in summaries):
        _WITH_SEARCHES[args.format](summaries, store, columns)
    else:
        _LIST_FORMATS[args.format](summaries, columns)
    return ExitCode.OK


@_store_errors
def cmd_id_key(args: argparse.Namespace) -> int:
    from searchtrace.traces.views.searches import id_key_lines

    columns = width()
    if (args.key is not None or args.forget) and not (args.service or "").strip():
        print("error: traces id-key: give the SERVICE whose key to set or forget", file=sys.stderr)
        return ExitCode.INVALID
    if args.key is not None and (args.forget or not args.key.strip()):
        print("error: traces id-key: give a KEY (not empty) or --forget, not both", file=sys.stderr)
        return ExitCode.INVALID
    if args.key is None and not args.forget:
        store = _open(args)
        keys = store.doc_id_keys() if store else {}
        shown = {s: k for s, k in keys.items() if args.service in (None, s)}
        for line in id_key_lines(shown, columns):
            print(line)
        if not shown:
            print(f"no document-id key set{f' for {args.service!r}' if args.service else ''} in "
                  f"{_store_file(args)}", file=sys.stderr)
        return ExitCode.OK
    from searchtrace.traces.store.opening import open_trace_store

    store = open_trace_store(Home.resolve(args.home).traces, resolve_store_url(getattr(args, "store", None))).open()
    try:
        n = store.set_doc_id_key(args.service, None if args.forget else args.key.strip())
    finally:
        store.close()
    what = "forgotten" if args.forget else f"set to {args.key.strip()!r}"
    print(fit(f"{args.service}: document-id key {what}; {n} stored search{'es' if n != 1 else ''} read again",
              columns))
    return ExitCode.OK


@_store_errors
def cmd_show(args: argparse.Namespace) -> int:
    columns = None if args.wide else width()  # a bad $COLUMNS is said before any work
    store = _open(args)
    trace_id = _one_trace(args, store)
    detail = store.load_trace(trace_id) if store and trace_id else None
    if detail is None:  # an id that names nothing: bad input, as everywhere (said by _one_trace, or pruned since)
        if trace_id:
            print(f"error: no trace {trace_id!r} in {_store_file(args)}", file=sys.stderr)
        return ExitCode.INVALID
    _print_tree(detail, columns)
    if detail.summary.foreign:
        from searchtrace.traces.store.records import SearchFilter
        from searchtrace.traces.views.searches import document_lines

        for search in store.searches(SearchFilter(trace_ids=(detail.summary.trace_id,))) if store else ():
            print()
            print("\n".join(document_lines(search, columns)))
    if len(detail.spans) < detail.summary.n_spans:
        print(f"partial: {len(detail.spans)} of its {detail.summary.n_spans} spans were recovered by "
              "`traces repair`; the others were lost with the damaged store", file=sys.stderr)
    return ExitCode.OK


def _one_trace(args: argparse.Namespace, store: TraceStoreProtocol | None) -> str | None:
    """The one stored trace whose id is or begins with ``args.trace_id``; None, said in one line, if none or many."""
    given = args.trace_id.strip().lower()
    if not _TRACE_ID.fullmatch(given):
        print(f"error: a trace id is 32 hex digits, or a prefix of at least {MIN_PREFIX}; got {args.trace_id!r}",
              file=sys.stderr)
        return None
    matches = store.trace_ids_starting(given) if store else []
    if len(matches) != 1:
        problem = "begins several trace ids: give more digits" if matches else "names no trace"
        print(f"error: {args.trace_id!r} {problem} in {_store_file(args)}", file=sys.stderr)
        return None
    return matches[0]


@_store_errors
def cmd_export(args: argparse.Namespace) -> int:
    from searchtrace.traces.export.otlp_json import export_jsonl
    from searchtrace.traces.store.records import TraceOrder

    if _filter(args).order is not TraceOrder.NEWEST:
        print("error: traces export writes oldest first; --order goes with traces list", file=sys.stderr)
        return ExitCode.INVALID
    store = _open(args)
    if args.out:
        try:
            out = open(args.out, "w", encoding="utf-8")
        except OSError as exc:
            print(f"error: cannot write {args.out}: {exc.strerror}", file=sys.stderr)
            return ExitCode.FAILURE
        with out:
            n = export_jsonl(store, out, _filter(args)) if store else 0
        print(f"exported {n} traces to {args.out}", file=sys.stderr)
    elif store:
        export_jsonl(store, sys.stdout, _filter(args))
    return ExitCode.OK


@_store_errors
def cmd_prune(args: argparse.Namespace) -> int:
    if args.older_than_days is None and args.keep_last is None:
        print("error: prune needs --older-than-days N and/or --keep-last N", file=sys.stderr)
        return ExitCode.INVALID
    store = _open(args)
    if store is None:
        print(f"no traces yet in {_store_file(args)}")
        return ExitCode.OK
    if not store.capabilities.reclaims_space_on_prune:  # the shared store: autovacuum gives it to later writes
        deleted = store.prune(args.older_than_days, args.keep_last)
        print(f"pruned {deleted} traces; {store.count()} left in {store.location}")
        return ExitCode.OK
    before = store.size_bytes() or 0
    deleted = store.prune(args.older_than_days, args.keep_last)
    after = store.size_bytes() or 0
    print(f"pruned {deleted} traces; {store.count()} left; the store went from {before / 2**20:.1f} MiB "
          f"to {after / 2**20:.1f} MiB")
    return ExitCode.OK


@_store_errors
def cmd_status(args: argparse.Namespace) -> int:
    print(f"store     {_store_file(args)}")
    _print_losses(args)  # first: a store too damaged to read, or never made (a full disk), has them too
    store = _open(args)
    if store is None:
        print("traces    none yet")
        return ExitCode.OK
    print(f"traces    {store.count():,}")
    if store.capabilities.shared:
        print(f"dropped   {store.dropped():,} spans (by processes whose buffer was full while the store was "
              "out of reach)")
    if (size := store.size_bytes()) is not None:
        print(f"size      {size / 2**20:.1f} MiB")
    return ExitCode.OK


def _print_losses(args: argparse.Namespace) -> None:
    """The spans this home's processes lost (``export.losses``), one block per reason and destination, and the
    damaged stores set aside beside the home's."""
    from searchtrace.traces.export.losses import LossLedger
    from searchtrace.traces.store.damage import damaged_copies

    home = Home.resolve(args.home)
    losses = LossLedger(home.trace_losses).read()
    if not losses:
        print("lost      none counted")
    for loss in losses:
        print(f"lost      {loss.spans:,} spans: {loss.reason} ({loss.events:,} times)")
        print(f"            to    {loss.target}")
        print(f"            from  {_utc(loss.first_ns)} to {_utc(loss.last_ns)}")
    if resolve_store_url(getattr(args, "store", None)) is None:
        for copy in damaged_copies(home.traces):
            print(f"set aside {copy.name} (damaged; `traces repair` salvages it)")


def _utc(ns: int) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ns / 1e9))


@_store_errors
def cmd_repair(args: argparse.Namespace) -> int:
    from searchtrace.traces.store.repair import repair

    path = Home.resolve(args.home).traces
    salvaged = repair(path)
    if not salvaged:
        print(f"nothing to repair in {path}")
    for s in salvaged:
        skipped = f", {s.unreadable_rows} unreadable rows skipped" if s.unreadable_rows else ""
        print(f"copied {s.traces} traces and {s.spans} spans of {s.source.name}{skipped} into {path}")
        if s.partial_traces:
            print(f"{s.partial_traces} traces are partial: {s.lost_spans} of their spans could not be read "
                  "(traces show says which traces)")
    return ExitCode.OK


# -- rendering -------------------------------------------------------------------


def _print_json(summaries: list[TraceSummary], columns: int | None) -> None:
    print(json.dumps([s.to_dict() for s in summaries], indent=2, ensure_ascii=False))


def _print_tsv(summaries: list[TraceSummary], columns: int | None) -> None:
    from searchtrace.traces.views.listing import tsv

    sys.stdout.write(tsv(summaries))


def _print_table(summaries: list[TraceSummary], columns: int | None) -> None:
    from searchtrace.traces.views.listing import table

    for line in table(summaries, columns):
        print(line)


_LIST_FORMATS: dict[str, Callable[[list[TraceSummary], int | None], None]] = {
    "table": _print_table, "tsv": _print_tsv, "json": _print_json}
"""``traces list``'s output formats; each takes the traces and the width (None: whatever it takes)."""


def _table_with_searches(summaries: list[TraceSummary], store: TraceStoreProtocol, columns: int | None) -> None:
    from searchtrace.traces.views.searches import searches_of, table_with_searches

    print("\n".join(table_with_searches(summaries, searches_of(store, summaries), columns)))


def _json_with_searches(summaries: list[TraceSummary], store: TraceStoreProtocol, columns: int | None) -> None:
    from searchtrace.traces.views.searches import json_with_searches, searches_of

    print(json_with_searches(summaries, searches_of(store, summaries)))


_WITH_SEARCHES: dict[str, Callable[[list[TraceSummary], TraceStoreProtocol, int | None], None]] = {
    "table": _table_with_searches, "json": _json_with_searches}
"""The formats that show a foreign trace's searches under it (tsv stays one row per trace)."""


def _print_tree(detail: TraceDetail, columns: int | None) -> None:
    from rich.console import Console

    from searchtrace.traces.views.tree import tree_lines

    console = Console(width=columns or 100_000)  # a line is never wrapped again: the tree is laid out already
    for line in tree_lines(detail, columns):
        console.print(line, soft_wrap=True)


# -- arguments -------------------------------------------------------------------


def add_search_flags(p: argparse.ArgumentParser) -> None:
    """``--since``, ``--until``, ``--mode`` and ``--no-confident``/``--confident``: which stored searches, by when,
    how and what they found (``traces list`` and ``queries from-traces`` take the same)."""
    for name, flag in filter_flags():
        if flag.search:
            _add_flag(p, flag, _default(name))


def _add_filters(p: argparse.ArgumentParser, default_limit: int | None) -> None:
    """Every :class:`TraceFilter` field's flag, as the field declares it (``records.Flag``), in the fields'
    order, the search flags first; ``--limit``'s default is the command's."""
    add_search_flags(p)
    for name, flag in filter_flags():
        if not flag.search:
            _add_flag(p, flag, default_limit if name == "limit" else _default(name))
    add_home_argument(p)
    add_store_argument(p)


def filter_flags() -> list[tuple[str, Flag]]:
    """(field name, its flag) of each :class:`TraceFilter` field that declares one, in the fields' order."""
    from dataclasses import fields

    from searchtrace.traces.store.records import FLAG, TraceFilter

    return [(f.name, f.metadata[FLAG]) for f in fields(TraceFilter) if f.metadata.get(FLAG) is not None]


def _default(name: str) -> Any:
    """The field's default: the flag's, so that a flag left out leaves the field as :class:`TraceFilter` has it."""
    from dataclasses import MISSING

    from searchtrace.traces.store.records import TraceFilter

    declared = TraceFilter.__dataclass_fields__[name]
    return declared.default_factory() if declared.default is MISSING and declared.default_factory is not MISSING \
        else declared.default


def _add_flag(p: argparse.ArgumentParser, flag: Flag, default: Any) -> None:
    help_text = flag.help.format(default="all" if default is None else default)
    if flag.switch:
        group = p.add_mutually_exclusive_group() if flag.opposite else p
        group.add_argument(flag.name, dest=flag.dest, action="store_const", const=flag.const, default=default,
                           help=help_text)
        if flag.opposite:
            name, opposite_help = flag.opposite
            group.add_argument(name, dest=flag.dest, action="store_const", const=not flag.const, default=default,
                               help=opposite_help)
        return
    options: dict[str, Any] = {"default": default, "help": help_text}
    if flag.metavar is not None:
        options["metavar"] = flag.metavar
    if flag.parse is not None:
        options["type"] = _argument_type(flag.parse)
    if flag.choices is not None:
        options["choices"] = list(flag.choices)
    if flag.nargs is not None:
        options.update(nargs=flag.nargs, const=flag.const)
    p.add_argument(flag.name, **options)


def _argument_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse`` for argparse: its ValueError's message is the error argparse prints."""
    def parsed(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parsed.__name__ = getattr(parse, "__name__", "value")
    return parsed


def _filter(args: argparse.Namespace) -> TraceFilter:
    """The filter the flags say, each field from its flag's value (converted as it declares); a field without a
    flag keeps its default."""
    from searchtrace.traces.store.records import TraceFilter

    values = {}
    for name, flag in filter_flags():
        value = getattr(args, flag.dest)
        values[name] = flag.convert(value) if flag.convert is not None and value is not None else value
    return TraceFilter(**values)


def _store_file(args: argparse.Namespace) -> Path | str:
    """Where the traces are, as said in messages: the shared store's URL (masked), else the home's file."""
    url = resolve_store_url(getattr(args, "store", None))
    return url.masked() if url is not None else Home.resolve(args.home).traces


def _open(args: argparse.Namespace) -> TraceStoreProtocol | None:
    """The shared store (``--store``, ``$SEARCHTRACE_STORE``; its schema checked now), else the home's store, or
    None when no search has written one yet (reads never create it).

    A damaged file is said to be damaged (SQLite's quick check: 43 ms for 10,000 traces, 69 MiB:
    ``benchmarks/bench_integrity.py``), never read as if whole: the caller's ``_store_errors`` turns that into
    one line naming ``traces repair``.
    """
    import sqlite3

    from searchtrace.traces.store.damage import is_damaged
    from searchtrace.traces.store.opening import existing_trace_store

    url = resolve_store_url(getattr(args, "store", None))
    path = Home.resolve(args.home).traces
    store = existing_trace_store(path, url)
    if store is None:
        return None
    if url is not None:
        return store.open()
    if is_damaged(path):
        raise sqlite3.DatabaseError("database disk image is malformed (its integrity check fails)")
    return store


def _non_negative(kind: type) -> Callable[[str], Any]:
    from searchtrace.traces.store.records import non_negative

    return _argument_type(non_negative(kind))
