"""Snapshots: the whole state of a simulation as one picklable value, and putting it back.

:class:`EngineState` names every part of the engine that a simulation *is*: the runs and the
earlier runs of reused Flow ids (with their executions, Channel queues, reserved messages and
waiters), the ready units and the timer heap (records, never closures), the virtual clock,
the lock tables, the remembered timer skips, the SubFlow parents, the Flow-timeout timers and
policies, the continue-as-new requests, the seeded choice and id sources, the fault plan's
counters, the Stream logs and the committed histories. Caches derived from the definitions
(the fast path's per-Step settings, the shared Wait shapes, start specs) are not state: an
engine rebuilds them on first use, so a restored engine may start with them empty.

A snapshot pickles that state once. What belongs to the Flows rather than to the run (the
Registry, each FlowDefinition and StepDefinition, the Step objects, their options, the
engine's own services) is written as a name and resolved in the engine that restores it, so a
snapshot restores into the engine it came from or into a new engine of the same Flows, and
its bytes can be sent to another process.
"""

from __future__ import annotations

import io
import pickle
from typing import TYPE_CHECKING, Any

from dexviz.engine.decide import DEFAULT_OPTIONS
from dexviz.engine.invoke import QueuedStart
from dexviz.engine.state_copy import StateCopier
from dexviz.engine.step_settings import StepSettings
from dexviz.engine.store import MemoryStore
from dexviz.engine.units import Unit

if TYPE_CHECKING:
    from dexviz.engine.runtime import Runtime

_SERVICES = (
    "invoker", "waits", "fast", "decisions", "subflows", "timeouts", "starts", "time_travel",
    "continue_as_new", "recorder", "scheduler", "store", "streams", "registry", "codecs",
    "runner", "chooser", "faults",
)  # fmt: skip
"""Runtime attributes that are services of the engine: named in a snapshot, never copied."""


def _constants() -> tuple[Any, ...]:
    """Shared module-level values the state may point at: named, so they stay shared."""
    from dexviz.engine import context, state

    return (DEFAULT_OPTIONS, state._NO_QUEUES, context._NOTHING)


class SnapshotError(RuntimeError):
    """The engine is not at a point a snapshot can describe, or a snapshot does not fit it."""


class EngineState:
    """Every part of one simulation's state, as plain references (see the module docstring).

    ``of`` gathers the parts of a runtime; ``install`` puts them back, replacing the contents
    of the runtime's own containers in place (its collaborators keep references to them).
    """

    __slots__ = (
        "runs", "previous_runs", "locks", "stale_skips", "subflow_parents", "flow_timers",
        "flow_policies", "can_requested", "can_first_seq", "now_ns", "ready", "timers",
        "timer_seq", "choice_rng", "id_rng", "id_millis", "id_prefix", "histories", "commits",
        "streams", "fault_counts",
    )  # fmt: skip

    runs: dict[str, Any]
    previous_runs: dict[str, Any]
    locks: dict[str, Any]
    stale_skips: dict[str, Any]
    subflow_parents: dict[str, Any]
    flow_timers: dict[str, Any]
    flow_policies: dict[str, Any]
    can_requested: set[str]
    can_first_seq: dict[str, int]
    now_ns: int
    ready: list[Any]
    timers: list[Any]
    timer_seq: int
    choice_rng: Any
    id_rng: Any
    id_millis: int
    id_prefix: str
    histories: dict[str, Any]
    commits: int
    streams: dict[Any, Any]
    fault_counts: tuple[int, set[int], int]

    @classmethod
    def of(cls, rt: Runtime) -> EngineState:
        """The parts of ``rt``'s state (references, not copies)."""
        sim, store, faults = rt.sim, rt.store, rt.faults
        if sim is None:
            raise SnapshotError("a live engine cannot be snapshotted: its handlers run on threads")
        if type(store) is not MemoryStore:
            raise SnapshotError(
                f"snapshot needs the in-memory store; this engine commits to {type(store).__name__}"
            )
        state = cls.__new__(cls)
        state.runs, state.previous_runs = rt.runs, rt.previous_runs
        state.locks, state.stale_skips = rt._locks, rt._stale_skips
        state.subflow_parents = rt.subflows._parents
        state.flow_timers, state.flow_policies = rt.timeouts._timers, rt.timeouts._policies
        state.can_requested = rt.continue_as_new._requested
        state.can_first_seq = rt.continue_as_new._first_seq
        state.now_ns, state.ready, state.timers = sim.now_ns, sim._ready, sim._timers
        state.timer_seq = sim._timer_seq
        state.choice_rng, state.id_rng = sim._rng.getstate(), rt.ids.getstate()
        state.id_millis, state.id_prefix = rt._id_millis, rt._id_prefix
        state.histories, state.commits = store._events, store.commits
        state.streams = rt.streams._logs
        state.fault_counts = (faults.commits, faults._fired, faults.spent)
        return state

    def copied(self) -> EngineState:
        """An independent copy: mutable parts copied once each, immutable parts shared."""
        c = StateCopier()
        cp = c.copy
        new = EngineState.__new__(EngineState)
        new.runs, new.previous_runs = cp(self.runs), cp(self.previous_runs)
        new.locks, new.stale_skips = cp(self.locks), cp(self.stale_skips)
        new.subflow_parents = cp(self.subflow_parents)
        new.flow_timers, new.flow_policies = cp(self.flow_timers), dict(self.flow_policies)
        new.can_requested, new.can_first_seq = set(self.can_requested), dict(self.can_first_seq)
        new.now_ns, new.ready, new.timers = self.now_ns, cp(self.ready), cp(self.timers)
        new.timer_seq, new.choice_rng, new.id_rng = self.timer_seq, self.choice_rng, self.id_rng
        new.id_millis, new.id_prefix = self.id_millis, self.id_prefix
        # Recorded events are immutable: a history is copied as a list of the same events.
        new.histories = {flow_id: list(log) for flow_id, log in self.histories.items()}
        new.commits, new.streams = self.commits, cp(self.streams)
        commits, fired, spent = self.fault_counts
        new.fault_counts = (commits, set(fired), spent)
        return new

    def install(self, rt: Runtime) -> None:
        """Make ``rt``'s state this one (the containers' contents are replaced in place)."""
        sim, store, faults = rt.sim, rt.store, rt.faults
        assert sim is not None and type(store) is MemoryStore
        _replace(rt.runs, self.runs)
        _replace(rt.previous_runs, self.previous_runs)
        _replace(rt._locks, self.locks)
        _replace(rt._stale_skips, self.stale_skips)
        _replace(rt.subflows._parents, self.subflow_parents)
        _replace(rt.timeouts._timers, self.flow_timers)
        _replace(rt.timeouts._policies, self.flow_policies)
        rt.continue_as_new._requested.clear()
        rt.continue_as_new._requested.update(self.can_requested)
        _replace(rt.continue_as_new._first_seq, self.can_first_seq)
        sim.now_ns, sim._timer_seq = self.now_ns, self.timer_seq
        sim._ready[:] = self.ready
        sim._timers[:] = self.timers
        sim._rng.setstate(self.choice_rng)
        rt.ids.setstate(self.id_rng)
        rt._id_millis, rt._id_prefix = self.id_millis, self.id_prefix
        _replace(store._events, self.histories)
        store.commits = self.commits
        _replace(rt.streams._logs, self.streams)
        faults.commits, fired, faults.spent = self.fault_counts
        faults._fired = set(fired)


