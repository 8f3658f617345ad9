"""One judgment: the record of one line of ``judgments.jsonl``.

A line is ``{"format": 1, "query_id", "doc_id", "grade", "judge", "kind",
"time", "note", "trace_id"}``: ``grade`` an integer on the dataset's scale, or
``null`` for a retraction (the judge takes back their earlier judgment of the
pair); ``kind`` ``human``, ``implicit`` or ``imported``; ``time`` UTC ISO 8601
(``2025-01-31T09:30:00.000000Z``); ``note`` and ``trace_id`` optional (null).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from searchtrace.errors import DataError, ValidationError

# The run folder's typed reader of one JSON object, errors naming file and line: one definition of it.
from searchtrace.evals.runs.runfolder._fields import Fields

__all__ = ["FORMAT_VERSION", "Judgment", "Kind", "Pair", "now", "record_from_json"]

FORMAT_VERSION = 1
"""The judgments format this code writes and reads."""

Pair = tuple[str, str]
"""``(query_id, doc_id)``: what a judgment labels, whatever ranking showed it."""


class Kind(str, enum.Enum):
    """Where a judgment comes from."""

    HUMAN = "human"
    """A person judged the pair (the kind ``judge export`` writes unless asked for another)."""
    IMPLICIT = "implicit"
    """Inferred from behaviour: ``judge implicit``'s, from the documents agents fetched after their searches."""
    IMPORTED = "imported"
    """Read from an existing qrels file (``judge import``)."""


def now() -> datetime:
    """The current time, in UTC."""
    return datetime.now(UTC)


def _utc(text: str) -> datetime:
    """``text`` as an aware UTC time; ValueError for anything else."""
    stamp = datetime.fromisoformat(text)
    offset = stamp.utcoffset()
    if offset is None or offset.total_seconds() != 0:
        raise ValueError("not UTC")
    return stamp.astimezone(UTC)


@dataclass(frozen=True)
class Judgment:
    """One judge's label of one (query, doc) pair.

    Attributes:
        query_id, doc_id: the pair.
        grade: its grade on the dataset's scale; None retracts the judge's earlier judgment of the pair.
        judge: who judged (a person's name, or the source of implicit or imported labels).
        kind: human, implicit or imported.
        time: when, in UTC.
        note: a free-text note, if any.
        trace_id: the trace of the search whose results were judged, if any.
    """

    query_id: str
    doc_id: str
    grade: int | None
    judge: str
    kind: Kind = Kind.HUMAN
    time: datetime = field(default_factory=now)
    note: str | None = None
    trace_id: str | None = None

    def __post_init__(self) -> None:
        for name in ("query_id", "doc_id", "judge"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip() or not value.isprintable():
                raise ValidationError(f"{name} must be a non-empty printable string, got {value!r}", field=name)
        if self.time.utcoffset() is None:
            raise ValidationError(f"time must be timezone-aware, got {self.time.isoformat()}", field="time")

    @property
    def pair(self) -> Pair:
        return (self.query_id, self.doc_id)

    @property
    def retracts(self) -> bool:
        """This judgment takes back the judge's earlier one (no grade)."""
        return self.grade is None

    def to_json(self) -> dict[str, Any]:
        stamp = self.time.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        return {"format": FORMAT_VERSION, "query_id": self.query_id, "doc_id": self.doc_id, "grade": self.grade,
                "judge": self.judge, "kind": self.kind.value, "time": stamp, "note": self.note,
                "trace_id": self.trace_id}

    @classmethod
    def from_json(cls, f: Fields) -> Judgment:
        grade = f.get("grade", lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
                      "an integer or null (a retraction)")
        kind = f.text("kind")
        try:
            return cls(query_id=f.text("query_id"), doc_id=f.text("doc_id"), grade=grade, judge=f.text("judge"),
                       kind=_kind(f, kind), time=_time(f), note=f.opt_text("note"), trace_id=f.opt_text("trace_id"))
        except ValidationError as exc:
            raise f.error(exc.field or "record", exc.message) from None


def _kind(f: Fields, value: str) -> Kind:
    try:
        return Kind(value)
    except ValueError:
        raise f.error("kind", f"expected one of {', '.join(k.value for k in Kind)}, got {value!r}") from None


def _time(f: Fields) -> datetime:
    text = f.text("time")
    try:
        return _utc(text)
    except ValueError:
        raise f.error("time", f"expected a UTC ISO 8601 time, got {text!r}") from None


def record_from_json(data: object, path: str, line: int) -> Judgment:
    """The judgment of one line.

    Raises:
        DataError: a malformed record or another format, naming the file and line.
    """
    f = Fields(data, path, line)
    version = f.data.get("format")
    if version != FORMAT_VERSION:
        raise DataError(path, line, f"format: expected judgments format {FORMAT_VERSION}, got {version!r}")
    return Judgment.from_json(f)
