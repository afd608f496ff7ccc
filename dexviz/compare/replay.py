"""``replay_check``: re-run a recorded history against the Flow code as it is now.

The recorded run is re-simulated in a fresh engine driven by what the history recorded: its
seed (the source of every scheduling and waiter choice), its start input and start time, the
failures and cancellations a FaultPlan injected, and the client's Channel publishes (each
made once the replay reaches the event just before it). Every method's new result — the
WaitFor's wait, the decision, its output, publications, Attribute writes, timers, next Steps,
failures — is then compared with the recorded one, execution by execution, aligned by
lineage. Timing is not compared: a change that only moves time is compatible.

The history must come from a simulation (it carries its seed); runs that took RPCs, time
travel, timeouts or crashes are refused with a ``ReplayError`` naming what stops the replay.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dexviz.analysis._diff_compare import Comparison
from dexviz.analysis._diff_fold import RunTrace
from dexviz.analysis.run_diff import (
    METHOD_RESULT_ASPECTS,
    Aspect,
    Difference,
    RunComparison,
    compare_traces,
    trace_run,
)
from dexviz.compare.run_sources import RunSource, load_history
from dexviz.engine import Engine, FaultPlan
from dexviz.engine.engine import as_registry
from dexviz.engine.faults import CancelExecution, FailAttempt
from dexviz.history import Event, EventKind, History
from dexviz.sdk import Flow, Registry
from dexviz.sdk.definitions import FlowDefinition

__all__ = ["Divergence", "ReplayCheck", "ReplayError", "SourceLocation", "replay_check"]

Flows = Registry | Flow[Any] | Sequence[Flow[Any]]
"""The current code: a Flow, a list of Flows, or a Registry."""

_UNSUPPORTED = {
    EventKind.RPC_EXECUTION_COMPLETED: "an RPC call",
    EventKind.TIME_TRAVEL_FORK: "a time travel",
    EventKind.RECOVERED: "an engine recovery",
}


class ReplayError(ValueError):
    """The recorded history cannot be replayed (the message says what stops it)."""


@dataclass(frozen=True)
class SourceLocation:
    """Where a Step method is defined in the current code."""

    file: str
    line: int
    qualname: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.qualname})"


@dataclass(frozen=True)
class Divergence:
    """The first recorded event the current code no longer reproduces.

    Attributes:
        seq: The recorded event that shows the difference (its ``seq``).
        execution_id: The recorded execution (None for the run as a whole).
        step_type: Its Step type.
        method: ``wait_for`` or ``execute`` (None when the difference is the execution's
            existence or input, decided by its parent).
        aspect: What differs (decision, published, step, input, ...).
        recorded: The recorded side's value.
        replayed: What the current code gives instead.
        replayed_execution_id: The aligned execution of the replay (None when it has none).
        location: The Step method of the current code that now decides differently (None when
            the current code has no such Step).
    """

    seq: int
    execution_id: str | None
    step_type: str | None
    method: str | None
    aspect: Aspect
    recorded: Any
    replayed: Any
    replayed_execution_id: str | None
    location: SourceLocation | None

    def describe(self) -> str:
        """One line: the recorded event, the method, what differs, where the code is."""
        from dexviz.analysis._diff_compare import changed_parts

        recorded, replayed = changed_parts(self.recorded, self.replayed)
        where = self.execution_id or "the run"
        method = f" {self.method}" if self.method else ""
        at = f"; now decided at {self.location}" if self.location else ""
        return (f"#{self.seq} {where}{method}: {self.aspect} differs: recorded "
                f"{recorded!r}, replayed {replayed!r}{at}")


@dataclass(frozen=True)
class ReplayCheck:
    """The verdict of replaying one recorded run against the current code.

    ``compatible`` is True when every method gives the recorded result again; otherwise
    ``first_divergence`` says where the current code departs from the record. ``comparison``
    holds every difference (recorded run = side a, replay = side b).
    """

    flow_id: str
    run_id: str
    compatible: bool
    first_divergence: Divergence | None
    comparison: RunComparison = field(repr=False)
    replayed: History = field(repr=False)

    def __bool__(self) -> bool:
        """True when the run replays compatibly."""
        return self.compatible

    def describe(self) -> str:
        """One line: ``flow-1: compatible`` or ``flow-1: DIVERGES at #12 ...``."""
        if self.first_divergence is None:
            return f"{self.flow_id}: compatible"
        return f"{self.flow_id}: DIVERGES {self.first_divergence.describe()}"


