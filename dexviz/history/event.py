"""Event: one immutable, JSON-ready history record."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from dexviz.history.kinds import EventKind


class Event(NamedTuple):
    """One history event.

    A NamedTuple rather than a frozen dataclass: the engine builds several per Step transition,
    and tuple construction is several times cheaper while staying immutable.

    Attributes:
        seq: 1-based position in the Flow's history.
        time_ns: engine time in nanoseconds since the Unix epoch (virtual in simulation).
        kind: an EventKind (or the raw name of a kind this version does not know).
        flow_id: the Flow id.
        run_id: the run the event belongs to.
        execution_id: the Step execution (``Type-N``), if any.
        step_type: the Step type, if any.
        method: ``wait_for``, ``execute``, ``rpc`` or ``timeout_handler``, if any.
        attempt: the method attempt, if any.
        payload: JSON-ready details (see docs/history-format.md).
    """

    seq: int
    time_ns: int
    kind: EventKind | str
    flow_id: str
    run_id: str
    execution_id: str | None
    step_type: str | None
    method: str | None
    attempt: int | None
    payload: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Return the event as a JSON-ready dict (keys in field order)."""
        return {
            "seq": self.seq,
            "time_ns": self.time_ns,
            "kind": str(self.kind),
            "flow_id": self.flow_id,
            "run_id": self.run_id,
            "execution_id": self.execution_id,
            "step_type": self.step_type,
            "method": self.method,
            "attempt": self.attempt,
            "payload": dict(self.payload),
        }

    @property
    def time_s(self) -> float:
        """Engine time in seconds since the epoch."""
        return self.time_ns / 1e9

    def describe(self) -> str:
        """One line for listings: ``#12 StepExecuteCompleted EditContract-3 (execute #1)``."""
        parts = [f"#{self.seq}", str(self.kind)]
        if self.execution_id:
            parts.append(self.execution_id)
        if self.method:
            parts.append(f"({self.method} #{self.attempt})" if self.attempt else f"({self.method})")
        return " ".join(parts)
