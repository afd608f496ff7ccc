"""FastPath: the common transitions, in one place, recording what the general path records.

Most transitions are an ``execute`` that returns ``go_to``, ``dead_end`` or
``graceful_complete`` (perhaps after publishing), or a synchronous ``wait_for`` that returns a
Wait on one declared Channel, with no locks and no faults planned, in simulation. For those
this module runs the attempt and commits its result with the per-Step settings worked out
once, no closure per handler call, events appended straight to the unit's commit buffer, and
no message text built before an error. A coroutine ``execute`` still runs as a Task on the
VirtualLoop; :mod:`dexviz.engine.attempt.fast_async` starts it and commits its decision.
Anything else, and any check that fails, is handed to the general path
(:mod:`dexviz.engine.attempt.invoke`, :mod:`dexviz.engine.commit.decide`,
:mod:`dexviz.engine.commit.waits`) at the point where the two would diverge, so errors,
retries and histories are the general path's own. Both paths emit the same events in the
same order (``tests/engine/test_fast_path.py`` compares them byte for byte).

The functions here are longer than elsewhere on purpose: each call is a measurable share of a
transition (``make bench`` counts calls per transition), so the steps of one commit are inlined.
"""

from __future__ import annotations

from types import GeneratorType
from typing import TYPE_CHECKING, Any

from dexviz.engine.attempt.fast_async import launch_execute
from dexviz.engine.attempt.fast_spawn import message_ids, record_published, spawn
from dexviz.engine.attempt.fast_wait import commit_wait
from dexviz.engine.attempt.invoke import Invoker
from dexviz.engine.attempt.step_settings import INT64, SAME_COPY, StepSettings, same_copy
from dexviz.engine.commit.decide import Decisions
from dexviz.engine.commit.waits import WaitManager
from dexviz.engine.core.completed import PlainCompleted
from dexviz.engine.core.context import InvocationContext
from dexviz.engine.core.effects import apply_publishes
from dexviz.engine.core.runners import HANDLER_EXITS, drain
from dexviz.engine.core.state import Execution, FlowRun, Phase
from dexviz.engine.core.units import QueuedStart
from dexviz.history.event import Event
from dexviz.history.kinds import EventKind
from dexviz.sdk.decision import DecisionKind, StepDecision
from dexviz.sdk.definitions import FlowDefinition, StepDefinition
from dexviz.sdk.results import FlowStatus
from dexviz.sdk.wait import Wait

if TYPE_CHECKING:
    from dexviz.engine.core.kernel import Kernel
    from dexviz.engine.core.ports import ContextHost

_NEXT = DecisionKind.NEXT
_GRACEFUL = DecisionKind.GRACEFUL_COMPLETE
_DEAD_END = DecisionKind.DEAD_END
_EXECUTE = Phase.EXECUTE
_WAIT_FOR = Phase.WAIT_FOR
_DONE = Phase.DONE
_ATTEMPT_STARTED = EventKind.ATTEMPT_STARTED
_EXECUTE_COMPLETED = EventKind.STEP_EXECUTE_COMPLETED
_RUNNING = FlowStatus.RUNNING
_NO_ATTRIBUTES: dict[str, Any] = {}
"""The snapshot of a run without Attributes, shared: contexts only read their snapshot."""
_new_event = tuple.__new__


