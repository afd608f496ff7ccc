"""Time travel through the Client, in both modes: fork points, new run ids, and reapplying the
writes that came after the fork (engine-semantics R10, R164)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import dexviz
from dexviz import (
    Attribute,
    Channel,
    Context,
    Engine,
    EventKind,
    FlowErrorType,
    FlowNotFoundError,
    FlowStatus,
    LongPollTimeoutError,
    RPCResult,
    Step,
    StepDecision,
    StepOptions,
    TimeTravelOptions,
    TimeTravelStepMethod,
    TimeTravelType,
    Wait,
    go_to,
    graceful_complete,
    rpc,
)
from tests.engine.flows_live import MODES, NO_RETRY, SOON, LFlow, engine_in, of_kind, waiting

NOTE = Attribute("note", str)
INBOX = Channel("inbox", str)
ONE_S = timedelta(seconds=1)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Take(Step[int]):
    """Waits for an order message and hands it to Ship."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Ship, INBOX.results(context)[0])


class Ship(Step[str]):
    """Fails until the carrier is fixed; then completes with the order and the note."""

    def __init__(self) -> None:
        self.fixed = False
        self.runs: list[str] = []

    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, order: str) -> StepDecision:
        self.runs.append(context.run_id)
        if not self.fixed:
            raise RuntimeError("carrier down")
        return graceful_complete(f"{order}:{NOTE.get(context) or '-'}")


class Orders(LFlow):
    """Take then Ship, with an RPC that writes the note."""

    def __init__(self) -> None:
        self.ship = Ship()
        super().__init__("Orders", Take(), [self.ship], [NOTE, INBOX])

    @rpc
    def annotate(self, context: Context, note: str) -> RPCResult[None]:
        NOTE.set(context, note)
        return RPCResult(None)


def failed_order(engine: Engine, flow: Orders) -> str:
    """Run order "o" into Ship's failure after a note and a message; return the first run id."""
    client = engine.client()
    run_id = client.start_flow(flow, "o", 1)
    waiting(engine, "o", "Take-1")
    client.invoke_rpc(flow.annotate, "o", "fragile")
    client.publish("o", INBOX, "order-1")
    result = client.wait_for_flow("o", SOON)
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.WORKER_API_FAILED
    flow.ship.fixed = True
    return run_id


@pytest.mark.parametrize(
    "options",
    [
        TimeTravelOptions(
            TimeTravelType.STEP_EXECUTION_ID,
            step_execution_id="Ship-1",
            step_method=TimeTravelStepMethod.EXECUTE,
            reason="carrier fixed",
        ),
        TimeTravelOptions(TimeTravelType.STEP_TYPE, step_type="Ship"),
    ],
    ids=["step_execution_id", "step_type"],
)
def test_r164_time_travel_reruns_a_failed_execute_under_a_new_run_id(
    mode: str, options: TimeTravelOptions
) -> None:
    flow = Orders()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        first = failed_order(engine, flow)
        second = client.time_travel("o", options)
        result = client.wait_for_flow("o", SOON)
        assert client.describe_flow("o").run_id == second  # R10
        history = engine.history("o")
    assert second != first
    assert history.run_ids == (first, second)
    assert [(c.step_execution_id, c.value) for c in result.completions] == [
        ("Ship-1", "order-1:fragile")
    ]
    assert flow.ship.runs == [first, second]
    fork = of_kind(history, EventKind.TIME_TRAVEL_FORK)
    assert [(e.run_id, e.payload["previous_run_id"]) for e in fork] == [(second, first)]
    closed = of_kind(history, EventKind.FLOW_CLOSED)
    assert [(e.run_id, e.payload["status"]) for e in closed] == [
        (first, "FAILED"),
        (second, "COMPLETED"),
    ]


def test_r164_time_travel_to_the_beginning_reapplies_later_writes_by_default(mode: str) -> None:
    flow = Orders()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        failed_order(engine, flow)
        client.time_travel("o", TimeTravelOptions(TimeTravelType.BEGINNING))
        result = client.wait_for_flow("o", SOON)
        history = engine.history("o")
    assert result.single_output(str) == "order-1:fragile"
    fork = of_kind(history, EventKind.TIME_TRAVEL_FORK)[0]
    assert len(fork.payload["reapplied"]) == 2  # the RPC and the client publish
    publishers = [
        e.payload["publisher"]
        for e in of_kind(history, EventKind.MESSAGE_PUBLISHED)
        if e.run_id == fork.run_id
    ]
    assert publishers == ["time_travel"]


def test_r164_skip_writes_reapply_starts_over_without_later_writes(mode: str) -> None:
    flow = Orders()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        failed_order(engine, flow)
        options = TimeTravelOptions(TimeTravelType.BEGINNING, skip_writes_reapply=True)
        client.time_travel("o", options)
        with pytest.raises(LongPollTimeoutError):
            client.wait_for_flow("o", ONE_S)  # Take waits again: the message was not reapplied
        assert client.get_attribute("o", NOTE) is None
        assert client.get_channel_messages("o", INBOX) == ()
        client.publish("o", INBOX, "order-2")
        result = client.wait_for_flow("o", SOON)
    assert result.single_output(str) == "order-2:-"


