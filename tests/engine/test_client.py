"""The Client (issue 3): every call's success path and documented errors, in both modes, and both
SDK generations through one Client (engine-semantics R5, R9, R127-R129, R140, R153-R163)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dexviz import (
    AsyncContext,
    Attribute,
    AttributeIndex,
    AttributeMap,
    Channel,
    ChannelMap,
    ChannelMessageNotFoundError,
    Context,
    Engine,
    ErrorSubStatus,
    EventKind,
    FlowAlreadyStartedError,
    FlowConfig,
    FlowDefinitionError,
    FlowErrorType,
    FlowNotActiveError,
    FlowNotFoundError,
    FlowStatus,
    IndexType,
    LongPollTimeoutError,
    StartFlowOptions,
    Step,
    StepDecision,
    StepDurability,
    StepExecutionId,
    StepMovement,
    StopFlowOptions,
    StopType,
    Timer,
    TimerId,
    Wait,
    WaitForAttributeOptions,
    WaitForStepCompletionOptions,
    WaitHandlerTimeoutError,
    dead_end,
    go_to,
    go_to_many,
    go_to_multi,
    graceful_complete,
)
from dexviz.sdk.attribute_match import AttributeMatch
from dexviz.sdk.errors import RequestTimeoutError
from tests.engine.flows_live import (
    MODES,
    SOON,
    Gate,
    LFlow,
    engine_in,
    of_kind,
    waiting,
)

COUNT = Attribute("count", int)
NOTE = Attribute("note", str)
SCORES = AttributeMap("scores", int)
STATUS = Attribute("status", str, AttributeIndex(IndexType.KEYWORD, "Status"))
INBOX = Channel("inbox", str)
GO = Channel("go", str)
SLOTS = ChannelMap("slots", str)
SCHEMA = [COUNT, NOTE, SCORES, STATUS, INBOX, GO, SLOTS]

ONE_S = timedelta(seconds=1)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Inbox(Step[int]):
    """Waits for one inbox message, adds its input to ``count``, completes with the message."""

    def __init__(self) -> None:
        self.run_ids: list[str] = []
        self.hold_wait_for = False
        self.gate = Gate()

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        self.run_ids.append(context.run_id)
        COUNT.set(context, COUNT.get(context) + n)
        NOTE.set(context, "done")
        return graceful_complete(INBOX.results(context)[0])


def inbox_flow(flow_type: str = "InboxFlow") -> LFlow:
    return LFlow(flow_type, Inbox(), schema=SCHEMA)


def started(engine: Engine, flow: LFlow, flow_id: str = "f", input: Any = 1) -> str:
    """Start ``flow`` and wait until its start Step waits (so client input comes after it)."""
    run_id = engine.client().start_flow(flow, flow_id, input)
    start = flow.get_steps().start[0].get_step_type()
    waiting(engine, flow_id, f"{start}-1")
    return run_id


# -- both SDK generations ----------------------------------------------------------------------

OLD_PARTS = Channel("parts", str)
OLD_SIGNAL = Channel("signal", str)
OLD_PREFIX = Attribute("prefix", str)
OLD_RESULT = Attribute("result", str)


class OldGreet(Step[str]):
    """dex-python-sdk 0.2: targets are the Step instances passed to the constructor."""

    def __init__(self, shout: OldShout, whisper: OldWhisper, collect: OldCollect) -> None:
        self.shout, self.whisper, self.collect = shout, whisper, collect

    async def execute(self, context: Context, name: str) -> StepDecision:  # 0.2: Context
        await asyncio.sleep(0)
        return go_to_multi(
            StepMovement.of(self.shout, name),
            StepMovement.of(self.whisper, name),
            StepMovement.of(self.collect, 2),
        )


class OldShout(Step[str]):
    """Publishes the name in capitals."""

    def execute(self, context: Context, name: str) -> StepDecision:
        OLD_PARTS.publish(context, name.upper())
        return dead_end()


class OldWhisper(Step[str]):
    """Publishes the name in small letters, then idles until canceled."""

    def __init__(self, idle: OldIdle) -> None:
        self.idle = idle

    def execute(self, context: Context, name: str) -> StepDecision:
        OLD_PARTS.publish(context, name.lower())
        return go_to(self.idle, name)


class OldIdle(Step[str]):
    """Waits for ever; the collector cancels it by instance."""

    def wait_for(self, context: Context, name: str) -> Wait:
        return Wait.until(OLD_SIGNAL.for_n(99))

    def execute(self, context: Context, name: str) -> StepDecision:
        return dead_end()


class OldCollect(Step[int]):
    """Waits for both parts and the client's signal; writes and returns the greeting."""

    def __init__(self, idle: OldIdle) -> None:
        self.idle = idle

    def wait_for(self, context: Context, count: int) -> Wait:
        return Wait.all_of(OLD_PARTS.for_n(count), OLD_SIGNAL.for_one())

    def execute(self, context: Context, count: int) -> StepDecision:
        parts = sorted(OLD_PARTS.results(context))
        text = f"{OLD_PREFIX.get(context)} {'/'.join(parts)}{OLD_SIGNAL.results(context)[0]}"
        OLD_RESULT.set(context, text)
        return graceful_complete(text).with_canceling_steps(self.idle)


