"""Bad input: definition errors at registration, and contract violations inside attempts.

Registration errors are FlowDefinitionErrors naming the Flow and the Step. A handler that breaks
the contract at run time fails its attempt (retries apply); with no retry left the Flow fails
with WORKER_API_FAILED and a message naming the Flow and the Step execution. A failed attempt
never changes Flow state (R21, R22, R51, R64).
"""

from __future__ import annotations

from typing import Any

import pytest

from dexviz import (
    Attribute,
    AttributeMap,
    Channel,
    ChannelMap,
    ConditionCombination,
    Context,
    Engine,
    EventKind,
    FlowDefinitionError,
    FlowErrorType,
    FlowStatus,
    Registry,
    StartFlowOptions,
    Step,
    StepDecision,
    StepList,
    StepOptions,
    ValueMappingError,
    Wait,
    dead_end,
    go_to,
    simulate,
)
from tests.engine.flows_a import (
    NO_RETRY,
    ONE_ATTEMPT,
    AdHocFlow,
    execution_ids,
    failed_attempts,
    of_kind,
    retries,
    started,
)

NUMBERS = Channel("numbers", int)
ORDERS = ChannelMap("orders", str)
NOTE = Attribute("note", str)
PREFS = AttributeMap("prefs", str)
SCHEMA = (NUMBERS, ORDERS, NOTE, PREFS)


class Plain(Step[int]):
    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


class Twin(Plain):
    """Another class reporting the same Step type as Plain."""

    def get_step_type(self) -> str:
        return "Plain"


class Unlisted(Plain):
    """A Step no test Flow lists."""


class RoutesToUnlisted(Plain):
    def get_step_options(self) -> StepOptions:
        return StepOptions().on_execute_failure_proceed_to(Unlisted)


# -- registration --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda flow: Registry([flow]),
        lambda flow: Engine(flow),
        lambda flow: simulate(flow, 1),
    ],
    ids=["Registry", "Engine", "simulate"],
)
def test_failure_route_to_unlisted_step_is_a_definition_error(build: Any) -> None:
    flow = AdHocFlow("RouteFlow", Plain(), [RoutesToUnlisted()])
    with pytest.raises(FlowDefinitionError) as caught:
        build(flow)
    message = str(caught.value)
    assert "RouteFlow" in message and "RoutesToUnlisted" in message and "Unlisted" in message


def test_duplicate_step_instances_are_a_definition_error() -> None:
    with pytest.raises(FlowDefinitionError, match=r"DupFlow.*duplicate Step type 'Plain'"):
        Registry([AdHocFlow("DupFlow", Plain(), [Plain()])])


def test_two_classes_with_one_step_type_are_a_definition_error() -> None:
    with pytest.raises(FlowDefinitionError, match=r"DupFlow.*'Plain'"):
        Registry([AdHocFlow("DupFlow", Plain(), [Twin()])])


class TwoStarts(AdHocFlow):
    def get_steps(self) -> StepList[Any]:
        return StepList.start_step(Plain()).start_step(Unlisted())


def test_two_start_steps_are_a_definition_error() -> None:
    with pytest.raises(FlowDefinitionError) as caught:
        Registry([TwoStarts("TwoStartFlow")])
    message = str(caught.value)
    assert "TwoStartFlow" in message and "Plain" in message and "Unlisted" in message


class MismatchedInputs(Step[int]):
    def wait_for(self, context: Context, text: str) -> Wait:
        return Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


def test_wait_for_and_execute_input_types_must_match() -> None:
    with pytest.raises(FlowDefinitionError) as caught:
        Registry([AdHocFlow("Mismatch", MismatchedInputs())])
    message = str(caught.value)
    assert "Mismatch" in message and "MismatchedInputs" in message
    assert "str" in message and "int" in message


def test_step_class_instead_of_instance_is_a_definition_error() -> None:
    with pytest.raises(FlowDefinitionError, match=r"ClassFlow.*Plain\(\)"):
        Registry([AdHocFlow("ClassFlow", Plain)])


class AsyncStep(Step[int]):
    async def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


