"""Decisions: checking an Execute's StepDecision, committing it, cancellation and Flow close.

R79-R101 (decisions, cancellation), R109 (recovery routes), R143-R152 (close semantics).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dexviz.engine.commit.closing import Closing
from dexviz.engine.core.context import InvocationContext
from dexviz.engine.core.effects import (
    apply_deletes,
    apply_publishes,
    apply_writes,
    committed_payload,
    emit_published,
    staged_values,
)
from dexviz.engine.core.errors import method_where
from dexviz.engine.core.state import DEFAULT_OPTIONS as DEFAULT_OPTIONS  # recovery imports it here
from dexviz.engine.core.state import Execution, FlowRun, Phase
from dexviz.history._plural import plural
from dexviz.history.event import LazyPayload, Payload
from dexviz.history.kinds import EventKind
from dexviz.sdk.codec import to_json_ready
from dexviz.sdk.decision import DecisionKind, StepDecision, StepMovement
from dexviz.sdk.definitions import StepDefinition
from dexviz.sdk.errors import InvalidStepResultError
from dexviz.sdk.options import StepOptions
from dexviz.sdk.results import FlowErrorType, FlowStatus, RecoveryErrorInfo, StepCompletion

if TYPE_CHECKING:
    from dexviz.engine.commit.waits import WaitManager
    from dexviz.engine.core.kernel import Kernel
    from dexviz.engine.core.ports import RunEnds


@dataclass(frozen=True)
class Move:
    """A checked movement: the target Step, its decoded input, and its effective options."""

    step: StepDefinition
    input: Any
    options: StepOptions | None


@dataclass
class Prepared:
    """A decision checked during the attempt, so that committing it cannot fail."""

    decision: StepDecision
    moves: list[Move] = field(default_factory=list)
    fallback: Move | None = None
    cancel_types: set[str] = field(default_factory=set)
    sibling_types: set[str] = field(default_factory=set)


class Decisions(Closing):
    """Applies Execute decisions; cancellation and closing come from :class:`Closing`."""

    def __init__(self, kernel: Kernel, waits: WaitManager, ends: RunEnds) -> None:
        self._k = kernel
        self._waits = waits
        self._ends = ends

    # -- checking -------------------------------------------------------------------------
    def prepare(self, run: FlowRun, ex: Execution, result: Any) -> Prepared:
        """Check a decision while the attempt can still fail (R30, R86, R91)."""
        if not isinstance(result, StepDecision):
            raise InvalidStepResultError(
                run.flow_type,
                ex.step_type,
                "execute",
                f"returned {type(result).__name__} instead of a StepDecision",
            )
        _check_combination(run, ex, result)
        if result.has_output and result.output is not None:
            # Outputs are stored with the dynamic encoding: one it cannot encode fails now.
            self._k.codecs.roundtrip(
                Any, result.output, operation=f"{method_where(run, ex, 'execute')} output"
            )
        prepared = Prepared(result)
        if result.kind is DecisionKind.NEXT:
            if not result.movements:
                raise InvalidStepResultError(
                    run.flow_type, ex.step_type, "execute", "a go_to decision needs a movement"
                )
            prepared.moves = [self.check_move(run, ex.execution_id, m) for m in result.movements]
        elif result.kind is DecisionKind.FORCE_COMPLETE_IF_CHANNELS_EMPTY:
            assert result.fallback is not None
            prepared.fallback = self.check_move(run, ex.execution_id, result.fallback)
            for channel in result.empty_channels:
                if run.definition.channels.get(channel.name) != channel:
                    raise InvalidStepResultError(
                        run.flow_type,
                        ex.step_type,
                        "execute",
                        f"Channel {channel.name!r} is not declared in the persistence schema",
                    )
        prepared.cancel_types = {
            run.definition.resolve_step(s).step_type for s in result.canceling_steps
        }
        prepared.sibling_types = {
            run.definition.resolve_step(s).step_type for s in result.canceling_sibling_steps
        } - prepared.cancel_types
        return prepared

    def check_move(self, run: FlowRun, source: str, movement: StepMovement) -> Move:
        """Resolve a movement's target and check its input against the target's type."""
        step = run.definition.resolve_step(movement.step)
        value = self._k.codecs.roundtrip(
            step.input_type,
            movement.input,
            operation=f"Flow {run.flow_type!r}, {source}: input of go_to {step.step_type}",
        )
        return Move(step, value, movement.options)

    # -- committing -----------------------------------------------------------------------
    def commit_execute(
        self, run: FlowRun, ex: Execution, ctx: InvocationContext, prepared: Prepared
    ) -> None:
        """Commit an Execute: effects, end of execution, cancellations, then the decision (R93)."""
        k = self._k
        decision = prepared.decision
        writes = apply_writes(run, ctx.staged)
        messages = apply_publishes(run, ctx.staged)
        apply_deletes(run, ctx.staged, strict=False)
        if ex.holds_messages:
            ex.reserved = {}  # consumed for good now that the Execute committed
        self.finish(run, ex, Phase.DONE)
        k.release_locks(run, ex)
        victims = self.select_victims(
            run, ex.parent_key, prepared.cancel_types, prepared.sibling_types
        )
        moves, channels_empty = self._moves_for(run, prepared, victims)
        new = [self.new_execution(run, m, ex.execution_id) for m in moves] if run.is_open else []
        k.recorder.emit(
            run,
            EventKind.STEP_EXECUTE_COMPLETED,
            ex,
            LazyPayload(
                execute_completed_payload,
                ex.first_started_ns,
                ex.attempt,
                decision_values(decision, new, victims, channels_empty),
                writes,
                tuple(m.message_id for m in messages),
                staged_values(ctx.staged),
            ),
        )
        emit_published(k.recorder, run, messages, ex.execution_id, ex)
        returned = self.cancel_all(run, victims, ex.execution_id)
        reason = "fallback" if prepared.fallback is not None and new else "decision"
        for execution in new:
            self.announce(run, execution, reason)
        self.close_decision(run, ex, decision, channels_empty)
        self._waits.wake(run, {m.channel for m in messages} | set(returned))
        self.check_graceful(run)

    def _moves_for(
        self, run: FlowRun, prepared: Prepared, victims: list[Execution]
    ) -> tuple[list[Move], bool | None]:
        kind = prepared.decision.kind
        if kind is DecisionKind.NEXT:
            return prepared.moves, None
        if kind is not DecisionKind.FORCE_COMPLETE_IF_CHANNELS_EMPTY:
            return [], None
        names = [c.name for c in prepared.decision.empty_channels]
        reserved = {
            key for other in run.executions.values() if other.active for key in other.reserved
        }
        reserved.update(key for v in victims for key in v.reserved)
        empty = all(not run.queues_view.get(n) and n not in reserved for n in names)
        assert prepared.fallback is not None
        return ([] if empty else [prepared.fallback]), empty

    def close_decision(
        self, run: FlowRun, ex: Execution, decision: StepDecision, channels_empty: bool | None
    ) -> None:
        """Apply a decision's close: a graceful request, a forced completion or a failure."""
        kind = decision.kind
        if kind is DecisionKind.GRACEFUL_COMPLETE:
            run.graceful_requested = True
            self._add_output(run, ex, decision)
            payload: dict[str, Any] = {"has_output": decision.has_output}
            if decision.has_output:
                payload["output"] = to_json_ready(decision.output)
            self._k.recorder.emit(run, EventKind.COMPLETION_REQUESTED, ex, payload)
        elif kind is DecisionKind.FORCE_COMPLETE or (
            kind is DecisionKind.FORCE_COMPLETE_IF_CHANNELS_EMPTY and channels_empty
        ):
            self._add_output(run, ex, decision)
            self.close(run, FlowStatus.COMPLETED)
        elif kind is DecisionKind.FORCE_FAIL:
            self.close(run, FlowStatus.FAILED, FlowErrorType.STEP_DECISION_FAILED, decision.reason)

    def _add_output(self, run: FlowRun, ex: Execution, decision: StepDecision) -> None:
        # A missing or None output adds nothing (R89).
        if decision.has_output and decision.output is not None:
            run.completions.append(StepCompletion(ex.step_type, ex.execution_id, decision.output))

    # -- executions -----------------------------------------------------------------------
    def new_execution(
        self,
        run: FlowRun,
        move: Move,
        source: str,
        recovery: RecoveryErrorInfo | None = None,
        parent_key: str = "",
    ) -> Execution:
        """Create (but not yet announce) an execution; numbers follow movement order (R16)."""
        execution = self.create_execution(
            run, move.step, move.input, move.options, source, parent_key
        )
        if recovery is not None:
            execution.recovery_error = recovery
        return execution

    def create_execution(
        self,
        run: FlowRun,
        step: StepDefinition,
        value: Any,
        options: StepOptions | None,
        source: str,
        parent_key: str = "",
    ) -> Execution:
        """:meth:`new_execution` from a checked target and input, without a Move."""
        if options is None:
            options = step.options or DEFAULT_OPTIONS
        execution = Execution(run.next_execution_id(step.step_type), step, value, source, options)
        execution.parent_key = parent_key or source
        run.executions[execution.execution_id] = execution
        run.active_count += 1
        return execution

    def announce(self, run: FlowRun, ex: Execution, reason: str) -> None:
        """Record the new execution and queue its first method."""
        payload = CreatedPayload(ex.input, ex.from_execution_id, reason, ex.step.has_wait_for)
        self._k.recorder.emit(
            run, EventKind.STEP_EXECUTION_CREATED, ex, payload, method="", attempt=0
        )
        self._k.start_method_soon(run, ex, "wait_for" if ex.step.has_wait_for else "execute")

    def execute_exhausted(self, run: FlowRun, ex: Execution, info: RecoveryErrorInfo) -> None:
        """Execute used up its retries: go to the recovery Step with the same input, or fail."""
        target = ex.options.execute_failure_proceed_to
        recovery: Execution | None = None
        self.finish(run, ex, Phase.DONE)
        if target is not None and run.is_open:
            step = run.definition.resolve_step(target)
            move = Move(step, ex.input, ex.options.execute_failure_options)
            recovery = self.new_execution(run, move, ex.execution_id, info)
        self._k.recorder.emit(
            run,
            EventKind.STEP_EXECUTE_FAILED,
            ex,
            {
                "error_type": info.error_type,
                "error_message": info.detail,
                "attempts": ex.attempt,
                "started_ns": ex.first_started_ns,
                "recovery_execution_id": recovery.execution_id if recovery else None,
            },
        )
        if recovery is not None:
            self.announce(run, recovery, "recovery")
            return
        self.fail_flow_worker(run, ex, info)

    def fail_flow_worker(self, run: FlowRun, ex: Execution, info: RecoveryErrorInfo) -> None:
        """A method failed with no route: the Flow fails with WORKER_API_FAILED (R108, R109).

        The Flow's error message is the handler's own, as Dex reports it; which execution
        failed, how and after how many attempts is kept as the result's ``failure``.
        """
        where = method_where(run, ex, ex.method)
        tried = f"failed after {plural(ex.attempt, 'attempt')}"
        run.failure = f"{where} {tried}: {info.error_type}: {info.detail}"
        if ex.active:
            self.finish(run, ex, Phase.DONE)
        self.close(run, FlowStatus.FAILED, FlowErrorType.WORKER_API_FAILED, info.detail)


