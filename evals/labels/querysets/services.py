"""Another retriever's traffic as a query set: the searches a service sent (``collect``), read from the store.

The queries are grouped as our own traffic's are (``traffic.normalize``, ``traffic.query_id``). When no
dataset's corpus is linked, the corpus is the documents the searches returned: each id once, with the first
text any span sent for it; a document seen without text is written with an empty one and counted, and an
unidentified document (no id: ``traces id-key``) is counted, never given one. What the retriever returned for
each query (:func:`rankings`) is what ``judge pool --from-traces`` pools and ``eval --from-traces`` scores.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from searchtrace.database import StoreUrl
from searchtrace.evals.labels.querysets.traffic import Traffic, TrafficQuery, normalize, query_id
from searchtrace.traces import SearchFilter, SearchRecord, reading, to_ns

__all__ = ["SeenCorpus", "ServiceFilter", "ServiceTraffic", "gather_searches", "rankings", "read_searches",
           "traced_rankings", "traced_stages"]


@dataclass(frozen=True)
class ServiceFilter:
    """Which of a service's searches give the queries: its ``service.name``, optionally its project and when."""

    service: str
    project: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    def search_filter(self, trace_ids: tuple[str, ...] | None = None, contents: bool = True) -> SearchFilter:
        """The store's filter for these searches (``contents``: with their documents' text)."""
        return SearchFilter(service=self.service, project=self.project, since=self.since, until=self.until,
                            trace_ids=trace_ids, contents=contents)

    def to_json(self) -> dict[str, Any]:
        """The filters set, by option name (``queryset.json``'s ``filters``)."""
        values = {"service": self.service, "project": self.project,
                  "since": self.since.isoformat(timespec="seconds") if self.since else None,
                  "until": self.until.isoformat(timespec="seconds") if self.until else None}
        return {k: v for k, v in values.items() if v is not None}

    @classmethod
    def from_json(cls, filters: Mapping[str, Any]) -> ServiceFilter | None:
        """The filter a query set's ``filters`` record, or None when it was not made from a service."""
        if not isinstance(filters.get("service"), str):
            return None
        since, until = (datetime.fromisoformat(filters[k]) if filters.get(k) else None for k in ("since", "until"))
        return cls(filters["service"], filters.get("project"), since, until)

    def problems(self) -> list[str]:
        out = [] if self.service.strip() else ["--service: give the service's name (its service.name)"]
        if self.since and self.until and to_ns(self.since) >= to_ns(self.until):
            out.append(f"--since {self.since} is not before --until {self.until}")
        return out


@dataclass(frozen=True)
class SeenCorpus:
    """The documents the searches returned: id -> text ("" when none was sent), in the order first seen.

    Attributes:
        without_content: documents (distinct ids) no span sent a text for.
        unidentified: documents returned without an id (left out, counted).
    """

    documents: Mapping[str, str]
    without_content: int
    unidentified: int


@dataclass(frozen=True)
class ServiceTraffic:
    """A service's searches as queries (``traffic``) and the corpus they returned."""

    traffic: Traffic
    corpus: SeenCorpus


def gather_searches(searches: Iterable[SearchRecord]) -> ServiceTraffic:
    """The distinct queries of ``searches`` (oldest first) and the documents they returned. A search without a
    query text is counted as uncaptured; its documents still join the corpus."""
    texts: dict[str, str] = {}
    traces: dict[str, list[str]] = {}
    docs: dict[str, str] = {}
    n = uncaptured = unidentified = 0
    for search in searches:
        n += 1
        for doc in search.documents:
            if doc.id is None:
                unidentified += 1
            elif not docs.get(doc.id):
                docs[doc.id] = doc.content or ""
        if search.query is None:
            uncaptured += 1
            continue
        key = normalize(search.query)
        texts.setdefault(key, search.query)
        ids = traces.setdefault(key, [])
        if search.trace_id not in ids:
            ids.append(search.trace_id)
    queries = tuple(TrafficQuery(query_id(texts[key]), texts[key], tuple(ids)) for key, ids in traces.items())
    empty = sum(not text for text in docs.values())
    return ServiceTraffic(Traffic(queries, n, uncaptured), SeenCorpus(docs, empty, unidentified))


