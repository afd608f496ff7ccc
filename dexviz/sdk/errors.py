"""Dex's error classes (``dex.runtime_errors`` and ``dex._grpc_errors``) plus dexviz's own root.

The Dex errors keep Dex's names, base classes, constructor signatures and attributes, so code
written against ``dex-python-sdk`` catches and inspects them unchanged. Their messages add what
Dex leaves out (the operation and the Flow ID), every class pickles, and no ``repr`` shows a
memory address.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, cast


class _FallbackStatusCode(Enum):
    """gRPC status codes for when ``grpcio`` is not installed (same member names and values)."""

    OK = (0, "ok")
    CANCELLED = (1, "cancelled")
    UNKNOWN = (2, "unknown")
    INVALID_ARGUMENT = (3, "invalid argument")
    DEADLINE_EXCEEDED = (4, "deadline exceeded")
    NOT_FOUND = (5, "not found")
    ALREADY_EXISTS = (6, "already exists")
    PERMISSION_DENIED = (7, "permission denied")
    RESOURCE_EXHAUSTED = (8, "resource exhausted")
    FAILED_PRECONDITION = (9, "failed precondition")
    ABORTED = (10, "aborted")
    OUT_OF_RANGE = (11, "out of range")
    UNIMPLEMENTED = (12, "unimplemented")
    INTERNAL = (13, "internal")
    UNAVAILABLE = (14, "unavailable")
    DATA_LOSS = (15, "data loss")
    UNAUTHENTICATED = (16, "unauthenticated")


# Members print as StatusCode.X; __qualname__ stays, so pickles find this class, not grpc's.
_FallbackStatusCode.__name__ = "StatusCode"

if TYPE_CHECKING:
    StatusCode = _FallbackStatusCode
    """gRPC status codes: ``grpc.StatusCode`` when grpcio is installed, else a same-shaped enum."""

_resolved_status_code: type[Enum] | None = None


def _grpc_status_code() -> type[Enum] | None:
    try:
        module = importlib.import_module("grpc")
    except ImportError:
        return None
    status_code: type[Enum] = module.StatusCode
    return status_code


def status_code_enum() -> type[Enum]:
    """Return the status-code enum Dex applications compare with: ``grpc.StatusCode`` if installed.

    grpc is imported on the first call, not when dexviz is imported (importing grpc pulls
    asyncio, logging and a thread pool); without grpcio, a same-shaped enum stands in.
    """
    global _resolved_status_code
    if _resolved_status_code is None:
        _resolved_status_code = _grpc_status_code() or _FallbackStatusCode
    return _resolved_status_code


def status_code(name: str) -> StatusCode:
    """Return the status code called ``name`` without importing grpc.

    The member is grpc's when grpc is already imported and the stand-in's otherwise; errors
    keep only the name, so either member works as a constructor argument.
    """
    grpc = sys.modules.get("grpc")
    if grpc is not None and hasattr(grpc, "StatusCode"):
        member: StatusCode = grpc.StatusCode[name]
        return member
    return _FallbackStatusCode[name]


def __getattr__(name: str) -> Any:
    """Resolve ``StatusCode`` on first access, so importing this module does not import grpc."""
    if name == "StatusCode":
        return status_code_enum()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ErrorSubStatus(Enum):
    """Classify a Dex service error more precisely than its gRPC status.

    Attributes:
        UNCATEGORIZED: No specific classification.
        FLOW_ALREADY_STARTED: The Flow ID conflicts with an existing run.
        FLOW_NOT_EXISTS: No Flow with the requested ID exists.
        WORKER_API_ERROR: A Worker handler rejected or failed an invocation.
        LONG_POLL_TIMEOUT: A long poll ended before its condition was observed.
        CHANNEL_MESSAGE_NOT_FOUND: A pending Channel message ID no longer exists.
        REQUEST_TIMEOUT: A caller-defined request budget expired.
        FLOW_CLOSING: A request was rejected while the Flow was closing.
        WAIT_HANDLER_TIMEOUT: A client wait used up its whole waiting budget.
    """

    UNCATEGORIZED = "uncategorized"
    FLOW_ALREADY_STARTED = "flow_already_started"
    FLOW_NOT_EXISTS = "flow_not_exists"
    WORKER_API_ERROR = "worker_api_error"
    LONG_POLL_TIMEOUT = "long_poll_timeout"
    CHANNEL_MESSAGE_NOT_FOUND = "channel_message_not_found"
    REQUEST_TIMEOUT = "request_timeout"
    FLOW_CLOSING = "flow_closing"
    WAIT_HANDLER_TIMEOUT = "wait_handler_timeout"


class FlowErrorType(Enum):
    """Say why a Flow closed as failed.

    Attributes:
        STEP_DECISION_FAILED: A Step decided ``force_fail``.
        CLIENT_API_FAILED: A client request (such as ``stop_flow`` with FAIL) failed the Flow.
        WORKER_API_FAILED: A handler used up its retries with no recovery route.
        INVALID_USER_FLOW_CODE: The Flow code returned something the SDK contract forbids.
        INTERNAL: The engine hit an internal error.
        FLOW_TIMEOUT: The Flow timeout fired under the FAIL policy.
    """

    STEP_DECISION_FAILED = "step_decision_failed"
    CLIENT_API_FAILED = "client_api_failed"
    WORKER_API_FAILED = "worker_api_failed"
    INVALID_USER_FLOW_CODE = "invalid_user_flow_code"
    INTERNAL = "internal"
    FLOW_TIMEOUT = "flow_timeout"


class DexServiceError(RuntimeError):
    """An error answered by the Dex service (here: the in-process engine) to a client call.

    Attributes:
        code: The gRPC status code (``grpc.StatusCode`` when grpcio is installed).
        sub_status: The Dex-specific classification.
        detail: The human-readable detail, without operation or Flow context.
        operation: The client operation that failed, such as ``"start_flow"``.
        flow_id: The Flow ID the call targeted, or None for service-wide calls.
    """

    def __init__(
        self,
        code: StatusCode,
        sub_status: ErrorSubStatus,
        detail: str,
        operation: str,
        flow_id: str | None,
    ) -> None:
        """Create a service error.

        Args:
            code: The gRPC status code.
            sub_status: The Dex-specific classification.
            detail: The human-readable detail.
            operation: The client operation that failed.
            flow_id: The targeted Flow ID, if any.
        """
        super().__init__(_service_message(operation, flow_id, detail))
        self._code_name = code.name
        self.sub_status = sub_status
        self.detail = detail
        self.operation = operation
        self.flow_id = flow_id

    @property
    def code(self) -> StatusCode:
        """The gRPC status code: a ``grpc.StatusCode`` member whenever grpcio is installed."""
        return cast("StatusCode", status_code_enum()[self._code_name])

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle through the constructor arguments (by name, so grpc need not be imported)."""
        code = _FallbackStatusCode[self._code_name]
        arguments = (code, self.sub_status, self.detail, self.operation, self.flow_id)
        return (type(self), arguments)

    def __repr__(self) -> str:
        """Show the structured fields."""
        return (
            f"{type(self).__name__}(code={self._code_name}, sub_status={self.sub_status.name}, "
            f"operation={self.operation!r}, flow_id={self.flow_id!r}, detail={self.detail!r})"
        )


