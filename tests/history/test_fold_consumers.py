"""The four folds built on dexviz.history.fold give the results they gave before it existed.

Recovery (``engine.core.recovery_fold``), time travel's fork (``engine.core.fork``), the state at an
event (``analysis.state``) and the execution tables (``analysis._execution_fold``) each fold a run's
events. ``tests/golden/fold/consumers.json`` holds a digest of what each fold returned, computed
by the folds as they were before they shared :class:`~dexviz.history.fold.HistoryFold`, on
recorded histories of time travel, continue-as-new, cancellation, Timers, PROCEED and recovery
routing, and on simulated ContractEditFlow runs. A Hypothesis property checks that the four agree
with each other on which executions are active, at every event of simulated runs.
Rewrite the digests only for an intended change: ``pytest --update-golden`` (or
``DEXVIZ_UPDATE_GOLDEN=1``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dexviz import (
    Channel,
    Context,
    Engine,
    Step,
    StepDecision,
    TimeTravelOptions,
    TimeTravelStepMethod,
    TimeTravelType,
    Wait,
    graceful_complete,
)
from dexviz.analysis import _execution_fold, state
from dexviz.analysis.executions import select_run
from dexviz.engine.core import fork, recovery_fold
from dexviz.history import EventKind, History
from tests.analysis.runs import contract_edit_run
from tests.engine.flows_a import NO_RETRY, AdHocFlow

HISTORIES = Path(__file__).resolve().parent.parent / "fixtures" / "histories"
GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "fold" / "consumers.json"
SIMULATED = {f"contract_edit_seed{seed}_reviewers{n}": (seed, n) for seed in (0, 1) for n in (3, 8)}
RESUMED = "time_travel_resumes_reserved_messages"
INBOX = Channel("fold_inbox", str)


class TakeThenFail(Step[int]):
    """Takes one message, then fails its Execute until the third run."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def get_step_options(self) -> Any:
        return NO_RETRY

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        if context.run_id not in self.runs:
            self.runs.append(context.run_id)
        if len(self.runs) < 3:
            raise RuntimeError("not yet")
        return graceful_complete(",".join(INBOX.results(context)))


def resumed_with_messages_run() -> History:
    """A failed Execute that took a message, time-travelled to twice.

    Both forks resume the execution satisfied (``resumed_phase``) holding the message
    (``reserved``): the second takes its body from the first run, which published it.
    """
    flow = AdHocFlow("FoldResumed", TakeThenFail(), [], [INBOX])
    engine = Engine([flow], seed=0)
    client = engine.client()
    client.start_flow(flow, "flow-1", 1)
    client.publish("flow-1", INBOX, "m")
    engine.run()
    again = TimeTravelOptions(
        TimeTravelType.STEP_EXECUTION_ID, step_execution_id="TakeThenFail-1",
        step_method=TimeTravelStepMethod.EXECUTE,
    )
    for _ in range(2):
        client.time_travel("flow-1", again)
        engine.run()
    return engine.history("flow-1")


def load(name: str) -> History:
    """A recorded history of ``tests/fixtures/histories`` or a simulated run."""
    if name in SIMULATED:
        return contract_edit_run(*SIMULATED[name])
    if name == RESUMED:
        return resumed_with_messages_run()
    return History.from_jsonl((HISTORIES / f"{name}.jsonl").read_text(encoding="utf-8"))


def names() -> list[str]:
    """Every history the digests cover."""
    return sorted([p.stem for p in HISTORIES.glob("*.jsonl")] + [*SIMULATED, RESUMED])


# -- what each consumer returns, as text (record field order does not count) --------------------


def _guard(compute: Callable[[], list[str]]) -> list[str]:
    try:
        return compute()
    except Exception as error:  # noqa: BLE001 - a fold's error is part of its behaviour
        return [f"!{type(error).__name__}: {error}"]


def recovery_view(module: ModuleType, history: History) -> list[str]:
    """Every run folded as recovery folds them, chained through the messages they leave."""

    def compute() -> list[str]:
        out: list[str] = []
        known: dict[str, Any] = {}
        previous = None
        for run_events in module.split_runs(list(history)):
            fold = previous = module.fold_run(run_events, known, previous)
            known.update(fold.held)
            for queue in fold.queues.values():
                known.update((m.message_id, m) for m in queue)
            skip = ("executions", "previous")
            fields = [(f.name, getattr(fold, f.name)) for f in dataclasses.fields(fold)]
            out.append(repr([(k, v) for k, v in fields if k not in skip]))
            out.append(repr(fold.previous.run_id if fold.previous else None))
            out.append(repr([_execution_fields(e) for e in fold.executions.values()]))
        return out

    return _guard(compute)


