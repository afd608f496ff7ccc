"""Dex fidelity: where a Flow debugged here must behave as on a Dex server (issue 16).

Each test is named after the behaviour it proves and runs in both modes where the behaviour
applies. Where Dex's documentation and its Python SDK disagree, the SDK wins and the test's
docstring says so. Heartbeats and cancellation are in ``test_heartbeats.py``, continue-as-new
and SubFlows across resets in ``test_continue_as_new.py``.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from dexviz import (
    Attribute,
    Channel,
    Context,
    EventKind,
    FlowDefinitionError,
    FlowErrorType,
    FlowNotActiveError,
    FlowStatus,
    FlowTimeoutPolicy,
    IdReusePolicy,
    RetryPolicy,
    RPCResult,
    StartFlowOptions,
    Step,
    StepDecision,
    StepList,
    StepOptions,
    Stream,
    Timer,
    TimeTravelOptions,
    TimeTravelType,
    Wait,
    go_to_many,
    go_to_multi,
    graceful_complete,
    retry_after,
    rpc,
    simulate,
)
from dexviz.sdk.errors import (
    ErrorSubStatus,
    FlowAlreadyStartedError,
    FlowNotActiveOrNotFoundError,
    StatusCode,
    WorkerInvocationError,
)
from tests.engine.flows_live import (
    MODES,
    NO_RETRY,
    SOON,
    LFlow,
    engine_in,
    reach_kind,
    retries,
    waiting,
)

NOTE = Attribute("note", str)
OTHER = Attribute("other", str)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class FailsExecute(Step[int]):
    """Its Execute raises the user's own message once (no retries)."""

    def get_step_options(self) -> Any:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        raise RuntimeError(f"expected execute failure {n}")


class FailsWaitFor(FailsExecute):
    """Its WaitFor raises the user's own message once (no retries)."""

    def wait_for(self, context: Context, n: int) -> Wait:
        raise RuntimeError(f"expected wait failure {n}")


class Done(Step[int]):
    """Completes at once with its input."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n)


class Parks(Step[int]):
    """Waits for an hour, then completes."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(hours=1)))

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n)


class Refusal(Exception):
    """The user's own RPC failure."""


class Desk(LFlow):
    """A waiting Flow with an RPC that fails with the user's exception."""

    def __init__(self) -> None:
        super().__init__("Desk", Parks(), (), [NOTE])

    @rpc
    def refuse(self, context: Context, n: int) -> RPCResult[int]:
        NOTE.set(context, "never")
        raise Refusal(f"not today ({n})")


# -- 2: the Flow's error message is the user's message ------------------------------------------


@pytest.mark.parametrize(
    ("step", "message"),
    [(FailsWaitFor, "expected wait failure 2"), (FailsExecute, "expected execute failure 2")],
)
def test_flow_result_error_message_is_the_handlers_own_message(
    mode: str, step: type[Step[int]], message: str
) -> None:
    flow = LFlow("Failing", step())
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 2)
        result = client.wait_for_flow("f", SOON)
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.WORKER_API_FAILED
    assert result.error_message == message
    method = "wait_for" if step is FailsWaitFor else "execute"
    where = f"Flow 'Failing', Step {step.__name__}-1 {method} failed after 1 attempt"
    assert result.failure == f"{where}: builtins.RuntimeError: {message}"


# -- 4: registration is per instance ------------------------------------------------------------


def test_start_flow_with_another_instance_of_a_registered_flow_is_refused(mode: str) -> None:
    """The SDK's wording is ``Flow instance is not registered: <type>`` (flow.py, 1.23)."""
    flow = LFlow("Single", Done())
    twin = LFlow("Single", Done())
    with engine_in([flow], mode) as engine:
        client = engine.client()
        with pytest.raises(FlowDefinitionError, match="^Flow instance is not registered: Single"):
            client.start_flow(twin, "f", 1)
        client.start_flow(flow, "f", 1)
        assert client.wait_for_flow("f", SOON).status is FlowStatus.COMPLETED


# -- 5, 6: RPC errors ---------------------------------------------------------------------------


