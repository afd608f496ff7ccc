"""The close-semantics seed page, statement by statement.

/work/shared/seeds/step-and-flow-close-semantics.md: every statement on the page has a test
below whose docstring quotes it (rules R143-R152, R92-R96, R58 restate them). The page's
Attribute Store clause has no counterpart in dexviz, which has no Attribute Store projection.
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
    FlowNotActiveError,
    FlowStatus,
    FlowTimeoutPolicy,
    LongPollTimeoutError,
    RPCResult,
    StartFlowOptions,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    StopFlowOptions,
    StopType,
    Timer,
    Wait,
    current_time_millis,
    dead_end,
    force_complete,
    force_fail,
    go_to,
    go_to_many,
    graceful_complete,
    rpc,
)
from tests.engine.flows_b import (
    EPOCH_NS,
    SECOND_NS,
    BFlow,
    active,
    attempt_started,
    created,
    event_is,
    history,
    of_kind,
    outputs,
    queued,
    rel_s,
    retries,
    run_until,
    settle_now,
    settled,
    started,
)

GATE = Channel("gate", str)
GO = Channel("go", str)
OUT = Channel("out", str)
NOTE = Attribute("note", str)
X = Attribute("x", int)
Y = Attribute("y", int)
SCHEMA = [GATE, GO, OUT, NOTE, X, Y]
EXTERNAL: list[tuple[str, int]] = []
"""Calls that canceled handlers make to "external systems", with the virtual second of each."""


def virtual_second() -> int:
    return current_time_millis() // 1000 - EPOCH_NS // SECOND_NS


class Gated(Step[str]):
    """Waits for one ``gate`` message, then follows its input: dead_end, a timer, or a close."""

    def wait_for(self, context: Context, order: str) -> Wait:
        return Wait.until(GATE.for_one())

    def execute(self, context: Context, order: str) -> StepDecision:
        if order == "sleep":
            return go_to(Sleeper, 1)
        if order == "force_fail":
            return force_fail("failed")
        if order == "force_complete":
            return force_complete("forced")
        if order == "cancel_workers":
            return go_to(Idle, "after").with_canceling_steps(Worker)
        if order == "publish_and_cancel_idle":
            GO.publish(context, "m")
            return dead_end().with_canceling_steps(Idle)
        if order == "restart_idle":
            return go_to(Idle, "new").with_canceling_steps(Idle)
        if order == "cancel_holders":
            return dead_end().with_canceling_steps(Holder)
        return dead_end()


class Idle(Step[str]):
    """Waits for ``go``; ends its branch if it ever gets a message."""

    def wait_for(self, context: Context, tag: str) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, tag: str) -> StepDecision:
        return dead_end()


class Holder(Step[str]):
    """Takes one ``go`` message, then works 5 s in an async Execute."""

    def wait_for(self, context: Context, tag: str) -> Wait:
        return Wait.until(GO.for_one())

    async def execute(self, context: Context, tag: str) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(5)
        return dead_end()


class Sleeper(Step[int]):
    """Waits ``n`` seconds, then ends its branch."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=n)))

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class Closer(Step[str]):
    """'graceful:<out>' / 'force:<out>' / 'note:<out>' (sets note, then graceful) / dead_end."""

    def execute(self, context: Context, order: str) -> StepDecision:
        kind, _, value = order.partition(":")
        if kind == "note":
            NOTE.set(context, value)
            return graceful_complete(value)
        if kind == "graceful":
            return graceful_complete(value)
        if kind == "force":
            return force_complete(value)
        return dead_end()


