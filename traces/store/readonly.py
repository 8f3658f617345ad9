"""A trace store opened for reading by a command that reads many traces: the home's file (refused when
damaged, closed after), or the shared store when a URL is given."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from searchtrace.database import StoreUrl
from searchtrace.errors import SearchtraceError
from searchtrace.traces.store.damage import is_damaged
from searchtrace.traces.store.opening import existing_trace_store, open_trace_store
from searchtrace.traces.store.protocol import TraceStoreProtocol

__all__ = ["reading"]


@contextmanager
def reading(path: str | Path, url: StoreUrl | None = None) -> Iterator[TraceStoreProtocol | None]:
    """The store at ``path`` (or the shared store at ``url``, when given), open while the block runs; None when
    there is no store.

    Raises:
        SearchtraceError: the store is damaged, naming the command that salvages it (nothing read from it).
        StoreVersionError: the shared store's schema is not this client's.
        BackendUnavailable: the shared store cannot be reached.
    """
    if url is not None:
        yield open_trace_store(path, url).open()
        return
    store = existing_trace_store(path)
    if store is None:
        yield None
        return
    if is_damaged(Path(path)):
        raise SearchtraceError(f"trace store {path} is damaged: run `searchtrace traces repair`")
    try:
        yield store
    finally:
        store.close()
