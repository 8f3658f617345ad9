"""The shared store's floor: its URL (never shown with a password), connections, versioned schema, `store` commands."""

from __future__ import annotations

import threading

import pytest

from searchtrace.cli import main, migrations
from searchtrace.database import (
    SCHEMA_VERSION,
    Database,
    StoreUrl,
    StoreVersionError,
    check_version,
    migrate,
    resolve_store_url,
    store_version,
)
from searchtrace.errors import BackendUnavailable, ConfigError


def test_url_is_masked_wherever_it_is_shown():
    url = StoreUrl("postgresql://team:s3cret@db.example:5433/searchtrace?sslmode=require&password=other")
    for shown in (url.masked(), str(url), repr(url), f"{url}"):
        assert "s3cret" not in shown and "other" not in shown
    assert url.masked() == "postgresql://team:****@db.example:5433/searchtrace?sslmode=require&password=****"
    assert StoreUrl("postgresql://db/x").masked() == "postgresql://db/x"
    assert StoreUrl("postgres://u@db/x").masked() == "postgres://u@db/x"


def test_resolve_prefers_the_flag_and_names_the_origin_of_a_bad_value():
    env = {"SEARCHTRACE_STORE": "postgresql://a/env"}
    assert resolve_store_url(None, {}) is None
    assert resolve_store_url("  ", {"SEARCHTRACE_STORE": " "}) is None
    assert resolve_store_url(None, env).conninfo == "postgresql://a/env"
    assert resolve_store_url("postgresql://b/flag", env).conninfo == "postgresql://b/flag"
    with pytest.raises(ConfigError, match=r"\$SEARCHTRACE_STORE must be a postgresql:// URL") as exc:
        resolve_store_url(None, {"SEARCHTRACE_STORE": "mysql://u:pw@h/db"})
    assert "pw" not in str(exc.value) and "****" in str(exc.value)
    with pytest.raises(ConfigError, match="--store has a port that is not a number"):
        resolve_store_url("postgresql://u:pw@h:xx/db")


def test_an_unreachable_store_is_one_error_naming_it_masked():
    db = Database(StoreUrl("postgresql://u:hunter2@127.0.0.1:9/db?connect_timeout=1"), timeout=1.0)
    try:
        with pytest.raises(BackendUnavailable, match=r"store postgresql://u:\*\*\*\*@127.0.0.1:9/db.* unreachable") \
                as exc:
            with db.connection() as conn:
                conn.execute("SELECT 1")
        assert "hunter2" not in str(exc.value)
    finally:
        db.close()


