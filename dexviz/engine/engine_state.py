"""Snapshots: the whole state of a simulation as one picklable value, and putting it back.

:class:`EngineState` names every part of the engine that a simulation *is*: the runs and the
earlier runs of reused Flow ids (with their executions, Channel queues, reserved messages and
waiters), the ready units and the timer heap (records, never closures), the virtual clock,
the lock tables, the remembered timer skips, the SubFlow parents, the Flow-timeout timers and
policies, the continue-as-new requests, the seeded choice and id sources, the fault plan's
counters, the Stream logs, the committed histories, and the coroutine handlers in flight as
the traces that rebuild them (:mod:`dexviz.engine.coroutine_replay`: a restore re-drives
them). Caches derived from the definitions
(the fast path's per-Step settings, the shared Wait shapes, start specs) are not state: an
engine rebuilds them on first use, so a restored engine may start with them empty.

In the process that took it, a snapshot shares what the engine never changes again: each
committed history is a length into the engine's log (logs are only ever appended to; a
restore hands the engine that log while it is no longer, else a new list of its first
events), settled executions are the same objects (:mod:`dexviz.engine.state_copy`), and the
random sources' states are their raw fields (:mod:`dexviz.engine.core.rng_state`).

A snapshot pickles that state once. What belongs to the Flows rather than to the run (the
Registry, each FlowDefinition and StepDefinition, the Step objects, their options, the
engine's own services) is written as a name and resolved in the engine that restores it, so a
snapshot restores into the engine it came from or into a new engine of the same Flows, and
its bytes can be sent to another process.
"""

from __future__ import annotations

import heapq
import io
import pickle
from typing import TYPE_CHECKING, Any

from dexviz.engine import coroutine_replay, coroutine_trace
from dexviz.engine.attempt.invoke import QueuedStart
from dexviz.engine.core import rng_state
from dexviz.engine.core.store import MemoryStore
from dexviz.engine.core.units import Unit
from dexviz.engine.snapshot_names import NamedPickler, NamedUnpickler
from dexviz.engine.state_copy import Memo, copy_dict, copy_value

