"""The search response: a frozen record the shape stage builds, and its JSON, the wire contract.

Every reader in every package uses the records' attributes. The JSON exists in
two places only: :meth:`SearchResponse.to_json` writes it (HTTP, MCP, the
CLI's ``--json``, each byte for byte the same: ``tests/test_wire_golden.py``)
and :meth:`SearchResponse.from_json` reads it back (a replay; ``eval --target``
reads it with :meth:`SearchResponse.ranked_from_json`, the same reader keeping
only what an eval shows), refusing what does not fit with a
:class:`ValidationError` that names the field. The TypedDicts describe that
JSON for type checkers. A passage as served is read in a few exact type tests,
anything else field by field: both read the same records and refuse the same
answers (``tests/retriever/test_response_record.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from operator import itemgetter
from typing import Any, ClassVar, Literal, NamedTuple, NotRequired, TypedDict, TypeVar

from searchtrace.errors import ValidationError
from searchtrace.names import Band, Mode
from searchtrace.retriever.types import ComponentType, Triple
from searchtrace.typedreads import LIST, OBJECT, REAL, STRING, STRINGS, Kind, read

__all__ = ["Hit", "Metadata", "Ranking", "RelationHit", "Result", "RetryHints", "ScoreDetail", "SearchResponse", "Triple"]


# -- the JSON, as type checkers see it ----------------------------------------------------------


class MetadataJson(TypedDict):
    title: str
    url: str
    language: str
    timestamp: str
    tags: list[str]
    collection: str


class ScoreComponentsJson(TypedDict):
    dense: float | None
    keyword: float | None
    graph: float | None
    fused: float | None


class ResultJson(TypedDict):
    id: str
    content: str
    score: float
    confidenceBand: Literal["high", "medium", "low"]
    component_type: Literal["chunk", "relation"]
    metadata: MetadataJson
    subject: NotRequired[str]
    relation: NotRequired[str]
    object: NotRequired[str]
    doc_ids: NotRequired[list[str]]
    score_components: NotRequired[ScoreComponentsJson]
    ranks: NotRequired[dict[str, int | None]]


class TripleJson(TypedDict):
    subject: str
    relation: str
    object: str
    doc_id: str


class RetryHintsJson(TypedDict):
    detectedEntities: list[str]
    relatedTerms: list[str]
    narrowerQuery: str
    broaderQuery: str


class SearchResponseJson(TypedDict):
    results: list[ResultJson]
    kg: list[TripleJson]
    rewrite_terms: list[str]
    bestScore: float
    noConfidentResults: bool
    retryHints: RetryHintsJson | None
    traceId: str
    mode: Literal["fast", "graph"]
    degraded: list[str]
    traceUrl: NotRequired[str]


def _object(properties: dict[str, Any], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "additionalProperties": False,
            "required": [k for k in properties if k not in optional]}


_STRINGS = {"type": "array", "items": {"type": "string"}}
_NUMBER_OR_NULL = {"type": ["number", "null"]}
_RANK = {"type": ["integer", "null"], "minimum": 1}


def response_schema() -> dict[str, Any]:
    """The JSON schema of :meth:`SearchResponse.to_json`, written beside the TypedDicts it mirrors (the served
    API's OpenAPI document declares it; the contract test holds every answer to it)."""
    metadata = _object({"title": {"type": "string"}, "url": {"type": "string"}, "language": {"type": "string"},
                        "timestamp": {"type": "string"}, "tags": _STRINGS, "collection": {"type": "string"}})
    result = _object({
        "id": {"type": "string", "minLength": 1}, "content": {"type": "string"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "confidenceBand": {"type": "string", "enum": [b.value for b in Band]},
        "component_type": {"type": "string", "enum": [c.value for c in ComponentType]},
        "metadata": metadata, "subject": {"type": "string"}, "relation": {"type": "string"},
        "object": {"type": "string"}, "doc_ids": _STRINGS,
        "score_components": _object({k: _NUMBER_OR_NULL for k in ("dense", "keyword", "graph", "fused")}),
        "ranks": _object({"dense": _RANK, "keyword": _RANK, "graph": _RANK, "fused": {"type": "integer", "minimum": 1}}),
    }, optional=("subject", "relation", "object", "doc_ids", "score_components", "ranks"))
    triple = _object({k: {"type": "string"} for k in ("subject", "relation", "object", "doc_id")})
    hints = _object({"detectedEntities": _STRINGS, "relatedTerms": _STRINGS, "narrowerQuery": {"type": "string"},
                     "broaderQuery": {"type": "string"}})
    return _object({
        "results": {"type": "array", "items": result}, "kg": {"type": "array", "items": triple},
        "rewrite_terms": _STRINGS, "bestScore": {"type": "number", "minimum": 0, "maximum": 1},
        "noConfidentResults": {"type": "boolean"}, "retryHints": {"anyOf": [hints, {"type": "null"}]},
        "traceId": {"type": "string"}, "mode": {"type": "string", "enum": [m.value for m in Mode]},
        "degraded": _STRINGS, "traceUrl": {"type": "string"},
    }, optional=("traceUrl",))


# -- reading JSON: every check names the field ---------------------------------------------------


def _refuse(where: str, expected: str, got: object) -> ValidationError:
    return ValidationError(f"{where}: expected {expected}, got {got!r}", field=where)


def _refuse_type(where: str, expected: str, got: object) -> ValidationError:
    """The refusal that names the type got, not its value (a whole list or object is too long to show)."""
    return ValidationError(f"{where}: expected {expected}, got {type(got).__name__}", field=where)


def _refuse_bare(where: str, expected: str, got: object) -> ValidationError:
    return ValidationError(f"{where}: expected {expected}", field=where)


def _field(data: Mapping[str, Any], key: str, where: str) -> Any:
    read(data, OBJECT, where.rstrip(".") or "response", _refuse_type)
    if key not in data:
        raise ValidationError(f"{where}{key}: missing", field=f"{where}{key}")
    return data[key]


_SCORE = REAL.such_that(lambda v: v == v, "a number")  # NaN refused; an infinite score is read as given
_ID: Kind[str] = Kind("a non-empty string", lambda v: isinstance(v, str) and bool(v))


def _str(data: Mapping[str, Any], key: str, where: str = "") -> str:
    return read(_field(data, key, where), STRING, f"{where}{key}", _refuse)


def _number(data: Mapping[str, Any], key: str, where: str = "") -> float:
    return float(read(_field(data, key, where), _SCORE, f"{where}{key}", _refuse))


def _id(data: Mapping[str, Any], where: str) -> str:
    return read(_field(data, "id", where), _ID, f"{where}id", _refuse_bare)


def _strings(data: Mapping[str, Any], key: str, where: str = "") -> tuple[str, ...]:
    return read(_field(data, key, where), STRINGS, f"{where}{key}", _refuse_bare)


def _list(data: Mapping[str, Any], key: str, where: str = "") -> list[Any]:
    return read(_field(data, key, where), LIST, f"{where}{key}", _refuse_type)


def _band(data: Mapping[str, Any], where: str) -> Band:
    value = data.get("confidenceBand", Band.LOW.value)
    try:
        return Band(value)
    except ValueError:
        raise ValidationError(f"{where}confidenceBand: expected high, medium or low, got {value!r}",
                              field=f"{where}confidenceBand") from None


# -- the records -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Metadata:
    """A passage's metadata, as the corpus gives it (empty strings where it gives nothing)."""

    title: str = ""
    url: str = ""
    language: str = ""
    timestamp: str = ""
    tags: tuple[str, ...] = ()
    collection: str = ""

    @classmethod
    def of(cls, payload: Mapping[str, Any]) -> Metadata:
        """From a stored passage's payload."""
        return cls(payload.get("title", ""), payload.get("url", ""), payload.get("language", ""),
                   payload.get("timestamp", ""), tuple(payload.get("tags") or ()), payload.get("collection", ""))

    def to_json(self) -> MetadataJson:
        return {"title": self.title, "url": self.url, "language": self.language, "timestamp": self.timestamp,
                "tags": list(self.tags), "collection": self.collection}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "metadata.") -> Metadata:
        """Every key optional (another retriever may know less of its passages); a present one is checked."""
        if not isinstance(data, Mapping):
            raise ValidationError(f"{where.rstrip('.')}: expected an object", field=where.rstrip("."))

        def text(key: str) -> str:
            return _str(data, key, where) if key in data else ""

        tags = _strings(data, "tags", where) if "tags" in data else ()
        return cls(text("title"), text("url"), text("language"), text("timestamp"), tags, text("collection"))


EMPTY_METADATA = Metadata()


@dataclass(frozen=True, slots=True)
class ScoreDetail:
    """A result's raw score and rank in each fused list (a debug request only); None where a list lacks it."""

    dense: float | None
    keyword: float | None
    graph: float | None
    fused: float | None
    dense_rank: int | None
    keyword_rank: int | None
    graph_rank: int | None
    fused_rank: int

    def components_json(self) -> ScoreComponentsJson:
        return {"dense": self.dense, "keyword": self.keyword, "graph": self.graph, "fused": self.fused}

    def ranks_json(self) -> dict[str, int | None]:
        return {"dense": self.dense_rank, "keyword": self.keyword_rank, "graph": self.graph_rank,
                "fused": self.fused_rank}

    @classmethod
    def from_json(cls, components: Mapping[str, Any], ranks: Mapping[str, Any]) -> ScoreDetail:
        return cls(components.get("dense"), components.get("keyword"), components.get("graph"),
                   components.get("fused"), ranks.get("dense"), ranks.get("keyword"), ranks.get("graph"),
                   int(ranks.get("fused") or 0))


@dataclass(frozen=True, slots=True)
class Result:
    """A passage found: its relevance (0-1, three decimals), band and metadata."""

    id: str
    content: str
    score: float
    band: Band
    metadata: Metadata
    detail: ScoreDetail | None = None

    component_type: ClassVar[ComponentType] = ComponentType.CHUNK

    @property
    def title(self) -> str:
        return self.metadata.title

    def to_json(self) -> ResultJson:
        out: ResultJson = {"id": self.id, "content": self.content, "score": self.score,
                           "confidenceBand": self.band.value, "component_type": "chunk",
                           "metadata": self.metadata.to_json()}
        if self.detail is not None:
            out["score_components"] = self.detail.components_json()
            out["ranks"] = self.detail.ranks_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str) -> Result:
        components, ranks = data.get("score_components"), data.get("ranks")
        detail = (ScoreDetail.from_json(components, ranks)
                  if isinstance(components, Mapping) and isinstance(ranks, Mapping) else None)
        metadata = data.get("metadata")
        content = _str(data, "content", where) if "content" in data else ""
        return cls(_id(data, where), content, _number(data, "score", where), _band(data, where),
                   Metadata.from_json(metadata, f"{where}metadata.") if metadata is not None else EMPTY_METADATA,
                   detail)