def read_searches(store_path: Path, url: StoreUrl | None, flt: SearchFilter) -> list[SearchRecord]:
    """The searches ``flt`` matches in the home's store at ``store_path`` (or the shared one at ``url``)."""
    with reading(store_path, url) as store:
        return store.searches(flt) if store is not None else []


def rankings(searches: Sequence[SearchRecord], queries: Mapping[str, Sequence[str]] | None = None
             ) -> dict[str, list[list[str]]]:
    """query id -> the ranking of each search that asked it, oldest first (unidentified documents left out).
    ``queries``: only these query ids, each from only the traces it lists (a query set's origins)."""
    out: dict[str, list[list[str]]] = {}
    for search in searches:
        if search.query is None:
            continue
        qid = query_id(search.query)
        if queries is not None and search.trace_id not in queries.get(qid, ()):
            continue
        out.setdefault(qid, []).append([d for d in search.doc_ids if d is not None])
    return out


def traced_rankings(folder: Path, store_path: Path, url: StoreUrl | None) -> tuple[str, dict[str, list[list[str]]]]:
    """The service a query set made with ``--service`` came from, and what its retriever returned for each of the
    set's queries, in the traces the query lists (:func:`rankings`).

    Raises:
        ValidationError: ``folder`` is not a query set made from a service's searches.
    """
    service, searches, asked = _traced(folder, store_path, url)
    return service, rankings(searches, asked)


def traced_stages(folder: Path, store_path: Path, url: StoreUrl | None) -> dict[str, list[tuple[str, list[str]]]]:
    """query id -> the stages of the latest search of each query of a ``--service`` query set: ``retriever``
    (its documents), then ``reranker`` (the output) of each RERANKER span of its trace whose input holds one of
    the search's documents, in the order they started (unidentified documents left out)."""
    from searchtrace.traces import foreign, key_of

    _, searches, asked = _traced(folder, store_path, url)
    latest: dict[str, SearchRecord] = {}
    for search in searches:
        if search.query is not None and search.trace_id in asked.get(query_id(search.query), ()):
            latest[query_id(search.query)] = search
    out: dict[str, list[tuple[str, list[str]]]] = {}
    with reading(store_path, url) as store:
        keys = store.doc_id_keys() if store is not None else {}
        for qid, search in latest.items():
            ids = [d for d in search.doc_ids if d is not None]
            stages = [("retriever", ids)]
            detail = store.load_trace(search.trace_id) if store is not None else None
            for span in sorted(detail.spans if detail else (), key=lambda s: s.start_ns):
                rerank = foreign.read_rerank(span.attributes, key_of(search.service, keys))
                if rerank is not None and {d.id for d in rerank.inputs} & set(ids):
                    stages.append(("reranker", [d.id for d in rerank.outputs if d.id is not None]))
            out[qid] = stages
    return out


def _traced(folder: Path, store_path: Path, url: StoreUrl | None
            ) -> tuple[str, list[SearchRecord], dict[str, tuple[str, ...]]]:
    """(service, its searches in the query set's traces, query id -> the traces that asked it)."""
    from searchtrace.errors import ValidationError
    from searchtrace.evals.labels.querysets.folder import INFO_FILE, origins, read_info

    service = ServiceFilter.from_json(read_info(folder).filters) if (folder / INFO_FILE).is_file() else None
    if service is None:
        raise ValidationError(f"{folder} is not a query set made from another retriever's traces: make one with "
                              "`searchtrace queries from-traces OUT --service NAME`", field="from-traces")
    asked = {qid: origin.trace_ids for qid, origin in (origins(folder) or {}).items()}
    trace_ids = tuple(dict.fromkeys(t for ids in asked.values() for t in ids))
    return service.service, read_searches(store_path, url, service.search_filter(trace_ids, contents=False)), asked
