"""The live engine (issue 3): wall-clock time, its threads, cancellation of running handlers, and
closing (engine-semantics R106, R107, R125, R148, R152, R155; DESIGN.md "Live mode")."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import timedelta

import pytest

from dexviz import (
    AsyncContext,
    Attribute,
    Channel,
    Context,
    DexServiceError,
    Engine,
    EventKind,
    FaultPlan,
    FlowErrorType,
    FlowStatus,
    LongPollTimeoutError,
    RPCResult,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    StopFlowOptions,
    Timer,
    Wait,
    current_time_millis,
    dead_end,
    go_to,
    go_to_many,
    graceful_complete,
    rpc,
)
from dexviz.sdk.attribute_match import AttributeMatch
from tests.engine.flows_live import (
    NO_RETRY,
    SOON,
    Gate,
    LFlow,
    dexviz_threads,
    engine_in,
    of_kind,
    reach_kind,
    retries,
    wait_until,
)

MARK = Attribute("mark", int)
GO = Channel("go", str)
REPLY = Channel("reply", str)


class Park(Step[int]):
    """Waits on ``go`` (nobody publishes unless the test does), then completes with the message."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(GO.results(context)[0])


class ParkFlow(LFlow):
    """A parked Flow with an RPC, for the closed-engine checks."""

    def __init__(self) -> None:
        super().__init__("ParkFlow", Park(), schema=[MARK, GO])

    @rpc
    def read(self, context: Context) -> RPCResult[int]:
        return RPCResult(MARK.get(context))


# -- threads -----------------------------------------------------------------------------------


class SyncProbe(Step[int]):
    """Records the thread its Execute runs on, then moves to the async probe."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    def execute(self, context: Context, n: int) -> StepDecision:
        self.threads.append(threading.current_thread().name)
        return go_to(AsyncProbe, n)


class AsyncProbe(Step[int]):
    """Records the thread and event loop its coroutine Execute runs on."""

    def __init__(self) -> None:
        self.threads: list[str] = []
        self.loops: list[asyncio.AbstractEventLoop] = []

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:
        self.threads.append(threading.current_thread().name)
        self.loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        return graceful_complete(n)


def probe_flow() -> tuple[LFlow, SyncProbe, AsyncProbe]:
    sync, coro = SyncProbe(), AsyncProbe()
    return LFlow("Probes", sync, [coro]), sync, coro


def test_live_engine_runs_sync_handlers_in_its_pool_and_coroutines_on_its_loop() -> None:
    flow, sync, coro = probe_flow()
    with engine_in([flow]) as engine:
        assert "dexviz-engine" in [t.name for t in dexviz_threads()]
        client = engine.client()
        client.start_flow(flow, "p", 7)
        assert client.wait_for_flow("p", SOON).single_output(int) == 7
    assert sync.threads[0].startswith("dexviz-handler")
    assert coro.threads == ["dexviz-asyncio"]


def test_async_client_made_in_a_running_loop_runs_coroutines_on_that_loop() -> None:
    flow, sync, coro = probe_flow()

    async def main() -> tuple[int, asyncio.AbstractEventLoop]:
        with engine_in([flow]) as engine:
            client = engine.async_client()
            await client.start_flow(flow, "p", 3)
            result = await client.wait_for_flow("p", SOON)
            return result.single_output(int), asyncio.get_running_loop()

    output, loop = asyncio.run(main())
    assert output == 3
    assert coro.loops == [loop]
    assert coro.threads == [threading.current_thread().name]
    assert sync.threads[0].startswith("dexviz-handler")


class Meet(Step[int]):
    """Both branches must be inside Execute at once to pass the barrier."""

    def __init__(self) -> None:
        self.barrier = threading.Barrier(2, timeout=3)

    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        self.barrier.wait()
        return graceful_complete(n)


class FanOut(Step[int]):
    """Starts two Meet branches."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Meet, 1), StepMovement.of(Meet, 2))


def test_live_sync_handlers_run_concurrently() -> None:
    flow = LFlow("Meeting", FanOut(), [Meet()])
    with engine_in([flow]) as engine:
        client = engine.client()
        client.start_flow(flow, "m", 0)
        result = client.wait_for_flow("m", SOON)
    assert result.status is FlowStatus.COMPLETED
    assert sorted(result.outputs) == [1, 2]  # type: ignore[type-var]


