"""RPCs through the Client, in both modes and under real concurrency (engine-semantics R115-R124,
R156, R166)."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from dexviz import (
    Attribute,
    AttributeMap,
    Channel,
    Context,
    DexServiceError,
    Engine,
    ErrorSubStatus,
    EventKind,
    FlowDefinitionError,
    FlowNotActiveError,
    FlowStatus,
    RequestTimeoutError,
    RPCInvokeOptions,
    RpcLockConflictError,
    RPCResult,
    Step,
    StepDecision,
    StepMovement,
    StopFlowOptions,
    StopType,
    Wait,
    WorkerInvocationError,
    dead_end,
    force_complete,
    go_to_many,
    graceful_complete,
    rpc,
)
from dexviz.sdk.errors import FlowClosingError
from tests.engine.flows_live import (
    MODES,
    SOON,
    Gate,
    LFlow,
    engine_in,
    of_kind,
    waiting,
)

BALANCE = Attribute("balance", int)
COUNTER = Attribute("counter", int)
LOG = Channel("log", str)
INBOX = Channel("inbox", str)
GO = Channel("go", str)
HOLD = Channel("hold", str)
WALLETS = AttributeMap("wallets", int)
SCHEMA = [BALANCE, COUNTER, WALLETS, LOG, INBOX, GO, HOLD]


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class InsufficientFunds(Exception):
    """A business error raised by an RPC handler."""


class Waiter(Step[int]):
    """Waits for one inbox message, then ends its branch."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class Notify(Step[int]):
    """Started by RPCs; records its lineage, then waits on ``hold`` (nobody publishes)."""

    def __init__(self) -> None:
        self.sources: list[str] = []

    def wait_for(self, context: Context, n: int) -> Wait:
        self.sources.append(context.from_step_execution_id)
        return Wait.until(HOLD.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class Account(LFlow):
    """A Flow whose start Step waits on the inbox, with one RPC per rule under test."""

    def __init__(self, flow_type: str = "Account", start: Step[int] | None = None) -> None:
        self.notify = Notify()
        others = [self.notify] if start is None else [self.notify, Waiter()]
        super().__init__(flow_type, start or Waiter(), others, SCHEMA)
        self.calls: dict[str, int] = {}
        self.gate = Gate()

    def _called(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    @rpc
    def deposit(self, context: Context, amount: int) -> RPCResult[int]:
        total = BALANCE.get(context) + amount
        BALANCE.set(context, total)
        LOG.publish(context, f"deposit {amount}")
        return RPCResult(total, next_steps=(StepMovement.of(Notify, amount),))

    @rpc
    def withdraw(self, context: Context, amount: int) -> RPCResult[int]:
        self._called("withdraw")
        BALANCE.set(context, -amount)
        raise InsufficientFunds(f"balance too low: {amount}")

    @rpc
    async def withdraw_async(self, context: Context, amount: int) -> RPCResult[int]:
        BALANCE.set(context, -amount)
        raise InsufficientFunds(f"async balance too low: {amount}")

    @rpc
    async def deposit_async(self, context: Context, amount: int) -> RPCResult[int]:
        BALANCE.set(context, BALANCE.get(context) + amount)
        return RPCResult(BALANCE.get(context))

    @rpc
    def read(self, context: Context) -> RPCResult[int]:
        self._called("read")
        return RPCResult(BALANCE.get(context))

    @rpc
    def touch(self, context: Context) -> RPCResult[None]:
        self._called("touch")
        BALANCE.set(context, 1)
        return RPCResult(None)

    @rpc(lock_attributes=[COUNTER.lock()])
    def increment(self, context: Context) -> RPCResult[int]:
        self._called("increment")
        value = COUNTER.get(context) + 1
        time.sleep(0.002)  # widen the read-modify-write window that the lock must protect
        COUNTER.set(context, value)
        return RPCResult(value)

    @rpc(lock_attributes=[COUNTER.lock()])
    def held_increment(self, context: Context) -> RPCResult[int]:
        self._called("held_increment")
        self.gate.hold()
        COUNTER.set(context, COUNTER.get(context) + 10)
        return RPCResult(COUNTER.get(context))

    @rpc
    def held_credit(self, context: Context, key: str) -> RPCResult[int]:
        self._called("held_credit")
        self.gate.hold()
        WALLETS.set(context, key, (WALLETS.get(context, key) or 0) + 1)
        return RPCResult(WALLETS.get(context, key))

    @rpc(timeout=timedelta(milliseconds=300))
    def hang(self, context: Context) -> RPCResult[int]:
        self._called("hang")
        self.gate.hold()
        BALANCE.set(context, 500)
        return RPCResult(500)

    @rpc
    def publish_and_cancel(self, context: Context) -> RPCResult[None]:
        INBOX.publish(context, "m")
        return RPCResult(None).with_canceling_steps(Waiter)

    @rpc
    def kick(self, context: Context, n: int) -> RPCResult[None]:
        return RPCResult(None, next_steps=(StepMovement.of(Notify, n),))

    @rpc
    def close_it(self, context: Context) -> RPCResult[None]:
        return force_complete("closed by an RPC")  # type: ignore[return-value]


def started(engine: Engine, flow: Account, flow_id: str = "a") -> None:
    """Start ``flow`` and wait until its start Step waits."""
    engine.client().start_flow(flow, flow_id, 0)
    waiting(engine, flow_id, f"{flow.get_steps().start[0].get_step_type()}-1")


# -- R115-R117 ---------------------------------------------------------------------------------


def test_r115_an_rpc_writes_publishes_and_starts_steps_together(mode: str) -> None:
    flow = Account()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        assert client.invoke_rpc(flow.deposit, "a", 5) == 5
        assert client.invoke_rpc(flow.deposit, "a", 2) == 7
        waiting(engine, "a", "Notify-1")
        waiting(engine, "a", "Notify-2")
        assert client.get_attribute("a", BALANCE) == 7
        assert [m.value for m in client.get_channel_messages("a", LOG)] == [
            "deposit 5",
            "deposit 2",
        ]
    assert flow.notify.sources == ["__rpc/deposit", "__rpc/deposit"]


def test_r115_an_rpc_returning_a_close_decision_is_rejected(mode: str) -> None:
    flow = Account()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        with pytest.raises((DexServiceError, FlowDefinitionError)):
            client.invoke_rpc(flow.close_it, "a")
        assert client.describe_flow("a").status is FlowStatus.RUNNING
        assert of_kind(engine.history("a"), EventKind.RPC_EXECUTION_COMPLETED) == []


@pytest.mark.parametrize("method", ["withdraw", "withdraw_async"])
def test_r116_a_failing_rpc_applies_nothing_and_reports_the_handler_error(
    mode: str, method: str
) -> None:
    flow = Account()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        with pytest.raises(WorkerInvocationError) as caught:
            client.invoke_rpc(getattr(flow, method), "a", 3)
        assert client.get_attribute("a", BALANCE) is None
        assert of_kind(engine.history("a"), EventKind.RPC_EXECUTION_COMPLETED) == []
        assert client.describe_flow("a").status is FlowStatus.RUNNING
    error = caught.value
    assert error.worker_error_type == f"{InsufficientFunds.__module__}.InsufficientFunds"
    prefix = "async " if method.endswith("async") else ""
    assert error.worker_error_detail == f"{prefix}balance too low: 3"
    assert error.sub_status is ErrorSubStatus.WORKER_API_ERROR
    assert (error.flow_id, error.operation) == ("a", "invoke_rpc")
    assert "InsufficientFunds" in str(error)


def test_r116_a_failed_rpc_is_not_retried(mode: str) -> None:
    flow = Account()
    with engine_in([flow], mode) as engine:
        started(engine, flow)
        with pytest.raises(WorkerInvocationError):
            engine.client().invoke_rpc(flow.withdraw, "a", 3)
    assert flow.calls == {"withdraw": 1}


def test_r117_an_rpc_publishes_before_it_cancels(mode: str) -> None:
    flow = Account()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.invoke_rpc(flow.publish_and_cancel, "a")
        canceled = of_kind(engine.history("a"), EventKind.EXECUTION_CANCELED, "Waiter-1")
        assert [m.value for m in client.get_channel_messages("a", INBOX)] == ["m"]
    assert [e.payload["by"] for e in canceled] == ["rpc:publish_and_cancel"]


# -- R118, R119: timeouts and locks (live) ------------------------------------------------------


def test_r118_an_rpc_timeout_is_an_error_to_the_caller_and_drops_the_late_result() -> None:
    flow = Account()
    with engine_in([flow]) as engine:
        client = engine.client()
        started(engine, flow)
        began = time.monotonic()
        with pytest.raises(RequestTimeoutError) as caught:
            client.invoke_rpc(flow.hang, "a")
        elapsed = time.monotonic() - began
        flow.gate.open()
        time.sleep(0.1)  # the handler finishes after its caller gave up
        assert client.get_attribute("a", BALANCE) is None
        assert client.describe_flow("a").status is FlowStatus.RUNNING
        assert of_kind(engine.history("a"), EventKind.RPC_EXECUTION_COMPLETED) == []
        assert client.invoke_rpc(flow.read, "a") == 0
    assert 0.25 <= elapsed < 1.0
    assert "hang" in str(caught.value)


def test_r119_100_concurrent_locking_rpcs_leave_the_counter_equal_to_the_successes() -> None:
    flow = Account()
    outcomes: list[str] = []
    with engine_in([flow]) as engine:
        client = engine.client()
        started(engine, flow)
        barrier = threading.Barrier(100, timeout=10)

        def call() -> None:
            barrier.wait()
            try:
                client.invoke_rpc(flow.increment, "a")
                outcomes.append("ok")
            except RpcLockConflictError:
                outcomes.append("conflict")

        threads = [threading.Thread(target=call) for _ in range(100)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        counter = client.get_attribute("a", COUNTER)
    successes = outcomes.count("ok")
    assert len(outcomes) == 100
    assert outcomes.count("conflict") == 100 - successes
    assert successes >= 1
    assert counter == successes
    assert flow.calls["increment"] == successes  # a conflicting call never runs its handler


def test_r119_a_lock_conflict_fails_fast_and_unlocked_rpcs_still_run() -> None:
    flow = Account()
    with engine_in([flow]) as engine:
        client = engine.client()
        started(engine, flow)
        holder = threading.Thread(target=lambda: client.invoke_rpc(flow.held_increment, "a"))
        holder.start()
        assert flow.gate.arrived()
        began = time.monotonic()
        with pytest.raises(RpcLockConflictError) as caught:
            client.invoke_rpc(flow.increment, "a")
        assert time.monotonic() - began < 0.5
        assert client.invoke_rpc(flow.read, "a") == 0  # RPCs without locks take none
        flow.gate.open()
        holder.join(5)
        assert client.get_attribute("a", COUNTER) == 10
        assert client.invoke_rpc(flow.increment, "a") == 11  # the lock was released
    assert caught.value.code.name == "ABORTED"
    assert flow.calls == {"held_increment": 1, "read": 1, "increment": 1}


def test_r119_rpc_invoke_options_add_per_call_instance_locks() -> None:
    flow = Account()
    per_call = RPCInvokeOptions(lock_attribute_map_instances=(WALLETS.lock("alice"),))
    with engine_in([flow]) as engine:
        client = engine.client()
        started(engine, flow)
        holder = threading.Thread(
            target=lambda: client.invoke_rpc(flow.held_credit, "a", "alice", options=per_call)
        )
        holder.start()
        assert flow.gate.arrived()
        fallback = threading.Timer(0.5, flow.gate.open)  # ends the second call if it is let in
        fallback.start()
        try:
            with pytest.raises(RpcLockConflictError):
                client.invoke_rpc(flow.held_credit, "a", "alice", options=per_call)
        finally:
            flow.gate.open()
            fallback.cancel()
            holder.join(5)
    assert flow.calls == {"held_credit": 1}


# -- R120, R121: closed and closing Flows ------------------------------------------------------


def test_r120_rpcs_on_a_completed_flow(mode: str) -> None:
    flow = Account()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.invoke_rpc(flow.deposit_async, "a", 4)
        client.stop_flow("a")
        assert client.invoke_rpc(flow.read, "a") == 4  # a pure read is served from the snapshot
        with pytest.raises(FlowNotActiveError):
            client.invoke_rpc(flow.increment, "a")  # transactional: refused before it runs
        with pytest.raises(FlowNotActiveError):
            client.invoke_rpc(flow.touch, "a")  # has effects: refused after it ran
        assert client.get_attribute("a", BALANCE) == 4
    assert flow.calls == {"read": 1, "touch": 1}


class Closer(Step[int]):
    """Waits on ``go``, then force-completes the Flow."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return force_complete("closed")


def test_r121_an_admitted_locking_rpc_finishes_before_the_flow_reports_closed() -> None:
    flow = Account(start=Closer())
    outcome: list[object] = []
    with engine_in([flow]) as engine:
        client = engine.client()
        started(engine, flow)

        def slow() -> None:
            try:
                outcome.append(client.invoke_rpc(flow.held_increment, "a"))
            except DexServiceError as error:
                outcome.append(error)

        holder = threading.Thread(target=slow)
        holder.start()
        assert flow.gate.arrived()
        client.publish("a", GO, "close now")
        time.sleep(0.2)
        status_while_admitted = client.describe_flow("a").status
        with pytest.raises(FlowClosingError):
            client.invoke_rpc(flow.touch, "a")  # a new RPC is rejected while closing
        flow.gate.open()
        holder.join(5)
        result = client.wait_for_flow("a", SOON)
        assert client.get_attribute("a", COUNTER) == 10
    assert status_while_admitted is FlowStatus.RUNNING
    assert outcome == [10]
    assert result.single_output(str) == "closed"


@pytest.mark.parametrize(
    ("stop", "status_while_admitted", "final", "counter"),
    [
        (StopType.CANCEL, FlowStatus.RUNNING, FlowStatus.CANCELED, 10),
        (StopType.TERMINATE, FlowStatus.TERMINATED, FlowStatus.TERMINATED, None),
    ],
)
def test_r147_r154_a_stop_waits_for_an_admitted_rpc_unless_it_terminates(
    stop: StopType, status_while_admitted: FlowStatus, final: FlowStatus, counter: int | None
) -> None:
    flow = Account()
    outcome: list[object] = []
    with engine_in([flow]) as engine:
        client = engine.client()
        started(engine, flow)

        def slow() -> None:
            try:
                outcome.append(client.invoke_rpc(flow.held_increment, "a"))
            except DexServiceError as error:
                outcome.append(type(error))

        holder = threading.Thread(target=slow)
        holder.start()
        assert flow.gate.arrived()
        client.stop_flow("a", StopFlowOptions(stop))
        seen = client.describe_flow("a").status
        flow.gate.open()
        holder.join(5)
        result = client.wait_for_flow("a", SOON)
        assert client.get_attribute("a", COUNTER) == counter
    assert seen is status_while_admitted
    assert result.status is final
    assert outcome == ([10] if counter else [FlowNotActiveError])


# -- R122-R124 ---------------------------------------------------------------------------------


class Begin(Step[int]):
    """Fans out to Finish (requests graceful completion) and Waiter."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return go_to_many(StepMovement.of(Finish, n), StepMovement.of(Waiter, n))


class Finish(Step[int]):
    """Requests graceful completion with output "a"."""

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete("a")


class ReleaseOnGo(Step[int]):
    """Started by an RPC: waits on ``go``, then ends its branch."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class GracefulAccount(Account):
    """Begin fans out; ``start_release`` adds a ReleaseOnGo Step."""

    def __init__(self) -> None:
        super().__init__("Graceful", Begin())
        self._others = (*self._others, Finish(), ReleaseOnGo())

    @rpc
    def start_release(self, context: Context) -> RPCResult[None]:
        return RPCResult(None, next_steps=(StepMovement.of(ReleaseOnGo, 1),))


def test_r122_an_rpc_adds_work_before_graceful_completion_begins(mode: str) -> None:
    flow = GracefulAccount()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "a", 0)
        client.wait_for_step_completion("a", "Finish-1", SOON)
        waiting(engine, "a", "Waiter-1")
        client.invoke_rpc(flow.start_release, "a")
        client.publish("a", INBOX, "end the waiter")
        client.wait_for_step_completion("a", "Waiter-1", SOON)
        assert client.describe_flow("a").status is FlowStatus.RUNNING  # ReleaseOnGo-1 is active
        client.publish("a", GO, "release")
        result = client.wait_for_flow("a", SOON)
    assert result.status is FlowStatus.COMPLETED
    assert [(c.step_execution_id, c.value) for c in result.completions] == [("Finish-1", "a")]


class SiblingCanceler(Step[int]):
    """Waits on ``go``, then cancels its siblings of type Notify (it has none)."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(GO.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end().with_canceling_sibling_steps(Notify)


def test_r123_steps_from_separate_rpc_invocations_are_not_siblings(mode: str) -> None:
    flow = Account(start=SiblingCanceler())
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        client.invoke_rpc(flow.kick, "a", 1)
        client.invoke_rpc(flow.kick, "a", 2)
        client.publish("a", GO, "cancel siblings")
        client.wait_for_step_completion("a", "SiblingCanceler-1", SOON)
        waiting(engine, "a", "Notify-2")
        state = engine.flow_state("a")
        assert of_kind(engine.history("a"), EventKind.EXECUTION_CANCELED) == []
    assert {a.execution_id: a.from_execution_id for a in state.active_executions} == {
        "Notify-1": "__rpc/kick",
        "Notify-2": "__rpc/kick",
    }


def test_r124_a_successful_rpc_is_recorded_in_history(mode: str) -> None:
    flow = Account()
    with engine_in([flow], mode) as engine:
        started(engine, flow)
        engine.client().invoke_rpc(flow.deposit, "a", 5)
        recorded = of_kind(engine.history("a"), EventKind.RPC_EXECUTION_COMPLETED)
    assert len(recorded) == 1
    payload = recorded[0].payload
    assert (payload["rpc"], payload["input"], payload["output"]) == ("deposit", 5, 5)
    assert payload["writes"] == [{"attribute": "balance", "value": 5, "deleted": False}]
    assert len(payload["published"]) == 1
    assert payload["next"] == [{"step_type": "Notify", "execution_id": "Notify-1", "input": 5}]
    assert recorded[0].method == "rpc"


# -- R156: invoke_rpc's own errors -------------------------------------------------------------


def test_r156_invoke_rpc_needs_a_known_flow_and_an_rpc_method(mode: str) -> None:
    flow = Account()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        started(engine, flow)
        # Dex reports a Flow id with no run as not active (issue 16, behaviour 6).
        with pytest.raises(FlowNotActiveError):
            client.invoke_rpc(flow.read, "nobody")
        with pytest.raises(FlowDefinitionError, match="not an @rpc"):
            client.invoke_rpc(flow.get_steps, "a")


def test_async_rpc_handlers_run_in_live_mode() -> None:
    flow = Account()
    with engine_in([flow]) as engine:
        client = engine.client()
        started(engine, flow)
        outputs = [client.invoke_rpc(flow.deposit_async, "a", n) for n in (1, 2, 3)]
        assert client.get_attribute("a", BALANCE) == 6
    assert outputs == [1, 3, 6]