@dataclass(frozen=True, slots=True)
class RelationHit:
    """A knowledge-graph fact found: subject, relation, object, scored no higher than the best passage shown.

    ``doc_ids`` names every document (within the request's scope) the fact was extracted from, one hit for
    the fact however many say it; ``metadata`` is the first one's, so a reader sees where a fact came from as
    it sees a passage's source.
    """

    id: str
    subject: str
    relation: str
    object: str
    score: float
    band: Band
    metadata: Metadata = EMPTY_METADATA
    doc_ids: tuple[str, ...] = ()

    component_type: ClassVar[ComponentType] = ComponentType.RELATION

    @property
    def content(self) -> str:
        return f"{self.subject} {self.relation} {self.object}"

    def to_json(self) -> ResultJson:
        return {"id": self.id, "content": self.content, "score": self.score, "confidenceBand": self.band.value,
                "component_type": "relation", "metadata": self.metadata.to_json(), "subject": self.subject,
                "relation": self.relation, "object": self.object, "doc_ids": list(self.doc_ids)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str) -> RelationHit:
        metadata = data.get("metadata")
        return cls(_id(data, where), _str(data, "subject", where), _str(data, "relation", where),
                   _str(data, "object", where), _number(data, "score", where), _band(data, where),
                   Metadata.from_json(metadata, f"{where}metadata.") if metadata is not None else EMPTY_METADATA,
                   _strings(data, "doc_ids", where) if "doc_ids" in data else ())


