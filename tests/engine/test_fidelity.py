"""Dex fidelity: where a Flow debugged here must behave as on a Dex server (issue 16).

Each test is named after the behaviour it proves and runs in both modes where the behaviour
applies. Where Dex's documentation and its Python SDK disagree, the SDK wins and the test's
docstring says so.
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any

import pytest

from dexviz import (
    Attribute,
    Channel,
    Context,
    Engine,
    EventKind,
    FaultPlan,
    FlowConfig,
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
    StepDurability,
    StepList,
    StepMovement,
    StepOptions,
    SubFlow,
    SubFlowOptions,
    SubFlowReusePolicy,
    Timer,
    TimeTravelOptions,
    TimeTravelType,
    Wait,
    current_time_millis,
    dead_end,
    go_to,
    go_to_many,
    go_to_multi,
    graceful_complete,
    retry_after,
    rpc,
    simulate,
)
from dexviz.analysis.executions import build_executions
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
    wait_until,
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
    where = f"Flow 'Failing', Step {step.__name__}-1 {method} failed after 1 attempt(s)"
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


# -- 7: cancellation reaches a running handler only through heartbeats --------------------------

MARKS = Attribute("marks", int)


class Long(Step[int]):
    """Works ``n`` seconds; records what it saw, and writes ``marks`` only if it finishes."""

    def __init__(self, heartbeat: int | None, durability: StepDurability) -> None:
        self.heartbeat, self.durability = heartbeat, durability
        self.log: list[tuple[str, Any]] = []

    def get_step_options(self) -> Any:
        return StepOptions(
            heartbeat_timeout=None if self.heartbeat is None else timedelta(seconds=self.heartbeat),
            execute_durability=self.durability,
            execute_retry=retries(3),
        )

    async def execute(self, context: Context, n: int) -> StepDecision:
        started = current_time_millis()
        try:
            await asyncio.sleep(n)
        except asyncio.CancelledError:
            self.log.append(("cancelled", context.is_cancellation_requested()))
            self.log.append(("after_s", (current_time_millis() - started) / 1000))
            raise
        self.log.append(("finished", context.is_cancellation_requested()))
        MARKS.set(context, n)
        return graceful_complete(n)


class Fork(Step[int]):
    """Starts Long(n) and, when ``n`` is negative, a Killer too."""

    def execute(self, context: Context, n: int) -> StepDecision:
        if n < 0:
            return go_to_many(StepMovement.of(Long, -n), StepMovement.of(Killer, 1))
        return go_to(Long, n)


class Killer(Step[int]):
    """After ``n`` seconds, cancels every Long and dead-ends."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=n)))

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end().with_canceling_steps(Long)


def _long_flow(heartbeat: int | None, durability: StepDurability = StepDurability.SYNC) -> Any:
    long = Long(heartbeat, durability)
    return long, LFlow("Beating", Fork(), [long, Killer()], [MARKS])


def _attempts(history: Any) -> list[Any]:
    return [e for e in history if e.kind == EventKind.ATTEMPT_STARTED and e.step_type == "Long"]


def test_a_handler_that_runs_long_with_a_heartbeat_is_invoked_once(mode: str) -> None:
    """R107 as corrected: the worker heartbeats for the handler, so a 3 s handler with a 1 s
    heartbeat timeout (10 s and 2 s in the rule's example) is not retried at the timeout."""
    long, flow = _long_flow(heartbeat=1)
    with engine_in([flow], mode) as engine:
        engine.client().start_flow(flow, "f", 3)
        result = engine.client().wait_for_flow("f", timedelta(seconds=20))
        history = engine.history("f")
    assert result.single_output(int) == 3
    assert len(_attempts(history)) == 1
    assert [e for e in history if e.kind == EventKind.ATTEMPT_FAILED] == []
    assert long.log == [("finished", False)]


@pytest.mark.parametrize("durability", [StepDurability.SYNC, StepDurability.ASYNC])
def test_a_cancel_reaches_a_running_handler_on_its_next_heartbeat(
    mode: str, durability: StepDurability
) -> None:
    """A sibling's with_canceling_steps at 1 s: the handler's task is cancelled at the worker's
    next heartbeat (every half window), is_cancellation_requested() is true, and there is no
    retry, failure route or write. ASYNC (local) execution behaves the same."""
    long, flow = _long_flow(heartbeat=1, durability=durability)
    with engine_in([flow], mode) as engine:
        engine.client().start_flow(flow, "f", -4)
        reach_kind(engine, "f", EventKind.EXECUTION_CANCELED)
        if mode == "simulation":
            engine.run_until_idle()
        assert wait_until(lambda: len(long.log) == 2)
        history = engine.history("f")
        marks = engine.client().get_attribute("f", MARKS)
    assert long.log[0] == ("cancelled", True)
    assert 1.0 <= long.log[1][1] < 2.5  # canceled at 1 s; beats every 0.5 s
    assert len(_attempts(history)) == 1
    assert [e for e in history if e.kind == EventKind.ATTEMPT_FAILED] == []
    assert marks is None


