"""Re-running one recorded run in a fresh engine, driven by what its history recorded.

The engine gets the recorded start input and start time, the failures and cancellations a
FaultPlan injected, and the client's Channel publishes (each made once the replay reaches the
event just before it). Its every choice is made by :class:`RecordedOrder`, which follows the
recorded order of events rather than the recorded seed, so a run that shared its engine with
other Flows replays as it ran. The seed still seeds the engine's ids, so a run that had its
engine to itself gets the recorded message and run ids again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dexviz.compare.recorded_order import OrderDivergence, RecordedOrder
from dexviz.engine import Engine, FaultPlan
from dexviz.engine.core.faults import CancelExecution, FailAttempt
from dexviz.engine.core.store import MemoryStore
from dexviz.history import Event, EventKind
from dexviz.sdk import Registry
from dexviz.sdk.definitions import FlowDefinition
from dexviz.sdk.errors import SimulationLimitError

__all__ = ["UNITS_PER_EVENT", "Replayed", "ReplayError", "replay_events"]

UNITS_PER_EVENT = 50
"""A replay may run this many units of work per recorded event (plus 1,000) before it stops:
code that now loops for ever is refused with a ReplayError rather than run without end."""


class ReplayError(ValueError):
    """The recorded history cannot be replayed (the message says what stops it)."""


@dataclass(frozen=True)
class Replayed:
    """What the replay produced: the replayed run's events, and where the order diverged."""

    events: tuple[Event, ...]
    order: OrderDivergence | None


class _ReplayStore(MemoryStore):
    """The in-memory store, telling the chooser each commit of the replayed Flow."""

    def __init__(self, chooser: RecordedOrder, flow_id: str) -> None:
        super().__init__()
        self.chooser = chooser
        self.flow_id = flow_id

    def commit(self, flow_id: str, events: Sequence[Event]) -> None:
        """Append ``events`` to the Flow's log (and tell the chooser of the replayed Flow's)."""
        super().commit(flow_id, events)
        if flow_id == self.flow_id:
            self.chooser.committed(events)

    def release(self) -> None:
        """Drop the logs once the replay's events are taken.

        The closed engine is a cycle the collector frees only later; without its logs, the
        replayed events (and their payloads, and the executions those name) are freed as soon
        as their verdict no longer needs them, and a store check's collection after each run
        walks a third of what it did.
        """
        self._events.clear()


def replay_events(
    events: Sequence[Event], start: Event, registry: Registry, definition: FlowDefinition
) -> Replayed:
    """Run ``definition``'s Flow again as the recorded ``events`` ran (``start`` is the first).

    Raises:
        ReplayError: the current code ran past the replay's budget of units of work
            (``UNITS_PER_EVENT`` per recorded event), or publishes to a Channel it no longer has.
    """
    flow_id = start.flow_id
    epoch = datetime.fromtimestamp(start.time_ns / 1e9, tz=UTC)
    plan = FaultPlan.of(*recorded_faults(events))
    engines: list[Engine] = []  # the chooser asks for the engine's Tasks once it runs
    chooser = RecordedOrder(flow_id, events, lambda: _tasks(engines[0], flow_id))
    store = _ReplayStore(chooser, flow_id)
    engine = Engine(
        registry,
        seed=int(start.payload["seed"]),
        faults=plan,
        epoch=epoch,
        store=store,
        chooser=chooser,
    )
    engines.append(engine)
    budget = UNITS_PER_EVENT * len(events) + 1000
    try:
        with engine:
            replayed = _drive(engine, chooser, events, registry, definition, budget)
    except SimulationLimitError as error:
        raise ReplayError(
            f"Flow {flow_id!r}: the current code ran past {budget} units of work "
            f"where the recorded run has {len(events)} events ({error})"
        ) from None
    store.release()
    return replayed