class Worker(Step[str]):
    """WaitFor sets x=1 and publishes 'w'; Execute stages y=1 and 'e', then works 5 s.

    Its input says what it does when it is told to stop: 'obey' lets the CancelledError end it,
    'ignore' carries on for 5 s, calls an external system and returns go_to(Closer);
    'raise' raises an error that would be retried and routed. Its 1 s heartbeat timeout is
    what carries the stop to the running handler (R107 as corrected: heartbeats only).
    """

    def get_step_options(self) -> StepOptions:
        options = StepOptions(execute_retry=retries(3), heartbeat_timeout=timedelta(seconds=1))
        return options.on_execute_failure_proceed_to(Closer)

    def wait_for(self, context: Context, mode: str) -> Wait:
        X.set(context, 1)
        OUT.publish(context, "w")
        return Wait.skip_immediately()

    async def execute(self, context: Context, mode: str) -> StepDecision:  # type: ignore[override]
        Y.set(context, 1)
        OUT.publish(context, "e")
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            EXTERNAL.append((f"signal:{context.is_cancellation_requested()}", virtual_second()))
            if mode == "obey":
                raise
            if mode == "raise":
                raise RuntimeError("failing after the signal") from None
            await asyncio.sleep(5)
            EXTERNAL.append(("external call", virtual_second()))
        return go_to(Closer, "graceful:late")


def movement(item: str) -> StepMovement:
    """'Type:input' as a movement to the registered Step of that type (Sleeper takes an int)."""
    step_type, _, value = item.partition(":")
    return StepMovement.of(step_type, int(value) if step_type == "Sleeper" else value)


class Fan(Step[list[str]]):
    """Starts one Step per 'Type:input' item."""

    def execute(self, context: Context, items: list[str]) -> StepDecision:
        return go_to_many(*(movement(item) for item in items))


class SeedFlow(BFlow):
    """All the Steps above, plus RPCs that start or cancel Steps."""

    def __init__(self) -> None:
        steps = [Gated(), Idle(), Sleeper(), Closer(), Worker(), Holder()]
        super().__init__("CloseSemantics", Fan(), steps)
        self._schema = tuple(SCHEMA)

    @rpc
    def start(self, context: Context, item: str) -> RPCResult[str]:
        return RPCResult("started", next_steps=(movement(item),))

    @rpc
    def restart_idle(self, context: Context, tag: str) -> RPCResult[str]:
        return RPCResult("ok", next_steps=(StepMovement.of(Idle, tag),)).with_canceling_steps(Idle)

    @rpc
    def publish_and_cancel_idle(self, context: Context, value: str) -> RPCResult[str]:
        GO.publish(context, value)
        return RPCResult("ok").with_canceling_steps(Idle)

    @rpc(lock_attributes=[NOTE.lock()])
    async def slow_note(self, context: Context, value: str) -> RPCResult[str]:
        await asyncio.sleep(5)
        NOTE.set(context, value)
        return RPCResult("noted")


FLOW = SeedFlow()


def run(items: list[str], **kwargs: Any) -> Any:
    """An engine with SeedFlow started on ``items`` and run until idle."""
    EXTERNAL.clear()
    return settled(FLOW, items, **kwargs)


def open_gate(engine: Any) -> None:
    engine.client().publish("flow-1", GATE, "go")
    engine.run_until_idle()


def gate_while_working(mode: str, order: str) -> Any:
    """Start a Worker and a Gated; open the gate once the Worker's Execute is under way."""
    EXTERNAL.clear()
    engine = started(FLOW, [f"Worker:{mode}", f"Gated:{order}"])
    settle_now(engine)  # everything ready at t=0 ran: the Worker's handler is now sleeping
    assert active(engine) == {"Worker-1": "execute", "Gated-1": "waiting"}
    open_gate(engine)
    return engine


# -- The page's introduction ---------------------------------------------------------------------


def test_a_canceled_step_returns_the_messages_it_consumed() -> None:
    """For the messages a canceled Step consumed, see Canceled Steps return consumed messages."""
    engine = started(FLOW, ["Holder:h", "Gated:cancel_holders"])
    engine.client().publish("flow-1", GO, "t")
    settle_now(engine)
    assert active(engine) == {"Holder-1": "execute", "Gated-1": "waiting"}
    assert queued(engine, "go") == ()
    open_gate(engine)
    assert of_kind(history(engine), EventKind.EXECUTION_CANCELED, "Holder-1")
    assert queued(engine, "go") == ("t",)


# -- Completion requests ------------------------------------------------------------------------


