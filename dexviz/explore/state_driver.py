"""Stepping a Flow run from engine snapshots, every choice made and recorded (for liveness).

A ``Driver`` holds one engine. ``expand`` restores it to a state (``Engine.restore``) and runs
one step under every combination of the choices that step offers — which ready unit (or
client action), which waiter gets a message, whether a budgeted fault fires — and says where
each led: its liveness state key (``explore.live_state``), the goals that hold there, and a
``Point`` to come back to it.

Choices are made and recorded exactly as ``explore.schedule`` makes them (a ready choice only
when there are two options or more, an idle choice when a client call could land before the
next timer, then waiter and fault choices), so the choices along a path, concatenated, are a
trace that ``explore.violation.replay`` re-runs from the start in a fresh engine.

A state with a coroutine handler in flight cannot be snapshotted: it is reached again by
restoring the last state that could and re-running the steps since (its ``Point``), and it has
no key, so it is never merged. An engine that ran such a step holds the suspended coroutine:
after the next restore its asyncio loop is abandoned (the coroutines of a branch the search has
left are dropped as a crashed worker's would be) and a fresh one is made on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass
from typing import Any

from dexviz.engine.core.choice import FaultPoint
from dexviz.engine.engine import Engine
from dexviz.engine.engine_state import EngineSnapshot, SnapshotError
from dexviz.engine.runtime import Runtime
from dexviz.explore.labels import describe
from dexviz.explore.live_state import Naming, Undescribable, live_key, naming, option_of
from dexviz.explore.schedule_records import ChoiceRecord, Setup
from dexviz.history.event import Event

__all__ = ["Anchor", "Driver", "Goal", "Point", "Transition"]

Goal = Callable[[Engine, str], bool]
"""Whether a check's goal holds in the engine's current state of the Flow run."""


@dataclass(frozen=True)
class Anchor:
    """A state that could be snapshotted, with the client actions left there."""

    snapshot: EngineSnapshot
    left: tuple[int, ...]


@dataclass(frozen=True)
class Point:
    """A state: an anchor and the steps since it (each step's choices), usually none."""

    anchor: Anchor
    path: tuple[tuple[int, ...], ...] = ()


@dataclass(frozen=True)
class Transition:
    """One step out of a state: its choices, the option it took, and where it led."""

    choices: tuple[ChoiceRecord, ...]
    option: tuple[Any, ...] | None
    label: str
    point: Point
    key: str | None
    goals: tuple[bool, ...]
    status: str


class _Chooser:
    """The engine's chooser: forced choices first, then first options, all recorded."""

    def __init__(self) -> None:
        self.forced: tuple[int, ...] = ()
        self.taken: list[ChoiceRecord] = []
        self.primed: int | None = None

    def begin(self, forced: tuple[int, ...]) -> None:
        self.forced, self.taken = forced, []

    def record(self, kind: str, options: tuple[Any, ...]) -> int:
        position = len(self.taken)
        index = self.forced[position] % len(options) if position < len(self.forced) else 0
        self.taken.append(ChoiceRecord(kind, index, len(options), options[index]))
        return index

    def ready(self, units: Sequence[Callable[[], None]]) -> int:
        if self.primed is not None:
            index, self.primed = self.primed, None
            return index
        return self.record("nested", tuple(range(len(units))))

    def waiter(self, waiters: Sequence[Any], unready: Set[str]) -> int:
        open_ = [p for p, ex in enumerate(waiters) if ex.execution_id not in unready]
        if len(open_) < 2:
            return open_[0] if open_ else 0
        return open_[self.record("waiter", tuple(waiters[p].execution_id for p in open_))]

    def fault(self, point: FaultPoint) -> bool:
        return self.record("fault", ("pass", f"fail {point}")) == 1


@dataclass(frozen=True)
class _Step:
    choices: tuple[ChoiceRecord, ...]
    option: tuple[Any, ...] | None
    label: str
    events: tuple[Event, ...]


class Driver:
    """One engine that is restored to a state and stepped, the choices made as ``schedule``."""

    def __init__(self, setup: Setup, goals: Sequence[Goal]) -> None:
        self.setup = setup
        self.goals = tuple(goals)
        self.chooser = _Chooser()
        self.engine = self._engine()
        self.left = [a.count for a in setup.actions]
        self.known: Callable[[str], bool] = lambda key: False
        """Keys of states already met: reaching one takes no snapshot."""
        # A client action that names an execution by its id (skip_timer) acts differently on
        # two states that differ only in numbering: then the ids are part of the state.
        self._exact_ids = any(a.name.startswith("skip_timer") for a in setup.actions)

    def _engine(self) -> Engine:
        return Engine(self.setup.registry, faults=self.setup.fault_plan(), chooser=self.chooser)

    @property
    def rt(self) -> Runtime:
        """The engine's runtime (its scheduler and runs)."""
        return self.engine.runtime

    def start(self) -> Transition:
        """Start the Flow: the initial state, as a transition from nowhere."""
        setup = self.setup
        self.chooser.begin(())
        self.engine.client().start_flow(setup.flow, setup.flow_id, setup.input)
        return self._arrive(Point(self._anchor()), (), None, "start", ())

    def close(self) -> None:
        """Close the engine (cancelling any suspended handler coroutine)."""
        self.engine.close()

    def goto(self, point: Point) -> None:
        """Put the engine at ``point``: restore its anchor, re-run the steps since."""
        # restore() abandons the left branch's suspended handler coroutines itself.
        self.engine.restore(point.anchor.snapshot)
        self.left = list(point.anchor.left)
        for forced in point.path:
            if self.step(forced) is None:
                raise RuntimeError("a re-run step found nothing to run: the Flow is not "
                                   "deterministic given its choices")  # fmt: skip

    def enabled(self, names: Naming | None) -> frozenset[tuple[Any, ...]] | None:
        """The options the next step offers, as ``option_of`` names them (None: opaque)."""
        sim = self.rt.sim
        assert sim is not None
        if names is None:
            return None
        now = sim.now_ns
        timed = sim.timed_units()
        units = list(sim.ready_units) + [u for due, u in timed if due <= now]
        if not units and timed:
            units = [u for due, u in timed if due == timed[0][0]]
        try:
            found = {option_of(u, names, now) for u in units}
        except Undescribable:
            return None
        return frozenset(found | {("action", k) for k, n in enumerate(self.left) if n > 0})

    def names(self) -> Naming | None:
        """The executions' names in the current state (None: it cannot be described)."""
        try:
            return naming(self.rt)
        except Undescribable:
            return None

    def step(self, forced: tuple[int, ...], names: Naming | None = None) -> _Step | None:
        """Run one step with ``forced`` choices (first options after them); None: no options.

        With the state's ``names``, the step says which option it took (for fairness).
        """
        chooser, sim = self.chooser, self.rt.sim
        assert sim is not None
        chooser.begin(forced)
        now = sim.now_ns
        actions = [k for k, n in enumerate(self.left) if n > 0]
        units = sim.runnable(sim.now_ns)
        if not units and actions and sim.next_due_ns() is not None:
            idle = chooser.record("idle", ("advance", *(("a", k) for k in actions)))
            if idle:
                return self._action(actions[idle - 1])
        if not units:
            units = sim.runnable()
        count = len(units) + len(actions)
        if not count:
            return None
        choice = chooser.record("ready", tuple(range(count))) if count > 1 else 0
        if choice >= len(units):
            return self._action(actions[choice - len(units)])
        option = None if names is None else _described(units[choice], names, now)
        chooser.primed = choice
        try:
            events = tuple(self.rt.run_unit() or ())
        finally:
            chooser.primed = None
        return _Step(tuple(chooser.taken), option, describe(events), events)

    def _action(self, index: int) -> _Step:
        self.left[index] -= 1
        events, label = self.setup.actions[index].run_recorded(self.engine, self.setup.flow_id)
        return _Step(tuple(self.chooser.taken), ("action", index), label, events)

    def _anchor(self) -> Anchor:
        return Anchor(self.engine.snapshot(), tuple(self.left))

    def _arrive(
        self,
        point: Point,
        choices: tuple[ChoiceRecord, ...],
        option: tuple[Any, ...] | None,
        label: str,
        path: tuple[tuple[int, ...], ...],
    ) -> Transition:
        """The transition to the state the engine is in now."""
        goals = tuple(goal(self.engine, self.setup.flow_id) for goal in self.goals)
        outside: tuple[Any, ...] = (tuple(self.left), goals)
        if self._exact_ids:
            outside += (tuple(sorted(k for r in self.rt.runs.values() for k in r.executions)),)
        key = live_key(self.rt, outside)
        if key is not None and not self.known(key):
            try:
                point = Point(self._anchor())
            except SnapshotError:
                key = None
        if key is None:
            point = Point(point.anchor, path)
        run = self.rt.runs.get(self.setup.flow_id)
        status = run.status.name if run is not None else "NONE"
        return Transition(choices, option, label, point, key, goals, status)

    def expand(self, point: Point) -> tuple[frozenset[tuple[Any, ...]] | None, list[Transition]]:
        """The options at ``point`` and every transition out of it (none: it is terminal).

        A transition to a state whose key ``known`` says was met keeps its source's point.
        """
        transitions: list[Transition] = []
        suffix: tuple[int, ...] = ()
        enabled: frozenset[tuple[Any, ...]] | None = None
        names: Naming | None = None
        while True:
            self.goto(point)
            if not transitions:
                # Every combination starts from the same restored state: one naming serves all.
                names = self.names()
                enabled = self.enabled(names)
            step = self.step(suffix, names)
            if step is None:
                return enabled, transitions
            forced = tuple(c.index for c in step.choices)
            transitions.append(self._arrive(point, step.choices, step.option, step.label,
                                            (*point.path, forced)))  # fmt: skip
            suffix = _next_suffix([(c.index, c.count) for c in step.choices])
            if not suffix:
                return enabled, transitions


def _described(unit: Any, names: Naming, now: int) -> tuple[Any, ...] | None:
    try:
        return option_of(unit, names, now)
    except Undescribable:
        return None


def _next_suffix(taken: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """The odometer's next combination: bump the deepest choice with options left."""
    for position in range(len(taken) - 1, -1, -1):
        index, count = taken[position]
        if index + 1 < count:
            return (*(i for i, _ in taken[:position]), index + 1)
    return ()
