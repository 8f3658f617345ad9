"""The shared store's held spans, spilled to a bounded file in the home, so a killed process does not lose them.

While the shared store is out of reach, every batch the buffer holds
(``export.buffered``) is also appended to this process's file,
``<home>/traces.spill/<store>/<pid>-<random>.jsonl`` (``<store>``: a digest of the
store's masked URL, so a batch is only ever written to the store it was meant
for), which it holds under ``flock`` while
it lives; a batch is marked stored once the store took it, and the file is
emptied whenever nothing is held. A process killed with ``kill -9`` leaves its
file unlocked: the next process that writes to the shared store from this home
takes its unstored batches (:meth:`SpillFile.recover`) and writes them. What the
file's bound refuses is not held at all: it is dropped and counted.

Lines: ``H <seq> <spans> <json>`` for a held batch (the count before the JSON, so
a line torn by the kill still says how many spans it loses) and ``S <seq>...``
when batches were stored. The JSON is what the stores read of a span.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

__all__ = ["Recovered", "SPILL_BYTES", "SpillFile", "span_from_json", "span_to_json", "spill_folder"]

log = logging.getLogger(__name__)

SPILL_BYTES = 256 * 2**20
"""Most bytes one process spills by default (0.7 KB a span with 5 candidates, 1.6 KB with 100: more than the
buffer's 100,000 spans); what does not fit is dropped, counted."""


def spill_folder(root: Path, location: str) -> Path:
    """The folder of the spill files for the store at ``location`` (its masked URL), in ``root``
    (``Home.trace_spill``)."""
    import hashlib

    return Path(root) / hashlib.sha256(location.encode()).hexdigest()[:16]


def span_to_json(span: ReadableSpan) -> dict[str, Any]:
    """What the trace stores read of a span, as JSON values (:func:`span_from_json` reads it back)."""
    ctx, parent = span.context, span.parent
    assert ctx is not None  # a finished span always has its context
    return {"name": span.name, "trace": format(ctx.trace_id, "032x"), "span": format(ctx.span_id, "016x"),
            "parent": None if parent is None else [format(parent.span_id, "016x"), parent.is_remote],
            "kind": span.kind.name, "start": span.start_time, "end": span.end_time,
            "status": [span.status.status_code.name, span.status.description],
            "scope": span.instrumentation_scope.name if span.instrumentation_scope else None,
            "attributes": dict(span.attributes or {}),
            "events": [[e.name, e.timestamp, dict(e.attributes or {})] for e in span.events],
            "resource": dict(span.resource.attributes) if span.resource else {}}


def span_from_json(d: dict[str, Any]) -> ReadableSpan:
    """The span :func:`span_to_json` wrote; raises KeyError, TypeError or ValueError on anything else."""
    trace_id = int(d["trace"], 16)
    ctx = SpanContext(trace_id, int(d["span"], 16), is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    parent = None if d["parent"] is None else SpanContext(trace_id, int(d["parent"][0], 16),
                                                          is_remote=bool(d["parent"][1]))
    code, description = d["status"]
    return ReadableSpan(
        name=str(d["name"]), context=ctx, parent=parent, resource=Resource(dict(d["resource"])),
        attributes=dict(d["attributes"]), events=[Event(str(n), dict(a), timestamp=int(t)) for n, t, a in d["events"]],
        kind=SpanKind[d["kind"]], status=Status(StatusCode[code], description),
        start_time=int(d["start"]), end_time=int(d["end"]),
        instrumentation_scope=InstrumentationScope(d["scope"]) if d["scope"] else None)


@dataclass(frozen=True)
class Recovered:
    """What killed processes left: their unstored batches, and the spans that could not be read back."""

    batches: list[list[ReadableSpan]]
    unreadable_spans: int
    files: int


class SpillFile:
    """This process's spill file (opened on the first batch held), and the recovery of killed processes' files.

    Not thread-safe: the buffered exporter calls it under its own lock.

    Args:
        folder: ``Home.trace_spill``.
        max_bytes: the file's bound.
    """

    def __init__(self, folder: Path, max_bytes: int = SPILL_BYTES) -> None:
        self.folder = Path(folder)
        self.max_bytes = max_bytes
        self.path: Path | None = None
        self._fd = -1
        self._size = 0
        self._seq = 0

    def hold(self, spans: Sequence[ReadableSpan]) -> int | None:
        """Append a held batch; its number, or None when the bound refuses it. Raises OSError when the file
        cannot be written."""
        body = json.dumps([span_to_json(s) for s in spans], separators=(",", ":"), ensure_ascii=False)
        line = f"H {self._seq + 1} {len(spans)} {body}\n".encode()
        if self._size + len(line) > self.max_bytes:
            return None
        self._append(line)
        self._seq += 1
        return self._seq

    def stored(self, seqs: Sequence[int]) -> None:
        """Mark batches as taken by the store (a kill after this does not write them twice)."""
        if seqs and self._fd >= 0:
            self._append(("S " + " ".join(map(str, seqs)) + "\n").encode())

    def empty(self) -> None:
        """Nothing is held: forget every line."""
        if self._fd >= 0 and self._size:
            os.ftruncate(self._fd, 0)
            self._size = 0

    def keep(self) -> None:
        """Close, leaving what is held for the next process from this home (a store still out of reach at exit)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def close(self) -> None:
        """Close and remove the file (nothing held)."""
        if self._fd >= 0:
            if self.path is not None:
                self.path.unlink(missing_ok=True)
            self.keep()

    def forget(self) -> None:
        """A forked child: the file (and its lock) is the parent's."""
        if self._fd >= 0:
            os.close(self._fd)
        self._fd, self.path, self._size = -1, None, 0

    def recover(self) -> Recovered:
        """The unstored batches of every file no live process holds, oldest file first; each file read is
        removed (its batches are the caller's to hold now)."""
        batches: list[list[ReadableSpan]] = []
        lost = files = 0
        if not self.folder.is_dir():
            return Recovered(batches, 0, 0)
        for path in sorted(self.folder.glob("*.jsonl"), key=_mtime):
            if path == self.path:
                continue
            found = _take(path)
            if found is None:
                continue
            files += 1
            batches.extend(found[0])
            lost += found[1]
        return Recovered(batches, lost, files)

    def _append(self, line: bytes) -> None:
        """Append a whole line, or nothing: a line cut short (a full disk) is cut off again before the error
        is raised, so the lines after it stay readable."""
        if self._fd < 0:
            self._open()
        try:
            written = os.write(self._fd, line)
            while written < len(line):
                written += os.write(self._fd, line[written:])
        except OSError:
            try:
                os.ftruncate(self._fd, self._size)
            except OSError:
                pass  # the next line then follows a torn one: that one is counted as unreadable at recovery
            raise
        self._size += len(line)

    def _open(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{os.getpid()}-{os.urandom(4).hex()}.jsonl"
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_APPEND | os.O_CLOEXEC, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        self.path, self._fd, self._size = path, fd, 0


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _take(path: Path) -> tuple[list[list[ReadableSpan]], int] | None:
    """A killed process's unstored batches and the spans of its unreadable lines; None when its process lives
    (or another process took the file first)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # held: its process is alive, or another is recovering it
        if os.fstat(fd).st_nlink == 0:
            return None  # recovered and removed by another process meanwhile
        with os.fdopen(os.dup(fd), "rb") as f:
            held, lost = _read(f.read(), path)
        path.unlink(missing_ok=True)
        return held, lost
    finally:
        os.close(fd)


def _read(data: bytes, path: Path) -> tuple[list[list[ReadableSpan]], int]:
    held: dict[int, list[ReadableSpan]] = {}
    stored: set[int] = set()
    lost = 0
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw:
            continue
        parts = raw.split(b" ", 3)
        try:
            if parts[0] == b"S":
                stored.update(int(x) for x in raw.split()[1:])
                continue
            seq, n = int(parts[1]), int(parts[2])
        except (ValueError, IndexError):
            log.warning("%s, line %d: not a spilled batch; skipped", path, number)
            continue
        try:
            held[seq] = [span_from_json(d) for d in json.loads(parts[3])]
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            log.warning("%s, line %d: %d spilled spans unreadable (%s)", path, number, n, type(exc).__name__)
            lost += n
    return [batch for seq, batch in sorted(held.items()) if seq not in stored], lost
