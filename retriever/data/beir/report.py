"""What :func:`~retriever.data.beir.load_dataset` dropped from qrels, and why."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["IssueKind", "QrelsIssue", "QrelsReport"]


class IssueKind(str, enum.Enum):
    """Why a qrels row was dropped."""

    UNKNOWN_QUERY = "unknown_query"
    UNKNOWN_DOC = "unknown_doc"


@dataclass(frozen=True)
class QrelsIssue:
    """One qrels row that points at an id the dataset does not have."""

    path: str
    line: int
    query_id: str
    doc_id: str
    kind: IssueKind

    def message(self) -> str:
        if self.kind is IssueKind.UNKNOWN_QUERY:
            return f"{self.path}:{self.line}: unknown query id {self.query_id!r}"
        return f"{self.path}:{self.line}: unknown corpus id {self.doc_id!r} (query {self.query_id!r})"


@dataclass(frozen=True)
class QrelsReport:
    """Qrels rows dropped because their query or document does not exist."""

    issues: tuple[QrelsIssue, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.issues

    def messages(self) -> list[str]:
        """One ``path:line: what`` line per issue."""
        return [issue.message() for issue in self.issues]
