"""AsyncClient: the Client's methods as coroutines, bound to the caller's event loop."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from dexviz.engine.client import Client
from dexviz.engine.runners import LiveRunner
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

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if not callable(method):
            return method

        async def call(*args: Any, **kwargs: Any) -> Any:
            return method(*args, **kwargs)

        call.__name__ = name
        return call
