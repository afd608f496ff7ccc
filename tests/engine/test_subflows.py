"""SubFlows in both modes: child ids, any_of and all_of, results, independence, options and reuse
(engine-semantics R131-R135)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from dexviz import (
    Attribute,
    Channel,
    Context,
    FlowErrorType,
    FlowResult,
    FlowStatus,
    FlowTimeoutPolicy,
    StepDecision,
    StopFlowOptions,
    SubFlow,
    SubFlowOptions,
    SubFlowReusePolicy,
    TimeTravelOptions,
    TimeTravelType,
    Wait,
    force_fail,
    graceful_complete,
)
from dexviz import Step as DexStep
from tests.engine.flows_live import (
    MODES,
    NO_RETRY,
    SOON,
    LFlow,
    engine_in,
    retries,
    waiting,
)

RELEASE = Channel("release", str)
SEED = Attribute("seed", int)


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Work(DexStep[int]):
    """A child's start Step: -1 waits for ``release``, 13 force-fails, others complete at once.

    ``failures`` makes the first that many runs fail (for Flow retries and reuse policies).
    """

    def __init__(self) -> None:
        self.runs = 0
        self.failures = 0

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.until(RELEASE.for_one()) if n == -1 else Wait.skip_immediately()

    def execute(self, context: Context, n: int) -> StepDecision:
        self.runs += 1
        if n == 13:
            return force_fail("unlucky 13")
        if self.runs <= self.failures:
            return force_fail(f"unlucky run {self.runs}")
        return graceful_complete(n * 10 + SEED.get(context))


def child_flow(flow_type: str = "Child") -> tuple[LFlow, Work]:
    work = Work()
    return LFlow(flow_type, work, schema=[RELEASE, SEED]), work


class Parent(DexStep[str]):
    """Waits on SubFlow conditions built by ``plan``; Execute records what it read."""

    def __init__(self, plan: Any) -> None:
        self.plan = plan
        self.seen: list[tuple[list[FlowResult], list[str]]] = []
        self.client: Any = None
        self.stop_losers = False

    def get_step_options(self) -> Any:
        return NO_RETRY

    def wait_for(self, context: Context, kind: str) -> Wait:
        return self.plan(kind)  # type: ignore[no-any-return]

    def execute(self, context: Context, kind: str) -> StepDecision:
        count = int(kind.split(":")[1]) if ":" in kind else 2
        results = [SubFlow.get_condition_results(context, i) for i in range(count)]
        ids = [SubFlow.get_flow_id(context, i) for i in range(count)]
        self.seen.append((results, ids))
        if self.stop_losers:
            for result, child_id in zip(results, ids, strict=True):
                if result.status is FlowStatus.RUNNING:
                    self.client.stop_flow(child_id)
        return graceful_complete([r.status.name for r in results])


def family(plan: Any) -> tuple[LFlow, LFlow, Parent, Work]:
    child, work = child_flow()
    parent = Parent(lambda kind: plan(child, kind))
    return LFlow("Parent", parent), child, parent, work


def any_plan(child: LFlow, kind: str) -> Wait:
    return Wait.any_of(SubFlow.run(child, 1), SubFlow.run(child, -1))


def all_plan(child: LFlow, kind: str) -> Wait:
    return Wait.all_of(SubFlow.run(child, 2), SubFlow.run(child, 13))


def test_r131_r133_any_of_reports_the_winner_and_a_running_snapshot_of_the_loser(
    mode: str,
) -> None:
    parent_flow, child, parent, _ = family(any_plan)
    with engine_in([parent_flow, child], mode) as engine:
        client = engine.client()
        client.start_flow(parent_flow, "p1", "any")
        result = client.wait_for_flow("p1", SOON)
        loser = "SubFlow:p1-Parent-1-1"
        assert client.describe_flow(loser).status is FlowStatus.RUNNING  # R133
        waiting(engine, loser, "Work-1")
        client.publish(loser, RELEASE, "go")
        late = client.wait_for_flow(loser, SOON)
    results, ids = parent.seen[0]
    assert ids == ["SubFlow:p1-Parent-1-0", "SubFlow:p1-Parent-1-1"]
    assert results[0].status is FlowStatus.COMPLETED
    assert results[0].single_output(int) == 10
    assert results[1] == FlowResult(FlowStatus.RUNNING)
    assert result.single_output(list) == ["COMPLETED", "RUNNING"]
    assert late.single_output(int) == -10


def test_r132_all_of_waits_for_every_child_and_a_failed_child_counts(mode: str) -> None:
    parent_flow, child, parent, _ = family(all_plan)
    with engine_in([parent_flow, child], mode) as engine:
        client = engine.client()
        client.start_flow(parent_flow, "p2", "all")
        result = client.wait_for_flow("p2", SOON)
        children = [client.describe_flow(f"SubFlow:p2-Parent-1-{i}") for i in range(2)]
    results, ids = parent.seen[0]
    assert ids == ["SubFlow:p2-Parent-1-0", "SubFlow:p2-Parent-1-1"]
    assert results[0].single_output(int) == 20
    assert (results[1].status, results[1].error_type, results[1].error_message) == (
        FlowStatus.FAILED,
        FlowErrorType.STEP_DECISION_FAILED,
        "unlucky 13",
    )
    assert result.single_output(list) == ["COMPLETED", "FAILED"]
    assert [(c.flow_type, c.status) for c in children] == [
        ("Child", FlowStatus.COMPLETED),
        ("Child", FlowStatus.FAILED),
    ]


def blocking_plan(child: LFlow, kind: str) -> Wait:
    return Wait.all_of(SubFlow.run(child, -1), SubFlow.run(child, -1))


def test_r133_stopping_the_parent_leaves_its_children_running(mode: str) -> None:
    parent_flow, child, _, _ = family(blocking_plan)
    with engine_in([parent_flow, child], mode) as engine:
        client = engine.client()
        client.start_flow(parent_flow, "p3", "all")
        waiting(engine, "p3", "Parent-1")
        client.stop_flow("p3")
        assert client.wait_for_flow("p3", SOON).status is FlowStatus.CANCELED
        first, second = "SubFlow:p3-Parent-1-0", "SubFlow:p3-Parent-1-1"
        assert client.describe_flow(first).status is FlowStatus.RUNNING
        client.stop_flow(second, StopFlowOptions())  # a child is addressed by its generated id
        assert client.wait_for_flow(second, SOON).status is FlowStatus.CANCELED
        assert client.describe_flow(first).status is FlowStatus.RUNNING


def test_r133_execute_may_stop_the_losers_through_the_client(mode: str) -> None:
    parent_flow, child, parent, _ = family(any_plan)
    with engine_in([parent_flow, child], mode) as engine:
        client = engine.client()
        parent.client, parent.stop_losers = client, True
        client.start_flow(parent_flow, "p4", "any")
        assert client.wait_for_flow("p4", SOON).status is FlowStatus.COMPLETED
        loser = client.wait_for_flow("SubFlow:p4-Parent-1-1", SOON)
    assert loser.status is FlowStatus.CANCELED


def test_r131_subflow_results_are_read_by_index_only(mode: str) -> None:
    parent_flow, child, _, _ = family(any_plan)
    with engine_in([parent_flow, child], mode) as engine:
        client = engine.client()
        client.start_flow(parent_flow, "p5", "any:3")  # Execute asks for a third result
        result = client.wait_for_flow("p5", SOON)
    assert result.status is FlowStatus.FAILED
    assert result.error_type is FlowErrorType.WORKER_API_FAILED
    assert "no SubFlow condition at index 2" in (result.error_message or "")


def options_plan(options: SubFlowOptions, input: int = 1) -> Any:
    return lambda child, kind: Wait.until(SubFlow.run(child, input, options))


def test_r135_subflow_options_write_the_childs_initial_attributes(mode: str) -> None:
    parent_flow, child, parent, _ = family(options_plan(SubFlowOptions().with_attribute(SEED, 5)))
    with engine_in([parent_flow, child], mode) as engine:
        client = engine.client()
        client.start_flow(parent_flow, "p6", "one:1")
        client.wait_for_flow("p6", SOON)
        assert client.get_attribute("SubFlow:p6-Parent-1-0", SEED) == 5
    assert parent.seen[0][0][0].single_output(int) == 15


def test_r135_a_retried_child_reports_only_after_its_final_attempt(mode: str) -> None:
    options = SubFlowOptions(retry_policy=retries(3))
    parent_flow, child, parent, work = family(options_plan(options))
    work.failures = 2
    with engine_in([parent_flow, child], mode) as engine:
        client = engine.client()
        client.start_flow(parent_flow, "p7", "one:1")
        result = client.wait_for_flow("p7", SOON)
        child_runs = engine.history("SubFlow:p7-Parent-1-0").run_ids
    assert result.single_output(list) == ["COMPLETED"]
    assert parent.seen[0][0][0].single_output(int) == 10
    assert len(child_runs) == 3


def test_r135_a_child_whose_cancel_timeout_fires_is_canceled(mode: str) -> None:
    options = SubFlowOptions(
        timeout=timedelta(seconds=1), timeout_policy=FlowTimeoutPolicy.CANCEL
    )
    parent_flow, child, parent, _ = family(options_plan(options, input=-1))
    with engine_in([parent_flow, child], mode) as engine:
        client = engine.client()
        client.start_flow(parent_flow, "p8", "one:1")
        result = client.wait_for_flow("p8", SOON)
    assert result.single_output(list) == ["CANCELED"]
    assert parent.seen[0][0][0].error_type is None


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (SubFlowReusePolicy.RESTART_IF_PREVIOUS_EXITS_ABNORMALLY, "COMPLETED"),
        (SubFlowReusePolicy.ATTACH, "FAILED"),
    ],
)
def test_r134_reuse_policy_decides_about_a_failed_child_after_time_travel(
    mode: str, policy: SubFlowReusePolicy, expected: str
) -> None:
    parent_flow, child, _, work = family(options_plan(SubFlowOptions(reuse_policy=policy)))
    work.failures = 1
    with engine_in([parent_flow, child], mode) as engine:
        client = engine.client()
        client.start_flow(parent_flow, "p9", "one:1")
        assert client.wait_for_flow("p9", SOON).single_output(list) == ["FAILED"]
        client.time_travel("p9", TimeTravelOptions(TimeTravelType.BEGINNING))
        result = client.wait_for_flow("p9", SOON)
        child_runs = engine.history("SubFlow:p9-Parent-1-0").run_ids
    assert result.single_output(list) == [expected]
    assert len(child_runs) == (2 if expected == "COMPLETED" else 1)


def test_r131_a_subflow_of_an_unregistered_flow_fails_the_parent_clearly(mode: str) -> None:
    stranger, _ = child_flow("Stranger")
    parent = Parent(lambda kind: Wait.until(SubFlow.run(stranger, 1)))
    parent_flow = LFlow("Parent", parent)
    with engine_in([parent_flow], mode) as engine:
        client = engine.client()
        client.start_flow(parent_flow, "p", "one:1")
        result = client.wait_for_flow("p", timedelta(seconds=1))
    assert result.status is FlowStatus.FAILED
    assert "Stranger" in (result.error_message or "")


def test_subflow_children_appear_in_the_engine(mode: str) -> None:
    parent_flow, child, _, _ = family(all_plan)
    with engine_in([parent_flow, child], mode) as engine:
        client = engine.client()
        client.start_flow(parent_flow, "p", "all")
        client.wait_for_flow("p", SOON)
        ids = engine.flow_ids()
    assert set(ids) == {"p", "SubFlow:p-Parent-1-0", "SubFlow:p-Parent-1-1"}
