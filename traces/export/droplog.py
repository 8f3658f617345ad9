"""While spans are being dropped, one line a minute on the log, never one per span or batch.

A full disk drops every batch; a warning per batch would bury the log, and the
first failure's warning alone says nothing of how long it lasted. So drops are
summed over a minute from the first one, and the minute's line says how many,
why, and how many since the process started:
``traces: 512 spans dropped in the last minute (disk_full); 45,738 since start``.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

__all__ = ["DropLog", "PERIOD_S"]

log = logging.getLogger(__name__)

PERIOD_S = 60.0
"""How long drops are summed before their line is written."""


class DropLog:
    """Drops summed per minute, written as one log line when the minute is over.

    The line is written by the first drop or export (:meth:`tick`) that comes a
    minute or more after the minute's first drop, and by :meth:`flush` at close.

    Args:
        clock: monotonic seconds (a test passes its own).
        period_s: the minute.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, period_s: float = PERIOD_S) -> None:
        self._clock = clock
        self.period_s = period_s
        self._lock = threading.Lock()
        self._since: float | None = None
        self._window: dict[str, int] = {}
        self.total = 0

    def dropped(self, reason: str, spans: int) -> None:
        """Count ``spans`` dropped for ``reason``."""
        if spans <= 0:
            return
        with self._lock:
            now = self._clock()
            self._due(now)
            if self._since is None:
                self._since = now
            self._window[reason] = self._window.get(reason, 0) + spans
            self.total += spans

    def tick(self) -> None:
        """Write the minute's line if it is over (an export calls this, so a minute ends without a drop)."""
        with self._lock:
            self._due(self._clock())

    def flush(self) -> None:
        """Write what is summed now, however short the time (at close)."""
        with self._lock:
            self._write()

    def _due(self, now: float) -> None:
        if self._since is not None and now - self._since >= self.period_s:
            self._write()

    def _write(self) -> None:
        if not self._window:
            return
        n = sum(self._window.values())
        why = ", ".join(f"{r} {c:,}" if len(self._window) > 1 else r for r, c in sorted(self._window.items()))
        log.warning("traces: %s spans dropped in the last minute (%s); %s since start", f"{n:,}", why,
                    f"{self.total:,}")
        self._window, self._since = {}, None
