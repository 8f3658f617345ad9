"""The rows both trace stores share: span attributes packed as JSON, the columns a root and a ``search`` span
fill, and the records read back from a row (a summary, a span).

Encoding runs on the export thread while searches run, and what that thread holds the GIL for is time a
search may wait: orjson (a dependency) writes a span's JSON in a tenth of the stdlib's time. The stdlib
writes what orjson refuses (integers over 64 bits); orjson writes NaN and infinities as ``null``.
"""

from __future__ import annotations

import json
import zlib
from typing import Any, Mapping, Sequence

import orjson

from searchtrace.names import Band
from searchtrace.traces.spans import vocabulary as v
from searchtrace.traces.spans.vocabulary import TraceKind
from searchtrace.traces.store.records import EventRecord, SpanRecord, TraceSummary

BAND_FLAG = {b.value: 1 << i for i, b in enumerate(Band)}  # high 1, medium 2, low 4: stored, never reorder
PACK_ABOVE = 1024
SUMMARY_COLUMNS = ("trace_id, start_ns, duration_ms, has_root, status, mode, query, run_id, query_id, top_k, "
                   "best_score, no_confident, degraded, bands, n_results, error_code, n_spans")
"""The columns of a :class:`TraceSummary` every schema has, in :func:`summary`'s order."""

_ORJSON_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS


def dump(value: Any) -> str:
    return _encode(value).decode()


def _encode(value: Any) -> bytes:
    """Compact UTF-8 JSON by orjson; the stdlib for anything orjson refuses."""
    try:
        return orjson.dumps(value, option=_ORJSON_OPTIONS)
    except TypeError:  # a type orjson does not know, an integer over 64 bits
        pass
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def pack(value: Any) -> str | bytes:
    # A retriever span carries ~4 KB of candidate JSON; zlib level 1 stores it in under half
    # (and releases the GIL while it works). Small JSON stays text so json_extract() works on
    # it in the sqlite3 shell.
    raw = _encode(value)
    return zlib.compress(raw, 1) if len(raw) > PACK_ABOVE else raw.decode()


def unpack(raw: str | bytes) -> Any:
    return json.loads(zlib.decompress(raw) if isinstance(raw, bytes) else raw)


def packed_json(raw: str | bytes | memoryview) -> bytes:
    """The JSON text of a packed value as either store returns it (SQLite: text, or zlib's bytes; PostgreSQL:
    ``bytea`` of either), as UTF-8 bytes: zlib's header marks a compressed one (JSON never starts with "x")."""
    data = raw.encode() if isinstance(raw, str) else bytes(raw)
    return zlib.decompress(data) if data[:1] == b"\x78" else data


def tuples(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {k: tuple(x) if isinstance(x, list) else x for k, x in attributes.items()}



def search_columns(attrs: Mapping[str, Any]) -> tuple:
    """The ``traces`` columns a ``search`` span fills, in SEARCH_COLUMNS order."""
    query = attrs.get(v.INPUT_VALUE)
    no_confident = attrs.get(v.NO_CONFIDENT_RESULTS)
    degraded = list(attrs.get(v.DEGRADED, ()))
    bands = 0
    for band in attrs.get(v.RESULT_BANDS, ()):
        bands |= BAND_FLAG.get(band, 0)
    ids = attrs.get(v.RESULT_IDS)
    return (attrs.get(v.MODE), query, query.casefold() if isinstance(query, str) else None, attrs.get(v.RUN_ID),
            attrs.get(v.QUERY_ID), attrs.get(v.TOP_K), attrs.get(v.BEST_SCORE),
            None if no_confident is None else int(bool(no_confident)), f",{','.join(degraded)}," if degraded else "",
            bands, None if ids is None else len(ids), attrs.get(v.ERROR_CODE), attrs.get(v.SOURCE),
            attrs.get(v.DATASET), None if ids is None else dump(list(ids)), TraceKind.SEARCH.value,
            _flag(attrs.get(v.SEARCH_COLD)))


def summary(row: Sequence[Any]) -> TraceSummary:
    (trace_id, start_ns, duration_ms, has_root, status, mode, query, run_id, query_id, top_k, best_score,
     no_confident, degraded, bands, n_results, error_code, n_spans, root_name, source, kind, cold, status_code,
     service, project) = row
    return TraceSummary(trace_id, start_ns, duration_ms, bool(has_root), status, mode, query, run_id, query_id, top_k,
                        best_score, None if no_confident is None else bool(no_confident),
                        tuple(d for d in degraded.split(",") if d), tuple(b for b in BAND_FLAG if bands & BAND_FLAG[b]),
                        n_results, error_code, n_spans, root_name, source, _kind(kind), _flag(cold), status_code,
                        service, project)


def span_record(row: Sequence[Any]) -> SpanRecord:
    (trace_id, span_id, parent_id, name, kind, start_ns, end_ns, status, message, scope, attributes, events) = row
    return SpanRecord(trace_id, span_id, parent_id, name, kind, start_ns, end_ns, status, message, scope,
                      tuples(unpack(attributes)),
                      tuple(EventRecord(e["name"], e["time_ns"], tuples(e["attributes"])) for e in unpack(events)))



NEWER_SUMMARY_COLUMNS = ("root_name", "source", "kind", "cold", "status_code", "service", "project")
"""Summary columns after :data:`SUMMARY_COLUMNS`; a store of an older schema reads NULL for those it lacks."""



def root_kind(name: str) -> TraceKind:
    """The kind a trace is by its root span's name (a search span stored under another root makes it a search)."""
    return (TraceKind.MODEL_LOAD if name == v.EMBEDDER_LOAD_SPAN else TraceKind.SEARCH if name == v.SEARCH_SPAN
            else TraceKind.OTHER)


def root_columns(name: str, attrs: Mapping[str, Any]) -> tuple:
    """The columns a root span fills beside its timing, for :data:`UPSERT_ROOT`: session_id, fetched_ids,
    fetch_of, dataset (a served fetch's; a search's own comes from its search span), then the trace's kind,
    source, error code and HTTP status."""
    fetched = attrs.get(v.FETCH_IDS)
    status = attrs.get(v.HTTP_RESPONSE_STATUS_CODE)
    return (attrs.get(v.MCP_SESSION_ID), None if fetched is None else dump(list(fetched)), attrs.get(v.FETCH_OF),
            attrs.get(v.DATASET), root_kind(name).value, attrs.get(v.SOURCE), attrs.get(v.ERROR_CODE),
            status if isinstance(status, int) else None)



def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _kind(value: str | None) -> TraceKind | None:
    try:
        return None if value is None else TraceKind(value)
    except ValueError:  # a kind a newer version stored
        return None


def first_messages(rows: Sequence[Sequence[Any]]) -> dict[str, str]:
    """The first message of each trace among (trace id, message) rows read in order (root first)."""
    out: dict[str, str] = {}
    for trace_id, message in rows:
        if message:
            out.setdefault(str(trace_id), str(message))
    return out
