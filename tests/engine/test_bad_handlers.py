"""Bad handlers at run time fail their attempt with a clear error; the engine stays usable.

A handler raising KeyboardInterrupt or SystemExit, a hand-built RetryAfterError with a delay
that is not a positive number of seconds, and an output the codecs cannot encode each fail the
attempt (R21, R102, R105) — in simulation and live mode alike — and the Flow fails with a
message naming the Flow and the Step execution. After every case the same engine runs a healthy
Flow to completion.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import pytest

from dexviz import (
    Attribute,
    Channel,
    Context,
    Engine,
    EventKind,
    FlowStatus,
    RetryPolicy,
    RPCResult,
    Step,
    StepDecision,
    StepOptions,
    Wait,
    dead_end,
    force_complete,
    graceful_complete,
    rpc,
)
from dexviz.sdk.errors import RetryAfterError, WorkerInvocationError
from tests.engine.flows_live import MODES, NO_RETRY, SOON, LFlow, engine_in, of_kind

ANY_NOTE = Attribute("anyNote", Any)  # type: ignore[type-abstract]


class Healthy(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n + 1)


class Raises(Step[int]):
    """Raises ``error`` from ``method`` (sync or coroutine handler), never retried."""

    def __init__(self, error: BaseException, method: str, is_async: bool) -> None:
        self.error = error
        self.method = method
        self.is_async = is_async

    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def wait_for(self, context: Context, n: int) -> Wait:
        if self.method == "wait_for":
            raise self.error
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        raise self.error


class AsyncRaises(Raises):
    async def wait_for(self, context: Context, n: int) -> Wait:  # type: ignore[override]
        if self.method == "wait_for":
            raise self.error
        return Wait.skip_immediately()

    async def execute(self, context: Context, n: int) -> StepDecision:  # type: ignore[override]
        raise self.error


def _run_bad(engine: Engine, flow: LFlow, flow_id: str = "bad-1") -> Any:
    client = engine.client()
    client.start_flow(flow, flow_id, 1)
    return client.wait_for_flow(flow_id, timeout=SOON)


def _assert_still_usable(engine: Engine) -> None:
    """The engine that just ran a bad handler runs a healthy Flow to the end."""
    client = engine.client()
    client.start_flow("Healthy", "healthy-1", 41)
    result = client.wait_for_flow("healthy-1", timeout=SOON)
    assert result.status is FlowStatus.COMPLETED
    assert result.single_output(int) == 42


def _engine_flows(bad: Step[int], flow_type: str = "Bad") -> list[LFlow]:
    return [LFlow(flow_type, bad, schema=[ANY_NOTE]), LFlow("Healthy", Healthy())]


EXITS = [KeyboardInterrupt("stop"), SystemExit(3), SystemExit("bye")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("method", ["wait_for", "execute"])
@pytest.mark.parametrize("error", EXITS, ids=lambda e: f"{type(e).__name__}-{e}")
def test_r21_keyboard_interrupt_and_system_exit_fail_the_attempt(
    mode: str, is_async: bool, method: str, error: BaseException
) -> None:
    step = (AsyncRaises if is_async else Raises)(error, method, is_async)
    flows = _engine_flows(step)
    with engine_in(flows, mode) as engine:
        result = _run_bad(engine, flows[0])
        assert result.status is FlowStatus.FAILED
        # error_message is the handler's own (issue 16); dexviz's context is in ``failure``.
        assert result.error_message == str(error)
        assert result.failure is not None
        assert f"Flow 'Bad', Step Raises-1 {method}" in result.failure.replace(
            "AsyncRaises", "Raises"
        )
        assert f"builtins.{type(error).__name__}" in result.failure
        failed = of_kind(engine.history("bad-1"), EventKind.ATTEMPT_FAILED)
        assert [e.payload["error_type"] for e in failed] == [f"builtins.{type(error).__name__}"]
        _assert_still_usable(engine)


def test_r21_a_later_run_does_not_re_raise_the_interrupt() -> None:
    flows = _engine_flows(Raises(KeyboardInterrupt(), "execute", False))
    engine = Engine(flows)
    _run_bad(engine, flows[0])
    engine.run()
    engine.run()
    assert engine.result("bad-1").status is FlowStatus.FAILED
    _assert_still_usable(engine)


class BadRetryAfter(Step[int]):
    """Raises a hand-built RetryAfterError; three attempts at most."""

    def __init__(self, after: Any, cause: Any, method: str, attempts: int = 3) -> None:
        self.after = after
        self.cause = cause
        self.method = method
        self.attempts = attempts

    def get_step_options(self) -> StepOptions:
        policy = RetryPolicy(maximum_attempts=self.attempts)
        return StepOptions(wait_for_retry=policy, execute_retry=policy)

    def wait_for(self, context: Context, n: int) -> Wait:
        if self.method == "wait_for":
            raise RetryAfterError(self.after, self.cause)
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        raise RetryAfterError(self.after, self.cause)


BAD_RETRY_AFTERS = [
    (math.nan, ValueError("x"), "got nan"),
    (math.inf, ValueError("x"), "got inf"),
    (-math.inf, ValueError("x"), "got -inf"),
    (-1, ValueError("x"), "got -1"),
    (0, ValueError("x"), "got 0"),
    (-0.5, ValueError("x"), "got -0.5"),
    (1e30, ValueError("x"), "got 1e+30"),
    (10**40, ValueError("x"), "got 1000000000000000000000000000000000000000"),
    ("5", ValueError("x"), "got str"),
    (None, ValueError("x"), "got NoneType"),
    (True, ValueError("x"), "got bool"),
    ([5], ValueError("x"), "got list"),
    (ValueError("x"), 5, "got ValueError"),
    (5, None, "cause must be an exception, got NoneType"),
    (5, "text", "cause must be an exception, got str"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["wait_for", "execute"])
@pytest.mark.parametrize(("after", "cause", "detail"), BAD_RETRY_AFTERS, ids=repr)
def test_r105_malformed_retry_after_fails_the_attempt_under_the_policy(
    mode: str, method: str, after: Any, cause: Any, detail: str
) -> None:
    # Live mode would sleep through the policy's real backoff: one attempt is enough there.
    attempts = 3 if mode == "simulation" else 1
    flows = _engine_flows(BadRetryAfter(after, cause, method, attempts))
    with engine_in(flows, mode) as engine:
        result = _run_bad(engine, flows[0])
        assert result.status is FlowStatus.FAILED
        message = result.failure or ""
        tried = "3 attempts" if attempts == 3 else "1 attempt"
        where = f"Flow 'Bad', Step BadRetryAfter-1 {method} failed after {tried}"
        assert where in message
        assert "dexviz.sdk.errors.FlowDefinitionError" in message
        assert "malformed RetryAfterError" in message and detail in message
        failed = of_kind(engine.history("bad-1"), EventKind.ATTEMPT_FAILED)
        assert [e.payload["reason"] for e in failed] == ["invalid_result"] * attempts
        _assert_still_usable(engine)


def test_r105_a_well_formed_retry_after_still_sets_the_delay() -> None:
    flows = _engine_flows(BadRetryAfter(7, ValueError("later"), "execute"))
    with engine_in(flows, "simulation") as engine:
        engine.client().start_flow(flows[0], "bad-1", 1)
        engine.run()
        failed = of_kind(engine.history("bad-1"), EventKind.ATTEMPT_FAILED)
        assert [e.payload["retry_delay_ns"] for e in failed] == [7_000_000_000] * 2 + [None]
        assert failed[0].payload["error_type"] == "builtins.ValueError"


class Opaque:
    """A value with no codec."""


class BadOutput(Step[int]):
    def __init__(self, output: Any, how: str) -> None:
        self.output = output
        self.how = how

    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        if self.how == "force_complete":
            return force_complete(self.output)
        return graceful_complete(self.output)


class BadAttributeValue(BadOutput):
    def execute(self, context: Context, n: int) -> StepDecision:
        ANY_NOTE.set(context, self.output)
        return dead_end()


def _cycle() -> list[object]:
    looped: list[object] = [1]
    looped.append(looped)
    return looped


UNENCODABLE = [
    (Opaque(), "no codec for a value of type Opaque"),
    (object(), "no codec for a value of type object"),
    ({1, 2}, "no codec for a value of type set"),
    (1 + 2j, "no codec for a value of type complex"),
    (lambda: 1, "no codec for a value of type function"),
    (math.nan, "finite float"),
    ({(1, 2): 3}, "dict key"),
    ([1, [2, Opaque()]], "no codec for a value of type Opaque at [1][1]"),
    ({"a": {"b": {1, 2}}}, "no codec for a value of type set at ['a']['b']"),
    (datetime(2026, 1, 1), "datetime"),
    (range(3), "no codec for a value of type range"),
    (_cycle(), "contains itself (a cycle)"),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["graceful_complete", "force_complete"])
@pytest.mark.parametrize(("value", "detail"), UNENCODABLE, ids=lambda v: type(v).__name__)
def test_r21_unencodable_output_fails_the_attempt(
    mode: str, how: str, value: Any, detail: str
) -> None:
    flows = _engine_flows(BadOutput(value, how))
    with engine_in(flows, mode) as engine:
        result = _run_bad(engine, flows[0])
        assert result.status is FlowStatus.FAILED
        message = result.failure or ""
        assert "Flow 'Bad', Step BadOutput-1 execute output failed" in message
        assert "ValueMappingError" in message and detail in message
        assert of_kind(engine.history("bad-1"), EventKind.COMPLETION_REQUESTED) == []
        _assert_still_usable(engine)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("value", "detail"), UNENCODABLE, ids=lambda v: type(v).__name__)
def test_r21_unencodable_attribute_value_fails_the_attempt(
    mode: str, value: Any, detail: str
) -> None:
    flows = _engine_flows(BadAttributeValue(value, "set"), "Bad")
    with engine_in(flows, mode) as engine:
        result = _run_bad(engine, flows[0])
        assert result.status is FlowStatus.FAILED
        message = result.failure or ""
        assert "Flow 'Bad', Step BadAttributeValue-1 execute" in message
        assert "ValueMappingError" in message and detail in message
        assert "anyNote" not in engine.flow_state("bad-1").attributes
        _assert_still_usable(engine)


class Waits(Step[int]):
    """Waits for a message nobody publishes, so the Flow stays open for RPCs."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