class FastPath:
    """Runs eligible attempts and commits their results without the general machinery."""

    def __init__(
        self,
        kernel: Kernel,
        host: ContextHost,
        invoker: Invoker,
        decisions: Decisions,
        waits: WaitManager,
    ) -> None:
        self._rt = kernel
        self._host = host
        self._invoker = invoker
        self._decisions = decisions
        self._waits = waits
        self._settings: dict[int, StepSettings] = {}
        self.enabled = True
        """Off sends every attempt down the general path (tests compare the two)."""

    def settings(self, step: StepDefinition) -> StepSettings:
        """The Step's settings (kept per StepDefinition for the engine's lifetime)."""
        found = self._settings.get(id(step))
        if found is None or found.step is not step:
            found = self._settings[id(step)] = StepSettings(step)
        return found

    def start_unit(self, unit: QueuedStart) -> None:  # noqa: C901 - see the module docstring
        """Run a queued first attempt: here if it qualifies, else on the general path.

        Here: start attempt 1, call the handler, and commit its result, or hand the outcome
        to the general path (an error, a result this path does not commit).
        """
        _, run, ex, method, settings = unit
        # run.is_open, inlined (mirrors dexviz.engine.core.state.FlowRun.is_open): every transition.
        if not ex.active or run.status is not _RUNNING or run.closing:
            return
        rt = self._rt
        faults = rt.faults
        step = ex.step
        if settings is None:
            settings = self._settings.get(id(step))
        if settings is None or settings.step is not step:
            settings = self.settings(step)
        value = ex.input
        input_type = settings.input_type
        if not (
            self.enabled
            and rt.sim is not None
            and not faults.failures
            and faults.budget is None
            and ex.options is settings.options
            and (settings.fast_execute if method == "execute" else settings.fast_wait_for)
        ):
            self._invoker.start_general(run, ex, method)
            return
        # same_copy, inlined (mirrors dexviz.sdk.codec.CodecRegistry.roundtrip): a None
        # input is its own copy too; any other input gets its checked copy below.
        copied = (type(value) is input_type or value is None) and (
            input_type is not int or value is None or INT64[0] <= value <= INT64[1]
        )
        # Attempt 1, in one function with the checks above: this runs on every transition.
        recorder = rt.recorder
        # The phase setter, inlined (mirrors dexviz.engine.core.state.Execution.phase): the
        # execution is active, it was queued.
        ex._phase = _EXECUTE if method == "execute" else _WAIT_FOR
        ex.method = method
        now = rt.scheduler.now_ns
        ex.first_started_ns = now
        ex.attempt = 1
        token = ex.attempt_token = ex.attempt_token + 1
        ex.pending_unit = None
        # Recorder.emit, inlined (mirrors dexviz.engine.core.recorder.Recorder.emit).
        pending = recorder._pending
        if not pending:  # the usual start of a unit: nothing buffered yet
            events: list[Event] = []
            pending[run.flow_id] = (run, events)
        else:
            events = recorder.buffer(run)
        run.seq += 1
        events.append(
            _new_event(Event, (run.seq, now, _ATTEMPT_STARTED, run.flow_id, run.run_id,
                               ex.execution_id, settings.step_type, method, 1, _EMPTY))
        )  # fmt: skip
        # Every retry reads the first attempt's snapshot (R22).
        snapshot = dict(run._attributes) if run._attributes else _NO_ATTRIBUTES
        ex.method_snapshot = snapshot
        ctx = InvocationContext.first_attempt(run, ex, method, snapshot, self._host)
        if not copied:
            # The input's checked copy, inlined (mirrors
            # dexviz.engine.attempt.invoke.Invoker.attempt): a frozen dataclass of immutable
            # fields comes back as itself after its check.
            try:
                value = rt.codecs.roundtrip(
                    step.input_type, value, operation=ctx._where + " input"
                )
            except Exception as error:  # noqa: BLE001 - an undecodable input fails the attempt
                self._invoker.fail(run, ex, ctx, error, "error")
                return
        if method == "execute" and settings.async_execute:
            launch_execute(self, run, ex, ctx, value, settings)
            return
        try:
            result: Any = (settings.execute if method == "execute" else settings.wait_for)(
                ctx, value
            )
            if type(result) is GeneratorType:
                result = drain(result, ctx)
        except (Exception, *HANDLER_EXITS) as error:  # noqa: BLE001 - a failed attempt
            self._invoker.finished(run, ex, ctx, token, None, error, False)
            return
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
            self._invoker.finished(run, ex, ctx, token, result, None, False)
            return
        if recorder._pending is not pending:
            # The handler drove the engine, which committed what was buffered: start afresh.
            events = recorder.buffer(run)
        if method == "execute":
            if type(result) is StepDecision:
                moves = self._moves(run, ctx, result, settings)
                if moves is not None:
                    self._apply(run, ex, ctx, result, moves, events)
                    return
        elif type(result) is Wait and commit_wait(rt, self._waits, run, ex, ctx, result, events):
            return
        self._invoker.finished(run, ex, ctx, token, result, None, False)

    def _moves(
        self, run: FlowRun, ctx: InvocationContext, decision: StepDecision, settings: StepSettings
    ) -> list[Any] | None:
        """The checked targets and inputs of a decision, or None when the general path decides.

        A list of alternating StepSettings and input values (no tuple per movement). None
        also for staged writes, deletions or recorded events and for cancellation selectors.
        """
        staged = ctx._staged
        if (
            staged is not None
            and (staged.writes or staged.deletes or staged.events or staged.locals)
            or decision.canceling_steps
            or decision.canceling_sibling_steps
        ):
            return None
        if decision.kind is not _NEXT:
            return _ending(decision)
        if not decision.movements or decision.has_output:
            return None
        moves: list[Any] = []
        found = settings.targets
        if found is None or found[0] is not run.definition:
            found = settings.targets = self._targets_of(run.definition)
        targets = found[1]
        for movement in decision.movements:
            try:
                target = targets[movement.step]
            except (KeyError, TypeError):  # not a Step class registered once; unhashable
                return None
            if movement.options is not None:
                return None
            value = movement.input
            value_type = type(value)
            # same_copy, inlined (mirrors dexviz.sdk.codec.CodecRegistry.roundtrip), for
            # immutable scalars; anything else gets the general path's checked copy (mirrors
            # dexviz.engine.commit.decide.Decisions.check_move), so a caller's later mutation
            # cannot reach it. One that fails its check is the general path's to reject.
            if value is not None and (
                value_type is not target.input_type
                or (value_type is int and not INT64[0] <= value <= INT64[1])
            ):
                try:
                    value = self._rt.codecs.roundtrip(
                        target.step.input_type, value, operation="go_to input"
                    )
                except Exception:  # noqa: BLE001 - the general path raises it with its text
                    return None
            moves += (target, value)
        return moves

    def _targets_of(
        self, definition: FlowDefinition
    ) -> tuple[FlowDefinition, dict[Any, StepSettings]]:
        """Step classes registered exactly once, by class: a go_to target is one lookup."""
        table = {
            cls: self.settings(steps[0])
            for cls, steps in definition.by_class.items()
            if len(steps) == 1 and isinstance(cls, type)
        }
        return definition, table

    def _apply(
        self,
        run: FlowRun,
        ex: Execution,
        ctx: InvocationContext,
        decision: StepDecision,
        moves: list[Any],
        events: list[Event],
    ) -> None:
        """Commit in the general path's order: effects, end, new executions, events, close."""
        rt = self._rt
        decisions = self._decisions
        staged = ctx._staged
        messages = (
            apply_publishes(run, staged) if staged is not None and staged.publishes else ()
        )
        ex._reserved = None  # consumed for good now that the Execute committed
        if ex.heartbeat_timer is None and ex.method_timeout is None and ex.pending_unit is None:
            # Closing.finish with nothing to cancel, inlined (mirrors
            # dexviz.engine.commit.closing.Closing.finish).
            if ex.active and ex.counted:
                run.active_count -= 1
            ex._phase = _DONE
            ex.active = False
        else:
            decisions.finish(run, ex, _DONE)
        if rt._locks:  # no run has a lock table: nothing to release (two calls less)
            rt.release_locks(run, ex)
        source = ex.execution_id
        published = message_ids(messages) if messages else ()
        # The new executions are filled in below, before anything reads the payload.
        payload = PlainCompleted(ex.first_started_ns, ex.attempt, decision, published, ())
        run.seq += 1
        events.append(
            _new_event(Event, (run.seq, rt.scheduler.now_ns, _EXECUTE_COMPLETED, run.flow_id,
                               run.run_id, source, ex.step.step_type, ex.method or None,
                               ex.attempt or None, payload))
        )  # fmt: skip
        if messages:
            record_published(self._rt, run, ex, messages, events)
        if moves and run.status is _RUNNING and not run.closing:
            payload._new = spawn(self._rt, self, run, source, moves, events)
        if decision.kind is _GRACEFUL:
            decisions.close_decision(run, ex, decision, None)
        if messages:
            self._waits.wake(run, {m.channel for m in messages} if len(messages) > 1 else (
                messages[0].channel,
            ))
        if run.graceful_requested:
            decisions.check_graceful(run)


_EMPTY: dict[str, Any] = {}
"""AttemptStarted's payload: empty, and shared (payloads are read-only)."""


def _ending(decision: StepDecision) -> list[Any] | None:
    """The (no) moves of a plain dead_end or graceful_complete; None for anything else."""
    kind = decision.kind
    if decision.movements or kind is not _DEAD_END and kind is not _GRACEFUL:
        return None
    if kind is _DEAD_END:
        return None if decision.has_output else []
    output = decision.output
    # same_copy, for an immutable scalar output (or none): anything else is the general path's.
    plain = output is None or same_copy(
        output, type(output) if type(output) in SAME_COPY else None
    )
    return [] if plain else None
