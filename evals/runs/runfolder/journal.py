"""An append-only, fsync'd journal of completed queries: what makes an eval resumable.

Each line is one record's JSON (:mod:`searchtrace.evals.runs.runfolder.records`). A
line is written only after the query's trace has been flushed, and the file is
fsync'd after each batch, so after a ``kill -9`` every line present is a
complete query with its trace. A torn last line (killed mid-write) is ignored
on reading and cut before the next append. A line that cannot be read
anywhere else (a damaged disk block, a hand edit) is skipped and reported with
its line number in :attr:`Journal.problems`: its query is searched again by a
resumed run.

A :class:`Journal` keeps the records it appended, by their line's bytes: a read
of a line that is byte for byte one it wrote reuses that record instead of
parsing it again (what the runner's ``finalize`` reads is what it just wrote).
Parsing such a line gives back an equal record of the same types
(``tests/evals/test_journal_reuse.py`` holds the runner to it); any other line
is parsed. The records live as long as the :class:`Journal` object.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from searchtrace.durable import naming
from searchtrace.errors import DataError
from searchtrace.evals.runs.runfolder.records import JournalRecord, QueryOutcome, record_from_json

__all__ = ["Journal"]


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, its encoder made once."""


def _reusable(record: JournalRecord, raw: bytes) -> bool:
    """Parsing ``raw``, the line of ``record``, gives ``record`` back: False for a line holding a non-finite
    float (``json.dumps`` writes ``NaN``, ``Infinity``), which a record's reader may refuse (a line with the
    same letters in a string is parsed too), and for an error message without an error (the line leaves it
    out)."""
    if isinstance(record, QueryOutcome) and record.error_message is not None and not record.error:
        return False
    return b"NaN" not in raw and b"Infinity" not in raw


class Journal:
    """The journal file of a run folder (nothing is opened until a read or an append)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.problems: list[DataError] = []
        self._written: dict[bytes, JournalRecord] = {}

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """(1-based line number, raw line) of every complete line; a torn final line is left out."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as fh:
            for number, raw in enumerate(fh, 1):
                if not raw.endswith(b"\n"):
                    return  # torn write
                if raw.strip():
                    yield number, raw

    def read(self) -> list[JournalRecord]:
        """Every complete, readable record, in order.

        A line that is not a valid record is skipped; :attr:`problems` then holds a
        :class:`DataError` naming the file and line of each (from this read).
        """
        records, self.problems = [], []
        written = self._written
        for number, raw in self.lines():
            record = written.get(raw)
            if record is None:
                try:
                    record = self.parse(number, raw)
                except DataError as exc:
                    self.problems.append(exc)
                    continue
            records.append(record)
        return records

    def parse(self, number: int, raw: bytes) -> JournalRecord:
        """The record on line ``number``."""
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise DataError(str(self.path), number, f"not a JSON record: {exc}") from None
        return record_from_json(data, str(self.path), number)

    def truncate_torn_tail(self) -> None:
        """Cut a torn final line so later appends start on a fresh line."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end != len(data):
            with open(self.path, "r+b") as fh:
                fh.truncate(end)

    def append(self, records: Sequence[JournalRecord]) -> None:
        """Append records as one write, then fsync."""
        if not records:
            return
        lines = [_ENCODE(r.to_json(shared=True)) + "\n" for r in records]
        with naming(self.path), open(self.path, "a", encoding="utf-8") as fh:
            fh.write("".join(lines))
            fh.flush()
            os.fsync(fh.fileno())
        for line, record in zip(lines, records):
            raw = line.encode("utf-8")
            if _reusable(record, raw):
                self._written[raw] = record

    def __iter__(self) -> Iterator[JournalRecord]:
        return iter(self.read())
