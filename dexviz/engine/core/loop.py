"""VirtualLoop: an asyncio event loop on the simulation's virtual clock, and how it is closed.

Coroutine handlers run as ordinary asyncio Tasks, but every callback and timer goes through the
engine's Scheduler, so ``await asyncio.sleep(5)`` advances virtual time by five seconds without
waiting and interleaves with the other work by seed.

The loop keeps every Task it runs until the Task is done, so a pending Task lives exactly as
long as its loop. Closing the loop (``Engine.close``) cancels the pending Tasks and lets them
unwind; abandoning it (a crash fault, a dropped engine) runs no handler code at all. Either way
nothing is left that warns later: no coroutine that never ran, no Task destroyed while pending,
no unclosed loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from dexviz.engine.core.scheduler import Scheduler

_get_running_loop = asyncio.events._get_running_loop
_set_running_loop = asyncio.events._set_running_loop

CANCEL_ROUNDS = 3
"""How often ``close`` cancels the Tasks still pending (a handler may catch one cancellation)."""

CLOSING_CALLBACKS = 10_000
"""At most this many asyncio callbacks run per round while the loop closes (a busy handler)."""


class _Closing:
    """Stands in for the Scheduler once the loop closes: callbacks run here, timers never fire."""

    def __init__(self, now_ns: int) -> None:
        self.now_ns = now_ns
        self.ready: deque[Callable[[], None]] = deque()
        self.closed = False

    def call_soon(self, unit: Callable[[], None]) -> None:
        """Queue an asyncio callback for ``run`` (dropped once the loop is closed)."""
        if not self.closed:
            self.ready.append(unit)

    def call_at(self, due_ns: int, unit: Callable[[], None]) -> None:
        """Drop a timer: a closing loop's virtual time does not move."""
        del due_ns, unit

    def run(self) -> None:
        """Run the queued callbacks in order, those they queue included, up to the bound."""
        ready = self.ready
        for _ in range(CLOSING_CALLBACKS):
            if not ready:
                return
            ready.popleft()()


class LoopCallback:
    """The unit of an asyncio callback (a coroutine handler's step): run ``handle`` on the loop.

    A record rather than a closure, like every engine unit, so the explorer can tell which
    Task (and so which execution) it belongs to.
    """

    __slots__ = ("loop", "handle")

    def __init__(self, loop: VirtualLoop, handle: asyncio.Handle) -> None:
        self.loop = loop
        self.handle = handle

    def __call__(self) -> None:
        """Run the callback on its loop."""
        self.loop.run_handle(self.handle)

    def __repr__(self) -> str:
        return "LoopCallback()"


