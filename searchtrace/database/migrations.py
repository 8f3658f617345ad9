"""The shared store's schema, versioned: migrations applied by ``searchtrace store migrate``.

The floor numbers the steps and runs them; each step's SQL lives beside the store it serves (the traces'
in ``traces.store.postgres_schema``, the runs' and the judgments' in their ``store/`` folders under
``evals``), which declares it as a :class:`Migration`. The floor imports none of them: the caller
passes the list (the roof assembles it, ``searchtrace.cli.migrations``), and :func:`migrate` refuses a list that is not exactly versions 1 to :data:`SCHEMA_VERSION`.

Each migration is one transaction, recorded in ``searchtrace_schema`` with its
version; ``migrate`` takes an advisory lock first, so processes migrating at once
apply each migration once. Every process checks the version before it uses the
store (:func:`check_version`): a store older than this client is refused with the
command that brings it up to date, one newer with the versions each side has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from searchtrace.errors import ValidationError

if TYPE_CHECKING:
    import psycopg

    from searchtrace.database.pool import Database
    from searchtrace.database.url import StoreUrl

__all__ = ["SCHEMA_VERSION", "Migration", "StoreVersionError", "check_version", "migrate",
           "store_version", "version_problem"]

_LOCK_KEY = 0x5EA2C47A  # pg_advisory_xact_lock key of a migration in progress


class StoreVersionError(ValidationError):
    """A store whose schema this client cannot use (older: migrate it; newer: upgrade searchtrace)."""


@dataclass(frozen=True)
class Migration:
    """One step of the schema: its version (1, 2, ...), a name, and the SQL it runs."""

    version: int
    name: str
    sql: str


SCHEMA_VERSION = 4
"""The schema version this client reads and writes: the last of the migrations the stores declare (1: traces,
``traces.store.postgres_schema``; 2: runs, ``evals.runs.store.schema``; 3: judgments,
``evals.labels.judgments.store.schema``; 4: another retriever's searches, ``traces.store.postgres_schema``).
A store that adds a step declares ``Migration(SCHEMA_VERSION + 1, ...)`` beside itself, adds it to the roof's
list and raises this number."""

_TABLE = """CREATE TABLE IF NOT EXISTS searchtrace_schema (
    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"""


def store_version(conn: psycopg.Connection[Any]) -> int:
    """The store's schema version (0: never migrated)."""
    row = conn.execute("SELECT to_regclass('searchtrace_schema') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return 0
    found = conn.execute("SELECT max(version) FROM searchtrace_schema").fetchone()
    return int(found[0]) if found and found[0] is not None else 0


def migrate(db: Database, migrations: Sequence[Migration], *,
            on_step: Callable[[Migration], None] | None = None) -> tuple[int, int]:
    """Apply every one of ``migrations`` the store lacks, each in its own transaction; returns (version before,
    after). ``migrations``: every step of this client's schema, from each store (``searchtrace.cli.migrations``).

    Raises:
        ValueError: ``migrations`` are not exactly versions 1 to :data:`SCHEMA_VERSION`.
        StoreVersionError: the store is newer than this client (nothing changed).
        BackendUnavailable: the server cannot be reached.
    """
    steps = sorted(migrations, key=lambda m: m.version)
    if [m.version for m in steps] != list(range(1, SCHEMA_VERSION + 1)):
        raise ValueError(f"migrations must be versions 1 to {SCHEMA_VERSION}, one each; got "
                         f"{[m.version for m in steps]}")
    with db.connection() as conn:
        before = store_version(conn)
        _refuse_newer(db, before)
        for step in steps:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                conn.execute(_TABLE)
                if conn.execute("SELECT 1 FROM searchtrace_schema WHERE version = %s", (step.version,)).fetchone():
                    continue  # applied before, or by another process while this one waited for the lock
                conn.execute(step.sql.encode())
                conn.execute("INSERT INTO searchtrace_schema (version, name) VALUES (%s, %s)",
                             (step.version, step.name))
            if on_step is not None:
                on_step(step)
        return before, store_version(conn)


def check_version(db: Database) -> None:
    """Refuse a store this client cannot use; returns quietly when its version is this client's.

    Raises:
        StoreVersionError: one line saying which version the store and this client have, and what to do.
        BackendUnavailable: the server cannot be reached.
    """
    with db.connection() as conn:
        found = store_version(conn)
    problem = version_problem(db.url, found)
    if problem is not None:
        raise StoreVersionError(problem, field="store")


def version_problem(url: StoreUrl, found: int) -> str | None:
    """Why a store at schema version ``found`` cannot be used, and what to do, in one line (None: it can).

    Older (0: never migrated): the command that migrates it, with the store's URL masked; newer: both versions.
    """
    if found > SCHEMA_VERSION:
        return (f"store {url.masked()} is at schema version {found}, newer than this searchtrace (version "
                f"{SCHEMA_VERSION}): upgrade searchtrace")
    if found < SCHEMA_VERSION:
        what = "has no searchtrace schema" if found == 0 else f"is at schema version {found}"
        return (f"store {url.masked()} {what}; this searchtrace needs version {SCHEMA_VERSION}: "
                f"run `{url.command('store migrate')}`")
    return None


def _refuse_newer(db: Database, found: int) -> None:
    if found > SCHEMA_VERSION:
        raise StoreVersionError(str(version_problem(db.url, found)), field="store")
