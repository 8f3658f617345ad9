"""What one OTLP request may hold, and the receiver's running totals of what it did with it.

A receiver faces any program that can open a socket: every size is bounded before it is read, and what a
limit cuts is counted (``truncated``, ``dropped``), never lost silently. The totals are what ``searchtrace
collect`` prints and what a test reads back.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, fields

__all__ = ["ReceiveLimits", "Tally", "Totals"]


@dataclass(frozen=True)
class ReceiveLimits:
    """The bounds of one request and of the queue to the store.

    Attributes:
        body_bytes: most bytes of a request body as sent (compressed or not); more is 413.
        decoded_bytes: most bytes once decompressed; a body that inflates past it (a zip bomb) is 413.
        spans: most spans in one request; more is 413 (an exporter sends a few hundred at a time).
        attributes: most attributes kept per span, resource, event or link; the rest dropped, counted.
        events: most events (and links) kept per span; the rest dropped, counted.
        value_chars: longest string value kept (characters), and longest array (items); longer is cut, counted.
        queue_spans: most spans waiting for the store across every request; more is 503 with Retry-After.
        ack_timeout_s: how long a request waits for its commit before it answers 503 (its spans may still be
            committed: a retry writes them again, which the store takes as the same spans).
        retry_after_s: the ``Retry-After`` of a 503.
    """

    body_bytes: int = 16 * 1024 * 1024
    decoded_bytes: int = 64 * 1024 * 1024
    spans: int = 50_000
    attributes: int = 32_768
    events: int = 1_024
    value_chars: int = 64 * 1024
    queue_spans: int = 200_000
    ack_timeout_s: float = 10.0
    retry_after_s: int = 1


@dataclass(frozen=True)
class Totals:
    """Counts since the receiver started: spans received, stored (committed, or held for a shared store),
    rejected (no valid ids, or refused as a whole: 503, a failed write), values truncated, attributes, events
    and links dropped over a limit, and requests answered each way."""

    received: int = 0
    stored: int = 0
    rejected: int = 0
    truncated: int = 0
    dropped: int = 0
    requests: int = 0
    refused: int = 0

    def line(self) -> str:
        """One plain line for a log: every count, nothing else."""
        return (f"spans received {self.received}, stored {self.stored}, rejected {self.rejected}; "
                f"values truncated {self.truncated}, dropped {self.dropped}; requests {self.requests} "
                f"({self.refused} refused)")


class Tally:
    """:class:`Totals` kept by several threads at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = {f.name: 0 for f in fields(Totals)}

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                self._counts[name] += n

    def totals(self) -> Totals:
        with self._lock:
            return Totals(**self._counts)
