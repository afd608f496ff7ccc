"""Context and AsyncContext: what a handler can ask the engine while it runs.

Users never build a Context; the engine passes one to every WaitFor, Execute, RPC and timeout
handler. Definitions (Channel, Attribute, SubFlow) reach the engine through the private hooks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from dexviz.sdk.results import ChannelMessage, FlowResult, RecoveryErrorInfo

T = TypeVar("T")


class _Absent:
    """Marks "no value given", distinct from None."""

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()


class Context(ABC):
    """The handler's view of its invocation: ids, attempt, timers fired, locals and events."""

    # No instance dict: the engine makes one context per attempt, and slots are cheaper.
    __slots__ = ()

    @property
    @abstractmethod
    def flow_id(self) -> str:
        """The application-assigned Flow id."""

    @property
    @abstractmethod
    def run_id(self) -> str:
        """The id of the current run of the Flow."""

    @property
    @abstractmethod
    def step_execution_id(self) -> str:
        """This execution's id, ``StepType-N`` (``sys:timeout_handler-1`` for the handler)."""

    @property
    @abstractmethod
    def from_step_execution_id(self) -> str:
        """The execution that created this one, ``__start__`` or ``__rpc/<name>``."""

    @property
    @abstractmethod
    def attempt(self) -> int:
        """The 1-based attempt of the current method."""

    @property
    @abstractmethod
    def recovery_error(self) -> RecoveryErrorInfo | None:
        """The error that routed here (recovery Step, PROCEED after a WaitFor failure)."""

    @abstractmethod
    def has_timer_fired(self, index: int | None = None) -> bool:
        """Whether any timer (or the timer at ``index``) of the Wait completed."""

    @abstractmethod
    def wait_for_method_failed(self) -> bool:
        """Whether Execute runs after a WaitFor failure under the PROCEED policy."""

    @abstractmethod
    def is_cancellation_requested(self) -> bool:
        """Whether this invocation was canceled (cooperative: check it in long handlers)."""

    @abstractmethod
    def set_step_execution_local(self, key: str, value: object) -> None:
        """Store a value that the same execution's Execute can read (WaitFor only)."""

    @abstractmethod
    def get_step_execution_local(self, key: str, value_type: type[T]) -> T | None:
        """Read a step-execution local, or None."""

    @abstractmethod
    def record_event(self, name: str, value: object) -> None:
        """Attach a named diagnostic event to this invocation's result (once per name)."""

    @abstractmethod
    def has_last_heartbeat_value(self) -> bool:
        """Whether the previous attempt left a heartbeat checkpoint."""

    @abstractmethod
    def get_last_heartbeat_value(self, value_type: type[T]) -> T | None:
        """The previous attempt's heartbeat checkpoint, or None."""

    # Hooks used by the definition objects; implemented by the engine.
    @abstractmethod
    def _get_attribute(self, definition: Any, instance: str | None) -> Any: ...

    @abstractmethod
    def _set_attribute(self, definition: Any, instance: str | None, value: Any) -> None: ...

    @abstractmethod
    def _attribute_map_keys(self, definition: Any) -> tuple[str, ...]: ...

    @abstractmethod
    def _publish_channel(self, definition: Any, instance: str | None, value: Any) -> None: ...

    @abstractmethod
    def _channel_size(self, definition: Any, instance: str | None) -> int: ...

    @abstractmethod
    def _channel_results(self, definition: Any, instance: str | None) -> Sequence[Any]: ...

    @abstractmethod
    def _channel_map_keys(self, definition: Any) -> tuple[str, ...]: ...

    @abstractmethod
    def _pending_messages(
        self, definition: Any, instance: str | None
    ) -> Sequence[ChannelMessage[Any]]: ...

    @abstractmethod
    def _delete_channel_message(
        self, definition: Any, instance: str | None, message_id: str
    ) -> None: ...

    @abstractmethod
    def _subflow_result(self, index: int) -> FlowResult: ...

    @abstractmethod
    def _subflow_flow_id(self, index: int) -> str: ...


class AsyncContext(Context):
    """The Context of a coroutine handler; adds ``await context.heartbeat(value)``."""

    __slots__ = ()

    @abstractmethod
    async def heartbeat(self, value: object = ABSENT) -> None:
        """Report progress; a value (even None) is kept for the next attempt, none clears it."""
