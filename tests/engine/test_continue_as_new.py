"""Continue-as-new is a real new run, and SubFlows survive it and resets (R13, R134; issue 16)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from dexviz import (
    Attribute,
    Channel,
    Context,
    Engine,
    EventKind,
    FlowConfig,
    FlowStatus,
    StartFlowOptions,
    Step,
    StepDecision,
    SubFlow,
    SubFlowOptions,
    SubFlowReusePolicy,
    Timer,
    TimeTravelOptions,
    TimeTravelType,
    Wait,
    go_to,
    graceful_complete,
)
from dexviz.analysis.executions import build_executions
from tests.engine.flows_live import (
    MODES,
    SOON,
    LFlow,
    engine_in,
    reach_kind,
    wait_until,
    waiting,
)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- 9: continue-as-new is a real new run -------------------------------------------------------

COUNT = Attribute("count", int)
INBOX = Channel("inbox", str)
SPARE = Channel("spare", str)


class Tally(Step[int]):
    """Waits for an inbox message (or an hour), adds it to ``count``; completes after ``n``."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.any_of(INBOX.for_one(), Timer.by_duration(timedelta(hours=1)))

    def execute(self, context: Context, n: int) -> StepDecision:
        COUNT.set(context, COUNT.get(context) + len(INBOX.results(context)))
        if n <= 1:
            return graceful_complete(COUNT.get(context))
        return go_to(Tally, n - 1)


def _tally_flow() -> Any:
    return LFlow("Tally", Tally(), (), [COUNT, INBOX, SPARE])


def test_trigger_continue_as_new_starts_a_new_run_that_carries_everything(mode: str) -> None:
    """R13 as corrected: a new run id that describe_flow sees; Attributes, pending messages and
    the waiting Step carried over; the history marks the new run continued."""
    flow = _tally_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        first = client.start_flow(flow, "c", 2)
        waiting(engine, "c", "Tally-1")
        client.publish("c", INBOX, "a")
        waiting(engine, "c", "Tally-2")
        client.publish("c", SPARE, "kept")
        client.trigger_continue_as_new("c")
        reach_kind(engine, "c", EventKind.FLOW_STARTED_OR_CONTINUED, None)
        assert wait_until(lambda: client.describe_flow("c").run_id != first)
        second = client.describe_flow("c").run_id
        assert client.get_attribute("c", COUNT) == 1
        assert [m.value for m in client.get_channel_messages("c", SPARE)] == ["kept"]
        client.publish("c", INBOX, "b")
        result = client.wait_for_flow("c", SOON)
        history = engine.history("c")
    assert result.single_output(int) == 2
    assert history.run_ids == (first, second)
    closed = [e for e in history if e.kind == EventKind.FLOW_CLOSED]
    assert [(e.run_id, e.payload["status"]) for e in closed] == [
        (first, "CONTINUED_AS_NEW"),
        (second, "COMPLETED"),
    ]
    started = [e for e in history if e.kind == EventKind.FLOW_STARTED_OR_CONTINUED]
    assert started[1].payload["continued"] is True
    assert started[1].payload["previous_run_id"] == first
    carried = [e.execution_id for e in history if e.run_id == second
               and e.kind == EventKind.STEP_EXECUTION_CREATED]
    assert carried[0] == "Tally-2"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_continue_as_new_threshold_is_transparent(seed: int) -> None:
    """R13's test: a threshold of 5 events and no threshold give the same outputs and
    Attributes; the thresholded Flow ran as several runs."""

    def run(threshold: int | None) -> Any:
        config = FlowConfig(continue_as_new_threshold=threshold) if threshold else None
        options = StartFlowOptions(config_override=config)
        engine = Engine([_tally_flow()], seed=seed)
        client = engine.client()
        client.start_flow(engine.registry.flows[0], "c", 4, options)
        client.publish("c", INBOX, *"wxyz")
        result = client.wait_for_flow("c")
        return result.outputs, client.get_attribute("c", COUNT), engine.history("c").run_ids

    plain, thresholded = run(None), run(5)
    assert plain[:2] == thresholded[:2] == ((4,), 4)
    assert len(plain[2]) == 1 and len(thresholded[2]) > 2


class AwaitChild(Step[int]):
    """Starts a child that waits for a message, and completes with the child's output."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(SubFlow.run(CHILD, n))

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(SubFlow.get_condition_results(context).single_output(int))


class ChildStep(Step[int]):
    """Waits for one inbox message, completes with ``n + 1``."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(INBOX.for_one())

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n + 1)


CHILD = LFlow("ChildFlow", ChildStep(), (), [INBOX])


