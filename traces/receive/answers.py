"""The bodies OTLP/HTTP answers with, in the request's encoding.

A success is an ``ExportTraceServiceResponse``, with ``partial_success`` (the rejected count and a message)
when some spans were refused. Every 4xx and 5xx is a ``google.rpc.Status`` carrying the message (its code left
out, as the specification says); a request whose encoding is unknown (415) is answered in JSON.
"""

from __future__ import annotations

from dataclasses import dataclass

from searchtrace.traces.receive.bodies import Encoding

__all__ = ["Answer", "failure", "success"]


@dataclass(frozen=True)
class Answer:
    """A status, its body and content type, and any ``Retry-After``."""

    status: int
    body: bytes
    content_type: str
    retry_after_s: int | None = None

    def headers(self) -> list[tuple[bytes, bytes]]:
        out = [(b"content-type", self.content_type.encode()), (b"content-length", str(len(self.body)).encode())]
        if self.retry_after_s is not None:
            out.append((b"retry-after", str(self.retry_after_s).encode()))
        if self.status == 405:
            out.append((b"allow", b"POST"))
        return out


def success(encoding: Encoding, rejected: int = 0, message: str = "") -> Answer:
    """200 with the response; ``partial_success`` set only when spans were rejected or ``message`` warns."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    response = ExportTraceServiceResponse()
    if rejected or message:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message
    return Answer(200, _encode(response, encoding), encoding.value)


def failure(status: int, message: str, encoding: Encoding = Encoding.JSON,
            retry_after_s: int | None = None) -> Answer:
    """A refusal: ``status`` with a ``google.rpc.Status`` naming why."""
    from google.rpc.status_pb2 import Status  # type: ignore[import-untyped]

    return Answer(status, _encode(Status(message=message), encoding), encoding.value, retry_after_s)


def _encode(message: object, encoding: Encoding) -> bytes:
    if encoding is Encoding.PROTOBUF:
        return message.SerializeToString()  # type: ignore[attr-defined]
    from google.protobuf import json_format

    return json_format.MessageToJson(message, indent=None).encode()
