"""Flow-level and client options (§2.9, §2.11, §2.12) and the timeout rule R136."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dexviz.sdk.attribute import Attribute, AttributeMap
from dexviz.sdk.flow_options import (
    ActiveStepSearchMode,
    ClientOptions,
    FlowConfig,
    FlowTimeoutHandlerOptions,
    FlowTimeoutPolicy,
    IdReusePolicy,
    InitialAttribute,
    RPCInvokeOptions,
    StartFlowOptions,
    StopFlowOptions,
    StopType,
    SubFlowOptions,
    SubFlowReusePolicy,
    TimeTravelOptions,
    TimeTravelStepMethod,
    TimeTravelType,
    WaitForAttributeOptions,
    WaitForStepCompletionOptions,
    WorkerOptions,
    WorkerTarget,
    resolve_timeout_policy,
)
from dexviz.sdk.options import RetryPolicy, StepDurability, StepOptions

S = timedelta(seconds=1)
STATUS: Attribute[str] = Attribute("status", str)
BALANCES: AttributeMap[int] = AttributeMap("balances", int)


class Recover:
    def execute(self, context: object, input: None) -> None:
        del context, input


def test_enums_keep_dex_members_and_values() -> None:
    assert [m.value for m in FlowTimeoutPolicy] == ["default", "fail", "cancel", "handler"]
    assert [m.name for m in IdReusePolicy] == [
        "DEFAULT",
        "ALLOW_IF_PREVIOUS_FAILED",
        "ALLOW_IF_NOT_RUNNING",
        "ALLOW_TERMINATE_IF_RUNNING",
        "DISALLOW",
    ]
    assert [m.value for m in StopType] == ["cancel", "terminate", "fail"]
    assert [m.name for m in SubFlowReusePolicy] == [
        "ATTACH",
        "RESTART_IF_PREVIOUS_EXITS_ABNORMALLY",
        "ALWAYS_RESTART",
    ]
    assert [m.value for m in TimeTravelType] == [
        "beginning",
        "history_event_time",
        "step_type",
        "step_execution_id",
    ]
    assert [m.value for m in TimeTravelStepMethod] == ["wait_for", "execute"]
    assert [m.value for m in ActiveStepSearchMode] == [
        "default",
        "all",
        "with_wait_for",
        "disabled",
    ]


@pytest.mark.parametrize(
    ("timeout", "policy", "has_handler", "expected"),
    [
        (None, FlowTimeoutPolicy.DEFAULT, False, FlowTimeoutPolicy.DEFAULT),
        (timedelta(0), FlowTimeoutPolicy.DEFAULT, True, FlowTimeoutPolicy.DEFAULT),
        (S, FlowTimeoutPolicy.DEFAULT, False, FlowTimeoutPolicy.FAIL),
        (S, FlowTimeoutPolicy.DEFAULT, True, FlowTimeoutPolicy.HANDLER),
        (S, FlowTimeoutPolicy.CANCEL, True, FlowTimeoutPolicy.CANCEL),
        (S, FlowTimeoutPolicy.FAIL, True, FlowTimeoutPolicy.FAIL),
        (S, FlowTimeoutPolicy.HANDLER, True, FlowTimeoutPolicy.HANDLER),
    ],
)
def test_r136_resolve_timeout_policy(
    timeout: timedelta | None,
    policy: FlowTimeoutPolicy,
    has_handler: bool,
    expected: FlowTimeoutPolicy,
) -> None:
    assert resolve_timeout_policy(timeout, policy, has_handler) is expected


def test_r136_invalid_timeout_policies_are_errors_naming_the_flow() -> None:
    """Dex's wording first (users match on it), then what dexviz adds (issue 16, behaviour 12)."""
    with pytest.raises(ValueError, match="^Flow Orders has no handle_timeout override$"):
        resolve_timeout_policy(S, FlowTimeoutPolicy.HANDLER, False, flow_type="Orders")
    with pytest.raises(
        ValueError,
        match=r"^Flow timeout policy requires a positive timeout "
        r"\(timeout_policy CANCEL, the Flow\)",
    ):
        resolve_timeout_policy(None, FlowTimeoutPolicy.CANCEL, True)
    with pytest.raises(ValueError, match="requires a positive timeout"):
        resolve_timeout_policy(timedelta(0), FlowTimeoutPolicy.FAIL, False)


def test_start_flow_options_defaults() -> None:
    options = StartFlowOptions()
    assert [item.name for item in dataclasses.fields(options)] == [
        "timeout",
        "timeout_policy",
        "timeout_handler_options",
        "start_delay",
        "id_reuse_policy",
        "retry_policy",
        "initial_attributes",
        "config_override",
        "ignore_already_started",
        "request_id",
    ]
    assert options.timeout_policy is FlowTimeoutPolicy.DEFAULT
    assert options.id_reuse_policy is IdReusePolicy.DEFAULT and options.initial_attributes == ()


def test_with_attribute_appends_writes_in_order_to_a_copy() -> None:
    base = StartFlowOptions(timeout=60 * S)
    options = base.with_attribute(STATUS, "pending").with_attribute(BALANCES, "merchant-7", 1200)
    assert options.initial_attributes == (
        (STATUS, None, "pending"),
        (BALANCES, "merchant-7", 1200),
    )
    assert isinstance(options.initial_attributes[0], InitialAttribute)
    assert options.initial_attributes[1].instance == "merchant-7"
    assert base.initial_attributes == () and options.timeout == 60 * S
    slashed = StartFlowOptions().with_attribute(BALANCES, "a / b", 1)
    assert slashed.initial_attributes == ((BALANCES, "a / b", 1),)
    child = SubFlowOptions().with_attribute(STATUS, "child")
    assert child.initial_attributes == ((STATUS, None, "child"),)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((BALANCES, 5), TypeError, "takes (attribute_map, instance, value), got 2 arguments"),
        ((STATUS, "x", "y"), TypeError, "takes (attribute, value), got 3 arguments"),
        ((BALANCES, "", 1), ValueError, "instance must be a non-empty str, got ''"),
        ((BALANCES, 7, 1), ValueError, "got 7"),
        (("status", "x"), TypeError, "needs an Attribute or AttributeMap, got 'status'"),
    ],
)
def test_with_attribute_rejects_bad_arguments(
    args: tuple[Any, ...], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        StartFlowOptions().with_attribute(*args)
    with pytest.raises(error, match=re.escape(message)):
        SubFlowOptions().with_attribute(*args)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"timeout_policy": FlowTimeoutPolicy.CANCEL},
            ValueError,
            "Flow timeout policy requires a positive timeout",
        ),
        ({"timeout": timedelta(milliseconds=500)}, ValueError, "timeout must be whole seconds"),
        ({"start_delay": -S}, ValueError, "start_delay must be whole seconds"),
        (
            {
                "timeout": S,
                "timeout_policy": FlowTimeoutPolicy.FAIL,
                "timeout_handler_options": FlowTimeoutHandlerOptions(),
            },
            ValueError,
            "timeout_handler_options needs a positive timeout and the HANDLER policy",
        ),
        (
            {"timeout_handler_options": FlowTimeoutHandlerOptions()},
            ValueError,
            "needs a positive timeout",
        ),
        ({"retry_policy": 3}, TypeError, "retry_policy must be a RetryPolicy, got 3"),
        (
            {"timeout_policy": "fail"},
            TypeError,
            "timeout_policy must be a member of FlowTimeoutPolicy",
        ),
    ],
)
def test_start_and_subflow_options_validate_timeouts(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    for cls in (StartFlowOptions, SubFlowOptions):
        with pytest.raises(error, match=re.escape(message)):
            cls(**kwargs)


def test_start_flow_options_request_id_and_reuse_policy() -> None:
    options = StartFlowOptions(ignore_already_started=True, request_id="start-1")
    assert options.request_id == "start-1"
    with pytest.raises(ValueError, match="request_id must be a non-empty str, got ''"):
        StartFlowOptions(request_id="")
    with pytest.raises(TypeError, match="id_reuse_policy must be a member of IdReusePolicy"):
        StartFlowOptions(id_reuse_policy="disallow")  # type: ignore[arg-type]
    valid = StartFlowOptions(timeout=S, timeout_handler_options=FlowTimeoutHandlerOptions())
    assert valid.timeout_handler_options == FlowTimeoutHandlerOptions()


def test_subflow_options_defaults_and_condition_id() -> None:
    options = SubFlowOptions()
    assert options.reuse_policy is SubFlowReusePolicy.RESTART_IF_PREVIOUS_EXITS_ABNORMALLY
    assert options.condition_id is None and options.config_override is None
    assert SubFlowOptions(condition_id="child").condition_id == "child"
    with pytest.raises(ValueError, match="condition_id must be a non-empty str"):
        SubFlowOptions(condition_id="")
    with pytest.raises(TypeError, match="reuse_policy must be a member of SubFlowReusePolicy"):
        SubFlowOptions(reuse_policy="attach")  # type: ignore[arg-type]


def test_timeout_handler_options_route_failures_to_a_step() -> None:
    options = FlowTimeoutHandlerOptions(
        method_timeout=30 * S,
        retry=RetryPolicy(maximum_attempts=3),
        load_channels=[1],  # type: ignore[arg-type]
    )
    assert options.load_channels == (1,) and options.durability is StepDurability.DEFAULT  # type: ignore[comparison-overlap]
    routed = options.on_failure_proceed_to(Recover(), StepOptions())
    assert routed.failure_proceed_to is Recover and routed.failure_options == StepOptions()
    assert options.failure_proceed_to is None
    with pytest.raises(ValueError, match="failure_options needs failure_proceed_to"):
        FlowTimeoutHandlerOptions(failure_options=StepOptions())
    with pytest.raises(ValueError, match="method_timeout must be whole seconds"):
        FlowTimeoutHandlerOptions(method_timeout=timedelta(milliseconds=1))
    with pytest.raises(TypeError, match="retry must be a RetryPolicy"):
        FlowTimeoutHandlerOptions(retry=1)  # type: ignore[arg-type]


def test_stop_flow_options() -> None:
    assert StopFlowOptions() == StopFlowOptions(StopType.CANCEL, None)
    assert StopFlowOptions(StopType.FAIL, "manual").reason == "manual"
    with pytest.raises(TypeError, match="StopFlowOptions.type must be a member of StopType"):
        StopFlowOptions("fail")  # type: ignore[arg-type]


def test_time_travel_options_named_constructors() -> None:
    when = datetime(2024, 1, 1, tzinfo=UTC)
    assert TimeTravelOptions.beginning("redo") == TimeTravelOptions(
        TimeTravelType.BEGINNING, reason="redo"
    )
    assert TimeTravelOptions.at_time(when).history_event_time == when
    assert TimeTravelOptions.at_step_type("Approve").step_method is None
    travel = TimeTravelOptions.at_step_execution("Approve-2", TimeTravelStepMethod.EXECUTE)
    assert (travel.type, travel.step_execution_id) == (
        TimeTravelType.STEP_EXECUTION_ID,
        "Approve-2",
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"type": TimeTravelType.BEGINNING, "step_type": "A"},
            "step_type is not used by type BEGINNING",
        ),
        (
            {"type": TimeTravelType.HISTORY_EVENT_TIME},
            "type HISTORY_EVENT_TIME needs history_event_time",
        ),
        (
            {"type": TimeTravelType.HISTORY_EVENT_TIME, "history_event_time": datetime(2024, 1, 1)},
            "must be timezone-aware",
        ),
        ({"type": TimeTravelType.STEP_TYPE, "step_type": ""}, "type STEP_TYPE needs step_type"),
        (
            {"type": TimeTravelType.STEP_EXECUTION_ID, "step_execution_id": "A-1"},
            "type STEP_EXECUTION_ID needs step_method",
        ),
        (
            {"type": TimeTravelType.STEP_EXECUTION_ID, "step_method": TimeTravelStepMethod.EXECUTE},
            "needs step_execution_id",
        ),
        (
            {"type": TimeTravelType.STEP_TYPE, "step_type": "A", "step_execution_id": "A-1"},
            "step_execution_id is not used by type STEP_TYPE",
        ),
    ],
)
def test_time_travel_options_check_selectors(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        TimeTravelOptions(**kwargs)


def test_flow_config_merges_non_none_fields() -> None:
    base = FlowConfig(
        step_durability=StepDurability.ASYNC,
        continue_as_new_threshold=1000,
        attribute_store_name="pg",
    )
    assert base.attribute_store_names == ("pg",)
    update = FlowConfig(
        active_step_search_mode=ActiveStepSearchMode.ALL,
        attribute_store_names=["a", "b"],  # type: ignore[arg-type]
    )
    merged = base.merged(update)
    assert (
        merged.step_durability is StepDurability.ASYNC and merged.continue_as_new_threshold == 1000
    )
    assert merged.active_step_search_mode is ActiveStepSearchMode.ALL
    assert merged.attribute_store_names == ("a", "b") and merged.attribute_store_name is None
    assert base.merged(None) is base and base.merged(FlowConfig()) == base


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"continue_as_new_threshold": 0},
            ValueError,
            "continue_as_new_threshold must be a positive int, got 0",
        ),
        ({"continue_as_new_page_size_bytes": True}, ValueError, "got True"),
        (
            {"step_durability": "sync"},
            TypeError,
            "step_durability must be a member of StepDurability",
        ),
        (
            {"attribute_store_names": "pg"},
            TypeError,
            "attribute_store_names must be a tuple, got str",
        ),
        ({"attribute_store_names": ["a"], "attribute_store_name": "b"}, ValueError, "contradicts"),
    ],
)
def test_flow_config_rejects_bad_values(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        FlowConfig(**kwargs)


def test_client_and_worker_options_defaults() -> None:
    assert ClientOptions() == ClientOptions("localhost:8801", None)
    worker = WorkerOptions()
    assert (worker.bind_address, worker.server_address) == (":8803", "localhost:8801")
    assert (
        worker.attribute_index_sync_timeout == timedelta(minutes=2) and worker.worker_target is None
    )
    assert WorkerTarget("inproc:tests").headless is False
    with pytest.raises(ValueError, match="attribute_index_sync_timeout must be positive"):
        WorkerOptions(attribute_index_sync_timeout=timedelta(0))
    with pytest.raises(ValueError, match="pull mode cannot be combined"):
        WorkerTarget("host:1", pull=True)
    with pytest.raises(ValueError, match="needs WorkerOptions.pull"):
        WorkerOptions(worker_target=WorkerTarget(pull=True))


@pytest.mark.parametrize("cls", [WaitForStepCompletionOptions, WaitForAttributeOptions])
def test_wait_options_accept_both_budget_names(cls: type[WaitForAttributeOptions]) -> None:
    assert cls() == cls("", timedelta(0), timedelta(0))
    by_new = cls(request_timeout=5 * S)
    by_old = cls(maximum_wait_time=5 * S)
    assert (
        by_new == by_old and by_old.request_timeout == 5 * S and by_new.maximum_wait_time == 5 * S
    )
    with pytest.raises(ValueError, match="request_timeout and maximum_wait_time name one budget"):
        cls(request_timeout=S, maximum_wait_time=2 * S)
    with pytest.raises(ValueError, match=f"{cls.__name__}.maximum_wait_time must not be negative"):
        cls(maximum_wait_time=-S)


def test_rpc_invoke_options_store_tuples() -> None:
    options = RPCInvokeOptions(load_attribute_map_instances=[BALANCES.load("m")])  # type: ignore[arg-type]
    assert options.load_attribute_map_instances == (BALANCES.load("m"),)
    assert options.lock_attribute_map_instances == ()
