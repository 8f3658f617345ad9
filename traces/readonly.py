"""A trace store opened for reading by a command that reads many traces: refused when damaged, closed after."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from searchtrace.errors import SearchtraceError
from searchtrace.traces.damage import is_damaged
from searchtrace.traces.store import TraceStore

__all__ = ["reading"]


@contextmanager
def reading(path: str | Path) -> Iterator[TraceStore | None]:
    """The store at ``path``, open while the block runs; None when there is no store.

    Raises:
        SearchtraceError: the store is damaged, naming the command that salvages it (nothing read from it).
    """
    path = Path(path)
    if not path.exists():
        yield None
        return
    if is_damaged(path):
        raise SearchtraceError(f"trace store {path} is damaged: run `searchtrace traces repair`")
    store = TraceStore(path)
    try:
        yield store
    finally:
        store.close()