def test_a_store_that_refuses_the_connection_says_why_in_its_own_words(pg_url):
    """A wrong password or a database that does not exist is the server's own line, at the first use, not the
    pool's timeout after its workers' retries (issue 35: it read "unreachable" after 10 s of pool warnings)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(pg_url)
    wrong_password = parts._replace(netloc=f"{parts.username}:not-the-password@{parts.hostname}:{parts.port}")
    no_database = parts._replace(path="/no_such_database")
    for url, words in ((urlunsplit(wrong_password), "password authentication failed"),
                       (urlunsplit(no_database), 'database "no_such_database" does not exist')):
        db = Database(StoreUrl(url))
        try:
            with pytest.raises(BackendUnavailable, match="unreachable") as exc:
                with db.connection() as conn:
                    conn.execute("SELECT 1")
            assert words in str(exc.value) and "not-the-password" not in str(exc.value)
            assert db._pool is None  # no pool was made to retry in the background
        finally:
            db.close()


def test_migrate_brings_an_empty_store_to_this_version_once(pg_url):
    db = Database(StoreUrl(pg_url))
    try:
        with pytest.raises(StoreVersionError, match="has no searchtrace schema.*run `searchtrace store migrate --store"):
            check_version(db)
        assert migrate(db, migrations()) == (0, SCHEMA_VERSION)
        assert migrate(db, migrations()) == (SCHEMA_VERSION, SCHEMA_VERSION)
        check_version(db)
        with db.connection() as conn:
            versions = [r[0] for r in conn.execute("SELECT version FROM searchtrace_schema ORDER BY version")]
            tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert versions == list(range(1, SCHEMA_VERSION + 1))
        assert {"st_traces", "st_spans", "st_export_drops"} <= tables
    finally:
        db.close()


def test_concurrent_migrations_apply_each_step_once(pg_url):
    dbs = [Database(StoreUrl(pg_url)) for _ in range(4)]
    errors: list[BaseException] = []

    def run(db: Database) -> None:
        try:
            migrate(db, migrations())
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(db,)) for db in dbs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert not errors
        with dbs[0].connection() as conn:
            assert store_version(conn) == SCHEMA_VERSION
            assert conn.execute("SELECT count(*) FROM searchtrace_schema").fetchone()[0] == SCHEMA_VERSION
    finally:
        for db in dbs:
            db.close()


def test_a_store_newer_than_the_client_is_refused_saying_both_versions(pg_db):
    with pg_db.connection() as conn:
        conn.execute("INSERT INTO searchtrace_schema (version, name) VALUES (%s, 'from the future')",
                     (SCHEMA_VERSION + 7,))
    message = (f"schema version {SCHEMA_VERSION + 7}, newer than this searchtrace "
               f"\\(version {SCHEMA_VERSION}\\): upgrade searchtrace")
    with pytest.raises(StoreVersionError, match=message):
        check_version(pg_db)
    with pytest.raises(StoreVersionError, match=message):
        migrate(pg_db, migrations())


def test_store_commands_migrate_and_report_without_showing_the_password(pg_url, capsys):
    password = pg_url.split(":")[2].split("@")[0]
    assert main(["store", "status", "--store", pg_url]) == 1  # not migrated yet
    out = capsys.readouterr()
    assert "version 0" in out.out and password not in out.out + out.err
    assert main(["store", "migrate", "--store", pg_url]) == 0
    out = capsys.readouterr()
    assert f"from schema version 0 to {SCHEMA_VERSION}" in out.out and password not in out.out + out.err
    assert "applied 1: traces" in out.err
    assert main(["store", "migrate", "--store", pg_url]) == 0
    assert "up to date" in capsys.readouterr().out
    assert main(["store", "status", "--store", pg_url]) == 0
    out = capsys.readouterr().out
    assert "st_traces" in out and password not in out and "****" in out


def test_store_commands_without_a_store_say_how_to_give_one(monkeypatch, capsys):
    monkeypatch.delenv("SEARCHTRACE_STORE", raising=False)
    assert main(["store", "migrate"]) == 2
    assert "pass --store postgresql://" in capsys.readouterr().err


def test_a_store_that_just_failed_fails_at_once_for_a_moment():
    import time

    db = Database(StoreUrl("postgresql://u:pw@127.0.0.1:9/db?connect_timeout=1"), timeout=1.0)
    try:
        with pytest.raises(BackendUnavailable):
            with db.connection():
                pass
        started = time.monotonic()
        with pytest.raises(BackendUnavailable, match="unreachable") as exc:
            with db.connection():
                pass
        assert time.monotonic() - started < 0.2 and "pw" not in str(exc.value)
    finally:
        db.close()


def test_libpq_parameters_in_the_url_pass_through(pg_url):
    db = Database(StoreUrl(f"{pg_url}?options=-c%20statement_timeout%3D4321&sslmode=disable"))
    try:
        with db.connection() as conn:
            assert conn.execute("SHOW statement_timeout").fetchone()[0] == "4321ms"
            assert conn.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").fetchone()[0] is False
    finally:
        db.close()


def test_the_password_may_come_from_libpqs_environment(pg_url, monkeypatch):
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(pg_url)
    without = urlunsplit(parts._replace(netloc=f"{parts.username}@{parts.hostname}:{parts.port}"))
    monkeypatch.setenv("PGPASSWORD", parts.password or "")
    db = Database(StoreUrl(without))
    try:
        with db.connection() as conn:
            assert conn.execute("SELECT current_user").fetchone()[0] == parts.username
    finally:
        db.close()


def test_each_store_declares_its_step_and_the_roof_lists_every_one():
    """The floor imports no schema: the stores declare their steps, the roof hands the list to ``migrate``."""
    from searchtrace.database import Migration

    steps = migrations()
    assert [m.version for m in steps] == list(range(1, SCHEMA_VERSION + 1))
    assert all(isinstance(m, Migration) for m in steps)
    assert "CREATE TABLE st_traces" in steps[0].sql


def test_migrate_refuses_a_list_that_is_not_every_step_once():
    class Unused:  # the list is checked before any connection
        pass

    steps = migrations()
    for wrong in (steps[1:], (*steps, steps[-1]), ()):
        with pytest.raises(ValueError, match=f"versions 1 to {SCHEMA_VERSION}"):
            migrate(Unused(), wrong)  # type: ignore[arg-type]