class OldStyleFlow(LFlow):
    """A Flow written the 0.2 way: instances wired through constructors."""

    def __init__(self) -> None:
        idle = OldIdle()
        collect = OldCollect(idle)
        greet = OldGreet(OldShout(), OldWhisper(idle), collect)
        super().__init__(
            "OldStyleFlow",
            greet,
            [greet.shout, greet.whisper, idle, collect],
            [OLD_PARTS, OLD_SIGNAL, OLD_PREFIX, OLD_RESULT],
        )


NEW_DONE = Channel("done", int)
NEW_TOTAL = Attribute("total", int)


class NewSplit(Step[int]):
    """dex-python-sdk 1.23: classes as targets, go_to_many, AsyncContext."""

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:
        await asyncio.sleep(0.01)
        return go_to_many(*(StepMovement.of(NewSquare, i) for i in range(1, n + 1)))


class NewSquare(Step[int]):
    """Publishes the square of its input."""

    async def execute(self, context: AsyncContext, i: int) -> StepDecision:
        NEW_DONE.publish(context, i * i)
        return go_to(NewSum, i) if i == 1 else dead_end()


class NewSum(Step[int]):
    """Waits for every square and the client's go-ahead, then completes with the sum."""

    def wait_for(self, context: Context, i: int) -> Wait:
        return Wait.all_of(NEW_DONE.for_n(3), INBOX.for_one())

    async def execute(self, context: AsyncContext, i: int) -> StepDecision:
        total = sum(NEW_DONE.results(context)) + NEW_TOTAL.get(context)
        NEW_TOTAL.set(context, total)
        return graceful_complete(total)


def test_both_api_generations_run_through_one_client() -> None:
    old = OldStyleFlow()
    new = LFlow("NewStyleFlow", NewSplit(), [NewSquare(), NewSum()], [NEW_DONE, NEW_TOTAL, INBOX])
    with engine_in([old, new]) as engine:
        client = engine.client()
        client.start_flow(old, "old", "Dex")
        client.start_flow(new, "new", 3)
        client.set_attribute("old", OLD_PREFIX, "Hello")
        client.set_attribute("new", NEW_TOTAL, 100)
        client.publish("old", OLD_SIGNAL, "!")
        client.publish("new", INBOX, "go")
        old_result = client.wait_for_flow("old", SOON)
        new_result = client.wait_for_flow("new", SOON)
        assert client.get_attribute("old", OLD_RESULT) == "Hello DEX/dex!"
        assert client.get_attribute("new", NEW_TOTAL) == 114
        canceled = of_kind(engine.history("old"), EventKind.EXECUTION_CANCELED, "OldIdle-1")
    assert old_result.single_output(str) == "Hello DEX/dex!"
    assert new_result.single_output(int) == 114
    assert [e.payload["by"] for e in canceled] == ["OldCollect-1"]


# -- start_flow --------------------------------------------------------------------------------


