"""The cold search: the first one a process runs, and the first after it loaded the embedding model.

That search pays what no later one does (the model's first run, cold caches and
pages), so its trace says so (``searchtrace.search.cold``) and one slow start does
not pass for a slow search. It is a fact about the process, whichever retriever
(a server's several datasets and variants share one model) runs the search. A process's very first search is
cold whether or not a load was seen (a model loaded inside that search, with no ``warm_up`` before it, made
the slowest search of a home unmarked).
"""

from __future__ import annotations

import threading

__all__ = ["ColdStart", "PROCESS"]


class ColdStart:
    """A one-shot flag: set at first and when the model loads, taken by the next search (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending = True

    def loaded(self) -> None:
        """The model has just loaded: the next search is cold."""
        with self._lock:
            self._pending = True

    def take(self) -> bool:
        """True for the first call, and the first after :meth:`loaded`; False for every other."""
        with self._lock:
            pending, self._pending = self._pending, False
        return pending


PROCESS = ColdStart()
"""This process's flag (a forked child inherits it: its first search after a load is cold too)."""
