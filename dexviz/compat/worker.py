"""Worker and AsyncWorker with Dex's interface, serving a Registry on the shared live engine.

A Dex Worker listens on a socket for the server's handler calls. In one process the engine
calls the handlers itself, so a compat Worker only registers its Registry with the live engine
of its ``server_address`` when it is built (a Client can be used as soon as both exist),
``start()`` waits until ``close()``, and no socket is opened.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from dexviz.compat.blob_cache import BlobCache
from dexviz.compat.closing import ClosesOnAsyncExit, ClosesOnExit
from dexviz.compat.hub import HUB, Hub, LiveEngine
from dexviz.sdk.client_options import WorkerOptions, WorkerTarget
from dexviz.sdk.registry import Registry

_WILDCARD_HOSTS = ("", "0.0.0.0", "::", "[::]")


def target_address(bind_address: str) -> str:
    """The address a Worker bound to ``bind_address`` advertises (Dex's rule, no socket).

    ``":8803"`` and ``"0.0.0.0:8803"`` advertise ``"localhost:8803"``; an address without a
    port (an opaque key such as ``"inproc"``) is advertised as it is.
    """
    host, separator, port = bind_address.rpartition(":")
    if not separator or not port:
        return bind_address
    return f"localhost:{port}" if host in _WILDCARD_HOSTS else bind_address


def _advertised_target(options: WorkerOptions) -> WorkerTarget:
    """Dex's rule: pull mode advertises ``pull=True``; else the given target or the bind one."""
    if options.pull is not None:
        return WorkerTarget(pull=True)
    return options.worker_target or WorkerTarget(target_address(options.bind_address))


class _WorkerCore:
    """The lifecycle both Workers share: lease, registration, one start, idempotent stop."""

    def __init__(
        self,
        registry: Registry,
        blob_cache: BlobCache,
        options: WorkerOptions | None,
        hub: Hub | None,
    ) -> None:
        if not isinstance(registry, Registry):
            raise TypeError(f"a Worker takes a Registry, got {type(registry).__name__}")
        self.registry = registry
        self.blob_cache = blob_cache
        self.options = options if options is not None else WorkerOptions()
        self._target = _advertised_target(self.options)
        self._lease = (hub or HUB).lease(self.options.server_address)
        try:
            self._engine = self._lease.register_worker(registry)
        except BaseException:
            self._lease.release()
            raise
        self._lock = threading.Lock()
        self._state = "created"
        self._start_called = False

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.registry!r}, "
            f"server_address={self.options.server_address!r}, {self._state})"
        )

    @property
    def worker_target(self) -> WorkerTarget:
        """The Worker target advertised to Clients (``.address`` is a string)."""
        return self._target

    @property
    def engine(self) -> LiveEngine:
        """The live engine this Worker's handlers run on (shared by its server address)."""
        return self._engine

    def _begin(self, on_running: Callable[[], None] | None = None) -> bool:
        """Record the one start; False when the Worker was already stopped (start returns).

        ``on_running`` runs under the lifecycle lock, so a concurrent stop sees its effect.
        """
        with self._lock:
            if self._start_called:
                raise RuntimeError(f"{type(self).__name__} can only start once")
            self._start_called = True
            if self._state != "created":
                return False
            self._state = "running"
            if on_running is not None:
                on_running()
            return True

    def _take_stop(self) -> bool:
        """Move to stopping; False when another stop already did."""
        with self._lock:
            if self._state in ("stopping", "stopped", "closed"):
                return False
            self._state = "stopping"
            return True

    def _finish(self, closed: bool) -> None:
        with self._lock:
            if closed or self._state != "closed":
                self._state = "closed" if closed else "stopped"


class Worker(ClosesOnExit, _WorkerCore):
    """Dex's synchronous Worker: ``start()`` blocks (run it on a thread) until ``close()``.

    Args:
        registry: the Flows to serve.
        blob_cache: accepted as in Dex (values never leave the process).
        options: ``server_address`` picks the shared engine; ``bind_address`` and
            ``worker_target`` only set the advertised ``worker_target``.
        hub: the address map to register with (the process-wide one by default).
    """

    def __init__(
        self,
        registry: Registry,
        blob_cache: BlobCache,
        options: WorkerOptions | None = None,
        *,
        hub: Hub | None = None,
    ) -> None:
        super().__init__(registry, blob_cache, options, hub)
        self._stopped = threading.Event()

    def start(self) -> None:
        """Serve until ``stop()``/``close()``; returns at once if the Worker was already closed.

        Raises:
            RuntimeError: on a second call.
        """
        if self._begin():
            self._stopped.wait()

    def stop(self) -> None:
        """Release this Worker's hold on the engine and let ``start()`` return (idempotent)."""
        if not self._take_stop():
            return
        try:
            self._lease.release()
        finally:
            self._finish(closed=False)
            self._stopped.set()

    def close(self) -> None:
        """Stop the Worker for good (idempotent); the last holder's close closes the engine."""
        try:
            self.stop()
        finally:
            self._finish(closed=True)


class AsyncWorker(ClosesOnAsyncExit, _WorkerCore):
    """Dex's asyncio Worker: ``await start()`` (or run it as a task) returns after ``close()``.

    Args:
        registry: the Flows to serve (Dex requires ``allow_async_handlers=True``).
        blob_cache: accepted as in Dex (values never leave the process).
        options: as for ``Worker``.
        hub: the address map to register with (the process-wide one by default).
    """

    def __init__(
        self,
        registry: Registry,
        blob_cache: BlobCache,
        options: WorkerOptions | None = None,
        *,
        hub: Hub | None = None,
    ) -> None:
        super().__init__(registry, blob_cache, options, hub)
        self._wakeup: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None

    async def start(self) -> None:
        """Serve until ``stop()``/``close()``; returns at once if the Worker was already closed.

        Raises:
            RuntimeError: on a second call.
        """
        loop, event = asyncio.get_running_loop(), asyncio.Event()

        def remember() -> None:
            self._wakeup = (loop, event)

        if self._begin(remember):
            await event.wait()

    async def stop(self) -> None:
        """Release this Worker's hold on the engine and let ``start()`` return (idempotent)."""
        if not self._take_stop():
            return
        try:
            await run_off_loop(self._lease.release)
        finally:
            self._finish(closed=False)
            self._wake()

    async def close(self) -> None:
        """Stop the Worker for good (idempotent); the last holder's close closes the engine."""
        try:
            await self.stop()
        finally:
            self._finish(closed=True)

    def _wake(self) -> None:
        with self._lock:
            wakeup = self._wakeup
        if wakeup is None:
            return
        loop, event = wakeup
        if loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            event.set()
        else:
            loop.call_soon_threadsafe(event.set)


async def run_off_loop(action: Callable[[], Any]) -> Any:
    """Run a blocking ``action`` on a short-lived ``dexviz-`` thread and await its outcome.

    Closing the engine joins its threads, which may need the caller's event loop to finish
    an async handler; running it off the loop avoids that deadlock. The thread is joined.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)

    def run() -> None:
        try:
            value, error = action(), None
        except BaseException as failure:  # handed to the awaiting coroutine
            value, error = None, failure
        if not loop.is_closed():
            loop.call_soon_threadsafe(settle, value, error)

    thread = threading.Thread(target=run, name="dexviz-compat-release", daemon=True)
    thread.start()
    try:
        return await done
    finally:
        thread.join()
