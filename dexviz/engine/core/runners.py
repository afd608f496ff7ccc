"""Handler runners: where handlers run, and how their outcome comes back as a unit.

In simulation: inline, and on the VirtualLoop. In live mode: in a thread pool, and on an
asyncio loop.
"""

from __future__ import annotations

import contextvars
import inspect
import threading
from collections.abc import Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any

from dexviz.engine.core.live import THREAD_PREFIX, LiveScheduler
from dexviz.sdk.clock import handler_clock
from dexviz.sdk.step_output import StepOutput

if TYPE_CHECKING:
    # asyncio and concurrent.futures load only when a coroutine handler or live mode needs them.
    import asyncio
    from concurrent.futures import Future

    from dexviz.engine.core.loop import VirtualLoop

Done = Callable[[Any, BaseException | None, bool], None]
"""Called with (result, error, cancelled) on the engine's side once a handler finished."""

HANDLER_EXITS = (KeyboardInterrupt, SystemExit)
"""BaseExceptions a handler may raise that still only fail its attempt, in both modes alike."""


class _Exited:
    """What a coroutine handler's wrapper returns instead of raising.

    asyncio re-raises KeyboardInterrupt and SystemExit out of the event loop (stopping
    simulation, or killing live mode's loop thread), so the wrapper catches them and hands them
    back as a result. In simulation every error of a handler comes back this way.
    """

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


async def guard_exits(awaitable: Any) -> Any:
    """Await a handler's coroutine, returning its KeyboardInterrupt or SystemExit as a marker.

    Callers outside the runners (RPCs) pass the result to ``reraise_exit`` once they are off
    the event loop.
    """
    try:
        return await awaitable
    except HANDLER_EXITS as error:
        return _Exited(error)


def reraise_exit(result: Any) -> Any:
    """Return a guarded handler's result, or raise the KeyboardInterrupt/SystemExit it carried."""
    if isinstance(result, _Exited):
        raise result.error
    return result


def _call(handler: Any, args: tuple[Any, ...], clock: Callable[[], int]) -> Any:
    token = handler_clock.set(clock)
    try:
        result = handler(*args)
        return drain(result, args[0]) if inspect.isgenerator(result) else result
    finally:
        handler_clock.reset(token)


def drain(generator: Generator[Any, Any, Any], context: Any) -> Any:
    """Run a generator handler: apply each yielded heartbeat, return what it returns."""
    try:
        output = next(generator)
        while True:
            if not isinstance(output, StepOutput):
                generator.close()
                raise TypeError(
                    f"a generator handler may only yield StepOutput values (heartbeat(...)), "
                    f"got {type(output).__name__}"
                )
            if output.kind == "stream":
                context.write_stream_now(*output.value)
            else:
                context.record_heartbeat(output.value)
            output = next(generator)
    except StopIteration as stop:
        return stop.value


class SimRunner:
    """Simulation: sync handlers run inline; coroutines run as Tasks on the VirtualLoop."""

    def __init__(self, loop: Callable[[], VirtualLoop], clock: Callable[[], int]) -> None:
        self._loop = loop
        self._clock = clock

    def run_sync(self, handler: Any, args: tuple[Any, ...], done: Done) -> Any:
        """Call the handler now and report at once; returns None (nothing to cancel)."""
        try:
            result = _call(handler, args, self._clock)
        except (Exception, *HANDLER_EXITS) as error:  # noqa: BLE001 - a failed attempt
            done(None, error, False)
            return None
        done(result, None, False)
        return None

    def run_async(self, handler: Any, args: tuple[Any, ...], done: Done) -> Any:
        """Start the coroutine as a Task; report when it finishes. Returns the Task.

        The handler is called at the Task's first step, so a Task cancelled, closed or dropped
        before it leaves no coroutine that never ran. Its errors come back as the Task's result,
        so a Task whose outcome the engine never took (it was dropped) has nothing to log.
        """
        context = contextvars.copy_context()
        context.run(handler_clock.set, self._clock)
        loop = self._loop()
        task = loop.start_task(DeferredCall(handler, args, loop), context)

        def finished(task: asyncio.Task[Any]) -> None:
            loop.forget(task)
            outcome = _task_outcome(task)
            if not loop.closing:  # a closing engine records nothing more
                done(*outcome)

        task.add_done_callback(finished)
        return task


