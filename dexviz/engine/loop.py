"""VirtualLoop: an asyncio event loop on the simulation's virtual clock.

Coroutine handlers run as ordinary asyncio Tasks, but every callback and timer goes through the
engine's Scheduler, so ``await asyncio.sleep(5)`` advances virtual time by five seconds without
waiting and interleaves with the other work by seed.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any

from dexviz.engine.scheduler import Scheduler

_get_running_loop = asyncio.events._get_running_loop
_set_running_loop = asyncio.events._set_running_loop


class VirtualLoop(asyncio.BaseEventLoop):
    """An event loop whose time and callbacks belong to a Scheduler; it is never run_forever'd."""

    def __init__(self, scheduler: Scheduler) -> None:
        super().__init__()
        self._scheduler = scheduler

    def time(self) -> float:
        """Virtual time in seconds."""
        return self._scheduler.now_ns / 1e9

    def call_soon(  # type: ignore[override]
        self,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.Handle:
        """Schedule ``callback`` as ready work of the Scheduler."""
        handle = asyncio.Handle(callback, args, self, context)
        self._scheduler.call_soon(lambda: self.run_handle(handle))
        return handle

    def call_at(  # type: ignore[override]
        self,
        when: float,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.TimerHandle:
        """Schedule ``callback`` at virtual time ``when`` (seconds)."""
        handle = asyncio.TimerHandle(when, callback, args, self, context)
        self._scheduler.call_at(round(when * 1e9), lambda: self.run_handle(handle))
        return handle

    def _timer_handle_cancelled(self, handle: asyncio.TimerHandle) -> None:
        del handle  # the scheduler unit checks handle.cancelled() when it comes due

    def run_handle(self, handle: asyncio.Handle) -> None:
        """Run one asyncio callback with this loop set as the running loop."""
        if handle.cancelled():
            return
        previous = _get_running_loop()
        _set_running_loop(self)
        try:
            handle._run()
        finally:
            _set_running_loop(previous)

    def start_task(self, coro: Any, context: contextvars.Context) -> asyncio.Task[Any]:
        """Create a Task for ``coro``; its first step runs as ready work."""
        return asyncio.Task(coro, loop=self, context=context)
