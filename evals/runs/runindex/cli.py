"""``searchtrace runs push | export | list``: runs between folders and the store a team shares."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from searchtrace.database.url import add_store_argument
from searchtrace.errors import ExitCode
from searchtrace.home import add_home_argument

if TYPE_CHECKING:
    from searchtrace.database import StoreUrl

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``runs`` and its commands to ``sub`` (the main parser's subparsers)."""
    runs = sub.add_parser("runs", help="publish run folders to the shared store, export them, list runs",
                          description="Runs in the store a team shares (or, without one, the home's run folders).")
    commands = runs.add_subparsers(dest="runs_command", required=True, metavar="COMMAND")
    p = commands.add_parser("push", help="publish a completed run folder to the store (again: no change)")
    p.add_argument("folder", metavar="DIR", help="a completed run folder")
    add_store_argument(p)
    p.set_defaults(func=cmd_push)
    p = commands.add_parser("export", help="write a run of the store as a run folder")
    p.add_argument("run", metavar="RUN", help="a run id, a name (its newest run) or latest:tag=NAME")
    p.add_argument("--out", required=True, metavar="DIR", help="the run folder to write (must not exist)")
    add_store_argument(p)
    add_home_argument(p)
    p.set_defaults(func=cmd_export)
    p = commands.add_parser("list", help="the runs, newest first")
    p.add_argument("--tag", help="only the runs with this tag")
    add_store_argument(p)
    add_home_argument(p)
    p.set_defaults(func=cmd_list)


def _required_store(args: argparse.Namespace) -> StoreUrl:
    from searchtrace.database import resolve_store_url
    from searchtrace.errors import ConfigError

    url = resolve_store_url(args.store)
    if url is None:
        raise ConfigError("no store given: pass --store postgresql://... or set $SEARCHTRACE_STORE", field="store")
    return url


def cmd_push(args: argparse.Namespace) -> int:
    from searchtrace.evals.runs.runfolder import RunFolder
    from searchtrace.evals.runs.store.opening import open_store_index
    from searchtrace.evals.runs.store.snapshot import read_snapshot

    url = _required_store(args)
    snapshot = read_snapshot(RunFolder(args.folder))
    index = open_store_index(url)
    added = index.publish(snapshot)
    from searchtrace.evals.runs.runindex.publish import published_lines
    from searchtrace.terminal import width

    print("\n".join(published_lines(snapshot.run_id, added, index.where, width())))
    return int(ExitCode.OK)


def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from searchtrace.database import resolve_store_url
    from searchtrace.evals.runs.store.entry import RunSelector
    from searchtrace.evals.runs.store.materialize import write_folder
    from searchtrace.evals.runs.store.opening import open_run_index
    from searchtrace.home import Home

    index = open_run_index(resolve_store_url(args.store), Home.resolve(args.home))
    entry = index.find(RunSelector.parse(args.run))
    write_folder(index.snapshot(entry.run_id).files, Path(args.out))
    print(f"run {entry.run_id} written to {args.out}")
    return int(ExitCode.OK)


def cmd_list(args: argparse.Namespace) -> int:
    from searchtrace.database import resolve_store_url
    from searchtrace.evals.runs.store.opening import open_run_index
    from searchtrace.home import Home
    from searchtrace.terminal import fit, one_line, width

    url, home = resolve_store_url(args.store), Home.resolve(args.home)
    index = open_run_index(url, home)
    entries = index.entries(args.tag)
    columns = width()
    for e in entries:
        tags = f"  [{', '.join(e.tags)}]" if e.tags else ""
        line = f"{e.created_at:%Y-%m-%d %H:%M}  {e.run_id}  {e.name or '-'}{tags}"
        print(fit(one_line(line), columns))
    what = f"with tag {args.tag!r} " if args.tag else ""
    print(f"{len(entries)} runs {what}in {index.where}", file=sys.stderr)
    if url is None:
        from searchtrace.evals.runs.runfolder.outside import outside_runs

        gone = outside_runs(home).gone
        if gone:
            print(fit(f"note: gone, though {home.runs_outside.name} lists them (written with --out):", columns),
                  file=sys.stderr)
        for path in gone:
            print(f"  {path}", file=sys.stderr)  # a path is copied whole, never cut to the width
    return int(ExitCode.OK)