if TYPE_CHECKING:
    from dexviz.engine.core.faults import FaultPlan
    from dexviz.engine.core.scheduler import Scheduler
    from dexviz.engine.runtime import Runtime


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
        "streams", "fault_counts", "coroutines", "coroutine_places",
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
    histories: dict[str, tuple[list[Any], int]]
    commits: int
    streams: dict[Any, Any]
    fault_counts: tuple[int, set[int], int]
    coroutines: tuple[coroutine_trace.CoroutineTrace, ...]
    coroutine_places: tuple[int, ...]

    @classmethod
    def of(cls, rt: Runtime) -> EngineState:
        """The parts of ``rt``'s state (references, not copies; each history as its length)."""
        sim, store, faults = _checked(rt)
        state = cls.__new__(cls)
        state.runs, state.previous_runs = rt.runs, rt.previous_runs
        state.locks, state.stale_skips = rt._locks, rt._stale_skips
        state.subflow_parents = rt.subflows._parents
        state.flow_timers, state.flow_policies = rt.timeouts._timers, rt.timeouts._policies
        state.can_requested = rt.continue_as_new._requested
        state.can_first_seq = rt.continue_as_new._first_seq
        state.now_ns, state.ready, state.timers = sim.now_ns, sim._ready, sim._timers
        state.timer_seq = sim._timer_seq
        state.choice_rng, state.id_rng = rng_state.read(sim._rng), rng_state.read(rt.ids)
        state.id_millis, state.id_prefix = rt._id_millis, rt._id_prefix
        # A committed log only ever grows: its first ``len`` events are the history now.
        state.histories = {flow_id: (log, len(log)) for flow_id, log in store._events.items()}
        state.commits, state.streams = store.commits, rt.streams._logs
        state.fault_counts = (faults.commits, faults._fired, faults.spent)
        state.coroutines, state.coroutine_places = (), ()
        return state

    def copied(self) -> EngineState:
        """An independent copy: mutable parts copied once each, immutable parts shared."""
        memo: Memo = {}
        new = EngineState.__new__(EngineState)
        new.runs = {k: copy_value(memo, run) for k, run in self.runs.items()}
        # Most tables are empty in most runs: no call for those.
        table = self.previous_runs
        new.previous_runs = copy_dict(memo, table) if table else {}
        table = self.locks
        new.locks = copy_dict(memo, table) if table else {}
        table = self.stale_skips
        new.stale_skips = copy_dict(memo, table) if table else {}
        table = self.subflow_parents
        new.subflow_parents = copy_dict(memo, table) if table else {}
        table = self.flow_timers
        new.flow_timers = copy_dict(memo, table) if table else {}
        new.flow_policies = dict(self.flow_policies)
        new.can_requested, new.can_first_seq = set(self.can_requested), dict(self.can_first_seq)
        new.now_ns, new.timer_seq = self.now_ns, self.timer_seq
        new.ready = [copy_value(memo, unit) for unit in self.ready]
        # A canceled timer is left out (see state_copy); the rest is still a heap after that.
        timers = self.timers
        new.timers = [copy_value(memo, t) for t in timers if not t.canceled]
        if len(new.timers) != len(timers):
            heapq.heapify(new.timers)
        new.choice_rng, new.id_rng = self.choice_rng, self.id_rng
        new.id_millis, new.id_prefix = self.id_millis, self.id_prefix
        # Histories are shared: each is a length into a log that is only ever appended to.
        new.histories, new.commits = self.histories, self.commits
        table = self.streams
        new.streams = copy_dict(memo, table) if table else {}
        commits, fired, spent = self.fault_counts
        new.fault_counts = (commits, set(fired), spent)
        new.coroutines, new.coroutine_places = self.coroutines, self.coroutine_places
        return new

    def detached(self) -> EngineState:
        """This state in containers of its own, holding the very objects (no copies).

        For a state taken from an engine that will be restored before it runs again: the
        restore fills the engine's containers with copies, so nothing writes to these objects
        any more (``take_over``).
        """
        new = EngineState.__new__(EngineState)
        new.runs, new.previous_runs = dict(self.runs), dict(self.previous_runs)
        new.locks, new.stale_skips = dict(self.locks), dict(self.stale_skips)
        new.subflow_parents, new.flow_timers = dict(self.subflow_parents), dict(self.flow_timers)
        new.flow_policies = dict(self.flow_policies)
        new.can_requested, new.can_first_seq = set(self.can_requested), dict(self.can_first_seq)
        new.now_ns, new.timer_seq = self.now_ns, self.timer_seq
        new.ready = list(self.ready)
        # As ``copied``: a canceled timer is left out (the rest is still a heap after that).
        timers = self.timers
        new.timers = [t for t in timers if not t.canceled]
        if len(new.timers) != len(timers):
            heapq.heapify(new.timers)
        new.choice_rng, new.id_rng = self.choice_rng, self.id_rng
        new.id_millis, new.id_prefix = self.id_millis, self.id_prefix
        new.histories, new.commits = self.histories, self.commits
        new.streams = dict(self.streams)
        commits, fired, spent = self.fault_counts
        new.fault_counts = (commits, set(fired), spent)
        new.coroutines, new.coroutine_places = self.coroutines, self.coroutine_places
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
        rng_state.write(sim._rng, self.choice_rng)
        rng_state.write(rt.ids, self.id_rng)
        rt._id_millis, rt._id_prefix = self.id_millis, self.id_prefix
        logs = store._events
        logs.clear()
        for flow_id, (log, length) in self.histories.items():
            # The log itself while it is no longer (nothing holds more of it, and the engine
            # only appends), else a new log of its first events: the longer one stays as is.
            logs[flow_id] = log if len(log) == length else log[:length]
        store.commits = self.commits
        _replace(rt.streams._logs, self.streams)
        faults.commits, fired, faults.spent = self.fault_counts
        faults._fired = set(fired)

    def __getstate__(self) -> tuple[Any, ...]:
        values = {name: getattr(self, name) for name in EngineState.__slots__}
        # Pickled, a history is the events it holds (not the longer log it shares), and the
        # random sources' states are in getstate()'s form (not this process's raw fields).
        values["histories"] = {
            flow_id: log[:length] for flow_id, (log, length) in self.histories.items()
        }
        values["choice_rng"] = rng_state.portable(self.choice_rng)
        values["id_rng"] = rng_state.portable(self.id_rng)
        return tuple(values.values())

    def __setstate__(self, values: tuple[Any, ...]) -> None:
        for name, value in zip(EngineState.__slots__, values, strict=True):
            setattr(self, name, value)
        logs: dict[str, list[Any]] = values[EngineState.__slots__.index("histories")]
        self.histories = {flow_id: (log, len(log)) for flow_id, log in logs.items()}


def _checked(rt: Runtime) -> tuple[Scheduler, MemoryStore, FaultPlan]:
    """The parts of ``rt`` that hold a snapshot's state, once it is one a snapshot can hold."""
    sim, store = rt.sim, rt.store
    if sim is None:
        raise SnapshotError("a live engine cannot be snapshotted: its handlers run on threads")
    if type(store) is not MemoryStore:
        raise SnapshotError(
            f"snapshot needs the in-memory store; this engine commits to {type(store).__name__}"
        )
    return sim, store, rt.faults


