"""Engine rules R1-R13: Flow definition, identity and lifecycle (engine-semantics.md §1)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from dexviz import (
    Attribute,
    Channel,
    Context,
    Engine,
    EventKind,
    Flow,
    FlowDefinitionError,
    FlowErrorType,
    FlowNotActiveError,
    FlowStatus,
    FlowTimeoutPolicy,
    IdReusePolicy,
    LongPollTimeoutError,
    Registry,
    RetryPolicy,
    RPCResult,
    StartFlowOptions,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    StepOptions,
    StopFlowOptions,
    StopType,
    Wait,
    dead_end,
    force_fail,
    go_to,
    graceful_complete,
    rpc,
    simulate,
)
from tests.engine.flows_a import NO_RETRY, AdHocFlow, active, of_kind, started

COUNT = Attribute("count", int)
INBOX = Channel("inbox", str)


class Probe(Step[int]):
    """Records its input, execution id and lineage source, then ends its branch."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int]] = []

    def execute(self, context: Context, n: int) -> StepDecision:
        self.seen.append((context.step_execution_id, context.from_step_execution_id, n))
        return dead_end()


class Finish(Step[int]):
    """Completes the Flow with its input as the output."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n)


class Park(Step[int]):
    """Waits on the inbox for ever (nobody publishes)."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class Boom(Step[int]):
    """Raises on every attempt."""

    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        raise RuntimeError("boom")


