"""Client: Dex's client API over the engine — thread-safe, and the same in both modes.

In simulation the waiting calls run the engine until what they wait for happens, the timeout
passes in virtual time, or nothing more can happen without outside input. In live mode they
block the calling thread until a commit makes them true or the wall-clock timeout passes.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from dexviz.engine import operations
from dexviz.engine.core.errors import service_error
from dexviz.engine.core.search import search
from dexviz.engine.core.state import Phase
from dexviz.engine.rpc import invoke_rpc, start_step_settled
from dexviz.history.collector import collector_paused
from dexviz.sdk.attribute import AttributeMap
from dexviz.sdk.attribute_match import AttributeMatch, is_scalar
from dexviz.sdk.errors import (
    FlowNotActiveError,
    LongPollTimeoutError,
    RequestTimeoutError,
    WaitHandlerTimeoutError,
)
from dexviz.sdk.flow_options import (
    FlowConfig,
    StartFlowOptions,
    StopFlowOptions,
    TimeTravelOptions,
)
from dexviz.sdk.results import ChannelMessage, FlowInfo, FlowResult, FlowStatus, SearchFlowsPage
from dexviz.sdk.stream import Stream, StreamMessage, StreamMessagesPage
from dexviz.sdk.timer import StepExecutionId, TimerId

if TYPE_CHECKING:
    from dexviz.engine.runtime import Runtime


def timeout_seconds(timeout: Any) -> float | None:
    """Seconds from a timedelta, a number, or a Wait*Options (0 means no limit); None = none."""
    if timeout is None:
        return None
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    wait = getattr(timeout, "maximum_wait_time", None)
    if isinstance(wait, timedelta):
        return wait.total_seconds() or None
    return float(timeout)


RPC_ADMISSION_LIMIT = timedelta(seconds=30)
"""Longest a live RPC waits for the start Step's first attempt before it runs anyway."""


