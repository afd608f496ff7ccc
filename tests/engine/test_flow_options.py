"""Start options in both modes: Flow timeouts (FAIL, CANCEL, HANDLER, async handle_timeout), the
Flow retry policy, start delay, ID reuse and request IDs (engine-semantics R7, R11, R12, R130,
R136-R141)."""

from __future__ import annotations

import asyncio
import re
import time
from datetime import timedelta

import pytest

import dexviz
from dexviz import (
    AsyncContext,
    Attribute,
    Channel,
    Context,
    Engine,
    EventKind,
    Flow,
    FlowAlreadyStartedError,
    FlowDefinitionError,
    FlowErrorType,
    FlowStatus,
    FlowTimeoutHandlerOptions,
    FlowTimeoutPolicy,
    IdReusePolicy,
    RetryPolicy,
    StartFlowOptions,
    Step,
    StepDecision,
    StepExecutionId,
    StepList,
    StopFlowOptions,
    StopType,
    Timer,
    TimerId,
    Wait,
    dead_end,
    force_complete,
    force_fail,
    graceful_complete,
)
from tests.engine.flows_live import (
    MODES,
    NO_RETRY,
    SOON,
    LFlow,
    engine_in,
    of_kind,
    retries,
    waiting,
)

COUNT = Attribute("count", int)
STATUS = Attribute("status", str)
INBOX = Channel("inbox", str)
SCHEMA = [COUNT, STATUS, INBOX]
ONE_S = timedelta(seconds=1)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Park(Step[int]):
    """Waits for one inbox message; records whether its Execute ever ran."""

    def __init__(self) -> None:
        self.executed: list[str] = []
        self.timeout_handler_ids: list[str] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        self.executed.append(context.run_id)
        return graceful_complete(INBOX.results(context)[0])


class Timed(LFlow):
    """A parked Flow without a timeout handler."""

    def __init__(self, flow_type: str = "Timed") -> None:
        self.park = Park()
        super().__init__(flow_type, self.park, schema=SCHEMA)


class SyncHandler(Timed):
    """Its sync handle_timeout notes the timeout and fails the Flow."""

    def __init__(self) -> None:
        super().__init__("SyncHandler")

    def handle_timeout(self, context: Context) -> StepDecision:
        self.park.timeout_handler_ids.append(context.step_execution_id)
        STATUS.set(context, "timed out")
        return force_fail("deadline")


class AsyncHandler(Timed):
    """Its coroutine handle_timeout (AsyncContext) completes the Flow with an output."""

    def __init__(self) -> None:
        super().__init__("AsyncHandler")

    async def handle_timeout(self, context: AsyncContext) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(0.01)
        self.park.timeout_handler_ids.append(context.step_execution_id)
        STATUS.set(context, "handled")
        return force_complete("late but done")


def timeout(
    policy: FlowTimeoutPolicy = FlowTimeoutPolicy.DEFAULT, **more: object
) -> StartFlowOptions:
    """Start options with a 1 s Flow timeout under ``policy``."""
    return StartFlowOptions(timeout=ONE_S, timeout_policy=policy, **more)  # type: ignore[arg-type]


# -- timeouts ----------------------------------------------------------------------------------


def test_r137_a_fail_timeout_fails_the_flow_with_flow_timeout(mode: str) -> None:
    flow = Timed()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "t", 1, timeout(FlowTimeoutPolicy.FAIL))
        result = client.wait_for_flow("t", SOON)
        canceled = of_kind(engine.history("t"), EventKind.EXECUTION_CANCELED, "Park-1")
    assert (result.status, result.error_type) == (FlowStatus.FAILED, FlowErrorType.FLOW_TIMEOUT)
    assert re.fullmatch(r"Flow timed out after 1(\.\d+)? seconds", result.error_message or "")
    assert flow.park.executed == []
    assert [e.payload["by"] for e in canceled] == ["flow_close"]


def test_r7_the_fail_timeout_message_names_the_configured_timeout() -> None:
    flow = Timed()
    with engine_in([flow]) as engine:
        client = engine.client()
        client.start_flow(flow, "t", 1, timeout(FlowTimeoutPolicy.FAIL))
        result = client.wait_for_flow("t", SOON)
    assert result.error_message == "Flow timed out after 1 seconds"