def test_graceful_complete_ends_its_branch_and_asks_to_complete() -> None:
    """GracefulComplete ends its own branch and asks Dex to complete the Flow."""
    engine = run(["Gated:dead_end", "Closer:graceful:a"])
    assert list(active(engine)) == ["Gated-1"]  # Closer-1's branch ended
    assert engine.flow_state("flow-1").graceful_requested
    assert of_kind(history(engine), EventKind.COMPLETION_REQUESTED, "Closer-1")
    assert engine.result("flow-1").status is FlowStatus.RUNNING


def test_completion_begins_as_soon_as_no_step_is_active() -> None:
    """As soon as no Step is active, Dex begins to complete the Flow."""
    engine = run(["Gated:dead_end", "Closer:graceful:a"])
    engine.client().publish("flow-1", GATE, "go")
    unit = run_until(engine, event_is(EventKind.STEP_EXECUTE_COMPLETED, "Gated-1"))
    # The commit that ends the last active Step also closes the Flow.
    assert [e.kind for e in unit][-1] == EventKind.FLOW_CLOSED
    assert engine.result("flow-1").status is FlowStatus.COMPLETED


def test_a_later_dead_end_does_not_withdraw_the_request() -> None:
    """The request stays in force: a later branch that ends with DeadEnd does not withdraw it."""
    engine = run(["Gated:dead_end", "Gated:dead_end", "Closer:graceful:a"])
    engine.client().publish("flow-1", GATE, "one")
    settle_now(engine)
    assert len(active(engine)) == 1
    assert engine.flow_state("flow-1").graceful_requested
    open_gate(engine)
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert outputs(engine) == [("Closer", "Closer-1", "a")]


def test_steps_and_rpcs_can_start_steps_that_delay_completion() -> None:
    """Until no Step is active, other Steps and RPCs can still start new Steps, and those Steps
    delay completion too."""
    engine = run(["Gated:sleep", "Closer:graceful:a"])
    assert engine.client().invoke_rpc(FLOW.start, "flow-1", "Sleeper:2") == "started"
    open_gate(engine)
    events = history(engine)
    assert {"Sleeper-1", "Sleeper-2"} <= set(created(engine))
    closed = of_kind(events, EventKind.FLOW_CLOSED)[0]
    assert rel_s(closed.time_ns) == 2.0
    last = of_kind(events, EventKind.STEP_EXECUTE_COMPLETED)[-1]
    assert last.step_type == "Sleeper" and last.seq < closed.seq
    assert engine.result("flow-1").status is FlowStatus.COMPLETED


def test_once_completion_begins_no_new_step_starts() -> None:
    """Once Dex begins to complete the Flow, it starts no new Step."""
    engine = run(["Closer:graceful:a"])
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    with pytest.raises(FlowNotActiveError):
        engine.client().invoke_rpc(FLOW.start, "flow-1", "Idle:late")
    engine.run_until_idle()
    assert created(engine) == ["Fan-1", "Closer-1"]


def test_a_closing_flow_waits_for_admitted_locking_rpcs() -> None:
    """A naturally closing Flow stays RUNNING until its pending Attribute Store writes finish or
    are discarded, until transactional or locking RPCs admitted earlier finish, and until Dex
    records the close."""
    engine = started(FLOW, ["Sleeper:1", "Closer:graceful:a"])
    assert engine.client().invoke_rpc(FLOW.slow_note, "flow-1", "written") == "noted"
    engine.run_until_idle()
    closed = of_kind(history(engine), EventKind.FLOW_CLOSED)[0]
    assert rel_s(closed.time_ns) == 5.0
    assert engine.client().get_attribute("flow-1", NOTE) == "written"


def test_the_status_changes_only_when_the_close_is_recorded() -> None:
    """A naturally closing Flow stays RUNNING [...] until Dex records the close."""
    engine = started(FLOW, ["Sleeper:1", "Closer:graceful:a"])
    mismatches: list[str] = []

    def check(event: Any) -> None:
        closed = bool(of_kind(history(engine), EventKind.FLOW_CLOSED))
        running = engine.result("flow-1").status is FlowStatus.RUNNING
        if closed == running:
            mismatches.append(event.describe())

    engine._rt.recorder.listeners.append(check)
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert mismatches == []