def _service_message(operation: str, flow_id: str | None, detail: str) -> str:
    target = f" for Flow {flow_id!r}" if flow_id is not None else ""
    return f"{operation or 'request'} failed{target}: {detail}"


class FlowAlreadyStartedError(DexServiceError):
    """``start_flow`` conflicts with an existing run of the same Flow ID."""


class FlowClosingError(DexServiceError):
    """A request was rejected because the Flow was closing; re-read its terminal result."""


class FlowNotFoundError(DexServiceError):
    """The operation targeted a Flow ID that does not exist."""


class FlowNotActiveOrNotFoundError(DexServiceError):
    """The Flow is missing, or closed while the operation needs an active Flow."""


FlowNotActiveError = FlowNotActiveOrNotFoundError
"""Older Dex name of :class:`FlowNotActiveOrNotFoundError` (the same class)."""


class WorkerInvocationError(DexServiceError):
    """A handler invoked for the caller (an RPC) failed; carries the handler's own failure.

    Attributes:
        worker_code: The status code the handler failure maps to, or None.
        worker_error_type: The handler exception type, as ``module.QualifiedName``.
        worker_error_detail: ``str()`` of the handler exception.
    """

    def __init__(
        self,
        code: StatusCode,
        sub_status: ErrorSubStatus,
        detail: str,
        operation: str,
        flow_id: str | None,
        worker_code: StatusCode | None,
        worker_error_type: str,
        worker_error_detail: str,
    ) -> None:
        """Create a worker invocation error.

        Args:
            code: The outer status code.
            sub_status: The Dex-specific classification, usually WORKER_API_ERROR.
            detail: The outer detail.
            operation: The client operation that invoked the handler.
            flow_id: The targeted Flow ID, if any.
            worker_code: The handler's status code, if any.
            worker_error_type: The handler exception type.
            worker_error_detail: The handler exception text.
        """
        super().__init__(code, sub_status, detail, operation, flow_id)
        self._worker_code_name = None if worker_code is None else worker_code.name
        self.worker_error_type = worker_error_type
        self.worker_error_detail = worker_error_detail

    @property
    def worker_code(self) -> StatusCode | None:
        """The handler's status code (grpc's member when grpcio is installed), or None."""
        if self._worker_code_name is None:
            return None
        return cast("StatusCode", status_code_enum()[self._worker_code_name])

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle through the constructor arguments (by name, so grpc need not be imported)."""
        worker = self._worker_code_name
        arguments = (
            _FallbackStatusCode[self._code_name],
            self.sub_status,
            self.detail,
            self.operation,
            self.flow_id,
            None if worker is None else _FallbackStatusCode[worker],
            self.worker_error_type,
            self.worker_error_detail,
        )
        return (type(self), arguments)


class RpcLockConflictError(DexServiceError):
    """An RPC could not take all of its Attribute locks; it was not run."""


class LongPollTimeoutError(DexServiceError):
    """A long poll (such as ``wait_for_flow``) ended before its condition held; call again."""


class RequestTimeoutError(DexServiceError):
    """A caller-defined request budget expired."""


class ChannelMessageNotFoundError(DexServiceError):
    """A pending Channel message ID does not exist (any more)."""


class WaitHandlerTimeoutError(DexServiceError):
    """A client wait (step completion or attribute match) used up its maximum waiting time."""


class FlowDefinitionError(RuntimeError):
    """A Flow definition is invalid, or a Flow, Step or RPC used at call time is not registered."""


class InvalidStepResultError(FlowDefinitionError):
    """A handler returned a value that breaks the SDK contract (not a Wait, StepDecision, ...).

    Attributes:
        flow_type: The Flow type.
        step_type: The Step type, or None for an RPC.
        method: ``"wait_for"``, ``"execute"`` or ``"rpc"``.
        detail: What was wrong with the result.
    """

    def __init__(
        self,
        flow_type: str,
        step_type: str | None,
        method: Literal["wait_for", "execute", "rpc"],
        detail: str,
    ) -> None:
        """Create the error.

        Args:
            flow_type: The Flow type.
            step_type: The Step type, or None for an RPC.
            method: The handler that returned the value.
            detail: What was wrong with the result.
        """
        if step_type is None:
            where = f"Flow {flow_type!r} RPC handler"
        else:
            where = f"Flow {flow_type!r} Step {step_type!r} {method}()"
        super().__init__(f"{where} returned an invalid result: {detail}")
        self.flow_type = flow_type
        self.step_type = step_type
        self.method = method
        self.detail = detail

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle through the constructor arguments."""
        return (type(self), (self.flow_type, self.step_type, self.method, self.detail))


