"""Engine rules R48-R62: Channels (engine-semantics.md §4)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest

from dexviz import (
    AsyncContext,
    Attribute,
    Channel,
    ChannelMap,
    ChannelMessageNotFoundError,
    Context,
    EventKind,
    Flow,
    FlowErrorType,
    FlowNotActiveError,
    FlowStatus,
    PersistenceSchema,
    RPCResult,
    Step,
    StepDecision,
    StepList,
    StepMovement,
    StepOptions,
    Timer,
    Wait,
    WorkerInvocationError,
    dead_end,
    force_complete_if_channels_empty,
    go_to,
    go_to_many,
    graceful_complete,
    rpc,
    simulate,
)
from tests.engine.flows_a import (
    NO_RETRY,
    AdHocFlow,
    active,
    failed_attempts,
    of_kind,
    queued,
    run_now,
    started,
)

CH = Channel("ch", str)
TOK = Channel("tok", str)
UNDECLARED = Channel("undeclared", str)
ORDERS = ChannelMap("orders", str)
NOTE = Attribute("note", str)


class Consume(Step[int]):
    """Waits for ``n`` messages of ``ch`` and records them."""

    def __init__(self) -> None:
        self.got: list[tuple[str, ...]] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(CH.for_n(n))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.got.append(tuple(CH.results(context)))
        return dead_end()


# -- R48 -----------------------------------------------------------------------------------


class PublishUndeclared(Step[int]):
    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        UNDECLARED.publish(context, "x")
        return dead_end()


def test_r48_publish_to_undeclared_channel_fails_the_attempt() -> None:
    run = simulate(AdHocFlow("Undeclared", PublishUndeclared(), schema=[CH]), 1)
    failures = failed_attempts(run.history)
    assert len(failures) == 1 and "'undeclared'" in failures[0]["error_message"]
    assert run.result.error_type is FlowErrorType.WORKER_API_FAILED


class SizeUndeclared(PublishUndeclared):
    def execute(self, context: Context, n: int) -> StepDecision:
        UNDECLARED.size(context)
        return dead_end()


def test_r48_reading_an_undeclared_channel_fails_the_attempt() -> None:
    run = simulate(AdHocFlow("Undeclared", SizeUndeclared(), schema=[CH]), 1)
    assert "'undeclared'" in failed_attempts(run.history)[0]["error_message"]
    assert run.result.status is FlowStatus.FAILED


class WaitUndeclared(PublishUndeclared):
    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(UNDECLARED.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


def test_r48_waiting_on_an_undeclared_channel_fails_the_wait_for() -> None:
    run = simulate(AdHocFlow("Undeclared", WaitUndeclared(), schema=[CH]), 1)
    failures = failed_attempts(run.history)
    assert failures and "'undeclared'" in failures[0]["error_message"]
    assert of_kind(run.history, EventKind.STEP_WAIT_FOR_COMPLETED) == []


def test_r48_client_publish_to_undeclared_channel_is_rejected() -> None:
    engine = started(AdHocFlow("Undeclared", Consume(), schema=[CH]), 1)
    with pytest.raises(ValueError, match="'undeclared'"):
        engine.client().publish("flow-1", UNDECLARED, "x")
    assert of_kind(engine.history("flow-1"), EventKind.CHANNEL_EXTERNAL_PUBLISH) == []


# -- R49 -----------------------------------------------------------------------------------


class OrderWaiter(Step[str]):
    def __init__(self) -> None:
        self.got: list[tuple[str, tuple[str, ...]]] = []

    def wait_for(self, context: Context, key: str) -> Wait:
        return Wait.until(ORDERS.for_one(key))

    def execute(self, context: Context, key: str) -> StepDecision:
        self.got.append((key, tuple(ORDERS.results(context, key))))
        return dead_end()


class TwoOrderWaiters(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(OrderWaiter, "a"), StepMovement.of(OrderWaiter, "b"))


def test_r49_channel_map_instances_are_independent_queues() -> None:
    waiter = OrderWaiter()
    engine = started(AdHocFlow("Map", TwoOrderWaiters(), [waiter], [ORDERS]), 0)
    engine.run_until_idle()
    engine.client().publish("flow-1", ORDERS, "a", "for-a")
    engine.run_until_idle()
    assert waiter.got == [("a", ("for-a",))]
    assert list(active(engine).values()) == ["waiting"]
    engine.client().publish("flow-1", ORDERS, "c", "for-c")
    engine.run_until_idle()
    assert queued(engine, "orders/c") == ("for-c",)
    assert len(waiter.got) == 1


def test_r49_physical_name_escapes_the_key() -> None:
    assert ORDERS.physical_name("order 42") == "orders/order%2042"
    assert ORDERS.for_one("a/b").physical_name == "orders/a%2Fb"  # '/' is escaped (issue 25, 2)
    with pytest.raises(ValueError):
        ORDERS.for_one("")


# -- R50, R51 ------------------------------------------------------------------------------


class PublishMany(Step[int]):
    """WaitFor publishes w; Execute publishes a, b, c."""

    def wait_for(self, context: Context, n: int) -> Wait:
        CH.publish(context, "w")
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        for value in ("a", "b", "c"):
            CH.publish(context, value)
        return dead_end()


class PublishFlow(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(PublishMany())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(CH)

    @rpc
    def send(self, context: Context, value: str) -> None:
        CH.publish(context, value)


def test_r50_every_publisher_appends_in_call_order() -> None:
    flow = PublishFlow()
    engine = started(flow, 1)
    engine.run_until_idle()
    engine.client().invoke_rpc(flow.send, "flow-1", "r")
    engine.client().publish("flow-1", CH, "x", "y")
    assert queued(engine, "ch") == ("w", "a", "b", "c", "r", "x", "y")
    publishers = [
        e.payload["publisher"]
        for e in of_kind(engine.history("flow-1"), EventKind.MESSAGE_PUBLISHED)
    ]
    assert publishers == ["PublishMany-1"] * 4 + ["rpc:send", "client", "client"]


class PublishThenRaise(Step[int]):
    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        CH.publish(context, "lost")
        raise RuntimeError("after publishing")


def test_r51_failed_method_publishes_nothing() -> None:
    run = simulate(AdHocFlow("AllOrNothing", PublishThenRaise(), schema=[CH]), 1)
    assert run.result.status is FlowStatus.FAILED
    assert queued(run.engine, "ch") == ()
    assert of_kind(run.history, EventKind.MESSAGE_PUBLISHED) == []


# -- R52 -----------------------------------------------------------------------------------


def test_r52_client_batch_is_one_ordered_commit() -> None:
    engine = started(AdHocFlow("Batch", Consume(), schema=[CH]), 5)
    run_now(engine)
    before = len(engine.history("flow-1"))
    engine.client().publish("flow-1", CH, "x", "y")
    new = engine.history("flow-1")[before:]
    external = of_kind(new, EventKind.CHANNEL_EXTERNAL_PUBLISH)
    assert len(external) == 1
    assert [m["value"] for m in external[0].payload["messages"]] == ["x", "y"]
    assert queued(engine, "ch") == ("x", "y")


def test_r52_empty_batch_does_nothing() -> None:
    engine = started(AdHocFlow("Batch", Consume(), schema=[CH]), 5)
    run_now(engine)
    before = len(engine.history("flow-1"))
    engine.client().publish("flow-1", CH)
    assert len(engine.history("flow-1")) == before


def test_r52_publish_needs_an_active_flow() -> None:
    run = simulate(AdHocFlow("Closed", Finisher(), schema=[CH]), 1)
    assert run.result.status is FlowStatus.COMPLETED
    with pytest.raises(FlowNotActiveError):
        run.engine.client().publish("flow-1", CH, "late")
    with pytest.raises(FlowNotActiveError):
        run.engine.client().publish("no-such-flow", CH, "late")
    assert queued(run.engine, "ch") == ()


class Finisher(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete()


# -- R53, R54, R55 -------------------------------------------------------------------------


class Sleepy(Step[int]):
    """Waits 30 days, then hands over to Consume."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(days=30)))

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Consume, n)