def test_rpc_user_error_is_a_worker_invocation_error_failed_precondition(mode: str) -> None:
    flow = Desk()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "d", 1)
        waiting(engine, "d", "Parks-1")
        with pytest.raises(WorkerInvocationError) as caught:
            client.invoke_rpc(flow.refuse, "d", 3)
        assert client.get_attribute("d", NOTE) is None
    error = caught.value
    assert error.code is StatusCode.FAILED_PRECONDITION
    assert error.code.name == "FAILED_PRECONDITION"
    assert error.sub_status is ErrorSubStatus.WORKER_API_ERROR
    assert error.worker_error_type == f"{__name__}.Refusal"
    assert error.worker_error_detail == "not today (3)"


def test_invoke_rpc_on_a_flow_id_without_a_run_raises_flow_not_active(mode: str) -> None:
    """Dex's scalable-parallel pattern catches this to start the missing Flow, then retries."""
    flow = Desk()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        with pytest.raises(FlowNotActiveError) as caught:
            client.invoke_rpc(flow.refuse, "missing", 1)
        client.start_flow(flow, "missing", 1)
        waiting(engine, "missing", "Parks-1")
        with pytest.raises(WorkerInvocationError):
            client.invoke_rpc(flow.refuse, "missing", 1)
    assert isinstance(caught.value, FlowNotActiveOrNotFoundError)
    assert caught.value.sub_status is ErrorSubStatus.FLOW_NOT_EXISTS


# -- 11: StepList is iterable -------------------------------------------------------------------


def test_step_list_iterates_definitions_with_step_and_is_start_step() -> None:
    first, second, third = Done(), Parks(), FailsExecute()
    steps = StepList.start_step(first).other_steps(second, third)
    assert [(d.step, d.is_start_step) for d in steps] == [
        (first, True),
        (second, False),
        (third, False),
    ]
    assert [d.is_start_step for d in StepList.without_start_step(second)] == [False]
    assert list(StepList.empty()) == []


# -- 12: Dex's wording --------------------------------------------------------------------------


def test_validation_errors_use_dex_wording() -> None:
    """Dex raises ``go_to_many requires a movement`` when it maps the decision; dexviz raises
    the same words when the decision is built, so the attempt fails either way. The SDK (both
    1.23 and 0.13) says ``go_to_many`` for its older alias too; dexviz follows the SDK."""
    with pytest.raises(ValueError, match="^go_to_many requires a movement$"):
        go_to_many()
    with pytest.raises(ValueError, match="requires a movement"):
        go_to_multi()
    with pytest.raises(ValueError, match="^Flow timeout policy requires a positive timeout"):
        StartFlowOptions(timeout_policy=FlowTimeoutPolicy.CANCEL)


def test_handler_policy_without_handler_uses_dex_wording(mode: str) -> None:
    flow = LFlow("NoHandler", Parks())
    options = StartFlowOptions(
        timeout=timedelta(seconds=5), timeout_policy=FlowTimeoutPolicy.HANDLER
    )
    with engine_in([flow], mode) as engine:
        with pytest.raises(ValueError, match="^Flow NoHandler has no handle_timeout override$"):
            engine.client().start_flow(flow, "f", 1, options)


# -- 13: Flow ids and undeclared Attributes -----------------------------------------------------


def test_subflow_prefix_is_refused_in_client_chosen_flow_ids(mode: str) -> None:
    flow = LFlow("Child", Done())
    with engine_in([flow], mode) as engine:
        client = engine.client()
        with pytest.raises(ValueError, match="'SubFlow:' prefix"):
            client.start_flow(flow, "SubFlow:parent-Wait-1-0", 1)
        with pytest.raises(ValueError, match="reserved"):
            client.start_flow(flow, "SubFlow:x", 1)


def test_get_attribute_of_an_undeclared_attribute_raises_a_clear_error(mode: str) -> None:
    flow = LFlow("Declares", Parks(), (), [NOTE])
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 1)
        assert client.get_attribute("f", NOTE) is None
        with pytest.raises(ValueError, match="'Declares' does not declare Attribute 'other'"):
            client.get_attribute("f", OTHER)


# -- 14: IdReusePolicy.DEFAULT is allow-if-not-running ------------------------------------------


