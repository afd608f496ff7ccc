"""Checks: the properties an exploration proves, evaluated after every commit and at the end.

A check is any callable ``check(history, flow_state)`` returning None/True (holds) or
False/a message (violated); the explorer calls it after every commit of every schedule and at
the end. The built-ins below follow the run incrementally instead, so they cost one pass:

- ``exclusive(channel)``: no two execution chains are inside the Channel's section at once. A
  chain enters when its wait consumes a message of the Channel and leaves once it has published
  the Channel back *and* none of its executions is still active — handing the token back before
  the section's last Step is caught, not only two simultaneous takers;
- ``conserved(channel, count=1)``: from the first publication on, exactly ``count`` messages
  are queued or held (consumed and not yet published back) at every commit of the open run;
- ``terminates()``: every schedule that runs out of work has closed the Flow (nothing stalls);
- ``status(FlowStatus.COMPLETED)``: every schedule that runs out of work ends with that status;
- ``eventually_closes()`` and ``eventually(predicate)``: liveness — under fair scheduling every
  run closes (or reaches a state where ``predicate(flow_state)`` holds). Proven by
  ``explore.liveness.explore_liveness``, which also finds runs that loop forever; in a
  schedule-by-schedule search they check what they can, that a schedule which runs out of work
  got there (as ``terminates()`` does for closing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol, cast

from dexviz.engine.core.flow_state import FlowState
from dexviz.engine.engine import Engine
from dexviz.history._plural import plural
from dexviz.history.event import Event
from dexviz.history.history import History
from dexviz.history.kinds import EventKind
from dexviz.sdk.results import FlowStatus

if TYPE_CHECKING:
    from dexviz.explore.check_names import KnownNames

__all__ = [
    "Check", "LivenessCheck", "Monitor", "View", "as_check", "conserved", "eventually",
    "eventually_closes", "exclusive", "monitor_state", "status", "terminates",
]  # fmt: skip


class View:
    """What a monitor may read after a commit: the engine's state and history, built lazily."""

    def __init__(self, engine: Engine, flow_id: str) -> None:
        self.engine = engine
        self.flow_id = flow_id

    @cached_property
    def flow_state(self) -> FlowState:
        """The Flow's state after the commit."""
        return self.engine.flow_state(self.flow_id)

    @cached_property
    def history(self) -> History:
        """The Flow's history up to the commit."""
        return self.engine.history(self.flow_id)

    @property
    def status(self) -> FlowStatus:
        """The Flow's status after the commit (read from the run, without building the state)."""
        run = self.engine.runtime.runs.get(self.flow_id)
        return self.flow_state.status if run is None else run.status

    def queued(self, channel: str) -> int:
        """How many messages ``channel`` holds queued (``len(flow_state.channels[channel])``)."""
        run = self.engine.runtime.runs.get(self.flow_id)
        if run is None:
            return len(self.flow_state.channels.get(channel, ()))
        return len(run.queues_view.get(channel, ()))

    @cached_property
    def active_ids(self) -> frozenset[str]:
        """The ids of the executions still active."""
        run = self.engine.runtime.runs.get(self.flow_id)
        if run is None:
            return frozenset(a.execution_id for a in self.flow_state.active_executions)
        # As ``FlowState.of`` picks its active executions, without building the whole state.
        return frozenset(e.execution_id for e in run.executions.values() if e.active and e.counted)


class Monitor(Protocol):
    """Follows one schedule; returns a message when the property is violated."""

    def after_commit(self, events: Sequence[Event], view: View) -> str | None:
        """Called after every step that committed events."""

    def at_end(self, view: View, terminal: bool) -> str | None:
        """Called once when the schedule ends (``terminal``: it ran out of work)."""


def monitor_state(monitor: Monitor) -> object | None:
    """What a monitor remembers, as a plain value; None when it cannot say (no pruning then).

    A monitor that defines ``state()`` promises that its future verdicts depend only on that
    value and on what it is fed next; the built-ins do, a plain callable (which reads the whole
    history) does not.
    """
    state = getattr(monitor, "state", None)
    return state() if callable(state) else None