INBOX = Channel("inbox", int)


class ReturnsOpaque(LFlow):
    """A Flow whose RPC writes an Attribute and returns ``value`` as its output."""

    def __init__(self, value: Any) -> None:
        super().__init__("Rpcs", Waits(), schema=[ANY_NOTE, INBOX])
        self.value = value

    @rpc
    def answer(self, context: Context) -> RPCResult[Any]:
        ANY_NOTE.set(context, "written")
        return RPCResult(self.value)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("value", "detail"), UNENCODABLE, ids=lambda v: type(v).__name__)
def test_r116_an_unencodable_rpc_output_fails_the_rpc_and_commits_nothing(
    mode: str, value: Any, detail: str
) -> None:
    flow = ReturnsOpaque(value)
    with engine_in([flow, LFlow("Healthy", Healthy())], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "rpcs-1", 1)
        with pytest.raises(WorkerInvocationError) as caught:
            client.invoke_rpc(flow.answer, "rpcs-1")
        message = str(caught.value)
        assert "Flow 'Rpcs', RPC 'answer' output failed" in message and detail in message
        assert caught.value.worker_error_type == "dexviz.sdk.errors.ValueMappingError"
        assert "anyNote" not in engine.flow_state("rpcs-1").attributes
        assert of_kind(engine.history("rpcs-1"), EventKind.RPC_EXECUTION_COMPLETED) == []
        _assert_still_usable(engine)


