"""FastPath: the common transitions, in one place, recording what the general path records.

Most transitions are a synchronous ``execute`` that returns ``go_to``, ``dead_end`` or
``graceful_complete``, or a synchronous ``wait_for`` that returns a Wait on declared Channels,
with no locks and no faults planned, in simulation. For those this module runs the attempt
and commits its result with the per-Step settings worked out once, no closure per handler
call, and no message text built before an error. Anything else, and any
check that fails, is handed to the general path (:mod:`dexviz.engine.invoke`,
:mod:`dexviz.engine.decide`) at the point where the two would diverge, so errors, retries and
histories are the general path's own. Both paths emit the same events in the same order.
"""

from __future__ import annotations

from types import GeneratorType
from typing import TYPE_CHECKING, Any

from dexviz.engine.context import InvocationContext, Staged
from dexviz.engine.decide import (
    DEFAULT_OPTIONS,
    decision_values,
    execute_completed_payload,
)
from dexviz.engine.effects import apply_publishes, emit_published, staged_values
from dexviz.engine.invoke import record_heartbeat
from dexviz.engine.runners import HANDLER_EXITS, drain
from dexviz.engine.state import Execution, FlowRun, Phase
from dexviz.history.event import LazyPayload
from dexviz.history.kinds import EventKind
from dexviz.sdk.clock import handler_clock
from dexviz.sdk.codec import to_json_ready
from dexviz.sdk.decision import DecisionKind, StepDecision
from dexviz.sdk.definitions import FlowDefinition, StepDefinition
from dexviz.sdk.options import StepOptions
from dexviz.sdk.results import FlowStatus
from dexviz.sdk.wait import Wait

if TYPE_CHECKING:
    from dexviz.engine.runtime import Runtime

_NEXT = DecisionKind.NEXT
_GRACEFUL = DecisionKind.GRACEFUL_COMPLETE
_DEAD_END = DecisionKind.DEAD_END
_EXECUTE = Phase.EXECUTE
_WAIT_FOR = Phase.WAIT_FOR
_DONE = Phase.DONE
_ATTEMPT_STARTED = EventKind.ATTEMPT_STARTED
_EXECUTE_COMPLETED = EventKind.STEP_EXECUTE_COMPLETED
_RUNNING = FlowStatus.RUNNING
_INT64 = (-(2**63), 2**63 - 1)
_NO_ATTRIBUTES: dict[str, Any] = {}
"""The snapshot of a run without Attributes, shared: contexts only read their snapshot."""
_SAME_COPY = frozenset({str, bool, int})
"""Types whose checked copy is the value itself (ints within int64; floats are checked)."""


class StepSettings:
    """What the fast path needs of one registered Step, worked out on its first execution."""

    __slots__ = ("step", "options", "execute", "wait_for", "fast_execute", "fast_wait_for",
                 "input_type")  # fmt: skip

    def __init__(self, step: StepDefinition) -> None:
        self.step = step
        self.options: StepOptions = step.options or DEFAULT_OPTIONS
        self.execute = step.step.execute
        self.wait_for = step.step.wait_for if step.has_wait_for else None
        self.input_type = step.input_type if step.input_type in _SAME_COPY else None
        options = self.options
        # Sync handlers in simulation run inline: no task, so no method timeout or heartbeat
        # window is armed; locks need the general path's queueing.
        self.fast_execute = not step.execute_is_async and not options.execute_lock_attributes
        self.fast_wait_for = (
            step.has_wait_for
            and not step.wait_for_is_async
            and not options.wait_for_lock_attributes
        )


def same_copy(value: Any, input_type: Any) -> bool:
    """Whether ``roundtrip(input_type, value)`` would return ``value`` itself, unchanged."""
    kind = type(value)
    if kind is not input_type:
        return False
    return kind is not int or _INT64[0] <= value <= _INT64[1]