class VirtualLoop(asyncio.BaseEventLoop):
    """An event loop whose time and callbacks belong to a Scheduler; it is never run_forever'd."""

    def __init__(self, scheduler: Scheduler) -> None:
        super().__init__()
        self._scheduler: Scheduler | _Closing = scheduler
        # Strong references: a pending Task can then only be destroyed with its loop.
        self._tasks: dict[asyncio.Task[Any], None] = {}
        self._sweep_at = 64
        self._crash: BaseException | None = None
        self.closing = False

    def time(self) -> float:
        """Virtual time in seconds."""
        return self._scheduler.now_ns / 1e9

    @property
    def now_ns(self) -> int:
        """Virtual time in ns (a coroutine handler's trace records each step's)."""
        return self._scheduler.now_ns

    def call_soon(  # type: ignore[override]
        self,
        callback: Callable[..., object],
        *args: Any,
        context: contextvars.Context | None = None,
    ) -> asyncio.Handle:
        """Schedule ``callback`` as ready work of the Scheduler."""
        handle = asyncio.Handle(callback, args, self, context)
        self._scheduler.call_soon(LoopCallback(self, handle))
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
        self._scheduler.call_at(round(when * 1e9), LoopCallback(self, handle))
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
        if self._crash is not None:
            # A crash fault inside a Task's step: asyncio kept it as the Task's error.
            crash, self._crash = self._crash, None
            raise crash

    def start_task(self, coro: Any, context: contextvars.Context) -> asyncio.Task[Any]:
        """Create a Task for ``coro``; its first step runs as ready work."""
        task = asyncio.Task(coro, loop=self, context=context)
        self._adopt(task)
        return task

    def create_task(  # type: ignore[override]
        self,
        coro: Coroutine[Any, Any, Any],
        *,
        name: str | None = None,
        context: contextvars.Context | None = None,
    ) -> asyncio.Task[Any]:
        """Create a Task as asyncio does (``asyncio.create_task``, ``gather``), and keep it."""
        task = super().create_task(coro, name=name, context=context)
        self._adopt(task)
        return task

    def _adopt(self, task: asyncio.Task[Any]) -> None:
        # The loop holds the Task until it is done, so asyncio's "destroyed but it is pending"
        # could only report the loop itself being dropped, which closes the Task on purpose.
        task._log_destroy_pending = False  # type: ignore[attr-defined]
        tasks = self._tasks
        tasks[task] = None
        if len(tasks) >= self._sweep_at:
            for done in [t for t in tasks if t.done()]:
                del tasks[done]
            self._sweep_at = max(64, 2 * len(tasks))

    def forget(self, task: asyncio.Task[Any]) -> None:
        """Stop holding a Task that is done (its outcome was taken)."""
        self._tasks.pop(task, None)

    def pending_tasks(self) -> list[asyncio.Task[Any]]:
        """The Tasks of this loop that are not done, oldest first."""
        return [t for t in self._tasks if not t.done()]

    def drop_tasks(self) -> None:
        """Forget every Task without running handler code: a restore replaces their state.

        As ``abandon`` does for a loop, but the loop stays open for the restored state's
        coroutines: one that never ran is closed (that runs nothing), a suspended one is left
        to the garbage collector.
        """
        for task in self._tasks:
            if not task.done():
                close_coroutine(task.get_coro(), started=False)
            elif not task.cancelled():
                task.exception()  # taken: asyncio would log an error nobody retrieved
        self._tasks.clear()

    def close(self) -> None:
        """Cancel the pending Tasks, let them unwind, close what is left, then close the loop.

        Cancellations are delivered on a closing loop of their own: the Scheduler's other work
        never runs, and timers do not fire. A Task still pending after that (it awaits a timer,
        ignores its cancellation, or its next step was already queued) has its coroutine
        closed, so its ``finally`` blocks run now.
        """
        if self.is_closed():
            return
        closing = self._start_closing()
        if _get_running_loop() is not self:  # not from inside one of its own Tasks
            for _ in range(CANCEL_ROUNDS):
                pending = self.pending_tasks()
                if not pending:
                    break
                for task in pending:
                    task.cancel()
                closing.run()
        self._finish(close_started=True)

    def abandon(self, crash: BaseException | None = None) -> None:
        """Close the loop without running any handler code, as the death of the process would.

        Coroutines that never ran are closed (that runs nothing); suspended ones are left to
        the garbage collector, which closes them when it frees them. A ``crash`` raised inside
        one of the loop's callbacks (a handler's client call) is raised again once asyncio
        returns from that callback, so it leaves the engine as any crash does.
        """
        if self.is_closed():
            return
        if crash is not None and _get_running_loop() is self:
            self._crash = crash
        self._start_closing()
        self._finish(close_started=False)

    def _start_closing(self) -> _Closing:
        self.closing = True
        closing = _Closing(self._scheduler.now_ns)
        self._scheduler = closing
        return closing

    def _finish(self, *, close_started: bool) -> None:
        for task in list(self._tasks):
            if not task.done():
                close_coroutine(task.get_coro(), started=close_started)
            elif not task.cancelled():
                task.exception()  # taken: asyncio would log an error nobody retrieved
        self._tasks.clear()
        assert isinstance(self._scheduler, _Closing)
        self._scheduler.closed = True
        self._scheduler.ready.clear()
        super().close()

    def __del__(self) -> None:
        # A dropped engine's loop: no ResourceWarning (it holds no OS resource) and no handler
        # code; what never ran is closed quietly.
        if not self.is_closed():
            try:
                self.abandon()
            except Exception:  # noqa: BLE001, S110 - nothing can be reported from a finalizer
                pass


def close_coroutine(coro: Any, *, started: bool = True) -> None:
    """Close a Task's coroutine without a "never awaited" warning for it or what it was given.

    A coroutine that never ran is closed along with the coroutines it was handed (a handler
    inside a wrapper: both are fresh). A suspended one is closed only when ``started`` is true.
    """
    if inspect.iscoroutine(coro):
        state = inspect.getcoroutinestate(coro)
        if state == inspect.CORO_CREATED:
            frame = coro.cr_frame
            for value in list(frame.f_locals.values()) if frame is not None else ():
                if inspect.iscoroutine(value):
                    close_coroutine(value, started=False)
        elif state != inspect.CORO_SUSPENDED or not started:
            return
    elif not started and getattr(coro, "started", True):
        return
    try:
        coro.close()
    except (RuntimeError, ValueError):  # it ignored GeneratorExit, or it is the one running
        pass
