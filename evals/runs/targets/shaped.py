"""The search function every shaped target is: our request in, the service asked (page by page), our response out.

A transport (:mod:`.http`, :mod:`.mcp`) only fetches one page: the service's
answer for a query at an offset and a size. This base builds that request
from the target file's ``[request]`` table, pages up to the depth the eval
scores when the service takes an offset, asks once (up to its cap) when it
does not, and maps the answer through ``[answer]``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from searchtrace.errors import ValidationError
from searchtrace.evals.runs.targets.config import TargetFile
from searchtrace.evals.runs.targets.mapping import Mapped, response_json

__all__ = ["ShapedSearch", "pages", "put"]


def put(body: dict[str, Any], path: str, value: Any) -> None:
    """Set dotted ``path`` in ``body`` (``filters.min_score``), making the objects on the way."""
    *parents, last = path.split(".")
    for part in parents:
        body = body.setdefault(part, {})
    body[last] = value


def pages(depth: int, cap: int | None, paged: bool) -> list[tuple[int, int]]:
    """The (offset, size) of each page needed for ``depth`` results: one when the service has no offset or no cap."""
    if cap is None or depth <= cap or not paged:
        return [(0, depth if cap is None else min(depth, cap))]
    return [(offset, min(cap, depth - offset)) for offset in range(0, depth, cap)]


class ShapedSearch:
    """A :data:`~searchtrace.evals.runs.target.SearchFn` over a target file; subclasses fetch one page.

    Args:
        spec: the target file, checked.
        origin: how errors name the target (a profile's name and its endpoint: never a header's value).
    """

    def __init__(self, spec: TargetFile, origin: str) -> None:
        self.spec, self.origin = spec, origin

    @property
    def depth_limit(self) -> int | None:
        """The most results one query can get: the cap when the service takes no offset, else no limit."""
        return None if self.spec.request.offset else self.spec.request.max_depth

    def body(self, query: str, offset: int, size: int, ours: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The service's request for one page: our request when the file forwards it, the static fields, then
        the query, the size and the offset."""
        req = self.spec.request
        body = {**(dict(ours) if req.forward and ours else {}), **copy.deepcopy(dict(req.static))}
        put(body, req.query, query)
        if req.depth:
            put(body, req.depth, size)
        if req.offset:
            put(body, req.offset, offset)
        return body

    def fetch(self, body: dict[str, Any], offset: int, size: int) -> list[Mapped]:  # pragma: no cover - abstract
        """One page: ``body`` sent, the answer mapped (fewer than ``size``: the service has no more)."""
        raise NotImplementedError

    def __call__(self, request: Mapping[str, Any]) -> dict[str, Any]:
        query, depth = request.get("query"), request.get("top_k", 10)
        if not isinstance(query, str) or not isinstance(depth, int):
            raise ValidationError(f"{self.origin}: a request needs a query string and an integer top_k")
        found: list[Mapped] = []
        for offset, size in pages(depth, self.spec.request.max_depth, bool(self.spec.request.offset)):
            page = self.fetch(self.body(query, offset, size, request), offset, size)
            found.extend(page)
            if len(page) < size:
                break  # the service has no more
        return response_json(found, depth)

    def where(self, offset: int) -> str:
        """How errors name the target, and the page when it is not the first."""
        return f"{self.origin} (page at offset {offset})" if offset else self.origin

    def close(self) -> None:
        """Release the transport (a connection pool, a child process)."""
