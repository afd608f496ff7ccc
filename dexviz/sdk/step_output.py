"""StepOutput and heartbeat(): what a generator handler yields while it works."""

from __future__ import annotations

from typing import Any

from dexviz.sdk.context import ABSENT

_TOKEN = object()


class StepOutput:
    """An output a sync generator handler yields; build it with ``heartbeat(...)``.

    It cannot be created directly: only the SDK's factories make one.
    """

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value: Any, *, _token: object = None) -> None:
        if _token is not _TOKEN:
            raise TypeError("StepOutput cannot be created directly; yield heartbeat(...)")
        self.kind = kind
        self.value = value

    @property
    def clears(self) -> bool:
        """Whether this heartbeat clears the stored checkpoint (it was given no value)."""
        return self.value is ABSENT

    def __repr__(self) -> str:
        shown = "<no value>" if self.value is ABSENT else repr(self.value)
        return f"StepOutput({self.kind}, {shown})"


def heartbeat(value: Any = ABSENT) -> StepOutput:
    """Report progress from a generator handler (yield what it returns).

    With a value (even None) the value is kept for the next attempt
    (``context.get_last_heartbeat_value``); with no value the stored one is cleared.
    """
    return StepOutput("heartbeat", value, _token=_TOKEN)


def stream_output(stream: Any, value: Any) -> StepOutput:
    """The StepOutput of ``Stream.write`` in a sync generator handler (yield it)."""
    return StepOutput("stream", (stream, value), _token=_TOKEN)