class Client:
    """Starts, drives and inspects Flows of one engine, with Dex's method names."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
        self._closed = False

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        mode = "live" if self._rt.live else "simulation"
        return f"<Client {mode}{' closed' if self._closed else ''}>"

    def close(self) -> None:
        """Close the client (idempotent)."""
        self._closed = True

    def _call(self, operation: Callable[[], Any]) -> Any:
        if self._closed:
            raise RuntimeError("this Client is closed")
        if self._rt.store_failed is not None:
            raise self._rt.store_failed
        if self._rt.closed:
            raise RuntimeError("the engine is closed; create a new Engine")
        with self._rt.lock:
            return operation()

    def _wait(self, ready: Callable[[], bool], timeout: Any) -> bool:
        """Wait until ``ready()`` holds after a commit; False when the timeout passed first."""
        seconds = timeout_seconds(timeout)
        rt = self._rt
        if rt.sim is None:
            # Live mode only: concurrent.futures (and logging with it) stays out of the import.
            from concurrent.futures import CancelledError as FutureCancelled

            future = rt.watch(ready)
            try:
                future.result(seconds)
            except TimeoutError:  # concurrent.futures.TimeoutError is TimeoutError
                future.cancel()
                return False
            except FutureCancelled:
                raise RuntimeError("the engine was closed while this call waited") from None
            return True
        until = None if seconds is None else rt.now() + int(seconds * 1e9)
        with rt.lock, collector_paused():
            while not ready():
                if rt.run_unit(until) is None:
                    if until is not None:
                        rt.sim.advance_to(until)
                    return ready()
            return True

    # -- lifecycle ------------------------------------------------------------------------
    def start_flow(
        self, flow: Any, flow_id: str, input: Any = None, options: StartFlowOptions | None = None
    ) -> str:
        """Start a run of a registered Flow and return its run id (R153)."""
        return str(self._call(lambda: self._rt.start_flow(flow, flow_id, input, options)))

    def wait_for_flow(self, flow_id: str, timeout: timedelta | None = None) -> FlowResult:
        """Wait until the Flow closes and return its result; LongPollTimeoutError otherwise."""
        self._call(lambda: operations.existing_run(self._rt, flow_id, "wait_for_flow"))
        if self._wait(lambda: self._rt.result(flow_id).status is not FlowStatus.RUNNING, timeout):
            return self._call(lambda: self._rt.result(flow_id))  # type: ignore[no-any-return]
        idle = " and waits for outside input (the simulation is idle)" if timeout is None else ""
        raise service_error(
            LongPollTimeoutError,
            f"the Flow is still running{idle}",
            flow_id=flow_id,
            operation="wait_for_flow",
        )

    def stop_flow(self, flow_id: str, options: StopFlowOptions | None = None) -> None:
        """Stop the Flow: CANCEL (default), FAIL with a reason, or TERMINATE (R154)."""
        self._call(lambda: operations.stop_flow(self._rt, flow_id, options))

    def describe_flow(self, flow_id: str) -> FlowInfo:
        """Ids, type, status and start time of the current run (R161)."""

        def describe() -> FlowInfo:
            run = operations.existing_run(self._rt, flow_id, "describe_flow")
            started = datetime.fromtimestamp(run.started_ns / 1e9, tz=UTC)
            return FlowInfo(run.flow_id, run.run_id, run.flow_type, run.status, started)

        return self._call(describe)  # type: ignore[no-any-return]

    # -- state ----------------------------------------------------------------------------
    def publish(self, flow_id: str, channel: Any, *values: Any, run_id: str = "") -> None:
        """Publish values (a ChannelMap takes the instance first) to an active Flow (R52)."""
        del run_id
        self._call(lambda: operations.publish(self._rt, flow_id, channel, *values))

    def invoke_rpc(
        self,
        rpc_method: Any,
        flow_id: str,
        input: Any = None,
        *,
        run_id: str = "",
        options: Any = None,
    ) -> Any:
        """Run an RPC of the registered Flow and return its output (R156)."""
        del run_id
        if self._closed or self._rt.closed:
            raise RuntimeError("this Client or its engine is closed")
        # Dex runs an RPC after the start Step's first method (docs/dex-fidelity.md); a start
        # Step stuck in that method holds the RPC back at most RPC_ADMISSION_LIMIT.
        limit = None if self._rt.sim is not None else RPC_ADMISSION_LIMIT
        self._wait(lambda: start_step_settled(self._rt, flow_id), limit)
        return invoke_rpc(self._rt, rpc_method, flow_id, input, options)

    def get_attribute(self, flow_id: str, attribute: Any, *instance: Any, run_id: str = "") -> Any:
        """Read an Attribute (also of a closed Flow); None when unset (R158)."""
        del run_id
        return self._call(lambda: operations.get_attribute(self._rt, flow_id, attribute, *instance))

    def set_attribute(self, flow_id: str, attribute: Any, *args: Any, run_id: str = "") -> None:
        """Write an Attribute of an active Flow (a map takes the instance first)."""
        del run_id
        self._call(lambda: operations.set_attribute(self._rt, flow_id, attribute, *args))

    def get_channel_messages(
        self, flow_id: str, channel: Any, *instance: Any, run_id: str = ""
    ) -> tuple[ChannelMessage[Any], ...]:
        """The pending messages of a Channel (or map instance), FIFO."""
        del run_id
        messages: tuple[ChannelMessage[Any], ...] = self._call(
            lambda: operations.get_channel_messages(self._rt, flow_id, channel, *instance)
        )
        return messages

    def delete_channel_message(self, flow_id: str, channel: Any, *args: Any) -> None:
        """Delete a pending message by id; ChannelMessageNotFoundError if it is gone."""
        self._call(lambda: operations.delete_channel_message(self._rt, flow_id, channel, *args))

    def skip_timer(
        self, flow_id: str, step_execution_id: StepExecutionId | str, timer_id: TimerId
    ) -> None:
        """Fire a waiting timer now (remembered if the timer does not exist yet) (R127, R128)."""
        self._call(lambda: operations.skip_timer(self._rt, flow_id, step_execution_id, timer_id))

    def update_flow_config(self, flow_id: str, config: FlowConfig) -> None:
        """Merge the given fields into an active Flow's config (R163)."""
        self._call(lambda: operations.update_flow_config(self._rt, flow_id, config))

    def trigger_continue_as_new(self, flow_id: str) -> None:
        """Continue an active Flow as a new run, once no Step method runs (R13, R163)."""

        def trigger() -> None:
            run = operations.active_run(self._rt, flow_id, "trigger_continue_as_new")
            self._rt.continue_as_new.request(run)

        self._call(trigger)

    def search_flows(
        self, query: str, page_size: int = 0, next_page_token: str = ""
    ) -> SearchFlowsPage:
        """Runs matching ``Key = 'value' AND FlowType = 'X'`` (closed runs included) (R161)."""
        return self._call(lambda: search(self._rt.all_runs(), query, page_size, next_page_token))  # type: ignore[no-any-return]

    def time_travel(self, flow_id: str, options: TimeTravelOptions) -> str:
        """Start a new run of the Flow from a point in its history; return its run id (R164)."""
        return str(self._call(lambda: self._rt.time_travel.travel(flow_id, options)))

    # -- streams ------------------------------------------------------------------------
    def write_stream(self, flow_id: str, stream: Stream[Any], source: str, value: Any) -> None:
        """Append to a Flow id's Stream from outside; the Flow need not exist (R181)."""
        operation = f"write_stream {stream.name!r}"
        copy = self._rt.codecs.roundtrip(stream.value_type, value, operation=operation)
        self._call(lambda: self._rt.write_stream(flow_id, stream, source, copy))

    def read_stream(
        self, flow_id: str, stream: Stream[Any], resume_token: str = "", timeout: Any = None
    ) -> StreamMessage[Any]:
        """The next message after ``resume_token`` (the oldest kept one for an empty token)."""
        found: list[StreamMessage[Any]] = []

        def ready() -> bool:
            message = self._rt.streams.log(flow_id, stream).after(resume_token)
            if message is not None:
                found.append(message)
            return message is not None

        if self._wait(ready, timeout):
            return found[-1]
        raise service_error(
            LongPollTimeoutError,
            f"no message after token {resume_token!r} in Stream {stream.name!r}",
            flow_id=flow_id,
            operation="read_stream",
        )

    def list_stream_messages(
        self, flow_id: str, stream: Stream[Any], page_size: int, before_page_token: str = ""
    ) -> StreamMessagesPage:
        """Up to ``page_size`` messages, newest first; pass ``next_page_token`` for older ones."""
        if page_size <= 0:
            raise ValueError(f"list_stream_messages: page_size must be > 0, got {page_size}")
        page: StreamMessagesPage = self._call(
            lambda: self._rt.streams.log(flow_id, stream).page(page_size, before_page_token)
        )
        return page

    def health_check(self) -> bool:
        """True while the client and its engine are open."""
        return not self._closed and not self._rt.closed

    # -- waits ----------------------------------------------------------------------------
    def wait_for_step_completion(
        self, flow_id: str, step_execution_id: StepExecutionId | str, timeout: Any = None
    ) -> None:
        """Wait until that execution exists and is no longer active (R159)."""
        self._call(lambda: operations.existing_run(self._rt, flow_id, "wait_for_step_completion"))
        target = str(step_execution_id)

        def finished() -> bool:
            ex = self._rt.runs[flow_id].executions.get(target)
            return ex is not None and ex.phase in (Phase.DONE, Phase.CANCELED)

        def settled() -> bool:
            # A closed Flow will never create or finish the execution (R159).
            return finished() or self._rt.runs[flow_id].status is not FlowStatus.RUNNING

        if self._wait(settled, timeout) and not finished():
            raise service_error(
                FlowNotActiveError,
                f"{target} did not finish before the Flow closed",
                flow_id=flow_id,
                operation="wait_for_step_completion",
            )
        if not finished():
            raise service_error(
                WaitHandlerTimeoutError,
                f"{target} has not finished",
                flow_id=flow_id,
                operation="wait_for_step_completion",
            )

    def wait_for_attribute_match(self, flow_id: str, attribute: Any, *args: Any) -> Any:
        """Wait until the Attribute matches (``[instance,] match, timeout``); return its value.

        Raises LongPollTimeoutError when a plain timeout passes first, RequestTimeoutError when
        a ``WaitForAttributeOptions`` budget does.
        """
        instance, match, timeout = _match_args(attribute, args)
        self._call(lambda: operations.active_run(self._rt, flow_id, "wait_for_attribute_match"))
        key = attribute.physical_name(instance)
        seen: list[Any] = []
        encode = _encoder(self._rt.codecs, attribute, match)

        def matched() -> bool:
            value = self._rt.runs[flow_id].attributes.get(key)
            if match.matches(value, encode):
                seen.append(value)
                return True
            return False

        if not self._wait(matched, timeout):
            # A plain timeout is a long poll that ran out, as in wait_for_flow; a 1.23
            # WaitForAttributeOptions budget ends as that SDK's RequestTimeoutError.
            budget = hasattr(timeout, "request_timeout")
            raise service_error(
                RequestTimeoutError if budget else LongPollTimeoutError,
                f"Attribute {key!r} did not match {match.op} {match.operand!r}",
                flow_id=flow_id,
                operation="wait_for_attribute_match",
            )
        return seen[-1]

    def wait_for_attribute_equal(self, flow_id: str, attribute: Any, *args: Any) -> None:
        """Wait until the Attribute equals a scalar (``[instance,] expected, timeout``)."""
        *head, expected, timeout = args
        self.wait_for_attribute_match(
            flow_id, attribute, *head, AttributeMatch.equal_to(expected), timeout
        )


def _encoder(codecs: Any, attribute: Any, match: AttributeMatch) -> Callable[[object], object]:
    """The Attribute's codec for comparing encoded forms; checks the operand fits it first.

    Raises:
        ValueMappingError: If a non-scalar operand cannot be encoded as the Attribute's type.
    """
    operation = f"wait_for_attribute_match on Attribute {attribute.name!r}"

    def encode(value: object) -> object:
        return codecs.encode(attribute.value_type, value, operation=operation)

    if not is_scalar(match.operand):
        encode(match.operand)
    return encode


def _match_args(attribute: Any, args: tuple[Any, ...]) -> tuple[str | None, AttributeMatch, Any]:
    is_map = isinstance(attribute, AttributeMap)
    values = list(args)
    instance = values.pop(0) if is_map else None
    if not values or not isinstance(values[0], AttributeMatch):
        raise TypeError("wait_for_attribute_match takes ([instance,] AttributeMatch, timeout)")
    match = values.pop(0)
    return instance, match, values[0] if values else None