class DeferredCall(Coroutine[Any, Any, Any]):
    """A coroutine handler's call, made at its Task's first step; errors come back as a value.

    Until the Task first steps there is only this object (no coroutine of the handler's that
    could be reported as "never awaited"). Whatever the handler raises but a cancellation is
    returned as an ``_Exited`` marker, which ``_task_outcome`` turns back into the attempt's
    error (a Task dropped before its outcome was taken then has no error to log).

    On a VirtualLoop it also keeps the handler's trace: the virtual time of every step
    (``steps``) and whether anything was thrown into it (``thrown``), which is what a snapshot
    needs to rebuild the suspended coroutine (:mod:`dexviz.engine.coroutine_replay`).
    """

    __slots__ = ("_handler", "_args", "_running", "_loop", "steps", "thrown", "context")

    def __init__(self, handler: Any, args: tuple[Any, ...], loop: Any = None) -> None:
        self._handler: Any = handler
        self._args: tuple[Any, ...] | None = args
        self._running: Coroutine[Any, Any, Any] | None = None
        self._loop = loop
        self.steps: list[int] = []
        self.thrown = False
        self.context: Any = args[0] if args else None

    @property
    def __name__(self) -> str:
        """The handler's qualified name (what asyncio shows in a Task's repr)."""
        return getattr(self._handler, "__qualname__", type(self._handler).__name__)

    @property
    def started(self) -> bool:
        """Whether the handler was called (or this call was closed before it)."""
        return self._args is None

    @property
    def coroutine(self) -> Coroutine[Any, Any, Any] | None:
        """The handler's coroutine once it was called (read by the explorer), else None."""
        return self._running

    def _start(self) -> Coroutine[Any, Any, Any]:
        args, self._args = self._args, None
        if args is None:
            raise RuntimeError("cannot reuse already awaited coroutine")
        self._running = _guard_errors(self._handler(*args))
        return self._running

    def send(self, value: Any) -> Any:
        """Resume the handler (calling it on the first send)."""
        loop = self._loop
        if loop is not None:
            self.steps.append(loop.now_ns)
        running = self._running
        return (running if running is not None else self._start()).send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        """Raise into the handler; before its first step, end here as a fresh coroutine would."""
        self.thrown = True
        running = self._running
        if running is None:
            self._args = None
            raise typ if val is None else val
        if val is None and tb is None:
            return running.throw(typ)
        return running.throw(typ, val, tb)  # pragma: no cover - asyncio throws one argument

    def close(self) -> None:
        """Close the handler's coroutine, or drop the call if it was never made."""
        self._args = None
        if self._running is not None:
            self._running.close()

    def __await__(self) -> Generator[Any, None, Any]:
        return self._start().__await__()


async def _guard_errors(awaitable: Any) -> Any:
    from asyncio import CancelledError  # loaded already: this runs in an asyncio Task

    try:
        return await awaitable
    except (CancelledError, GeneratorExit):
        raise
    except BaseException as error:  # noqa: BLE001 - the attempt's error (or a crash fault's)
        return _Exited(error)


def _task_outcome(
    task: asyncio.Future[Any] | Future[Any],
) -> tuple[Any, BaseException | None, bool]:
    if task.cancelled():
        return None, None, True
    error = task.exception()
    if error is not None:
        return None, error, False
    result = task.result()
    return (None, result.error, False) if isinstance(result, _Exited) else (result, None, False)


