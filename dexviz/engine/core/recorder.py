"""Recorder: builds history events and hands each unit's events to the Store as one commit."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from dexviz.engine.core.state import Execution, FlowRun
from dexviz.engine.core.store import MemoryStore, Store
from dexviz.history.event import Event
from dexviz.history.kinds import EventKind

_EMPTY: Mapping[str, Any] = {}
_new_event = tuple.__new__
"""Builds an Event from its ten fields in one C call (Event(...) runs a Python __new__)."""


class Clock(Protocol):
    """What the recorder stamps events with: engine time in ns (virtual in simulation)."""

    @property
    def now_ns(self) -> int:
        """Engine time in ns since the epoch."""


class Recorder:
    """Buffers the events of the running unit per Flow and commits them together."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        # An object with a now_ns attribute (the scheduler), read without a call per event.
        self._clock = clock
        self._pending: dict[str, tuple[FlowRun, list[Event]]] = {}
        self.listeners: list[Callable[[Event], None]] = []
        self.produced: list[Event] | None = None
        # The in-memory store's logs, appended to directly (a commit is then one list append).
        self._logs: dict[str, list[Event]] | None = (
            store._events if type(store) is MemoryStore else None
        )

    def emit(
        self,
        run: FlowRun,
        kind: EventKind,
        execution: Execution | None = None,
        payload: Mapping[str, Any] = _EMPTY,
        *,
        method: str | None = None,
        attempt: int | None = None,
    ) -> Event:
        """Record one event of ``run`` (an execution's id, type, method and attempt by default)."""
        run.seq += 1
        if execution is not None:
            event = _new_event(
                Event,
                (
                    run.seq,
                    self._clock.now_ns,
                    kind,
                    run.flow_id,
                    run.run_id,
                    execution.execution_id,
                    execution.step.step_type,
                    (execution.method if method is None else method) or None,
                    (execution.attempt if attempt is None else attempt) or None,
                    payload,
                ),
            )
        else:
            event = _new_event(
                Event,
                (run.seq, self._clock.now_ns, kind, run.flow_id, run.run_id, None, None, method,
                 attempt, payload),
            )  # fmt: skip
        pending = self._pending.get(run.flow_id)
        if pending is None:
            self._pending[run.flow_id] = (run, [event])
        else:
            pending[1].append(event)
        return event

    def emit_all(
        self,
        run: FlowRun,
        kind: EventKind,
        execution: Execution | None,
        payloads: list[Mapping[str, Any]],
        *,
        method: str | None = None,
        attempt: int | None = None,
    ) -> None:
        """Record one event of ``kind`` per payload, in order, as :meth:`emit` per payload would.

        Without a call per event: a commit may publish or consume many messages.
        """
        execution_id: str | None = None
        step_type: str | None = None
        if execution is not None:
            execution_id = execution.execution_id
            step_type = execution.step.step_type
            method = (execution.method if method is None else method) or None
            attempt = (execution.attempt if attempt is None else attempt) or None
        flow_id, run_id = run.flow_id, run.run_id
        now = self._clock.now_ns
        events = self.buffer(run)
        seq = run.seq
        for payload in payloads:
            seq += 1
            # Every field named (no *-unpacking of a shared head: that builds a list per event).
            events.append(_new_event(Event, (seq, now, kind, flow_id, run_id, execution_id,
                                             step_type, method, attempt, payload)))  # fmt: skip
        run.seq = seq

    def buffer(self, run: FlowRun) -> list[Event]:
        """The list of ``run``'s events the running unit will commit, for appending directly.

        The fast path builds its events itself (``seq`` from ``run.seq``, time from the clock)
        and appends them here, in the order :meth:`emit` would have.
        """
        entry = self._pending.get(run.flow_id)
        if entry is None:
            events: list[Event] = []
            self._pending[run.flow_id] = (run, events)
            return events
        return entry[1]

    def commit(self) -> list[Event]:
        """Commit every buffered event as one store transaction; return them.

        A store without ``commit_many`` takes one transaction per Flow instead.
        """
        pending = self._pending
        if not pending:
            return []
        self._pending = {}
        logs = self._logs
        if logs is not None:
            flow_id, entry = pending.popitem()
            if pending:  # several Flows: put it back (it was the last) and commit them all
                pending[flow_id] = entry
                return self._commit_all(pending)
            # MemoryStore.commit of the usual single Flow, inlined.
            events = entry[1]
            try:
                logs[flow_id] += events
            except KeyError:  # the Flow's first commit
                logs[flow_id] = list(events)
            self._store.commits += 1  # type: ignore[attr-defined]
            if self.produced is not None:
                self.produced += events
            for listener in self.listeners:
                for event in events:
                    listener(event)
            return events
        return self._commit_all(pending)

    def _commit_all(self, pending: dict[str, tuple[FlowRun, list[Event]]]) -> list[Event]:
        committed: list[Event] = []
        commit_many = getattr(self._store, "commit_many", None) if len(pending) > 1 else None
        if commit_many is not None:
            commit_many([(flow_id, events) for flow_id, (_, events) in pending.items()])
            for _, events in pending.values():
                committed.extend(events)
        else:
            for flow_id, (_, events) in pending.items():
                self._store.commit(flow_id, events)
                committed.extend(events)
        if self.produced is not None:
            self.produced.extend(committed)
        for listener in self.listeners:
            for event in committed:
                listener(event)
        return committed

    def discard(self) -> None:
        """Drop buffered events (used when a unit's work must not commit)."""
        for run, events in self._pending.values():
            run.seq -= len(events)
        self._pending = {}
