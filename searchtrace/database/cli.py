"""``searchtrace store``: bring the shared store's schema up to date, and say what it holds."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from searchtrace.database.url import StoreUrl, add_store_argument, resolve_store_url
from searchtrace.errors import ConfigError, ExitCode

if TYPE_CHECKING:
    from searchtrace.database.migrations import Migration

__all__ = ["register"]


def register(sub: argparse._SubParsersAction, migrations: Callable[[], Sequence[Migration]]) -> None:
    """Add ``searchtrace store``; ``migrations`` gives every store's schema step (the roof's list)."""
    store = sub.add_parser("store", help="the shared PostgreSQL store: migrate its schema, show its state",
                           description="The store a team shares (traces, runs, judgments) on PostgreSQL.")
    commands = store.add_subparsers(dest="store_command", required=True, metavar="COMMAND")
    migrate = commands.add_parser("migrate", help="apply the schema migrations the store lacks",
                                  description="Apply every schema migration the store lacks, each in its own "
                                              "transaction (safe to run from several processes at once).")
    add_store_argument(migrate)
    migrate.set_defaults(func=_migrate, migrations=migrations)
    status = commands.add_parser("status", help="the store's schema version and what it holds")
    add_store_argument(status)
    status.set_defaults(func=_status)


def _url(args: argparse.Namespace) -> StoreUrl:
    url = resolve_store_url(args.store)
    if url is None:
        raise ConfigError("no store given: pass --store postgresql://... or set $SEARCHTRACE_STORE "
                          "(the home folder needs no migration)", field="store")
    return url


def _migrate(args: argparse.Namespace) -> int:
    from searchtrace.database.migrations import SCHEMA_VERSION, migrate
    from searchtrace.database.pool import Database

    db = Database(_url(args))
    try:
        before, after = migrate(db, args.migrations(), on_step=lambda m: print(f"applied {m.version}: {m.name}", file=sys.stderr))
    finally:
        db.close()
    if before == after:
        print(f"store {db.url.masked()} is up to date (schema version {after})")
    else:
        print(f"store {db.url.masked()} migrated from schema version {before} to {after} "
              f"(this searchtrace: {SCHEMA_VERSION})")
    return int(ExitCode.OK)


def _status(args: argparse.Namespace) -> int:
    from searchtrace.database.migrations import SCHEMA_VERSION, store_version, version_problem
    from searchtrace.database.pool import Database

    db = Database(_url(args))
    try:
        with db.connection() as conn:
            found = store_version(conn)
            tables = {}
            if found:
                rows = conn.execute("SELECT relname, greatest(reltuples, 0)::bigint FROM pg_class "
                                    "WHERE relkind = 'r' AND relname LIKE 'st\\_%' ORDER BY relname").fetchall()
                tables = {name: int(n) for name, n in rows}
    finally:
        db.close()
    print(f"store        {db.url.masked()}")
    print(f"schema       version {found} (this searchtrace: {SCHEMA_VERSION})")
    for name, n in tables.items():
        print(f"{name:<12} about {n:,} rows")
    problem = version_problem(db.url, found)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
    return int(ExitCode.OK if problem is None else ExitCode.FAILURE)