class ExitingRpc(LFlow):
    """A Flow whose RPC raises ``error`` (sync or coroutine) after writing an Attribute."""

    def __init__(self, error: BaseException, is_async: bool) -> None:
        super().__init__("Rpcs", Waits(), schema=[ANY_NOTE, INBOX])
        self.error = error
        self.is_async = is_async

    @rpc
    def answer(self, context: Context) -> RPCResult[Any]:
        ANY_NOTE.set(context, "written")
        raise self.error


class AsyncExitingRpc(ExitingRpc):
    @rpc
    async def answer(self, context: Any) -> RPCResult[Any]:  # type: ignore[override]
        ANY_NOTE.set(context, "written")
        raise self.error


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("error", EXITS, ids=lambda e: f"{type(e).__name__}-{e}")
def test_r116_keyboard_interrupt_and_system_exit_in_an_rpc_fail_only_that_rpc(
    mode: str, is_async: bool, error: BaseException
) -> None:
    flow = (AsyncExitingRpc if is_async else ExitingRpc)(error, is_async)
    with engine_in([flow, LFlow("Healthy", Healthy())], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "rpcs-1", 1)
        with pytest.raises(WorkerInvocationError) as caught:
            client.invoke_rpc(flow.answer, "rpcs-1")
        assert caught.value.worker_error_type == f"builtins.{type(error).__name__}"
        assert "Flow 'Rpcs', RPC 'answer' failed" in str(caught.value)
        assert "anyNote" not in engine.flow_state("rpcs-1").attributes
        assert of_kind(engine.history("rpcs-1"), EventKind.RPC_EXECUTION_COMPLETED) == []
        assert engine.flow_state("rpcs-1").status is FlowStatus.RUNNING
        _assert_still_usable(engine)


