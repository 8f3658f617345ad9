"""The trace store of a home, opened once per process and never created by reading."""

from __future__ import annotations

import threading
from pathlib import Path

from searchtrace.home import Home
from searchtrace.traces import TraceStore

__all__ = ["trace_store"]

_lock = threading.Lock()
_stores: dict[Path, TraceStore] = {}


def trace_store(home: str | Path) -> TraceStore | None:
    """The home's :class:`TraceStore` (one per file, connections per thread), or None when it has none yet."""
    path = Home(Path(home)).traces.resolve()
    if not path.is_file():
        return None
    with _lock:
        store = _stores.get(path)
        if store is None:
            store = _stores[path] = TraceStore(path)
    return store
