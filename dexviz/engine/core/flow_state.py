"""FlowState: a read-only snapshot of one Flow run, for users, tests and the debugger."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dexviz.engine.core.failure_info import StepMethodFailure
from dexviz.engine.core.state import FlowRun
from dexviz.sdk.results import FlowErrorType, FlowStatus, StepCompletion


@dataclass(frozen=True)
class ActiveExecution:
    """One active Step execution and the phase it is in."""

    execution_id: str
    step_type: str
    phase: str
    from_execution_id: str
    input: Any
    attempt: int
    reserved: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    last_failure_info: StepMethodFailure | None = None
    """The last failed attempt of this execution (Dex's "last failure info"), if any."""


@dataclass(frozen=True)
class FlowState:
    """What a Flow run holds right now.

    ``channels`` maps each Channel (physical name) to its queued values in queue order; messages
    reserved by an execution whose Execute has not committed are not queued, so they are listed
    under that execution's ``reserved`` instead.
    """

    flow_id: str
    run_id: str
    flow_type: str
    status: FlowStatus
    attributes: Mapping[str, Any]
    channels: Mapping[str, tuple[Any, ...]]
    active_executions: tuple[ActiveExecution, ...]
    outputs: tuple[StepCompletion, ...]
    graceful_requested: bool
    error_type: FlowErrorType | None = None
    error_message: str | None = None

    @classmethod
    def of(cls, run: FlowRun) -> FlowState:
        """Snapshot ``run``."""
        declared = list(run.definition.channels)
        names = declared + sorted(k for k in run.queues if k not in run.definition.channels)
        channels = {name: tuple(m.value for m in run.queues_view.get(name, ())) for name in names}
        active = tuple(
            ActiveExecution(
                e.execution_id,
                e.step_type,
                e.phase.value,
                e.from_execution_id,
                e.input,
                e.attempt,
                {k: tuple(m.value for m in ms) for k, ms in e.reserved.items()},
                e.last_failure,
            )
            for e in run.executions.values()
            if e.active and e.counted
        )
        return cls(
            run.flow_id,
            run.run_id,
            run.flow_type,
            run.status,
            dict(sorted(run.attributes.items())),
            channels,
            active,
            tuple(run.completions),
            run.graceful_requested,
            run.error_type,
            run.error_message,
        )

    @property
    def outputs_values(self) -> tuple[Any, ...]:
        """The raw output values in commit order."""
        return tuple(c.value for c in self.outputs)

    def __repr__(self) -> str:
        active = ", ".join(f"{a.execution_id}:{a.phase}" for a in self.active_executions)
        return (
            f"FlowState({self.flow_id!r}, {self.status.name}, active=[{active}], "
            f"channels={ {k: len(v) for k, v in self.channels.items()} })"
        )
