"""Client: Dex's client API over a simulation engine; waits drive the virtual clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from dexviz.engine import operations
from dexviz.engine.errors import service_error
from dexviz.engine.rpc import invoke_rpc
from dexviz.engine.state import Phase
from dexviz.sdk.errors import LongPollTimeoutError, WaitHandlerTimeoutError
from dexviz.sdk.flow_options import StartFlowOptions, StopFlowOptions
from dexviz.sdk.results import ChannelMessage, FlowInfo, FlowResult, FlowStatus
from dexviz.sdk.timer import StepExecutionId, TimerId

if TYPE_CHECKING:
    from dexviz.engine.runtime import Runtime


def _deadline(rt: Runtime, timeout: Any) -> int | None:
    if timeout is None:
        return None
    if isinstance(timeout, timedelta):
        seconds = timeout.total_seconds()
    else:
        wait = getattr(timeout, "maximum_wait_time", None)
        seconds = wait.total_seconds() if isinstance(wait, timedelta) else float(timeout)
        if seconds == 0:
            return None
    return rt.now() + int(seconds * 1e9)


class Client:
    """Starts and drives Flows of one simulation engine, with Dex's method names.

    In simulation, the waiting calls (``wait_for_flow``, ``wait_for_step_completion``) run the
    engine until what they wait for happens, the timeout passes in virtual time, or nothing
    more can happen without outside input.
    """

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
        self._closed = False

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the client (idempotent)."""
        self._closed = True

    def _check(self) -> None:
        if self._closed:
            raise RuntimeError("this Client is closed")

    def start_flow(
        self, flow: Any, flow_id: str, input: Any = None, options: StartFlowOptions | None = None
    ) -> str:
        """Start a run of a registered Flow and return its run id (R153)."""
        self._check()
        return self._rt.start_flow(flow, flow_id, input, options)

    def wait_for_flow(self, flow_id: str, timeout: timedelta | None = None) -> FlowResult:
        """Run until the Flow closes and return its result, else LongPollTimeoutError (R155)."""
        self._check()
        operations.existing_run(self._rt, flow_id, "wait_for_flow")
        if self._drive(
            lambda: self._rt.runs[flow_id].status is not FlowStatus.RUNNING,
            _deadline(self._rt, timeout),
        ):
            return self._rt.result(flow_id)
        raise service_error(
            LongPollTimeoutError,
            "the Flow is still running"
            + (
                ""
                if timeout is not None
                else " and waits for outside input (the simulation is idle)"
            ),
            flow_id=flow_id,
            operation="wait_for_flow",
        )

    def _drive(self, done: Any, until_ns: int | None) -> bool:
        rt = self._rt
        while not done():
            if rt.run_unit(until_ns) is None:
                if until_ns is not None:
                    rt.scheduler.advance_to(until_ns)
                return bool(done())
        return True

    def publish(self, flow_id: str, channel: Any, *values: Any) -> None:
        """Publish values (a ChannelMap takes the instance first) to an active Flow (R52)."""
        self._check()
        operations.publish(self._rt, flow_id, channel, *values)

    def invoke_rpc(self, rpc_method: Any, flow_id: str, input: Any = None, **_: Any) -> Any:
        """Run an RPC of the registered Flow and return its output (R156)."""
        self._check()
        return invoke_rpc(self._rt, rpc_method, flow_id, input)

    def get_attribute(self, flow_id: str, attribute: Any, *instance: Any, run_id: str = "") -> Any:
        """Read an Attribute (also of a closed Flow); None when unset (R158)."""
        del run_id
        self._check()
        return operations.get_attribute(self._rt, flow_id, attribute, *instance)

    def set_attribute(self, flow_id: str, attribute: Any, *args: Any, run_id: str = "") -> None:
        """Write an Attribute of an active Flow (a map takes the instance first)."""
        del run_id
        self._check()
        operations.set_attribute(self._rt, flow_id, attribute, *args)

    def get_channel_messages(
        self, flow_id: str, channel: Any, *instance: Any, run_id: str = ""
    ) -> tuple[ChannelMessage[Any], ...]:
        """The pending messages of a Channel, FIFO."""
        del run_id
        self._check()
        return operations.get_channel_messages(self._rt, flow_id, channel, *instance)

    def stop_flow(self, flow_id: str, options: StopFlowOptions | None = None) -> None:
        """Stop the Flow (CANCEL by default, FAIL with a reason, or TERMINATE) (R154)."""
        self._check()
        operations.stop_flow(self._rt, flow_id, options)

    def skip_timer(
        self, flow_id: str, step_execution_id: StepExecutionId | str, timer_id: TimerId
    ) -> None:
        """Fire a waiting timer now (remembered if the timer does not exist yet) (R127, R128)."""
        self._check()
        operations.skip_timer(self._rt, flow_id, step_execution_id, timer_id)

    def describe_flow(self, flow_id: str) -> FlowInfo:
        """Ids, type, status and start time of the current run (R161)."""
        self._check()
        run = operations.existing_run(self._rt, flow_id, "describe_flow")
        started = datetime.fromtimestamp(run.started_ns / 1e9, tz=UTC)
        return FlowInfo(run.flow_id, run.run_id, run.flow_type, run.status, started)

    def wait_for_step_completion(
        self, flow_id: str, step_execution_id: StepExecutionId | str, timeout: Any = None
    ) -> None:
        """Run until that execution exists and is no longer active (R159)."""
        self._check()
        run = operations.existing_run(self._rt, flow_id, "wait_for_step_completion")
        target = str(step_execution_id)

        def finished() -> bool:
            current = self._rt.runs[flow_id]
            ex = current.executions.get(target)
            return ex is not None and ex.phase in (Phase.DONE, Phase.CANCELED)

        if self._drive(finished, _deadline(self._rt, timeout)):
            return
        del run
        raise service_error(
            WaitHandlerTimeoutError,
            f"{target} has not finished",
            flow_id=flow_id,
            operation="wait_for_step_completion",
        )

    def health_check(self) -> bool:
        """Always True for an in-process engine that is open."""
        return not self._closed
