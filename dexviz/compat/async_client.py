"""AsyncClient with Dex's constructor and coroutine methods, over the shared live engine.

Each call goes to the engine's AsyncClient bound to the running event loop (made on first use
in that loop), so one AsyncClient may be used from ``asyncio.run`` after ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import inspect
from datetime import timedelta
from typing import Any

from dexviz.compat.blob_cache import BlobCache
from dexviz.compat.client import ClientCore, given, unsupported
from dexviz.compat.closing import ClosesOnAsyncExit
from dexviz.compat.hub import Hub, NoWorkerError
from dexviz.compat.worker import run_off_loop
from dexviz.sdk.client_options import ClientOptions
from dexviz.sdk.flow_options import StartFlowOptions, StopFlowOptions
from dexviz.sdk.registry import Registry


async def _settle(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


class AsyncClient(ClosesOnAsyncExit, ClientCore):
    """Dex's asyncio Client over the live engine of ``options.server_address``.

    Args:
        registry: the Flows this Client starts (instances must be the registered ones).
        blob_cache: accepted as in Dex (values never leave the process).
        options: ``server_address`` picks the shared engine; ``worker_target`` is accepted.
        hub: the address map to look the engine up in (the process-wide one by default).
    """

    def __init__(
        self,
        registry: Registry,
        blob_cache: BlobCache,
        options: ClientOptions | None = None,
        *,
        hub: Hub | None = None,
    ) -> None:
        super().__init__(registry, blob_cache, options, hub)
        self._bound: tuple[asyncio.AbstractEventLoop, Any] | None = None

    def _delegate(self) -> Any:
        engine = self.engine
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._bound is None or self._bound[0] is not loop:
                self._bound = (loop, engine.async_client())
            return self._bound[1]

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        method = getattr(self._delegate(), name, None)
        if method is None:
            raise unsupported("AsyncClient", name)
        return await _settle(method(*args, **kwargs))

    async def start_flow(
        self,
        flow: Any,
        flow_id: str,
        input: Any = None,
        options: StartFlowOptions | None = None,
    ) -> str:
        """Start a run of the registered ``flow`` under ``flow_id``; return its run id."""
        flow_type = self.check_flow(flow)
        return str(await self._call("start_flow", flow_type, flow_id, input, options))

    async def invoke_rpc(
        self,
        rpc_method: Any,
        flow_id: str,
        input: Any = None,
        *,
        run_id: str = "",
        options: Any = None,
    ) -> Any:
        """Run the RPC (a bound method of the registered Flow) and return its output."""
        self.check_rpc(rpc_method)
        return await self._call(
            "invoke_rpc", rpc_method, flow_id, input, **given(run_id=run_id, options=options)
        )

    async def get_attribute(
        self, flow_id: str, attribute: Any, *instance: Any, run_id: str = ""
    ) -> Any:
        """Read an Attribute (a map takes the instance); None when unset."""
        return await self._call(
            "get_attribute", flow_id, attribute, *instance, **given(run_id=run_id)
        )

    async def set_attribute(
        self, flow_id: str, attribute: Any, *args: Any, run_id: str = ""
    ) -> None:
        """Write an Attribute of an active Flow (a map takes the instance before the value)."""
        await self._call("set_attribute", flow_id, attribute, *args, **given(run_id=run_id))

    async def publish(self, flow_id: str, channel: Any, *values: Any, run_id: str = "") -> None:
        """Publish values to a Channel of an active Flow (a ChannelMap takes the instance)."""
        await self._call("publish", flow_id, channel, *values, **given(run_id=run_id))

    async def get_channel_messages(
        self, flow_id: str, channel: Any, *instance: Any, run_id: str = ""
    ) -> Any:
        """The pending messages of a Channel (or ChannelMap instance), FIFO."""
        return await self._call(
            "get_channel_messages", flow_id, channel, *instance, **given(run_id=run_id)
        )

    async def delete_channel_message(self, flow_id: str, channel: Any, *args: Any) -> None:
        """Delete one pending message by id (a ChannelMap takes the instance first)."""
        await self._call("delete_channel_message", flow_id, channel, *args)

    async def write_stream(self, flow_id: str, stream: Any, source: str, value: Any) -> None:
        """Append a value to a Flow's Stream from outside."""
        await self._call("write_stream", flow_id, stream, source, value)

    async def read_stream(
        self, flow_id: str, stream: Any, resume_token: str = "", timeout: timedelta | None = None
    ) -> Any:
        """Wait for the next Stream message after ``resume_token``."""
        return await self._call(
            "read_stream", flow_id, stream, **given(resume_token=resume_token, timeout=timeout)
        )

    async def list_stream_messages(
        self, flow_id: str, stream: Any, page_size: int, before_page_token: str = ""
    ) -> Any:
        """A page of a Stream's messages, newest first."""
        return await self._call(
            "list_stream_messages",
            flow_id,
            stream,
            page_size,
            **given(before_page_token=before_page_token),
        )

    async def wait_for_flow(self, flow_id: str, timeout: timedelta | None = None) -> Any:
        """Wait for the Flow to close and return its FlowResult (LongPollTimeoutError if not)."""
        return await self._call("wait_for_flow", flow_id, timeout)

    async def stop_flow(self, flow_id: str, options: StopFlowOptions | None = None) -> None:
        """Stop the Flow (CANCEL by default)."""
        await self._call("stop_flow", flow_id, options)

    async def describe_flow(self, flow_id: str) -> Any:
        """The FlowInfo of the Flow's current or latest run."""
        return await self._call("describe_flow", flow_id)

    async def search_flows(
        self,
        query: str,
        page_size: int,
        next_page_token: str = "",
        *,
        include_continued_as_new: bool = False,
    ) -> Any:
        """Search Flows by indexed Attributes; return a SearchFlowsPage."""
        return await self._call(
            "search_flows",
            query,
            page_size,
            **given(
                next_page_token=next_page_token, include_continued_as_new=include_continued_as_new
            ),
        )

    async def time_travel(self, flow_id: str, options: Any) -> Any:
        """Start a new run from a point in the Flow's history; return its run id."""
        return await self._call("time_travel", flow_id, options)

    async def skip_timer(self, flow_id: str, step_execution_id: Any, timer_id: Any) -> None:
        """Make a waiting timer fire now."""
        await self._call("skip_timer", flow_id, step_execution_id, timer_id)

    async def wait_for_step_completion(
        self, flow_id: str, step_execution_id: Any, options: Any = None
    ) -> None:
        """Wait until one Step execution finishes (a timedelta or WaitForStepCompletionOptions)."""
        await self._call("wait_for_step_completion", flow_id, step_execution_id, options)

    async def wait_for_attribute_match(self, flow_id: str, attribute: Any, *args: Any) -> Any:
        """Wait until an Attribute matches (``[instance,] match, options``); return its value."""
        return await self._call("wait_for_attribute_match", flow_id, attribute, *args)

    async def wait_for_attribute_equal(self, flow_id: str, attribute: Any, *args: Any) -> None:
        """The 0.2 form: wait until an Attribute equals a value (``[instance,] expected, t``)."""
        await self._call("wait_for_attribute_equal", flow_id, attribute, *args)

    async def update_flow_config(self, flow_id: str, config: Any) -> None:
        """Merge the set fields of ``config`` into the Flow's FlowConfig."""
        await self._call("update_flow_config", flow_id, config)

    async def trigger_continue_as_new(self, flow_id: str) -> None:
        """Start a new run of the Flow with the same id."""
        await self._call("trigger_continue_as_new", flow_id)

    async def health_check(self) -> bool:
        """Whether the Client is open and its server address has a live engine."""
        if self._closed:
            return False
        try:
            return bool(await self._call("health_check"))
        except NoWorkerError:
            return False

    async def close(self) -> None:
        """Close the Client (idempotent); the last holder's close closes the engine."""
        if not self.mark_closed():
            return
        with self._lock:
            bound, self._bound = self._bound, None
        try:
            if bound is not None and bound[0] is asyncio.get_running_loop():
                closer = getattr(bound[1], "close", None)
                if closer is not None:
                    await _settle(closer())
        finally:
            await run_off_loop(self._lease.release)
