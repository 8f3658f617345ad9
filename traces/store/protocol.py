"""What every trace store does, whichever holds the traces: the home's SQLite file or the shared PostgreSQL.

``tests/test_trace_store.py`` runs one contract suite on both implementations (``store.sqlite`` and
``store.postgres``). What differs between them is a capability each declares (:class:`Capabilities`), which
callers read in place of asking for a class; ``store.opening`` is the one place a backend is chosen.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from opentelemetry.sdk.trace import ReadableSpan

from searchtrace.traces.store.records import (
    Fetch,
    Impression,
    InteractionFilter,
    SearchFilter,
    SearchRecord,
    TraceDetail,
    TraceFilter,
    TraceSummary,
)

__all__ = ["Capabilities", "TraceStoreProtocol"]


@dataclass(frozen=True)
class Capabilities:
    """What a store does that another may not: read these, never the store's class.

    Attributes:
        shared: processes of several machines write it over the network (the team's store). A write may find
            it out of reach, so the exporter holds spans in a bounded buffer (``export.buffered``) and says how
            many it dropped (:meth:`TraceStoreProtocol.note_dropped`), and its schema is checked when a
            process starts.
        reclaims_space_on_prune: ``prune`` gives the freed space back to the file system (the SQLite file
            shrinks, :meth:`TraceStoreProtocol.size_bytes` says by how much); else the server reuses it for
            later writes (PostgreSQL's autovacuum).
        span_filters_fast: the attribute filter stays quick over every stored trace (the shared store: the
            server reads the spans). Both stores apply it to every trace; the local store reads it along
            ``trace_attrs`` (schema 6), but for a key with values over 200 characters (an id list) reads and
            unpacks the spans of each trace holding one until its page is full, which over a large store can
            take seconds (BENCHMARKS.md, "The Traces page over every trace").
        documents_indexed: the document filter reads an index (the shared store's ``doc_ids``, the local
            store's ``trace_docs`` from schema 6), not the spans of each trace the other filters match.
        write_timeout_ms: how long one write of a batch may take before the export processor gives up on it
            (the local store: its busy timeout and a second).
    """

    shared: bool
    reclaims_space_on_prune: bool
    span_filters_fast: bool
    documents_indexed: bool
    write_timeout_ms: int


class TraceStoreProtocol(Protocol):
    """A store of finished spans, one summary row per trace; safe for several threads and processes."""

    @property
    def location(self) -> str:
        """Where the traces are, as shown to people (a path, or a URL with its password masked)."""
        ...

    @property
    def capabilities(self) -> Capabilities: ...

    def open(self) -> TraceStoreProtocol: ...

    def reset(self) -> None:
        """Forget connections and checks: the next use sets the store up afresh."""
        ...

    def close(self) -> None: ...

    def write(self, spans: Sequence[ReadableSpan]) -> int: ...

    def list_traces(self, flt: TraceFilter = ...) -> list[TraceSummary]: ...

    def scan(self, flt: TraceFilter = ..., batch: int = ...) -> Iterator[list[TraceSummary]]: ...

    def count(self, flt: TraceFilter | None = None) -> int: ...

    def interactions(self, flt: InteractionFilter, batch: int = ...) -> Iterator[list[Impression | Fetch]]: ...

    def count_interactions(self, flt: InteractionFilter) -> int: ...

    def stored(self, trace_ids: Sequence[str]) -> dict[str, int]: ...

    def searches(self, flt: SearchFilter = ...) -> list[SearchRecord]:
        """Another retriever's searches (OpenInference RETRIEVER or GenAI retrieval spans, not the stages of
        another), oldest first, each with its documents in the order returned: ids (None: unidentified),
        scores (None: not sent) and, with ``flt.contents``, their text. Filter by ``service``, ``project``,
        ``since``/``until`` (the search's start) and ``trace_ids``. What the label loop reads (``queries
        from-traces --service``, ``judge pool --from-traces``)."""
        ...

    def set_doc_id_key(self, service: str, key: str | None) -> int:
        """Name (None: forget) the metadata key that holds ``service``'s document ids when its spans send no
        ``document.id``; the service's stored searches are read again with it. Returns how many."""
        ...

    def doc_id_keys(self) -> dict[str, str]:
        """Each service's document-id key (``traces id-key``)."""
        ...

    def trace_ids_starting(self, prefix: str, limit: int = 2) -> list[str]: ...

    def load_trace(self, trace_id: str) -> TraceDetail | None: ...

    def error_messages(self, trace_ids: Sequence[str]) -> dict[str, str]:
        """The status message of each given trace's error, by trace id: its root span's, else the first span in
        error's (by start); a trace with no message in error is left out. What a list shows beside the error
        code without loading each trace."""
        ...

    def span_durations(self, trace_ids: Sequence[str], names: Sequence[str]) -> list[tuple[str, str, float]]: ...

    def prune(self, older_than_days: float | None = None, keep_last: int | None = None, *,
              now_ns: int | None = None, reclaim: bool = True) -> int: ...

    def size_bytes(self) -> int | None:
        """What the store takes on disk, when it can say (the local file's size), else None."""
        ...

    def set_aside_damaged(self, why: object) -> bool:
        """Move a damaged store aside and start a new one; True when done (a server's store: never)."""
        ...

    def note_dropped(self, host: str, pid: int, started_ns: int, dropped: int, buffer_size: int) -> None:
        """Record how many spans a process dropped while the store was out of reach (its running total)."""
        ...

    def dropped(self) -> int:
        """Spans every process has said it dropped while the store was out of reach."""
        ...
