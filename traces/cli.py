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

from searchtrace.errors import ExitCode
from searchtrace.home import Home, add_home_argument
from searchtrace.names import Band
from searchtrace.traces import vocabulary as v

if TYPE_CHECKING:  # the store pulls in the OpenTelemetry SDK, rich is slow to import: imported where used
    from datetime import datetime  # (sqlite3, datetime and the records too: --help need not load them)

    from rich.console import Console
    from rich.text import Text
    from rich.tree import Tree

    from searchtrace.traces.records import SpanRecord, TraceDetail, TraceFilter, TraceSummary
    from searchtrace.traces.store import TraceStore

_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``traces`` command and its subcommands to a CLI's subparsers."""
    parser = subparsers.add_parser("traces", help="list, show, export and prune stored traces")
    sub = parser.add_subparsers(dest="traces_command", required=True)

    p = sub.add_parser("list", help="list traces, newest first")
    _add_filters(p, default_limit=50)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("show", help="a trace's span tree with durations and key attributes")
    p.add_argument("trace_id", help="32 hex digits, as in a search response's traceId")
    add_home_argument(p)
    p.set_defaults(func=cmd_show)

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
    p.set_defaults(func=cmd_prune)

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
    store = _open(args)
    summaries = store.list_traces(_filter(args)) if store else []
    if args.json:
        print(json.dumps([s.to_dict() for s in summaries], indent=2, ensure_ascii=False))
    elif not summaries:
        print(f"no traces{'' if store else ' yet'} in {_store_file(args)}", file=sys.stderr)
    else:
        _print_table(summaries)
    return ExitCode.OK


@_store_errors
def cmd_show(args: argparse.Namespace) -> int:
    store = _open(args)
    detail = store.load_trace(args.trace_id.strip()) if store else None
    if detail is None:
        print(f"error: no trace {args.trace_id!r} in {_store_file(args)}", file=sys.stderr)
        return ExitCode.INVALID  # an id that names nothing: bad input, as everywhere
    _console().print(span_tree(detail))
    if len(detail.spans) < detail.summary.n_spans:
        print(f"partial: {len(detail.spans)} of its {detail.summary.n_spans} spans were recovered by "
              "`traces repair`; the others were lost with the damaged store", file=sys.stderr)
    return ExitCode.OK


@_store_errors
def cmd_export(args: argparse.Namespace) -> int:
    from searchtrace.traces.otlp_json import export_jsonl

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
    before = store.path.stat().st_size
    deleted = store.prune(args.older_than_days, args.keep_last)
    after = store.path.stat().st_size
    print(f"pruned {deleted} traces; {store.count()} left; the store went from {before / 2**20:.1f} MiB "
          f"to {after / 2**20:.1f} MiB")
    return ExitCode.OK


@_store_errors
def cmd_repair(args: argparse.Namespace) -> int:
    from searchtrace.traces.repair import repair

    path = _store_file(args)
    salvaged = repair(path)
    if not salvaged:
        print(f"{path}: nothing to repair")
    for s in salvaged:
        skipped = f", {s.unreadable_rows} unreadable rows skipped" if s.unreadable_rows else ""
        print(f"copied {s.traces} traces and {s.spans} spans of {s.source.name} into {path}{skipped}")
        if s.partial_traces:
            print(f"{s.partial_traces} traces are partial: {s.lost_spans} of their spans could not be read "
                  "(traces show says which traces)")
    return ExitCode.OK


# -- rendering -------------------------------------------------------------------


def span_tree(detail: TraceDetail) -> Tree:
    """A rich Tree of the trace's spans, children in start order."""
    from rich.tree import Tree

    ids = {s.span_id for s in detail.spans}
    children: dict[str | None, list[SpanRecord]] = {}
    for span in detail.spans:  # already in start order
        children.setdefault(span.parent_id if span.parent_id in ids else None, []).append(span)
    s = detail.summary
    tree = Tree(f"trace {s.trace_id}  {s.start.astimezone():%Y-%m-%d %H:%M:%S}  {s.duration_ms:.1f} ms"
                f"  {s.n_spans} spans{'' if s.complete else '  (root span not stored yet)'}", highlight=False)

    def add(node: Tree, span: SpanRecord) -> None:
        branch = node.add(_span_label(span))
        for child in children.get(span.span_id, []):
            add(branch, child)

    for root in children.get(None, []):
        add(tree, root)
    return tree


