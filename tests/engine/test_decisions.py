"""Engine rules R79-R91 (StepDecisions) and R143-R146, R149-R151 (completion and outputs).

engine-semantics.md §6 and §13. Forced closes that cancel branches (R147, R148, R152) are in
test_cancellation.py.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from dexviz import (
    Attribute,
    Channel,
    Context,
    DecisionKind,
    EventKind,
    FlowErrorType,
    FlowStatus,
    RPCResult,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    StopFlowOptions,
    StopType,
    Timer,
    Wait,
    dead_end,
    force_complete,
    force_complete_if_channels_empty,
    force_fail,
    go_to,
    go_to_many,
    graceful_complete,
    rpc,
)
from tests.engine.flows_b import (
    NO_RETRY,
    BFlow,
    active,
    attempt_started,
    created,
    event_is,
    history,
    now_s,
    of_kind,
    outputs,
    queued,
    rel_s,
    retries,
    run_until,
    settled,
    started,
)

GATE = Channel("gate", str)
GUARD = Channel("guard", str)
X = Attribute("x", int)


class Probe(Step[int]):
    """Records (execution id, lineage source, input) and ends its branch."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int]] = []

    def execute(self, context: Context, n: int) -> StepDecision:
        self.seen.append((context.step_execution_id, context.from_step_execution_id, n))
        return dead_end()


class Gated(Step[str]):
    """Waits for one ``gate`` message, then ends its branch (or follows its input's order)."""

    def wait_for(self, context: Context, order: str) -> Wait:
        return Wait.until(GATE.for_one())

    def execute(self, context: Context, order: str) -> StepDecision:
        if order == "force_complete":
            return force_complete("c")
        if order == "force_fail":
            return force_fail("late")
        if order == "go_to_timer":
            return go_to(Sleeper, 1)
        return dead_end()


class Sleeper(Step[int]):
    """Waits ``n`` seconds on a timer, then ends its branch."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=n)))

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class Closer(Step[str]):
    """Makes the close decision its input names ("graceful:<out>", "force:<out>", "fail:<r>")."""

    def execute(self, context: Context, order: str) -> StepDecision:
        kind, _, value = order.partition(":")
        if kind == "graceful":
            return graceful_complete(value)
        if kind == "graceful_none":
            return graceful_complete(None)
        if kind == "graceful_empty":
            return graceful_complete()
        if kind == "force":
            return force_complete(value)
        if kind == "fail":
            return force_fail(value)
        return dead_end()


class Fan(Step[list[str]]):
    """Starts one Gated branch per 'g:<order>' item and one Closer per other item."""

    def execute(self, context: Context, items: list[str]) -> StepDecision:
        moves = [
            StepMovement.of(Gated, item[2:])
            if item.startswith("g:")
            else StepMovement.of(Closer, item)
            for item in items
        ]
        return go_to_many(*moves)


def fan_flow(name: str) -> BFlow:
    return BFlow(name, Fan(), [Gated(), Closer(), Sleeper()], [GATE])


# -- R79-R82 -----------------------------------------------------------------------------------


class AddSix(Step[int]):
    """go_to(Probe, n + 6)."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Probe, n + 6)


def test_r79_go_to_schedules_one_step_with_that_input() -> None:
    probe = Probe()
    engine = settled(BFlow("R79", AddSix(), [probe]), 1)
    assert probe.seen == [("Probe-1", "AddSix-1", 7)]
    assert created(engine) == ["AddSix-1", "Probe-1"]


class Quick(Step[int]):
    """Ends at once."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class Both(Step[int]):
    """go_to_many(Gated, Quick)."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Gated, "dead_end"), StepMovement.of(Quick, n))


def test_r80_go_to_many_branches_do_not_wait_for_each_other() -> None:
    engine = settled(BFlow("R80", Both(), [Gated(), Quick()], [GATE]), 2)
    # Quick-1 finished while Gated-1 still waits for its message.
    assert of_kind(history(engine), EventKind.STEP_EXECUTE_COMPLETED, "Quick-1")
    assert active(engine) == {"Gated-1": "waiting"}
    engine.client().publish("flow-1", GATE, "go")
    engine.run_until_idle()
    assert active(engine) == {}


