"""The one place a trace store's backend is chosen: the shared store when a URL is given, else the home's file.

Everything else holds a :class:`~searchtrace.traces.store.protocol.TraceStoreProtocol` and reads its
:class:`~searchtrace.traces.store.protocol.Capabilities`. Nothing is connected here (constructors do no I/O):
a store connects on first use, or on ``open()``.
"""

from __future__ import annotations

from pathlib import Path

from searchtrace.database import StoreUrl, database
from searchtrace.traces.store.protocol import TraceStoreProtocol

__all__ = ["existing_trace_store", "open_trace_store"]


def open_trace_store(path: str | Path, url: StoreUrl | None = None) -> TraceStoreProtocol:
    """The shared store at ``url`` (its pool the process's), else the SQLite store at ``path`` (a writer creates
    it on first write)."""
    if url is not None:
        from searchtrace.traces.store.postgres import PostgresTraceStore

        return PostgresTraceStore(database(url))
    from searchtrace.traces.store.sqlite import TraceStore

    return TraceStore(path)


def existing_trace_store(path: str | Path, url: StoreUrl | None = None) -> TraceStoreProtocol | None:
    """As :func:`open_trace_store`, but None when there is no shared store and the home has no file yet: a
    reader never creates one."""
    if url is None and not Path(path).is_file():
        return None
    return open_trace_store(path, url)
