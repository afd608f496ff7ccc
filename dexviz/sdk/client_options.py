"""Options of the Client, the Worker, and client calls other than ``start_flow``.

WorkerTarget, ClientOptions, WorkerOptions, StopFlowOptions, TimeTravelOptions, the wait options
and RPCInvokeOptions (Dex's ``client_options``, ``worker_options``, ``wait_options``,
``rpc_invoke_options`` and part of ``flow_options``). ``dexviz.sdk.flow_options`` re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from enum import Enum
from typing import TYPE_CHECKING

from dexviz.sdk.options import as_tuple, require_enum

if TYPE_CHECKING:
    from dexviz.sdk.attribute import AttributeLock, AttributeMapLoad
    from dexviz.sdk.channel import ChannelMapLoad


@dataclass(frozen=True, slots=True)
class WorkerTarget:
    """The Worker endpoint a Flow's handlers are dispatched to (an opaque key in dexviz).

    Attributes:
        address: The Worker address.
        headless: Connect directly, without service discovery.
        pull: Dispatch through Worker task queues (not with an address or headless).
    """

    address: str = ""
    headless: bool = False
    pull: bool = False

    def __post_init__(self) -> None:
        """Reject pull mode combined with an address or headless mode."""
        if self.pull and (self.address or self.headless):
            raise ValueError(
                "WorkerTarget: pull mode cannot be combined with an address or headless"
            )


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """Options of ``Client``/``AsyncClient``; ``server_address`` names the engine to share.

    Attributes:
        server_address: The engine key (``"inproc:tests"`` works; it is never dialled).
        worker_target: Default Worker endpoint of started Flows.
        credential: Accepted for Dex compatibility; dexviz does not use it.
    """

    server_address: str = "localhost:8801"
    worker_target: WorkerTarget | None = None
    credential: object | None = None


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """Options of ``Worker``/``AsyncWorker`` (no socket is opened in dexviz).

    Attributes:
        bind_address: The address the Worker would listen on.
        worker_target: The endpoint advertised for it (None: derived from ``bind_address``).
        server_address: The engine key shared with the Clients.
        attribute_index_sync_timeout: Startup index synchronisation limit (positive).
        pull: Pull-mode options, accepted for Dex compatibility.
        credential: Accepted for Dex compatibility; dexviz does not use it.
    """

    bind_address: str = ":8803"
    worker_target: WorkerTarget | None = None
    server_address: str = "localhost:8801"
    attribute_index_sync_timeout: timedelta = timedelta(minutes=2)
    pull: object | None = None
    credential: object | None = None

    def __post_init__(self) -> None:
        """Validate the timeout and the pull-mode combination."""
        if self.attribute_index_sync_timeout <= timedelta(0):
            raise ValueError("WorkerOptions.attribute_index_sync_timeout must be positive")
        if self.pull is None and self.worker_target is not None and self.worker_target.pull:
            raise ValueError("WorkerOptions: WorkerTarget(pull=True) needs WorkerOptions.pull")


@dataclass(frozen=True, slots=True)
class _WaitOptions:
    request_id: str = ""
    request_timeout: timedelta = timedelta(0)
    internal_handler_timeout: timedelta = timedelta(0)
    maximum_wait_time: timedelta = timedelta(0)

    def __post_init__(self) -> None:
        owner = type(self).__name__
        for name in ("request_timeout", "internal_handler_timeout", "maximum_wait_time"):
            if getattr(self, name) < timedelta(0):
                raise ValueError(f"{owner}.{name} must not be negative")
        budget, alias = self.request_timeout, self.maximum_wait_time
        if budget and alias and budget != alias:
            raise ValueError(
                f"{owner}: request_timeout and maximum_wait_time name one budget; set one"
            )
        object.__setattr__(self, "request_timeout", budget or alias)
        object.__setattr__(self, "maximum_wait_time", budget or alias)


@dataclass(frozen=True, slots=True)
class WaitForStepCompletionOptions(_WaitOptions):
    """Options of ``wait_for_step_completion``; a zero budget waits without limit.

    Attributes:
        request_id: Idempotency key of the wait ("" derives one).
        request_timeout: The whole wait's budget (Dex 1.23 name).
        internal_handler_timeout: Server-side handler lifetime (accepted; no effect in-process).
        maximum_wait_time: Older name of the budget; always equal to ``request_timeout``.
    """


@dataclass(frozen=True, slots=True)
class WaitForAttributeOptions(_WaitOptions):
    """Options of ``wait_for_attribute_match``; a zero budget waits without limit.

    Attributes:
        request_id: Idempotency key of the wait ("" derives one).
        request_timeout: The whole wait's budget (Dex 1.23 name).
        internal_handler_timeout: Server-side handler lifetime (accepted; no effect in-process).
        maximum_wait_time: Older name of the budget; always equal to ``request_timeout``.
    """


@dataclass(frozen=True, slots=True)
class RPCInvokeOptions:
    """Per-call lock and load additions of ``invoke_rpc``, merged with the ``@rpc`` settings.

    Attributes:
        lock_attribute_map_instances: Extra AttributeMap instance locks.
        load_attribute_map_instances: Extra AttributeMap instances to load.
        load_channel_map_instances: Extra ChannelMap instances to load.
    """

    lock_attribute_map_instances: tuple[AttributeLock, ...] = ()
    load_attribute_map_instances: tuple[AttributeMapLoad, ...] = ()
    load_channel_map_instances: tuple[ChannelMapLoad, ...] = ()

    def __post_init__(self) -> None:
        """Store the sequences as tuples."""
        for item in fields(self):
            object.__setattr__(
                self, item.name, as_tuple("RPCInvokeOptions", item.name, getattr(self, item.name))
            )


class TimeTravelType(Enum):
    """Where ``time_travel`` starts the new run from.

    Attributes:
        BEGINNING: The start of the Flow.
        HISTORY_EVENT_TIME: The first event at or after ``history_event_time``.
        STEP_TYPE: The latest execution of ``step_type``.
        STEP_EXECUTION_ID: The execution ``step_execution_id``, at ``step_method``.
    """

    BEGINNING = "beginning"
    HISTORY_EVENT_TIME = "history_event_time"
    STEP_TYPE = "step_type"
    STEP_EXECUTION_ID = "step_execution_id"


class TimeTravelStepMethod(Enum):
    """Which method of the selected execution runs again.

    Attributes:
        WAIT_FOR: Rerun ``wait_for`` and everything after it.
        EXECUTE: Keep the ``wait_for`` result; rerun ``execute`` and everything after it.
    """

    WAIT_FOR = "wait_for"
    EXECUTE = "execute"


_TIME_TRAVEL_SELECTORS = {
    TimeTravelType.BEGINNING: (),
    TimeTravelType.HISTORY_EVENT_TIME: ("history_event_time",),
    TimeTravelType.STEP_TYPE: ("step_type", "step_method"),
    TimeTravelType.STEP_EXECUTION_ID: ("step_execution_id", "step_method"),
}


@dataclass(frozen=True, slots=True)
class TimeTravelOptions:
    """Options of ``time_travel``: the point a new run starts from.

    The selector fields must match ``type``: HISTORY_EVENT_TIME needs an aware
    ``history_event_time``; STEP_TYPE needs ``step_type`` (``step_method`` optional);
    STEP_EXECUTION_ID needs ``step_execution_id`` and ``step_method``; BEGINNING takes none.

    Attributes:
        type: The kind of point.
        history_event_time: The time, for HISTORY_EVENT_TIME.
        step_type: The Step type, for STEP_TYPE.
        step_execution_id: The execution ID, for STEP_EXECUTION_ID.
        step_method: The method boundary, for the Step selectors.
        reason: Why, for the record.
        skip_writes_reapply: Do not replay RPCs, publications and writes made after the point.
    """

    type: TimeTravelType
    history_event_time: datetime | None = None
    step_type: str | None = None
    step_execution_id: str | None = None
    step_method: TimeTravelStepMethod | None = None
    reason: str | None = None
    skip_writes_reapply: bool = False

    def __post_init__(self) -> None:
        """Check that the selector fields match ``type``."""
        require_enum("TimeTravelOptions", "type", self.type, TimeTravelType)
        allowed = _TIME_TRAVEL_SELECTORS[self.type]
        for name in ("history_event_time", "step_type", "step_execution_id", "step_method"):
            if name not in allowed and getattr(self, name) is not None:
                raise ValueError(f"TimeTravelOptions.{name} is not used by type {self.type.name}")
        required = allowed[:1] + (
            ("step_method",) if len(allowed) == 2 and allowed[0] == "step_execution_id" else ()
        )
        for name in required:
            if getattr(self, name) in (None, ""):
                raise ValueError(f"TimeTravelOptions type {self.type.name} needs {name}")
        if self.step_method is not None:
            require_enum("TimeTravelOptions", "step_method", self.step_method, TimeTravelStepMethod)
        if self.history_event_time is not None and self.history_event_time.utcoffset() is None:
            raise ValueError("TimeTravelOptions.history_event_time must be timezone-aware")

    @classmethod
    def beginning(cls, reason: str | None = None) -> TimeTravelOptions:
        """Travel to the start of the Flow."""
        return cls(TimeTravelType.BEGINNING, reason=reason)

    @classmethod
    def at_time(cls, history_event_time: datetime, reason: str | None = None) -> TimeTravelOptions:
        """Travel to the first event at or after ``history_event_time``."""
        return cls(
            TimeTravelType.HISTORY_EVENT_TIME, history_event_time=history_event_time, reason=reason
        )

    @classmethod
    def at_step_type(
        cls,
        step_type: str,
        step_method: TimeTravelStepMethod | None = None,
        reason: str | None = None,
    ) -> TimeTravelOptions:
        """Travel to the latest execution of ``step_type``."""
        return cls(
            TimeTravelType.STEP_TYPE, step_type=step_type, step_method=step_method, reason=reason
        )

    @classmethod
    def at_step_execution(
        cls, step_execution_id: str, step_method: TimeTravelStepMethod, reason: str | None = None
    ) -> TimeTravelOptions:
        """Travel to one execution, rerunning ``step_method`` and what follows."""
        return cls(
            TimeTravelType.STEP_EXECUTION_ID,
            step_execution_id=step_execution_id,
            step_method=step_method,
            reason=reason,
        )


class StopType(Enum):
    """How ``stop_flow`` closes a Flow.

    Attributes:
        CANCEL: Cancel (status CANCELED).
        TERMINATE: Terminate at once (status TERMINATED).
        FAIL: Fail with the given reason (status FAILED).
    """

    CANCEL = "cancel"
    TERMINATE = "terminate"
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class StopFlowOptions:
    """Options of ``stop_flow``.

    Attributes:
        type: How to close the Flow.
        reason: Why, recorded with the close.
    """

    type: StopType = StopType.CANCEL
    reason: str | None = None

    def __post_init__(self) -> None:
        """Validate the stop type."""
        require_enum("StopFlowOptions", "type", self.type, StopType)