def test_async_handler_needs_allow_async_handlers() -> None:
    with pytest.raises(FlowDefinitionError, match=r"AsyncFlow.*AsyncStep.*allow_async_handlers"):
        Registry([AdHocFlow("AsyncFlow", AsyncStep())])
    assert Registry([AdHocFlow("AsyncFlow", AsyncStep())], allow_async_handlers=True)


# -- go_to to an unregistered Step ---------------------------------------------------------


class GoesAstray(Step[int]):
    def __init__(self, options: StepOptions) -> None:
        self.options = options
        self.calls = 0

    def get_step_options(self) -> StepOptions:
        return self.options

    def execute(self, context: Context, n: int) -> StepDecision:
        self.calls += 1
        return go_to(Unlisted, n)


def test_go_to_unregistered_step_fails_the_flow_naming_flow_execution_and_target() -> None:
    run = simulate(AdHocFlow("AstrayFlow", GoesAstray(NO_RETRY)), 1)
    assert run.result.status is FlowStatus.FAILED
    assert run.result.error_type is FlowErrorType.WORKER_API_FAILED
    # The Flow's message is the error's own (issue 16, behaviour 2); the history names the
    # execution that failed.
    message = run.result.error_message or ""
    assert "AstrayFlow" in message and "Unlisted" in message
    assert of_kind(run.history, EventKind.STEP_EXECUTE_FAILED)[0].execution_id == "GoesAstray-1"
    assert failed_attempts(run.history)[0]["reason"] == "invalid_result"
    assert execution_ids(run.history) == ["GoesAstray-1"]


def test_definition_error_fails_the_flow_at_once_without_retries() -> None:
    """A go_to to an unregistered Step fails the same way on every attempt (issue 27, 9)."""
    step = GoesAstray(StepOptions(execute_retry=retries(150)))
    run = simulate(AdHocFlow("AstrayFlow", step), 1)
    assert step.calls == 1
    assert [f["final"] for f in failed_attempts(run.history)] == [True]
    assert run.result.error_type is FlowErrorType.WORKER_API_FAILED


# -- handlers returning the wrong thing ----------------------------------------------------


class ExecuteReturnsWait(Step[int]):
    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        return Wait.skip_immediately()  # type: ignore[return-value]


class ExecuteReturnsText(ExecuteReturnsWait):
    def execute(self, context: Context, n: int) -> StepDecision:
        return "done"  # type: ignore[return-value]


class WaitForReturnsDecision(ExecuteReturnsWait):
    def wait_for(self, context: Context, n: int) -> Wait:
        return dead_end()  # type: ignore[return-value]

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


@pytest.mark.parametrize(
    ("step", "method"),
    [
        (ExecuteReturnsWait, "execute"),
        (ExecuteReturnsText, "execute"),
        (WaitForReturnsDecision, "wait_for"),
    ],
)
def test_invalid_handler_result_fails_the_attempt(step: type[Step[int]], method: str) -> None:
    run = simulate(AdHocFlow("ResultFlow", step()), 1)
    failures = of_kind(run.history, EventKind.ATTEMPT_FAILED)
    assert len(failures) == 1 and failures[0].method == method
    payload = failures[0].payload
    assert payload["error_type"] == "dexviz.sdk.errors.InvalidStepResultError"
    assert payload["reason"] == "invalid_result"
    assert "ResultFlow" in payload["error_message"] and step.__name__ in payload["error_message"]
    assert run.result.error_type is FlowErrorType.WORKER_API_FAILED
    assert run.result.error_message == payload["error_message"]
    assert failures[0].execution_id == f"{step.__name__}-1"


# -- any_combination_of without condition ids ----------------------------------------------


class CombinationWithoutIds(Step[int]):
    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.any_combination_of(ConditionCombination.of(NUMBERS.for_one()))

    def execute(self, context: Context, n: int) -> StepDecision:
        return dead_end()