def _span_label(span: SpanRecord) -> Text:
    from rich.text import Text

    label = Text.assemble((span.name, "bold red" if span.status == "ERROR" else "bold"), f"  {span.duration_ms:.1f} ms")
    for key, fmt in _HIGHLIGHTS:
        if key in span.attributes and (text := fmt(span.attributes[key])):
            label.append(f"  {text}")
    exceptions = [e.attributes for e in span.events if e.name == "exception"]
    for exc in exceptions:  # OpenTelemetry's exception event (semconv exception.type / exception.message)
        label.append(f"  {exc.get('exception.type')}: {exc.get('exception.message')}", style="red")
    if span.status == "ERROR" and not exceptions:
        label.append(f"  error: {span.status_message or ''}", style="red")
    return label


def _top(values: Any, n: int = 3) -> str:
    values = list(values)
    return ", ".join(map(str, values[:n])) + (f", … (+{len(values) - n})" if len(values) > n else "")


_HIGHLIGHTS: list[tuple[str, Callable[[Any], str]]] = [
    (v.INPUT_VALUE, lambda x: f"query={x!r}"),
    (v.MODE, lambda x: f"mode={x}"),
    (v.TOP_K, lambda x: f"top_k={x}"),
    (v.ERROR_CODE, lambda x: f"error={x}"),
    (v.DETECTED_ENTITIES, lambda x: f"entities=[{_top(x)}]"),
    (v.REWRITE_TERMS, lambda x: f"terms=[{_top(x)}]"),
    (v.EMBED_PRECOMPUTED, lambda x: "precomputed" if x else ""),
    (v.CANDIDATE_COUNT, lambda x: f"candidates={x}"),
    (v.CANDIDATE_IDS, lambda x: f"top=[{_top(x)}]"),
    (v.GRAPH_HITS, lambda x: f"triples={x}"),
    (v.FUSION_METHOD, lambda x: f"fusion={x}"),
    (v.RERANKER_MODEL_NAME, lambda x: f"reranker={x}"),
    (v.RERANKER_TOP_K, lambda x: f"keep={x}"),
    (v.FILTER_DROPPED_IDS, lambda x: f"dropped={len(x)}"),
    (v.RESULT_IDS, lambda x: f"results=[{_top(x, 5)}]"),
    (v.RESULT_BANDS, lambda x: f"bands=[{_top(x, 5)}]"),
    (v.BEST_SCORE, lambda x: f"bestScore={x:.3f}"),
    (v.NO_CONFIDENT_RESULTS, lambda x: "noConfidentResults" if x else ""),
    (v.DEGRADED, lambda x: f"degraded=[{', '.join(x)}]" if x else ""),
    (v.RETRY_DETECTED_ENTITIES, lambda x: f"retry.entities=[{_top(x)}]"),
    (v.RETRY_RELATED_TERMS, lambda x: f"retry.related=[{_top(x)}]"),
    (v.RETRY_NARROWER, lambda x: f"retry.narrower={x!r}" if x else ""),
    (v.RETRY_BROADER, lambda x: f"retry.broader={x!r}" if x else ""),
    (v.RUN_ID, lambda x: f"run={x}"),
    (v.QUERY_ID, lambda x: f"qid={x}"),
]


def _console() -> Console:
    from rich.console import Console

    # Piped output is not cut to 80 columns: a line per span or trace, for grep and less.
    return Console() if sys.stdout.isatty() else Console(width=100_000)


