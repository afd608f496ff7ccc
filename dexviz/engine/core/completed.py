"""PlainCompleted: StepExecuteCompleted's payload for a commit of the fast path.

The commit's values in slots, built on first read into the dict that
:func:`~dexviz.engine.commit.decide.execute_completed_payload` builds for the same commit.
"""

from __future__ import annotations

from typing import Any

from dexviz.engine.core.state import Execution
from dexviz.history.event import Payload
from dexviz.sdk.codec import to_json_ready
from dexviz.sdk.decision import StepDecision


class PlainCompleted(Payload):
    """StepExecuteCompleted's payload for a fast commit without writes, locals or events.

    It keeps the commit's values in its own slots (no argument tuple, no lists: one object per
    transition for the garbage collector to track) and builds, on first read, the same dict
    :func:`~dexviz.engine.commit.decide.execute_completed_payload` builds for such a commit.
    """

    __slots__ = ("_started_ns", "_attempts", "_kind", "_has_output", "_output", "_reason",
                 "_published", "_new")  # fmt: skip

    def __init__(
        self,
        started_ns: int,
        attempts: int,
        decision: StepDecision,
        published: tuple[str, ...],
        new: Execution | tuple[Execution, ...],
    ) -> None:
        self._value = None
        self._started_ns = started_ns
        self._attempts = attempts
        self._kind: str = decision.kind._name_
        self._has_output: bool = decision.has_output
        # An immutable scalar (the fast path checked it): JSON-ready as it is.
        self._output: Any = decision.output
        self._reason: str = decision.reason
        self._published = published
        self._new = new

    def next_entries(self) -> list[dict[str, Any]]:
        """The decision's ``next`` member: the new executions, in movement order."""
        new = self._new
        return [
            {
                "step_type": e.step.step_type,
                "execution_id": e.execution_id,
                "input": to_json_ready(e.input),
            }
            for e in (new if isinstance(new, tuple) else (new,))
        ]

    def _make(self) -> dict[str, Any]:
        decision: dict[str, Any] = {
            "kind": self._kind,
            "next": self.next_entries(),
            "has_output": self._has_output,
            "reason": self._reason,
            "canceling_steps": [],
            "canceling_sibling_steps": [],
            "canceled": [],
        }
        if self._has_output:
            decision["output"] = self._output
        return {
            "started_ns": self._started_ns,
            "attempts": self._attempts,
            "decision": decision,
            "writes": [],
            "published": list(self._published),
            "locals": {},
            "events": {},
        }
