"""What a query's trace and its dataset add to its journal record: text, rewrite, graph context."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

import pandas as pd

from searchtrace.dashboard.data.tracestore import trace_store
from searchtrace.names import Stage
from searchtrace.traces import SpanRecord
from searchtrace.traces import vocabulary as v

__all__ = ["TraceContext", "dataset_triples", "query_text", "trace_context"]

MAX_DATASET_FILE = 64 * 2**20  # larger queries/triples files are not read for display


@dataclass(frozen=True)
class TraceContext:
    """The parts of a search trace the Query page shows.

    Attributes:
        text: the query text (None when query capture was off).
        entities: graph entities the rewrite stage detected.
        rewrite_terms: terms it added to the keyword query.
        graph_triples: triples the graph stage reached.
        graph_ids: documents the graph stage returned.
        candidate_counts: candidates each stage produced, by span name.
        durations_ms: each span's duration, by span name.
        skipped: why each skipped stage did not run (``fusion weight 0``), by span name.
        ranked: the ids each ranking stage recorded, best first, by span name (the retrieval stages' and the
            fusion's candidates, the reranker's output; at most the store's ``max_candidates`` each).
        shown: the ids the search returned, in order.
    """

    trace_id: str
    text: str | None
    entities: tuple[str, ...]
    rewrite_terms: tuple[str, ...]
    graph_triples: int | None
    graph_ids: tuple[str, ...]
    candidate_counts: Mapping[str, int]
    durations_ms: Mapping[str, float]
    skipped: Mapping[str, str] = field(default_factory=dict)
    ranked: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    shown: tuple[str, ...] = ()


def trace_context(home: str | Path, trace_id: str) -> TraceContext | None:
    """Read the trace's spans; None when the home has no store or the trace is gone."""
    store = trace_store(home)
    detail = store.load_trace(trace_id) if store and trace_id else None
    if detail is None:
        return None
    by_name = {s.name: s.attributes for s in detail.spans}
    root, rewrite, graph = (by_name.get(n, {}) for n in (v.SEARCH_SPAN, Stage.REWRITE.value, Stage.GRAPH.value))
    return TraceContext(
        trace_id=detail.summary.trace_id, text=root.get(v.INPUT_VALUE) or detail.summary.query,
        entities=tuple(rewrite.get(v.DETECTED_ENTITIES, ())), rewrite_terms=tuple(rewrite.get(v.REWRITE_TERMS, ())),
        graph_triples=graph.get(v.GRAPH_HITS), graph_ids=tuple(graph.get(v.CANDIDATE_IDS, ())),
        candidate_counts={s.name: s.attributes[v.CANDIDATE_COUNT] for s in detail.spans
                          if v.CANDIDATE_COUNT in s.attributes},
        durations_ms={s.name: s.duration_ms for s in detail.spans},
        skipped={s.name: str(s.attributes[v.SKIPPED]) for s in detail.spans if v.SKIPPED in s.attributes},
        ranked=_ranked(detail.spans), shown=tuple(root.get(v.RESULT_IDS, ())))


def _ranked(spans: Iterable[SpanRecord]) -> dict[str, tuple[str, ...]]:
    """Each ranking span's ids, best first: a stage's candidates, or what the reranker put out."""
    out = {}
    for span in spans:
        ids = span.attributes.get(v.RERANK_OUTPUT_IDS, span.attributes.get(v.CANDIDATE_IDS))
        if ids is not None and span.name != v.SEARCH_SPAN:
            out[span.name] = tuple(str(i) for i in ids)
    return out


def _readable(path: Path) -> bool:
    return path.is_file() and path.stat().st_size <= MAX_DATASET_FILE


@functools.lru_cache(maxsize=8)
def _query_texts(path: str, mtime_ns: int) -> dict[str, str]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                out[str(row.get("_id"))] = row.get("text")
    return out


def query_text(dataset_path: str | None, query_id: str) -> str | None:
    """The query's text from the dataset's ``queries.jsonl``, when the dataset is still there."""
    path = Path(dataset_path or "") / "queries.jsonl"
    if not dataset_path or not _readable(path):
        return None
    return _query_texts(str(path), path.stat().st_mtime_ns).get(query_id)


def dataset_triples(dataset_path: str | None, doc_ids: Iterable[str], names: Iterable[str]) -> pd.DataFrame:
    """Triples of ``doc_ids`` in the dataset's ``triples.jsonl`` that mention one of ``names``
    (all of the documents' triples when ``names`` is empty)."""
    columns = ["subject", "relation", "object", "doc_id"]
    wanted, names = set(doc_ids), set(names)
    path = Path(dataset_path or "") / "triples.jsonl"
    if not wanted or not dataset_path or not _readable(path):
        return pd.DataFrame(columns=columns)
    needles = {json.dumps(d, ensure_ascii=a) for d in wanted for a in (True, False)}
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not any(n in line for n in needles):  # parse only the lines that can match
                continue
            doc = json.loads(line)
            if doc.get("_id") in wanted:
                rows += [{"subject": s, "relation": r, "object": o, "doc_id": doc["_id"]}
                         for s, r, o in doc.get("triples", []) if not names or s in names or o in names]
    return pd.DataFrame(rows, columns=columns).drop_duplicates(["subject", "relation", "object"], ignore_index=True)