class LiveRunner:
    """Live mode: sync handlers in a thread pool, coroutines on an asyncio loop."""

    def __init__(
        self, scheduler: LiveScheduler, clock: Callable[[], int], workers: int = 32
    ) -> None:
        self._scheduler = scheduler
        self._clock = clock
        self._pool = DaemonPool(workers)
        self._own_loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: threading.Thread | None = None
        self.async_loop: asyncio.AbstractEventLoop | None = None

    def submit(self, function: Any, *args: Any) -> Future[Any]:
        """Run ``function`` in the handler pool."""
        return self._pool.submit(getattr(function, "__qualname__", "handler"), function, *args)

    def run_sync(self, handler: Any, args: tuple[Any, ...], done: Done) -> Any:
        """Submit the handler to the pool; its outcome comes back as an engine unit."""
        name = getattr(handler, "__qualname__", None) or repr(handler)
        future = self._pool.submit(name, _call, handler, args, self._clock)
        future.add_done_callback(
            lambda f: self._scheduler.call_soon(lambda: done(*_task_outcome(f)))
        )
        return future

    def run_async(self, handler: Any, args: tuple[Any, ...], done: Done) -> Any:
        """Run the coroutine on the async loop; its outcome comes back as an engine unit."""
        import asyncio

        clock = self._clock

        async def run() -> Any:
            handler_clock.set(clock)
            return await guard_exits(handler(*args))

        future = asyncio.run_coroutine_threadsafe(run(), self.loop())
        future.add_done_callback(
            lambda f: self._scheduler.call_soon(lambda: done(*_task_outcome(f)))
        )
        return future

    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop async handlers run on: an AsyncClient's loop, else dexviz's own thread."""
        if self.async_loop is not None and not self.async_loop.is_closed():
            return self.async_loop
        if self._own_loop is None:
            import asyncio

            self._own_loop = asyncio.new_event_loop()
            self._loop_thread = threading.Thread(
                target=self._own_loop.run_forever, name=f"{THREAD_PREFIX}asyncio", daemon=True
            )
            self._loop_thread.start()
        return self._own_loop

    def close(self, timeout: float = 5.0) -> None:
        """Stop the pool and dexviz's own loop, waiting ``timeout`` seconds in all for them.

        Handlers still running then are named in a RuntimeWarning and left behind: their
        threads are daemons, so they never keep the interpreter from exiting.
        """
        import asyncio

        left = self._pool.shutdown(timeout)
        if left:
            import warnings

            warnings.warn(
                f"the engine closed with {len(left)} sync handler(s) still running after "
                f"{timeout:g} s: {', '.join(left)}; they are left behind (their results are "
                "not recorded)",
                RuntimeWarning,
                stacklevel=3,
            )
        loop, self._own_loop = self._own_loop, None
        if loop is None:
            return
        try:
            # Let cancelled handlers finish unwinding before the loop stops.
            asyncio.run_coroutine_threadsafe(_cancel_tasks(), loop).result(timeout)
        except Exception:  # noqa: BLE001 - a handler that ignores cancellation is left behind
            pass
        loop.call_soon_threadsafe(loop.stop)
        if self._loop_thread is not None:
            self._loop_thread.join(timeout)
        if not loop.is_running():
            loop.close()


async def _cancel_tasks() -> None:
    import asyncio

    current = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class DaemonPool:
    """A thread pool of daemon threads: a blocked handler never holds the process at exit.

    (``ThreadPoolExecutor`` joins its threads when the interpreter exits.)
    """

    def __init__(self, workers: int) -> None:
        import queue

        self._workers = workers
        self._queue: queue.SimpleQueue[tuple[str, Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._running: dict[Future[Any], str] = {}
        self._guard = threading.Lock()
        self._closed = False

    def submit(self, name: str, function: Callable[..., Any], *args: Any) -> Future[Any]:
        """Run ``function(*args)`` on a pool thread; ``name`` names it if it outlives close."""
        from concurrent.futures import Future

        future: Future[Any] = Future()
        with self._guard:
            if self._closed:
                raise RuntimeError("the handler pool is closed")
            self._queue.put((name, future, lambda: function(*args)))
            if self._idle == 0 and len(self._threads) < self._workers:
                thread = threading.Thread(
                    target=self._work, name=f"{THREAD_PREFIX}handler_{len(self._threads)}",
                    daemon=True,
                )
                self._threads.append(thread)
                thread.start()
            else:
                self._idle -= 1
        return future

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            name, future, call = item
            if not future.set_running_or_notify_cancel():
                continue
            with self._guard:
                self._running[future] = name
            try:
                future.set_result(call())
            except BaseException as error:  # noqa: BLE001 - the handler's error, for its unit
                future.set_exception(error)
            finally:
                with self._guard:
                    self._running.pop(future, None)
                    self._idle += 1

    def shutdown(self, timeout: float) -> list[str]:
        """Cancel queued calls, wait ``timeout`` s in all; return the names still running."""
        import time

        with self._guard:
            self._closed = True
            threads = list(self._threads)
        while True:
            try:
                item = self._queue.get_nowait()
            except Exception:  # noqa: BLE001 - queue.Empty: nothing queued any more
                break
            if item is not None:
                item[1].cancel()
        for _ in threads:
            self._queue.put(None)
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._guard:
            return sorted(self._running.values())
