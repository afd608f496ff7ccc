"""Builds Dex's client errors with the gRPC code and sub-status Dex gives each kind.

And names the Flow, Step execution and method an error message is about.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from dexviz.sdk.errors import (
    ChannelMessageNotFoundError,
    DexServiceError,
    ErrorSubStatus,
    FlowAlreadyStartedError,
    FlowClosingError,
    FlowNotActiveOrNotFoundError,
    FlowNotFoundError,
    LongPollTimeoutError,
    RequestTimeoutError,
    RpcLockConflictError,
    WaitHandlerTimeoutError,
    WorkerInvocationError,
    status_code,
)

if TYPE_CHECKING:
    from dexviz.engine.core.state import Execution, FlowRun

E = TypeVar("E", bound=DexServiceError)

_CODES: dict[type[DexServiceError], tuple[str, ErrorSubStatus]] = {
    FlowAlreadyStartedError: ("ALREADY_EXISTS", ErrorSubStatus.FLOW_ALREADY_STARTED),
    FlowNotFoundError: ("NOT_FOUND", ErrorSubStatus.FLOW_NOT_EXISTS),
    FlowNotActiveOrNotFoundError: ("NOT_FOUND", ErrorSubStatus.FLOW_NOT_EXISTS),
    FlowClosingError: ("FAILED_PRECONDITION", ErrorSubStatus.FLOW_CLOSING),
    LongPollTimeoutError: ("DEADLINE_EXCEEDED", ErrorSubStatus.LONG_POLL_TIMEOUT),
    WaitHandlerTimeoutError: ("DEADLINE_EXCEEDED", ErrorSubStatus.WAIT_HANDLER_TIMEOUT),
    RequestTimeoutError: ("DEADLINE_EXCEEDED", ErrorSubStatus.REQUEST_TIMEOUT),
    RpcLockConflictError: ("ABORTED", ErrorSubStatus.UNCATEGORIZED),
    ChannelMessageNotFoundError: ("NOT_FOUND", ErrorSubStatus.CHANNEL_MESSAGE_NOT_FOUND),
}


def service_error(cls: type[E], detail: str, *, flow_id: str | None, operation: str) -> E:
    """Build a DexServiceError subclass with Dex's status code and sub-status for it."""
    code, sub_status = _CODES.get(cls, ("UNKNOWN", ErrorSubStatus.UNCATEGORIZED))
    return cls(status_code(code), sub_status, detail, operation, flow_id)


def worker_error(
    detail: str, *, flow_id: str, operation: str, error_type: str, error_detail: str
) -> WorkerInvocationError:
    """The error a caller gets when an RPC handler raised (R116, R124).

    Dex reports a handler's own failure as FAILED_PRECONDITION / WORKER_API_ERROR, carrying the
    handler's exception type and message.
    """
    return WorkerInvocationError(
        status_code("FAILED_PRECONDITION"),
        ErrorSubStatus.WORKER_API_ERROR,
        detail,
        operation,
        flow_id,
        status_code("UNKNOWN"),
        error_type,
        error_detail,
    )


def method_where(run: FlowRun, ex: Execution, method: str) -> str:
    """Name the Flow, Step execution and method for messages."""
    return f"Flow {run.flow_type!r}, Step {ex.execution_id} {method}"
