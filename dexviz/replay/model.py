"""The Debugger model: a cursor over a History, or over a live simulation Engine.

Everything the widget does is a method here, so stepping works (and is tested) without
ipywidgets: ``next``/``prev``/``seek``/``jump`` move the cursor, ``state`` is the Flow's state
at it (folded incrementally by one ``StateFolder`` with checkpoints, never from zero per step),
``step``/``continue_``/``run_to``/``fail_next``/``cancel`` drive a simulation Engine whose new
events extend the history. Listeners registered with ``observe`` hear about every move.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from os import PathLike
from pathlib import Path

from dexviz.analysis.names import check_event_kind, check_name, step_types
from dexviz.analysis.state import StateFolder
from dexviz.engine import Engine, SimulationRun
from dexviz.engine.engine import Breakpoint
from dexviz.history import Event, EventKind, History
from dexviz.history._plural import plural
from dexviz.replay._index import HistoryIndex
from dexviz.replay._live import FailNextAttempt, LiveDriver, breakpoint_name, predicate
from dexviz.replay.cursor import CursorState
from dexviz.replay.graphs import Pictures

__all__ = ["CursorState", "DebuggerModel"]

Listener = Callable[["DebuggerModel"], None]
HistorySource = History | SimulationRun | Engine | str | PathLike[str]
"""What a Debugger steps through: a History, a history file, a SimulationRun or an Engine."""


def _source(source: object, flow_id: str | None) -> tuple[History | None, LiveDriver | None]:
    if isinstance(source, (str, PathLike)):
        return _source(History.load(Path(source)), flow_id)
    if isinstance(source, SimulationRun):
        return source.history, None
    if isinstance(source, History):
        if not len(source):
            raise ValueError("cannot debug an empty history: it has no event to show")
        return source, None
    if isinstance(source, Engine):
        if source.mode != "simulation":
            raise ValueError("the Debugger steps a simulation Engine; this one is live "
                             "(Engine(..., mode='simulation'))")
        flows = source.flow_ids()
        chosen = flow_id if flow_id is not None else (flows[0] if len(flows) == 1 else None)
        if chosen is None or chosen not in flows:
            raise ValueError(
                f"choose the Flow to debug with flow_id= (started: {', '.join(flows) or 'none'}; "
                "start one with engine.client().start_flow(...) first)")
        driver = LiveDriver(source, chosen)
        driver.pull()
        return None, driver
    raise TypeError("Debugger takes a History, a history file, a SimulationRun or an Engine, "
                    f"got {source!r}")


class DebuggerModel:
    """A cursor over one Flow's history, replayed or growing from a live simulation Engine.

    Args:
        source: A History (replay), a history file's path (replay; a Flow source recorded
            relative to it is found there), a SimulationRun (replay of its history) or a
            simulation-mode Engine with a started Flow (live).
        flow_id: The Flow to follow when the Engine runs several.
        flow_source: The Flow's source for the definition graph (default: the recorded file).
        collapse_at: Lineage collapsing: ``"auto"`` (collapse above 20 executions), None, or
            the number of same-type siblings that collapse into one node.
        token_channel: A Channel whose holdings the timeline draws in their own lanes.
        checkpoint_every: The state folder keeps a checkpoint every this many events.

    Raises:
        ValueError: an empty history, a live-mode Engine, or no/unknown ``flow_id``.
        TypeError: ``source`` is none of the above.
    """

    def __init__(self, source: HistorySource, *, flow_id: str | None = None,
                 flow_source: object | None = None, collapse_at: int | str | None = "auto",
                 token_channel: str | None = None, checkpoint_every: int = 128) -> None:
        replay, self._live = _source(source, flow_id)
        history_dir = Path(source).resolve().parent if isinstance(source, (str, PathLike)) else None
        self._history: History = replay if replay is not None else self._driver.history
        self._folder = StateFolder(self._history, checkpoint_every=checkpoint_every)
        self.index_ = HistoryIndex()
        self.index_.add(self._history)
        self.pictures = Pictures(lambda: self.history, self.index_, collapse_at=collapse_at,
                                 flow_source=flow_source, token_channel=token_channel,
                                 history_dir=history_dir)
        self._index = 0 if replay is not None else len(self._history) - 1
        self._listeners: list[Listener] = []
        self._breakpoints: list[Breakpoint] = []
        self.message = ""

    @property
    def _driver(self) -> LiveDriver:
        if self._live is None:
            raise RuntimeError("this Debugger replays a History; step(), continue_() with an "
                               "engine, fail_next() and cancel() need Debugger(engine)")
        return self._live

    # ---------------------------------------------------------------- facts
    @property
    def mode(self) -> str:
        """``"replay"`` over a History, ``"live"`` over a simulation Engine."""
        return "replay" if self._live is None else "live"

    @property
    def live(self) -> bool:
        """Whether the model drives a simulation Engine."""
        return self._live is not None

    @property
    def engine(self) -> Engine | None:
        """The simulation Engine in live mode, else None."""
        return self._live.engine if self._live is not None else None

    @property
    def history(self) -> History:
        """The history (in live mode: an immutable copy of the events so far)."""
        return self._live.history.snapshot() if self._live is not None else self._history

    @property
    def flow_id(self) -> str:
        """The Flow being debugged."""
        return self._history[0].flow_id

    def __len__(self) -> int:
        return len(self._history)

    @property
    def index(self) -> int:
        """The cursor: 0-based position of the selected event."""
        return self._index

    @property
    def event(self) -> Event:
        """The event at the cursor."""
        return self._history[self._index]

    @property
    def state(self) -> CursorState:
        """The Flow's state right after the event at the cursor."""
        return CursorState(self._index, self.event, self._folder.state_at(self._index))

    def state_at(self, index: int) -> CursorState:
        """The state after event ``index`` without moving the cursor.

        Raises:
            IndexError: ``index`` is outside the history.
        """
        position = index + len(self._history) if index < 0 else index
        view = self._folder.state_at(position)
        return CursorState(position, self._history[position], view)

    @property
    def at_end(self) -> bool:
        """Whether the cursor is on the last recorded event."""
        return self._index == len(self._history) - 1

    # ---------------------------------------------------------------- listeners
    def observe(self, listener: Listener) -> None:
        """Call ``listener(model)`` after every cursor move or history growth."""
        self._listeners.append(listener)

    def unobserve(self, listener: Listener) -> None:
        """Stop calling ``listener``."""
        self._listeners = [known for known in self._listeners if known is not listener]

    def _moved(self, index: int, message: str = "") -> None:
        # Every move replaces the status line: an old "stopped at ..." must not linger.
        self._index = index
        self.message = message
        for listener in list(self._listeners):
            listener(self)

    # ---------------------------------------------------------------- navigation
    def next(self) -> bool:
        """Move to the next event; False (and no move) at the end of the history."""
        if self.at_end:
            return False
        self._moved(self._index + 1)
        return True

    def prev(self) -> bool:
        """Move to the previous event; False (and no move) at the first one."""
        if self._index == 0:
            return False
        self._moved(self._index - 1)
        return True

    def seek(self, index: int) -> CursorState:
        """Move to event ``index`` (negative counts from the end) and return the state there.

        Raises:
            IndexError: ``index`` is outside the history (the message gives its length).
        """
        size = len(self._history)
        position = index + size if index < 0 else index
        if not 0 <= position < size:
            raise IndexError(f"event index {index} is outside the history of {size} events")
        if position != self._index:
            self._moved(position)
        return self.state

    def first(self) -> CursorState:
        """Move to the first event."""
        return self.seek(0)

    def last(self) -> CursorState:
        """Move to the last recorded event."""
        return self.seek(-1)

    def find(self, *, kind: EventKind | str | None = None, execution_id: str | None = None,
             step_type: str | None = None, backward: bool = False) -> int | None:
        """The index of the nearest event after (or before) the cursor matching every filter.

        Raises:
            ValueError: ``kind``, ``execution_id`` or ``step_type`` names nothing in this
                history (the message suggests the closest name).
        """
        self._check_filters(kind, execution_id, step_type)
        wanted = str(kind) if kind is not None else None
        positions: Iterable[int] = (range(self._index - 1, -1, -1) if backward
                                    else range(self._index + 1, len(self._history)))
        for position in positions:
            event = self._history[position]
            if ((wanted is None or str(event.kind) == wanted)
                    and (execution_id is None or event.execution_id == execution_id)
                    and (step_type is None or event.step_type == step_type)):
                return position
        return None

    def _check_filters(self, kind: EventKind | str | None, execution_id: str | None,
                       step_type: str | None) -> None:
        if kind is not None:
            check_event_kind(str(kind))
        owner = f"the history of {self.flow_id!r}"
        if step_type is not None:
            check_name(step_type, self.step_types, "Step type", owner)
        if execution_id is not None:
            check_name(execution_id, self.index_.executions, "execution", owner)

    @property
    def step_types(self) -> frozenset[str]:
        """The Step types this Flow declares or ran (live: of every Flow the Engine has)."""
        known = step_types(self._history)
        if self._live is not None:
            known |= self._live.engine.step_types
        return frozenset(known)

    def jump(self, *, kind: EventKind | str | None = None, execution_id: str | None = None,
             step_type: str | None = None, backward: bool = False) -> bool:
        """Move to the nearest matching event (see :meth:`find`); False when there is none."""
        found = self.find(kind=kind, execution_id=execution_id, step_type=step_type,
                          backward=backward)
        what = " ".join(str(x) for x in (kind, execution_id, step_type) if x is not None)
        if found is None:
            self._moved(self._index,
                        f"no {what or 'event'} {'before' if backward else 'after'} here")
            return False
        self._moved(found, f"jumped to {self.index_.labels[found]}")
        return True

    # ---------------------------------------------------------------- breakpoints
    @property
    def breakpoints(self) -> tuple[Breakpoint, ...]:
        """The breakpoints ``continue_()`` stops at (event kinds, Step types, predicates)."""
        return tuple(self._breakpoints)

    def add_breakpoint(self, breakpoint: Breakpoint) -> None:
        """Stop ``continue_()`` at events matching ``breakpoint``.

        Raises:
            ValueError: a Step type (or event kind) that does not exist, with a suggestion.
            TypeError: not an event kind, Step type or class, or predicate.
        """
        predicate(breakpoint, self.step_types)  # rejects a bad breakpoint now, not at a run
        if breakpoint not in self._breakpoints:
            self._breakpoints.append(breakpoint)

    def remove_breakpoint(self, breakpoint: Breakpoint) -> None:
        """Forget one breakpoint (no error if it was not set)."""
        self._breakpoints = [b for b in self._breakpoints if b != breakpoint]

    def clear_breakpoints(self) -> None:
        """Forget every breakpoint."""
        self._breakpoints.clear()

    def continue_(self) -> bool:
        """Run to the next event matching any breakpoint, or to the end (live: until idle).

        Returns:
            True when it stopped at a breakpoint, False when it reached the end.
        """
        tests = [predicate(b, self.step_types) for b in self._breakpoints]
        names = ", ".join(breakpoint_name(b) for b in self._breakpoints)
        return self._run(lambda e: any(test(e) for test in tests) if tests else False,
                         f"breakpoint ({names})" if tests else "the end")

    def run_to(self, breakpoint: Breakpoint) -> bool:
        """Run to the next event matching ``breakpoint``; False when none came (the end).

        Raises:
            ValueError: a Step type (or event kind) that does not exist, with a suggestion.
        """
        return self._run(predicate(breakpoint, self.step_types), breakpoint_name(breakpoint))

    def _run(self, test: Callable[[Event], bool], what: str) -> bool:
        for position in range(self._index + 1, len(self._history)):
            if test(self._history[position]):
                self._moved(position, f"stopped at {what}: {self.index_.labels[position]}")
                return True
        if self._live is not None:
            start = len(self._history)
            self._grew(self._live.run(test))
            for position in range(start, len(self._history)):
                if test(self._history[position]):
                    self._moved(position, f"stopped at {what}: {self.index_.labels[position]}")
                    return True
        self._moved(len(self._history) - 1, f"reached the end without {what}"
                    if what != "the end" else "at the end of the history")
        return False

    # ---------------------------------------------------------------- live engine
    def sync(self) -> int:
        """Pull events the engine committed outside the debugger; return how many arrived."""
        if self._live is None:
            return 0
        new = self._live.pull()
        if new:
            self._grew(new)
            self._moved(self._index, self.message)
        return len(new)

    def _grew(self, events: list[Event]) -> None:
        self.index_.add(events)

    def step(self) -> list[Event]:
        """Run one engine unit that commits events of this Flow; the cursor goes to its last.

        Raises:
            RuntimeError: in replay mode.
        """
        new = self._driver.step()
        self._grew(new)
        text = f"step: {plural(len(new), 'event')}" if new else "the engine is idle: nothing to run"
        self._moved(len(self._history) - 1, text)
        return new

    def fail_next(self, step_type: str, method: str = "execute") -> FailNextAttempt:
        """Make the next ``method`` attempt of ``step_type`` fail (an injected fault).

        Raises:
            RuntimeError: in replay mode.
            ValueError: ``method`` is not ``execute`` or ``wait_for``.
        """
        rule = self._driver.fail_next(step_type, method)
        self._moved(self._index, f"the next {method} attempt of {step_type} will fail")
        return rule

    def cancel(self, execution_id: str) -> bool:
        """Cancel an active execution now; the cursor goes to the cancellation's events.

        Raises:
            RuntimeError: in replay mode.
        """
        start = len(self._history)
        new = self._driver.cancel(execution_id)
        if not new:
            self._moved(self._index, f"{execution_id} is not active: nothing canceled")
            return False
        self._grew(new)
        self._moved(start, f"canceled {execution_id}")
        return True
