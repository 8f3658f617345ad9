"""One MCP client session kept open on an asyncio loop in a background thread, for the eval's synchronous calls.

The eval calls its search function from the runner's thread; the ``mcp`` SDK is
async and its client must be entered and left in one task. So one task owns
the session (it connects, then waits to be told to stop) and each call runs on
the same loop beside it. A session that broke (the stdio child died, the
server went away) is dropped and the next call connects again: for stdio, a
new child.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

__all__ = ["LoopSession"]

Connect = Callable[[], AbstractAsyncContextManager[Any]]
"""Opens the client (an ``mcp`` ``Client``, entered by the owning task)."""

_GUARD_S = 30.0
"""How long past its own timeout a call may hang before the caller stops waiting (the SDK's timeout fires first)."""


class LoopSession:
    """Calls tools over a client that ``connect`` opens, from any thread.

    Args:
        connect: makes the (not yet entered) client context.
    """

    def __init__(self, connect: Connect) -> None:
        self._connect = connect
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="searchtrace-mcp-target", daemon=True)
        self._thread.start()
        self._client: Any = None
        self._stop: asyncio.Event | None = None
        self._owner: asyncio.Task[None] | None = None
        self._lock: asyncio.Lock | None = None

    async def _own(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        try:
            async with self._connect() as client:
                self._client = client
                ready.set_result(None)
                await stop.wait()
        except BaseException as exc:  # the connection's failure: told to the caller waiting on ready
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError(str(exc)))
        finally:
            self._client = None

    async def _open(self) -> Any:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._client is None:
                ready: asyncio.Future[None] = self._loop.create_future()
                self._stop = asyncio.Event()
                self._owner = self._loop.create_task(self._own(ready, self._stop))
                await ready
            return self._client

    async def _call(self, name: str, arguments: dict[str, Any], meta: Mapping[str, str], timeout_s: float) -> Any:
        client = self._client if self._client is not None else await self._open()  # no lock once open
        return await client.call_tool(name, arguments, read_timeout_seconds=timeout_s, meta=dict(meta) or None)

    def call(self, name: str, arguments: dict[str, Any], meta: Mapping[str, str], timeout_s: float) -> Any:
        """One ``tools/call`` (connecting first when no session is open); the SDK's exception as raised."""
        future = asyncio.run_coroutine_threadsafe(self._call(name, arguments, meta, timeout_s), self._loop)
        try:
            return future.result(timeout_s + _GUARD_S)  # the SDK's own timeout fires first; this only guards a hang
        except Exception:
            future.cancel()
            raise

    async def _drop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._owner is not None:
            try:
                await asyncio.wait_for(self._owner, 10)
            except BaseException:  # noqa: S110 - a broken session's own teardown error is not the caller's
                pass
        self._owner = self._stop = None
        self._client = None

    def reset(self) -> None:
        """Drop the session (a broken one): the next call connects again."""
        asyncio.run_coroutine_threadsafe(self._drop(), self._loop).result(15)

    def close(self) -> None:
        """Leave the session and stop the loop's thread."""
        if not self._loop.is_running():
            return
        self.reset()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()