def test_r137_a_cancel_timeout_cancels_the_flow_and_is_never_retried(mode: str) -> None:
    flow = Timed()
    options = timeout(FlowTimeoutPolicy.CANCEL, retry_policy=retries(3))
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "t", 1, options)
        result = client.wait_for_flow("t", SOON)
        runs = engine.history("t").run_ids
    assert (result.status, result.error_type, result.completions) == (FlowStatus.CANCELED, None, ())
    assert flow.park.executed == []
    assert len(runs) == 1


def test_r138_a_sync_timeout_handler_runs_once_with_execute_semantics(mode: str) -> None:
    flow = SyncHandler()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "t", 1, timeout())  # DEFAULT + handle_timeout = HANDLER (R136)
        result = client.wait_for_flow("t", SOON)
        started = of_kind(engine.history("t"), EventKind.FLOW_STARTED_OR_CONTINUED)[0]
        assert client.get_attribute("t", STATUS) == "timed out"
    assert started.payload["timeout_policy"] == "HANDLER"
    assert (result.status, result.error_type, result.error_message) == (
        FlowStatus.FAILED,
        FlowErrorType.STEP_DECISION_FAILED,
        "deadline",
    )
    assert flow.park.timeout_handler_ids == ["sys:timeout_handler-1"]
    assert flow.park.executed == []


def test_r138_an_async_handle_timeout_with_async_context(mode: str) -> None:
    flow = AsyncHandler()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "t", 1, timeout(FlowTimeoutPolicy.HANDLER))
        result = client.wait_for_flow("t", SOON)
        assert client.get_attribute("t", STATUS) == "handled"
    assert result.status is FlowStatus.COMPLETED
    assert [(c.step_type, c.step_execution_id, c.value) for c in result.completions] == [
        ("sys:timeout_handler", "sys:timeout_handler-1", "late but done")
    ]
    assert flow.park.timeout_handler_ids == ["sys:timeout_handler-1"]


def test_r136_timeout_policies_are_checked_at_start(mode: str) -> None:
    flow = Timed()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        # Dex's own wording, which users match on (issue 16, behaviour 12).
        with pytest.raises(ValueError, match="^Flow Timed has no handle_timeout override$"):
            client.start_flow(flow, "t", 1, timeout(FlowTimeoutPolicy.HANDLER))
        with pytest.raises(ValueError, match="^Flow timeout policy requires a positive timeout"):
            StartFlowOptions(timeout_policy=FlowTimeoutPolicy.FAIL)
        client.start_flow(flow, "u", 1, timeout())  # DEFAULT without a handler = FAIL
        started = of_kind(engine.history("u"), EventKind.FLOW_STARTED_OR_CONTINUED)[0]
        assert started.payload["timeout_policy"] == "FAIL"


def test_r139_a_completed_flow_is_never_timed_out_afterwards(mode: str) -> None:
    flow = Timed()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "t", 1, timeout(FlowTimeoutPolicy.FAIL))
        waiting(engine, "t", "Park-1")
        client.publish("t", INBOX, "in time")
        assert client.wait_for_flow("t", SOON).status is FlowStatus.COMPLETED
        if mode == "live":
            time.sleep(1.2)
        else:
            engine.run_until_idle()
        result = client.wait_for_flow("t", ONE_S)
        closes = of_kind(engine.history("t"), EventKind.FLOW_CLOSED)
    assert result.single_output(str) == "in time"
    assert len(closes) == 1


def test_r130_skip_timer_on_the_timeout_handler_fires_the_flow_timeout_now(mode: str) -> None:
    flow = Timed()
    options = StartFlowOptions(timeout=timedelta(hours=1), timeout_policy=FlowTimeoutPolicy.FAIL)
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "t", 1, options)
        began = time.monotonic()
        handler = StepExecutionId("sys:timeout_handler", 1)
        client.skip_timer("t", handler, TimerId.by_condition_index(0))
        result = client.wait_for_flow("t", SOON)
    assert (result.status, result.error_type) == (FlowStatus.FAILED, FlowErrorType.FLOW_TIMEOUT)
    assert time.monotonic() - began < 1.0
    assert engine.time_ns - engine.history("t")[0].time_ns < 3_600 * 10**9


