"""The trace store's contract fixture, shared by the contract suites in this folder."""

from __future__ import annotations

import pytest

from searchtrace.traces.store.sqlite import TraceStore


@pytest.fixture(params=["sqlite", "postgres"])
def store(request, tmp_path):
    """Each implementation of the store in turn: the contract is the same (postgres is a system test, on
    the session's server, and skips without one). A module defining its own ``store`` overrides this."""
    if request.param == "sqlite":
        s = TraceStore(tmp_path / "home" / "traces.sqlite")
    else:
        from searchtrace.traces.store.postgres import PostgresTraceStore

        s = PostgresTraceStore(request.getfixturevalue("pg_db"))
    yield s
    s.close()
