"""The limits on what is read from a user's file: one line, one id. Every reader takes them from here.

A line or an id past its limit is refused with :class:`~searchtrace.errors.DataError`
naming the file and the line, as soon as it is seen: readers of JSON lines read at
most one limit's worth of a line (never a giant line whole), and the TREC readers
refuse a long line before splitting it. The README's "Limits" section lists them.

The bounds sit far above what real datasets hold (scifact and MuSiQue: ids of at
most 33 bytes, corpus lines of at most 10 KB, query lines of at most 640 bytes),
and far below what costs memory: a line is parsed into Python objects several times
its size, once per line.
"""

from __future__ import annotations

__all__ = [
    "MAX_CORPUS_LINE_BYTES",
    "MAX_ID_BYTES",
    "MAX_QUERY_LINE_BYTES",
    "MAX_TREC_LINE_BYTES",
    "MAX_TRIPLES_LINE_BYTES",
    "id_too_long",
    "line_too_long",
]

MAX_ID_BYTES = 512
"""A document or query id, in UTF-8 bytes: ``_id`` of corpus, queries and triples lines, ids of qrels and TREC runs.

Real ids are short (scifact 9 bytes, MuSiQue 33, MS MARCO and TREC collections under
64); 512 leaves room for a URL or a path as an id."""

MAX_QUERY_LINE_BYTES = 1 << 20
"""One line of ``queries.jsonl`` (1 MiB): a query is a sentence or a paragraph (the encoder reads 256 tokens of it)."""

MAX_CORPUS_LINE_BYTES = 8 << 20
"""One line of ``corpus.jsonl`` (8 MiB): a whole book (War and Peace is 3.2 MB of text) or the longest
Wikipedia article fits; documents are cut into passages when indexed anyway."""

MAX_TRIPLES_LINE_BYTES = 8 << 20
"""One line of ``triples.jsonl`` (8 MiB): one document's triples, bounded as its corpus line is."""

MAX_TREC_LINE_BYTES = 4096
"""One line of a TREC run or qrels file, or of a BEIR qrels TSV: two ids at their limit, a rank, a score
and a tag fit many times over (real lines are under 100 bytes)."""


def line_too_long(limit: int) -> str:
    """The message of a line past ``limit`` bytes."""
    return f"line longer than {limit:,} bytes, the limit for this file (see the README's Limits)"


def id_too_long(what: str, size: int) -> str:
    """The message of an id of ``size`` bytes, past :data:`MAX_ID_BYTES`."""
    return f"{what} of {size:,} bytes, longer than the {MAX_ID_BYTES} bytes allowed (see the README's Limits)"
