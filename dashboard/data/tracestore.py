"""The trace store the dashboard reads: the shared store when there is one, else the home's file, opened once
per process and never created by reading."""

from __future__ import annotations

import threading
from pathlib import Path

from searchtrace.dashboard.data.shared import shared_store
from searchtrace.home import Home
from searchtrace.traces import TraceStoreProtocol, existing_trace_store

__all__ = ["trace_store"]

_lock = threading.Lock()
_stores: dict[Path | str, TraceStoreProtocol] = {}


def trace_store(home: str | Path) -> TraceStoreProtocol | None:
    """The shared store (``$SEARCHTRACE_STORE``), else the home's file (one store per file, connections per
    thread); None when the home has none yet."""
    url = shared_store()
    path = Home(Path(home)).traces.resolve()
    key: Path | str = url.conninfo if url is not None else path
    with _lock:
        store = _stores.get(key) if url is not None or path.is_file() else None
        if store is None and (store := existing_trace_store(path, url)) is not None:
            _stores[key] = store
    return store