def test_id_reuse_default_allows_a_closed_id_and_rejects_an_active_one(mode: str) -> None:
    """R140 as corrected: the server maps an unspecified policy to ALLOW_IF_NOT_RUNNING."""
    flow = LFlow("Reused", Parks())
    assert StartFlowOptions().id_reuse_policy is IdReusePolicy.DEFAULT
    with engine_in([flow], mode) as engine:
        client = engine.client()
        first = client.start_flow(flow, "r", 1)
        with pytest.raises(FlowAlreadyStartedError):
            client.start_flow(flow, "r", 2)
        client.stop_flow("r")
        second = client.start_flow(flow, "r", 2)
        info = client.describe_flow("r")
    assert second != first
    assert (info.run_id, info.status) == (second, FlowStatus.RUNNING)


# -- 1: failure details -------------------------------------------------------------------------


class FailsOnceSlowly(Step[int]):
    """Attempt 1 raises (retried a minute later); attempt 2 completes."""

    def get_step_options(self) -> Any:
        return StepOptions(execute_retry=retries(2, 60))

    def execute(self, context: Context, n: int) -> StepDecision:
        if context.attempt == 1:
            raise ConnectionError(f"service unavailable (attempt {context.attempt})")
        return graceful_complete(n)


class AsyncFailsOnceSlowly(FailsOnceSlowly):
    """The same, as a coroutine handler."""

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(0)
        return FailsOnceSlowly.execute(self, context, n)


class RetriesAfter(Step[int]):
    """Attempt 1 asks for a retry in 60 s, with the failure it handled as the cause."""

    def get_step_options(self) -> Any:
        return StepOptions(execute_retry=retries(2))

    def execute(self, context: Context, n: int) -> StepDecision:
        if context.attempt == 1:
            try:
                raise TimeoutError("upstream busy")
            except TimeoutError as busy:
                raise retry_after(60, busy) from busy
        return graceful_complete(n)


def _first_failure(engine: Any, flow_id: str) -> Any:
    event = reach_kind(engine, flow_id, EventKind.ATTEMPT_FAILED)
    return event.payload


@pytest.mark.parametrize("step", [FailsOnceSlowly, AsyncFailsOnceSlowly], ids=["sync", "async"])
def test_attempt_failed_records_error_type_message_and_stack_trace(
    mode: str, step: type[Step[int]]
) -> None:
    flow = LFlow("Flaky", step())
    with engine_in([flow], mode) as engine:
        engine.client().start_flow(flow, "f", 1)
        payload = _first_failure(engine, "f")
        state = engine.flow_state("f")
        engine.client().stop_flow("f")
    assert payload["error_type"] == "builtins.ConnectionError"
    assert payload["error_message"] == "service unavailable (attempt 1)"
    trace = payload["stack_trace"]
    assert trace.startswith("Traceback (most recent call last):\n")
    assert trace.endswith("ConnectionError: service unavailable (attempt 1)\n")
    # It starts at the handler (no engine frames) and names its file relative to the repo.
    assert 'File "tests/engine/test_fidelity.py"' in trace and "in execute" in trace
    assert "dexviz/engine" not in trace
    (active,) = state.active_executions
    info = active.last_failure_info
    assert info is not None and (info.method, info.attempt) == ("execute", 1)
    assert (info.error_type, info.detail) == ("builtins.ConnectionError", payload["error_message"])
    assert info.stack_trace == trace


def test_stack_traces_are_the_same_in_both_modes() -> None:
    traces = []
    for mode in MODES:
        flow = LFlow("Flaky", FailsOnceSlowly())
        with engine_in([flow], mode) as engine:
            engine.client().start_flow(flow, "f", 1)
            traces.append(_first_failure(engine, "f")["stack_trace"])
            engine.client().stop_flow("f")
    assert traces[0] == traces[1]


