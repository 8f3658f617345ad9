"""``rankings.parquet``: a run's rankings as columns, what ``run.trec`` holds, read without parsing text.

Columns ``query_id`` and ``doc_id`` (dictionary-encoded: the interned ids and
one code per row, as :class:`~searchtrace.evals.scoring.rankings.Run` keeps them) and
``score`` (float64, bit for bit what ``run.trec`` holds, since that file writes
scores with ``repr``), in ranking order: by query, score descending, ties by
document id descending. Reading it costs a tenth of parsing ``run.trec`` (a
million rows in about 30 ms), which is what makes comparing two large runs
without labels take well under a second. ``run.trec`` stays the interchange
format; a folder written before this table has only that.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from searchtrace.errors import DataError
from searchtrace.evals.runs.runfolder.arrow_columns import dictionary, floats, numbers
from searchtrace.evals.scoring.rankings import Run, duplicate_row

__all__ = ["read_rankings", "write_rankings"]


def write_rankings(path: Path, run: Run) -> None:
    """Write ``run`` to ``path`` (a new file: the caller writes it atomically)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"query_id": dictionary(run.query_index, run.queries.tolist()),
                      "doc_id": dictionary(run.doc_index, run.docs.tolist()), "score": floats(run.scores)})
    pq.write_table(table, path)


def read_rankings(path: Path) -> Run:
    """The run ``path`` holds.

    Raises:
        DataError: the file cannot be read as this table (damaged, truncated, other columns, a document
            twice in a query's ranking), naming the file. Rows out of ranking order are put in order.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(path).read().unify_dictionaries().combine_chunks()  # read_table imports pandas
        queries, docs, values = (table.column(name).chunk(0) if table.num_rows else None
                                 for name in ("query_id", "doc_id", "score"))
        scores = numbers(values, pa.float64(), np.float64) if values is not None else None
    except (pa.ArrowException, KeyError, OSError, ValueError) as exc:
        raise DataError(str(path), None, f"cannot read the rankings table: {exc}") from None
    if queries is None or docs is None or scores is None:
        return Run.from_arrays([], [], [])
    if not all(isinstance(c, pa.DictionaryArray) for c in (queries, docs)) or queries.null_count or docs.null_count:
        raise DataError(str(path), None, "query_id and doc_id must be dictionary-encoded ids without nulls")
    try:
        query_index, doc_index = (numbers(c.indices, pa.int32(), np.int32) for c in (queries, docs))
    except ValueError as exc:
        raise DataError(str(path), None, f"cannot read the rankings table: {exc}") from None
    doc_ids = np.asarray(docs.dictionary.to_pylist(), dtype=object)
    for codes, vocabulary in ((query_index, queries.dictionary), (doc_index, docs.dictionary)):
        if codes.min() < 0 or codes.max() >= len(vocabulary):
            raise DataError(str(path), None, "an id code points outside its dictionary")
    if duplicate_row(query_index, doc_index, len(doc_ids)) is not None:
        raise DataError(str(path), None, "a document appears twice in one query's ranking")
    return Run.from_codes(np.asarray(queries.dictionary.to_pylist(), dtype=object), doc_ids, query_index, doc_index,
                          scores, copy=False)
