"""One MCP client session kept open on an asyncio loop, for the eval's synchronous calls from any thread.

The eval calls its search function from the runner's threads; the ``mcp`` SDK
is async and its client must be entered and left in one task. So one task owns
the session (it connects, then waits to be told to stop) and each call runs on
the same loop beside it. The loop runs in the calling thread, while a call is
in flight: a thread hop per call (a wakeup of a loop thread, then of the
caller) costs more CPU than the call's own work on the loop. When calls come
from several threads at once, one of them runs the loop for all (its own call
and the others', which it was handed through ``run_coroutine_threadsafe``) and
when its own call is done, a thread still waiting takes the loop over. Between
calls the loop does not run: a session has nothing to do then (a closed
connection or a dead stdio child is met by the next call, which fails and
drops the session). A session that broke is dropped and the next call
connects again: for stdio, a new child.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

__all__ = ["LoopSession"]

T = TypeVar("T")

Connect = Callable[[], AbstractAsyncContextManager[Any]]
"""Opens the client (an ``mcp`` ``Client``, entered by the owning task)."""

_GUARD_S = 30.0
"""How long past its own timeout a call may hang before it is cancelled (the SDK's timeout fires first)."""


class LoopSession:
    """Calls tools over a client that ``connect`` opens, from any thread.

    Args:
        connect: makes the (not yet entered) client context.
    """

    def __init__(self, connect: Connect) -> None:
        self._connect = connect
        self._loop = asyncio.new_event_loop()
        self._driving = threading.Lock()  # held by the thread running the loop
        self._turn = threading.Condition()  # told when a handed call ends or the loop is let go
        self._client: Any = None
        self._stop: asyncio.Event | None = None
        self._owner: asyncio.Task[None] | None = None
        self._opening: asyncio.Future[None] | None = None

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
        """The open client, connecting first: one call connects, the calls arriving meanwhile wait for it."""
        if self._opening is None or self._opening.done():
            ready: asyncio.Future[None] = self._loop.create_future()
            self._opening = ready
            self._stop = asyncio.Event()
            self._owner = self._loop.create_task(self._own(ready, self._stop))
        await asyncio.shield(self._opening)
        if self._client is None:
            raise ConnectionError("the session closed as it opened")
        return self._client

    async def _call(self, name: str, arguments: dict[str, Any], meta: Mapping[str, str], timeout_s: float) -> Any:
        client = self._client if self._client is not None else await self._open()
        return await client.call_tool(name, arguments, read_timeout_seconds=timeout_s, meta=dict(meta) or None)

    def call(self, name: str, arguments: dict[str, Any], meta: Mapping[str, str], timeout_s: float) -> Any:
        """One ``tools/call`` (connecting first when no session is open); the SDK's exception as raised."""
        return self._run(self._call(name, arguments, meta, timeout_s), timeout_s + _GUARD_S)

    def _run(self, coro: Coroutine[Any, Any, T], limit_s: float) -> T:
        """``coro``'s result, run on the loop: by this thread when no other runs it, else by the one that does."""
        if self._driving.acquire(blocking=False):
            try:
                return self._drive(self._loop.create_task(coro), limit_s)
            finally:
                self._let_go()
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        future.add_done_callback(self._told)
        return self._wait(future, limit_s)

    def _drive(self, task: asyncio.Future[T], limit_s: float) -> T:
        """Run the loop until ``task`` is done (cancelled after ``limit_s``: TimeoutError)."""
        guard = self._loop.call_later(limit_s, task.cancel)
        try:
            return self._loop.run_until_complete(task)
        except asyncio.CancelledError:
            raise TimeoutError(f"no answer within {limit_s:g} s") from None
        finally:
            guard.cancel()

    def _wait(self, future: concurrent.futures.Future[T], limit_s: float) -> T:
        """``future``'s result, taking the loop over when the thread running it lets it go first."""
        deadline = self._loop.time() + limit_s
        while True:
            with self._turn:
                while not future.done() and self._driving.locked():
                    left = deadline - self._loop.time()
                    if left <= 0:
                        future.cancel()
                        raise TimeoutError(f"no answer within {limit_s:g} s")
                    self._turn.wait(left)
            if future.done():
                return future.result()
            if self._driving.acquire(blocking=False):
                try:
                    return self._drive(asyncio.wrap_future(future, loop=self._loop),
                                       max(0.0, deadline - self._loop.time()))
                finally:
                    self._let_go()

    def _told(self, _: object) -> None:
        with self._turn:
            self._turn.notify_all()

    def _let_go(self) -> None:
        with self._turn:
            self._driving.release()
            self._turn.notify_all()

    async def _drop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._owner is not None:
            try:
                await asyncio.wait_for(self._owner, 10)
            except BaseException:  # noqa: S110 - a broken session's own teardown error is not the caller's
                pass
        self._owner = self._stop = self._opening = None
        self._client = None

    def reset(self) -> None:
        """Drop the session (a broken one): the next call connects again."""
        if not self._loop.is_closed():
            self._run(self._drop(), 15)

    def close(self) -> None:
        """Leave the session and close the loop."""
        if self._loop.is_closed():
            return
        self.reset()
        with self._driving:
            self._loop.close()