def test_wait_for_flow_keeps_waiting_meanwhile() -> None:
    """WaitForFlow keeps waiting meanwhile."""
    engine = run(["Gated:dead_end", "Closer:graceful:a"])
    client = engine.client()
    with pytest.raises(LongPollTimeoutError):
        client.wait_for_flow("flow-1", timeout=timedelta(hours=1))
    client.publish("flow-1", GATE, "go")
    result = client.wait_for_flow("flow-1", timeout=timedelta(hours=1))
    assert result.status is FlowStatus.COMPLETED
    assert [c.value for c in result.completions] == ["a"]


def test_without_a_request_a_flow_with_no_active_step_keeps_running() -> None:
    """Without a pending GracefulComplete, a Flow with no active Step keeps running."""
    engine = run(["Closer:dead_end", "Sleeper:3"])
    assert active(engine) == {}
    with pytest.raises(LongPollTimeoutError):
        engine.client().wait_for_flow("flow-1", timeout=timedelta(days=1))
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    assert not of_kind(history(engine), EventKind.FLOW_CLOSED)


def test_an_rpc_can_still_start_new_steps_in_an_idle_flow() -> None:
    """An RPC can still start new Steps in it."""
    engine = run(["Closer:dead_end"])
    assert active(engine) == {}
    engine.client().invoke_rpc(FLOW.start, "flow-1", "Closer:graceful:revived")
    engine.run_until_idle()
    assert outputs(engine) == [("Closer", "Closer-2", "revived")]
    assert engine.result("flow-1").status is FlowStatus.COMPLETED


@pytest.mark.parametrize("closer", ["timeout", "stop", "decision"])
def test_something_else_closes_an_idle_flow(closer: str) -> None:
    """Dex never closes a Flow because no Step is active. Something else closes it: its Flow
    timeout, a stop, or a completing decision."""
    options = StartFlowOptions(timeout=timedelta(hours=1), timeout_policy=FlowTimeoutPolicy.FAIL)
    engine = started(FLOW, ["Closer:dead_end"], options=options)
    settle_now(engine)
    assert active(engine) == {}
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    if closer == "stop":
        engine.client().stop_flow("flow-1")
    elif closer == "decision":
        engine.client().invoke_rpc(FLOW.start, "flow-1", "Closer:force:done")
    engine.run_until_idle()
    expected = {
        "timeout": FlowStatus.FAILED,
        "stop": FlowStatus.CANCELED,
        "decision": FlowStatus.COMPLETED,
    }
    assert engine.result("flow-1").status is expected[closer]
    closed_at = rel_s(of_kind(history(engine), EventKind.FLOW_CLOSED)[0].time_ns)
    assert closed_at == (3600.0 if closer == "timeout" else 0.0)


# -- Flow outputs ---------------------------------------------------------------------------------


def test_graceful_and_force_complete_can_carry_an_output() -> None:
    """GracefulComplete and ForceComplete can carry an output."""
    engine = run(["Gated:force_complete", "Closer:graceful:g"])
    open_gate(engine)
    assert [value for _, _, value in outputs(engine)] == ["g", "forced"]


def test_the_result_lists_each_output_with_step_type_and_execution_id() -> None:
    """The Flow result lists each output with its Step type and Step execution ID."""
    engine = run(["Closer:graceful:one", "Closer:graceful:two"])
    completions = engine.result("flow-1").completions
    assert sorted((c.step_type, c.step_execution_id, c.value) for c in completions) == [
        ("Closer", "Closer-1", "one"),
        ("Closer", "Closer-2", "two"),
    ]