Hit = Result | RelationHit
"""One entry of a response's results: a passage or a fact."""


def _hit_from_json(data: Any, i: int) -> Hit:
    where = f"results[{i}]."
    read(data, OBJECT, f"results[{i}]", _refuse_type)
    kind = data.get("component_type", ComponentType.CHUNK.value)
    if kind == ComponentType.RELATION.value:
        return RelationHit.from_json(data, where)
    if kind != ComponentType.CHUNK.value:
        raise ValidationError(f"{where}component_type: expected chunk or relation, got {kind!r}",
                              field=f"{where}component_type")
    return Result.from_json(data, where)


T = TypeVar("T")
_BANDS = {b.value: b for b in Band}
_MISSING = object()


def _builder(cls: type[T]) -> Callable[..., T]:
    """``cls(*fields)`` for a frozen slotted dataclass, each slot set through its descriptor rather than by
    ``__init__``'s ``object.__setattr__``: 40% less (an answer's hundred passages are built per query). Only
    for a class whose ``__init__`` does nothing else (no ``__post_init__``), every field given in order."""
    new = object.__new__
    setters = tuple(cls.__dict__[f.name].__set__ for f in fields(cls))  # type: ignore[arg-type]
    if len(setters) == 4:
        s0, s1, s2, s3 = setters

        def build4(a: Any, b: Any, c: Any, d: Any) -> T:
            obj = new(cls)
            s0(obj, a)
            s1(obj, b)
            s2(obj, c)
            s3(obj, d)
            return obj
        return build4
    s0, s1, s2, s3, s4, s5 = setters  # the others built here have six fields

    def build6(a: Any, b: Any, c: Any, d: Any, e: Any, f: Any) -> T:
        obj = new(cls)
        s0(obj, a)
        s1(obj, b)
        s2(obj, c)
        s3(obj, d)
        s4(obj, e)
        s5(obj, f)
        return obj
    return build6