def replay_check(history: RunSource, flows: Flows, *, run_id: str | None = None) -> ReplayCheck:
    """Re-run a recorded history against ``flows`` (the code as it is now) and compare.

    Args:
        history: The recorded run: a History, SimulationRun, history file or ``(store, id)``.
        flows: The current Flow code: a Flow, a list of Flows or a Registry.
        run_id: The recorded run to replay (default: the history's last run).

    Returns:
        A ReplayCheck; ``compatible`` is False with ``first_divergence`` set when the current
        code decides differently somewhere.

    Raises:
        ReplayError: The history cannot be replayed (not a simulation, RPCs, time travel, ...).
    """
    registry = as_registry(flows)
    return check_recorded(load_history(history), registry, run_id)


def check_recorded(history: History, registry: Registry, run_id: str | None) -> ReplayCheck:
    """``replay_check`` over a loaded history and a built Registry (reused across runs)."""
    recorded = trace_run(history, run_id)
    start = _start_event(recorded)
    definition = _definition(registry, recorded.flow_type)
    if definition is None:
        return _missing_flow(recorded, start)
    replayed = _replay(recorded, start, registry, definition)
    comparison = compare_traces(recorded, trace_run(replayed),
                                Comparison(METHOD_RESULT_ASPECTS, None))
    first = comparison.first
    divergence = None if first is None else _divergence(first, recorded, definition)
    return ReplayCheck(recorded.flow_id, recorded.run_id, first is None, divergence,
                       comparison, replayed)


def _start_event(run: RunTrace) -> Event:
    start = run.events[0]
    where = f"Flow {run.flow_id!r} run {run.run_id!r}"
    if start.kind != EventKind.FLOW_STARTED_OR_CONTINUED or start.payload.get("continued"):
        raise ReplayError(f"{where}: the history does not start with the run's start "
                          "(a slice or a continued run cannot be replayed)")
    payload = start.payload
    if payload.get("mode") != "simulation" or payload.get("seed") is None:
        raise ReplayError(f"{where}: recorded in {payload.get('mode')} mode with no seed; "
                          "only simulation histories can be replayed")
    if payload.get("initial_attributes") or payload.get("timeout_s") is not None:
        raise ReplayError(f"{where}: started with initial Attributes or a Flow timeout, "
                          "which the replay does not reproduce yet")
    for event in run.events:
        reason = _UNSUPPORTED.get(event.kind) if isinstance(event.kind, EventKind) else None
        if reason is None and event.kind == EventKind.ATTEMPT_FAILED:
            cause = event.payload.get("reason")
            reason = f"an attempt {cause}" if cause in ("timeout", "crash") else None
        if reason is not None:
            raise ReplayError(f"{where}: event #{event.seq} is {reason}, which the replay "
                              "cannot reproduce")
    return start


def _definition(registry: Registry, flow_type: str) -> FlowDefinition | None:
    for definition in registry.definitions:
        if definition.flow_type == flow_type:
            return definition
    return None


def _missing_flow(run: RunTrace, start: Event) -> ReplayCheck:
    difference = Difference(Aspect.FLOW, None, None, None, None, start.seq, None,
                            run.flow_type, None)
    divergence = Divergence(start.seq, None, None, None, Aspect.FLOW, run.flow_type, None, None,
                            None)
    comparison = RunComparison(run, run, (), (difference,))
    return ReplayCheck(run.flow_id, run.run_id, False, divergence, comparison, History())


# ---------------------------------------------------------------------------- the replay