def test_without_a_heartbeat_timeout_a_canceled_handler_is_never_interrupted(mode: str) -> None:
    """Nothing carries the cancel to it: it runs its 3 s to the end, never sees a request,
    and its result and write are discarded."""
    long, flow = _long_flow(heartbeat=None)
    with engine_in([flow], mode) as engine:
        engine.client().start_flow(flow, "f", -3)
        reach_kind(engine, "f", EventKind.EXECUTION_CANCELED)
        if mode == "simulation":
            engine.run_until_idle()
        assert wait_until(lambda: bool(long.log), timeout=10)
        time.sleep(0.2 if mode == "live" else 0)
        history = engine.history("f")
        marks = engine.client().get_attribute("f", MARKS)
    assert long.log == [("finished", False)]
    assert marks is None
    assert [e for e in history if e.kind == EventKind.COMPLETION_REQUESTED] == []


def test_a_hung_worker_fails_the_attempt_at_the_heartbeat_timeout_and_it_is_retried() -> None:
    """Only stopped heartbeats time out: a hung worker (a fault) on attempt 1."""
    long, flow = _long_flow(heartbeat=2)
    run = simulate(flow, 3, faults=[FaultPlan.hang(Long)])
    failed = [e for e in run.history if e.kind == EventKind.ATTEMPT_FAILED]
    assert [(e.attempt, e.payload["reason"]) for e in failed] == [(1, "timeout")]
    assert "sent no heartbeat" in failed[0].payload["error_message"]
    assert run.result.single_output(int) == 3
    assert len(_attempts(run.history)) == 2


# -- 9: continue-as-new is a real new run -------------------------------------------------------

COUNT = Attribute("count", int)
INBOX = Channel("inbox", str)
SPARE = Channel("spare", str)


class Tally(Step[int]):
    """Waits for an inbox message (or an hour), adds it to ``count``; completes after ``n``."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.any_of(INBOX.for_one(), Timer.by_duration(timedelta(hours=1)))

    def execute(self, context: Context, n: int) -> StepDecision:
        COUNT.set(context, COUNT.get(context) + len(INBOX.results(context)))
        if n <= 1:
            return graceful_complete(COUNT.get(context))
        return go_to(Tally, n - 1)


def _tally_flow() -> Any:
    return LFlow("Tally", Tally(), (), [COUNT, INBOX, SPARE])


def test_trigger_continue_as_new_starts_a_new_run_that_carries_everything(mode: str) -> None:
    """R13 as corrected: a new run id that describe_flow sees; Attributes, pending messages and
    the waiting Step carried over; the history marks the new run continued."""
    flow = _tally_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        first = client.start_flow(flow, "c", 2)
        waiting(engine, "c", "Tally-1")
        client.publish("c", INBOX, "a")
        waiting(engine, "c", "Tally-2")
        client.publish("c", SPARE, "kept")
        client.trigger_continue_as_new("c")
        reach_kind(engine, "c", EventKind.FLOW_STARTED_OR_CONTINUED, None)
        assert wait_until(lambda: client.describe_flow("c").run_id != first)
        second = client.describe_flow("c").run_id
        assert client.get_attribute("c", COUNT) == 1
        assert [m.value for m in client.get_channel_messages("c", SPARE)] == ["kept"]
        client.publish("c", INBOX, "b")
        result = client.wait_for_flow("c", SOON)
        history = engine.history("c")
    assert result.single_output(int) == 2
    assert history.run_ids == (first, second)
    closed = [e for e in history if e.kind == EventKind.FLOW_CLOSED]
    assert [(e.run_id, e.payload["status"]) for e in closed] == [
        (first, "CONTINUED_AS_NEW"),
        (second, "COMPLETED"),
    ]
    started = [e for e in history if e.kind == EventKind.FLOW_STARTED_OR_CONTINUED]
    assert started[1].payload["continued"] is True
    assert started[1].payload["previous_run_id"] == first
    carried = [e.execution_id for e in history if e.run_id == second
               and e.kind == EventKind.STEP_EXECUTION_CREATED]
    assert carried[0] == "Tally-2"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_continue_as_new_threshold_is_transparent(seed: int) -> None:
    """R13's test: a threshold of 5 events and no threshold give the same outputs and
    Attributes; the thresholded Flow ran as several runs."""

    def run(threshold: int | None) -> Any:
        config = FlowConfig(continue_as_new_threshold=threshold) if threshold else None
        options = StartFlowOptions(config_override=config)
        engine = Engine([_tally_flow()], seed=seed)
        client = engine.client()
        client.start_flow(engine.registry.flows[0], "c", 4, options)
        client.publish("c", INBOX, *"wxyz")
        result = client.wait_for_flow("c")
        return result.outputs, client.get_attribute("c", COUNT), engine.history("c").run_ids

    plain, thresholded = run(None), run(5)
    assert plain[:2] == thresholded[:2] == ((4,), 4)
    assert len(plain[2]) == 1 and len(thresholded[2]) > 2


class AwaitChild(Step[int]):
    """Starts a child that waits for a message, and completes with the child's output."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(SubFlow.run(CHILD, n))

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(SubFlow.get_condition_results(context).single_output(int))


