"""A target over plain HTTP: the request as a query string (GET) or a JSON body (POST), the answer as JSON.

Each request carries the eval's ``traceparent`` header and the file's
headers (values from the environment). The status and body are read into the
error seam (:mod:`.wire`): a 429 or 503 to retry, a timeout, no connection,
or a failure naming what was wrong.
"""

from __future__ import annotations

import json
from typing import Any

from searchtrace.errors import BackendUnavailable, SearchFailed, SearchTimeout
from searchtrace.evals.runs.targets.config import TargetFile
from searchtrace.evals.runs.targets.mapping import Mapped, map_results, results_of
from searchtrace.evals.runs.targets.shaped import ShapedSearch
from searchtrace.evals.runs.targets.wire import header_values, json_of, status_error, trace_carrier

__all__ = ["HttpShaped", "query_params"]


def query_params(body: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """A GET's query string from the request: nested fields dotted, booleans ``true``/``false``, lists as JSON."""
    out: dict[str, str] = {}
    for key, value in body.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(query_params(value, f"{name}."))
        elif isinstance(value, bool):
            out[name] = "true" if value else "false"
        else:
            out[name] = json.dumps(value) if isinstance(value, list) else str(value)
    return out


class HttpShaped(ShapedSearch):
    """GET or POST ``url`` (+ ``path``) for each page.

    Args:
        spec: the target file.
        url: the endpoint (the file's ``url`` + ``path``, or the command line's).
        origin: how errors name it.
    """

    def __init__(self, spec: TargetFile, url: str, origin: str) -> None:
        import httpx

        super().__init__(spec, origin)
        self.url = url
        self.headers = header_values(spec.headers, spec.origin)
        self._client = httpx.Client(timeout=spec.target.timeout_s)

    def _send(self, body: dict[str, Any]) -> Any:
        import httpx

        headers = {**self.headers, **trace_carrier()}
        try:
            if self.spec.target.method == "GET":
                return self._client.get(self.url, params=query_params(body), headers=headers)
            return self._client.post(self.url, json=body, headers=headers)
        except httpx.TimeoutException:
            raise SearchTimeout(f"{self.origin}: no answer within {self.spec.target.timeout_s:g} s") from None
        except httpx.HTTPError as exc:
            raise BackendUnavailable(f"{self.origin}: {type(exc).__name__}: {exc}") from None

    def fetch(self, body: dict[str, Any], offset: int, size: int) -> list[Mapped]:
        reply = self._send(body)
        origin = self.where(offset)
        try:
            answer = json_of(reply)
        except ValueError:
            answer = None
            if reply.is_success:
                raise SearchFailed(f"{origin}: HTTP {reply.status_code} with a body that is not JSON "
                                   f"({reply.headers.get('content-type', 'no content type')})") from None
        if reply.is_error:
            raise status_error(origin, reply.status_code, reply.headers, answer)
        items, where = results_of(answer, self.spec.answer, origin)
        return map_results(items, self.spec.answer, where, origin)

    def close(self) -> None:
        self._client.close()