# -- the Flow retry policy ----------------------------------------------------------------------


class SetThenFail(Step[int]):
    """Reads ``count``, sets it to 5, then fails for good."""

    def __init__(self) -> None:
        self.counts_read: list[int] = []
        self.run_ids: list[str] = []

    def get_step_options(self) -> object:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        self.counts_read.append(COUNT.get(context))
        self.run_ids.append(context.run_id)
        COUNT.set(context, 5)
        raise RuntimeError("always")


def test_r11_r12_a_failed_flow_is_retried_from_its_initial_state(mode: str) -> None:
    step = SetThenFail()
    flow = LFlow("Retried", step, schema=SCHEMA)
    options = StartFlowOptions(retry_policy=retries(3)).with_attribute(COUNT, 1)
    with engine_in([flow], mode) as engine:
        client = engine.client()
        first = client.start_flow(flow, "r", 1, options)
        result = client.wait_for_flow("r", SOON)
        runs = engine.history("r").run_ids
        assert client.describe_flow("r").run_id == runs[-1]
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.WORKER_API_FAILED
    assert step.counts_read == [1, 1, 1]  # R12: every run starts from the initial Attributes
    assert len(runs) == 3 and runs[0] == first and len(set(runs)) == 3
    assert step.run_ids == list(runs)


def test_r11_a_client_fail_is_not_retried(mode: str) -> None:
    flow = Timed()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "r", 1, StartFlowOptions(retry_policy=retries(3)))
        client.stop_flow("r", StopFlowOptions(StopType.FAIL, "operator"))
        result = client.wait_for_flow("r", SOON)
        runs = engine.history("r").run_ids
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.CLIENT_API_FAILED
    assert len(runs) == 1


# -- start delay --------------------------------------------------------------------------------


def test_r141_start_delay_accepts_the_flow_now_and_runs_its_start_step_later(mode: str) -> None:
    flow = Timed()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "d", 1, StartFlowOptions(start_delay=ONE_S))
        assert client.describe_flow("d").status is FlowStatus.RUNNING
        assert of_kind(engine.history("d"), EventKind.STEP_EXECUTION_CREATED) == []
        waiting(engine, "d", "Park-1")
        client.publish("d", INBOX, "after the delay")
        result = client.wait_for_flow("d", SOON)
        history = engine.history("d")
    assert result.single_output(str) == "after the delay"
    started_ns = history[0].time_ns
    first_attempt = of_kind(history, EventKind.ATTEMPT_STARTED)[0].time_ns
    assert first_attempt - started_ns >= 0.95e9


# -- ID reuse and request ids -------------------------------------------------------------------


def closed_as(engine: Engine, flow: Timed, flow_id: str, how: str) -> str:
    """Start ``flow_id`` and leave its run running, completed or failed; return its run id."""
    client = engine.client()
    run_id = client.start_flow(flow, flow_id, 1)
    if how == "completed":
        waiting(engine, flow_id, "Park-1")
        client.publish(flow_id, INBOX, "done")
        client.wait_for_flow(flow_id, SOON)
    elif how == "failed":
        client.stop_flow(flow_id, StopFlowOptions(StopType.FAIL))
    return run_id