def test_retry_after_reports_its_cause_with_the_stack_trace(mode: str) -> None:
    """As Dex's SDK: type and message are the cause's; the trace is the retry_after error's own,
    whose chain shows the cause it was raised from."""
    flow = LFlow("Later", RetriesAfter())
    with engine_in([flow], mode) as engine:
        engine.client().start_flow(flow, "f", 1)
        payload = _first_failure(engine, "f")
        info = engine.flow_state("f").active_executions[0].last_failure_info
        engine.client().stop_flow("f")
    assert (payload["error_type"], payload["error_message"]) == (
        "builtins.TimeoutError",
        "upstream busy",
    )
    assert payload["retry_delay_ns"] == 60 * 10**9
    trace = payload["stack_trace"]
    assert "TimeoutError: upstream busy" in trace and "RetryAfterError: upstream busy" in trace
    assert info is not None and info.error_type == "builtins.TimeoutError"


def test_a_timed_out_attempt_has_no_stack_trace() -> None:
    run = simulate(LFlow("Slow", Sleeps()), 1)
    failed = [e.payload for e in run.history if e.kind == EventKind.ATTEMPT_FAILED]
    assert failed and failed[0]["reason"] == "timeout" and failed[0]["stack_trace"] == ""


class Sleeps(Step[int]):
    """Sleeps past its one-second method timeout, once."""

    def get_step_options(self) -> Any:
        return StepOptions(
            execute_retry=RetryPolicy(maximum_attempts=1),
            execute_method_timeout=timedelta(seconds=1),
        )

    async def execute(self, context: Context, n: int) -> StepDecision:
        await asyncio.sleep(5)
        return graceful_complete(n)


# -- 8: time travel keeps the Flow's timeout ----------------------------------------------------

GO = Channel("go", str)


class AwaitsGo(Step[int]):
    """Waits for one ``go`` message, notes it, and completes."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        NOTE.set(context, GO.results(context)[0])
        return graceful_complete(n)


def test_time_travel_keeps_the_flows_timeout(mode: str) -> None:
    """R164 with skip_writes_reapply: the reset run cannot progress, so its timeout (counted
    again from the reset) fails it: FAILED, no completions, the skipped Attribute unset."""
    flow = LFlow("Timed", AwaitsGo(), (), [NOTE, GO])
    options = StartFlowOptions(timeout=timedelta(seconds=2))
    with engine_in([flow], mode) as engine:
        client = engine.client()
        first = client.start_flow(flow, "t", 1, options)
        waiting(engine, "t", "AwaitsGo-1")
        client.publish("t", GO, "now")
        assert client.wait_for_flow("t", SOON).status is FlowStatus.COMPLETED
        reset = TimeTravelOptions(TimeTravelType.BEGINNING, skip_writes_reapply=True)
        second = client.time_travel("t", reset)
        result = client.wait_for_flow("t", timedelta(seconds=10))
        note = client.get_attribute("t", NOTE)
        started = [
            e for e in engine.history("t") if e.kind == EventKind.FLOW_STARTED_OR_CONTINUED
        ]
    assert second != first
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.FLOW_TIMEOUT
    assert result.completions == () and note is None
    assert [(e.run_id, e.payload["timeout_s"]) for e in started] == [(first, 2.0), (second, 2.0)]


# -- 10: a handler awaiting the engine's own AsyncClient ----------------------------------------


class Nap(Step[int]):
    """The child: waits ``n`` seconds on a timer, then (a coroutine) completes with ``n * 10``."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=n)))

    async def execute(self, context: Context, n: int) -> StepDecision:
        await asyncio.sleep(0)
        return graceful_complete(n * 10)


class Spawn(Step[int]):
    """The parent: starts ``n`` children through the AsyncClient and awaits their results."""

    def __init__(self) -> None:
        self.client: Any = None
        self.child: Any = None

    async def execute(self, context: Context, n: int) -> StepDecision:
        ids = [f"{context.flow_id}-child-{i}" for i in range(1, n + 1)]
        for i, child_id in enumerate(ids, start=1):
            await self.client.start_flow(self.child, child_id, i)
        results = [await self.client.wait_for_flow(i, timedelta(minutes=5)) for i in ids]
        return graceful_complete(sum(r.single_output(int) for r in results))