class Echo(Step[int]):
    """Completes with its input doubled."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n * 2)


def test_many_threads_start_and_await_flows_on_one_engine() -> None:
    flow = LFlow("Echo", Echo())
    outputs: dict[int, int] = {}
    with engine_in([flow]) as engine:
        client = engine.client()

        def run(n: int) -> None:
            client.start_flow(flow, f"echo-{n}", n)
            outputs[n] = client.wait_for_flow(f"echo-{n}", SOON).single_output(int)

        threads = [threading.Thread(target=run, args=(n,)) for n in range(24)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
    assert outputs == {n: 2 * n for n in range(24)}


class Clock(Step[int]):
    """Records current_time_millis() next to the wall clock."""

    def __init__(self) -> None:
        self.readings: list[tuple[int, int]] = []

    def execute(self, context: Context, n: int) -> StepDecision:
        self.readings.append((current_time_millis(), time.time_ns() // 1_000_000))
        return graceful_complete(n)


def test_current_time_millis_reads_the_wall_clock_in_live_handlers() -> None:
    step = Clock()
    flow = LFlow("Clock", step)
    with engine_in([flow]) as engine:
        client = engine.client()
        client.start_flow(flow, "c", 1)
        client.wait_for_flow("c", SOON)
    engine_ms, wall_ms = step.readings[0]
    assert abs(wall_ms - engine_ms) < 1000


def test_live_history_says_it_was_recorded_live() -> None:
    flow = LFlow("Echo", Echo())
    with engine_in([flow]) as engine:
        client = engine.client()
        client.start_flow(flow, "e", 1)
        client.wait_for_flow("e", SOON)
        started = of_kind(engine.history("e"), EventKind.FLOW_STARTED_OR_CONTINUED)[0]
    assert started.payload["mode"] == "live"  # docs/history-format.md


# -- handlers that call the Client --------------------------------------------------------------


class CallChild(Step[int]):
    """Starts a child Flow through the Client from inside Execute, then awaits its reply."""

    def __init__(self) -> None:
        self.client: object = None
        self.child: object = None

    def execute(self, context: Context, n: int) -> StepDecision:
        self.client.start_flow(self.child, f"child-of-{context.flow_id}", context.flow_id)  # type: ignore[attr-defined]
        return go_to(AwaitReply, n)


class AwaitReply(Step[int]):
    """Completes with the child's reply."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(REPLY.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(f"{REPLY.results(context)[0]}-{n}")


class Reply(Step[str]):
    """Publishes to its parent through the Client."""

    def __init__(self) -> None:
        self.client: object = None

    def execute(self, context: Context, parent: str) -> StepDecision:
        self.client.publish(parent, REPLY, f"hello from {context.flow_id}")  # type: ignore[attr-defined]
        return graceful_complete()


@pytest.mark.parametrize("mode", ["simulation", "live"])
def test_handlers_may_call_the_client_reentrantly(mode: str) -> None:
    call, reply = CallChild(), Reply()
    parent = LFlow("Parent", call, [AwaitReply()], [REPLY])
    child = LFlow("Child", reply)
    with engine_in([parent, child], mode) as engine:
        client = engine.client()
        call.client = reply.client = client
        call.child = child
        client.start_flow(parent, "p", 5)
        result = client.wait_for_flow("p", SOON)
        child_result = client.wait_for_flow("child-of-p", SOON)
    assert result.single_output(str) == "hello from child-of-p-5"
    assert child_result.status is FlowStatus.COMPLETED


# -- wall-clock time ----------------------------------------------------------------------------


class Sleep5(Step[int]):
    """Waits on a 5 s timer."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(Timer.by_duration(timedelta(seconds=5)))

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(context.has_timer_fired())


@pytest.mark.slow
def test_r125_a_5s_timer_completes_after_4_to_7_wall_seconds() -> None:
    flow = LFlow("Sleep5", Sleep5())
    with engine_in([flow]) as engine:
        client = engine.client()
        began = time.monotonic()
        client.start_flow(flow, "t", 1)
        result = client.wait_for_flow("t", timedelta(seconds=10))
        elapsed = time.monotonic() - began
    assert result.single_output(bool) is True
    assert 4.0 <= elapsed <= 7.0


def test_r155_wait_for_flow_with_1s_timeout_raises_long_poll_timeout_within_2s() -> None:
    flow = ParkFlow()
    with engine_in([flow]) as engine:
        client = engine.client()
        client.start_flow(flow, "w", 1)
        began = time.monotonic()
        with pytest.raises(LongPollTimeoutError) as caught:
            client.wait_for_flow("w", timedelta(seconds=1))
        elapsed = time.monotonic() - began
        assert client.describe_flow("w").status is FlowStatus.RUNNING
    assert 0.9 <= elapsed < 2.0
    assert caught.value.flow_id == "w"


# -- canceling running handlers ---------------------------------------------------------------


class Fork(Step[int]):
    """Starts a Sleeper branch and a Canceler branch."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Sleeper, n), StepMovement.of(Canceler, n))