Monitors = tuple[tuple[str, Monitor], ...]
"""A schedule's monitors, each with its check's name."""


def copyable(monitors: Sequence[tuple[str, Monitor]]) -> bool:
    """Whether every monitor has a ``copied()`` (``copied_monitors`` can keep them all).

    A monitor with ``copied`` promises it never changes in ``at_end``: a schedule that runs no
    further step may hand its monitors over uncopied.
    """
    return all(hasattr(monitor, "copied") for _, monitor in monitors)


def copied_monitors(monitors: Sequence[tuple[str, Monitor]]) -> Monitors | None:
    """Independent copies of ``monitors`` when each has a ``copied()``; None otherwise.

    The built-ins copy their few plain fields, far cheaper than a pickle round trip; a
    monitor without ``copied`` is pickled by the caller (which also tells it apart from one
    that cannot be kept at all).
    """
    if not copyable(monitors):
        return None
    return tuple((name, monitor.copied()) for name, monitor in monitors)  # type: ignore[attr-defined]


class Check(Protocol):
    """A property: a name, and a fresh monitor for each schedule."""

    @property
    def name(self) -> str:
        """How reports name the check."""

    def monitor(self) -> Monitor:
        """A monitor for one schedule."""


def _verdict(result: object, name: str) -> str | None:
    if result is None or result is True:
        return None
    if result is False:
        return f"{name} does not hold"
    return str(result)


@dataclass(frozen=True)
class FunctionCheck:
    """A plain callable ``(history, flow_state) -> None | bool | str`` as a Check."""

    function: Callable[[History, FlowState], object]
    name: str

    def monitor(self) -> Monitor:
        """The callable, called after every commit and at the end."""
        return _FunctionMonitor(self)


class _FunctionMonitor:
    def __init__(self, check: FunctionCheck) -> None:
        self._check = check

    def after_commit(self, events: Sequence[Event], view: View) -> str | None:
        return _verdict(self._check.function(view.history, view.flow_state), self._check.name)

    def at_end(self, view: View, terminal: bool) -> str | None:
        return self.after_commit((), view)


def as_check(check: object) -> Check:
    """Accept a built-in Check or a plain callable; reject anything else naming it."""
    if hasattr(check, "monitor") and hasattr(check, "name"):
        return cast(Check, check)
    if callable(check):
        return FunctionCheck(check, getattr(check, "__name__", type(check).__name__))
    raise TypeError(f"a check is a callable (history, flow_state) or a Check, got {check!r}")


@dataclass
class _Holding:
    holder: str
    chain: set[str]
    held: int
    released: bool = False


@dataclass
class _Sections:
    """Open holdings of one Channel, fed event by event."""

    channel: str
    open: list[_Holding] = field(default_factory=list)

    def feed(self, event: Event) -> None:
        # The kind first: a payload is built when first read (``history.event.Payload``),
        # and only these kinds' payloads say anything to a section.
        kind = event.kind
        if kind == EventKind.STEP_EXECUTION_CREATED:
            if event.execution_id and self.open:
                self._created(event.execution_id, event.payload.get("from_execution_id"))
            return
        if kind not in (EventKind.MESSAGE_CONSUMED, EventKind.MESSAGE_PUBLISHED,
                        EventKind.MESSAGE_RETURNED):  # fmt: skip
            return
        payload = event.payload
        if payload.get("channel") != self.channel:
            return
        if kind == EventKind.MESSAGE_CONSUMED:
            self._consumed(str(payload.get("consumer") or event.execution_id))
        elif kind == EventKind.MESSAGE_PUBLISHED:
            self._published(payload.get("publisher"))
        else:
            self._returned(payload.get("from"))

    def _created(self, execution_id: str, parent: object) -> None:
        for holding in self.open:
            if parent in holding.chain:
                holding.chain.add(execution_id)

    def _published(self, who: object) -> None:
        for holding in self.open:
            if not holding.released and who in holding.chain:
                holding.released, holding.held = True, 0
                break

    def _consumed(self, consumer: str) -> None:
        mine = [h for h in self.open if h.holder == consumer and not h.released]
        if mine:
            mine[0].held += 1
        else:
            self.open.append(_Holding(consumer, {consumer}, 1))

    def _returned(self, holder: object) -> None:
        for holding in self.open:
            if holding.holder == holder and holding.held:
                holding.held -= 1
                holding.released = holding.held == 0
                return

    def settle(self, view: View) -> None:
        """Close the holdings that were given back and whose chain has finished."""
        if any(h.released for h in self.open):
            # Only a released holding closes: the active ids are read only then.
            active = view.active_ids
            self.open = [h for h in self.open if not (h.released and h.chain.isdisjoint(active))]

    @property
    def held(self) -> int:
        return sum(h.held for h in self.open)

    def copied(self) -> _Sections:
        """An independent copy (the holdings' chains are the only nested mutable parts)."""
        return _Sections(
            self.channel, [_Holding(h.holder, set(h.chain), h.held, h.released) for h in self.open]
        )

    def state(self) -> tuple[object, ...]:
        """The open holdings in order (the order decides which one a release closes)."""
        return tuple((h.holder, tuple(sorted(h.chain)), h.held, h.released) for h in self.open)