def _replace(target: dict[Any, Any], source: dict[Any, Any]) -> None:
    target.clear()
    target.update(source)


class EngineSnapshot:
    """An independent, picklable copy of a simulation's whole state at one point.

    Made by ``Engine.snapshot()`` and put back by ``Engine.restore(snapshot)``, in the same
    engine or in a new engine of the same Flows: the run then continues exactly as it would
    have from that point, history byte for byte. In the engine that took it, a snapshot is a
    copy of the state (restoring copies it again, so one snapshot restores any number of
    times). Pickled, it is the state's bytes with the Flows' definitions named, not copied:
    what to send to another process. ``flow_types`` are the Flows it needs, ``time_ns`` its
    engine time; two snapshots are equal when their pickled states are.
    """

    __slots__ = ("_state", "_origin", "_data", "flow_types", "time_ns")

    def __init__(
        self,
        flow_types: tuple[str, ...],
        time_ns: int,
        *,
        state: EngineState | None = None,
        origin: Runtime | None = None,
        data: bytes | None = None,
    ) -> None:
        self._state, self._origin, self._data = state, origin, data
        self.flow_types = flow_types
        self.time_ns = time_ns

    @property
    def data(self) -> bytes:
        """The pickled state (made on first use for a snapshot taken in this process)."""
        if self._data is None:
            assert self._state is not None and self._origin is not None
            self._data = _dumps(self._origin, self._state)
        return self._data

    def state_for(self, rt: Runtime) -> EngineState:
        """A fresh copy of the state, with the Flows' definitions and services of ``rt``."""
        if self._origin is rt and self._state is not None:
            return self._state.copied()
        state: EngineState = _Unpickler(io.BytesIO(self.data), rt).load()
        return state

    def __reduce__(self) -> tuple[Any, ...]:
        return (_loaded, (self.data, self.flow_types, self.time_ns))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EngineSnapshot) and (
            self.flow_types == other.flow_types and self.data == other.data
        )

    def __hash__(self) -> int:
        return hash(self.data)

    def __repr__(self) -> str:
        return f"EngineSnapshot(flows={list(self.flow_types)}, time_ns={self.time_ns})"


def _loaded(data: bytes, flow_types: tuple[str, ...], time_ns: int) -> EngineSnapshot:
    """A snapshot read back from its pickled form."""
    return EngineSnapshot(flow_types, time_ns, data=data)


def _dumps(rt: Runtime, state: EngineState) -> bytes:
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, _names_of(rt)).dump(state)
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        raise SnapshotError(
            f"the engine's state holds a value that cannot be pickled: {error} (Step inputs, "
            "Attributes and messages must be picklable, and Flows defined at module level)"
        ) from error
    return buffer.getvalue()