class Sleeper(Step[int]):
    """A coroutine Execute that sleeps; when cancelled it still stages a write and decides.

    Its heartbeat timeout is what lets a cancel request reach it (R107 as corrected).
    """

    def __init__(self) -> None:
        self.started = threading.Event()
        self.log: list[tuple[str, bool]] = []

    def get_step_options(self) -> StepOptions:
        return StepOptions(heartbeat_timeout=timedelta(seconds=1))

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:
        self.started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.log.append(("cancelled", context.is_cancellation_requested()))
            MARK.set(context, 99)
            return go_to(After, n)  # a late result: the engine must drop it (R152)
        MARK.set(context, 1)
        return dead_end()


class ForkSync(Step[int]):
    """Starts a BlockedSync branch and a Canceler branch."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(BlockedSync, n), StepMovement.of(Canceler, n))


class BlockedSync(Step[int]):
    """A sync Execute held at a gate; once let through it writes and decides (too late).

    Its heartbeat timeout lets the cancel request reach it (R107 as corrected).
    """

    def __init__(self) -> None:
        self.gate = Gate()
        self.log: list[tuple[str, bool]] = []

    def get_step_options(self) -> StepOptions:
        return StepOptions(heartbeat_timeout=timedelta(seconds=1))

    def execute(self, context: Context, n: int) -> StepDecision:
        self.gate.hold()
        MARK.set(context, 99)
        self.log.append(("returned", context.is_cancellation_requested()))
        return go_to(After, n)


class Canceler(Step[int]):
    """On ``go``, cancels every execution of its target Step class."""

    def __init__(self, target: type) -> None:
        self.target = target

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end().with_canceling_steps(self.target)


class After(Step[int]):
    """Must never run: only a discarded late decision points here."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


def assert_late_result_dropped(engine: Engine, execution_id: str) -> None:
    history = engine.history("x")
    canceled = of_kind(history, EventKind.EXECUTION_CANCELED, execution_id)
    assert [e.payload["by"] for e in canceled] == ["Canceler-1"]
    assert canceled[0].payload["phase"] == "execute"
    assert of_kind(history, EventKind.STEP_EXECUTE_COMPLETED, execution_id) == []
    assert "After" not in {e.step_type for e in history}
    assert engine.client().get_attribute("x", MARK) is None
    assert engine.client().describe_flow("x").status is FlowStatus.RUNNING


def test_r152_a_sibling_cancels_a_blocked_async_handler_and_its_late_write_is_dropped() -> None:
    sleeper = Sleeper()
    flow = LFlow("Cancel", Fork(), [sleeper, Canceler(Sleeper), After()], [MARK, GO])
    with engine_in([flow]) as engine:
        client = engine.client()
        client.start_flow(flow, "x", 1)
        assert sleeper.started.wait(5)
        client.publish("x", GO, "cancel")
        assert wait_until(lambda: bool(sleeper.log))
        time.sleep(0.2)  # the late result is a unit on the engine thread; let it be handled
        assert sleeper.log == [("cancelled", True)]
        assert_late_result_dropped(engine, "Sleeper-1")


def test_r152_a_canceled_sync_handler_that_returns_later_changes_nothing() -> None:
    blocked = BlockedSync()
    flow = LFlow("CancelSync", ForkSync(), [blocked, Canceler(BlockedSync), After()], [MARK, GO])
    with engine_in([flow]) as engine:
        client = engine.client()
        client.start_flow(flow, "x", 1)
        assert blocked.gate.arrived()
        client.publish("x", GO, "cancel")
        reach_kind(engine, "x", EventKind.EXECUTION_CANCELED, "BlockedSync-1")
        time.sleep(0.7)  # the worker's next heartbeat (every 0.5 s) delivers the cancel
        blocked.gate.open()
        assert wait_until(lambda: bool(blocked.log))
        time.sleep(0.2)
        assert blocked.log == [("returned", True)]
        assert_late_result_dropped(engine, "BlockedSync-1")


def test_r148_stop_flow_cancels_a_blocked_async_handler() -> None:
    sleeper = Sleeper()
    flow = LFlow("Stop", sleeper, schema=[MARK])
    with engine_in([flow]) as engine:
        client = engine.client()
        client.start_flow(flow, "x", 1)
        assert sleeper.started.wait(5)
        client.stop_flow("x", StopFlowOptions())
        result = client.wait_for_flow("x", SOON)
        assert wait_until(lambda: bool(sleeper.log))
        time.sleep(0.2)
        history = engine.history("x")
        assert client.get_attribute("x", MARK) is None
    assert result.status is FlowStatus.CANCELED
    assert sleeper.log == [("cancelled", True)]
    assert [e.payload["by"] for e in of_kind(history, EventKind.EXECUTION_CANCELED)] == [
        "flow_close"
    ]
    assert of_kind(history, EventKind.STEP_EXECUTE_PENDING, "Sleeper-1")
    assert "After" not in {e.step_type for e in history}


