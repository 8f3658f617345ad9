"""Per-stage latency, read off the search spans as they end."""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Iterable, Mapping

import numpy as np
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor


class StageTimer(SpanProcessor):
    """Collects each span's duration (ms) by trace id and span name.

    Add it to the tracer provider the eval runner's searches use; ``pop(trace_id)``
    returns and forgets one search's stage durations.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_trace: dict[int, dict[str, float]] = defaultdict(dict)

    def on_end(self, span: ReadableSpan) -> None:
        if span.end_time is None or span.start_time is None:
            return
        with self._lock:
            self._by_trace[span.context.trace_id][span.name] = (span.end_time - span.start_time) / 1e6

    def pop(self, trace_id_hex: str) -> dict[str, float]:
        if not trace_id_hex:
            return {}
        with self._lock:
            return self._by_trace.pop(int(trace_id_hex, 16), {})

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def percentiles(per_query: Iterable[Mapping[str, float]], qs: tuple[int, ...] = (50, 95, 99)) -> dict[str, dict[str, float]]:
    """``{stage: {"p50": ms, "p95": ms, "p99": ms, "n": count}}`` over queries."""
    values: dict[str, list[float]] = defaultdict(list)
    for row in per_query:
        for stage, ms in row.items():
            values[stage].append(ms)
    out: dict[str, dict[str, float]] = {}
    for stage, stage_ms in sorted(values.items()):
        arr = np.asarray(stage_ms)
        out[stage] = {f"p{q}": round(float(np.percentile(arr, q)), 3) for q in qs} | {"n": len(arr)}
    return out