class FastPath:
    """Runs eligible attempts and commits their results without the general machinery."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
        self._settings: dict[int, StepSettings] = {}
        self._targets: dict[int, tuple[FlowDefinition, dict[Any, StepDefinition]]] = {}
        self._clock = runtime.clock_millis
        self.enabled = True
        """Off sends every attempt down the general path (tests compare the two)."""

    def settings(self, step: StepDefinition) -> StepSettings:
        """The Step's settings (kept per StepDefinition for the engine's lifetime)."""
        found = self._settings.get(id(step))
        if found is None or found.step is not step:
            found = self._settings[id(step)] = StepSettings(step)
        return found

    def try_start(self, run: FlowRun, ex: Execution, method: str) -> bool:
        """Run attempt 1 of ``method`` if it qualifies; False: the general path runs it."""
        rt = self._rt
        faults = rt.faults
        if not self.enabled or rt.sim is None or faults.failures or faults.budget is not None:
            return False
        step = ex.step
        settings = self._settings.get(id(step))
        if settings is None or settings.step is not step:
            settings = self.settings(step)
        if ex.options is not settings.options:
            return False
        value = ex.input
        input_type = settings.input_type
        if type(value) is not input_type or (
            input_type is int and not _INT64[0] <= value <= _INT64[1]
        ):
            # same_copy, inlined: this runs on every transition.
            if value is not None:
                return False
        if method == "execute":
            if not settings.fast_execute:
                return False
            self._execute(run, ex, settings)
            return True
        if not settings.fast_wait_for:
            return False
        self._wait_for(run, ex, settings)
        return True

    def _call(
        self, run: FlowRun, ex: Execution, method: str, handler: Any
    ) -> tuple[InvocationContext, Any] | None:
        """Start attempt 1 and call the handler; None when its error went to the general path."""
        rt = self._rt
        # The phase setter, inlined (the execution is active: it was queued).
        ex._phase = _EXECUTE if method == "execute" else _WAIT_FOR
        ex.active = True
        ex.method = method
        ex.first_started_ns = rt.scheduler.now_ns
        ex.attempt = 1
        ex.attempt_token += 1
        ex.pending_unit = None
        token = ex.attempt_token
        rt.recorder.emit(run, _ATTEMPT_STARTED, ex)
        # Every retry reads the first attempt's snapshot (R22).
        snapshot = dict(run.attributes) if run._attributes else _NO_ATTRIBUTES
        ex.method_snapshot = snapshot
        ctx = InvocationContext(
            run,
            ex,
            method,
            1,
            snapshot,
            rt.codecs,
            where=f"Flow {run.definition.flow_type!r}, Step {ex.execution_id} {method}",
            # heartbeat_writer and Runtime.stream_writer, inlined: made on every transition.
            on_heartbeat=lambda value: record_heartbeat(ex, value, rt.now()),
            subflows=rt.subflows,
        )
        flow_id, source = run.flow_id, f"#{ex.execution_id}"
        ctx.stream_writer = lambda stream, value: rt.write_stream(flow_id, stream, source, value)
        clock = handler_clock.set(self._clock)
        try:
            result: Any = handler(ctx, ex.input)
            if type(result) is GeneratorType:
                result = drain(result, ctx)
        except (Exception, *HANDLER_EXITS) as error:  # noqa: BLE001 - a failed attempt
            handler_clock.reset(clock)
            rt.invoker.finished(run, ex, ctx, token, None, error, False)
            return None
        handler_clock.reset(clock)
        if (
            token != ex.attempt_token
            or not ex.active
            or ctx.canceled
            or run.status is not _RUNNING
            or run.closing
            or ex.method_timeout is not None
            or ex.heartbeat_timer is not None
        ):
            # The handler drove the engine and its attempt no longer counts (R152).
            rt.invoker.finished(run, ex, ctx, token, result, None, False)
            return None
        return ctx, result

    def _execute(self, run: FlowRun, ex: Execution, settings: StepSettings) -> None:
        called = self._call(run, ex, "execute", settings.execute)
        if called is None:
            return
        ctx, result = called
        if type(result) is not StepDecision or not self._commit(run, ex, ctx, result):
            self._rt.invoker.finished(run, ex, ctx, ex.attempt_token, result, None, False)

    def _wait_for(self, run: FlowRun, ex: Execution, settings: StepSettings) -> None:
        called = self._call(run, ex, "wait_for", settings.wait_for)
        if called is None:
            return
        ctx, result = called
        if type(result) is Wait and not result.subflows and _declared(run, result):
            self._rt.waits.commit_wait_for(run, ex, ctx, result)
        else:
            self._rt.invoker.finished(run, ex, ctx, ex.attempt_token, result, None, False)

    def _commit(
        self, run: FlowRun, ex: Execution, ctx: InvocationContext, decision: StepDecision
    ) -> bool:
        """Commit a plain go_to, dead_end or graceful_complete.

        Anything else returns False having changed nothing; the general path then checks it and
        commits or rejects it.
        """
        staged = ctx.staged
        if (
            decision.canceling_steps
            or decision.canceling_sibling_steps
            or staged.writes
            or staged.deletes
        ):
            return False
        moves = self._moves(run, decision)
        if moves is None:
            return False
        self._apply(run, ex, staged, decision, moves)
        return True

    def _moves(
        self, run: FlowRun, decision: StepDecision
    ) -> list[tuple[StepDefinition, Any, Any]] | None:
        """The checked movements of a decision, or None when the general path must decide."""
        kind = decision.kind
        if kind is _NEXT:
            if not decision.movements or decision.has_output:
                return None
            moves: list[tuple[StepDefinition, Any, Any]] = []
            targets = self._targets_of(run.definition)
            for movement in decision.movements:
                target = movement.step
                step = targets.get(target) if isinstance(target, type) else None
                if step is None:
                    return None
                value = movement.input
                value_type = type(value)
                # same_copy, inlined, and only for immutable scalars: anything else needs the
                # general path's checked copy, so a caller's later mutation cannot reach it.
                if value is not None and (
                    value_type is not step.input_type
                    or value_type not in _SAME_COPY
                    or (value_type is int and not _INT64[0] <= value <= _INT64[1])
                ):
                    return None
                moves.append((step, value, movement.options))
            return moves
        if decision.movements:
            return None
        if kind is _DEAD_END:
            return None if decision.has_output else []
        if kind is _GRACEFUL:
            output = decision.output
            plain = output is None or same_copy(
                output, type(output) if type(output) in _SAME_COPY else None
            )
            return [] if plain else None
        return None

    def _targets_of(self, definition: FlowDefinition) -> dict[Any, StepDefinition]:
        """Step classes registered exactly once, by class: a go_to target is one lookup."""
        found = self._targets.get(id(definition))
        if found is None or found[0] is not definition:
            table = {cls: steps[0] for cls, steps in definition.by_class.items() if len(steps) == 1}
            found = self._targets[id(definition)] = (definition, table)
        return found[1]

    def _apply(
        self,
        run: FlowRun,
        ex: Execution,
        staged: Staged,
        decision: StepDecision,
        moves: list[tuple[StepDefinition, Any, Any]],
    ) -> None:
        """Commit in the general path's order: effects, end, new executions, events, close."""
        rt = self._rt
        decisions = rt.decisions
        messages = apply_publishes(run, staged) if staged.publishes else []
        ex._reserved = None  # consumed for good now that the Execute committed
        if ex.heartbeat_timer is None and ex.method_timeout is None and ex.pending_unit is None:
            # Closing.finish with nothing to cancel, inlined.
            if ex.active and ex.counted:
                run.active_count -= 1
            ex._phase = _DONE
            ex.active = False
        else:
            decisions.finish(run, ex, _DONE)
        if rt._locks:  # no run has a lock table: nothing to release (two calls less)
            rt.release_locks(run, ex)
        source = ex.execution_id
        new = (
            [
                decisions.create_execution(run, step, value, options, source)
                for step, value, options in moves
            ]
            if moves and run.status is _RUNNING and not run.closing
            else []
        )
        published = tuple(m.message_id for m in messages) if messages else ()
        if staged.locals or staged.events:
            payload = LazyPayload(
                execute_completed_payload,
                ex.first_started_ns,
                ex.attempt,
                decision_values(decision, new, [], None),
                [],
                published,
                staged_values(staged),
            )
        else:
            payload = PlainCompleted(
                ex.first_started_ns,
                ex.attempt,
                decision,
                published,
                new[0] if len(new) == 1 else tuple(new),
            )
        rt.recorder.emit(run, _EXECUTE_COMPLETED, ex, payload)
        if messages:
            emit_published(rt.recorder, run, messages, source, ex)
        for execution in new:
            decisions.announce(run, execution, "decision")
        if decision.kind is _GRACEFUL:
            decisions.close_decision(run, ex, decision, None)
        if messages:
            rt.waits.wake(run, {m.channel for m in messages})
        if run.graceful_requested:
            decisions.check_graceful(run)


