"""``journal.jsonl``: one record per completed query, and one per corrective re-query.

A :class:`QueryOutcome` is what the eval runner learned of one query's search;
a :class:`CorrectiveOutcome` is the retry of a weak query with its hints. In
the file each line is one record's :meth:`to_json`, told apart by ``kind``
(format 1 told them apart by ``corrective_of``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Callable, ClassVar

from searchtrace.errors import ValidationError
from searchtrace.evals.runs.runfolder._fields import FORMAT_VERSION, Fields, check_version
from searchtrace.evals.scoring.attribution import GoldTrace, LostAt
from searchtrace.names import Band
from searchtrace.retriever import RetryHints, Triple

__all__ = ["V1_FEATURES", "CorrectiveOutcome", "JournalRecord", "QueryOutcome", "RankedResult", "RetryAttempt",
           "record_from_json"]

V1_FEATURES = ("dense", "keyword", "graph", "fused", "rank", "coverage", "unknown")
"""Format 1 stored features as a list in this order (the relevance model's columns then)."""


@dataclass(frozen=True, slots=True)
class RankedResult:
    """One of a query's top results, as calibration reads it.

    Attributes:
        doc_id: the document.
        relevance: the retriever's relevance (0-1).
        band: its confidence band.
        grade: the gold grade (0 = not judged relevant).
        features: the relevance model's features, by name.
    """

    doc_id: str
    relevance: float
    band: Band
    grade: int
    features: Mapping[str, float]

    def to_json(self, shared: bool = False) -> dict[str, Any]:
        """The result's JSON object (``shared``: see :meth:`QueryOutcome.to_json`)."""
        return {"doc_id": self.doc_id, "relevance": self.relevance, "band": self.band.value, "grade": self.grade,
                "features": _object(self.features, shared)}

    @classmethod
    def from_json(cls, f: Fields, version: int) -> RankedResult:
        if version == 1:
            values = f.get("features", lambda v: isinstance(v, list) and len(v) == len(V1_FEATURES),
                           f"a list of {len(V1_FEATURES)} numbers")
            features = {name: float(x) for name, x in zip(V1_FEATURES, values)}
        else:
            features = f.finite("features")
        return cls(doc_id=f.text("doc_id"), relevance=f.number("relevance"), band=_band(f, "band"),
                   grade=f.integer("grade"), features=features)


def _object(mapping: Mapping[str, Any], shared: bool) -> dict[str, Any]:
    """``mapping`` as a dict: itself when ``shared`` and it is one, else a copy."""
    return mapping if shared and type(mapping) is dict else dict(mapping)


def _band(f: Fields, key: str) -> Band:
    value = f.text(key)
    try:
        return Band(value)
    except ValueError:
        raise f.error(key, f"expected one of {', '.join(b.value for b in Band)}, got {value!r}") from None


def _gold_to_json(t: GoldTrace) -> dict[str, Any]:
    return {"query_id": t.query_id, "doc_id": t.doc_id, "grade": t.grade, "stages": list(t.stages),
            "fused_rank": t.fused_rank, "filtered": t.filtered, "final_rank": t.final_rank, "lost_at": t.lost_at.value}


def _gold_from_json(f: Fields) -> GoldTrace:
    lost = f.text("lost_at")
    try:
        lost_at = LostAt(lost)
    except ValueError:
        raise f.error("lost_at", f"expected one of {', '.join(x.value for x in LostAt)}, got {lost!r}") from None
    return GoldTrace(query_id=f.text("query_id"), doc_id=f.text("doc_id"), grade=f.integer("grade"),
                     stages=f.strings("stages"), fused_rank=f.get("fused_rank", _opt_int, "an integer or null"),
                     filtered=f.flag("filtered"), final_rank=f.get("final_rank", _opt_int, "an integer or null"),
                     lost_at=lost_at)


def _opt_int(value: object) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _ranking(f: Fields, key: str) -> tuple[tuple[str, float], ...]:
    rows = f.get(key, lambda v: isinstance(v, list) and all(
        isinstance(r, list) and len(r) == 2 and isinstance(r[0], str) and isinstance(r[1], (int, float))
        and not isinstance(r[1], bool) for r in v), "a list of [doc_id, score] pairs")
    return tuple((doc, float(score)) for doc, score in rows)


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    """One query's search, as journaled by the eval runner.

    Attributes:
        query_id, category: the query.
        latency_ms: each stage's span duration, ``search`` (the root) and ``total`` (the caller's wall time).
        ranking: (doc_id, fused score) best first, down to the run's depth: what ``run.trec`` holds.
        results: the top results with relevance, band, grade and features (for calibration).
        best_score: the response's ``bestScore``.
        no_confident: the response's ``noConfidentResults``.
        bands: the bands of the response's chunk results.
        weak: the response carried retry hints (best score below the high threshold).
        retry_hints: the response's ``retryHints``.
        kg: the response's ``kg`` triples (None in format-1 records written before it was kept).
        rewrite_terms: the response's ``rewrite_terms``.
        degraded: stages that failed and were skipped.
        trace_id: the search's trace.
        attribution: where each gold document of the query went.
        error: the error code when the search failed (everything else then empty).
        error_message: what the failure said (None for a query that answered, and in records written
            before it was kept).
        traced: its trace was stored with all its spans when it was journaled (a resumed
            run searches an untraced query again).
    """

    kind: ClassVar[str] = "query"

    query_id: str
    category: str
    latency_ms: Mapping[str, float]
    ranking: tuple[tuple[str, float], ...] = ()
    results: tuple[RankedResult, ...] = ()
    best_score: float = 0.0
    no_confident: bool = True
    bands: tuple[Band, ...] = ()
    weak: bool = False
    retry_hints: RetryHints | None = None
    kg: tuple[Triple, ...] | None = ()
    rewrite_terms: tuple[str, ...] = ()
    degraded: tuple[str, ...] = ()
    trace_id: str = ""
    attribution: tuple[GoldTrace, ...] = ()
    error: str | None = None
    traced: bool = True
    error_message: str | None = None

    def to_json(self, shared: bool = False) -> dict[str, Any]:
        """The record's JSON object. ``shared``: the record's own tuples and dicts stand in for lists and objects
        of their own (what ``json.dumps`` writes alike), for a caller that only encodes the value (the journal)."""
        return {
            "format": FORMAT_VERSION, "kind": self.kind, "query_id": self.query_id, "category": self.category,
            "latency_ms": _object(self.latency_ms, shared),
            "ranking": self.ranking if shared else [list(r) for r in self.ranking],
            "results": [r.to_json(shared) for r in self.results], "bestScore": self.best_score,
            "noConfidentResults": self.no_confident, "bands": [b.value for b in self.bands], "weak": self.weak,
            "retryHints": None if self.retry_hints is None else self.retry_hints.to_json(),
            "kg": None if self.kg is None else [_triple_to_json(t) for t in self.kg],
            "rewrite_terms": self.rewrite_terms if shared else list(self.rewrite_terms),
            "degraded": self.degraded if shared else list(self.degraded), "trace_id": self.trace_id,
            "attribution": [_gold_to_json(t) for t in self.attribution], "error": self.error,
            "traced": self.traced, **({"error_message": self.error_message} if self.error else {}),
        }

    @classmethod
    def from_json(cls, f: Fields, version: int) -> QueryOutcome:
        hints = f.get("retryHints", lambda v: v is None or _reads(RetryHints.from_json, v), "retry hints or null", None)
        kg = f.get("kg", lambda v: v is None or (isinstance(v, list) and all(_reads(_triple, t) for t in v)),
                   "a list of triples", None)
        return cls(
            query_id=f.text("query_id"), category=f.text("category", ""),
            latency_ms=f.finite("latency_ms", {}),
            ranking=_ranking(f, "ranking"),
            results=tuple(RankedResult.from_json(Fields(r, f.path, f.line, "results[]."), version)
                          for r in f.array("results")),
            best_score=f.number("bestScore"), no_confident=f.flag("noConfidentResults"),
            bands=tuple(_band(Fields({"band": b}, f.path, f.line, "bands[]."), "band") for b in f.array("bands")),
            weak=f.flag("weak", False), retry_hints=None if hints is None else RetryHints.from_json(hints),
            kg=None if kg is None else tuple(_triple(t) for t in kg), rewrite_terms=f.strings("rewrite_terms", ()),
            degraded=f.strings("degraded", ()), trace_id=f.text("trace_id", ""),
            attribution=tuple(_gold_from_json(Fields(t, f.path, f.line, "attribution[]."))
                              for t in f.array("attribution")),
            error=f.opt_text("error"), traced=f.flag("traced", True), error_message=f.opt_text("error_message"),
        )


def _reads(parse: Callable[[Any], object], value: object) -> bool:
    """``parse`` accepts ``value`` (the response's own reader decides what a field of it may hold)."""
    try:
        parse(value)
    except ValidationError:
        return False
    return True


_TRIPLE_FIELDS = tuple(f.name for f in fields(Triple))


def _triple_to_json(t: Triple) -> dict[str, Any]:
    """``dataclasses.asdict`` of a triple (its fields are strings), without its deep copy's cost."""
    return {name: getattr(t, name) for name in _TRIPLE_FIELDS}


def _triple(data: Any) -> Triple:
    """A ``kg`` triple as the response writes it."""
    if not isinstance(data, Mapping) or set(data) != {"subject", "relation", "object", "doc_id"} or not all(
            isinstance(x, str) for x in data.values()):
        raise ValidationError("a triple is an object of four strings: subject, relation, object, doc_id")
    return Triple(data["subject"], data["relation"], data["object"], data["doc_id"])


@dataclass(frozen=True)
class RetryAttempt:
    """One retry of a weak query: which hint, its text, the best score it got and its time."""

    variant: str
    text: str
    best_score: float
    ms: float

    def to_json(self) -> dict[str, Any]:
        return {"variant": self.variant, "text": self.text, "bestScore": self.best_score, "ms": self.ms}

    @classmethod
    def from_json(cls, f: Fields) -> RetryAttempt:
        return cls(f.text("variant"), f.text("text"), f.number("bestScore"), f.number("ms"))


@dataclass(frozen=True)
class CorrectiveOutcome:
    """The corrective loop's answer for one weak query.

    Attributes:
        corrective_of: the query id.
        chosen: ``original``, or the hint whose answer was kept (narrower, broader, related).
        ranking: the kept answer's ranking.
        best_score: its best score.
        added_ms: the time every retry took.
        tried: each retry.
    """

    kind: ClassVar[str] = "corrective"

    corrective_of: str
    chosen: str
    ranking: tuple[tuple[str, float], ...]
    best_score: float
    added_ms: float
    tried: tuple[RetryAttempt, ...] = ()

    def to_json(self, shared: bool = False) -> dict[str, Any]:
        """The record's JSON object (``shared``: see :meth:`QueryOutcome.to_json`)."""
        return {"format": FORMAT_VERSION, "kind": self.kind, "corrective_of": self.corrective_of,
                "chosen": self.chosen, "ranking": self.ranking if shared else [list(r) for r in self.ranking],
                "bestScore": self.best_score,
                "added_ms": self.added_ms, "tried": [t.to_json() for t in self.tried]}

    @classmethod
    def from_json(cls, f: Fields) -> CorrectiveOutcome:
        return cls(corrective_of=f.text("corrective_of"), chosen=f.text("chosen"), ranking=_ranking(f, "ranking"),
                   best_score=f.number("bestScore"), added_ms=f.number("added_ms"),
                   tried=tuple(RetryAttempt.from_json(Fields(t, f.path, f.line, "tried[].")) for t in f.array("tried")))


JournalRecord = QueryOutcome | CorrectiveOutcome


def record_from_json(data: object, path: str, line: int) -> JournalRecord:
    """The record of one journal line (any supported format).

    Raises:
        DataError: a malformed record or a newer format, naming the file and line.
    """
    f = Fields(data, path, line)
    version = check_version(f.data, path, line)
    kind = f.text("kind") if version >= 2 else ("corrective" if f.has("corrective_of") else "query")
    if kind == CorrectiveOutcome.kind:
        return CorrectiveOutcome.from_json(f)
    if kind == QueryOutcome.kind:
        return QueryOutcome.from_json(f, version)
    raise f.error("kind", f"expected query or corrective, got {kind!r}")