def test_r153_start_flow_returns_the_run_id_the_run_and_its_handlers_see(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        run_id = started(engine, flow)
        client.publish("f", INBOX, "m")
        client.wait_for_flow("f", SOON)
        assert client.describe_flow("f").run_id == run_id
    assert flow.get_steps().start[0].run_ids == [run_id]  # type: ignore[attr-defined]


class HeldStart(Step[int]):
    """An Execute that is held until the test lets it go."""

    def __init__(self) -> None:
        self.gate = Gate()

    def execute(self, context: Context, n: int) -> StepDecision:
        self.gate.hold()
        return graceful_complete(n)


def test_r153_start_flow_returns_before_the_start_step_finishes() -> None:
    step = HeldStart()
    flow = LFlow("Held", step)
    with engine_in([flow]) as engine:
        client = engine.client()
        began = time.monotonic()
        client.start_flow(flow, "h", 4)
        returned = time.monotonic() - began
        assert step.gate.arrived()
        assert client.describe_flow("h").status is FlowStatus.RUNNING
        step.gate.open()
        assert client.wait_for_flow("h", SOON).single_output(int) == 4
    assert returned < 0.5


def test_r140_starting_a_used_flow_id_raises_flow_already_started(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 1)
        with pytest.raises(FlowAlreadyStartedError) as caught:
            client.start_flow(flow, "f", 2)
    assert caught.value.flow_id == "f"
    assert caught.value.sub_status is ErrorSubStatus.FLOW_ALREADY_STARTED
    assert caught.value.operation == "start_flow"


def test_start_flow_of_an_unregistered_flow_raises_flow_definition_error(mode: str) -> None:
    registered, stranger = inbox_flow(), inbox_flow("Stranger")
    with engine_in([registered], mode) as engine:
        with pytest.raises(FlowDefinitionError, match="Stranger"):
            engine.client().start_flow(stranger, "s", 1)


@pytest.mark.parametrize("flow_id", ["a:b", "a/b", "a$b", ""])
def test_r9_start_flow_rejects_reserved_characters_in_flow_ids(flow_id: str) -> None:
    flow = inbox_flow()
    with engine_in([flow]) as engine:
        with pytest.raises(ValueError, match="Flow id"):
            engine.client().start_flow(flow, flow_id, 1)
        assert engine.flow_ids() == ()


# -- wait_for_flow -----------------------------------------------------------------------------


def test_r155_wait_for_flow_returns_the_result_and_works_on_closed_flows(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.publish("f", INBOX, "hello")
        first = client.wait_for_flow("f", SOON)
        again = client.wait_for_flow("f", ONE_S)
    assert first == again
    assert first.status is FlowStatus.COMPLETED
    assert first.single_output(str) == "hello"
    assert first.completions[0].step_execution_id == "Inbox-1"


def test_r155_wait_for_flow_on_a_running_flow_raises_long_poll_timeout(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 1)
        with pytest.raises(LongPollTimeoutError) as caught:
            client.wait_for_flow("f", ONE_S)
        assert client.describe_flow("f").status is FlowStatus.RUNNING
    assert caught.value.sub_status is ErrorSubStatus.LONG_POLL_TIMEOUT


def test_r155_wait_for_flow_of_an_unknown_flow_raises_flow_not_found(mode: str) -> None:
    with engine_in([inbox_flow()], mode) as engine:
        with pytest.raises(FlowNotFoundError) as caught:
            engine.client().wait_for_flow("nobody", ONE_S)
    assert caught.value.flow_id == "nobody"
    assert caught.value.sub_status is ErrorSubStatus.FLOW_NOT_EXISTS


# -- publish, attributes, channel messages ------------------------------------------------------


def test_r157_publish_appends_a_batch_in_order(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.publish("f", INBOX, "first", "second", "third")
        result = client.wait_for_flow("f", SOON)
        left = client.get_channel_messages("f", INBOX)
        published = of_kind(engine.history("f"), EventKind.CHANNEL_EXTERNAL_PUBLISH)
    assert result.single_output(str) == "first"
    assert [m.value for m in left] == ["second", "third"]
    assert [m["value"] for m in published[0].payload["messages"]] == ["first", "second", "third"]


class Slot(Step[str]):
    """Waits for one message of its ChannelMap instance."""

    def wait_for(self, context: Context, key: str) -> Wait:
        return Wait.until(SLOTS.for_one(key))

    def execute(self, context: Context, key: str) -> StepDecision:
        SCORES.set(context, key, len(SLOTS.results(context, key)[0]))
        return graceful_complete(SLOTS.results(context, key)[0])


def test_r157_publish_to_a_channel_map_instance(mode: str) -> None:
    flow = LFlow("SlotFlow", Slot(), schema=SCHEMA)
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow, input="k1")
        client.publish("f", SLOTS, "k2", "not mine")
        client.publish("f", SLOTS, "k1", "mine")
        result = client.wait_for_flow("f", SOON)
        assert [m.value for m in client.get_channel_messages("f", SLOTS, "k2")] == ["not mine"]
        assert client.get_channel_messages("f", SLOTS, "k1") == ()
        assert client.get_attribute("f", SCORES, "k1") == 4
    assert result.single_output(str) == "mine"


def test_r5_publish_and_set_attribute_on_a_closed_flow_raise_flow_not_active(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.publish("f", INBOX, "m")
        client.wait_for_flow("f", SOON)
        with pytest.raises(FlowNotActiveError) as publish_error:
            client.publish("f", INBOX, "late")
        with pytest.raises(FlowNotActiveError):
            client.set_attribute("f", COUNT, 100)
        assert client.get_channel_messages("f", INBOX) == ()
        assert client.get_attribute("f", COUNT) == 1
    assert publish_error.value.operation == "publish"
    assert "COMPLETED" in str(publish_error.value)


def test_publish_and_set_attribute_on_an_unknown_flow_raise_flow_not_active(mode: str) -> None:
    with engine_in([inbox_flow()], mode) as engine:
        client = engine.client()
        with pytest.raises(FlowNotActiveError, match="not found"):
            client.publish("nobody", INBOX, "m")
        with pytest.raises(FlowNotActiveError, match="not found"):
            client.set_attribute("nobody", COUNT, 1)


def test_r158_get_attribute_returns_none_when_unset_and_reads_closed_flows(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow, input=5)
        assert client.get_attribute("f", COUNT) is None
        assert client.get_attribute("f", SCORES, "absent") is None
        client.publish("f", INBOX, "m")
        client.wait_for_flow("f", SOON)
        assert client.get_attribute("f", COUNT) == 5
        assert client.get_attribute("f", NOTE) == "done"
        with pytest.raises(FlowNotFoundError):
            client.get_attribute("nobody", COUNT)


def test_r158_set_attribute_is_read_by_the_next_handler(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow, input=1)
        client.set_attribute("f", COUNT, 41)
        client.set_attribute("f", SCORES, "alice", 3)
        assert client.get_attribute("f", COUNT) == 41
        client.publish("f", INBOX, "m")
        client.wait_for_flow("f", SOON)
        assert client.get_attribute("f", COUNT) == 42
        assert client.get_attribute("f", SCORES, "alice") == 3
        writes = of_kind(engine.history("f"), EventKind.RPC_EXECUTION_COMPLETED)
    assert [w.payload["is_set_attribute_api"] for w in writes] == [True, True]


def test_set_attribute_of_an_undeclared_attribute_is_rejected(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 1)
        with pytest.raises(ValueError, match="does not declare Attribute 'stranger'"):
            client.set_attribute("f", Attribute("stranger", int), 1)


class ParkOnGo(Step[int]):
    """Waits on ``go``; leaves the inbox alone so its messages stay pending."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n)


def test_get_and_delete_channel_messages(mode: str) -> None:
    flow = LFlow("Pending", ParkOnGo(), schema=SCHEMA)
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.publish("f", INBOX, "a", "b", "c")
        pending = client.get_channel_messages("f", INBOX)
        assert [m.value for m in pending] == ["a", "b", "c"]
        assert len({m.message_id for m in pending}) == 3
        client.delete_channel_message("f", INBOX, pending[1].message_id)
        assert client.get_channel_messages("f", INBOX) == (pending[0], pending[2])
        with pytest.raises(ChannelMessageNotFoundError) as caught:
            client.delete_channel_message("f", INBOX, pending[1].message_id)
        assert client.get_channel_messages("f", INBOX) == (pending[0], pending[2])
    assert caught.value.sub_status is ErrorSubStatus.CHANNEL_MESSAGE_NOT_FOUND
    assert pending[1].message_id in str(caught.value)


# -- stop_flow, describe_flow --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "status", "error_type", "message"),
    [
        (StopFlowOptions(), FlowStatus.CANCELED, None, None),
        (StopFlowOptions(StopType.FAIL), FlowStatus.FAILED, "CLIENT_API", "fail by client"),
        (StopFlowOptions(StopType.FAIL, "bad order"), FlowStatus.FAILED, "CLIENT_API", "bad order"),
        (StopFlowOptions(StopType.TERMINATE), FlowStatus.TERMINATED, None, None),
    ],
)
def test_r154_stop_flow(
    mode: str,
    options: StopFlowOptions,
    status: FlowStatus,
    error_type: str | None,
    message: str | None,
) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.stop_flow("f", options)
        result = client.wait_for_flow("f", SOON)
        canceled = of_kind(engine.history("f"), EventKind.EXECUTION_CANCELED)
    assert result.status is status
    assert result.completions == ()
    expected = FlowErrorType.CLIENT_API_FAILED if error_type else None
    assert (result.error_type, result.error_message) == (expected, message)
    assert [e.execution_id for e in canceled] == ["Inbox-1"]


def test_r154_first_stop_wins(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.stop_flow("f", StopFlowOptions(StopType.CANCEL))
        # The later FAIL is ignored while the Flow closes, or rejected once it has closed.
        with contextlib.suppress(FlowNotActiveError):
            client.stop_flow("f", StopFlowOptions(StopType.FAIL, "too late"))
        result = client.wait_for_flow("f", SOON)
    assert (result.status, result.error_type, result.error_message) == (
        FlowStatus.CANCELED,
        None,
        None,
    )


def test_r154_stopping_a_closed_or_unknown_flow_is_an_error(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.stop_flow("f", StopFlowOptions(StopType.TERMINATE))
        with pytest.raises(FlowNotActiveError, match="TERMINATED"):
            client.stop_flow("f")
        with pytest.raises(FlowNotActiveError, match="not found"):
            client.stop_flow("nobody")
        assert client.wait_for_flow("f", ONE_S).status is FlowStatus.TERMINATED


def test_r161_describe_flow_reports_ids_type_status_and_start_time(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        run_id = client.start_flow(flow, "f", 1)
        info = client.describe_flow("f")
        assert (info.flow_id, info.run_id, info.flow_type, info.status) == (
            "f",
            run_id,
            "InboxFlow",
            FlowStatus.RUNNING,
        )
        expected_start = engine.now if mode == "simulation" else datetime.now(UTC)
        assert abs((expected_start - info.started_at).total_seconds()) < 5
        client.stop_flow("f")
        assert client.describe_flow("f").status is FlowStatus.CANCELED
        with pytest.raises(FlowNotFoundError):
            client.describe_flow("nobody")


# -- timers ------------------------------------------------------------------------------------


class Ticker(Step[int]):
    """Waits for an hour-long timer or an inbox message; reports whether the timer fired."""

    def __init__(self) -> None:
        self.gate = Gate()
        self.hold = False

    def wait_for(self, context: Context, n: int) -> Wait:
        if self.hold:
            self.gate.hold()
        return Wait.any_of(
            Timer.by_duration(timedelta(hours=1), condition_id="hour"), INBOX.for_one()
        )

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(context.has_timer_fired())


@pytest.mark.parametrize(
    ("execution", "timer"),
    [
        (StepExecutionId("Ticker"), TimerId.by_condition_id("hour")),
        ("Ticker-1", TimerId.by_condition_index(0)),
    ],
)
def test_r127_skip_timer_fires_a_waiting_timer_now(
    mode: str, execution: Any, timer: TimerId
) -> None:
    flow = LFlow("Tick", Ticker(), schema=SCHEMA)
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.skip_timer("f", execution, timer)
        result = client.wait_for_flow("f", SOON)
        skipped = of_kind(engine.history("f"), EventKind.TIMER_SKIPPED, "Ticker-1")
    assert result.single_output(bool) is True
    assert [e.payload["condition_id"] for e in skipped] == ["hour"]


def test_r128_a_skip_sent_before_the_timer_exists_is_applied_when_it_starts(mode: str) -> None:
    ticker = Ticker()
    ticker.hold = mode == "live"  # in simulation nothing runs before the next client wait
    flow = LFlow("Tick", ticker, schema=SCHEMA)
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 1)
        if ticker.hold:
            assert ticker.gate.arrived()
        client.skip_timer("f", "Ticker-1", TimerId.by_condition_id("hour"))
        ticker.gate.open()
        assert client.wait_for_flow("f", SOON).single_output(bool) is True


class TickThenPark(Ticker):
    """Like Ticker, but notes whether the timer fired and parks the Flow instead of ending it."""

    def execute(self, context: Context, n: int) -> StepDecision:
        NOTE.set(context, f"fired={context.has_timer_fired()}")
        return go_to(ParkOnGo, n)


def test_r129_skipping_a_timer_whose_wait_ended_changes_nothing(mode: str) -> None:
    flow = LFlow("Tick", TickThenPark(), [ParkOnGo()], schema=SCHEMA)
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.publish("f", INBOX, "first")
        client.wait_for_step_completion("f", "TickThenPark-1", SOON)
        client.skip_timer("f", "TickThenPark-1", TimerId.by_condition_id("hour"))
        assert of_kind(engine.history("f"), EventKind.TIMER_SKIPPED) == []
        assert client.get_attribute("f", NOTE) == "fired=False"
        assert client.describe_flow("f").status is FlowStatus.RUNNING


# -- client waits ------------------------------------------------------------------------------


class Charge(Step[int]):
    """Writes the charged amount, then parks the Flow on ``go``."""

    def execute(self, context: Context, n: int) -> StepDecision:
        COUNT.set(context, n)
        return go_to(ParkOnGo, n)


def test_r159_wait_for_step_completion_returns_while_the_flow_keeps_running(mode: str) -> None:
    flow = LFlow("Charges", Charge(), [ParkOnGo()], SCHEMA)
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 7)
        client.wait_for_step_completion("f", StepExecutionId("Charge"), SOON)
        assert client.get_attribute("f", COUNT) == 7
        assert client.describe_flow("f").status is FlowStatus.RUNNING
        options = WaitForStepCompletionOptions(maximum_wait_time=timedelta(seconds=5))
        client.wait_for_step_completion("f", "Charge-1", options)


def test_r159_wait_for_step_completion_waits_for_an_execution_not_created_yet() -> None:
    flow = LFlow("Charges", Charge(), [ParkOnGo()], SCHEMA)
    with engine_in([flow]) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 7)
        timer = threading.Timer(0.2, lambda: client.publish("f", GO, "now"))
        timer.start()
        began = time.monotonic()
        client.wait_for_step_completion("f", "ParkOnGo-1", SOON)
        assert time.monotonic() - began >= 0.15
        timer.join()
        assert client.wait_for_flow("f", SOON).single_output(int) == 7


def test_r159_wait_for_step_completion_times_out_with_wait_handler_timeout(mode: str) -> None:
    flow = LFlow("Charges", Charge(), [ParkOnGo()], SCHEMA)
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 7)
        with pytest.raises(WaitHandlerTimeoutError) as caught:
            client.wait_for_step_completion("f", "ParkOnGo-1", ONE_S)
        with pytest.raises(FlowNotFoundError):
            client.wait_for_step_completion("nobody", "ParkOnGo-1", ONE_S)
    assert caught.value.sub_status is ErrorSubStatus.WAIT_HANDLER_TIMEOUT
    assert "ParkOnGo-1" in str(caught.value)


def test_r159_wait_for_step_completion_on_a_closed_flow_fails_fast_for_a_missing_step() -> None:
    flow = inbox_flow()
    with engine_in([flow]) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 1)
        client.stop_flow("f")
        began = time.monotonic()
        with pytest.raises(FlowNotActiveError):
            client.wait_for_step_completion("f", "Inbox-2", ONE_S)
        assert time.monotonic() - began < 0.5


class SetLater(Step[int]):
    """On ``go``, writes ``count``, a score and the note."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        COUNT.set(context, n)
        SCORES.set(context, "bob", n + 1)
        NOTE.set(context, "approved")
        return go_to(ParkOnGo, n)


def test_r160_wait_for_attribute_match_returns_the_matching_value(mode: str) -> None:
    flow = LFlow("Later", SetLater(), [ParkOnGo()], SCHEMA)
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow, input=7)
        if mode == "live":
            publisher = threading.Timer(0.1, lambda: client.publish("f", GO, "now"))
            publisher.start()
        else:
            client.publish("f", GO, "now")
        value = client.wait_for_attribute_match("f", COUNT, AttributeMatch.greater_than(5), SOON)
        score = client.wait_for_attribute_match(
            "f",
            SCORES,
            "bob",
            AttributeMatch.equal_to(8),
            WaitForAttributeOptions(maximum_wait_time=timedelta(seconds=5)),
        )
        client.wait_for_attribute_equal("f", NOTE, "approved", SOON)
    assert (value, score) == (7, 8)


def test_r160_attribute_waits_time_out_with_long_poll_timeout(mode: str) -> None:
    """A plain timeout ends as LongPollTimeoutError, like wait_for_flow (issue 16, behaviour 3).

    Dex's SDK 1.23 re-polls on LONG_POLL_TIMEOUT and raises RequestTimeoutError when the
    WaitForAttributeOptions.request_timeout budget runs out; that form follows the SDK.
    """
    flow = LFlow("Later", SetLater(), [ParkOnGo()], SCHEMA)
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 7)
        with pytest.raises(LongPollTimeoutError) as caught:
            client.wait_for_attribute_match("f", NOTE, AttributeMatch.equal_to("x"), ONE_S)
        with pytest.raises(LongPollTimeoutError):
            client.wait_for_attribute_equal("f", NOTE, "x", ONE_S)
        with pytest.raises(RequestTimeoutError):
            budget = WaitForAttributeOptions(request_timeout=ONE_S)
            client.wait_for_attribute_match("f", NOTE, AttributeMatch.equal_to("x"), budget)
    assert caught.value.sub_status is ErrorSubStatus.LONG_POLL_TIMEOUT


def test_r160_async_client_attribute_waits_time_out_with_long_poll_timeout(mode: str) -> None:
    """The AsyncClient raises the same LongPollTimeoutError (issue 16, behaviour 3)."""
    flow = LFlow("Later", SetLater(), [ParkOnGo()], SCHEMA)
    with engine_in([flow], mode) as engine:
        engine.client().start_flow(flow, "f", 7)

        async def wait() -> None:
            client = engine.async_client()
            await client.wait_for_attribute_equal("f", NOTE, "x", ONE_S)

        with pytest.raises(LongPollTimeoutError):
            asyncio.run(wait())


def test_r160_attribute_waits_need_an_active_flow_and_a_match(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "f", 1)
        with pytest.raises(TypeError, match="AttributeMatch"):
            client.wait_for_attribute_match("f", COUNT, 1, ONE_S)
        client.stop_flow("f")
        with pytest.raises(FlowNotActiveError):
            client.wait_for_attribute_match("f", COUNT, AttributeMatch.equal_to(1), ONE_S)
        with pytest.raises(FlowNotActiveError):
            client.wait_for_attribute_equal("nobody", COUNT, 1, ONE_S)


# -- search, config, continue-as-new, health ---------------------------------------------------


def test_r161_search_flows_by_flow_type_and_indexed_attribute(mode: str) -> None:
    orders, others = inbox_flow("Orders"), inbox_flow("Others")
    with engine_in([orders, others], mode) as engine:
        client = engine.client()
        for flow_id, status in [("o1", "open"), ("o2", "shipped"), ("o3", "open")]:
            client.start_flow(orders, flow_id, 1, StartFlowOptions().with_attribute(STATUS, status))
        client.start_flow(others, "x1", 1, StartFlowOptions().with_attribute(STATUS, "open"))
        client.stop_flow("o3")  # closed runs are searchable too
        page = client.search_flows("FlowType = 'Orders' AND Status = 'open'", 10)
        every = client.search_flows("FlowType = 'Orders'", 0)
    assert sorted(e.flow_id for e in page.flows) == ["o1", "o3"]
    assert page.next_page_token == ""
    assert {e.flow_id: e.status for e in page.flows}["o3"] is FlowStatus.CANCELED
    assert page.flows[0].indexed_attributes["Status"].data == "open"
    assert len(every.flows) == 3


def test_r161_search_flows_pages_through_results(mode: str) -> None:
    flow = inbox_flow("Orders")
    with engine_in([flow], mode) as engine:
        client = engine.client()
        for n in range(5):
            client.start_flow(flow, f"o{n}", 1)
        seen: list[str] = []
        token = ""
        for _ in range(5):
            page = client.search_flows("FlowType = 'Orders'", 2, token)
            seen.extend(e.flow_id for e in page.flows)
            token = page.next_page_token
            if not token:
                break
    assert sorted(seen) == [f"o{n}" for n in range(5)]


def test_r161_search_flows_rejects_a_negative_page_size_and_bad_queries(mode: str) -> None:
    with engine_in([inbox_flow()], mode) as engine:
        client = engine.client()
        with pytest.raises(ValueError, match="page_size"):
            client.search_flows("FlowType = 'Orders'", -1)
        with pytest.raises(ValueError, match="search_flows"):
            client.search_flows("FlowType is Orders", 10)


def test_r163_update_flow_config_merges_into_an_active_flow_only(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        override = FlowConfig(continue_as_new_threshold=5)
        client.start_flow(flow, "f", 1, StartFlowOptions(config_override=override))
        client.update_flow_config("f", FlowConfig(step_durability=StepDurability.SYNC))
        # FlowState does not show the config; the run's own record is the only place to look.
        config = engine._rt.runs["f"].config
        assert (config.continue_as_new_threshold, config.step_durability) == (
            5,
            StepDurability.SYNC,
        )
        client.stop_flow("f")
        with pytest.raises(FlowNotActiveError):
            client.update_flow_config("f", FlowConfig(step_durability=StepDurability.ASYNC))


def test_r163_trigger_continue_as_new_is_transparent_and_needs_an_active_flow(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.trigger_continue_as_new("f")
        client.publish("f", INBOX, "after")
        assert client.wait_for_flow("f", SOON).single_output(str) == "after"
        with pytest.raises(FlowNotActiveError):
            client.trigger_continue_as_new("f")
        with pytest.raises(FlowNotActiveError):
            client.trigger_continue_as_new("nobody")


def test_health_check_and_closing_a_client(mode: str) -> None:
    flow = inbox_flow()
    with engine_in([flow], mode) as engine:
        with engine.client() as client:
            assert client.health_check() is True
            client.start_flow(flow, "f", 1)
        assert client.health_check() is False
        client.close()  # idempotent
        for call in (
            lambda: client.describe_flow("f"),
            lambda: client.publish("f", INBOX, "m"),
            lambda: client.invoke_rpc(lambda: None, "f"),
        ):
            with pytest.raises(RuntimeError, match="closed"):
                call()
        assert engine.client().describe_flow("f").status is FlowStatus.RUNNING


# -- AsyncClient -------------------------------------------------------------------------------


def test_async_client_offers_the_same_calls_as_coroutines(mode: str) -> None:
    flow = LFlow("Later", SetLater(), [ParkOnGo()], SCHEMA)

    async def main() -> dict[str, Any]:
        with engine_in([flow], mode) as engine:
            async with engine.async_client() as client:
                run_id = await client.start_flow(flow, "f", 7)
                await client.set_attribute("f", NOTE, "pending")
                note = await client.get_attribute("f", NOTE)
                await client.publish("f", GO, "now")
                value = await client.wait_for_attribute_match(
                    "f", COUNT, AttributeMatch.equal_to(7), SOON
                )
                await client.wait_for_step_completion("f", "SetLater-1", SOON)
                info = await client.describe_flow("f")
                page = await client.search_flows("FlowType = 'Later'", 10)
                with pytest.raises(LongPollTimeoutError):
                    await client.wait_for_flow("f", timedelta(milliseconds=200))
                await client.publish("f", GO, "again")
                result = await client.wait_for_flow("f", SOON)
                return {
                    "run": run_id == info.run_id,
                    "note": note,
                    "value": value,
                    "found": [e.flow_id for e in page.flows],
                    "output": result.single_output(int),
                }

    assert asyncio.run(main()) == {
        "run": True,
        "note": "pending",
        "value": 7,
        "found": ["f"],
        "output": 7,
    }
