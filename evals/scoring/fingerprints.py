"""Content hashes of what a run scored: the corpus, the queries, the labels and the queries scored.

Two runs can be compared only when they were scored on the same queries and
labels; ``run.json`` records each hash separately (``dataset.fingerprints``) so
``compare`` and ``gate`` can name which one differs. Each is a sha256 over a
canonical form (sorted, one JSON value per line), so reformatting a file or
reordering its lines changes nothing; a changed grade or query text does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["corpus_fingerprint", "qrels_fingerprint", "queries_fingerprint", "query_set_fingerprint"]


def _lines(rows: Iterable[object]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def corpus_fingerprint(path: str | Path) -> str:
    """sha256 of the corpus file's bytes (``sha256sum corpus.jsonl``)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def queries_fingerprint(queries: Iterable[tuple[str, str]]) -> str:
    """Hash of every query's (id, text), sorted by id."""
    return _lines(sorted([q, t] for q, t in queries))


def qrels_fingerprint(qrels: Mapping[str, Mapping[str, int]]) -> str:
    """Hash of the judgments scored against: (query id, document id, grade), sorted."""
    return _lines(sorted([q, d, int(g)] for q, docs in qrels.items() for d, g in docs.items()))


def query_set_fingerprint(query_ids: Iterable[str]) -> str:
    """Hash of the set of query ids a run scored."""
    return _lines(sorted(set(query_ids)))