class SlowFirstAttempt(Step[int]):
    """Attempt 1 blocks past its 1 s method timeout, then writes 1; attempt 2 writes 2 at once."""

    def __init__(self) -> None:
        self.gate = Gate()
        self.finished: list[int] = []

    def get_step_options(self) -> StepOptions:
        return StepOptions(
            execute_method_timeout=timedelta(seconds=1), execute_retry=retries(2)
        )

    def execute(self, context: Context, n: int) -> StepDecision:
        if context.attempt == 1:
            self.gate.hold()
        MARK.set(context, context.attempt)
        self.finished.append(context.attempt)
        return graceful_complete(context.attempt)


def test_r106_a_timed_out_attempt_is_retried_and_its_late_result_dropped() -> None:
    step = SlowFirstAttempt()
    flow = LFlow("Timeouts", step, schema=[MARK])
    with engine_in([flow]) as engine:
        client = engine.client()
        client.start_flow(flow, "x", 1)
        result = client.wait_for_flow("x", SOON)
        step.gate.open()
        assert wait_until(lambda: 1 in step.finished)
        time.sleep(0.2)
        failed = of_kind(engine.history("x"), EventKind.ATTEMPT_FAILED, "SlowFirstAttempt-1")
        assert client.get_attribute("x", MARK) == 2
    assert result.single_output(int) == 2
    assert [f.payload["reason"] for f in failed] == ["timeout"]


class SilentAfterBeat(Step[int]):
    """Attempt 1 checkpoints and sleeps (its worker hangs); attempt 2 returns the checkpoint."""

    def get_step_options(self) -> StepOptions:
        return StepOptions(heartbeat_timeout=timedelta(seconds=1), execute_retry=retries(2))

    async def execute(self, context: AsyncContext, n: int) -> StepDecision:
        if context.attempt == 1:
            await context.heartbeat("page-7")
            await asyncio.sleep(30)
        return graceful_complete(context.get_last_heartbeat_value(str))


def test_r107_a_hung_worker_is_timed_out_by_its_heartbeat_and_retried() -> None:
    """R107 as corrected: only a hung worker (a fault) stops the heartbeats."""
    flow = LFlow("Beats", SilentAfterBeat())
    with engine_in([flow]) as engine:
        engine.faults.add(FaultPlan.hang(SilentAfterBeat))
        client = engine.client()
        began = time.monotonic()
        client.start_flow(flow, "x", 1)
        result = client.wait_for_flow("x", SOON)
        elapsed = time.monotonic() - began
        failed = of_kind(engine.history("x"), EventKind.ATTEMPT_FAILED)
    assert result.single_output(str) == "page-7"
    assert [f.payload["reason"] for f in failed] == ["timeout"]
    assert 1.5 <= elapsed < 4.0  # a 1 s heartbeat window, then a 1 s backoff


class Broken(Step[int]):
    """Raises on its only attempt."""

    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        raise KeyError("no such order")


def test_r108_a_live_handler_error_fails_the_flow_with_worker_api_failed() -> None:
    flow = LFlow("Broken", Broken())
    with engine_in([flow]) as engine:
        client = engine.client()
        client.start_flow(flow, "x", 1)
        result = client.wait_for_flow("x", SOON)
        failed = of_kind(engine.history("x"), EventKind.STEP_EXECUTE_FAILED)
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.WORKER_API_FAILED
    # The message is the handler's own, str(KeyError(...)) as Dex reports it; the type is in
    # the history (issue 16, behaviour 2).
    assert result.error_message == "'no such order'"
    assert failed[0].payload["error_type"] == "builtins.KeyError"


# -- closing -----------------------------------------------------------------------------------


def test_close_stops_every_dexviz_thread_even_with_a_handler_awaiting() -> None:
    flow, _, _ = probe_flow()
    sleeper = Sleeper()
    blocked = LFlow("Sleepy", sleeper, schema=[MARK])
    before = set(dexviz_threads())
    engine = Engine([flow, blocked], mode="live")
    client = engine.client()
    client.start_flow(flow, "p", 1)
    client.wait_for_flow("p", SOON)
    client.start_flow(blocked, "s", 1)
    assert sleeper.started.wait(5)
    began = time.monotonic()
    engine.close()
    assert time.monotonic() - began < 3.0
    assert [t.name for t in dexviz_threads() if t not in before] == []
    assert engine.closed