def test_r53_messages_do_not_expire() -> None:
    consume = Consume()
    engine = started(AdHocFlow("Old", Sleepy(), [consume], [CH]), 1)
    engine.client().publish("flow-1", CH, "old news")
    engine.run_until_idle()
    assert engine.time_ns - engine.history("flow-1").start.time_ns >= 30 * 86400 * 10**9  # type: ignore[union-attr]
    assert consume.got == [("old news",)]


def test_r54_consumption_is_fifo_from_the_head() -> None:
    consume = Consume()
    engine = started(AdHocFlow("Fifo", consume, schema=[CH]), 2)
    engine.client().publish("flow-1", CH, "1", "2", "3")
    engine.run_until_idle()
    assert consume.got == [("1", "2")]
    assert queued(engine, "ch") == ("3",)


class TwoConsumers(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Consume, 1), StepMovement.of(Consume, 1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_r55_no_broadcast(seed: int) -> None:
    consume = Consume()
    engine = started(AdHocFlow("NoCopy", TwoConsumers(), [consume], [CH]), 0, seed=seed)
    engine.run_until_idle()
    for value in ("m1", "m2"):
        engine.client().publish("flow-1", CH, value)
        engine.run_until_idle()
    assert sorted(consume.got) == [("m1",), ("m2",)]
    consumed = of_kind(engine.history("flow-1"), EventKind.MESSAGE_CONSUMED)
    assert len(consumed) == len({e.payload["message_id"] for e in consumed}) == 2


# -- R56 -----------------------------------------------------------------------------------


class SlowConsumer(Step[int]):
    """Takes one message and holds it for 10 virtual seconds in Execute."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(CH.for_one())

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(10)
        return dead_end()


class EmptyCheck(Step[int]):
    """After 1 s, force-completes if ``ch`` is empty, else moves to Fallback."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=1)))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.sizes.append(CH.size(context))
        return force_complete_if_channels_empty("done", StepMovement.of(Fallback, n), CH)


class Fallback(Step[int]):
    def __init__(self) -> None:
        self.runs = 0

    def execute(self, context: Context, n: int) -> StepDecision:
        self.runs += 1
        return dead_end()


class StartReservation(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        CH.publish(context, "only")
        return go_to_many(StepMovement.of(SlowConsumer, n), StepMovement.of(EmptyCheck, n))


def test_r56_reserved_messages_count_as_non_empty_but_not_in_size() -> None:
    check, fallback = EmptyCheck(), Fallback()
    flow = AdHocFlow("Reserve", StartReservation(), [SlowConsumer(), check, fallback], [CH])
    engine = started(flow, 1)
    engine.run(until=lambda e: e.kind == EventKind.WAIT_SATISFIED and e.step_type == "SlowConsumer")
    state = engine.flow_state("flow-1")
    assert state.channels["ch"] == ()
    holder = [a for a in state.active_executions if a.execution_id == "SlowConsumer-1"][0]
    assert holder.reserved == {"ch": ("only",)}
    engine.run_until_idle()
    assert check.sizes == [0]
    assert fallback.runs == 1
    assert engine.result("flow-1").status is FlowStatus.RUNNING
    decision = of_kind(engine.history("flow-1"), EventKind.STEP_EXECUTE_COMPLETED, "EmptyCheck-1")
    assert decision[0].payload["decision"]["channels_empty"] is False


# -- R57 -----------------------------------------------------------------------------------


class Holder(Step[int]):
    """Takes ``n`` tokens and holds them for 100 virtual seconds."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(TOK.for_n(n))

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:  # type: ignore[override]
        await asyncio.sleep(100)
        TOK.publish(context, "never")
        return dead_end()


class Taker(Step[int]):
    def __init__(self) -> None:
        self.got: list[tuple[str, ...]] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(TOK.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        self.got.append(tuple(TOK.results(context)))
        return dead_end()


class Canceler(Step[int]):
    """After 10 s, cancels every Holder and starts a Taker."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=10)))

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to(Taker, n).with_canceling_steps(Holder)


class StartHolder(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        for i in range(n):
            TOK.publish(context, f"T{i + 1}")
        return go_to_many(StepMovement.of(Holder, n), StepMovement.of(Canceler, n))


def holder_flow(taker: Taker) -> AdHocFlow:
    return AdHocFlow("Return", StartHolder(), [Holder(), Canceler(), taker], [TOK])


@pytest.mark.parametrize("tokens", [1, 2])
def test_r57_canceled_consumer_returns_messages_to_front(tokens: int) -> None:
    taker = Taker()
    engine = started(holder_flow(taker), tokens)
    engine.run(until=lambda e: e.kind == EventKind.WAIT_SATISFIED and e.step_type == "Holder")
    assert queued(engine, "tok") == ()
    engine.client().publish("flow-1", TOK, "U")
    engine.run(until=EventKind.EXECUTION_CANCELED)
    originals = tuple(f"T{i + 1}" for i in range(tokens))
    assert queued(engine, "tok") == (*originals, "U")
    engine.run_until_idle()
    assert taker.got == [("T1",)]
    assert queued(engine, "tok") == (*originals[1:], "U")
    returned = of_kind(engine.history("flow-1"), EventKind.MESSAGE_RETURNED)
    assert [e.execution_id for e in returned] == ["Holder-1"] * tokens
    assert "never" not in queued(engine, "tok")


def test_r57_fault_cancel_returns_messages_to_front() -> None:
    engine = started(AdHocFlow("Return", StartHolder(), [Holder(), Canceler(), Taker()], [TOK]), 1)
    engine.run(until=lambda e: e.kind == EventKind.WAIT_SATISFIED and e.step_type == "Holder")
    engine.client().publish("flow-1", TOK, "U")
    assert engine.cancel_execution("flow-1", "Holder-1")
    assert queued(engine, "tok") == ("T1", "U")


# -- R58 -----------------------------------------------------------------------------------


class PublishAndCancel(Step[int]):
    """After 1 s, publishes "m" and cancels every Consume in the same commit."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=1)))

    def execute(self, context: Context, n: int) -> StepDecision:
        CH.publish(context, "m")
        return dead_end().with_canceling_steps(Consume)


class StartConsumeAndCanceler(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Consume, 1), StepMovement.of(PublishAndCancel, 1))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_r58_step_canceled_by_a_commit_never_gets_its_messages(seed: int) -> None:
    consume = Consume()
    flow = AdHocFlow("NoSteal", StartConsumeAndCanceler(), [consume, PublishAndCancel()], [CH])
    run = simulate(flow, 0, seed=seed)
    assert consume.got == []
    canceled = of_kind(run.history, EventKind.EXECUTION_CANCELED)
    assert [(e.execution_id, e.payload["phase"]) for e in canceled] == [("Consume-1", "waiting")]
    assert queued(run.engine, "ch") == ("m",)
    assert of_kind(run.history, EventKind.MESSAGE_CONSUMED) == []


# -- R59, R60 ------------------------------------------------------------------------------


class SizeProbe(Step[int]):
    def __init__(self) -> None:
        self.sizes: list[int] = []

    def execute(self, context: Context, n: int) -> StepDecision:
        self.sizes.append(CH.size(context))
        CH.publish(context, "own")
        self.sizes.append(CH.size(context))
        return dead_end()


class SizeFlow(Flow[int]):
    def __init__(self) -> None:
        self.probe = SizeProbe()

    def get_steps(self) -> StepList[int]:
        return StepList.without_start_step(self.probe)

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(CH, ORDERS)

    @rpc
    def size_after_publish(self, context: Context) -> RPCResult[int]:
        CH.publish(context, "rpc")
        return RPCResult(CH.size(context))

    @rpc
    def order_keys(self, context: Context) -> RPCResult[list[str]]:
        ORDERS.publish(context, "c", "new")
        keys = list(ORDERS.get_all_instance_keys(context))
        return RPCResult(keys + [str(ORDERS.get_map_size(context))])

    @rpc
    def start_probe(self, context: Context) -> RPCResult[None]:
        return RPCResult(None, next_steps=(StepMovement.of(SizeProbe, 0),))


def test_r59_rpc_size_counts_its_own_publishes() -> None:
    flow = SizeFlow()
    engine = started(flow)
    engine.client().publish("flow-1", CH, "m1", "m2")
    assert engine.client().invoke_rpc(flow.size_after_publish, "flow-1") == 3
    assert queued(engine, "ch") == ("m1", "m2", "rpc")


def test_r59_step_size_reads_the_queue_newer_semantics() -> None:
    # dexviz follows the newer material (§19): every method gets Channel sizes.
    flow = SizeFlow()
    engine = started(flow)
    engine.client().publish("flow-1", CH, "m1", "m2")
    engine.client().invoke_rpc(flow.start_probe, "flow-1")
    engine.run_until_idle()
    assert flow.probe.sizes == [2, 3]


class ChannelMapDrain(Step[str]):
    def wait_for(self, context: Context, key: str) -> Wait:
        return Wait.until(ORDERS.for_one(key))

    def execute(self, context: Context, key: str) -> StepDecision:
        return dead_end()


class KeysInStep(Step[int]):
    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        ORDERS.get_all_instance_keys(context)
        return dead_end()


class KeysFlow(SizeFlow):
    def get_steps(self) -> StepList[int]:
        return StepList.without_start_step(ChannelMapDrain())

    @rpc
    def drain_a(self, context: Context) -> RPCResult[None]:
        return RPCResult(None, next_steps=(StepMovement.of(ChannelMapDrain, "a"),))


def test_r60_channel_map_keys_in_rpc_sorted_non_empty_with_own_publishes() -> None:
    flow = KeysFlow()
    engine = started(flow)
    client = engine.client()
    client.publish("flow-1", ORDERS, "b", "kept")
    client.publish("flow-1", ORDERS, "a", "drained")
    client.invoke_rpc(flow.drain_a, "flow-1")
    engine.run_until_idle()
    assert queued(engine, "orders/a") == ()
    assert client.invoke_rpc(flow.order_keys, "flow-1") == ["b", "c", "2"]


def test_r60_channel_map_keys_are_rpc_only() -> None:
    run = simulate(AdHocFlow("Keys", KeysInStep(), schema=[ORDERS]), 0)
    failures = failed_attempts(run.history, "KeysInStep-1")
    assert failures and "RPC" in failures[0]["error_message"]


# -- R61, R62 ------------------------------------------------------------------------------


def test_r61_every_message_gets_a_unique_id() -> None:
    engine = started(AdHocFlow("Ids", Consume(), schema=[CH]), 9)
    engine.client().publish("flow-1", CH, "a", "b", "c")
    ids = [m.message_id for m in engine.client().get_channel_messages("flow-1", CH)]
    assert len(set(ids)) == 3
    published = of_kind(engine.history("flow-1"), EventKind.MESSAGE_PUBLISHED)
    assert [e.payload["message_id"] for e in published] == ids


def test_r61_message_ids_are_uuid7() -> None:
    engine = started(AdHocFlow("Ids", Consume(), schema=[CH]), 9)
    engine.client().publish("flow-1", CH, "a", "b")
    for message in engine.client().get_channel_messages("flow-1", CH):
        assert uuid.UUID(message.message_id).version == 7


class Pending(Step[int]):
    """Loads ``ch``; reads the pending messages, deletes the first and a missing id, writes."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []

    def get_step_options(self) -> StepOptions:
        return StepOptions(execute_load_channels=(CH,))

    def execute(self, context: Context, n: int) -> StepDecision:
        pending = CH.pending_messages(context)
        self.seen.append(tuple(m.value for m in pending))
        if pending:
            CH.delete(context, pending[0].message_id)
        CH.delete(context, "no-such-message")
        NOTE.set(context, "written")
        return dead_end()


def test_r61_step_reads_pending_and_deletes_best_effort() -> None:
    step = Pending()
    engine = started(AdHocFlow("Pending", step, schema=[CH, NOTE]), 1)
    engine.client().publish("flow-1", CH, "a", "b")
    engine.run_until_idle()
    assert step.seen == [("a", "b")]
    assert queued(engine, "ch") == ("b",)
    assert engine.client().get_attribute("flow-1", NOTE) == "written"


def test_r61_selected_empty_channel_reads_empty() -> None:
    step = Pending()
    simulate(AdHocFlow("Pending", step, schema=[CH, NOTE]), 1)
    assert step.seen == [()]


class NotLoaded(PublishUndeclared):
    def execute(self, context: Context, n: int) -> StepDecision:
        CH.pending_messages(context)
        return dead_end()


def test_r61_unselected_channel_is_not_loaded() -> None:
    run = simulate(AdHocFlow("Pending", NotLoaded(), schema=[CH]), 1)
    failures = failed_attempts(run.history)
    assert failures[0]["error_type"].endswith("ChannelMessagesNotLoadedError")


class TxFlow(Flow[int]):
    def get_steps(self) -> StepList[int]:
        return StepList.start_step(Consume())

    def get_persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(CH, NOTE)

    @rpc(is_transactional=True, load_channels=[CH])
    def delete_and_note(self, context: Context, message_id: str) -> None:
        NOTE.set(context, "should not stick")
        CH.delete(context, message_id)

    @rpc(is_transactional=True, load_channels=[CH])
    def edit(self, context: Context, value: str) -> RPCResult[str]:
        target = next(m for m in CH.pending_messages(context) if m.value == value)
        CH.delete(context, target.message_id)
        CH.publish(context, value + "'")
        return RPCResult(target.message_id)

    @rpc
    def peek(self, context: Context) -> RPCResult[int]:
        return RPCResult(len(CH.pending_messages(context)))


def test_r61_transactional_rpc_deleting_consumed_message_aborts() -> None:
    flow = TxFlow()
    engine = started(flow, 1)
    engine.client().publish("flow-1", CH, "a")
    engine.run_until_idle()
    consumed_id = of_kind(engine.history("flow-1"), EventKind.MESSAGE_CONSUMED)[0].payload[
        "message_id"
    ]
    with pytest.raises(ChannelMessageNotFoundError):
        engine.client().invoke_rpc(flow.delete_and_note, "flow-1", consumed_id)
    assert engine.client().get_attribute("flow-1", NOTE) is None


def test_r61_rpc_without_load_channels_is_not_loaded() -> None:
    flow = TxFlow()
    engine = started(flow, 5)
    with pytest.raises(WorkerInvocationError, match="ChannelMessagesNotLoadedError"):
        engine.client().invoke_rpc(flow.peek, "flow-1")


def test_r61_client_delete_of_consumed_message_is_not_found() -> None:
    flow = TxFlow()
    engine = started(flow, 1)
    engine.client().publish("flow-1", CH, "a")
    engine.run_until_idle()
    consumed = of_kind(engine.history("flow-1"), EventKind.MESSAGE_CONSUMED)[0]
    client = engine.client()
    with pytest.raises(ChannelMessageNotFoundError):
        client.delete_channel_message(  # type: ignore[attr-defined]
            "flow-1", CH, consumed.payload["message_id"]
        )


def test_r62_editing_a_message_deletes_it_and_appends_a_replacement() -> None:
    flow = TxFlow()
    engine = started(flow, 9)
    engine.client().publish("flow-1", CH, "a", "b", "c")
    old_id = engine.client().invoke_rpc(flow.edit, "flow-1", "b")
    messages = engine.client().get_channel_messages("flow-1", CH)
    assert [m.value for m in messages] == ["a", "c", "b'"]
    assert messages[-1].message_id != old_id
