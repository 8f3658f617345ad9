"""``judge import``: an existing qrels file's labels as ``imported`` judgments.

TREC qrels (``qid 0 docid grade``) or BEIR TSV, read by
:func:`searchtrace.evals.runs.trec.qrels_lines`. Every line is checked before
anything is written (its ids in the dataset's queries and corpus, its grade on
the scale), and the judgments are appended in one write: a bad line leaves the
store as it was.
"""

from __future__ import annotations

from pathlib import Path

from searchtrace.errors import DataError, ValidationError
from searchtrace.evals.labels.judgments.folder import JudgingFolder
from searchtrace.evals.labels.judgments.records import Judgment, Kind, now
from searchtrace.evals.runs.trec import qrels_lines

__all__ = ["import_qrels"]


def import_qrels(folder: JudgingFolder, qrels: Path, judge: str | None = None) -> tuple[Judgment, ...]:
    """Append every label of ``qrels`` to ``folder``'s store, by ``judge`` (default: the file's name).

    Raises:
        DataError: a malformed line, an id the dataset does not have or a grade off
            its scale, naming the file and line (nothing is written then).
    """
    query_ids, doc_ids = folder.ids()
    scale = folder.scale()
    who, when = judge or qrels.name, now()
    judgments = []
    for number, query_id, doc_id, grade in qrels_lines(qrels):
        if query_id not in query_ids:
            raise DataError(str(qrels), number, f"unknown query id {query_id!r} (not in {folder.root / 'queries.jsonl'})")
        if doc_id not in doc_ids:
            raise DataError(str(qrels), number, f"unknown doc id {doc_id!r} (not in {folder.root / 'corpus.jsonl'})")
        try:
            judgments.append(Judgment(query_id, doc_id, scale.check(grade), who, Kind.IMPORTED, when))
        except ValidationError as exc:
            raise DataError(str(qrels), number, exc.message) from None
    folder.store().append(judgments)
    return tuple(judgments)