_new_result, _new_metadata, _new_triple = _builder(Result), _builder(Metadata), _builder(Triple)
_SERVED = itemgetter("id", "content", "score", "confidenceBand", "component_type")
_TRIPLE = itemgetter("subject", "relation", "object", "doc_id")
_METADATA = itemgetter("title", "url", "language", "timestamp", "tags", "collection")

MetadataValues = tuple[str, str, str, str, Sequence[str], str]
_NO_METADATA: tuple[()] = ()


def _metadata_values(data: Any) -> MetadataValues | None:
    """The title, url, language, timestamp, tags and collection of plain metadata JSON (a dict of strings,
    ``tags`` a list of strings; a key left out: its empty value); None for anything else, which the checked
    reader reads (and refuses, naming the field)."""
    if type(data) is not dict:
        return None
    try:  # as served: the six keys, in one lookup
        title, url, language, timestamp, tags, collection = _METADATA(data)
    except KeyError:
        get = data.get
        title, url, language = get("title", ""), get("url", ""), get("language", "")
        timestamp, tags, collection = get("timestamp", ""), get("tags", _NO_METADATA), get("collection", "")
    if not (type(title) is str and type(url) is str and type(language) is str and type(timestamp) is str
            and type(collection) is str and (type(tags) is list or tags is _NO_METADATA)):
        return None
    for tag in tags:
        if type(tag) is not str:
            return None
    return title, url, language, timestamp, tags, collection