@pytest.mark.parametrize(
    ("policy", "previous", "allowed"),
    [
        (IdReusePolicy.DEFAULT, "running", False),
        (IdReusePolicy.DEFAULT, "completed", True),
        (IdReusePolicy.DEFAULT, "failed", True),
        (IdReusePolicy.ALLOW_IF_NOT_RUNNING, "running", False),
        (IdReusePolicy.ALLOW_IF_NOT_RUNNING, "completed", True),
        (IdReusePolicy.ALLOW_IF_PREVIOUS_FAILED, "completed", False),
        (IdReusePolicy.ALLOW_IF_PREVIOUS_FAILED, "failed", True),
        (IdReusePolicy.ALLOW_TERMINATE_IF_RUNNING, "running", True),
        (IdReusePolicy.DISALLOW, "completed", False),
    ],
)
def test_r140_id_reuse_policy(
    mode: str, policy: IdReusePolicy, previous: str, allowed: bool
) -> None:
    """R140 as corrected on 2026-12-01: DEFAULT is the server's allow-if-not-running."""
    flow = Timed()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        first = closed_as(engine, flow, "i", previous)
        before = client.describe_flow("i").status
        options = StartFlowOptions(id_reuse_policy=policy)
        if not allowed:
            with pytest.raises(FlowAlreadyStartedError):
                client.start_flow(flow, "i", 2, options)
            assert client.describe_flow("i").run_id == first
            assert client.describe_flow("i").status is before
            return
        second = client.start_flow(flow, "i", 2, options)
        statuses = {e.run_id: e.status for e in client.search_flows("FlowType = 'Timed'", 10).flows}
    assert second != first
    expected_old = FlowStatus.TERMINATED if previous == "running" else before
    assert statuses == {first: expected_old, second: FlowStatus.RUNNING}


def test_r140_a_matching_request_id_returns_the_existing_run(mode: str) -> None:
    """R140 as corrected: DEFAULT lets a closed id start again, so DISALLOW shows the check."""
    flow = Timed()
    never = IdReusePolicy.DISALLOW
    with engine_in([flow], mode) as engine:
        client = engine.client()
        first = client.start_flow(flow, "x", 1, StartFlowOptions(request_id="r1"))
        client.stop_flow("x")
        retry = StartFlowOptions(
            request_id="r1", ignore_already_started=True, id_reuse_policy=never
        )
        assert client.start_flow(flow, "x", 1, retry) == first
        other = StartFlowOptions(
            request_id="r2", ignore_already_started=True, id_reuse_policy=never
        )
        with pytest.raises(FlowAlreadyStartedError):
            client.start_flow(flow, "x", 1, other)
        with pytest.raises(FlowAlreadyStartedError):
            again = StartFlowOptions(request_id="r1", id_reuse_policy=never)
            client.start_flow(flow, "x", 1, again)
        assert engine.history("x").run_ids == (first,)


def test_start_options_initial_attributes_must_be_declared(mode: str) -> None:
    flow = Timed()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        stranger = StartFlowOptions().with_attribute(Attribute("stranger", int), 1)
        with pytest.raises(FlowDefinitionError, match="stranger"):
            client.start_flow(flow, "a", 1, stranger)
        client.start_flow(flow, "b", 1, StartFlowOptions().with_attribute(COUNT, 3))
        assert client.get_attribute("b", COUNT) == 3


class _Fallback(Step[None]):
    """Where an exhausted timeout handler sends the Flow."""

    seen: list[object] = []

    def execute(self, context: Context, input: None) -> StepDecision:
        error = context.recovery_error
        _Fallback.seen.append((input, error.detail if error else None))
        return graceful_complete("recovered")


class _Stuck(Step[None]):
    def wait_for(self, context: Context, input: None) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(hours=1)))

    def execute(self, context: Context, input: None) -> StepDecision:
        return dead_end()


class _BrokenHandlerFlow(Flow[None]):
    attempts: list[int] = []

    def get_steps(self) -> StepList[None]:
        return StepList.start_step(_Stuck()).other_steps(_Fallback())

    def handle_timeout(self, context: Context) -> StepDecision:
        _BrokenHandlerFlow.attempts.append(context.attempt)
        raise RuntimeError("handler broke")


def test_r138_an_exhausted_timeout_handler_takes_its_failure_route() -> None:
    _Fallback.seen.clear()
    _BrokenHandlerFlow.attempts.clear()
    handler = FlowTimeoutHandlerOptions(
        retry=RetryPolicy(maximum_attempts=2)
    ).on_failure_proceed_to(_Fallback)
    options = StartFlowOptions(
        timeout=timedelta(seconds=5),
        timeout_policy=FlowTimeoutPolicy.HANDLER,
        timeout_handler_options=handler,
    )
    run = dexviz.simulate(_BrokenHandlerFlow(), None, options=options)
    assert _BrokenHandlerFlow.attempts == [1, 2]
    assert _Fallback.seen == [(None, "handler broke")]
    assert run.result.status is FlowStatus.COMPLETED
    assert run.result.completions[0].value == "recovered"
