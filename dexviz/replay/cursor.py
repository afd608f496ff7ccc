"""CursorState: the Flow's state at the Debugger's cursor, and what the graphs mark there."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dexviz.analysis.state import ActiveExecution, FlowStateView, QueuedMessage, ReservedMessage
from dexviz.history import Event
from dexviz.replay.highlight import CursorMarks

__all__ = ["CursorState"]


@dataclass(frozen=True)
class CursorState:
    """The Flow's state right after the event at the cursor was applied.

    Attributes:
        index: The cursor (0-based position in the history).
        event: The event at the cursor.
        view: The folded state (see :class:`dexviz.analysis.state.FlowStateView`).
    """

    index: int
    event: Event
    view: FlowStateView

    @property
    def channels(self) -> Mapping[str, tuple[QueuedMessage, ...]]:
        """Channel -> queued messages, front first (reserved ones are in ``reserved``)."""
        return self.view.channels

    @property
    def reserved(self) -> Mapping[str, tuple[ReservedMessage, ...]]:
        """Channel -> messages a satisfied wait took and holds until its Execute commits."""
        return self.view.reserved

    @property
    def attributes(self) -> Mapping[str, Any]:
        """Attribute -> value."""
        return self.view.attributes

    @property
    def active_executions(self) -> tuple[ActiveExecution, ...]:
        """The active executions and their phases, in creation order."""
        return self.view.active

    @property
    def closed(self) -> str | None:
        """The run's close status once it closed, else None."""
        return self.view.closed

    def holder_of(self, channel: str) -> tuple[str, ...]:
        """The executions holding messages of ``channel`` (a token Channel's holder)."""
        return self.view.holder_of(channel)

    def phase_of(self, execution_id: str) -> str | None:
        """The phase of an active execution, or None when it is not active."""
        return self.view.phase_of(execution_id)

    def marks(self) -> CursorMarks:
        """What the graphs highlight for this state."""
        holders = {m.execution_id for held in self.view.reserved.values() for m in held}
        return CursorMarks(
            self.index, self.event, {a.execution_id: a.phase for a in self.view.active},
            holders, self.view.closed is not None,
            {name for name, queue in self.view.channels.items() if queue},
            {name for name, held in self.view.reserved.items() if held},
        )