def decision_values(
    decision: StepDecision,
    new: list[Execution],
    victims: list[Execution],
    channels_empty: bool | None,
) -> tuple[Any, ...]:
    """What a decision's payload needs, captured at commit (an output is made JSON-ready now)."""
    return (
        decision.kind._name_,  # Enum.name is a Python-level descriptor; _name_ is a slot read
        tuple(new),  # an execution's type, id and input never change
        decision.has_output,
        to_json_ready(decision.output) if decision.has_output else None,
        decision.reason,
        decision.canceling_steps,
        decision.canceling_sibling_steps,
        tuple(v.execution_id for v in victims),
        channels_empty,
    )


def decision_payload(values: tuple[Any, ...]) -> dict[str, Any]:
    """The JSON-ready ``decision`` member of StepExecuteCompleted and RpcExecutionCompleted."""
    kind, new, has_output, output, reason, canceling, siblings, canceled, channels_empty = values
    payload: dict[str, Any] = {
        "kind": kind,
        "next": [
            {
                "step_type": e.step_type,
                "execution_id": e.execution_id,
                "input": to_json_ready(e.input),
            }
            for e in new
        ],
        "has_output": has_output,
        "reason": reason,
        "canceling_steps": _type_names(canceling),
        "canceling_sibling_steps": _type_names(siblings),
        "canceled": list(canceled),
    }
    if has_output:
        payload["output"] = output
    if channels_empty is not None:
        payload["channels_empty"] = channels_empty
    return payload


