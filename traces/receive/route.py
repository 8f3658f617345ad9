"""``POST /v1/traces``: the OTLP/HTTP receiver as one ASGI app, mounted by ``searchtrace collect`` and
``searchtrace serve`` behind the same guards (``searchtrace.guards``).

It answers as the OTLP/HTTP specification says, and never 500 nor a hang: 200 with an
``ExportTraceServiceResponse`` (``partial_success`` when spans were rejected) once the spans are committed;
400 malformed; 405 another method; 413 a body, its inflated size or its span count over the limits; 415
another content type or encoding; 503 with ``Retry-After`` when the queue to the store is full, the store
failed the write or took longer than the limit to commit (the exporter retries).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from searchtrace.guards import Receive, Scope, Send
from searchtrace.traces.receive.answers import Answer, failure, success
from searchtrace.traces.receive.bodies import BadBody, Encoding, decode, encoding_of, inflate
from searchtrace.traces.receive.limits import ReceiveLimits, Tally
from searchtrace.traces.receive.spans import Converted, count_spans, to_spans
from searchtrace.traces.receive.writer import GroupWriter

__all__ = ["OtlpReceiver", "TRACES_PATH"]

log = logging.getLogger(__name__)

TRACES_PATH = "/v1/traces"
"""Where OTLP/HTTP exporters send traces (the default path of ``OTEL_EXPORTER_OTLP_ENDPOINT``)."""


class OtlpReceiver:
    """The ASGI app of ``POST /v1/traces``, writing through ``writer`` and counting in ``tally``."""

    def __init__(self, writer: GroupWriter, limits: ReceiveLimits | None = None, tally: Tally | None = None) -> None:
        self.writer = writer
        self.limits = limits or ReceiveLimits()
        self.tally = tally or Tally()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        answer = await self._answer(scope, receive)
        self.tally.add(requests=1, refused=int(answer.status != 200))
        await send({"type": "http.response.start", "status": answer.status, "headers": answer.headers()})
        await send({"type": "http.response.body", "body": answer.body})

    async def _answer(self, scope: Scope, receive: Receive) -> Answer:
        headers = _headers(scope["headers"])
        if scope["method"] != "POST":
            return failure(405, f"{scope['method']} {TRACES_PATH}: send POST")
        try:
            encoding = encoding_of(headers.get("content-type", ""))
        except BadBody as exc:
            return failure(exc.status, exc.message)
        try:
            body = await _read(receive, headers, self.limits.body_bytes)
            if body is None:
                return failure(400, "the client went away before sending its body", encoding)
            converted = await asyncio.to_thread(self._convert, body, headers.get("content-encoding", ""), encoding)
        except BadBody as exc:
            return failure(exc.status, exc.message, encoding)
        except Exception:  # noqa: BLE001 - a bug of ours is logged; the sender hears 400, never 500
            log.exception("an OTLP request could not be converted")
            return failure(400, "the request could not be read (the receiver logged why)", encoding)
        return await self._store(converted, encoding)

    def _convert(self, body: bytes, content_encoding: str, encoding: Encoding) -> Converted:
        return self.take(decode(inflate(body, content_encoding, self.limits.decoded_bytes), encoding))

    def take(self, request: Any) -> Converted:
        """A decoded request's spans, kept or rejected, and counted; 413 (``BadBody``) over the span limit.
        (The gRPC service, ``receive.grpc_service``, takes its requests here too.)"""
        n = count_spans(request)
        if n > self.limits.spans:
            raise BadBody(413, f"the request holds {n:,} spans; at most {self.limits.spans:,} are taken at once")
        converted = to_spans(request, self.limits)
        self.tally.add(received=n, rejected=converted.rejected, truncated=converted.cuts.truncated,
                       dropped=converted.cuts.dropped)
        return converted

    async def _store(self, converted: Converted, encoding: Encoding) -> Answer:
        retry = self.limits.retry_after_s
        n = len(converted.spans)
        ticket = self.writer.submit(converted.spans)
        if ticket is None:
            self.tally.add(rejected=n)
            return failure(503, f"the store's queue is full ({self.writer.capacity:,} spans waiting): retry",
                           encoding, retry)
        try:
            ok = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(ticket)), self.limits.ack_timeout_s)
        except TimeoutError:
            ok = False
        if not ok:
            self.tally.add(rejected=n)
            return failure(503, "the trace store did not take the spans in time: retry", encoding, retry)
        self.tally.add(stored=n)
        return success(encoding, converted.rejected, converted.message())


def _headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in raw}


async def _read(receive: Receive, headers: dict[str, str], limit: int) -> bytes | None:
    """The body, at most ``limit`` bytes (413 past it, announced or streamed); None if the client left."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BadBody(413, f"the body is {int(declared):,} bytes; at most {limit:,} are taken")
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BadBody(413, f"the body is over {limit:,} bytes; at most {limit:,} are taken")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)
