"""SubFlows: child Flows started by a WaitFor's SubFlow conditions (R131-R135)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dexviz.engine.commit.decide import Decisions
from dexviz.engine.commit.waits import WaitManager
from dexviz.engine.core.state import Execution, FlowRun
from dexviz.engine.flows.starts import Starts
from dexviz.sdk.condition import SubFlowCondition
from dexviz.sdk.flow_options import StartFlowOptions, SubFlowOptions, SubFlowReusePolicy
from dexviz.sdk.results import FlowResult, FlowStatus
from dexviz.sdk.subflow import subflow_id

if TYPE_CHECKING:
    from dexviz.engine.core.kernel import Kernel


class SubFlows:
    """Starts children, reuses them per policy, and wakes parents when children close."""

    def __init__(
        self, kernel: Kernel, decisions: Decisions, waits: WaitManager, starts: Starts
    ) -> None:
        self._rt = kernel
        self._decisions = decisions
        self._waits = waits
        self._starts = starts
        self._parents: dict[str, list[tuple[FlowRun, Execution]]] = {}

    def start_children(self, run: FlowRun, ex: Execution) -> None:
        """Start (or attach to) the child of every SubFlow condition of ``ex``'s Wait."""
        assert ex.wait is not None
        ex.subflow_ids = []
        for index, condition in enumerate(ex.wait.subflows):
            child_id = subflow_id(run.flow_id, ex.execution_id, index)
            ex.subflow_ids.append(child_id)
            # Registered after the start: an ALWAYS_RESTART that terminates the old child must
            # not satisfy this wait with the old child's status (R134).
            self._start_or_reuse(child_id, condition)
            self._parents.setdefault(child_id, []).append((run, ex))

    def _start_or_reuse(self, child_id: str, condition: SubFlowCondition) -> None:
        rt = self._rt
        options = condition.options or SubFlowOptions()
        existing = rt.runs.get(child_id)
        if existing is not None:
            policy = options.reuse_policy
            closed_ok = existing.status is FlowStatus.COMPLETED
            running = existing.status is FlowStatus.RUNNING
            if policy is SubFlowReusePolicy.ATTACH or (
                running and policy is not SubFlowReusePolicy.ALWAYS_RESTART
            ):
                return
            if closed_ok and policy is SubFlowReusePolicy.RESTART_IF_PREVIOUS_EXITS_ABNORMALLY:
                return
            if running:
                self._decisions.close(existing, FlowStatus.TERMINATED)
            rt.previous_runs.setdefault(child_id, []).append(existing)
            del rt.runs[child_id]
        start = StartFlowOptions(
            timeout=options.timeout,
            timeout_policy=options.timeout_policy,
            start_delay=options.start_delay,
            retry_policy=options.retry_policy,
            config_override=options.config_override,
        )
        for attribute, instance, value in options.initial_attributes:
            start = (
                start.with_attribute(attribute, value)
                if instance is None
                else start.with_attribute(attribute, instance, value)
            )
        self._starts.start_flow(condition.flow, child_id, condition.input, start, generated=True)

    def is_done(self, ex: Execution, condition: SubFlowCondition) -> bool:
        """Whether the condition's child has reached any terminal status (R132)."""
        assert ex.wait is not None
        index = next(i for i, c in enumerate(ex.wait.subflows) if c is condition)
        if index >= len(ex.subflow_ids):
            return False
        child_id = ex.subflow_ids[index]
        # A child awaiting a Flow retry is still running for its parent (R135).
        return (
            child_id in self._rt.runs and self._rt.result(child_id).status is not FlowStatus.RUNNING
        )

    def child_closed(self, child: FlowRun) -> None:
        """Re-check every parent execution waiting on ``child``."""
        for run, ex in self._parents.pop(child.flow_id, []):
            self._waits.try_satisfy(run, ex)

    def result(self, ex: Execution, index: int) -> FlowResult:
        """The child's FlowResult (a RUNNING snapshot for an unfinished child, R133)."""
        if not 0 <= index < len(ex.subflow_ids):
            raise ValueError(f"{ex.execution_id}: no SubFlow condition at index {index}")
        return self._rt.result(ex.subflow_ids[index])

    def flow_id(self, ex: Execution, index: int) -> str:
        """The generated child Flow id of SubFlow condition ``index``."""
        if not 0 <= index < len(ex.subflow_ids):
            raise ValueError(f"{ex.execution_id}: no SubFlow condition at index {index}")
        return ex.subflow_ids[index]

    def attach_parent(self, child_id: str, run: FlowRun, ex: Execution) -> None:
        """Wake ``ex`` when ``child_id`` closes (a waiting parent resumed after a crash)."""
        self._parents.setdefault(child_id, []).append((run, ex))

    def start_child(self, child_id: str, condition: SubFlowCondition) -> None:
        """Start the child of a SubFlow condition whose parent is already waiting (recovery)."""
        self._start_or_reuse(child_id, condition)