class ChildStep(Step[int]):
    """Waits for one inbox message, completes with ``n + 1``."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n + 1)


CHILD = LFlow("ChildFlow", ChildStep(), (), [INBOX])


def test_subflows_keep_running_and_reach_the_parent_across_continue_as_new(mode: str) -> None:
    parent = LFlow("ParentFlow", AwaitChild())
    with engine_in([parent, CHILD], mode) as engine:
        client = engine.client()
        first = client.start_flow(parent, "p", 41)
        waiting(engine, "p", "AwaitChild-1")
        child_id = "SubFlow:p-AwaitChild-1-0"
        waiting(engine, child_id, "ChildStep-1")
        client.trigger_continue_as_new("p")
        assert wait_until(lambda: client.describe_flow("p").run_id != first)
        client.publish(child_id, INBOX, "go")
        result = client.wait_for_flow("p", SOON)
        child_runs = engine.history(child_id).run_ids
    assert result.single_output(int) == 42
    assert len(child_runs) == 1  # the child was not restarted


class AwaitRestartedChild(AwaitChild):
    """Like AwaitChild, with SubFlowReusePolicy.ALWAYS_RESTART."""

    def wait_for(self, context: Context, n: int) -> Wait:
        options = SubFlowOptions(reuse_policy=SubFlowReusePolicy.ALWAYS_RESTART)
        return Wait.until(SubFlow.run(CHILD, n, options))


def test_always_restart_replaces_a_running_child_when_the_parent_is_reset(mode: str) -> None:
    """R134: after time travel to BEGINNING the parent's SubFlow restarts its running child, and
    the parent sees that new child run complete, not the old one's RUNNING status."""
    parent = LFlow("RestartParent", AwaitRestartedChild())
    with engine_in([parent, CHILD], mode) as engine:
        client = engine.client()
        client.start_flow(parent, "p", 1)
        child_id = "SubFlow:p-AwaitRestartedChild-1-0"
        waiting(engine, child_id, "ChildStep-1")
        old_child = client.describe_flow(child_id).run_id
        client.time_travel("p", TimeTravelOptions(TimeTravelType.BEGINNING))
        if mode == "simulation":
            engine.run_until_idle()
        assert wait_until(lambda: client.describe_flow(child_id).run_id != old_child)
        new_child = client.describe_flow(child_id).run_id
        assert wait_until(lambda: bool(engine.flow_state(child_id).active_executions))
        client.publish(child_id, INBOX, "go")
        result = client.wait_for_flow("p", SOON)
        found = client.search_flows("FlowType = 'ChildFlow'", 10).flows
        statuses = {r.run_id: r.status for r in found}
    assert result.single_output(int) == 2
    assert statuses == {old_child: FlowStatus.TERMINATED, new_child: FlowStatus.COMPLETED}


def test_a_completed_child_is_not_restarted_when_the_parent_is_reset(mode: str) -> None:
    """R134's default policy: a child that completed keeps its result across the reset."""
    parent = LFlow("KeepParent", AwaitChild())
    with engine_in([parent, CHILD], mode) as engine:
        client = engine.client()
        client.start_flow(parent, "p", 5)
        child_id = "SubFlow:p-AwaitChild-1-0"
        waiting(engine, child_id, "ChildStep-1")
        client.publish(child_id, INBOX, "go")
        assert client.wait_for_flow("p", SOON).single_output(int) == 6
        client.time_travel("p", TimeTravelOptions(TimeTravelType.BEGINNING))
        result = client.wait_for_flow("p", SOON)
        child_runs = engine.history(child_id).run_ids
    assert result.single_output(int) == 6
    assert len(child_runs) == 1


def test_views_show_runs_joined_by_continue_as_new_as_one_flow(mode: str) -> None:
    """Executions, the lineage graph and the timeline read the continued runs as one run."""
    flow = _tally_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "c", 2)
        waiting(engine, "c", "Tally-1")
        client.publish("c", INBOX, "a")
        waiting(engine, "c", "Tally-2")
        client.trigger_continue_as_new("c")
        reach_kind(engine, "c", EventKind.FLOW_CLOSED)
        client.publish("c", INBOX, "b")
        client.wait_for_flow("c", SOON)
        history = engine.history("c")
    records = build_executions(history)
    assert len(history.run_ids) == 2 and records.run_id == history.run_ids[-1]
    assert [(r.execution_id, r.status.name) for r in records.values()] == [
        ("Tally-1", "COMPLETED"),
        ("Tally-2", "COMPLETED"),
    ]
    assert records.close is not None and records.close.status == "COMPLETED"
    assert records.start_ns == history[0].time_ns


class Ledger(LFlow):
    """A Flow that parks, with an async and a sync RPC adding to ``count``."""

    def __init__(self) -> None:
        super().__init__("Ledger", Parks(), (), [COUNT])

    @rpc
    async def add(self, context: Context, n: int) -> RPCResult[int]:
        await asyncio.sleep(1)
        COUNT.set(context, COUNT.get(context) + n)
        return RPCResult(COUNT.get(context))

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