@pytest.mark.parametrize("ending", ["fail", "cancel", "terminate", "timeout"])
def test_only_a_completed_flow_keeps_its_outputs(ending: str) -> None:
    """Only a COMPLETED Flow keeps these outputs. A Flow that fails, is canceled, is terminated,
    or times out has no outputs, even after an earlier GracefulComplete carried one."""
    options = StartFlowOptions(timeout=timedelta(hours=1), timeout_policy=FlowTimeoutPolicy.FAIL)
    engine = started(FLOW, ["Gated:force_fail", "Closer:graceful:kept?"], options=options)
    settle_now(engine)
    assert engine.flow_state("flow-1").outputs_values == ("kept?",)
    if ending == "fail":
        engine.client().publish("flow-1", GATE, "go")
    elif ending in ("cancel", "terminate"):
        stop = StopType.CANCEL if ending == "cancel" else StopType.TERMINATE
        engine.client().stop_flow("flow-1", StopFlowOptions(type=stop))
    engine.run_until_idle()
    result = engine.result("flow-1")
    assert result.status is not FlowStatus.RUNNING
    assert result.status is not FlowStatus.COMPLETED
    assert result.completions == ()
    assert of_kind(history(engine), EventKind.FLOW_CLOSED)[0].payload["outputs"] == []


def test_data_that_must_survive_a_failure_lives_in_an_attribute() -> None:
    """Keep data that must survive a failure in an Attribute."""
    engine = run(["Gated:force_fail", "Closer:note:keep me"])
    open_gate(engine)
    assert engine.result("flow-1").status is FlowStatus.FAILED
    assert engine.result("flow-1").completions == ()
    assert engine.client().get_attribute("flow-1", NOTE) == "keep me"


# -- Step cancellation ----------------------------------------------------------------------------


def test_a_decision_or_an_rpc_can_cancel_active_steps() -> None:
    """A StepDecision or an RPC can cancel active Steps."""
    engine = run(["Idle:a", "Gated:restart_idle"])
    open_gate(engine)
    engine.client().invoke_rpc(FLOW.restart_idle, "flow-1", "b")
    engine.run_until_idle()
    canceled = of_kind(history(engine), EventKind.EXECUTION_CANCELED)
    assert [(e.execution_id, e.payload["by"]) for e in canceled] == [
        ("Idle-1", "Gated-1"),
        ("Idle-2", "rpc:restart_idle"),
    ]
    assert active(engine) == {"Idle-3": "waiting"}


class SlowDecider(Step[str]):
    """Works 5 s, then cancels every Idle."""

    async def execute(self, context: Context, tag: str) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(5)
        return dead_end().with_canceling_steps(Idle)


class SelectionFlow(BFlow):
    """SlowDecider next to an Idle; an RPC adds another Idle while the decider works."""

    def __init__(self) -> None:
        super().__init__("Selection", Fan(), [SlowDecider(), Idle()], [GO])

    @rpc
    def add_idle(self, context: Context, tag: str) -> RPCResult[str]:
        return RPCResult("added", next_steps=(StepMovement.of(Idle, tag),))


def test_the_steps_to_cancel_are_selected_after_the_decision_commits() -> None:
    """Dex selects the Steps to cancel after the decision commits."""
    flow = SelectionFlow()
    engine = started(flow, ["Idle:early", "SlowDecider:x"])
    run_until(engine, attempt_started("SlowDecider-1"))
    engine.client().publish("flow-1", GO, "m")  # Idle-1 takes it and finishes before the commit
    settle_now(engine)
    flow_add = engine.client().invoke_rpc(flow.add_idle, "flow-1", "late")
    assert flow_add == "added"
    engine.run_until_idle()
    decided = of_kind(history(engine), EventKind.STEP_EXECUTE_COMPLETED, "SlowDecider-1")[0]
    # Idle-2 did not exist when the decider started; it is selected at the commit (t=5).
    assert decided.payload["decision"]["canceled"] == ["Idle-2"]
    assert rel_s(decided.time_ns) == 5.0
    assert of_kind(history(engine), EventKind.STEP_EXECUTE_COMPLETED, "Idle-1")


