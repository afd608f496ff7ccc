"""Client with Dex's constructor and method names, forwarding to the shared live engine.

``Client(registry, blob_cache, ClientOptions(server_address=...))`` holds the server address;
its calls go to the Client of the live engine a Worker registered there. The engine is looked
up on first use, so a Client may be built before its Worker.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from dexviz.compat.blob_cache import BlobCache
from dexviz.compat.closing import ClosesOnExit
from dexviz.compat.hub import HUB, Hub, LiveEngine, NoWorkerError
from dexviz.sdk.client_options import ClientOptions
from dexviz.sdk.flow_options import StartFlowOptions, StopFlowOptions
from dexviz.sdk.registry import Registry


def given(**options: Any) -> dict[str, Any]:
    """The keyword options a caller actually set (not None, not ``""``, not False).

    Dex's optional keywords are forwarded only when set, so an engine Client that lacks an
    optional keyword still serves every call that does not use it.
    """
    return {k: v for k, v in options.items() if v is not None and v != "" and v is not False}


def unsupported(kind: str, name: str) -> NotImplementedError:
    """The error for a Dex client method the in-process engine does not offer."""
    return NotImplementedError(
        f"{kind}.{name} is part of Dex's client, but dexviz's in-process engine does not support it"
    )


class ClientCore:
    """What Client and AsyncClient share: options, the lease, Flow checks, closing state."""

    def __init__(
        self,
        registry: Registry,
        blob_cache: BlobCache,
        options: ClientOptions | None,
        hub: Hub | None,
    ) -> None:
        if not isinstance(registry, Registry):
            raise TypeError(f"a Client takes a Registry, got {type(registry).__name__}")
        self.registry = registry
        self.blob_cache = blob_cache
        self.options = options if options is not None else ClientOptions()
        self._lease = (hub or HUB).lease(self.options.server_address)
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        state = ", closed" if self._closed else ""
        return (
            f"{type(self).__name__}({self.registry!r}, "
            f"server_address={self.options.server_address!r}{state})"
        )

    @property
    def engine(self) -> LiveEngine:
        """The live engine this Client talks to (its server address's).

        Raises:
            NoWorkerError: no Worker has been built for the server address yet.
            RuntimeError: the Client is closed.
        """
        if self._closed:
            raise RuntimeError(f"this {type(self).__name__} is closed")
        return self._lease.engine()

    def check_flow(self, flow: Any) -> str:
        """The Flow type of ``flow``; FlowDefinitionError unless this Client's Registry has it."""
        return self.registry.definition(flow).flow_type

    def check_rpc(self, rpc_method: Any) -> None:
        """Raise FlowDefinitionError unless ``rpc_method`` is bound to a registered Flow."""
        flow = getattr(rpc_method, "__self__", None)
        if flow is None:
            raise TypeError(
                "invoke_rpc takes the bound RPC method of the registered Flow instance, e.g. "
                f"client.invoke_rpc(flow.approve, flow_id); got {rpc_method!r}"
            )
        self.check_flow(flow)

    def mark_closed(self) -> bool:
        """Mark the Client closed; False if it already was."""
        with self._lock:
            if self._closed:
                return False
            self._closed = True
            return True


class Client(ClosesOnExit, ClientCore):
    """Dex's synchronous Client over the live engine of ``options.server_address``.

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
        self._delegate: Any = None

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        engine = self.engine
        with self._lock:
            if self._delegate is None:
                self._delegate = engine.client()
            delegate = self._delegate
        method = getattr(delegate, name, None)
        if method is None:
            raise unsupported("Client", name)
        return method(*args, **kwargs)

    def start_flow(
        self,
        flow: Any,
        flow_id: str,
        input: Any = None,
        options: StartFlowOptions | None = None,
    ) -> str:
        """Start a run of the registered ``flow`` under ``flow_id``; return its run id."""
        # Like Dex's client, send the type: the Worker's Registry resolves it by name.
        flow_type = self.check_flow(flow)
        return str(self._call("start_flow", flow_type, flow_id, input, options))

    def invoke_rpc(
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
        return self._call(
            "invoke_rpc", rpc_method, flow_id, input, **given(run_id=run_id, options=options)
        )

    def get_attribute(self, flow_id: str, attribute: Any, *instance: Any, run_id: str = "") -> Any:
        """Read an Attribute (a map takes the instance); None when unset."""
        return self._call("get_attribute", flow_id, attribute, *instance, **given(run_id=run_id))

    def set_attribute(self, flow_id: str, attribute: Any, *args: Any, run_id: str = "") -> None:
        """Write an Attribute of an active Flow (a map takes the instance before the value)."""
        self._call("set_attribute", flow_id, attribute, *args, **given(run_id=run_id))

    def publish(self, flow_id: str, channel: Any, *values: Any, run_id: str = "") -> None:
        """Publish values to a Channel of an active Flow (a ChannelMap takes the instance)."""
        self._call("publish", flow_id, channel, *values, **given(run_id=run_id))

    def get_channel_messages(
        self, flow_id: str, channel: Any, *instance: Any, run_id: str = ""
    ) -> Any:
        """The pending messages of a Channel (or ChannelMap instance), FIFO."""
        return self._call(
            "get_channel_messages", flow_id, channel, *instance, **given(run_id=run_id)
        )

    def delete_channel_message(self, flow_id: str, channel: Any, *args: Any) -> None:
        """Delete one pending message by id (a ChannelMap takes the instance first)."""
        self._call("delete_channel_message", flow_id, channel, *args)

    def write_stream(self, flow_id: str, stream: Any, source: str, value: Any) -> None:
        """Append a value to a Flow's Stream from outside."""
        self._call("write_stream", flow_id, stream, source, value)

    def read_stream(
        self, flow_id: str, stream: Any, resume_token: str = "", timeout: timedelta | None = None
    ) -> Any:
        """Wait for the next Stream message after ``resume_token``."""
        return self._call(
            "read_stream", flow_id, stream, **given(resume_token=resume_token, timeout=timeout)
        )

    def list_stream_messages(
        self, flow_id: str, stream: Any, page_size: int, before_page_token: str = ""
    ) -> Any:
        """A page of a Stream's messages, newest first."""
        return self._call(
            "list_stream_messages",
            flow_id,
            stream,
            page_size,
            **given(before_page_token=before_page_token),
        )

    def wait_for_flow(self, flow_id: str, timeout: timedelta | None = None) -> Any:
        """Wait for the Flow to close and return its FlowResult (LongPollTimeoutError if not)."""
        return self._call("wait_for_flow", flow_id, timeout)

    def stop_flow(self, flow_id: str, options: StopFlowOptions | None = None) -> None:
        """Stop the Flow (CANCEL by default)."""
        self._call("stop_flow", flow_id, options)

    def describe_flow(self, flow_id: str) -> Any:
        """The FlowInfo of the Flow's current or latest run."""
        return self._call("describe_flow", flow_id)

    def search_flows(
        self,
        query: str,
        page_size: int,
        next_page_token: str = "",
        *,
        include_continued_as_new: bool = False,
    ) -> Any:
        """Search Flows by indexed Attributes; return a SearchFlowsPage."""
        return self._call(
            "search_flows",
            query,
            page_size,
            **given(
                next_page_token=next_page_token, include_continued_as_new=include_continued_as_new
            ),
        )

    def time_travel(self, flow_id: str, options: Any) -> Any:
        """Start a new run from a point in the Flow's history; return its run id."""
        return self._call("time_travel", flow_id, options)

    def skip_timer(self, flow_id: str, step_execution_id: Any, timer_id: Any) -> None:
        """Make a waiting timer fire now."""
        self._call("skip_timer", flow_id, step_execution_id, timer_id)

    def wait_for_step_completion(
        self, flow_id: str, step_execution_id: Any, options: Any = None
    ) -> None:
        """Wait until one Step execution finishes (a timedelta or WaitForStepCompletionOptions)."""
        self._call("wait_for_step_completion", flow_id, step_execution_id, options)

    def wait_for_attribute_match(self, flow_id: str, attribute: Any, *args: Any) -> Any:
        """Wait until an Attribute matches (``[instance,] match, options``); return its value."""
        return self._call("wait_for_attribute_match", flow_id, attribute, *args)

    def wait_for_attribute_equal(self, flow_id: str, attribute: Any, *args: Any) -> None:
        """The 0.2 form: wait until an Attribute equals a value (``[instance,] expected, t``)."""
        self._call("wait_for_attribute_equal", flow_id, attribute, *args)

    def update_flow_config(self, flow_id: str, config: Any) -> None:
        """Merge the set fields of ``config`` into the Flow's FlowConfig."""
        self._call("update_flow_config", flow_id, config)

    def trigger_continue_as_new(self, flow_id: str) -> None:
        """Start a new run of the Flow with the same id."""
        self._call("trigger_continue_as_new", flow_id)

    def health_check(self) -> bool:
        """Whether the Client is open and its server address has a live engine."""
        if self._closed:
            return False
        try:
            return bool(self._call("health_check"))
        except NoWorkerError:
            return False

    def close(self) -> None:
        """Close the Client (idempotent); the last holder's close closes the engine."""
        if not self.mark_closed():
            return
        with self._lock:
            delegate, self._delegate = self._delegate, None
        try:
            if delegate is not None:
                delegate.close()
        finally:
            self._lease.release()
