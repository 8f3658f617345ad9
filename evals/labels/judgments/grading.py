"""One judgment from the terminal: ``judge grade DATASET QUERY_ID DOC_ID GRADE``, and ``--undo``.

It goes through the same :class:`~searchtrace.evals.labels.judgments.session.JudgingSession`
as the dashboard's Judge page: the same store (``judgments.jsonl``, or the shared
store), the same scale and document check, the judge's hold on the pair freed.
Undoing appends a retraction (a judgment without a grade), as the page's Undo
does: the store only appends.
"""

from __future__ import annotations

from dataclasses import dataclass

from searchtrace.errors import ValidationError
from searchtrace.evals.labels.judgments.records import Judgment
from searchtrace.evals.labels.judgments.session import JudgingSession
from searchtrace.retriever import load_queries

__all__ = ["Graded", "grade_pair", "parse_grade", "undo_grade"]


@dataclass(frozen=True)
class Graded:
    """What one ``judge grade`` appended: ``judgment``, and for an undo the judgment it took back."""

    judgment: Judgment
    taken_back: Judgment | None = None


def parse_grade(text: str, session: JudgingSession) -> int:
    """``text`` as a grade on the session's scale.

    Raises:
        ValidationError: not a whole number, or off the scale, naming the scale.
    """
    try:
        grade = int(text.strip())
    except ValueError:
        raise ValidationError(f"grade {text!r} is not on the judging scale ({session.scale.describe()})",
                              field="grade") from None
    session.scale.check(grade)
    return grade


def grade_pair(session: JudgingSession, queries_file: str, query_id: str, doc_id: str, grade: int,
               judge: str) -> Graded:
    """Record ``judge``'s ``grade`` of the pair, once the query is one of ``queries_file``'s.

    Raises:
        ValidationError: an unknown query or document, a grade off the scale, an empty judge.
    """
    if query_id not in {q.id for q in load_queries(queries_file)}:
        raise ValidationError(f"unknown query {query_id!r}: not in {queries_file}", field="query_id")
    return Graded(session.record(query_id, doc_id, grade, judge))


def undo_grade(session: JudgingSession, query_id: str, doc_id: str, judge: str) -> Graded:
    """Take back ``judge``'s standing judgment of the pair (a retraction appended).

    Raises:
        ValidationError: the judge has no standing judgment of the pair, naming it.
    """
    standing = session.tally.refresh().label((query_id, doc_id), judge)
    if standing is None:
        raise ValidationError(f"nothing to undo: {judge!r} has no standing judgment of query {query_id!r}, "
                              f"document {doc_id!r}", field="undo")
    return Graded(session.record(query_id, doc_id, None, judge, kind=standing.kind), standing)