def test_a_decision_or_an_rpc_never_cancels_the_steps_it_starts() -> None:
    """A decision or an RPC never cancels the Steps that it starts itself."""
    engine = run(["Idle:a", "Gated:restart_idle"])
    open_gate(engine)
    assert active(engine) == {"Idle-2": "waiting"}
    engine.client().invoke_rpc(FLOW.restart_idle, "flow-1", "b")
    engine.run_until_idle()
    assert active(engine) == {"Idle-3": "waiting"}
    assert not of_kind(history(engine), EventKind.EXECUTION_CANCELED, "Idle-3")


def test_canceling_discards_what_the_current_method_has_not_committed() -> None:
    """Canceling a Step discards everything its current method has not committed: its Attribute
    writes, its Channel publications, and its decision."""
    engine = gate_while_working("ignore", "cancel_workers")
    assert engine.client().get_attribute("flow-1", Y) is None
    assert "e" not in queued(engine, "out")
    assert not [e for e in created(engine) if e.startswith("Closer")]  # its go_to(Closer)


def test_what_earlier_methods_committed_stays() -> None:
    """What its earlier methods committed, such as its WaitFor writes, stays."""
    engine = gate_while_working("obey", "cancel_workers")
    assert of_kind(history(engine), EventKind.EXECUTION_CANCELED, "Worker-1")
    assert engine.client().get_attribute("flow-1", X) == 1
    assert queued(engine, "out") == ("w",)


def test_cancellation_is_cooperative_and_signaled_to_the_handler() -> None:
    """Cancellation is cooperative. The SDK signals it to the handler."""
    EXTERNAL.clear()
    engine = started(FLOW, ["Worker:obey", "Gated:cancel_workers"])
    settle_now(engine)
    engine.client().publish("flow-1", GATE, "go")
    run_until(engine, event_is(EventKind.EXECUTION_CANCELED, "Worker-1"))
    assert EXTERNAL == []  # the Flow moved on without waiting for the handler
    engine.run_until_idle()
    assert EXTERNAL == [("signal:True", 0)]


@pytest.mark.parametrize("mode", ["ignore", "raise"])
def test_dex_discards_the_canceled_steps_result_retries_and_recovery(mode: str) -> None:
    """Dex discards the canceled Step's later result, writes, retries, and recovery routes."""
    engine = gate_while_working(mode, "cancel_workers")
    worker_events = history(engine).for_execution("Worker-1")
    attempts = [e for e in worker_events if e.kind == EventKind.ATTEMPT_STARTED]
    assert [e.method for e in attempts] == ["wait_for", "execute"]  # no retry
    assert not [e for e in worker_events if e.kind == EventKind.ATTEMPT_FAILED]
    assert not of_kind(history(engine), EventKind.STEP_EXECUTE_FAILED)
    assert not [e for e in created(engine) if e.startswith("Closer")]  # no result, no route
    assert engine.client().get_attribute("flow-1", Y) is None


def test_a_handler_that_ignores_the_signal_keeps_running_after_the_close() -> None:
    """A handler that ignores the signal keeps running, and its calls to external systems still
    take effect, even after the Flow has closed."""
    engine = gate_while_working("ignore", "force_complete")
    closed = of_kind(history(engine), EventKind.FLOW_CLOSED)[0]
    assert rel_s(closed.time_ns) == 0.0
    assert EXTERNAL == [("signal:True", 0), ("external call", 5)]
    assert [e for e in history(engine) if e.seq > closed.seq] == []
    assert engine.result("flow-1").status is FlowStatus.COMPLETED


@pytest.mark.parametrize("by", ["decision", "rpc"])
def test_a_step_canceled_by_a_commit_never_takes_that_commits_messages(by: str) -> None:
    """A Step that a decision or an RPC cancels never takes the Channel messages published in
    that same commit."""
    engine = run(["Idle:a", "Gated:publish_and_cancel_idle"])
    if by == "decision":
        open_gate(engine)
    else:
        engine.client().invoke_rpc(FLOW.publish_and_cancel_idle, "flow-1", "m")
        engine.run_until_idle()
    assert of_kind(history(engine), EventKind.EXECUTION_CANCELED, "Idle-1")
    assert not of_kind(history(engine), EventKind.WAIT_SATISFIED, "Idle-1")
    assert queued(engine, "go") == ("m",)