def test_r164_time_travel_to_a_history_event_time(mode: str) -> None:
    flow = Orders()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        failed_order(engine, flow)
        first_event = engine.history("o")[0]
        since = datetime.fromtimestamp(first_event.time_ns // 1000 / 1e6, tz=UTC)
        client.time_travel("o", TimeTravelOptions(TimeTravelType.HISTORY_EVENT_TIME, since))
        result = client.wait_for_flow("o", SOON)
        later = datetime.fromtimestamp(engine.time_ns / 1e9, tz=UTC) + timedelta(hours=1)
        with pytest.raises(ValueError, match="at or after that time"):
            client.time_travel("o", TimeTravelOptions(TimeTravelType.HISTORY_EVENT_TIME, later))
    assert result.single_output(str) == "order-1:fragile"


def test_r164_time_travel_of_a_running_flow_ends_the_old_run(mode: str) -> None:
    flow = Orders()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        first = client.start_flow(flow, "o", 1)
        waiting(engine, "o", "Take-1")
        client.invoke_rpc(flow.annotate, "o", "early")
        second = client.time_travel("o", TimeTravelOptions(TimeTravelType.BEGINNING))
        runs = {e.run_id: e.status for e in client.search_flows("FlowType = 'Orders'", 10).flows}
        assert client.get_attribute("o", NOTE) == "early"  # reapplied into the new run
        waiting(engine, "o", "Take-1")
        client.publish("o", INBOX, "order-3")
        flow.ship.fixed = True
        result = client.wait_for_flow("o", SOON)
    assert runs == {first: FlowStatus.TERMINATED, second: FlowStatus.RUNNING}
    assert result.single_output(str) == "order-3:early"


def test_r164_time_travel_errors(mode: str) -> None:
    flow = Orders()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        failed_order(engine, flow)
        with pytest.raises(FlowNotFoundError):
            client.time_travel("nobody", TimeTravelOptions(TimeTravelType.BEGINNING))
        missing = TimeTravelOptions(
            TimeTravelType.STEP_EXECUTION_ID,
            step_execution_id="Ship-9",
            step_method=TimeTravelStepMethod.EXECUTE,
        )
        with pytest.raises(ValueError, match="Ship-9"):
            client.time_travel("o", missing)
        assert client.wait_for_flow("o", ONE_S).status is FlowStatus.FAILED


GATE = dexviz.Channel("gate", str)


class _Opener(dexviz.Step[int]):
    def execute(self, context: dexviz.Context, n: int) -> dexviz.StepDecision:
        return dexviz.go_to(_Waiter, n)


class _Waiter(dexviz.Step[int]):
    def wait_for(self, context: dexviz.Context, n: int) -> dexviz.Wait:
        return dexviz.Wait.until(GATE.for_one())

    def execute(self, context: dexviz.Context, n: int) -> dexviz.StepDecision:
        return dexviz.graceful_complete(f"{GATE.results(context)[0]}:{n}")


class _Gated(dexviz.Flow[int]):
    def get_steps(self) -> dexviz.StepList[int]:
        return dexviz.StepList.start_step(_Opener()).other_steps(_Waiter())

    def get_persistence_schema(self) -> dexviz.PersistenceSchema:
        return dexviz.PersistenceSchema.of(GATE)


def test_r164_a_forked_run_can_itself_be_forked_with_its_waiting_steps() -> None:
    """A run made by time travel records its resumed executions, so forking it again works."""
    flow = _Gated()
    engine = dexviz.Engine([flow])
    client = engine.client()
    client.start_flow(flow, "g", 5)
    engine.run_until_idle()
    at_waiter = dexviz.TimeTravelOptions(type=dexviz.TimeTravelType.STEP_TYPE, step_type="_Waiter")
    first = client.time_travel("g", at_waiter)
    engine.run_until_idle()
    assert [a.phase for a in engine.flow_state("g").active_executions] == ["waiting"]
    # Fork the forked run: its Waiter was resumed waiting, and waits again in the third run.
    second = client.time_travel("g", at_waiter)
    engine.run_until_idle()
    assert second != first
    assert [a.execution_id for a in engine.flow_state("g").active_executions] == ["_Waiter-1"]
    client.publish("g", GATE, "open")
    assert client.wait_for_flow("g").completions[0].value == "open:5"


class _Flaky(Step[int]):
    """Takes a message in WaitFor; its Execute fails until it has run in three runs."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        self.runs.append(context.run_id)
        if len(self.runs) < 3:
            raise RuntimeError("not yet")
        return graceful_complete(",".join(INBOX.results(context)))


def test_r164_a_fork_of_a_fork_still_hands_the_execute_its_consumed_message(mode: str) -> None:
    """The message a resumed Execute holds is carried into every later fork, not only the first.

    The first fork resumes ``_Flaky-1`` satisfied with the message it took; that run's own
    events name the message but never publish it, so a second fork must take its body from the
    run that published it.
    """
    flaky = _Flaky()
    flow = LFlow("ForkTwice", flaky, [], [INBOX])
    again = TimeTravelOptions(
        TimeTravelType.STEP_EXECUTION_ID,
        step_execution_id="_Flaky-1",
        step_method=TimeTravelStepMethod.EXECUTE,
    )
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 1)
        waiting(engine, "f", "_Flaky-1")
        client.publish("f", INBOX, "m")
        assert client.wait_for_flow("f", SOON).status is FlowStatus.FAILED
        client.time_travel("f", again)
        assert client.wait_for_flow("f", SOON).status is FlowStatus.FAILED
        client.time_travel("f", again)
        result = client.wait_for_flow("f", SOON)
        history = engine.history("f")
    assert result.status is FlowStatus.COMPLETED
    assert [c.value for c in result.completions] == ["m"]
    assert len(flaky.runs) == len(set(flaky.runs)) == 3
    created = of_kind(history, EventKind.STEP_EXECUTION_CREATED)
    resumed = [e.payload["reserved"] for e in created if "reserved" in e.payload]
    assert len(resumed) == 2 and resumed[0] == resumed[1] != []
