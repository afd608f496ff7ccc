"""Stream: a best-effort, resumable log of progress messages per Flow id (outside commits)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from dexviz.sdk.channel import _check_name

if TYPE_CHECKING:
    from dexviz.sdk.context import Context
    from dexviz.sdk.step_output import StepOutput

T = TypeVar("T")


@dataclass(frozen=True)
class Stream(Generic[T]):
    """A Flow's Stream: messages written now (not at commit), read by clients with a token.

    Writes are not rolled back when the method fails and may repeat on a retry (R180); the
    oldest messages are dropped beyond about ``stream_capacity_bytes`` (R181).
    """

    name: str
    value_type: type[T]
    stream_capacity_bytes: int = 1 << 20

    def __post_init__(self) -> None:
        _check_name("Stream", self.name)
        if self.stream_capacity_bytes <= 0:
            raise ValueError(
                f"Stream {self.name!r}: stream_capacity_bytes must be > 0, "
                f"got {self.stream_capacity_bytes}"
            )

    def write(self, context: Context, value: T) -> StepOutput | None:
        """Write ``value``: at once from an async handler; a sync generator yields the result."""
        write = getattr(context, "_write_stream", None)
        if write is None:
            raise TypeError(f"Stream {self.name!r}: this context cannot write to Streams")
        result: StepOutput | None = write(self, value)
        return result


@dataclass(frozen=True)
class StreamMessage(Generic[T]):
    """One Stream message with the token to resume reading after it."""

    value: T
    resume_token: str
    created_time: datetime
    source: str


@dataclass(frozen=True)
class StreamMessagesPage:
    """A page of Stream messages, newest first, and the token of the next (older) page."""

    messages: Sequence[StreamMessage[Any]]
    next_page_token: str = ""