def execute_completed_payload(
    started_ns: int,
    attempts: int,
    decision: tuple[Any, ...],
    writes: list[dict[str, Any]],
    published: tuple[str, ...],
    staged: tuple[dict[str, Any], dict[str, Any], tuple[str, ...]],
) -> dict[str, Any]:
    """The payload of StepExecuteCompleted (docs/history-format.md)."""
    return committed_payload(
        started_ns, attempts, "decision", decision_payload(decision), writes, published, staged
    )


class CreatedPayload(Payload):
    """StepExecutionCreated's payload: four values, the dict built on first read.

    Every transition records one and a history keeps them all, so the values live in slots
    (72 bytes instead of a 184-byte dict); the input is the engine's private copy, which
    nothing changes once the execution exists.
    """

    __slots__ = ("_input", "_from", "_reason", "_has_wait_for")

    def __init__(self, value: Any, from_execution_id: str, reason: str, has_wait_for: bool):
        self._value = None
        self._input = value
        self._from = from_execution_id
        self._reason = reason
        self._has_wait_for = has_wait_for

    def _make(self) -> dict[str, Any]:
        return {
            "input": to_json_ready(self._input),
            "from_execution_id": self._from,
            "reason": self._reason,
            "has_wait_for": self._has_wait_for,
        }


def _type_names(steps: tuple[Any, ...]) -> list[str]:
    return sorted({_type_name(s) for s in steps}) if steps else []


def _type_name(step: Any) -> str:
    if isinstance(step, type):
        return step.__name__
    getter = getattr(step, "get_step_type", None)
    return str(getter()) if callable(getter) else type(step).__name__


def _check_combination(run: FlowRun, ex: Execution, decision: StepDecision) -> None:
    """Only go_to carries next Steps; dead_end and force_fail carry no output (R86)."""
    kind = decision.kind
    problem = ""
    if kind is not DecisionKind.NEXT and decision.movements:
        problem = f"a {kind.name} decision cannot carry next Steps"
    elif kind is DecisionKind.NEXT and decision.has_output:
        problem = "a go_to decision cannot carry an output"
    elif kind in (DecisionKind.DEAD_END, DecisionKind.FORCE_FAIL) and decision.has_output:
        problem = f"a {kind.name} decision cannot carry an output"
    if problem:
        raise InvalidStepResultError(run.flow_type, ex.step_type, "execute", problem)