def test_any_combination_of_without_condition_ids_fails_the_wait_for() -> None:
    run = simulate(AdHocFlow("ComboFlow", CombinationWithoutIds(), schema=SCHEMA), 1)
    failures = of_kind(run.history, EventKind.ATTEMPT_FAILED)
    assert [f.method for f in failures] == ["wait_for"]
    assert "condition_id" in failures[0].payload["error_message"]
    assert of_kind(run.history, EventKind.STEP_WAIT_FOR_COMPLETED) == []
    assert run.result.error_type is FlowErrorType.WORKER_API_FAILED
    assert "condition_id" in (run.result.error_message or "")


# -- values the Channel's type cannot encode -----------------------------------------------


class PublishesText(Step[int]):
    def get_step_options(self) -> StepOptions:
        return NO_RETRY

    def execute(self, context: Context, n: int) -> StepDecision:
        NUMBERS.publish(context, "not a number")  # type: ignore[arg-type]
        return dead_end()


def test_unencodable_channel_value_fails_the_attempt_naming_the_channel() -> None:
    run = simulate(AdHocFlow("CodecFlow", PublishesText(), schema=SCHEMA), 1)
    failure = failed_attempts(run.history)[0]
    assert failure["error_type"] == "dexviz.sdk.errors.ValueMappingError"
    assert "numbers" in failure["error_message"]
    assert run.result.error_type is FlowErrorType.WORKER_API_FAILED
    assert run.engine.flow_state("flow-1").channels["numbers"] == ()


def test_unencodable_client_publish_is_rejected() -> None:
    engine = started(AdHocFlow("CodecFlow", Plain(), schema=SCHEMA), 1)
    with pytest.raises(ValueMappingError, match="numbers"):
        engine.client().publish("flow-1", NUMBERS, 1, "two")
    assert engine.flow_state("flow-1").channels["numbers"] == ()


# -- a failing attempt never changes state -------------------------------------------------


class Staging(Step[int]):
    """Stages every kind of effect, then fails in the way ``how`` names."""

    def __init__(self, how: str) -> None:
        self.how = how

    def get_step_options(self) -> StepOptions:
        return StepOptions(
            execute_retry=ONE_ATTEMPT, execute_load_channels=(NUMBERS,)
        ).on_execute_failure_proceed_to(Plain)

    def execute(self, context: Context, n: int) -> StepDecision:
        NOTE.set(context, "changed")
        PREFS.set(context, "k", "changed")
        PREFS.delete(context, "old")
        NUMBERS.publish(context, 99)
        ORDERS.publish(context, "o-1", "new order")
        for message in NUMBERS.pending_messages(context):
            NUMBERS.delete(context, message.message_id)
        context.record_event("staged", True)
        if self.how == "raise":
            raise RuntimeError("fail after staging")
        if self.how == "bad_value":
            NUMBERS.publish(context, "x")  # type: ignore[arg-type]
        if self.how == "bad_result":
            return None  # type: ignore[return-value]
        return go_to(Unlisted, n)


@pytest.mark.parametrize("how", ["raise", "bad_value", "bad_result", "bad_target"])
def test_failing_attempt_drops_its_writes_and_publications(how: str) -> None:
    options = (
        StartFlowOptions().with_attribute(NOTE, "original").with_attribute(PREFS, "old", "kept")
    )
    flow = AdHocFlow("StagingFlow", Staging(how), [Plain()], SCHEMA)
    engine = started(flow, 1, options=options)
    engine.client().publish("flow-1", NUMBERS, 1, 2)
    before = engine.flow_state("flow-1")
    engine.run(until=EventKind.ATTEMPT_FAILED)
    after = engine.flow_state("flow-1")
    assert after.attributes == before.attributes == {"note": "original", "prefs/old": "kept"}
    assert after.channels == before.channels
    assert after.channels["numbers"] == (1, 2)
    engine.run_until_idle()
    history = engine.history("flow-1")
    assert of_kind(history, EventKind.MESSAGE_PUBLISHED, "Staging-1") == []
    assert of_kind(history, EventKind.STEP_EXECUTE_COMPLETED, "Staging-1") == []
    # the recovery route ran, proving the failure was final and nothing leaked into it
    assert execution_ids(history) == ["Staging-1", "Plain-1"]
    assert engine.flow_state("flow-1").attributes == before.attributes
    assert engine.flow_state("flow-1").channels == before.channels