def _names(rt: Runtime) -> dict[int, tuple[Any, ...]]:
    """The objects a snapshot names instead of copying, by ``id``, with their names."""
    names: dict[int, tuple[Any, ...]] = {id(rt): ("runtime",)}
    for index, constant in enumerate(_constants()):
        names[id(constant)] = ("constant", index)
    for service in _SERVICES:
        value = getattr(rt, service, None)
        if value is not None:
            names.setdefault(id(value), ("service", service))
    for definition in rt.registry.definitions:
        flow_type = definition.flow_type
        names[id(definition)] = ("flow", flow_type)
        names[id(definition.flow)] = ("flow-object", flow_type)
        for step_type, step in definition.steps.items():
            names[id(step)] = ("step", flow_type, step_type)
            names[id(step.step)] = ("step-object", flow_type, step_type)
            if step.options is not None:
                names.setdefault(id(step.options), ("step-options", flow_type, step_type))
        for kind, table in (("channel", definition.channels), ("attribute", definition.attributes),
                            ("rpc", definition.rpcs)):  # fmt: skip
            for name, value in table.items():
                names.setdefault(id(value), (kind, flow_type, name))
    return names


def _resolve(rt: Runtime, name: tuple[Any, ...]) -> Any:
    """The object of ``rt`` that ``name`` (from ``_names`` of another engine) stands for."""
    kind = name[0]
    if kind == "runtime":
        return rt
    if kind == "constant":
        return _constants()[name[1]]
    if kind == "service":
        return getattr(rt, name[1])
    definition = rt.registry.definition(name[1])
    if kind == "flow":
        return definition
    if kind == "flow-object":
        return definition.flow
    if kind == "settings":
        return rt.fast.settings(definition.steps[name[2]])
    if kind in ("step", "step-object", "step-options"):
        step = definition.steps[name[2]]
        return {"step": step, "step-object": step.step, "step-options": step.options}[kind]
    if kind == "channel":
        return definition.channels[name[2]]
    if kind == "attribute":
        return definition.attributes[name[2]]
    return definition.rpcs[name[2]]


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, names: dict[int, tuple[Any, ...]]) -> None:
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self._names = names

    def persistent_id(self, obj: Any) -> Any:
        found = self._names.get(id(obj))
        if found is not None:
            return found
        if type(obj) is StepSettings:
            step = self._names.get(id(obj.step))
            if step is not None:
                return ("settings", *step[1:])
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, rt: Runtime) -> None:
        super().__init__(file)
        self._rt = rt

    def persistent_load(self, pid: Any) -> Any:
        return _resolve(self._rt, pid)


def _names_of(rt: Runtime) -> dict[int, tuple[Any, ...]]:
    """``_names(rt)``, worked out once per runtime (its Flows and services do not change)."""
    cached = rt.snapshot_names
    if cached is None:
        cached = _names(rt)
        rt.snapshot_names = cached
    return cached


def _records_only(rt: Runtime) -> bool:
    """Whether every queued and timed unit is an engine record.

    Not so while an asyncio callback or a coroutine handler's outcome is on its way back.
    """
    sim = rt.sim
    assert sim is not None
    kinds = (Unit, QueuedStart)
    return all(isinstance(u, kinds) for u in sim._ready) and all(
        isinstance(t.unit, kinds) for t in sim._timers if not t.canceled
    )


def take(rt: Runtime) -> EngineSnapshot:
    """Snapshot ``rt`` between units (no commit pending, no coroutine handler running)."""
    if rt.closed:
        raise SnapshotError("this engine is closed (or crashed): there is nothing to snapshot")
    if rt.sim is None:
        raise SnapshotError("a live engine cannot be snapshotted: its handlers run on threads")
    if rt.recorder._pending:
        raise SnapshotError("a unit is being committed: snapshot between units")
    if (rt._loop is not None and rt._loop.pending_tasks()) or not _records_only(rt):
        raise SnapshotError(
            "a coroutine handler is running (its frame cannot be copied): snapshot when no "
            "async Step method is in flight"
        )
    state = EngineState.of(rt).copied()
    flow_types = tuple(d.flow_type for d in rt.registry.definitions)
    return EngineSnapshot(flow_types, state.now_ns, state=state, origin=rt)


def restore(rt: Runtime, snapshot: EngineSnapshot) -> None:
    """Put ``rt`` back at ``snapshot`` (taken from it or from an engine of the same Flows)."""
    flow_types = tuple(d.flow_type for d in rt.registry.definitions)
    if snapshot.flow_types != flow_types:
        raise SnapshotError(
            f"the snapshot is of Flows {list(snapshot.flow_types)}; this engine runs "
            f"{list(flow_types)}"
        )
    if rt.closed:
        raise SnapshotError("this engine is closed (or crashed): create a new one to restore into")
    EngineState.of(rt)  # the same checks as a snapshot: simulation, in-memory store
    if rt._loop is not None and rt._loop.pending_tasks():
        # The coroutines in flight belong to the state being replaced (their wakeups go with
        # its timers): dropped as a dying process would, so the restored engine can snapshot.
        rt._loop.abandon()
        rt._loop = None
    snapshot.state_for(rt).install(rt)
