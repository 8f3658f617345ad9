"""SingleStore's knowledge-graph search: ``POST /kag-search`` (seed ``003``).

Request: ``{query, top_k (default 5), debug (default false)}``. Answer: ``results``, each a document
(``doc_id``, ``content``, ``vector_score``, ``text_score``, ``combined_score``, ``entities``,
``relationships``), the ``entities`` (``primary``: the query's, ``related``: the others of the results) and
``relationships`` of the knowledge graph behind them, ``generated_response`` null (this is a retriever, no
model writes an answer) and ``execution_time`` in seconds. ``combined_score`` is our relevance, not
SingleStore's 0.7 / 0.3 blend; ``vector_score`` and ``text_score`` are our dense cosine and BM25 score
(0 where a list did not find the document).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from searchtrace.errors import ValidationError
from searchtrace.retriever.response import Result, Triple
from searchtrace.retriever.serve.dialects.speaker import Passages, Speaker

PATH = "/kag-search"
DEFAULT_TOP_K = 5
FIELDS = ("query", "top_k", "debug")


def request_of(body: Any) -> tuple[dict[str, Any], int, bool]:
    """Our request (without ``top_k``), the documents asked for and ``debug``, from the JSON body (checked as
    the seed's Pydantic model does: ``query`` a string, ``top_k`` an integer, ``debug`` a boolean)."""
    if not isinstance(body, Mapping):
        raise ValidationError(f"request must be a JSON object, got {type(body).__name__}")
    unknown = [k for k in body if k not in FIELDS]
    if unknown:
        raise ValidationError(f"{unknown[0]}: unknown field; /kag-search takes {', '.join(FIELDS)}",
                              field=str(unknown[0]))
    if not isinstance(body.get("query"), str):
        raise ValidationError("query: required, a string", field="query")
    debug = body.get("debug", False)
    if not isinstance(debug, bool):
        raise ValidationError(f"debug must be true or false, got {debug!r:.40}", field="debug")
    # always our debug: it carries the dense and keyword scores the answer's vector_score and text_score report
    return {"query": body["query"], "debug": True}, body.get("top_k", DEFAULT_TOP_K), debug


def _relationship(t: Triple, confidence: float) -> dict[str, Any]:
    return {"source": t.subject, "relation": t.relation, "target": t.object, "doc_id": t.doc_id,
            "confidence": confidence}


def _scores(r: Result) -> tuple[float, float]:
    d = r.detail
    return (float(d.dense or 0.0), float(d.keyword or 0.0)) if d is not None else (0.0, 0.0)


def answer_of(found: Passages, debug: bool, seconds: float) -> dict[str, Any]:
    """SingleStore's answer from the passages of our response (and its knowledge-graph triples)."""
    response = found.response
    score_of = {r.id: r.score for r in found.passages}
    fact_score = {(f.subject, f.relation, f.object): f.score for f in found.facts}
    results = []
    for r in found.passages:
        vector, text = _scores(r)
        triples = [t for t in response.kg if t.doc_id == r.id]
        names = list(dict.fromkeys(n for t in triples for n in (t.subject, t.object)))
        results.append({"doc_id": r.id, "content": r.content, "vector_score": vector, "text_score": text,
                        "combined_score": r.score, "entities": [{"name": n} for n in names],
                        "relationships": [_relationship(t, r.score) for t in triples]})
    primary = list(response.rewrite_terms)
    related = [n for n in dict.fromkeys(n for t in response.kg for n in (t.subject, t.object)) if n not in primary]
    relationships = [_relationship(t, fact_score.get((t.subject, t.relation, t.object), score_of.get(t.doc_id, 0.0)))
                     for t in response.kg]
    out: dict[str, Any] = {"results": results,
                           "entities": {"primary": primary, "related": related}, "relationships": relationships,
                           "generated_response": None, "execution_time": round(seconds, 4)}
    if debug:
        out["debug"] = {"traceId": response.trace_id, "mode": response.mode.value, "bestScore": response.best_score,
                        "degraded": list(response.degraded)}
    return out


def mount(app: Any, speaker: Speaker) -> None:
    """``POST /kag-search``."""
    import orjson

    @app.post(PATH, summary="SingleStore's knowledge-graph search (dialect)", tags=["dialect: singlestore-kag"])
    async def kag_search(request: Request) -> Response:
        async def work() -> dict[str, Any]:
            started = time.perf_counter()
            try:
                body = orjson.loads(await request.body())
            except orjson.JSONDecodeError as exc:
                raise ValidationError(f"request body is not valid JSON: {exc}") from None
            ours, top_k, debug = request_of(body)
            found = await speaker.passages(ours, top_k, field="top_k")
            return answer_of(found, debug, time.perf_counter() - started)
        return await speaker.http(request, PATH, work)