class ExitingTimeoutHandler(LFlow):
    """Parks forever; its ``handle_timeout`` (sync or coroutine) raises ``error``."""

    def __init__(self, error: BaseException) -> None:
        super().__init__("Timed", Waits(), schema=[ANY_NOTE, INBOX])
        self.error = error

    def handle_timeout(self, context: Context) -> StepDecision:
        raise self.error


class AsyncExitingTimeoutHandler(ExitingTimeoutHandler):
    async def handle_timeout(self, context: Any) -> StepDecision:  # type: ignore[override]
        raise self.error


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("error", EXITS, ids=lambda e: f"{type(e).__name__}-{e}")
def test_r138_keyboard_interrupt_and_system_exit_in_handle_timeout_fail_its_attempt(
    mode: str, is_async: bool, error: BaseException
) -> None:
    from datetime import timedelta

    from dexviz import FlowTimeoutHandlerOptions, FlowTimeoutPolicy, StartFlowOptions

    flow = (AsyncExitingTimeoutHandler if is_async else ExitingTimeoutHandler)(error)
    options = StartFlowOptions(
        timeout=timedelta(seconds=1),
        timeout_policy=FlowTimeoutPolicy.HANDLER,
        timeout_handler_options=FlowTimeoutHandlerOptions(retry=RetryPolicy(maximum_attempts=1)),
    )
    with engine_in([flow, LFlow("Healthy", Healthy())], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "timed-1", 1, options)
        result = client.wait_for_flow("timed-1", timeout=SOON)
        assert result.status is FlowStatus.FAILED
        failed = of_kind(engine.history("timed-1"), EventKind.ATTEMPT_FAILED)
        assert [e.payload["error_type"] for e in failed] == [f"builtins.{type(error).__name__}"]
        _assert_still_usable(engine)
