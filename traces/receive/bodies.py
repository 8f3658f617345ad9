"""An OTLP/HTTP request body to an ``ExportTraceServiceRequest``: decompressed within bounds, then decoded.

Both encodings end as the same protobuf message, so one conversion (``receive.spans``) reads both; OTLP JSON
is read by ``receive.otlp_json``.
"""

from __future__ import annotations

import enum
import json
import zlib
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

__all__ = ["BadBody", "Encoding", "decode", "encoding_of", "inflate"]


class Encoding(str, enum.Enum):
    """The two encodings OTLP/HTTP defines, by their content type."""

    PROTOBUF = "application/x-protobuf"
    JSON = "application/json"


class BadBody(Exception):
    """A body refused as a whole: ``status`` is 400 (malformed), 413 (too large) or 415 (unsupported)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def encoding_of(content_type: str) -> Encoding:
    """The encoding a ``Content-Type`` names (parameters such as ``charset`` ignored), else 415."""
    media = content_type.split(";", 1)[0].strip().lower()
    for encoding in Encoding:
        if media == encoding.value:
            return encoding
    shown = media[:80] or "none"
    raise BadBody(415, f"Content-Type {shown!r} is not supported: send application/x-protobuf or "
                       "application/json")


def inflate(body: bytes, content_encoding: str, limit: int) -> bytes:
    """The body decompressed (``gzip``, ``deflate``, ``identity`` or none), never more than ``limit`` bytes:
    past it, 413 without inflating the rest."""
    coding = content_encoding.strip().lower()
    if coding in ("", "identity"):
        return body
    if coding not in ("gzip", "deflate", "x-gzip"):
        raise BadBody(415, f"Content-Encoding {coding[:40]!r} is not supported: send gzip, deflate or none")
    failure: zlib.error | None = None
    # 32 + 15 reads a gzip or a zlib header; a raw deflate stream (some clients send one) is read with -15
    for wbits in ((32 + zlib.MAX_WBITS,) if coding != "deflate" else (zlib.MAX_WBITS, -zlib.MAX_WBITS)):
        try:
            return _bounded(zlib.decompressobj(wbits), body, limit)
        except zlib.error as exc:
            failure = exc
    raise BadBody(400, f"the body is not valid {coding}: {failure}")


def _bounded(inflater: Any, body: bytes, limit: int) -> bytes:
    out = inflater.decompress(body, limit + 1)
    if len(out) > limit or inflater.unconsumed_tail:
        raise BadBody(413, f"the body inflates to more than {limit:,} bytes")
    out += inflater.flush(limit + 1 - len(out))
    if len(out) > limit:
        raise BadBody(413, f"the body inflates to more than {limit:,} bytes")
    if not inflater.eof:
        raise BadBody(400, "the compressed body ends before its stream does")
    return bytes(out)


def decode(body: bytes, encoding: Encoding) -> ExportTraceServiceRequest:
    """The request a body holds; 400 naming what is wrong when it is not one."""
    if encoding is Encoding.PROTOBUF:
        message = ExportTraceServiceRequest()
        try:
            message.ParseFromString(body)
        except Exception as exc:  # noqa: BLE001 - DecodeError, and RecursionError on deep nesting
            raise BadBody(400, f"the body is not an OTLP ExportTraceServiceRequest in protobuf: {exc}") from None
        return message
    return _from_json(body)


def _from_json(body: bytes) -> ExportTraceServiceRequest:
    from searchtrace.traces.receive.otlp_json import JsonShapeError, request_from_json

    try:
        document = json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BadBody(400, f"the body is not JSON: {str(exc)[:200]}") from None
    if not isinstance(document, dict):
        raise BadBody(400, "the body is not an OTLP JSON object (expected {\"resourceSpans\": [...]})")
    try:
        return request_from_json(document)
    except (JsonShapeError, RecursionError, TypeError, ValueError) as exc:
        raise BadBody(400, f"the body is not an OTLP ExportTraceServiceRequest in JSON: {str(exc)[:300]}") from None