def test_close_twice_is_harmless_for_a_sync_only_engine() -> None:
    flow = LFlow("Echo", Echo())
    with Engine([flow], mode="live") as engine:
        engine.client().start_flow(flow, "e", 1)
        engine.client().wait_for_flow("e", SOON)
        engine.close()
    assert engine.closed


def test_close_twice_is_harmless_after_async_handlers_ran() -> None:
    flow, _, _ = probe_flow()
    with Engine([flow], mode="live") as engine:
        engine.client().start_flow(flow, "p", 1)
        engine.client().wait_for_flow("p", SOON)
        engine.close()
    assert engine.closed


def closed_engine() -> tuple[Engine, ParkFlow]:
    flow = ParkFlow()
    engine = Engine([flow], mode="live")
    engine.client().start_flow(flow, "x", 1)
    return engine, flow


def test_a_closed_engine_rejects_calls_with_a_clear_error() -> None:
    engine, flow = closed_engine()
    client = engine.client()
    engine.close()
    calls = {
        "client": engine.client,
        "async_client": engine.async_client,
        "step": engine.step,
        "start_flow": lambda: client.start_flow(flow, "y", 1),
        "publish": lambda: client.publish("x", GO, "m"),
        "get_attribute": lambda: client.get_attribute("x", MARK),
        "set_attribute": lambda: client.set_attribute("x", MARK, 1),
        "invoke_rpc": lambda: client.invoke_rpc(flow.read, "x"),
        "wait_for_flow": lambda: client.wait_for_flow("x", timedelta(seconds=1)),
        "describe_flow": lambda: client.describe_flow("x"),
        "stop_flow": lambda: client.stop_flow("x"),
        "search_flows": lambda: client.search_flows("", 10),
        "wait_for_step_completion": lambda: client.wait_for_step_completion(
            "x", "Park-1", timedelta(seconds=1)
        ),
    }
    for name, call in calls.items():
        with pytest.raises(RuntimeError, match="closed") as caught:
            call()
        assert not isinstance(caught.value, DexServiceError), name
    assert client.health_check() is False


def test_a_closed_engine_rejects_attribute_waits_at_once() -> None:
    engine, _ = closed_engine()
    client = engine.client()
    engine.close()
    began = time.monotonic()
    with pytest.raises(RuntimeError, match="closed") as caught:
        client.wait_for_attribute_match("x", MARK, AttributeMatch.equal_to(1), timedelta(seconds=1))
    assert not isinstance(caught.value, DexServiceError)
    assert time.monotonic() - began < 0.5


def test_a_client_blocked_in_wait_for_flow_gets_a_clear_error_when_the_engine_closes() -> None:
    engine, _ = closed_engine()
    client = engine.client()
    caught: list[BaseException] = []

    def wait() -> None:
        try:
            client.wait_for_flow("x")
        except BaseException as error:  # noqa: BLE001 - the test inspects whatever escapes
            caught.append(error)

    waiter = threading.Thread(target=wait)
    waiter.start()
    time.sleep(0.1)
    engine.close()
    waiter.join(3)
    assert not waiter.is_alive()
    assert type(caught[0]) is RuntimeError
    assert "closed" in str(caught[0])


def test_a_live_engine_cannot_be_stepped() -> None:
    flow = LFlow("Echo", Echo())
    with engine_in([flow]) as engine:
        with pytest.raises(RuntimeError, match="simulation"):
            engine.step()
        with pytest.raises(RuntimeError, match="simulation"):
            engine.run_until_idle()


def test_live_time_never_goes_backwards_when_the_wall_clock_steps_back(monkeypatch) -> None:
    from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
    from dexviz.history import History

    real = time.time_ns
    calls = [0]

    def stepped_back() -> int:  # the wall clock steps back an hour after three readings
        calls[0] += 1
        return real() - (3600 * 10**9 if calls[0] > 3 else 0)

    flow = ContractEditFlow()
    with Engine([flow], mode="live") as engine:
        monkeypatch.setattr(time, "time_ns", stepped_back)
        client = engine.client()
        client.start_flow(flow, "edits", sample_edits(3))
        assert client.wait_for_flow("edits", timedelta(seconds=30)).status is FlowStatus.COMPLETED
        monkeypatch.undo()
        history = engine.history("edits")
    stamps = [event.time_ns for event in history]
    assert stamps == sorted(stamps)
    assert History.from_jsonl(history.to_jsonl()) == history