def _execution_fields(ex: Any) -> tuple[Any, ...]:
    return (
        ex.execution_id, ex.step_type, ex.input, ex.from_execution_id, ex.phase, ex.wait,
        ex.reserved, ex.wait_for_failed, ex.method, ex.attempt, ex.attempt_open,
        ex.first_started_ns, ex.retry_at_ns, ex.wait_registered_ns, ex.timers,
        ex.satisfied_conditions, ex.locals, ex.recovery_error,
    )


def fork_view(module: ModuleType, history: History) -> list[str]:
    """After every event of every run: the active executions a fork there resumes."""

    def compute() -> list[str]:
        out: list[str] = []
        for run_events in recovery_fold.split_runs(list(history)):
            executions: dict[str, Any] = {}
            for event in run_events:
                module.fold_execution(executions, event)
                out.append(repr([
                    (f.execution_id, f.step_type, f.input, f.from_execution_id, f.phase, f.wait,
                     f.timers, f.reserved, f.wait_for_failed)
                    for f in executions.values() if f.phase not in ("done", "canceled")
                ]))
        return out

    return _guard(compute)


def state_view(module: ModuleType, history: History) -> list[str]:
    """The state after every event, forward and then stepping back."""

    def compute() -> list[str]:
        folder = module.StateFolder(history, checkpoint_every=16)
        out = []
        for index in [*range(len(history)), *range(len(history) - 1, -1, -5)]:
            v = folder.state_at(index)
            out.append(repr((
                v.index, v.seq, v.time_ns, v.run_id, dict(v.channels), dict(v.reserved),
                dict(v.attributes), v.active, v.closed, v.completion_requested,
            )))
        return out

    return _guard(compute)


def executions_view(module: ModuleType, history: History) -> list[str]:
    """The execution records of every run, without what records source lines (the Flow spec,
    stack traces), so moving code does not change a digest."""

    def compute() -> list[str]:
        out = []
        for run_id in history.run_ids:
            chosen, events = select_run(history, run_id)
            run = module.fold_run(chosen, events)
            out.append(repr((
                run.flow_id, run.run_id, run.flow_type, run.start_ns, run.end_ns, run.close,
                sorted(run.spec), [_without_traces(e) for e in run.values()],
            )))
        return out

    return _guard(compute)


def _without_traces(execution: Any) -> Any:
    attempts = tuple(
        dataclasses.replace(a, stack_trace=bool(a.stack_trace)) for a in execution.attempts
    )
    return dataclasses.replace(execution, attempts=attempts)


VIEWS: dict[str, tuple[Callable[[ModuleType, History], list[str]], ModuleType]] = {
    "recovery": (recovery_view, recovery_fold),
    "fork": (fork_view, fork),
    "state": (state_view, state),
    "executions": (executions_view, _execution_fold),
}


def digest(lines: list[str]) -> str:
    """sha256 of the view's lines."""
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


# -- the tests ----------------------------------------------------------------------------------


def test_the_digests_cover_every_history_and_consumer() -> None:
    goldens = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert sorted(goldens) == names()
    assert all(sorted(entry) == sorted(VIEWS) for entry in goldens.values())


@pytest.mark.parametrize("consumer", sorted(VIEWS))
@pytest.mark.parametrize("name", names())
def test_each_consumer_folds_as_before(name: str, consumer: str, update_golden: bool) -> None:
    view, module = VIEWS[consumer]
    lines = view(module, load(name))
    assert not lines[0].startswith("!"), lines[0]
    goldens = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
    if update_golden or os.environ.get("DEXVIZ_UPDATE_GOLDEN") == "1":
        goldens.setdefault(name, {})[consumer] = digest(lines)
        GOLDEN.write_text(json.dumps(goldens, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert goldens[name][consumer] == digest(lines), f"{consumer} folds {name} differently"


def _active_by_consumer(history: History, index: int) -> dict[str, set[str]]:
    events = list(history)[: index + 1]
    run = recovery_fold.fold_run(events)
    executions: dict[str, fork.FoldedExecution] = {}
    for event in events:
        fork.fold_execution(executions, event)
    records = _execution_fold.fold_run(events[0].run_id, tuple(events))
    return {
        "recovery": {e.execution_id for e in run.executions.values() if e.active},
        "fork": {e.execution_id for e in executions.values() if e.active},
        "state": {a.execution_id for a in state.state_at(history, index).active},
        "executions": {e.execution_id for e in records.values() if e.finished_ns is None},
    }


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16), reviewers=st.integers(1, 3), step=st.integers(1, 9))
def test_the_consumers_agree_on_the_active_executions(seed: int, reviewers: int, step: int) -> None:
    history = contract_edit_run(seed, reviewers)
    closed = next(i for i, e in enumerate(history) if e.kind == EventKind.FLOW_CLOSED)
    for index in range(0, closed, step):
        active = _active_by_consumer(history, index)
        assert len({frozenset(ids) for ids in active.values()}) == 1, (index, active)
