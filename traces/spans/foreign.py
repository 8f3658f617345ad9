"""Another retriever's spans read as searches: the other direction of ``openinference``'s export mapping.

A span another program sent is a *search* when it is an OpenInference ``RETRIEVER`` span (``input.value``
the query, ``retrieval.documents.{i}.document.id/score/content/metadata``) or an OpenTelemetry GenAI
retrieval span (``gen_ai.operation.name = retrieval``, ``gen_ai.retrieval.query.text``,
``gen_ai.retrieval.documents`` as a JSON string of ``[{id, score}]``, ``gen_ai.data_source.id``,
``gen_ai.retrieval.top_k``, else the older ``gen_ai.request.top_k``). ``RERANKER`` and ``EMBEDDING`` spans are
stages of the search around them; so is a retriever span nested in another, which the store decides when it
reads (the spans of a trace come in any order). Our own spans (scope ``searchtrace``, ``searchtrace.*``
attributes) are never foreign searches: their RETRIEVER spans are stages of our ``search`` span.

A document's id is ``document.id``, else the metadata key the user named for the service (``traces id-key``):
instrumentations such as LangChain's send no ``document.id``. Without either the document is *unidentified*:
counted, never guessed. A missing score is None, never 0. Pure functions of a span's attributes: no
OpenTelemetry, no I/O.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

from searchtrace.traces.spans import vocabulary as v
from searchtrace.traces.spans.vocabulary import Convention, SpanKind

__all__ = ["Document", "Rerank", "Search", "convention", "is_own", "is_stage", "read_documents", "read_rerank",
           "read_search", "source_of"]

_INDEXED = re.compile(r"^(?P<prefix>[a-z_.]+)\.(?P<i>\d+)\.(?P<field>document\.[a-z_]+)$")
_STAGE_KINDS = frozenset({SpanKind.RERANKER.value, SpanKind.EMBEDDING.value})


@dataclass(frozen=True)
class Document:
    """One document a search returned: its id (None: unidentified), score (None: not sent) and text."""

    id: str | None
    score: float | None
    content: str | None = None


@dataclass(frozen=True)
class Search:
    """What a foreign search span says: its query, the documents in the order returned, and its settings."""

    convention: Convention
    query: str | None
    documents: tuple[Document, ...]
    top_k: int | None = None
    data_source: str | None = None

    @property
    def ids(self) -> tuple[str | None, ...]:
        return tuple(d.id for d in self.documents)

    @property
    def scores(self) -> tuple[float | None, ...]:
        return tuple(d.score for d in self.documents)

    @property
    def unidentified(self) -> int:
        """Documents without an id (neither ``document.id`` nor the service's metadata key)."""
        return sum(d.id is None for d in self.documents)


@dataclass(frozen=True)
class Rerank:
    """A ``RERANKER`` stage: the documents it was given and those it kept, in order."""

    query: str | None
    top_k: int | None
    inputs: tuple[Document, ...]
    outputs: tuple[Document, ...]


def is_own(attributes: Mapping[str, Any], scope: str | None = None) -> bool:
    """True for a span our tracers wrote (scope ``searchtrace[.x]``, or any ``searchtrace.`` attribute)."""
    if scope is not None and (scope == v.OWN_SCOPE or scope.startswith(v.OWN_PREFIX)):
        return True
    return any(k.startswith(v.OWN_PREFIX) for k in attributes)


def convention(attributes: Mapping[str, Any], scope: str | None = None) -> Convention | None:
    """The convention by which a span is a foreign search, or None (not a search, or one of ours)."""
    if attributes.get(v.OPENINFERENCE_SPAN_KIND) == SpanKind.RETRIEVER.value:
        found: Convention | None = Convention.OPENINFERENCE
    elif attributes.get(v.GEN_AI_OPERATION_NAME) == v.GEN_AI_RETRIEVAL:
        found = Convention.GENAI
    else:
        return None
    return None if is_own(attributes, scope) else found


def is_stage(attributes: Mapping[str, Any]) -> bool:
    """True for a span that is a stage of the search around it by its kind (a reranker, an embedding)."""
    return (attributes.get(v.OPENINFERENCE_SPAN_KIND) in _STAGE_KINDS
            or attributes.get(v.GEN_AI_OPERATION_NAME) == v.GEN_AI_EMBEDDINGS)


def read_search(attributes: Mapping[str, Any], id_key: str | None = None,
                scope: str | None = None) -> Search | None:
    """The search a span is, or None when it is not a foreign search. ``id_key``: the metadata key holding a
    document's id when ``document.id`` is missing (the service's, ``traces id-key``)."""
    found = convention(attributes, scope)
    if found is Convention.OPENINFERENCE:
        return Search(found, _text(attributes.get(v.INPUT_VALUE)),
                      read_documents(attributes, v.RETRIEVAL_DOCUMENTS, id_key))
    if found is Convention.GENAI:
        top_k = attributes.get(v.GEN_AI_RETRIEVAL_TOP_K, attributes.get(v.GEN_AI_REQUEST_TOP_K))
        return Search(found, _text(attributes.get(v.GEN_AI_RETRIEVAL_QUERY)),
                      _genai_documents(attributes.get(v.GEN_AI_RETRIEVAL_DOCUMENTS)), _count(top_k),
                      _text(attributes.get(v.GEN_AI_DATA_SOURCE_ID)))
    return None


def read_rerank(attributes: Mapping[str, Any], id_key: str | None = None) -> Rerank | None:
    """The reranker stage a ``RERANKER`` span is (its input and output documents), else None."""
    if attributes.get(v.OPENINFERENCE_SPAN_KIND) != SpanKind.RERANKER.value:
        return None
    return Rerank(_text(attributes.get(v.RERANKER_QUERY)), _count(attributes.get(v.RERANKER_TOP_K)),
                  read_documents(attributes, v.RERANKER_INPUT_DOCUMENTS, id_key),
                  read_documents(attributes, v.RERANKER_OUTPUT_DOCUMENTS, id_key))


def read_documents(attributes: Mapping[str, Any], prefix: str, id_key: str | None = None) -> tuple[Document, ...]:
    """The documents flattened under ``prefix`` (``{prefix}.{i}.document.*``), in index order."""
    fields: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        m = _INDEXED.match(key)
        if m and m["prefix"] == prefix:
            fields.setdefault(int(m["i"]), {})[m["field"]] = value
    return tuple(_document(fields[i], id_key) for i in sorted(fields))


def source_of(resource: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(service, project) of a resource: ``service.name`` and ``openinference.project.name``."""
    return _text(resource.get(v.SERVICE_NAME)), _text(resource.get(v.PROJECT_NAME))


def _document(fields: Mapping[str, Any], id_key: str | None) -> Document:
    doc_id = _text(fields.get(v.DOCUMENT_ID))
    if doc_id is None and id_key:
        doc_id = _text(_metadata(fields.get(v.DOCUMENT_METADATA)).get(id_key))
    return Document(doc_id, _score(fields.get(v.DOCUMENT_SCORE)), _text(fields.get(v.DOCUMENT_CONTENT)))


def _metadata(value: Any) -> Mapping[str, Any]:
    """A document's metadata: a mapping, or a JSON string of one; anything else is no metadata."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, Mapping) else {}


def _genai_documents(value: Any) -> tuple[Document, ...]:
    """``gen_ai.retrieval.documents``: a JSON string of ``[{id, score}]``; what is not that is no document."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return ()
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(Document(_text(d.get("id")), _score(d.get("score")), _text(d.get("content")))
                 for d in value if isinstance(d, Mapping))


def _text(value: Any) -> str | None:
    """A string as sent, an integer id as its digits; anything else (a float, a list, empty) is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return value if isinstance(value, str) and value != "" else None


def _score(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return int(value) if value >= 0 else None