class ValueMappingError(RuntimeError):
    """A value could not be encoded for, or decoded from, its declared type.

    Attributes:
        operation: What was being done, such as ``"encode"`` or ``"publish to Channel 'x'"``.
        detail: The expected type, the offending value's type, and where in the value.
    """

    def __init__(self, operation: str, detail: str) -> None:
        """Create the error.

        Args:
            operation: What was being done.
            detail: Why it failed.
        """
        super().__init__(f"{operation} failed: {detail}")
        self.operation = operation
        self.detail = detail

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle through the constructor arguments."""
        return (type(self), (self.operation, self.detail))


class AttributeMapNotLoadedError(RuntimeError):
    """A handler read AttributeMap entries that its options did not load."""


class ChannelMessagesNotLoadedError(RuntimeError):
    """A handler read pending Channel messages that its options did not load."""


@dataclass(frozen=True)
class RetryAfterError(Exception):
    """Raised by a handler to retry after a fixed delay instead of the policy's backoff (R105).

    Build it with :func:`retry_after`. The cause is what gets reported as the failure.

    Attributes:
        after_seconds: The delay before the next attempt, in seconds (> 0).
        cause: The failure being retried.
    """

    after_seconds: int
    cause: BaseException

    def __str__(self) -> str:
        """Show the cause, as Dex reports it."""
        return str(self.cause)

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle through the constructor arguments."""
        return (type(self), (self.after_seconds, self.cause))



_EXCEPTION_STATE = frozenset(
    {"__cause__", "__context__", "__suppress_context__", "__traceback__", "__notes__"})
_FROZEN_SETATTR = RetryAfterError.__setattr__


def _retry_after_setattr(self: RetryAfterError, name: str, value: object) -> None:
    # The exception machinery's own attributes stay settable: unpicklers that restore them
    # (tblib, which Dask installs process-wide) must not hit the frozen fields' guard. A frozen
    # dataclass may not define __setattr__ itself, so the guard is wrapped after the class.
    if name in _EXCEPTION_STATE:
        object.__setattr__(self, name, value)
    else:
        _FROZEN_SETATTR(self, name, value)


RetryAfterError.__setattr__ = _retry_after_setattr  # type: ignore[method-assign,assignment]


def retry_after(after_seconds: int, cause: BaseException) -> RetryAfterError:
    """Create the error a handler raises to have its method retried after ``after_seconds``.

    Args:
        after_seconds: The delay before the next attempt, in whole seconds; must be positive.
        cause: The failure being retried; reported as the attempt's error.

    Returns:
        The error to raise.

    Raises:
        ValueError: If ``after_seconds`` is not a positive int or ``cause`` is None.

    Examples:
        >>> raise retry_after(5, RuntimeError("service not ready"))  # doctest: +SKIP
    """
    if cause is None:
        raise ValueError("retry_after() needs a cause, got None")
    if isinstance(after_seconds, bool) or not isinstance(after_seconds, int):
        raise ValueError(f"retry_after() needs whole seconds as an int, got {after_seconds!r}")
    if after_seconds <= 0:
        raise ValueError(f"retry_after() needs a positive delay, got {after_seconds}")
    return RetryAfterError(after_seconds=after_seconds, cause=cause)


class DexvizError(Exception):
    """Root of the errors dexviz raises for its own features (not part of Dex's API)."""


class SimulationLimitError(DexvizError):
    """A simulation stopped because it ran past one of its limits (steps, events or time)."""