class PlainCompleted(LazyPayload):
    """StepExecuteCompleted's payload for a fast commit without writes, locals or events.

    It keeps the commit's values in its own slots (no argument tuple, no lists: one object per
    transition for the garbage collector to track) and builds, on first read, the same dict
    :func:`~dexviz.engine.decide.execute_completed_payload` builds for such a commit.
    """

    __slots__ = ("_started_ns", "_attempts", "_kind", "_has_output", "_output", "_reason",
                 "_published", "_new")  # fmt: skip

    def __init__(
        self,
        started_ns: int,
        attempts: int,
        decision: StepDecision,
        published: tuple[str, ...],
        new: Execution | tuple[Execution, ...],
    ) -> None:
        self._value = None
        self._started_ns = started_ns
        self._attempts = attempts
        self._kind: str = decision.kind._name_
        self._has_output: bool = decision.has_output
        # An immutable scalar (the fast path checked it): JSON-ready as it is.
        self._output: Any = decision.output
        self._reason: str = decision.reason
        self._published = published
        self._new = new

    def _make(self) -> dict[str, Any]:
        new = self._new
        executions = new if isinstance(new, tuple) else (new,)
        decision: dict[str, Any] = {
            "kind": self._kind,
            "next": [
                {
                    "step_type": e.step.step_type,
                    "execution_id": e.execution_id,
                    "input": to_json_ready(e.input),
                }
                for e in executions
            ],
            "has_output": self._has_output,
            "reason": self._reason,
            "canceling_steps": [],
            "canceling_sibling_steps": [],
            "canceled": [],
        }
        if self._has_output:
            decision["output"] = self._output
        return {
            "started_ns": self._started_ns,
            "attempts": self._attempts,
            "decision": decision,
            "writes": [],
            "published": list(self._published),
            "locals": {},
            "events": {},
        }


def _declared(run: FlowRun, wait: Wait) -> bool:
    """Whether every Channel the Wait names is the one the Flow declares."""
    channels = run.definition.channels
    for condition in wait.channel_conditions:
        declared = channels.get(condition.channel.name)
        if declared is not condition.channel and declared != condition.channel:
            return False
    return True
