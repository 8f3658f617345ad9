"""The queries a run's retriever failed to answer, as ``run.json`` lists them.

A query whose search failed (after a target's retries) has no ranking: it is left out of
the metrics, which are over the queries that answered, and listed here with its error's
code and message, for ``eval`` to print, ``compare`` to show and ``gate`` to refuse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from searchtrace.evals.runs.runfolder._fields import Fields

__all__ = ["MESSAGE_LIMIT", "FailedQuery"]

MESSAGE_LIMIT = 500
"""The most characters of an error's message kept (a transport may quote a whole answer)."""


@dataclass(frozen=True)
class FailedQuery:
    """One query whose search failed.

    Attributes:
        query_id: the query.
        code: the error's code (``OVERLOADED``, ``TIMEOUT``, ``SEARCH_ERROR``, ...).
        message: what the error said, at most :data:`MESSAGE_LIMIT` characters.
    """

    query_id: str
    code: str
    message: str

    @classmethod
    def of(cls, query_id: str, code: str, message: str | None) -> FailedQuery:
        """The record, its message cut to :data:`MESSAGE_LIMIT` (a record from before messages were kept: none)."""
        text = message if message is not None else "no message recorded"
        return cls(query_id, code, text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…")

    def to_json(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "code": self.code, "message": self.message}

    @classmethod
    def from_json(cls, f: Fields) -> FailedQuery:
        return cls(query_id=f.text("query_id"), code=f.text("code"), message=f.text("message", ""))
