"""The trace store the dashboard reads: the shared store when there is one, else the home's file, opened once
per process and never created by reading."""

from __future__ import annotations

import threading
from pathlib import Path

from searchtrace.dashboard.data.shared import shared_store
from searchtrace.home import Home
from searchtrace.traces import PostgresTraceStore, TraceStore, TraceStoreProtocol

__all__ = ["trace_store"]

_lock = threading.Lock()
_stores: dict[Path | str, TraceStoreProtocol] = {}


def trace_store(home: str | Path) -> TraceStoreProtocol | None:
    """The shared store (``$SEARCHTRACE_STORE``), else the home's :class:`TraceStore` (one per file, connections per
    thread); None when the home has none yet."""
    url = shared_store()
    if url is not None:
        from searchtrace.database import database

        with _lock:
            store = _stores.get(url.conninfo)
            if store is None:
                store = _stores[url.conninfo] = PostgresTraceStore(database(url))
        return store
    path = Home(Path(home)).traces.resolve()
    if not path.is_file():
        return None
    with _lock:
        store = _stores.get(path)
        if store is None:
            store = _stores[path] = TraceStore(path)
    return store