def _plain_metadata(data: Any) -> Metadata | None:
    """:meth:`Metadata.from_json` of plain JSON (:func:`_metadata_values`); None for anything else."""
    values = _metadata_values(data)
    if values is None:
        return None
    title, url, language, timestamp, tags, collection = values
    return _new_metadata(title, url, language, timestamp, tuple(tags), collection)


def _served(data: Any) -> tuple[str, str, float, Band, MetadataValues | tuple[()]] | None:
    """The id, content, score, band and metadata values (``()``: none) of a passage as served, and as a mapped
    target's answer is written: a dict of ``id``, ``content``, ``score`` (a float), ``confidenceBand``,
    ``component_type`` and perhaps ``metadata``, nothing else. None for anything else, which
    :func:`_plain_chunk` reads."""
    if type(data) is not dict:
        return None
    try:
        doc, content, score, band, kind = _SERVED(data)
    except KeyError:
        return None
    if not (type(doc) is str and doc and type(content) is str and type(score) is float and score == score
            and type(band) is str and type(kind) is str and kind == "chunk"):
        return None
    n, band = len(data), _BANDS.get(band)
    if band is None:
        return None
    if n == 5:
        return doc, content, score, band, _NO_METADATA
    meta = data.get("metadata", _MISSING) if n == 6 else _MISSING
    if meta is None:
        return doc, content, score, band, _NO_METADATA
    values = _metadata_values(meta) if meta is not _MISSING else None
    return None if values is None else (doc, content, score, band, values)


def _served_chunk(data: Any) -> Result | None:
    """:meth:`Result.from_json` of a passage as served (:func:`_served`); None for anything else."""
    served = _served(data)
    if served is None:
        return None
    doc, content, score, band, meta = served
    metadata = EMPTY_METADATA if not meta else _new_metadata(meta[0], meta[1], meta[2], meta[3], tuple(meta[4]),
                                                             meta[5])
    return _new_result(doc, content, score, band, metadata, None)


def _plain_chunk(data: Any) -> Result | None:
    """:meth:`Result.from_json` of a passage in plain JSON, in a few exact type tests (a 100-result answer is
    read per query of an ``eval --target``); None for anything else (a fact, a mapping that is not a dict,
    a value of another type, a bad one), which the checked reader reads or refuses, naming the field."""
    if type(data) is not dict or data.get("component_type", "chunk") != "chunk":
        return None
    doc, content, score = data.get("id"), data.get("content", ""), data.get("score")
    if type(doc) is not str or not doc or type(content) is not str:
        return None
    if type(score) is int:
        score = float(score)
    elif type(score) is not float or score != score:
        return None
    band = data.get("confidenceBand", "low")
    band = _BANDS.get(band) if type(band) is str else None
    meta = data.get("metadata")
    metadata = EMPTY_METADATA if meta is None else _plain_metadata(meta)
    if band is None or metadata is None:
        return None
    components, ranks = data.get("score_components"), data.get("ranks")
    detail = (ScoreDetail.from_json(components, ranks) if components is not None and ranks is not None
              and isinstance(components, Mapping) and isinstance(ranks, Mapping) else None)
    return _new_result(doc, content, score, band, metadata, detail)


def _hit(data: Any, i: int) -> Hit:
    """One result: as served, else plain, else read field by field (and refused naming the field)."""
    hit = _served_chunk(data) or _plain_chunk(data)  # a record is never false (no __bool__, no __len__)
    return hit if hit is not None else _hit_from_json(data, i)


def _hits_from_json(data: list[Any]) -> tuple[Hit, ...]:
    """Each result, the plain passage read fast and any other through :func:`_hit_from_json`, checked."""
    return tuple(map(_hit, data, range(len(data))))


class Ranking(NamedTuple):
    """A response's passages in order (facts left out): each one's id, score and band."""

    ids: tuple[str, ...]
    scores: tuple[float, ...]
    bands: tuple[Band, ...]


