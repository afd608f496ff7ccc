"""Flow timeouts: the durable deadline with the FAIL, CANCEL and HANDLER policies (R136-R139)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dexviz.engine.commit.decide import Decisions
from dexviz.engine.core.scheduler import TimerHandle
from dexviz.engine.core.state import Execution, FlowRun
from dexviz.engine.core.units import FlowTimeout, Unit
from dexviz.sdk.decision import StepDecision
from dexviz.sdk.definitions import StepDefinition
from dexviz.sdk.flow import Flow
from dexviz.sdk.flow_options import (
    FlowTimeoutHandlerOptions,
    FlowTimeoutPolicy,
    StartFlowOptions,
    resolve_timeout_policy,
)
from dexviz.sdk.options import StepOptions
from dexviz.sdk.results import FlowErrorType, FlowStatus
from dexviz.sdk.step import Step

if TYPE_CHECKING:
    from dexviz.engine.core.kernel import Kernel

TIMEOUT_STEP_TYPE = "sys:timeout_handler"


class _TimeoutHandlerStep(Step[None]):
    """Runs the Flow's sync ``handle_timeout`` with Execute semantics."""

    def __init__(self, flow: Flow[Any]) -> None:
        self._flow = flow

    def get_step_type(self) -> str:
        return TIMEOUT_STEP_TYPE

    def execute(self, context: Any, input: None) -> StepDecision:
        del input
        return self._flow.handle_timeout(context)


class _AsyncTimeoutHandlerStep(_TimeoutHandlerStep):
    """Runs the Flow's coroutine ``handle_timeout``."""

    async def execute(self, context: Any, input: None) -> StepDecision:  # type: ignore[override]
        del input
        return await self._flow.handle_timeout(context)  # type: ignore[misc, no-any-return]


def handler_options(options: FlowTimeoutHandlerOptions | None) -> StepOptions:
    """The timeout handler runs with Execute semantics: map its options onto StepOptions (R138)."""
    if options is None:
        return StepOptions()
    return StepOptions(
        execute_method_timeout=options.method_timeout,
        heartbeat_timeout=options.heartbeat_timeout,
        execute_retry=options.retry,
        execute_durability=options.durability,
        execute_lock_attributes=options.lock_attributes,
        execute_load_attribute_maps=options.load_attribute_maps,
        execute_load_attribute_map_instances=options.load_attribute_map_instances,
        execute_load_channels=options.load_channels,
        execute_load_channel_maps=options.load_channel_maps,
        execute_load_channel_map_instances=options.load_channel_map_instances,
        execute_failure_proceed_to=options.failure_proceed_to,
        execute_failure_options=options.failure_options,
    )


class FlowTimeouts:
    """Schedules each run's Flow timeout and applies its policy when it fires."""

    def __init__(self, kernel: Kernel, decisions: Decisions) -> None:
        self._rt = kernel
        self._decisions = decisions
        self._timers: dict[str, TimerHandle] = {}
        self._policies: dict[str, FlowTimeoutPolicy] = {}

    def start(self, run: FlowRun, options: StartFlowOptions) -> dict[str, Any]:
        """Resolve the policy, schedule the deadline, and return the start payload's fields."""
        timeout = options.timeout
        if timeout is None or timeout.total_seconds() <= 0:
            resolve_timeout_policy(
                timeout,
                options.timeout_policy,
                run.definition.has_timeout_handler,
                flow_type=run.flow_type,
            )
            return {"timeout_s": None, "timeout_policy": None}
        policy = resolve_timeout_policy(
            timeout,
            options.timeout_policy,
            run.definition.has_timeout_handler,
            flow_type=run.flow_type,
        )
        self._policies[run.run_id] = policy
        due = self._rt.now() + int(timeout.total_seconds() * 1e9)
        self._timers[run.run_id] = self._rt.call_at(due, FlowTimeout.of(self._rt, run, None))
        return {"timeout_s": timeout.total_seconds(), "timeout_policy": policy.name}

    def run_timeout(self, unit: Unit) -> None:
        """A FlowTimeout unit: see :meth:`fire`."""
        self.fire(unit[1])

    def fire(self, run: FlowRun) -> bool:
        """Apply the policy now (the deadline passed, or its timer was skipped, R130)."""
        handle = self._timers.pop(run.run_id, None)
        if handle is None or not run.is_open:
            return False
        handle.cancel()
        policy = self._policies.get(run.run_id, FlowTimeoutPolicy.FAIL)
        decisions = self._decisions
        if policy is FlowTimeoutPolicy.CANCEL:
            decisions.close(run, FlowStatus.CANCELED)
        elif policy is FlowTimeoutPolicy.HANDLER:
            self._run_handler(run)
        else:
            options = run.start_options
            configured = options.timeout if options is not None else None
            seconds = (
                configured.total_seconds()
                if configured
                else (self._rt.now() - run.started_ns) / 1e9
            )
            decisions.close(
                run,
                FlowStatus.FAILED,
                FlowErrorType.FLOW_TIMEOUT,
                f"Flow timed out after {seconds:g} seconds",
            )
        return True

    def _run_handler(self, run: FlowRun) -> None:
        self._decisions.announce(run, self.handler_execution(run), "timeout")

    def handler_execution(self, run: FlowRun, execution_id: str | None = None) -> Execution:
        """The timeout handler's execution, not yet announced (``execution_id``: a resumed one)."""
        flow = run.definition.flow
        is_async = run.definition.timeout_handler_is_async
        step: Step[None] = _AsyncTimeoutHandlerStep(flow) if is_async else _TimeoutHandlerStep(flow)
        definition = StepDefinition(
            TIMEOUT_STEP_TYPE, step, type(None), False, False, is_async, None
        )
        ex = Execution(
            execution_id or run.next_execution_id(TIMEOUT_STEP_TYPE),
            definition,
            None,
            "__start__",
            handler_options(
                run.start_options.timeout_handler_options if run.start_options else None
            ),
        )
        ex.counted = False  # the timeout handler never counts as an active Step (R31)
        run.executions[ex.execution_id] = ex
        return ex

    def cancel(self, run: FlowRun) -> None:
        """Stop the deadline of a closing run."""
        handle = self._timers.pop(run.run_id, None)
        if handle is not None:
            handle.cancel()

    def rekey(self, previous: str, run_id: str) -> None:
        """A run continued as new: its deadline and policy go on under ``run_id`` (R13, R139)."""
        if previous in self._timers:
            self._timers[run_id] = self._timers.pop(previous)
        if previous in self._policies:
            self._policies[run_id] = self._policies.pop(previous)

    def policy_name(self, run_id: str) -> str | None:
        """The timeout policy of a run with a deadline, by name; None without one."""
        policy = self._policies.get(run_id)
        return policy.name if policy is not None else None

    def resume(self, run: FlowRun, policy: str, due_ns: int) -> None:
        """Schedule a resumed run's stored deadline again (recovery after a crash)."""
        self._policies[run.run_id] = FlowTimeoutPolicy[policy]
        self._timers[run.run_id] = self._rt.call_at(due_ns, FlowTimeout.of(self._rt, run, None))
