"""Wait conditions: the Timer, Channel and SubFlow conditions a WaitFor returns inside a Wait."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dexviz.sdk._condition_base import (
    ChannelCondition,
    Condition,
    TimerCondition,
    channel_condition_for,
)

if TYPE_CHECKING:
    from dexviz.sdk.flow_options import SubFlowOptions

__all__ = [
    "ChannelCondition",
    "Condition",
    "SubFlowCondition",
    "TimerCondition",
    "channel_condition_for",
]


@dataclass(frozen=True, eq=False, kw_only=True, slots=True)
class SubFlowCondition(Condition):
    """Starts (or reuses) a child Flow when the WaitFor commits; ready when the child closes."""

    flow: Any
    input: Any = None
    options: SubFlowOptions | None = None

    def __repr__(self) -> str:
        flow_type = type(self.flow).__name__
        return f"SubFlow.run({flow_type}, condition_id={self.condition_id!r})"