class SetThenGo(Step[int]):
    """Sets x = n and moves to ReadX in the same Execute."""

    def execute(self, context: Context, n: int) -> StepDecision:
        X.set(context, n)
        return go_to(ReadX, n)


class ReadX(Step[int]):
    """Records what its WaitFor reads from x."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        self.seen.append(X.get(context))
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


def test_r81_new_steps_start_after_the_commit_and_see_its_writes() -> None:
    reader = ReadX()
    engine = settled(BFlow("R81", SetThenGo(), [reader], [X]), 1)
    assert reader.seen == [1]
    events = history(engine)
    completed = of_kind(events, EventKind.STEP_EXECUTE_COMPLETED, "SetThenGo-1")[0]
    created_b = of_kind(events, EventKind.STEP_EXECUTION_CREATED, "ReadX-1")[0]
    assert created_b.seq > completed.seq


def test_r82_dead_end_ends_the_branch_only() -> None:
    engine = settled(BFlow("R82", Quick()), 1)
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    assert active(engine) == {}
    assert not engine.flow_state("flow-1").graceful_requested
    assert not of_kind(history(engine), EventKind.FLOW_CLOSED)
    assert not of_kind(history(engine), EventKind.COMPLETION_REQUESTED)


# -- R83-R85: close decisions ------------------------------------------------------------------


def test_r83_graceful_complete_ends_the_branch_and_records_a_request() -> None:
    engine = settled(fan_flow("R83"), ["g:dead_end", "graceful:a"])
    state = engine.flow_state("flow-1")
    assert state.graceful_requested
    assert state.status is FlowStatus.RUNNING
    assert list(active(engine)) == ["Gated-1"]
    requested = of_kind(history(engine), EventKind.COMPLETION_REQUESTED)
    assert [(e.execution_id, e.payload["output"]) for e in requested] == [("Closer-1", "a")]


def test_r84_force_complete_completes_now_and_ends_every_other_branch() -> None:
    engine = settled(fan_flow("R84"), ["g:dead_end", "force:done"])
    result = engine.result("flow-1")
    assert result.status is FlowStatus.COMPLETED
    assert outputs(engine) == [("Closer", "Closer-1", "done")]
    canceled = of_kind(history(engine), EventKind.EXECUTION_CANCELED, "Gated-1")
    assert [e.payload["by"] for e in canceled] == ["flow_close"]
    assert not [e for e in history(engine) if attempt_started("Gated-1")(e)]


def test_r85_force_fail_fails_the_flow_with_the_reason() -> None:
    engine = settled(fan_flow("R85"), ["g:dead_end", "fail:x"])
    result = engine.result("flow-1")
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.STEP_DECISION_FAILED
    assert result.error_message == "x"
    assert result.completions == ()
    assert of_kind(history(engine), EventKind.EXECUTION_CANCELED, "Gated-1")


# -- R86: what a decision may combine ----------------------------------------------------------

BAD_DECISIONS = {
    "graceful_with_next": StepDecision(
        DecisionKind.GRACEFUL_COMPLETE, movements=(StepMovement.of(Probe, 1),)
    ),
    "force_complete_with_next": StepDecision(
        DecisionKind.FORCE_COMPLETE, movements=(StepMovement.of(Probe, 1),), output="o"
    ),
    "force_fail_with_next": StepDecision(
        DecisionKind.FORCE_FAIL, movements=(StepMovement.of(Probe, 1),), reason="r"
    ),
    "dead_end_with_next": StepDecision(
        DecisionKind.DEAD_END, movements=(StepMovement.of(Probe, 1),)
    ),
    "dead_end_with_output": StepDecision(DecisionKind.DEAD_END, output="o"),
}


class HandBuilt(Step[str]):
    """Returns one of BAD_DECISIONS."""

    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, name: str) -> StepDecision:
        return BAD_DECISIONS[name]


@pytest.mark.parametrize("name", sorted(BAD_DECISIONS))
def test_r86_invalid_decision_combinations_fail_the_attempt(name: str) -> None:
    probe = Probe()
    engine = settled(BFlow("R86", HandBuilt(), [probe]), name)
    failed = of_kind(history(engine), EventKind.ATTEMPT_FAILED, "HandBuilt-1")
    assert [e.payload["reason"] for e in failed] == ["invalid_result"]
    result = engine.result("flow-1")
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.WORKER_API_FAILED
    assert probe.seen == []


def test_r86_force_fail_takes_a_string_reason() -> None:
    with pytest.raises(TypeError):
        force_fail(42)  # type: ignore[arg-type]


# -- R87, R89-R91 -------------------------------------------------------------------------------


class Fallback(Step[str]):
    """The fallback movement of a conditional complete."""

    def execute(self, context: Context, value: str) -> StepDecision:
        return dead_end()


class CompleteIfEmpty(Step[str]):
    """Waits for ``gate``, then force-completes if ``guard`` is empty, else falls back."""

    def wait_for(self, context: Context, value: str) -> Wait:
        return Wait.until(GATE.for_one())

    def execute(self, context: Context, value: str) -> StepDecision:
        return force_complete_if_channels_empty("out", StepMovement.of(Fallback, value), GUARD)


class SlowGuardConsumer(Step[str]):
    """Takes one ``guard`` message, then works for 10 s in an async Execute."""

    def wait_for(self, context: Context, value: str) -> Wait:
        return Wait.until(GUARD.for_one())

    async def execute(self, context: Context, value: str) -> StepDecision:  # type: ignore[override]
        import asyncio

        await asyncio.sleep(10)
        return dead_end()


class StartConditional(Step[str]):
    """Starts CompleteIfEmpty, plus the slow consumer when the input says so."""

    def execute(self, context: Context, value: str) -> StepDecision:
        moves = [StepMovement.of(CompleteIfEmpty, value)]
        if value == "consumer":
            moves.append(StepMovement.of(SlowGuardConsumer, value))
        return go_to_many(*moves)


def conditional_flow() -> BFlow:
    steps = [CompleteIfEmpty(), Fallback(), SlowGuardConsumer()]
    return BFlow("R87", StartConditional(), steps, [GATE, GUARD])


def test_r87_conditional_complete_with_empty_channels_completes() -> None:
    engine = settled(conditional_flow(), "plain")
    engine.client().publish("flow-1", GATE, "go")
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert outputs(engine) == [("CompleteIfEmpty", "CompleteIfEmpty-1", "out")]
    assert "Fallback-1" not in created(engine)


def test_r87_conditional_complete_with_a_queued_message_runs_the_fallback() -> None:
    engine = settled(conditional_flow(), "plain")
    client = engine.client()
    client.publish("flow-1", GUARD, "pending")
    client.publish("flow-1", GATE, "go")
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    assert "Fallback-1" in created(engine)
    decision = of_kind(history(engine), EventKind.STEP_EXECUTE_COMPLETED, "CompleteIfEmpty-1")
    assert decision[0].payload["decision"]["channels_empty"] is False
    assert queued(engine, "guard") == ("pending",)


def test_r87_r56_a_reserved_message_counts_as_non_empty() -> None:
    engine = settled(conditional_flow(), "consumer")
    client = engine.client()
    client.publish("flow-1", GUARD, "taken")
    run_until(engine, attempt_started("SlowGuardConsumer-1"))
    assert queued(engine, "guard") == ()
    client.publish("flow-1", GATE, "go")
    run_until(engine, event_is(EventKind.STEP_EXECUTE_COMPLETED, "CompleteIfEmpty-1"))
    assert "SlowGuardConsumer-1" in active(engine)
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    assert "Fallback-1" in created(engine)


@pytest.mark.parametrize("order", ["graceful_empty:", "graceful_none:"])
def test_r89_a_missing_or_null_output_adds_nothing(order: str) -> None:
    engine = settled(BFlow("R89", Closer()), order)
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert engine.result("flow-1").completions == ()


def test_r90_outputs_follow_commit_order_and_graceful_outputs_survive_force_complete() -> None:
    engine = settled(fan_flow("R90"), ["g:force_complete", "graceful:b"])
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    engine.client().publish("flow-1", GATE, "go")
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert outputs(engine) == [("Closer", "Closer-1", "b"), ("Gated", "Gated-1", "c")]


class Unregistered(Step[int]):
    """A Step that no Flow of these tests lists."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class GoAstray(Step[str]):
    """go_to an unregistered Step, or go_to Probe with a str input."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_retry=retries(2))

    def execute(self, context: Context, how: str) -> StepDecision:
        if how == "unregistered":
            return go_to(Unregistered, 1)
        return go_to(Probe, "not a number")


@pytest.mark.parametrize(
    ("how", "finals"), [("unregistered", [True]), ("wrong_input", [False, True])]
)
def test_r91_bad_targets_fail_the_attempt_only_a_wrong_input_is_retried(
    how: str, finals: list[bool]
) -> None:
    """A wrong input is retried; an unregistered target is a FlowDefinitionError, which fails
    the same way on every attempt, so its first attempt is final (issue 27, docs/dex-fidelity)."""
    probe = Probe()
    engine = settled(BFlow("R91", GoAstray(), [probe]), how)
    failed = of_kind(history(engine), EventKind.ATTEMPT_FAILED, "GoAstray-1")
    assert [e.payload["reason"] for e in failed] == ["invalid_result"] * len(finals)
    assert [e.payload["final"] for e in failed] == finals
    result = engine.result("flow-1")
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.WORKER_API_FAILED
    assert probe.seen == []


# -- R143-R146: completion requests ------------------------------------------------------------


def test_r143_graceful_complete_does_not_close_the_flow_by_itself() -> None:
    engine = settled(fan_flow("R143"), ["g:dead_end", "graceful:a"])
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    assert engine.result("flow-1").completions == ()
    assert not of_kind(history(engine), EventKind.FLOW_CLOSED)


def test_r144_completion_begins_when_no_step_is_active() -> None:
    engine = settled(fan_flow("R144"), ["g:dead_end", "graceful:a"])
    engine.client().publish("flow-1", GATE, "go")
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert outputs(engine) == [("Closer", "Closer-1", "a")]
    events = history(engine)
    last_step = of_kind(events, EventKind.STEP_EXECUTE_COMPLETED, "Gated-1")[0]
    closed = of_kind(events, EventKind.FLOW_CLOSED)[0]
    assert closed.seq > last_step.seq


class GoThenQueue(Step[str]):
    """Graceful-completes and, in a sibling branch, leaves a Step queued behind it."""

    def execute(self, context: Context, value: str) -> StepDecision:
        return go_to_many(StepMovement.of(Closer, "graceful:a"), StepMovement.of(Sleeper, 3))


def test_r144_a_queued_or_waiting_step_delays_completion() -> None:
    engine = settled(BFlow("R144b", GoThenQueue(), [Closer(), Sleeper()]), "x")
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    closed = of_kind(history(engine), EventKind.FLOW_CLOSED)[0]
    assert rel_s(closed.time_ns) == 3.0


def test_r145_a_later_dead_end_does_not_withdraw_the_request() -> None:
    engine = settled(fan_flow("R145"), ["g:go_to_timer", "graceful:a"])
    engine.client().publish("flow-1", GATE, "go")
    run_until(engine, event_is(EventKind.STEP_EXECUTE_COMPLETED, "Gated-1"))
    state = engine.flow_state("flow-1")
    assert state.graceful_requested
    assert list(active(engine)) == ["Sleeper-1"]
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert outputs(engine) == [("Closer", "Closer-1", "a")]


def test_r146_work_started_after_the_request_runs_before_completion() -> None:
    engine = settled(fan_flow("R146"), ["g:go_to_timer", "graceful:a"])
    engine.client().publish("flow-1", GATE, "go")
    engine.run_until_idle()
    events = history(engine)
    sleeper_done = of_kind(events, EventKind.STEP_EXECUTE_COMPLETED, "Sleeper-1")[0]
    closed = of_kind(events, EventKind.FLOW_CLOSED)[0]
    assert closed.seq > sleeper_done.seq
    assert rel_s(closed.time_ns) == 1.0
    assert engine.result("flow-1").status is FlowStatus.COMPLETED


# -- R149-R151: outputs and forced closes ------------------------------------------------------


def test_r149_a_failed_flow_has_no_outputs_even_after_a_graceful_output() -> None:
    engine = settled(fan_flow("R149"), ["g:force_fail", "graceful:b"])
    engine.client().publish("flow-1", GATE, "go")
    engine.run_until_idle()
    result = engine.result("flow-1")
    assert result.status is FlowStatus.FAILED
    assert result.completions == ()
    assert result.error_type is FlowErrorType.STEP_DECISION_FAILED
    closed = of_kind(history(engine), EventKind.FLOW_CLOSED)[0]
    assert closed.payload["outputs"] == []


@pytest.mark.parametrize(
    ("stop", "status"),
    [
        (StopType.CANCEL, FlowStatus.CANCELED),
        (StopType.FAIL, FlowStatus.FAILED),
        (StopType.TERMINATE, FlowStatus.TERMINATED),
    ],
)
def test_r149_stopped_flows_have_no_outputs(stop: StopType, status: FlowStatus) -> None:
    engine = settled(fan_flow("R149b"), ["g:dead_end", "graceful:b"])
    engine.client().stop_flow("flow-1", StopFlowOptions(type=stop))
    assert engine.result("flow-1").status is status
    assert engine.result("flow-1").completions == ()


def test_r150_every_graceful_output_is_returned_in_commit_order() -> None:
    for seed in range(5):
        engine = settled(fan_flow("R150"), ["graceful:0", "graceful:1", "graceful:2"], seed=seed)
        committed = [
            e.execution_id
            for e in of_kind(history(engine), EventKind.STEP_EXECUTE_COMPLETED)
            if e.step_type == "Closer"
        ]
        result = outputs(engine)
        assert [execution for _, execution, _ in result] == committed
        assert sorted(value for _, _, value in result) == ["0", "1", "2"]
        assert len({execution for _, execution, _ in result}) == 3


def test_r151_force_fail_wins_over_a_pending_graceful_request() -> None:
    engine = settled(fan_flow("R151"), ["g:force_fail", "graceful:a"])
    engine.client().publish("flow-1", GATE, "go")
    engine.run_until_idle()
    result = engine.result("flow-1")
    assert result.status is FlowStatus.FAILED
    assert result.error_message == "late"


@pytest.mark.parametrize(
    ("stop", "status", "error"),
    [
        (StopType.CANCEL, FlowStatus.CANCELED, None),
        (StopType.FAIL, FlowStatus.FAILED, FlowErrorType.CLIENT_API_FAILED),
    ],
)
def test_r151_stop_flow_wins_over_a_pending_graceful_request(
    stop: StopType, status: FlowStatus, error: Any
) -> None:
    engine = settled(fan_flow("R151b"), ["g:dead_end", "graceful:a"])
    assert engine.flow_state("flow-1").graceful_requested
    engine.client().stop_flow("flow-1", StopFlowOptions(type=stop))
    result = engine.result("flow-1")
    assert result.status is status
    assert result.error_type is error
    assert now_s(engine) == 0.0


def test_r82_r144_start_step_graceful_complete_closes_at_once() -> None:
    engine = started(BFlow("R144c", Closer()), "graceful:only")
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    assert outputs(engine) == [("Closer", "Closer-1", "only")]


class FanWithRpc(BFlow):
    """fan_flow plus an RPC that starts a Sleeper."""

    def __init__(self) -> None:
        super().__init__("R122", Fan(), [Gated(), Closer(), Sleeper()], [GATE])

    @rpc
    def add_sleeper(self, context: Context, seconds: int) -> RPCResult[str]:
        return RPCResult("added", next_steps=(StepMovement.of(Sleeper, seconds),))


def test_r122_an_rpc_can_add_work_before_completion_begins() -> None:
    flow = FanWithRpc()
    engine = settled(flow, ["g:dead_end", "graceful:a"])
    assert engine.client().invoke_rpc(flow.add_sleeper, "flow-1", 2) == "added"
    engine.client().publish("flow-1", GATE, "go")
    run_until(engine, event_is(EventKind.STEP_EXECUTE_COMPLETED, "Gated-1"))
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    assert list(active(engine)) == ["Sleeper-1"]
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.COMPLETED
    closed = of_kind(history(engine), EventKind.FLOW_CLOSED)[0]
    assert rel_s(closed.time_ns) == 2.0
    assert outputs(engine) == [("Closer", "Closer-1", "a")]