def _ranked(data: list[Any], shown: int) -> tuple[tuple[Result, ...], Ranking]:
    """The first ``shown`` passages of the results, and the ranking of all; each result checked as
    :func:`_hit` checks it, a passage as served past ``shown`` without building its record."""
    keep = shown if shown >= 0 else len(data)  # a negative count cuts from the end, as a slice does
    kept: list[Result] = []
    ids: list[str] = []
    scores: list[float] = []
    bands: list[Band] = []
    for i, item in enumerate(data):
        if len(kept) >= keep:
            served = _served(item)
            if served is not None:
                ids.append(served[0])
                scores.append(served[2])
                bands.append(served[3])
                continue
        hit = _hit(item, i)
        if isinstance(hit, Result):
            if len(kept) < keep:
                kept.append(hit)
            ids.append(hit.id)
            scores.append(hit.score)
            bands.append(hit.band)
    return tuple(kept if shown >= 0 else kept[:shown]), Ranking(tuple(ids), tuple(scores), tuple(bands))


def _kg_from_json(data: Any) -> tuple[Triple, ...]:
    """Each triple: four strings read in one lookup and four tests, any other through :func:`_triple_from_json`."""
    if type(data) is not list:
        return tuple(_triple_from_json(t, i) for i, t in enumerate(data or []))
    out: list[Triple] = []
    append = out.append
    for i, t in enumerate(data):
        if type(t) is dict and len(t) == 4:
            try:
                subject, relation, obj, doc = _TRIPLE(t)
            except KeyError:
                append(_triple_from_json(t, i))
                continue
            if type(subject) is str and type(relation) is str and type(obj) is str and type(doc) is str:
                append(_new_triple(subject, relation, obj, doc))
                continue
        append(_triple_from_json(t, i))
    return tuple(out)


def _triple_json(t: Triple) -> TripleJson:
    return {"subject": t.subject, "relation": t.relation, "object": t.object, "doc_id": t.doc_id}


def _triple_from_json(data: Any, i: int) -> Triple:
    where = f"kg[{i}]."
    doc_id = _str(data, "doc_id", where) if isinstance(data, Mapping) and "doc_id" in data else ""
    return Triple(_str(data, "subject", where), _str(data, "relation", where), _str(data, "object", where), doc_id)


@dataclass(frozen=True, slots=True)
class RetryHints:
    """What to search next when nothing matched confidently."""

    detected_entities: tuple[str, ...]
    related_terms: tuple[str, ...]
    narrower_query: str
    broader_query: str

    def to_json(self) -> RetryHintsJson:
        return {"detectedEntities": list(self.detected_entities), "relatedTerms": list(self.related_terms),
                "narrowerQuery": self.narrower_query, "broaderQuery": self.broader_query}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RetryHints:
        w = "retryHints."
        return cls(_strings(data, "detectedEntities", w), _strings(data, "relatedTerms", w),
                   _str(data, "narrowerQuery", w), _str(data, "broaderQuery", w))