class FailFlow(Step[int]):
    """Fails the Flow with a reason."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return force_fail("x went wrong")


class OrderFlow(Flow[int]):
    """A Flow whose type is not overridden."""

    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Finish())


class RenamedFlow(OrderFlow):
    """The same Flow under another type name."""

    def get_flow_type(self) -> str:
        return "Orders"


class KickFlow(Flow[None]):
    """No start Step; the RPC ``kick`` starts a Probe."""

    def __init__(self) -> None:
        self.probe = Probe()

    def get_steps(self) -> StepList[None]:
        return StepList.without_start_step(self.probe)

    @rpc
    def kick(self, context: Context) -> RPCResult[None]:
        return RPCResult(None, next_steps=(StepMovement.of(Probe, 1),))


class SetThenFail(Step[int]):
    """Records ``count``, commits ``count = 5`` and moves to Boom, which fails the run."""

    def __init__(self) -> None:
        self.counts_read: list[int] = []

    def execute(self, context: Context, n: int) -> StepDecision:
        self.counts_read.append(COUNT.get(context))
        COUNT.set(context, 5)
        return go_to(Boom, n)


# -- R1 ------------------------------------------------------------------------------------


def test_r1_flow_type_defaults_to_class_name() -> None:
    registry = Registry([OrderFlow(), RenamedFlow()])
    assert [d.flow_type for d in registry.definitions] == ["OrderFlow", "Orders"]
    flow = OrderFlow()
    run = simulate(flow, 3)
    assert run.engine.client().describe_flow("flow-1").flow_type == "OrderFlow"


def test_r1_flow_composition_lists_steps_and_schema() -> None:
    flow = AdHocFlow("Composed", Probe(), [Finish()], [COUNT, INBOX])
    start = simulate(flow, 1).history.start
    assert start is not None
    spec = start.payload["flow"]
    assert spec["start_step"] == "Probe"
    assert [s["step_type"] for s in spec["steps"]] == ["Probe", "Finish"]
    assert [c["name"] for c in spec["channels"]] == ["inbox"]
    assert [a["name"] for a in spec["attributes"]] == ["count"]


# -- R2 ------------------------------------------------------------------------------------


def test_r2_start_queues_one_start_step_from_start() -> None:
    probe = Probe()
    run = simulate(AdHocFlow("Start", probe), 5)
    assert probe.seen == [("Probe-1", "__start__", 5)]
    created = of_kind(run.history, EventKind.STEP_EXECUTION_CREATED)
    assert [(e.execution_id, e.payload["from_execution_id"]) for e in created] == [
        ("Probe-1", "__start__")
    ]


# -- R3 ------------------------------------------------------------------------------------


def test_r3_flow_without_start_step_moves_only_by_rpc() -> None:
    flow = KickFlow()
    engine = started(flow)
    engine.run_until_idle()
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    assert active(engine) == {}
    engine.client().invoke_rpc(flow.kick, "flow-1")
    engine.run_until_idle()
    assert flow.probe.seen == [("Probe-1", "__rpc/kick", 1)]


def test_r3_flow_without_start_step_takes_no_input() -> None:
    flow = KickFlow()
    engine = Engine([flow])
    with pytest.raises(FlowDefinitionError, match="KickFlow"):
        engine.client().start_flow(flow, "flow-1", 7)


# -- R4 ------------------------------------------------------------------------------------


def test_r4_status_set_has_no_timeout_status() -> None:
    names = {s.name for s in FlowStatus}
    assert {"RUNNING", "COMPLETED", "FAILED", "CANCELED", "TERMINATED"} <= names
    assert "CONTINUED_AS_NEW" in names
    assert not any(name == "TIMEOUT" or name == "TIMED_OUT" for name in names)


def test_r4_fail_policy_timeout_ends_failed_with_flow_timeout() -> None:
    options = StartFlowOptions(timeout=timedelta(seconds=1), timeout_policy=FlowTimeoutPolicy.FAIL)
    run = simulate(AdHocFlow("Slow", Park(), schema=[INBOX]), 1, options=options)
    assert run.result.status is FlowStatus.FAILED
    assert run.result.error_type is FlowErrorType.FLOW_TIMEOUT


def test_r4_cancel_policy_timeout_ends_canceled() -> None:
    options = StartFlowOptions(
        timeout=timedelta(seconds=1), timeout_policy=FlowTimeoutPolicy.CANCEL
    )
    run = simulate(AdHocFlow("Slow", Park(), schema=[INBOX]), 1, options=options)
    assert run.result.status is FlowStatus.CANCELED
    assert run.result.error_type is None


# -- R5 ------------------------------------------------------------------------------------


def test_r5_closed_flow_rejects_publish_and_set_and_stays_unchanged() -> None:
    flow = AdHocFlow("Done", Finish(), schema=[COUNT, INBOX])
    run = simulate(flow, 1)
    assert run.result.status is FlowStatus.COMPLETED
    client = run.engine.client()
    before = (len(run.engine.history("flow-1")), run.engine.flow_state("flow-1"))
    with pytest.raises(FlowNotActiveError):
        client.publish("flow-1", INBOX, "late")
    with pytest.raises(FlowNotActiveError):
        client.set_attribute("flow-1", COUNT, 3)
    after = (len(run.engine.history("flow-1")), run.engine.flow_state("flow-1"))
    assert after == before
    assert run.engine.result("flow-1").status is FlowStatus.COMPLETED


def test_r5_stop_on_closed_flow_fails() -> None:
    run = simulate(AdHocFlow("Done", Finish()), 1)
    with pytest.raises(FlowNotActiveError):
        run.engine.client().stop_flow("flow-1")
    assert run.engine.result("flow-1").status is FlowStatus.COMPLETED


# -- R6, R7 --------------------------------------------------------------------------------


def test_r6_r7_force_fail_is_step_decision_failed_with_reason() -> None:
    result = simulate(AdHocFlow("F", FailFlow()), 1).result
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.STEP_DECISION_FAILED
    assert result.error_message == "x went wrong"


def test_r6_r7_stop_with_fail_is_client_api_failed() -> None:
    engine = started(AdHocFlow("F", Park(), schema=[INBOX]), 1)
    engine.run_until_idle()
    engine.client().stop_flow("flow-1", StopFlowOptions(type=StopType.FAIL, reason=""))
    result = engine.result("flow-1")
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.CLIENT_API_FAILED
    assert result.error_message == "fail by client"


def test_r7_stop_with_fail_keeps_a_given_reason() -> None:
    engine = started(AdHocFlow("F", Park(), schema=[INBOX]), 1)
    engine.client().stop_flow("flow-1", StopFlowOptions(type=StopType.FAIL, reason="ops said so"))
    assert engine.result("flow-1").error_message == "ops said so"


def test_r6_exhausted_method_is_worker_api_failed() -> None:
    result = simulate(AdHocFlow("F", Boom()), 1).result
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.WORKER_API_FAILED
    assert result.error_message is not None and "boom" in result.error_message


def test_r6_r7_fail_policy_timeout_message_names_seconds() -> None:
    options = StartFlowOptions(timeout=timedelta(seconds=3), timeout_policy=FlowTimeoutPolicy.FAIL)
    result = simulate(AdHocFlow("Slow", Park(), schema=[INBOX]), 1, options=options).result
    assert result.error_type is FlowErrorType.FLOW_TIMEOUT
    assert result.error_message == "Flow timed out after 3 seconds"


# -- R8 ------------------------------------------------------------------------------------


def test_r8_no_implicit_close_when_every_branch_dead_ends() -> None:
    probe = Probe()
    run = simulate(AdHocFlow("Idle", probe), 1)
    assert probe.seen == [("Probe-1", "__start__", 1)]
    assert run.result.status is FlowStatus.RUNNING
    assert active(run.engine) == {}
    assert of_kind(run.history, EventKind.FLOW_CLOSED) == []
    with pytest.raises(LongPollTimeoutError):
        run.engine.client().wait_for_flow("flow-1")


# -- R9 ------------------------------------------------------------------------------------


@pytest.mark.parametrize("flow_id", ["a:b", "a/b", "a$b"])
def test_r9_flow_id_rejects_reserved_characters(flow_id: str) -> None:
    flow = AdHocFlow("Ids", Finish())
    engine = Engine([flow])
    with pytest.raises(ValueError, match="must not contain"):
        engine.client().start_flow(flow, flow_id, 1)
    assert engine.flow_ids() == ()


class ColonStep(Finish):
    def get_step_type(self) -> str:
        return "bad:type"


def test_r9_step_type_rejects_reserved_characters() -> None:
    with pytest.raises(FlowDefinitionError, match="bad:type"):
        Registry([AdHocFlow("Ids", ColonStep())])


def test_r9_channel_name_rejects_slash() -> None:
    with pytest.raises(ValueError, match="must not contain '/'"):
        Channel("a/b", str)


# -- R10 -----------------------------------------------------------------------------------


class RunIdProbe(Step[int]):
    def __init__(self) -> None:
        self.run_ids: list[str] = []

    def execute(self, context: Context, n: int) -> StepDecision:
        self.run_ids.append(context.run_id)
        return graceful_complete()


def test_r10_new_run_of_same_flow_id_gets_new_run_id() -> None:
    probe = RunIdProbe()
    flow = AdHocFlow("Reuse", probe)
    engine = Engine([flow])
    client = engine.client()
    first = client.start_flow(flow, "same", 1)
    assert client.wait_for_flow("same").status is FlowStatus.COMPLETED
    reuse = StartFlowOptions(id_reuse_policy=IdReusePolicy.ALLOW_IF_NOT_RUNNING)
    second = client.start_flow(flow, "same", 2, reuse)
    client.wait_for_flow("same")
    assert first != second
    assert probe.run_ids == [first, second]
    assert client.describe_flow("same").run_id == second
    assert engine.history("same").run_ids == (first, second)


# -- R11, R12 ------------------------------------------------------------------------------

FLOW_RETRY = StartFlowOptions(
    retry_policy=RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3)
)


def test_r11_flow_retry_policy_reruns_failed_flow() -> None:
    step = SetThenFail()
    run = simulate(AdHocFlow("Retried", step, [Boom()], [COUNT]), 1, options=FLOW_RETRY)
    assert len(step.counts_read) == 3
    assert len(run.history.run_ids) == 3
    assert run.result.status is FlowStatus.FAILED


def test_r12_retried_run_restarts_from_initial_state() -> None:
    step = SetThenFail()
    options = FLOW_RETRY.with_attribute(COUNT, 1)
    simulate(AdHocFlow("Retried", step, [Boom()], [COUNT]), 1, options=options)
    # Each run sets count to 5 and fails; the next run still starts from the initial value.
    assert step.counts_read == [1, 1, 1]


def test_r11_fail_policy_timeouts_are_retried_with_a_fresh_budget() -> None:
    options = StartFlowOptions(
        timeout=timedelta(seconds=5),
        timeout_policy=FlowTimeoutPolicy.FAIL,
        retry_policy=RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=2),
    )
    run = simulate(AdHocFlow("Slow", Park(), schema=[INBOX]), 1, options=options)
    assert len(run.history.run_ids) == 2
    assert run.result.error_type is FlowErrorType.FLOW_TIMEOUT
    closes = of_kind(run.history, EventKind.FLOW_CLOSED)
    starts = of_kind(run.history, EventKind.FLOW_STARTED_OR_CONTINUED)
    assert [c.time_ns - s.time_ns for s, c in zip(starts, closes, strict=True)] == [5 * 10**9] * 2


def test_r11_cancel_policy_timeouts_are_not_retried() -> None:
    options = StartFlowOptions(
        timeout=timedelta(seconds=5),
        timeout_policy=FlowTimeoutPolicy.CANCEL,
        retry_policy=RetryPolicy(maximum_attempts=3),
    )
    run = simulate(AdHocFlow("Slow", Park(), schema=[INBOX]), 1, options=options)
    assert len(run.history.run_ids) == 1
    assert run.result.status is FlowStatus.CANCELED