def _replay(run: RunTrace, start: Event, registry: Registry,
            definition: FlowDefinition) -> History:
    payload = start.payload
    epoch = datetime.fromtimestamp(start.time_ns / 1e9, tz=UTC)
    plan = FaultPlan.of(*_recorded_faults(run.events))
    with Engine(registry, seed=int(payload["seed"]), faults=plan, epoch=epoch) as engine:
        client = engine.client()
        client.start_flow(definition.flow, run.flow_id, _start_input(registry, definition,
                                                                      payload.get("input")))
        for publish in run.events:
            if publish.kind == EventKind.CHANNEL_EXTERNAL_PUBLISH:
                _run_to(engine, run.flow_id, publish.seq - 1)
                _publish(client, registry, definition, run.flow_id, publish)
        engine.run_until_idle()
        return engine.history(run.flow_id)


def _start_input(registry: Registry, definition: FlowDefinition, data: Any) -> Any:
    start = definition.start
    if start is None or data is None:
        return data
    return registry.codec_registry.from_json_ready(start.input_type, data,
                                                   operation="replay: start input")


def _run_to(engine: Engine, flow_id: str, seq: int) -> None:
    if len(engine.history(flow_id)) >= seq:
        return
    reached: Callable[[Event], bool] = lambda event: event.seq >= seq  # noqa: E731
    engine.run(until=reached)


def _publish(client: Any, registry: Registry, definition: FlowDefinition, flow_id: str,
             event: Event) -> None:
    for message in event.payload.get("messages") or ():
        name = str(message.get("channel"))
        channel = definition.channels.get(name)
        if channel is None:
            raise ReplayError(f"event #{event.seq} publishes to Channel {name!r}, which Flow "
                              f"{definition.flow_type!r} no longer declares")
        value = registry.codec_registry.from_json_ready(
            channel.value_type, message.get("value"), operation="replay: publish")
        client.publish(flow_id, channel, value)


def _recorded_faults(events: Sequence[Event]) -> list[FailAttempt | CancelExecution]:
    """The failures and cancellations a FaultPlan injected into the recorded run."""
    faults: list[FailAttempt | CancelExecution] = []
    last_kind: dict[str, str] = {}
    for event in events:
        execution_id = event.execution_id
        if event.kind == EventKind.ATTEMPT_FAILED and _injected(event):
            faults.append(FaultPlan.fail(event.step_type or "", event.method or "execute",
                                         event.attempt or 1, _error_like(event),
                                         execution_id=execution_id))
        elif (event.kind == EventKind.EXECUTION_CANCELED and execution_id
              and event.payload.get("by") == "fault" and execution_id in last_kind):
            faults.append(FaultPlan.cancel(execution_id, last_kind[execution_id]))
        if execution_id:
            last_kind[execution_id] = str(event.kind)
    return faults


def _injected(event: Event) -> bool:
    return event.payload.get("reason") == "fault"


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


# ---------------------------------------------------------------------------- the verdict


def _divergence(first: Difference, recorded: RunTrace,
                definition: FlowDefinition) -> Divergence:
    seq = first.seq_a if first.seq_a is not None else _nearest_seq(first, recorded)
    return Divergence(seq, first.execution_a, first.step_type, first.method, first.aspect,
                      first.a, first.b, first.execution_b,
                      _location(first, recorded, definition))


def _nearest_seq(first: Difference, recorded: RunTrace) -> int:
    """For a difference only the replay shows, the recorded run's last event (it ends there)."""
    return recorded.events[-1].seq if first.aspect is not Aspect.FLOW else 1


def _location(first: Difference, recorded: RunTrace,
              definition: FlowDefinition) -> SourceLocation | None:
    """The Step method that now decides differently: the parent's when the child is at stake."""
    step_type, method = first.step_type, first.method or "execute"
    if first.aspect in (Aspect.STEP, Aspect.INPUT) and first.execution_a is not None:
        parent = recorded.executions[first.execution_a].parent
        owner = recorded.executions.get(parent or "")
        if owner is not None:
            step_type, method = owner.step_type, "execute"
    found = definition.steps.get(step_type or "")
    if found is None:
        return None
    function = getattr(type(found.step), method, None)
    if function is None:
        return None
    return _source_of(function)


def _source_of(function: Any) -> SourceLocation | None:
    target = inspect.unwrap(function)
    try:
        file = inspect.getsourcefile(target) or inspect.getfile(target)
        _, line = inspect.getsourcelines(target)
    except (OSError, TypeError):
        return None
    return SourceLocation(file, line, getattr(target, "__qualname__", repr(target)))