@dataclass(frozen=True)
class _Exclusive:
    channel: str

    @property
    def name(self) -> str:
        return f"exclusive({self.channel})"

    def validate(self, known: KnownNames) -> None:
        known.channel(self.channel)

    def monitor(self) -> Monitor:
        return _ExclusiveMonitor(self.channel)


class _ExclusiveMonitor:
    def __init__(self, channel: str) -> None:
        self._sections = _Sections(channel)

    def after_commit(self, events: Sequence[Event], view: View) -> str | None:
        sections = self._sections
        for event in events:
            sections.feed(event)
        if not sections.open:
            return None
        sections.settle(view)
        if len(sections.open) < 2:
            return None
        inside = " and ".join(sorted(h.holder for h in sections.open))
        return f"{inside} are inside the {sections.channel!r} section at once"

    def at_end(self, view: View, terminal: bool) -> str | None:
        return None

    def state(self) -> object:
        return self._sections.state()

    def copied(self) -> _ExclusiveMonitor:
        new = _ExclusiveMonitor.__new__(_ExclusiveMonitor)
        new._sections = self._sections.copied()
        return new


@dataclass(frozen=True)
class _Conserved:
    channel: str
    count: int

    @property
    def name(self) -> str:
        return f"conserved({self.channel}, count={self.count})"

    def validate(self, known: KnownNames) -> None:
        known.channel(self.channel)

    def monitor(self) -> Monitor:
        return _ConservedMonitor(self.channel, self.count)


class _ConservedMonitor:
    def __init__(self, channel: str, count: int) -> None:
        self._sections = _Sections(channel)
        self._count = count
        self._armed = False

    def after_commit(self, events: Sequence[Event], view: View) -> str | None:
        for event in events:
            self._sections.feed(event)
        if view.status is not FlowStatus.RUNNING:
            return None
        self._sections.settle(view)
        queued = view.queued(self._sections.channel)
        total = queued + self._sections.held
        self._armed = self._armed or total > 0
        if not self._armed or total == self._count:
            return None
        return (
            f"{plural(total, 'message')} of {self._sections.channel!r} queued or held "
            f"({queued} queued, {self._sections.held} held), expected {self._count}"
        )

    def at_end(self, view: View, terminal: bool) -> str | None:
        return None

    def state(self) -> object:
        return (self._armed, self._sections.state())

    def copied(self) -> _ConservedMonitor:
        new = _ConservedMonitor.__new__(_ConservedMonitor)
        new._sections, new._count, new._armed = self._sections.copied(), self._count, self._armed
        return new


@dataclass(frozen=True)
class _EndCheck:
    name: str
    expected: FlowStatus | None

    def monitor(self) -> Monitor:
        return _EndMonitor(self)


