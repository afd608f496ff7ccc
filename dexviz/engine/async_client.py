"""AsyncClient: the Client's methods as coroutines, bound to the caller's event loop.

A handler may await the engine's own AsyncClient (Dex's parent-child and scalable-parallel
patterns). In simulation such a handler runs as a Task on the engine's VirtualLoop, so its waits
must not drive the engine from inside that Task: they await a commit instead, and the
simulation carries on around them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from dexviz.engine.client import Client, timeout_seconds
from dexviz.engine.core.runners import LiveRunner
from dexviz.engine.rpc import invoke_rpc_in_task
from dexviz.sdk.flow_options import StartFlowOptions, StopFlowOptions
from dexviz.sdk.results import FlowInfo, FlowResult

if TYPE_CHECKING:
    from dexviz.engine.runtime import Runtime


class AsyncClient:
    """Dex's AsyncClient: quick calls run at once; waits await without blocking the loop.

    In live mode, creating it inside a running loop makes that loop the one async handlers run
    on, as an AsyncWorker would.
    """

    def __init__(self, runtime: Runtime) -> None:
        self._client = Client(runtime)
        self._rt = runtime
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None
        if self._loop is not None and isinstance(runtime.runner, LiveRunner):
            runtime.runner.async_loop = self._loop

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the client (idempotent)."""
        self._client.close()

    async def start_flow(
        self, flow: Any, flow_id: str, input: Any = None, options: StartFlowOptions | None = None
    ) -> str:
        """Start a run and return its run id."""
        return self._client.start_flow(flow, flow_id, input, options)

    async def wait_for_flow(self, flow_id: str, timeout: timedelta | None = None) -> FlowResult:
        """Await the Flow's close; LongPollTimeoutError after ``timeout``."""
        return await self._wait(self._client.wait_for_flow, flow_id, timeout)  # type: ignore[no-any-return]

    async def _wait(self, call: Any, *args: Any) -> Any:
        if self._rt.sim is not None:
            if _inside(self._rt):
                return await _in_task(self._rt, call.__name__, args)
            return call(*args)
        # The blocking wait runs in the loop's executor so the loop keeps serving handlers.
        return await asyncio.get_running_loop().run_in_executor(None, call, *args)

    async def publish(self, flow_id: str, channel: Any, *values: Any) -> None:
        """Publish values to an active Flow."""
        self._client.publish(flow_id, channel, *values)

    async def invoke_rpc(
        self, rpc_method: Any, flow_id: str, input: Any = None, **kwargs: Any
    ) -> Any:
        """Run an RPC and return its output."""
        if self._rt.sim is not None and _inside(self._rt):
            if self._rt.closed:
                raise RuntimeError("this Client or its engine is closed")
            options = kwargs.get("options")
            return await invoke_rpc_in_task(self._rt, rpc_method, flow_id, input, options)
        return await self._wait(
            lambda: self._client.invoke_rpc(rpc_method, flow_id, input, **kwargs)
        )

    async def get_attribute(self, flow_id: str, attribute: Any, *instance: Any) -> Any:
        """Read an Attribute; None when unset."""
        return self._client.get_attribute(flow_id, attribute, *instance)

    async def set_attribute(self, flow_id: str, attribute: Any, *args: Any) -> None:
        """Write an Attribute of an active Flow."""
        self._client.set_attribute(flow_id, attribute, *args)

    async def stop_flow(self, flow_id: str, options: StopFlowOptions | None = None) -> None:
        """Stop the Flow."""
        self._client.stop_flow(flow_id, options)

    async def describe_flow(self, flow_id: str) -> FlowInfo:
        """Describe the current run."""
        return self._client.describe_flow(flow_id)

    async def skip_timer(self, flow_id: str, step_execution_id: Any, timer_id: Any) -> None:
        """Fire a waiting timer now."""
        self._client.skip_timer(flow_id, step_execution_id, timer_id)

    async def wait_for_step_completion(
        self, flow_id: str, step_execution_id: Any, timeout: Any = None
    ) -> None:
        """Await the end of one execution."""
        await self._wait(self._client.wait_for_step_completion, flow_id, step_execution_id, timeout)

    async def wait_for_attribute_match(self, flow_id: str, attribute: Any, *args: Any) -> Any:
        """Await an Attribute match and return the value."""
        return await self._wait(self._client.wait_for_attribute_match, flow_id, attribute, *args)

    async def read_stream(
        self, flow_id: str, stream: Any, resume_token: str = "", timeout: Any = None
    ) -> Any:
        """Await the next Stream message after ``resume_token``."""
        return await self._wait(self._client.read_stream, flow_id, stream, resume_token, timeout)

    async def wait_for_attribute_equal(self, flow_id: str, attribute: Any, *args: Any) -> None:
        """Await an Attribute equal to a scalar."""
        await self._wait(self._client.wait_for_attribute_equal, flow_id, attribute, *args)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if not callable(method):
            return method

        async def call(*args: Any, **kwargs: Any) -> Any:
            return method(*args, **kwargs)

        call.__name__ = name
        return call


def _inside(rt: Runtime) -> bool:
    """Whether the caller is a handler Task on the simulation's own VirtualLoop."""
    try:
        return asyncio.get_running_loop() is rt.loop
    except RuntimeError:
        return False


class _Suspend(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by a _TaskClient's wait: the caller must await ``ready`` and call again."""

    def __init__(self, ready: Callable[[], bool], timeout: Any) -> None:
        super().__init__("suspend")
        self.ready, self.timeout = ready, timeout


class _TaskClient(Client):
    """A Client whose first wait suspends; the repeated call gets the awaited outcome."""

    outcome: bool | None = None

    def _wait(self, ready: Callable[[], bool], timeout: Any) -> bool:
        if self.outcome is None:
            raise _Suspend(ready, timeout)
        # Called again once the wait ended: its checks ran again, and ready() records the value.
        outcome, self.outcome = self.outcome, None
        return ready() if outcome else False


async def _in_task(rt: Runtime, name: str, args: tuple[Any, ...]) -> Any:
    """Run a waiting Client method from a handler Task: await the commit it waits for."""
    client = _TaskClient(rt)
    method = getattr(client, name)
    try:
        return method(*args)
    except _Suspend as suspended:
        client.outcome = await _until(rt, suspended.ready, suspended.timeout)
        return method(*args)


async def _until(rt: Runtime, ready: Callable[[], bool], timeout: Any) -> bool:
    """True after the first commit at which ``ready()`` holds; False at the (virtual) timeout."""
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[bool] = loop.create_future()

    def settle(value: bool) -> None:
        if not waiter.done():
            waiter.set_result(value)

    watched = rt.watch(ready)
    watched.add_done_callback(lambda f: None if f.cancelled() else settle(True))
    seconds = timeout_seconds(timeout)
    timer = None if seconds is None else loop.call_later(seconds, settle, False)
    try:
        return await waiter
    finally:
        watched.cancel()
        if timer is not None:
            timer.cancel()