def _drive(
    engine: Engine,
    chooser: RecordedOrder,
    events: Sequence[Event],
    registry: Registry,
    definition: FlowDefinition,
    budget: int,
) -> Replayed:
    """Start the run as recorded, make each client publish in its place, run to the end."""
    start = events[0]
    flow_id = start.flow_id
    client = engine.client()
    data = _start_input(registry, definition, start.payload.get("input"))
    client.start_flow(definition.flow, flow_id, data)
    for publish in events:
        if publish.kind == EventKind.CHANNEL_EXTERNAL_PUBLISH:
            _run_to(engine, chooser, publish.seq - 1, budget)
            _publish(client, registry, definition, flow_id, publish)
    engine.run_until_idle(max_units=budget)
    return Replayed(tuple(engine.history(flow_id)), chooser.divergence)


def _tasks(engine: Engine, flow_id: str) -> dict[asyncio.Task[Any], str]:
    """The replayed run's coroutine Tasks by execution (read as the explorer reads them)."""
    run = engine.runtime.runs.get(flow_id)
    if run is None:
        return {}
    return {
        ex.task: ex.execution_id
        for ex in run.executions.values()
        if isinstance(ex.task, asyncio.Task)
    }


def _start_input(registry: Registry, definition: FlowDefinition, data: Any) -> Any:
    start = definition.start
    if start is None or data is None:
        return data
    return registry.codec_registry.from_json_ready(
        start.input_type, data, operation="replay: start input"
    )


def _run_to(engine: Engine, chooser: RecordedOrder, seq: int, budget: int) -> None:
    """Run until the replayed Flow has committed ``seq`` events (or has nothing left to run)."""
    if chooser.produced >= seq:
        return
    engine.run(until=lambda _: chooser.produced >= seq, max_units=budget)


def _publish(
    client: Any, registry: Registry, definition: FlowDefinition, flow_id: str, event: Event
) -> None:
    for message in event.payload.get("messages") or ():
        name = str(message.get("channel"))
        channel = definition.channels.get(name)
        if channel is None:
            raise ReplayError(
                f"event #{event.seq} publishes to Channel {name!r}, which Flow "
                f"{definition.flow_type!r} no longer declares"
            )
        value = registry.codec_registry.from_json_ready(
            channel.value_type, message.get("value"), operation="replay: publish"
        )
        client.publish(flow_id, channel, value)


def recorded_faults(events: Sequence[Event]) -> list[FailAttempt | CancelExecution]:
    """The failures and cancellations a FaultPlan injected into the recorded run."""
    faults: list[FailAttempt | CancelExecution] = []
    last_kind: dict[str, Any] = {}  # the kind itself: its text is made only for a fault
    for event in events:
        execution_id = event.execution_id
        kind = event.kind
        if kind == EventKind.ATTEMPT_FAILED and event.payload.get("reason") == "fault":
            faults.append(
                FaultPlan.fail(
                    event.step_type or "",
                    event.method or "execute",
                    event.attempt or 1,
                    _error_like(event),
                    execution_id=execution_id,
                )
            )
        elif (
            kind == EventKind.EXECUTION_CANCELED
            and execution_id
            and event.payload.get("by") == "fault"
            and execution_id in last_kind
        ):
            faults.append(FaultPlan.cancel(execution_id, str(last_kind[execution_id])))
        if execution_id:
            last_kind[execution_id] = kind
    return faults


def _error_like(event: Event) -> BaseException | None:
    """An error whose recorded type name and message are the recorded ones.

    None for the engine's own InjectedFailure, which then writes the same message again.
    """
    if str(event.payload.get("error_type")).endswith(".InjectedFailure"):
        return None
    module, _, name = str(event.payload.get("error_type")).rpartition(".")
    error_type = type(name or "Error", (Exception,), {"__module__": module or "builtins"})
    error_type.__qualname__ = name or "Error"
    error: BaseException = error_type(str(event.payload.get("error_message") or ""))
    return error