@dataclass(frozen=True, slots=True)
class SearchResponse:
    """One search's answer.

    Attributes:
        results: at most ``top_k`` passages and (graph mode) facts in one order, relevance never increasing,
            each with a band (a fact competes for a place by its relevance, after a passage of the same).
        kg: the triples behind the results shown: the facts shown, and the triples of the passages shown
            that the graph stage reached; empty when ``results`` is.
        rewrite_terms: the terms the rewrite stage added (graph mode).
        best_score: the best relevance a passage within the request's scope (collection, tags, ids, dates) could
            show, before ``min_relevance``, ``gap_cutoff`` and ``top_k`` cut the list; 0.0 when none is in scope.
        no_confident_results: nothing reached the low band's threshold.
        retry_hints: what to search next, when the best score is under the high threshold.
        trace_id: the search's trace (32 hex digits; empty when untraced).
        mode: ``fast`` or ``graph``.
        degraded: stages that failed and were skipped.
        trace_url: a link to the trace in the dashboard (a server that knows one sets it).
    """

    results: tuple[Hit, ...]
    kg: tuple[Triple, ...]
    rewrite_terms: tuple[str, ...]
    best_score: float
    no_confident_results: bool
    retry_hints: RetryHints | None
    trace_id: str
    mode: Mode
    degraded: tuple[str, ...]
    trace_url: str | None = None

    @property
    def chunks(self) -> tuple[Result, ...]:
        """The passages of :attr:`results`, in order."""
        return tuple(r for r in self.results if isinstance(r, Result))

    @property
    def relations(self) -> tuple[RelationHit, ...]:
        """The facts of :attr:`results`, in order."""
        return tuple(r for r in self.results if isinstance(r, RelationHit))

    def with_trace_url(self, url: str | None) -> SearchResponse:
        return replace(self, trace_url=url) if url else self

    def to_json(self) -> SearchResponseJson:
        """The wire format (HTTP, MCP structured content, ``search --json``)."""
        out: SearchResponseJson = {
            "results": [r.to_json() for r in self.results],
            "kg": [_triple_json(t) for t in self.kg],
            "rewrite_terms": list(self.rewrite_terms),
            "bestScore": self.best_score,
            "noConfidentResults": self.no_confident_results,
            "retryHints": self.retry_hints.to_json() if self.retry_hints is not None else None,
            "traceId": self.trace_id,
            "mode": "graph" if self.mode is Mode.GRAPH else "fast",
            "degraded": list(self.degraded),
        }
        if self.trace_url:
            out["traceUrl"] = self.trace_url
        return out

    @classmethod
    def from_json(cls, data: Any) -> SearchResponse:
        """Read a response another retriever wrote (a served searchtrace, an ``eval --target``).

        Only ``results`` (and in each an ``id`` and a ``score``) is required; what is missing takes its empty
        value (``noConfidentResults``: no results). Raises ValidationError naming the field at fault.
        """
        results = _hits_from_json(cls._results_json(data))
        return cls._around(data, results, bool(results))

    @classmethod
    def ranked_from_json(cls, data: Any, shown: int) -> tuple[SearchResponse, Ranking]:
        """:meth:`from_json` as an eval reads a target's answer: the response with only its first ``shown``
        passages as results (facts left out), and the :class:`Ranking` of all its passages.

        The same checks and the same refusals as :meth:`from_json`; a passage past ``shown`` is checked, not
        built (an eval asks a hundred deep and shows ten).
        """
        listed = cls._results_json(data)
        kept, ranking = _ranked(listed, shown)
        return cls._around(data, kept, bool(listed)), ranking

    @staticmethod
    def _results_json(data: Any) -> list[Any]:
        """The answer's ``results`` list, after the checks made before it is read."""
        if not isinstance(data, Mapping):
            raise ValidationError(f"response: expected an object, got {type(data).__name__}")
        mode = data.get("mode", Mode.FAST.value)
        if mode not in (Mode.FAST.value, Mode.GRAPH.value):
            raise ValidationError(f"mode: expected fast or graph, got {mode!r}", field="mode")
        return _list(data, "results")

    @classmethod
    def _around(cls, data: Mapping[str, Any], results: tuple[Hit, ...], answered: bool) -> SearchResponse:
        """The response of ``results`` (read from ``data``, ``answered``: it listed any) and the rest of ``data``."""
        hints, trace_url = data.get("retryHints"), data.get("traceUrl")
        return cls(
            results=results,
            kg=_kg_from_json(data.get("kg")),
            rewrite_terms=_strings(data, "rewrite_terms") if "rewrite_terms" in data else (),
            best_score=_number(data, "bestScore") if "bestScore" in data else 0.0,
            no_confident_results=bool(data.get("noConfidentResults", not answered)),
            retry_hints=RetryHints.from_json(hints) if isinstance(hints, Mapping) else None,
            trace_id=data["traceId"] if isinstance(data.get("traceId"), str) else "",
            mode=Mode(data.get("mode", Mode.FAST.value)),
            degraded=_strings(data, "degraded") if "degraded" in data else (),
            trace_url=trace_url if isinstance(trace_url, str) else None,
        )