def test_an_async_handler_awaiting_the_engines_async_client_works_in_simulation(
    mode: str,
) -> None:
    """Dex's parent-child pattern: no "Cannot enter into task", and the children finish on
    time (the parent closes at the slowest child's virtual 3 s, not at a 2-hour timeout)."""
    spawn = Spawn()
    parent = LFlow("Parent", spawn, (), [NOTE])
    child = LFlow("Child", Nap())
    with engine_in([parent, child], mode) as engine:
        spawn.client, spawn.child = engine.async_client(), child
        client = engine.client()
        client.start_flow(parent, "p", 3)
        result = client.wait_for_flow("p", timedelta(seconds=30))
        history = engine.history("p")
    assert result.status is FlowStatus.COMPLETED, result
    assert result.single_output(int) == 60
    assert [e.payload.get("reason") for e in history if e.kind == EventKind.ATTEMPT_FAILED] == []
    elapsed = (history[-1].time_ns - history[0].time_ns) / 1e9
    assert 3 <= elapsed < 10


TOTAL = Attribute("total", int)


class Ledger(LFlow):
    """A Flow that parks, with an async and a sync RPC adding to ``count``."""

    def __init__(self) -> None:
        super().__init__("Ledger", Parks(), (), [TOTAL])

    @rpc
    async def add(self, context: Context, n: int) -> RPCResult[int]:
        await asyncio.sleep(1)
        TOTAL.set(context, TOTAL.get(context) + n)
        return RPCResult(TOTAL.get(context))

    @rpc
    def double(self, context: Context, n: int) -> RPCResult[int]:
        return RPCResult(n * 2)


class CallsLedger(Step[int]):
    """Awaits the other Flow's RPCs through the engine's AsyncClient (scalable-parallel)."""

    def __init__(self) -> None:
        self.client: Any = None
        self.ledger: Any = None

    async def execute(self, context: Context, n: int) -> StepDecision:
        try:
            await self.client.invoke_rpc(self.ledger.add, "ledger", n)
        except FlowNotActiveError:
            await self.client.start_flow(self.ledger, "ledger", 0)
        total = await self.client.invoke_rpc(self.ledger.add, "ledger", n)
        doubled = await self.client.invoke_rpc(self.ledger.double, "ledger", total)
        return graceful_complete(doubled)


def test_an_async_handler_awaits_rpcs_of_other_flows_through_the_async_client(mode: str) -> None:
    """Dex's scalable-parallel pattern: catch FlowNotActiveError, start the Flow, call again;
    an async RPC handler is awaited in the calling handler's Task in simulation."""
    ledger, caller = Ledger(), CallsLedger()
    flow = LFlow("Caller", caller)
    with engine_in([flow, ledger], mode) as engine:
        caller.client, caller.ledger = engine.async_client(), ledger
        client = engine.client()
        client.start_flow(flow, "caller", 5)
        result = client.wait_for_flow("caller", timedelta(seconds=30))
        client.stop_flow("ledger")
    assert result.single_output(int) == 10


FEED = Stream("feed", str)


class Writes(Step[int]):
    """Waits ``n`` seconds, then writes to the feed Stream and completes."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=n)))

    async def execute(self, context: Context, n: int) -> StepDecision:
        await asyncio.sleep(0)
        FEED.write(context, f"after {n} s")
        return graceful_complete(n)


class Reads(Step[int]):
    """Awaits the writer Flow's first feed message through the AsyncClient."""

    def __init__(self) -> None:
        self.client: Any = None

    async def execute(self, context: Context, n: int) -> StepDecision:
        message = await self.client.read_stream("writer", FEED, "", timedelta(minutes=1))
        return graceful_complete(message.value)


def test_an_async_handler_awaits_another_flows_stream_through_the_async_client(
    mode: str,
) -> None:
    reads = Reads()
    reader, writer = LFlow("Reader", reads), LFlow("Writer", Writes(), (), [FEED])
    with engine_in([reader, writer], mode) as engine:
        reads.client = engine.async_client()
        client = engine.client()
        client.start_flow(reader, "reader", 0)
        client.start_flow(writer, "writer", 2)
        result = client.wait_for_flow("reader", timedelta(seconds=30))
    assert result.single_output(str) == "after 2 s"