def _print_table(summaries: list[TraceSummary]) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table()
    for col, justify in (("start", "left"), ("trace id", "left"), ("ms", "right"), ("mode", "left"),
                         ("best", "right"), ("bands", "left"), ("flags", "left"), ("query", "left")):
        table.add_column(col, justify=justify, no_wrap=col in ("trace id", "start"))  # type: ignore[arg-type]
    for s in summaries:
        flags = [f for f, on in (("no-confident", s.no_confident), ("degraded:" + ",".join(s.degraded), s.degraded),
                                 (f"error:{s.error_code}", s.error_code)) if on]
        table.add_row(f"{s.start.astimezone():%Y-%m-%d %H:%M:%S}", s.trace_id, f"{s.duration_ms:.1f}", s.mode or "",
                      "" if s.best_score is None else f"{s.best_score:.3f}", ",".join(s.bands),
                      Text(" ".join(flags)), Text((s.query or "")[:60]))
    _console().print(table)


# -- arguments -------------------------------------------------------------------


def _add_filters(p: argparse.ArgumentParser, default_limit: int | None) -> None:
    p.add_argument("--since", type=_when, help="ISO date/time (local unless it has an offset) or an age: 30m, 2h, 7d")
    p.add_argument("--until", type=_when, help="as --since; exclusive")
    p.add_argument("--mode", choices=["fast", "graph"], help="only searches in this mode (default: any)")
    p.add_argument("--band", choices=[b.value for b in Band], help="traces with a result in this confidence band")
    confident = p.add_mutually_exclusive_group()
    confident.add_argument("--no-confident", dest="no_confident", action="store_const", const=True,
                           help="only searches that found no confident result")
    confident.add_argument("--confident", dest="no_confident", action="store_const", const=False,
                           help="only searches that found a confident result")
    p.add_argument("--degraded", nargs="?", const=True, metavar="STAGE",
                   help="only degraded searches (any stage, or the one named)")
    p.add_argument("--min-latency-ms", type=_non_negative(float), metavar="MS",
                   help="only searches that took at least MS milliseconds")
    p.add_argument("--run-id", help="only the searches of this eval run")
    p.add_argument("--query", help="case-insensitive text in the query")
    p.add_argument("--limit", type=_non_negative(int), default=default_limit,
                   help=f"at most this many traces (default: {default_limit or 'all'})")
    p.add_argument("--offset", type=_non_negative(int), default=0, help="skip this many, newest first (default: 0)")
    add_home_argument(p)


def _filter(args: argparse.Namespace) -> TraceFilter:
    from searchtrace.traces.records import TraceFilter

    return TraceFilter(since=args.since, until=args.until, mode=args.mode, band=args.band,
                       no_confident=args.no_confident, degraded=args.degraded, min_latency_ms=args.min_latency_ms,
                       run_id=args.run_id, query_text=args.query, limit=args.limit, offset=args.offset)


def _store_file(args: argparse.Namespace) -> Path:
    return Home.resolve(args.home).traces


def _open(args: argparse.Namespace) -> TraceStore | None:
    """The store, or None when no search has written one yet (reads never create it).

    A damaged store is said to be damaged (SQLite's quick check: 43 ms for 10,000 traces, 69 MiB:
    ``benchmarks/bench_integrity.py``), never read
    as if whole: the caller's ``_store_errors`` turns that into one line naming ``traces repair``.
    """
    import sqlite3

    from searchtrace.traces.damage import is_damaged
    from searchtrace.traces.store import TraceStore

    path = _store_file(args)
    if not path.exists():
        return None
    if is_damaged(path):
        raise sqlite3.DatabaseError("database disk image is malformed (its integrity check fails)")
    return TraceStore(path)


def _when(text: str) -> datetime:
    from datetime import datetime, timedelta

    relative = _RELATIVE.match(text.strip())
    if relative:
        return datetime.now().astimezone() - timedelta(**{_UNITS[relative[2]]: float(relative[1])})
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an ISO date/time or an age like 30m, 2h, 7d; got {text!r}") from None


def _non_negative(kind: type) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = -1
        if value < 0:
            raise argparse.ArgumentTypeError(f"expected a {kind.__name__} >= 0; got {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse
