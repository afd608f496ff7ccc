"""Dex's error classes: hierarchy, fields, messages, pickling, reprs, retry_after (§2.14)."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import pickle
import re
import subprocess
import sys

import pytest

from dexviz.sdk import errors
from dexviz.sdk.errors import (
    AttributeMapNotLoadedError,
    ChannelMessageNotFoundError,
    ChannelMessagesNotLoadedError,
    DexServiceError,
    DexvizError,
    ErrorSubStatus,
    FlowAlreadyStartedError,
    FlowClosingError,
    FlowDefinitionError,
    FlowErrorType,
    FlowNotActiveError,
    FlowNotActiveOrNotFoundError,
    FlowNotFoundError,
    InvalidStepResultError,
    LongPollTimeoutError,
    RequestTimeoutError,
    RetryAfterError,
    RpcLockConflictError,
    SimulationLimitError,
    StatusCode,
    ValueMappingError,
    WaitHandlerTimeoutError,
    WorkerInvocationError,
    retry_after,
)

ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")

SERVICE_ERRORS = [
    DexServiceError,
    FlowAlreadyStartedError,
    FlowClosingError,
    FlowNotFoundError,
    FlowNotActiveOrNotFoundError,
    RpcLockConflictError,
    LongPollTimeoutError,
    RequestTimeoutError,
    ChannelMessageNotFoundError,
    WaitHandlerTimeoutError,
]


def test_status_code_has_grpc_member_names_and_values() -> None:
    names = [member.name for member in StatusCode]
    assert names[0] == "OK" and names[-1] == "UNAUTHENTICATED" and len(names) == 17
    assert StatusCode.NOT_FOUND.value == (5, "not found")
    assert StatusCode.ABORTED.value == (10, "aborted")


def test_status_code_is_grpcs_own_enum_when_grpc_is_installed() -> None:
    if importlib.util.find_spec("grpc") is None:
        assert StatusCode.__module__ == "dexviz.sdk.errors"
        assert errors._grpc_status_code() is None
    else:
        assert StatusCode is importlib.import_module("grpc").StatusCode


def test_error_sub_status_and_flow_error_type_keep_dex_values() -> None:
    assert [member.name for member in ErrorSubStatus] == [
        "UNCATEGORIZED",
        "FLOW_ALREADY_STARTED",
        "FLOW_NOT_EXISTS",
        "WORKER_API_ERROR",
        "LONG_POLL_TIMEOUT",
        "CHANNEL_MESSAGE_NOT_FOUND",
        "REQUEST_TIMEOUT",
        "FLOW_CLOSING",
        "WAIT_HANDLER_TIMEOUT",
    ]
    assert ErrorSubStatus.FLOW_NOT_EXISTS.value == "flow_not_exists"
    assert [member.value for member in FlowErrorType] == [
        "step_decision_failed",
        "client_api_failed",
        "worker_api_failed",
        "invalid_user_flow_code",
        "internal",
        "flow_timeout",
    ]


@pytest.mark.parametrize("cls", SERVICE_ERRORS)
def test_service_errors_carry_fields_message_and_pickle(cls: type[DexServiceError]) -> None:
    error = cls(StatusCode.NOT_FOUND, ErrorSubStatus.FLOW_NOT_EXISTS, "no such flow", "wait", "f-1")
    assert isinstance(error, DexServiceError) and isinstance(error, RuntimeError)
    assert (error.code, error.sub_status) == (StatusCode.NOT_FOUND, ErrorSubStatus.FLOW_NOT_EXISTS)
    assert (error.detail, error.operation, error.flow_id) == ("no such flow", "wait", "f-1")
    assert str(error) == "wait failed for Flow 'f-1': no such flow"
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is cls and str(copy) == str(error) and copy.flow_id == "f-1"
    assert copy.code is StatusCode.NOT_FOUND


def test_service_error_without_flow_id_and_its_repr() -> None:
    error = DexServiceError(
        StatusCode.UNAVAILABLE, ErrorSubStatus.UNCATEGORIZED, "engine closed", "health_check", None
    )
    assert str(error) == "health_check failed: engine closed"
    assert repr(error) == (
        "DexServiceError(code=UNAVAILABLE, sub_status=UNCATEGORIZED, operation='health_check', "
        "flow_id=None, detail='engine closed')"
    )


def test_flow_not_active_error_is_the_dex_1_23_class() -> None:
    assert FlowNotActiveError is FlowNotActiveOrNotFoundError
    with pytest.raises(FlowNotActiveError):
        raise FlowNotActiveOrNotFoundError(
            StatusCode.FAILED_PRECONDITION, ErrorSubStatus.UNCATEGORIZED, "closed", "publish", "f"
        )


def test_worker_invocation_error_carries_the_handler_failure() -> None:
    error = WorkerInvocationError(
        StatusCode.INTERNAL,
        ErrorSubStatus.WORKER_API_ERROR,
        "rpc failed",
        "invoke_rpc",
        "order-1",
        StatusCode.UNKNOWN,
        "builtins.ValueError",
        "bad amount",
    )
    assert error.worker_code is StatusCode.UNKNOWN
    assert (error.worker_error_type, error.worker_error_detail) == (
        "builtins.ValueError",
        "bad amount",
    )
    copy = pickle.loads(pickle.dumps(error))
    assert copy.worker_error_detail == "bad amount" and copy.flow_id == "order-1"
    assert not ADDRESS.search(repr(copy))


def test_invalid_step_result_error_names_flow_step_and_method() -> None:
    error = InvalidStepResultError("Orders", "Approve", "execute", "got None, not a StepDecision")
    assert isinstance(error, FlowDefinitionError) and isinstance(error, RuntimeError)
    assert str(error) == (
        "Flow 'Orders' Step 'Approve' execute() returned an invalid result: "
        "got None, not a StepDecision"
    )
    assert (error.flow_type, error.step_type, error.method) == ("Orders", "Approve", "execute")
    rpc = InvalidStepResultError("Orders", None, "rpc", "got a coroutine")
    assert str(rpc) == "Flow 'Orders' RPC handler returned an invalid result: got a coroutine"
    assert pickle.loads(pickle.dumps(rpc)).detail == "got a coroutine"


def test_value_mapping_error_message_fields_and_pickle() -> None:
    error = ValueMappingError("publish to Channel 'token'", "expected str, got int")
    assert str(error) == "publish to Channel 'token' failed: expected str, got int"
    assert (error.operation, error.detail) == (
        "publish to Channel 'token'",
        "expected str, got int",
    )
    assert pickle.loads(pickle.dumps(error)).detail == "expected str, got int"


def test_not_loaded_errors_are_runtime_errors() -> None:
    assert issubclass(AttributeMapNotLoadedError, RuntimeError)
    assert issubclass(ChannelMessagesNotLoadedError, RuntimeError)


def test_retry_after_builds_a_frozen_picklable_error() -> None:
    cause = RuntimeError("service not ready")
    error = retry_after(7, cause)
    assert isinstance(error, RetryAfterError) and isinstance(error, Exception)
    assert (error.after_seconds, error.cause) == (7, cause)
    assert str(error) == "service not ready"
    assert (
        repr(error) == "RetryAfterError(after_seconds=7, cause=RuntimeError('service not ready'))"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        error.after_seconds = 1  # type: ignore[misc]
    copy = pickle.loads(pickle.dumps(error))
    assert copy.after_seconds == 7 and str(copy.cause) == "service not ready"
    with pytest.raises(RetryAfterError):
        raise error


@pytest.mark.parametrize(
    ("seconds", "cause", "message"),
    [
        (0, RuntimeError("x"), "positive delay, got 0"),
        (-3, RuntimeError("x"), "positive delay, got -3"),
        (5, None, "needs a cause"),
        (1.5, RuntimeError("x"), "whole seconds as an int, got 1.5"),
        (True, RuntimeError("x"), "whole seconds as an int, got True"),
    ],
)
def test_retry_after_rejects_bad_arguments(seconds: object, cause: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        retry_after(seconds, cause)  # type: ignore[arg-type]


def test_dexviz_errors_have_their_own_root() -> None:
    assert issubclass(SimulationLimitError, DexvizError)
    assert not issubclass(DexvizError, RuntimeError)
    assert not issubclass(DexServiceError, DexvizError)
    assert str(SimulationLimitError("more than 10000 steps")) == "more than 10000 steps"


_RAISED_BEFORE_GRPC = """
import sys
from dexviz.engine.core.errors import service_error, worker_error
from dexviz.sdk.errors import FlowNotFoundError
error = service_error(FlowNotFoundError, "no such flow", flow_id="f", operation="describe")
worker = worker_error("boom", flow_id="f", operation="rpc", error_type="E", error_detail="x")
print("grpc" in sys.modules, repr(error))
import grpc
print(error.code == grpc.StatusCode.NOT_FOUND, error.code is grpc.StatusCode.NOT_FOUND)
codes = grpc.StatusCode
print(worker.code is codes.FAILED_PRECONDITION, worker.worker_code is codes.UNKNOWN)
"""


def test_status_code_is_resolved_lazily_and_errors_answer_with_grpcs_members() -> None:
    if importlib.util.find_spec("grpc") is None:
        pytest.skip("grpcio is not installed")
    out = subprocess.run(
        [sys.executable, "-c", _RAISED_BEFORE_GRPC], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0].startswith("False FlowNotFoundError(code=NOT_FOUND,")
    assert out[1:] == ["True True", "True True"]


def test_errors_built_with_the_stand_in_enum_pickle_and_compare_by_name() -> None:
    error = DexServiceError(
        errors._FallbackStatusCode.ABORTED, ErrorSubStatus.UNCATEGORIZED, "d", "op", None
    )
    assert error.code is StatusCode.ABORTED
    assert pickle.loads(pickle.dumps(error)).code is StatusCode.ABORTED


def test_retry_after_error_pickles_with_tblib_installed_as_dask_does() -> None:
    # distributed installs tblib's exception pickling process-wide; its unpickler sets
    # __cause__ on the rebuilt error, which a frozen dataclass refused.
    code = (
        "import pickle, dataclasses, tblib.pickling_support\n"
        "from dexviz.sdk.errors import retry_after\n"
        "tblib.pickling_support.install()  # after: it patches the classes that exist\n"
        "error = retry_after(7, RuntimeError('service not ready'))\n"
        "copy = pickle.loads(pickle.dumps(error))\n"
        "assert (copy.after_seconds, str(copy)) == (7, 'service not ready'), copy\n"
        "try:\n"
        "    copy.after_seconds = 1\n"
        "except dataclasses.FrozenInstanceError:\n"
        "    print('ok')\n"
    )
    pytest.importorskip("tblib", reason="tblib comes with the cluster extra (dask distributed)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.stdout.strip() == "ok", done.stderr
