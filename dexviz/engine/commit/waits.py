"""Waiting: committing a WaitFor, timers, and handing messages to waiters (R32-R47, R125-R130).

Waiters are indexed by the Channels they wait on, so a publish looks only at that Channel's
waiters and stops as soon as the queue is empty: a token hand-off costs the same with ten or ten
thousand contenders.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from dexviz.engine.core.context import InvocationContext
from dexviz.engine.core.effects import (
    apply_deletes,
    apply_publishes,
    apply_writes,
    emit_published,
    staged_values,
)
from dexviz.engine.core.plan import Satisfaction, candidates, evaluate
from dexviz.engine.core.simple_wait import SimpleWait, SimpleWaits
from dexviz.engine.core.state import Execution, FlowRun, Message, Phase, TimerState
from dexviz.engine.core.units import QueuedStart, TimerFired, Unit
from dexviz.engine.core.wait_payloads import WaitForCompleted
from dexviz.history.event import Event
from dexviz.history.kinds import EventKind
from dexviz.sdk.condition import SubFlowCondition, TimerCondition
from dexviz.sdk.wait import Wait

if TYPE_CHECKING:
    from dexviz.engine.core.kernel import Kernel
    from dexviz.engine.core.ports import ChildFlows

_NS = 1_000_000_000
_WAIT_SATISFIED = EventKind.WAIT_SATISFIED
_MESSAGE_CONSUMED = EventKind.MESSAGE_CONSUMED
_new_event = tuple.__new__


class WaitManager:
    """Owns every waiting execution of the runtime and decides which of them a message wakes."""

    children: ChildFlows
    """The SubFlows a Wait's SubFlow conditions start and ask (installed once by the runtime)."""

    def __init__(self, kernel: Kernel) -> None:
        self._k = kernel
        self.shapes = SimpleWaits()
        """Shared one-Channel Waits: what a waiting execution keeps of such a Wait."""

    def commit_wait_for(
        self, run: FlowRun, ex: Execution, ctx: InvocationContext, wait: Wait
    ) -> None:
        """Commit a WaitFor result: effects, the StepWaitForCompleted event, timers, waiting."""
        rt = self._k
        wait = self.shapes.shared(wait) or wait
        writes = apply_writes(run, ctx.staged)
        messages = apply_publishes(run, ctx.staged)
        apply_deletes(run, ctx.staged, strict=False)
        if ctx.staged.locals:
            ex.locals.update(ctx.staged.locals)
        rt.recorder.emit(
            run,
            EventKind.STEP_WAIT_FOR_COMPLETED,
            ex,
            WaitForCompleted(
                ex.first_started_ns,
                ex.attempt,
                wait,
                tuple(writes),  # a waiting execution keeps no list for its (usual) no writes
                tuple(m.message_id for m in messages),
                staged_values(ctx.staged),
            ),
        )
        emit_published(rt.recorder, run, messages, ex.execution_id, ex)
        rt.release_locks(run, ex)
        self.begin_waiting(run, ex, wait)
        self.wake(run, {m.channel for m in messages})

    def begin_waiting(self, run: FlowRun, ex: Execution, wait: Wait) -> None:
        """Register ``ex`` as waiting on ``wait``: start timers, index it, try it at once (R41)."""
        rt = self._k
        wait = self.shapes.shared(wait) or wait
        ex.phase = Phase.WAITING
        ex.wait = wait
        ex.wait_registered_ns = rt.now()
        ex.method = ""
        ex.attempt = 0
        for position, condition in enumerate(wait.timers):
            self._start_timer(run, ex, position, condition)
        for key in {c.physical_name for c in wait.channel_conditions}:
            run.add_waiter(key, ex)
        if wait.subflows:
            self.children.start_children(run, ex)
        self.apply_stale_skips(run, ex)
        if ex.phase is Phase.WAITING:
            self.try_satisfy(run, ex)

    def _start_timer(
        self, run: FlowRun, ex: Execution, position: int, condition: TimerCondition
    ) -> None:
        rt = self._k
        # Deadlines are whole seconds, rounded up (R125).
        fire_at = math.ceil(rt.now() / _NS + condition.duration.total_seconds()) * _NS
        timer = TimerState(position, condition.condition_id, condition.duration.total_seconds())
        timer.fire_at_ns = fire_at
        ex.timers.append(timer)
        rt.recorder.emit(
            run,
            EventKind.TIMER_STARTED,
            ex,
            {
                "timer_index": position,
                "condition_id": condition.condition_id,
                "duration_s": timer.duration_s,
                "fire_at_ns": fire_at,
            },
            method="",
            attempt=0,
        )
        if fire_at <= rt.now():
            # Due already (a zero timer on a whole second): it has fired for the first check (R38).
            timer.done = True
            payload = {"timer_index": position, "condition_id": condition.condition_id}
            rt.recorder.emit(run, EventKind.TIMER_FIRED, ex, payload, method="", attempt=0)
            return
        timer.handle = rt.scheduler.call_at(fire_at, TimerFired.of(rt, run, ex, timer))

    def complete_timer(self, run: FlowRun, ex: Execution, timer: TimerState, skipped: bool) -> bool:
        """Fire (or skip) one pending timer and re-check its execution (R126, R127)."""
        if timer.done or ex.phase is not Phase.WAITING or not run.is_open:
            return False
        timer.done = True
        if timer.handle is not None:
            timer.handle.cancel()
        kind = EventKind.TIMER_SKIPPED if skipped else EventKind.TIMER_FIRED
        payload = {"timer_index": timer.index, "condition_id": timer.condition_id}
        self._k.recorder.emit(run, kind, ex, payload, method="", attempt=0)
        self.try_satisfy(run, ex)
        return True

    def fire_timer(self, unit: Unit) -> None:
        """A TimerFired unit: the timer fires (unless it was skipped or its Wait ended)."""
        self.complete_timer(unit[1], unit[2], unit[3], False)

    def apply_stale_skips(self, run: FlowRun, ex: Execution) -> None:
        """Apply remembered skips aimed at ``ex`` now that its timers exist (R128)."""
        stale = self._k._stale_skips
        skips = stale.get(run.run_id)
        if not skips:
            return
        keep: list[tuple[str, Any]] = []
        for execution_id, timer_id in skips:
            timer = find_timer(ex, timer_id) if execution_id == ex.execution_id else None
            if timer is None:
                keep.append((execution_id, timer_id))
            else:
                self.complete_timer(run, ex, timer, True)
        stale[run.run_id] = keep

    def done_flags(self, ex: Execution) -> list[bool]:
        """Per condition index: a Timer that fired or a SubFlow that closed."""
        assert ex.wait is not None
        flags = [False] * len(ex.wait.conditions)
        timers = iter(ex.started_timers)
        for i, condition in enumerate(ex.wait.conditions):
            if isinstance(condition, TimerCondition):
                flags[i] = next(timers).done
            elif isinstance(condition, SubFlowCondition):
                flags[i] = self.children.is_done(ex, condition)
        return flags

    def try_satisfy(self, run: FlowRun, ex: Execution) -> bool:
        """Check ``ex``'s Wait; if a candidate is ready, reserve its messages and go to Execute."""
        wait = ex.wait
        if ex._phase is not Phase.WAITING or wait is None:
            return False
        if type(wait) is SimpleWait:
            # SimpleWait.ready_count, inlined: every message of the Channel asks this.
            queues = run._queues
            queue = queues.get(wait.key) if queues else None
            available = len(queue) if queue else 0
            if available < wait.minimum:
                return False
            maximum = wait.maximum
            count = available if maximum is None or available < maximum else maximum
            self._satisfy_one(run, ex, wait.key, count)
            return True
        found = evaluate(wait, run.queues_view, self.done_flags(ex), candidates(wait))
        if found is None:
            return False
        self._satisfy(run, ex, found)
        return True

    def _satisfy(self, run: FlowRun, ex: Execution, found: Satisfaction) -> None:
        self.unregister(run, ex)
        taken: list[dict[str, Any]] = []
        for take in found.takes:
            taken.extend(_reserve(run, ex, take.channel, take.count))
        self._satisfied(run, ex, found.conditions, taken)

    def _satisfy_one(self, run: FlowRun, ex: Execution, key: str, count: int) -> None:
        """:meth:`_satisfy` for a SimpleWait: its one condition takes ``count`` messages.

        The common satisfaction (a token hand-off), so its events are built here directly, in
        the order :meth:`_satisfied` records them.
        """
        waiters = run.waiters_of(key)
        if waiters is not None:
            waiters.discard(ex)
        if count != 1 or ex._reserved is not None or ex._consumed_values is not None:
            self._satisfied(run, ex, (0,), _reserve(run, ex, key, count))
            return
        message = run.queue(key).popleft()
        ex._reserved = {key: [message]}
        ex._consumed_values = {key: [message.value]}
        taken = {"channel": message.channel, "message_id": message.message_id}
        ex.satisfied_conditions = (0,)
        rt = self._k
        now = rt.scheduler.now_ns
        timers = ex._timers
        fired = [t.index for t in timers if t.done] if timers else []
        flow_id, run_id, execution_id = run.flow_id, run.run_id, ex.execution_id
        step_type = ex.step.step_type
        satisfied = {"conditions": [0], "timers_fired": fired, "messages": [taken]}
        consumed = {"channel": message.channel, "message_id": message.message_id,
                    "consumer": execution_id}  # fmt: skip
        seq = run.seq
        run.seq = seq + 2
        rt.recorder.buffer(run).extend(
            (_new_event(Event, (seq + 1, now, _WAIT_SATISFIED, flow_id, run_id, execution_id,
                                step_type, None, None, satisfied)),
             _new_event(Event, (seq + 2, now, _MESSAGE_CONSUMED, flow_id, run_id, execution_id,
                                step_type, None, None, consumed)))
        )  # fmt: skip
        # Kernel.start_method_soon, inlined: the usual next step of a satisfied Wait.
        ex._phase = Phase.EXECUTE  # from WAITING: active either way
        ex.method = "execute"
        ex.attempt = 0
        rt.scheduler.call_soon(QueuedStart.of(rt.starter, run, ex, "execute"))

    def _satisfied(
        self, run: FlowRun, ex: Execution, conditions: tuple[int, ...], taken: list[dict[str, Any]]
    ) -> None:
        """Record the satisfied Wait and the messages it consumed, then queue Execute."""
        rt = self._k
        ex.satisfied_conditions = conditions
        rt.recorder.emit(
            run,
            EventKind.WAIT_SATISFIED,
            ex,
            {
                "conditions": list(conditions),
                "timers_fired": [t.index for t in ex.started_timers if t.done],
                "messages": taken,
            },
            method="",
            attempt=0,
        )
        consumer = ex.execution_id
        rt.recorder.emit_all(
            run,
            _MESSAGE_CONSUMED,
            ex,
            [{"channel": item["channel"], "message_id": item["message_id"], "consumer": consumer}
             for item in taken],
            method="",
            attempt=0,
        )  # fmt: skip
        rt.start_method_soon(run, ex, "execute")

    def unregister(self, run: FlowRun, ex: Execution) -> None:
        """Stop waiting: drop ``ex`` from the waiter index and cancel its timers (R129)."""
        if ex.wait is not None:
            for key in {c.physical_name for c in ex.wait.channel_conditions}:
                waiters = run.waiters_of(key)
                if waiters is not None:
                    waiters.discard(ex)
        for timer in ex.started_timers:
            if timer.handle is not None:
                timer.handle.cancel()

    def wake(self, run: FlowRun, channels: Collection[str]) -> None:
        """Offer new messages of ``channels`` to their waiters, picked by the chooser (R46, R168).

        A chosen start then a forward probe: no list of all waiters is built, and the loop
        stops as soon as the queue is empty.
        """
        queues = run._queues
        if not queues:
            return
        chooser = self._k.chooser
        for key in channels if len(channels) == 1 else sorted(channels):
            # FlowRun.waiters_of, inlined for the run's first Channel.
            waiters = run._first_waiters if key == run._first_channel else run.waiters_of(key)
            queue = queues.get(key)
            if not waiters or not queue:
                continue
            if len(waiters) == 1:
                wait = waiters[0].wait
                # A join waiting for many messages is offered each one: most offers fail on
                # the count alone, which needs no call.
                if type(wait) is not SimpleWait or len(queue) >= wait.minimum:
                    self.try_satisfy(run, waiters[0])
                continue
            unready: set[str] = set()
            while waiters and queue and len(unready) < len(waiters):
                items = waiters
                position = chooser.waiter(items, unready) if len(items) > 1 else 0
                while items[position].execution_id in unready:
                    position = (position + 1) % len(items)
                ex = items[position]
                if not self.try_satisfy(run, ex):
                    unready.add(ex.execution_id)

    def return_reserved(
        self, run: FlowRun, executions: list[Execution]
    ) -> dict[str, list[Message]]:
        """Put canceled consumers' reserved messages back at the front, oldest first (R57)."""
        returned: dict[str, list[Message]] = {}
        for ex in executions:
            if not ex.holds_messages:
                continue
            for key, messages in ex.reserved.items():
                returned.setdefault(key, []).extend(messages)
            ex.reserved = {}
        for key, messages in returned.items():
            messages.sort(key=lambda m: m.number)
            run.queue(key).extendleft(reversed(messages))
        return returned


def _reserve(run: FlowRun, ex: Execution, key: str, count: int) -> list[dict[str, Any]]:
    """Take ``count`` messages from the front of ``key``'s queue and hold them for Execute."""
    queue = run.queue(key)
    messages = [queue.popleft() for _ in range(count)]
    ex.reserved.setdefault(key, []).extend(messages)
    ex.consumed_values.setdefault(key, []).extend([m.value for m in messages])
    return [{"channel": m.channel, "message_id": m.message_id} for m in messages]


def find_timer(ex: Execution, timer_id: Any) -> Any:
    """The TimerState of ``ex`` selected by a TimerId, or None."""
    if timer_id.condition_id is not None:
        return next((t for t in ex.timers if t.condition_id == timer_id.condition_id), None)
    index = timer_id.condition_index
    return ex.timers[index] if index is not None and index < len(ex.timers) else None
