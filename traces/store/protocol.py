"""What every trace store does, whichever holds the traces: the home's SQLite file or the shared PostgreSQL.

``tests/test_trace_store.py`` runs one contract suite on both implementations
(:class:`~searchtrace.traces.store.sqlite.TraceStore`,
:class:`~searchtrace.traces.store.postgres.PostgresTraceStore`); what only one of them
has (SQLite's integrity check and repair, PostgreSQL's document index and drop
counts) is on that class alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from opentelemetry.sdk.trace import ReadableSpan

from searchtrace.traces.store.records import (
    Fetch,
    Impression,
    InteractionFilter,
    TraceDetail,
    TraceFilter,
    TraceSummary,
)

__all__ = ["TraceStoreProtocol"]


class TraceStoreProtocol(Protocol):
    """A store of finished spans, one summary row per trace; safe for several threads and processes."""

    @property
    def location(self) -> str:
        """Where the traces are, as shown to people (a path, or a URL with its password masked)."""
        ...

    def open(self) -> TraceStoreProtocol: ...

    def close(self) -> None: ...

    def write(self, spans: Sequence[ReadableSpan]) -> int: ...

    def list_traces(self, flt: TraceFilter = ...) -> list[TraceSummary]: ...

    def scan(self, flt: TraceFilter = ..., batch: int = ...) -> Iterator[list[TraceSummary]]: ...

    def count(self, flt: TraceFilter | None = None) -> int: ...

    def interactions(self, flt: InteractionFilter, batch: int = ...) -> Iterator[list[Impression | Fetch]]: ...

    def count_interactions(self, flt: InteractionFilter) -> int: ...

    def stored(self, trace_ids: Sequence[str]) -> dict[str, int]: ...

    def trace_ids_starting(self, prefix: str, limit: int = 2) -> list[str]: ...

    def load_trace(self, trace_id: str) -> TraceDetail | None: ...

    def span_durations(self, trace_ids: Sequence[str], names: Sequence[str]) -> list[tuple[str, str, float]]: ...

    def prune(self, older_than_days: float | None = None, keep_last: int | None = None, *,
              now_ns: int | None = None, reclaim: bool = True) -> int: ...
