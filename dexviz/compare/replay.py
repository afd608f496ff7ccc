"""``replay_check``: re-run a recorded history against the Flow code as it is now.

The recorded run is re-simulated in a fresh engine driven by what the history recorded
(:mod:`dexviz.compare.replay_run`): its order of work, start input and start time, the failures
and cancellations a FaultPlan injected, and the client's Channel publishes. The order comes
from the recorded events, not the seed, so runs that shared an engine with other Flows replay
too. A replay that gives back exactly the recorded events is compatible at once; otherwise
every method's new result — the WaitFor's wait, the decision, its output, publications,
Attribute writes, timers, next Steps, failures — is compared with the recorded one, execution
by execution, aligned by lineage. Timing is not compared: a change that only moves time is
compatible. Where no work the current code has ready can produce the next recorded event, the
run diverges there too (aspect ``order``), unless a method's result differs earlier.

The history must come from a simulation (it carries its seed); runs that took RPCs, time
travel, timeouts or crashes are refused with a ``ReplayError`` naming what stops the replay.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from dexviz.analysis._diff_compare import Comparison
from dexviz.analysis._diff_fold import RunTrace, fold_trace
from dexviz.analysis.executions import select_run
from dexviz.analysis.run_diff import (
    METHOD_RESULT_ASPECTS,
    Aspect,
    Difference,
    RunComparison,
    compare_traces,
)
from dexviz.compare.recorded_order import OrderDivergence
from dexviz.compare.replay_run import ReplayError, replay_events
from dexviz.compare.run_sources import RunSource, load_history
from dexviz.engine.engine import as_registry
from dexviz.history import Event, EventKind, History
from dexviz.history.event import Payload
from dexviz.sdk import Flow, Registry
from dexviz.sdk.definitions import FlowDefinition

__all__ = ["Divergence", "ReplayCheck", "ReplayError", "SourceLocation", "replay_check"]

Flows = Registry | Flow[Any] | Sequence[Flow[Any]]
"""The current code: a Flow, a list of Flows, or a Registry."""

_UNSUPPORTED: dict[str, str] = {
    EventKind.RPC_EXECUTION_COMPLETED: "an RPC call",
    EventKind.TIME_TRAVEL_FORK: "a time travel",
    EventKind.RECOVERED: "an engine recovery",
}


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
        return (
            f"#{self.seq} {where}{method}: {self.aspect} differs: recorded "
            f"{recorded!r}, replayed {replayed!r}{at}"
        )


@dataclass(frozen=True)
class ReplayCheck:
    """The verdict of replaying one recorded run against the current code.

    ``compatible`` is True when every method gives the recorded result again; otherwise
    ``first_divergence`` says where the current code departs from the record. ``comparison``
    holds every difference (recorded run = side a, replay = side b); for a replay that gave
    back exactly the recorded events it is folded only when first read, and ``replayed``
    holds the recorded events themselves when their seq and time are the replay's too.
    """

    flow_id: str
    run_id: str
    compatible: bool
    first_divergence: Divergence | None
    recorded: tuple[Event, ...] = field(repr=False)
    replayed: History = field(repr=False)
    folded: RunComparison | None = field(default=None, repr=False, compare=False)

    @cached_property
    def comparison(self) -> RunComparison:
        """Every difference between the recorded run and its replay."""
        if self.folded is not None:
            return self.folded
        return _compare(fold_trace(self.run_id, self.recorded), self.replayed.events)

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
    chosen, events = select_run(history, run_id)
    start = _start_event(chosen, events)
    definition = _definition(registry, _flow_type(start))
    if definition is None:
        return _missing_flow(fold_trace(chosen, events), start)
    replayed = replay_events(events, start, registry, definition)
    flow_id = start.flow_id
    if replayed.order is None and _same_events(events, replayed.events):
        kept = _kept_replay(events, replayed.events)
        return ReplayCheck(flow_id, chosen, True, None, events, kept)
    recorded = fold_trace(chosen, events)
    comparison = _compare(recorded, replayed.events)
    divergence = _first_divergence(comparison.first, replayed.order, recorded, definition)
    return ReplayCheck(
        flow_id,
        chosen,
        divergence is None,
        divergence,
        events,
        History(replayed.events),
        comparison,
    )


def _compare(recorded: RunTrace, replayed: Sequence[Event]) -> RunComparison:
    chosen, events = select_run(History(replayed))
    return compare_traces(
        recorded, fold_trace(chosen, events), Comparison(METHOD_RESULT_ASPECTS, None)
    )


def _same_events(recorded: Sequence[Event], replayed: Sequence[Event]) -> bool:
    """Whether the replay gave back every recorded event (seq and time aside) as recorded.

    Payloads compare as plain values; the lazily built ones of the replay are built here.
    """
    if len(recorded) != len(replayed):
        return False
    for a, b in zip(recorded, replayed, strict=True):
        if a[2:9] != b[2:9]:  # kind, ids, Step type, method, attempt
            return False
        theirs = b.payload
        if isinstance(theirs, Payload):  # built here: compared as the dict it stands for
            theirs = theirs.value
        if a.payload != theirs:
            return False
    return True


def _kept_replay(recorded: tuple[Event, ...], replayed: Sequence[Event]) -> History:
    """The replay's History of a replay that gave back every recorded event.

    When each one has the recorded seq and time too, the two are equal event for event, and
    the recorded events are kept for both: a store check holds one copy per run, and the
    replay's payloads (which hold the values its engine made) are freed with the engine.
    """
    for a, b in zip(recorded, replayed, strict=True):
        if a[0] != b[0] or a[1] != b[1]:
            return History(replayed)
    return History(recorded)


def _flow_type(start: Event) -> str:
    spec = start.payload.get("flow")
    return str(spec.get("flow_type", "")) if isinstance(spec, dict) else ""


def _start_event(run_id: str, events: Sequence[Event]) -> Event:
    start = events[0]
    where = f"Flow {start.flow_id!r} run {run_id!r}"
    if start.kind != EventKind.FLOW_STARTED_OR_CONTINUED or start.payload.get("continued"):
        raise ReplayError(
            f"{where}: the history does not start with the run's start "
            "(a slice or a continued run cannot be replayed)"
        )
    payload = start.payload
    if payload.get("mode") != "simulation" or payload.get("seed") is None:
        raise ReplayError(
            f"{where}: recorded in {payload.get('mode')} mode with no seed; "
            "only simulation histories can be replayed"
        )
    if payload.get("initial_attributes") or payload.get("timeout_s") is not None:
        raise ReplayError(
            f"{where}: started with initial Attributes or a Flow timeout, "
            "which the replay does not reproduce yet"
        )
    for event in events:
        reason = _UNSUPPORTED.get(event.kind)
        if reason is None and event.kind == EventKind.ATTEMPT_FAILED:
            cause = event.payload.get("reason")
            reason = f"an attempt {cause}" if cause in ("timeout", "crash") else None
        if reason is not None:
            raise ReplayError(
                f"{where}: event #{event.seq} is {reason}, which the replay cannot reproduce"
            )
    return start


def _definition(registry: Registry, flow_type: str) -> FlowDefinition | None:
    for definition in registry.definitions:
        if definition.flow_type == flow_type:
            return definition
    return None


def _missing_flow(run: RunTrace, start: Event) -> ReplayCheck:
    difference = Difference(
        Aspect.FLOW, None, None, None, None, start.seq, None, run.flow_type, None
    )
    divergence = Divergence(
        start.seq, None, None, None, Aspect.FLOW, run.flow_type, None, None, None
    )
    comparison = RunComparison(run, run, (), (difference,))
    return ReplayCheck(
        run.flow_id, run.run_id, False, divergence, run.events, History(), comparison
    )


# ---------------------------------------------------------------------------- the verdict


def _first_divergence(
    first: Difference | None,
    order: OrderDivergence | None,
    recorded: RunTrace,
    definition: FlowDefinition,
) -> Divergence | None:
    """The earlier of the first method result that differs and the point the order diverged.

    A result that differs at the same recorded event as the order says more, so it wins ties.
    """
    found = None if first is None else _divergence(first, recorded, definition)
    if order is None or (found is not None and found.seq <= order.seq):
        return found
    location = _step_location(definition, order.step_type, order.method or "execute")
    return Divergence(
        order.seq,
        order.execution_id,
        order.step_type,
        order.method,
        Aspect.ORDER,
        order.recorded,
        order.replayed,
        None,
        location,
    )


def _divergence(first: Difference, recorded: RunTrace, definition: FlowDefinition) -> Divergence:
    seq = first.seq_a if first.seq_a is not None else _nearest_seq(first, recorded)
    return Divergence(
        seq,
        first.execution_a,
        first.step_type,
        first.method,
        first.aspect,
        first.a,
        first.b,
        first.execution_b,
        _location(first, recorded, definition),
    )


def _nearest_seq(first: Difference, recorded: RunTrace) -> int:
    """For a difference only the replay shows, the recorded run's last event (it ends there)."""
    return recorded.events[-1].seq if first.aspect is not Aspect.FLOW else 1


def _location(
    first: Difference, recorded: RunTrace, definition: FlowDefinition
) -> SourceLocation | None:
    """The Step method that now decides differently: the parent's when the child is at stake."""
    step_type, method = first.step_type, first.method or "execute"
    if first.aspect in (Aspect.STEP, Aspect.INPUT) and first.execution_a is not None:
        parent = recorded.executions[first.execution_a].parent
        owner = recorded.executions.get(parent or "")
        if owner is not None:
            step_type, method = owner.step_type, "execute"
    return _step_location(definition, step_type, method)


def _step_location(
    definition: FlowDefinition, step_type: str | None, method: str
) -> SourceLocation | None:
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
