"""Crash-and-resume harness: run a scenario, crash after commit k, resume from the store.

A scenario is a list of actions on an engine (start a Flow, publish, call an RPC, run until
idle). Each action that commits does so in exactly one engine commit, so an action cut short
by the crash has committed: it is not repeated after recovery (a client that saw no reply would
have to decide that itself). ``run_until_idle`` is repeated: it commits nothing by itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dexviz import Engine, FaultPlan, Flow, FlowState, History, MemoryStore, SQLiteStore
from dexviz.engine import EngineCrashed
from dexviz.engine.core.recovery_fold import fold_run, split_runs
from dexviz.history import EventKind
from dexviz.sdk.codec import to_json_ready

Action = Callable[[Engine], Any]


def settle(engine: Engine) -> None:
    """The action that runs the engine until nothing more can happen."""
    engine.run_until_idle()


@dataclass
class Outcome:
    """What a scenario ends with, per Flow id, in a comparable form."""

    results: dict[str, tuple[str, Any]] = field(default_factory=dict)
    states: dict[str, Any] = field(default_factory=dict)


@dataclass
class Scenario:
    """Flows (built fresh per engine), actions, a seed, and what of an output is compared."""

    name: str
    flows: Callable[[], Sequence[Flow[Any]]]
    actions: Callable[[Sequence[Flow[Any]]], list[Action]]
    seed: int = 0
    normalize: Callable[[Any], Any] = to_json_ready


def outcome(engine: Engine, scenario: Scenario) -> Outcome:
    """Status and outputs of every Flow id, and what each run holds (ignoring attempt counts)."""
    found = Outcome()
    for flow_id in engine.flow_ids():
        result = engine.result(flow_id)
        found.results[flow_id] = (result.status.name, scenario.normalize(list(result.outputs)))
        found.states[flow_id] = comparable(engine.flow_state(flow_id))
    return found


def comparable(state: FlowState) -> Any:
    """A FlowState without what a re-run legitimately changes (attempt numbers, run ids)."""
    return (
        state.status.name,
        to_json_ready(dict(state.attributes)),
        to_json_ready({k: list(v) for k, v in state.channels.items()}),
        sorted((a.execution_id, _phase(a)) for a in state.active_executions),
    )


def _phase(active: Any) -> str:
    """A method parked on a lock before its first attempt records nothing: it is rebuilt as
    queued (it takes its locks again when it runs), so both read as not started."""
    if active.phase in ("wait_for", "execute") and active.attempt == 0 and not active.reserved:
        return "queued"
    return str(active.phase)


def store_for(kind: str, directory: Path, k: int) -> Any:
    """A fresh store of ``kind`` ("memory" or "sqlite")."""
    if kind == "memory":
        return MemoryStore()
    return SQLiteStore(directory / f"crash-{k}.db", durability="normal")


def baseline(scenario: Scenario, store: Any = None) -> tuple[Engine, int]:
    """The scenario without a crash: its engine and how many commits it made."""
    flows = scenario.flows()
    plan = FaultPlan()
    engine = Engine(list(flows), seed=scenario.seed, store=store, faults=plan)
    plan.crash_after = 10**9  # counts commits without ever crashing
    for action in scenario.actions(flows):
        action(engine)
    return engine, plan.commits


@dataclass
class Crashed:
    """The state at the crash, and the engine that resumed from the store afterwards."""

    at_crash: dict[str, FlowState]
    resumed: Engine
    store: Any


def crash_and_resume(
    scenario: Scenario, k: int, store: Any, watch: Callable[[Engine], None] | None = None
) -> Crashed:
    """Run the scenario, crash right after commit ``k``, resume, and finish the actions."""
    flows = scenario.flows()
    plan = FaultPlan.of(FaultPlan.crash_after_commit(k))
    engine = Engine(list(flows), seed=scenario.seed, store=store, faults=plan)
    if watch is not None:
        watch(engine)
    actions = scenario.actions(flows)
    done = 0
    try:
        for action in actions:
            action(engine)
            done += 1
    except EngineCrashed:
        if actions[done] is not settle:
            done += 1  # a committing action cut short by the crash has committed
    else:
        raise AssertionError(f"{scenario.name}: no crash after commit {k}")
    at_crash = {f: FlowState.of(r) for f, r in engine._rt.runs.items()}
    reopened = store if isinstance(store, MemoryStore) else SQLiteStore(store.path)
    resumed = Engine(list(flows), seed=scenario.seed, store=reopened)
    if watch is not None:
        watch(resumed)
    rebuilt = {f: resumed.flow_state(f) for f in resumed.flow_ids()}
    assert at_crash.keys() <= rebuilt.keys()  # recovery may start a child the crash cut off
    for flow_id, state in at_crash.items():
        assert comparable(rebuilt[flow_id]) == comparable(state), (scenario.name, k, flow_id)
        assert rebuilt[flow_id].outputs == state.outputs or to_json_ready(
            rebuilt[flow_id].outputs_values
        ) == to_json_ready(state.outputs_values)
    for action in actions[done:]:
        action(resumed)
    settle(resumed)
    return Crashed(at_crash, resumed, reopened)


def deliveries_ok(history: History) -> list[str]:
    """Problems with message delivery: a message delivered twice, or lost.

    A message is delivered when the Execute of the execution that consumed it commits. Every
    published message must end delivered once, still queued, reserved by an active execution,
    deleted, or left behind by a closed run.
    """
    problems: list[str] = []
    for run_events in split_runs(list(history)):
        fold = fold_run(run_events)
        delivered, held, deleted = _deliveries(run_events)
        queued = {m.message_id for q in fold.queues.values() for m in q}
        for event in run_events:
            if event.kind != EventKind.MESSAGE_PUBLISHED:
                continue
            message_id = event.payload["message_id"]
            times = delivered.get(message_id, 0)
            if times > 1:
                problems.append(f"{message_id} delivered {times} times")
            accounted = message_id in queued or message_id in held or message_id in deleted
            if times == 0 and not accounted and fold.is_open:
                problems.append(f"{message_id} lost")
    return problems


def _deliveries(events: list[Any]) -> tuple[dict[str, int], set[str], set[str]]:
    """Per message id, how often a committed Execute consumed it; what is held; what deleted."""
    delivered: dict[str, int] = {}
    consumed_by: dict[str, str] = {}
    deleted: set[str] = set()
    for event in events:
        payload = event.payload
        if event.kind == EventKind.MESSAGE_CONSUMED:
            consumed_by[payload["message_id"]] = event.execution_id or ""
        elif event.kind == EventKind.MESSAGE_RETURNED:
            consumed_by.pop(payload["message_id"], None)
        elif event.kind == EventKind.STEP_EXECUTE_COMPLETED:
            for message_id in [m for m, c in consumed_by.items() if c == event.execution_id]:
                delivered[message_id] = delivered.get(message_id, 0) + 1
                del consumed_by[message_id]
        deleted.update(payload.get("deleted_messages", ()))
    return delivered, set(consumed_by), deleted
