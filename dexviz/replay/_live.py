"""Driving a simulation Engine for the debugger: a growing history, stepping, faults.

``GrowingHistory`` lets one ``StateFolder`` keep folding while the engine appends events, so
the state at the cursor stays incremental in live mode too (the folder only reads
``history[i]`` and ``len(history)``, and an append-only history never invalidates what it
folded). ``FailNextAttempt`` is a one-shot fault rule: the engine consults its fault plan once
per attempt, just before running it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from dexviz.engine import Engine
from dexviz.engine.core.faults import FailAttempt, FaultPlan
from dexviz.engine.engine import Breakpoint, breakpoint_predicate
from dexviz.history import Event, History

MAX_UNITS = 100_000
"""How many engine units one Step/Continue/Run-to may run before it gives up."""


class GrowingHistory(History):
    """An append-only History: the engine's events so far; ``snapshot()`` freezes a copy."""

    __slots__ = ()

    def __init__(self, events: Iterable[Event] = ()) -> None:
        super().__init__(())
        self._events: list[Event] = list(events)

    def extend(self, events: Iterable[Event]) -> None:
        """Append events the engine committed after the ones already held."""
        self._events.extend(events)

    def snapshot(self) -> History:
        """An immutable History of the events so far."""
        return History(self._events)


@dataclass(frozen=True)
class FailNextAttempt(FailAttempt):
    """Fail the next attempt of a Step type's method, whichever execution and number it is.

    The rule fires once: the engine asks the fault plan exactly once before each attempt.
    """

    _state: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def matches(self, step_type: str, method: str, attempt: int, execution_id: str) -> bool:
        """Whether to fail this attempt (true for the first matching attempt only)."""
        if self.fired or step_type != self.step_type or method != self.method:
            return False
        self._state["fired"] = f"{execution_id} {method} attempt {attempt}"
        return True

    @property
    def fired(self) -> bool:
        """Whether the rule has failed an attempt already."""
        return "fired" in self._state

    @property
    def failed(self) -> str | None:
        """Which attempt it failed (``EditContract-2 execute attempt 1``), if it fired."""
        return self._state.get("fired")


class LiveDriver:
    """Runs a simulation Engine unit by unit and keeps one Flow's growing history in sync.

    Args:
        engine: A simulation-mode Engine.
        flow_id: The Flow to follow (it must have been started already).
    """

    def __init__(self, engine: Engine, flow_id: str) -> None:
        self.engine = engine
        self.flow_id = flow_id
        self.history = GrowingHistory()

    def pull(self) -> list[Event]:
        """Append the Flow's events committed since the last pull and return them."""
        recorded = self.engine.history(self.flow_id)
        new = list(recorded.events[len(self.history):])
        self.history.extend(new)
        return new

    def step(self) -> list[Event]:
        """Run units until one commits events of this Flow (or the engine is idle)."""
        for _ in range(MAX_UNITS):
            if self.engine.is_idle:
                return self.pull()
            self.engine.step()
            new = self.pull()
            if new:
                return new
        return self.pull()

    def run(self, until: Callable[[Event], bool] | None) -> list[Event]:
        """Run until a committed event of this Flow matches ``until`` (or until idle)."""
        if until is None:
            self.engine.run(None, max_units=MAX_UNITS)
        else:
            flow_id = self.flow_id
            self.engine.run(lambda e: e.flow_id == flow_id and until(e), max_units=MAX_UNITS)
        return self.pull()

    def fail_next(self, step_type: str, method: str = "execute") -> FailNextAttempt:
        """Add a one-shot rule failing the next ``method`` attempt of ``step_type``."""
        template = FaultPlan.fail(step_type, method)
        rule = FailNextAttempt(template.step_type, template.method)
        self.engine.faults.add(rule)
        return rule

    def cancel(self, execution_id: str) -> list[Event]:
        """Cancel an active execution now; return the events of that commit (none if inactive)."""
        if not self.engine.cancel_execution(self.flow_id, execution_id):
            return []
        return self.pull()


def predicate(
    breakpoint: Breakpoint, step_types: Collection[str] | None = None
) -> Callable[[Event], bool]:
    """A breakpoint (event kind, Step type name or class, predicate) as an event predicate.

    Raises:
        ValueError: a name that is neither an event kind nor one of ``step_types`` (when
            given), with a "did you mean" suggestion.
    """
    return breakpoint_predicate(breakpoint, step_types)


def breakpoint_name(breakpoint: Any) -> str:
    """How a breakpoint is written in messages."""
    if isinstance(breakpoint, type):
        return breakpoint.__name__
    if isinstance(breakpoint, str):
        return breakpoint
    return getattr(breakpoint, "__name__", repr(breakpoint))
