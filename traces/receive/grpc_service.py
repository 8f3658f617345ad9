"""OTLP over gRPC (``collect --grpc-port``, 4317 by convention), when ``grpcio`` is installed: the same
conversion, limits, totals and group-commit writer as ``POST /v1/traces``.

gRPC answers with status codes where HTTP answers with statuses: a request over the limits or with a span
count over the bound is ``INVALID_ARGUMENT`` (not retried); a full queue, a failed or slow commit, a writer
closing are ``UNAVAILABLE`` (retried by every exporter); rejected spans come back in ``partial_success``.
gRPC's own bound on a message (``decoded_bytes``) applies after decompression. With an API key, each call
carries ``authorization: Bearer <key>`` (``UNAUTHENTICATED`` otherwise); there is no Host or Origin to check
(no browser speaks gRPC).
"""

from __future__ import annotations

import hmac
from concurrent import futures
from typing import Any

from searchtrace.traces.receive.bodies import BadBody
from searchtrace.traces.receive.route import OtlpReceiver

__all__ = ["grpc_available", "start_grpc"]


def grpc_available() -> bool:
    """Whether ``grpcio`` and the OTLP trace service's gRPC stubs can be imported."""
    try:
        import grpc  # type: ignore[import-untyped]  # noqa: F401
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc  # noqa: F401
    except ImportError:
        return False
    return True


def start_grpc(receiver: OtlpReceiver, host: str, port: int, api_key: str | None = None) -> tuple[Any, int]:
    """A started gRPC server for the trace service on ``host:port`` and the port it bound (0: any free)."""
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

    limit = receiver.limits.decoded_bytes
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="searchtrace-grpc"),
                         options=[("grpc.max_receive_message_length", limit)])
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(_servicer(receiver, api_key), server)
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    bound = server.add_insecure_port(f"{shown}:{port}")
    if not bound:
        raise OSError(f"cannot listen on {host}:{port} for gRPC")
    server.start()
    return server, bound


def _servicer(receiver: OtlpReceiver, api_key: str | None) -> Any:
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

    class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 - the service's method name
            if api_key and not _authorized(context.invocation_metadata(), api_key):
                context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong API key: send "
                              "'authorization: Bearer <SEARCHTRACE_API_KEY>'")
            try:
                converted = receiver.take(request)
            except BadBody as exc:
                receiver.tally.add(requests=1, refused=1)
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, exc.message)
            ok = _committed(receiver, converted.spans)
            receiver.tally.add(requests=1, refused=int(not ok))
            if not ok:
                receiver.tally.add(rejected=len(converted.spans))
                context.abort(grpc.StatusCode.UNAVAILABLE, "the trace store did not take the spans: retry")
            receiver.tally.add(stored=len(converted.spans))
            response = trace_service_pb2.ExportTraceServiceResponse()
            if converted.rejected:
                response.partial_success.rejected_spans = converted.rejected
                response.partial_success.error_message = converted.message()
            return response

    return TraceService()


def _authorized(metadata: Any, api_key: str) -> bool:
    given = dict(metadata or ()).get("authorization", "")
    scheme, _, token = given.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), api_key.encode())


def _committed(receiver: OtlpReceiver, spans: list[Any]) -> bool:
    ticket = receiver.writer.submit(spans)
    if ticket is None:
        return False
    try:
        return ticket.result(receiver.limits.ack_timeout_s)
    except futures.TimeoutError:
        return False