class _EndMonitor:
    def __init__(self, check: _EndCheck) -> None:
        self._check = check

    def after_commit(self, events: Sequence[Event], view: View) -> str | None:
        return None

    def state(self) -> object:
        return ()

    def copied(self) -> _EndMonitor:
        return self  # it keeps nothing but its frozen check

    def at_end(self, view: View, terminal: bool) -> str | None:
        if not terminal:
            return None
        state = view.flow_state
        expected = self._check.expected
        if expected is None:
            if state.status is not FlowStatus.RUNNING:
                return None
            active = ", ".join(f"{a.execution_id}:{a.phase}" for a in state.active_executions)
            if not active:
                return "the Flow never closed: every branch ended and none completed it"
            return f"the Flow stalled with work left: {active}"
        if state.status is expected:
            return None
        return f"the Flow ended {state.status.name}, expected {expected.name}"


def exclusive(channel: str) -> Check:
    """No two execution chains inside ``channel``'s section at once (see the module doc)."""
    return _Exclusive(_channel_name(channel))


def conserved(channel: str, count: int = 1) -> Check:
    """Exactly ``count`` messages of ``channel`` queued or held at every commit."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    return _Conserved(_channel_name(channel), count)


def terminates() -> Check:
    """Every schedule that runs out of work has closed the Flow."""
    return _EndCheck("terminates()", None)


def status(expected: FlowStatus) -> Check:
    """Every schedule that runs out of work ends with status ``expected``."""
    if not isinstance(expected, FlowStatus):
        raise TypeError(f"status() takes a FlowStatus, got {expected!r}")
    return _EndCheck(f"status({expected.name})", expected)


def _channel_name(channel: Any) -> str:
    if isinstance(channel, str):
        return channel
    name = getattr(channel, "name", None)
    if isinstance(name, str):
        return name
    raise TypeError(f"a check takes a Channel or its name, got {channel!r}")


@dataclass(frozen=True)
class LivenessCheck:
    """``eventually_closes()`` or ``eventually(predicate)``: every fair run gets there.

    ``goal(engine, flow_id)`` says whether the state reached holds the goal (the run closed,
    or the predicate holds of its FlowState). Its monitor checks the part a single finite
    schedule can show: a schedule that ran out of work reached the goal on its way.
    """

    name: str
    predicate: Callable[[FlowState], object] | None = None

    def goal(self, engine: Engine, flow_id: str) -> bool:
        """Whether the goal holds in ``engine``'s current state of ``flow_id``."""
        state = engine.flow_state(flow_id)
        if self.predicate is None:
            return state.status is not FlowStatus.RUNNING
        return bool(self.predicate(state))

    def monitor(self) -> Monitor:
        """A monitor that remembers whether the goal held at some commit."""
        return _EventuallyMonitor(self)


class _EventuallyMonitor:
    def __init__(self, check: LivenessCheck) -> None:
        self._check = check
        self._reached = False

    def after_commit(self, events: Sequence[Event], view: View) -> str | None:
        if not self._reached:
            self._reached = self._check.goal(view.engine, view.flow_id)
        return None

    def at_end(self, view: View, terminal: bool) -> str | None:
        if not terminal or self._reached or self._check.goal(view.engine, view.flow_id):
            return None
        if self._check.predicate is None:
            # A run that stops open is what terminates() reports, in the same words.
            return _EndMonitor(_EndCheck(self._check.name, None)).at_end(view, terminal)
        return f"the run ran out of work and {self._check.name} never held"

    def state(self) -> object:
        return self._reached


def eventually_closes() -> LivenessCheck:
    """Under fair scheduling every run closes: no stall, no run that loops forever open."""
    return LivenessCheck("eventually_closes()")


def eventually(predicate: Callable[[FlowState], object], name: str | None = None) -> LivenessCheck:
    """Under fair scheduling every run reaches a state where ``predicate(flow_state)`` holds.

    The liveness search compares states up to execution numbers and absolute time, so the
    predicate should read the Flow's status, Attributes, Channels and active executions, not
    execution ids, clock readings or the outputs completed so far.
    """
    if not callable(predicate):
        raise TypeError(f"eventually() takes a callable (flow_state) -> bool, got {predicate!r}")
    label = name or getattr(predicate, "__name__", type(predicate).__name__)
    return LivenessCheck(f"eventually({label})", predicate)