def _replace(target: dict[Any, Any], source: dict[Any, Any]) -> None:
    if target or source:
        target.clear()
        target.update(source)


class EngineSnapshot:
    """An independent, picklable copy of a simulation's whole state at one point.

    Made by ``Engine.snapshot()`` and put back by ``Engine.restore(snapshot)``, in the same
    engine or in a new engine of the same Flows: the run then continues exactly as it would
    have from that point, history byte for byte. In the engine that took it, a snapshot is a
    copy of the state's live parts that shares the parts the engine never changes again
    (committed histories, ended executions; see the module docstring); restoring copies it
    again, so one snapshot restores any number of times. Pickled, it is the state's bytes
    with the Flows' definitions named, not copied: what to send to another process.
    ``flow_types`` are the Flows it needs, ``time_ns`` its engine time; two snapshots are
    equal when their pickled states are.
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
        state: EngineState = NamedUnpickler(io.BytesIO(self.data), rt).load()
        return state

    def held_executions(self, flow_id: str) -> dict[str, Any]:
        """The executions of ``flow_id``'s run as this snapshot holds them (empty if none).

        Only in the process that took it (a pickled snapshot holds bytes): objects that no
        engine writes to again, since every restore copies what may change.
        """
        state = self._state
        run = None if state is None else state.runs.get(flow_id)
        return {} if run is None else run.executions

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
        NamedPickler(buffer, rt).dump(state)
    except (pickle.PicklingError, TypeError, AttributeError) as error:
        raise SnapshotError(
            f"the engine's state holds a value that cannot be pickled: {error} (Step inputs, "
            "Attributes and messages must be picklable, and Flows defined at module level)"
        ) from error
    return buffer.getvalue()


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
    """Snapshot ``rt`` between units (no commit pending); coroutines in flight as traces."""
    if rt.closed:
        raise SnapshotError("this engine is closed (or crashed): there is nothing to snapshot")
    if rt.sim is None:
        raise SnapshotError("a live engine cannot be snapshotted: its handlers run on threads")
    if rt.recorder._pending:
        raise SnapshotError("a unit is being committed: snapshot between units")
    flight = _flight(rt)
    state = EngineState.of(rt).copied()
    if flight is not None:
        state.coroutine_places = coroutine_trace.mark(state, flight)
        state.coroutines = tuple(flight.traces)
    flow_types = tuple(d.flow_type for d in rt.registry.definitions)
    return EngineSnapshot(flow_types, state.now_ns, state=state, origin=rt)


def _flight(rt: Runtime) -> coroutine_trace.Flight | None:
    """The coroutine handlers in flight (kept as traces a restore re-drives), or None."""
    if (rt._loop is None or not rt._loop.pending_tasks()) and _records_only(rt):
        return None
    try:
        return coroutine_trace.describe(rt)
    except coroutine_trace.ReplayError as error:
        raise SnapshotError(f"a coroutine handler cannot be snapshotted: {error}") from None


def take_over(rt: Runtime) -> EngineSnapshot:
    """``take(rt)``, but the snapshot takes the engine's state objects instead of copying them.

    Only for an engine that is restored before it runs a unit again (the explorer's bench,
    which restores a state, runs one step and snapshots the result): from then on the
    snapshot is the only holder of those objects. Coroutines in flight are traces as in
    ``take``; their Tasks stay with the engine (the restore drops them), their contexts
    disarmed (``coroutine_trace.disarm``): closed later, they write nothing the snapshot holds.
    """
    if rt.closed or rt.sim is None or rt.recorder._pending:
        return take(rt)  # take raises the fitting error
    flight = _flight(rt)
    state = EngineState.of(rt).detached()
    if flight is not None:  # the records go into the objects the snapshot holds now
        state.coroutine_places = coroutine_trace.mark(state, flight)
        state.coroutines = tuple(flight.traces)
        coroutine_trace.disarm(flight)
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
    _checked(rt)  # the same checks as a snapshot: simulation, in-memory store
    if rt._loop is not None and rt._loop.pending_tasks():
        # The coroutines in flight belong to the state being replaced (their wakeups go with
        # its timers): dropped as a dying process would, so the restored engine can snapshot.
        rt._loop.drop_tasks()
    state = snapshot.state_for(rt)
    state.install(rt)
    if state.coroutines:
        try:
            coroutine_replay.redrive(rt, state.coroutines, state.coroutine_places)
        except coroutine_trace.ReplayError as error:
            raise SnapshotError(f"a coroutine handler could not be rebuilt: {error}") from None