def test_subflows_keep_running_and_reach_the_parent_across_continue_as_new(mode: str) -> None:
    parent = LFlow("ParentFlow", AwaitChild())
    with engine_in([parent, CHILD], mode) as engine:
        client = engine.client()
        first = client.start_flow(parent, "p", 41)
        waiting(engine, "p", "AwaitChild-1")
        child_id = "SubFlow:p-AwaitChild-1-0"
        waiting(engine, child_id, "ChildStep-1")
        client.trigger_continue_as_new("p")
        assert wait_until(lambda: client.describe_flow("p").run_id != first)
        client.publish(child_id, INBOX, "go")
        result = client.wait_for_flow("p", SOON)
        child_runs = engine.history(child_id).run_ids
    assert result.single_output(int) == 42
    assert len(child_runs) == 1  # the child was not restarted


class AwaitRestartedChild(AwaitChild):
    """Like AwaitChild, with SubFlowReusePolicy.ALWAYS_RESTART."""

    def wait_for(self, context: Context, n: int) -> Wait:
        options = SubFlowOptions(reuse_policy=SubFlowReusePolicy.ALWAYS_RESTART)
        return Wait.until(SubFlow.run(CHILD, n, options))


def test_always_restart_replaces_a_running_child_when_the_parent_is_reset(mode: str) -> None:
    """R134: after time travel to BEGINNING the parent's SubFlow restarts its running child, and
    the parent sees that new child run complete, not the old one's RUNNING status."""
    parent = LFlow("RestartParent", AwaitRestartedChild())
    with engine_in([parent, CHILD], mode) as engine:
        client = engine.client()
        client.start_flow(parent, "p", 1)
        child_id = "SubFlow:p-AwaitRestartedChild-1-0"
        waiting(engine, child_id, "ChildStep-1")
        old_child = client.describe_flow(child_id).run_id
        client.time_travel("p", TimeTravelOptions(TimeTravelType.BEGINNING))
        if mode == "simulation":
            engine.run_until_idle()
        assert wait_until(lambda: client.describe_flow(child_id).run_id != old_child)
        new_child = client.describe_flow(child_id).run_id
        assert wait_until(lambda: bool(engine.flow_state(child_id).active_executions))
        client.publish(child_id, INBOX, "go")
        result = client.wait_for_flow("p", SOON)
        found = client.search_flows("FlowType = 'ChildFlow'", 10).flows
        statuses = {r.run_id: r.status for r in found}
    assert result.single_output(int) == 2
    assert statuses == {old_child: FlowStatus.TERMINATED, new_child: FlowStatus.COMPLETED}


def test_a_completed_child_is_not_restarted_when_the_parent_is_reset(mode: str) -> None:
    """R134's default policy: a child that completed keeps its result across the reset."""
    parent = LFlow("KeepParent", AwaitChild())
    with engine_in([parent, CHILD], mode) as engine:
        client = engine.client()
        client.start_flow(parent, "p", 5)
        child_id = "SubFlow:p-AwaitChild-1-0"
        waiting(engine, child_id, "ChildStep-1")
        client.publish(child_id, INBOX, "go")
        assert client.wait_for_flow("p", SOON).single_output(int) == 6
        client.time_travel("p", TimeTravelOptions(TimeTravelType.BEGINNING))
        result = client.wait_for_flow("p", SOON)
        child_runs = engine.history(child_id).run_ids
    assert result.single_output(int) == 6
    assert len(child_runs) == 1


def test_views_show_runs_joined_by_continue_as_new_as_one_flow(mode: str) -> None:
    """Executions, the lineage graph and the timeline read the continued runs as one run."""
    flow = _tally_flow()
    with engine_in([flow], mode) as engine:
        client = engine.client()
        client.start_flow(flow, "c", 2)
        waiting(engine, "c", "Tally-1")
        client.publish("c", INBOX, "a")
        waiting(engine, "c", "Tally-2")
        client.trigger_continue_as_new("c")
        reach_kind(engine, "c", EventKind.FLOW_CLOSED)
        client.publish("c", INBOX, "b")
        client.wait_for_flow("c", SOON)
        history = engine.history("c")
    records = build_executions(history)
    assert len(history.run_ids) == 2 and records.run_id == history.run_ids[-1]
    assert [(r.execution_id, r.status.name) for r in records.values()] == [
        ("Tally-1", "COMPLETED"),
        ("Tally-2", "COMPLETED"),
    ]
    assert records.close is not None and records.close.status == "COMPLETED"
    assert records.start_ns == history[0].time_ns
