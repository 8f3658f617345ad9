"""Loaders for datasets in the BEIR layout, plus our ``triples.jsonl``.

A dataset folder holds ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``
and optionally ``triples.jsonl``. Every loader streams its file line by line
(one ``json.loads`` per line, no quadratic work) and raises
:class:`~retriever.errors.DataError` naming the file and the 1-based line of
the first malformed record. Blank lines are skipped but still counted.

Modules: ``corpus``, ``queries``, ``qrels`` and ``triples`` read one file
each; ``dataset`` loads a whole folder; ``report`` describes the qrels rows
``load_dataset`` dropped; ``hashing`` fingerprints the index inputs. The line
readers and field checks they share are in ``_lines`` and ``_fields``.
"""

from searchtrace.retriever.data.beir.corpus import load_corpus
from searchtrace.retriever.data.beir.dataset import SPLIT_NAME, Dataset, dataset_name, load_dataset
from searchtrace.retriever.data.beir.hashing import dataset_fingerprint
from searchtrace.retriever.data.beir.qrels import QRELS_HEADER, load_qrels
from searchtrace.retriever.data.beir.queries import Query, load_queries
from searchtrace.retriever.data.beir.report import IssueKind, QrelsIssue, QrelsReport
from searchtrace.retriever.data.beir.triples import load_triples

__all__ = [
    "QRELS_HEADER",
    "SPLIT_NAME",
    "Dataset",
    "IssueKind",
    "Query",
    "QrelsIssue",
    "QrelsReport",
    "dataset_fingerprint",
    "dataset_name",
    "load_corpus",
    "load_dataset",
    "load_qrels",
    "load_queries",
    "load_triples",
]
