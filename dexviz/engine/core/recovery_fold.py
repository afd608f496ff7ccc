"""The recovery fold: one run's stored events folded into the state its last commit left.

Every state change the engine makes is described by the events of the commit that makes it, so
the state of a run at its last commit is a pure function of its events. This module computes
it, as the plain records of :mod:`dexviz.engine.core.recovery_records`, with the shared
execution-phase fold of :mod:`dexviz.history.phases`; :mod:`dexviz.engine.recovery` turns it
back into a live run.
"""

from __future__ import annotations

from typing import Any

from dexviz.engine.core.recovery_records import ExecutionFold, RunFold, StoredMessage, StoredTimer
from dexviz.history.event import Event
from dexviz.history.fold import split_runs as split_runs
from dexviz.history.kinds import EventKind
from dexviz.history.phases import PhaseFold

_CANCEL_BATCH = frozenset({EventKind.EXECUTION_CANCELED, EventKind.MESSAGE_RETURNED})


def fold_run(
    events: list[Event],
    earlier: dict[str, StoredMessage] | None = None,
    previous: RunFold | None = None,
) -> RunFold:
    """Fold one run's events.

    ``earlier``: the messages of earlier runs (a time travel resumes reserved ones);
    ``previous``: the fold of the run before, which a continue-as-new run carries on.
    """
    fold = RunFold(events[0].run_id)
    first = events[0].payload if events[0].kind == EventKind.FLOW_STARTED_OR_CONTINUED else {}
    if previous is not None and first.get("reason") == "continue_as_new":
        _carry(fold, previous)
    _RunFolder(fold, dict(earlier or {})).apply_all(events)
    _flush_returned(fold)
    return fold


class _RunFolder(PhaseFold[ExecutionFold]):
    """The shared phase fold, plus the run's queues, Attributes and close and each attempt."""

    def __init__(self, fold: RunFold, known: dict[str, StoredMessage]) -> None:
        super().__init__(fold.executions)
        self.fold = fold
        self.known = known

    def apply(self, event: Event) -> None:
        """Fold one event; a cancellation's returned messages go back once its batch ends."""
        fold = self.fold
        if fold._returning and event.kind not in _CANCEL_BATCH:
            _flush_returned(fold)
        super().apply(event)
        fold.last_seq, fold.last_time_ns = event.seq, event.time_ns

    # -- the run -----------------------------------------------------------------------------
    def on_flow_started_or_continued(self, event: Event) -> None:
        """The run's start: its Flow, timeout, initial Attributes and carried messages."""
        _started(self.fold, event)
        for message in event.payload.get("pending_messages", ()):
            _publish(self.fold, message, self.known)

    def on_message_published(self, event: Event) -> None:
        """The message joins the back of its queue."""
        _publish(self.fold, event.payload, self.known)

    def on_completion_requested(self, event: Event) -> None:
        """The run will complete gracefully, with this Step's output if it gave one."""
        fold, payload = self.fold, event.payload
        fold.graceful_requested = True
        if payload.get("has_output") and payload.get("output") is not None:
            fold.completions.append(
                (event.step_type or "", event.execution_id or "", payload["output"])
            )

    def on_flow_closed(self, event: Event) -> None:
        """The run closed with this payload."""
        self.fold.closed, self.fold.closed_ns = dict(event.payload), event.time_ns

    def on_rpc_execution_completed(self, event: Event) -> None:
        """The RPC's writes."""
        _commit_writes(self.fold, event)

    # -- messages: the run's queues and the execution's reservations -------------------------
    def on_message_consumed(self, event: Event) -> None:
        """The message leaves its queue for its consumer."""
        _move(self.fold, event)
        super().on_message_consumed(event)

    def on_message_returned(self, event: Event) -> None:
        """The message goes back to the front of its queue when the batch ends."""
        _move(self.fold, event)
        super().on_message_returned(event)

    # -- executions --------------------------------------------------------------------------
    def new_execution(self, event: Event) -> ExecutionFold:
        """A record of the created execution (its phase and wait are set by the caller)."""
        payload = event.payload
        return ExecutionFold(
            event.execution_id or "", event.step_type or "", payload.get("input"),
            payload.get("from_execution_id", ""),
        )

    def on_step_execution_created(self, event: Event) -> None:
        """The execution, with the messages it resumed holding and what it carries on."""
        super().on_step_execution_created(event)
        ex = self.execution(event)
        if ex is None:
            return
        fold = self.fold
        ex.wait_registered_ns = event.time_ns
        for message_id in event.payload.get("reserved", ()):
            message = self.known.get(message_id)
            if message is not None:
                fold.held[message_id] = message
                ex.reserved.append(message_id)
        ex.recovery_error = fold.failed_routes.pop(ex.execution_id, None)
        before = fold.previous.executions.get(ex.execution_id) if fold.previous else None
        if event.payload.get("reason") == "continue_as_new" and before is not None:
            _carry_execution(ex, before)
        _count(fold, ex.execution_id)

    def on_attempt_started(self, event: Event) -> None:
        """The attempt is open; the first one's start is the execution's start."""
        super().on_attempt_started(event)
        ex = self.execution(event)
        if ex is None:
            return
        ex.method = event.method or "execute"
        ex.attempt = event.attempt or 1
        ex.attempt_open = True
        ex.retry_at_ns = None
        if ex.attempt == 1:
            ex.first_started_ns = event.time_ns

    def on_attempt_failed(self, event: Event) -> None:
        """The attempt closed; a retry is due at ``retry_at_ns`` unless it was final."""
        ex = self.execution(event)
        if ex is None:
            return
        ex.attempt_open = False
        if not event.payload.get("final"):
            ex.retry_at_ns = event.payload.get("retry_at_ns") or event.time_ns

    def on_step_wait_for_completed(self, event: Event) -> None:
        """The writes, then the execution waits with the locals its WaitFor left."""
        _commit_writes(self.fold, event)
        super().on_step_wait_for_completed(event)
        ex = self.execution(event)
        if ex is None:
            return
        ex.attempt_open, ex.method, ex.attempt = False, "", 0
        ex.wait_registered_ns = event.time_ns
        ex.locals = dict(event.payload.get("locals", {}))

    def on_timer_started(self, event: Event) -> None:
        """The Timer's condition id, duration and deadline."""
        ex = self.execution(event)
        if ex is not None:
            p = event.payload
            ex.timers[int(p["timer_index"])] = StoredTimer(
                p.get("condition_id"), float(p["duration_s"]), int(p["fire_at_ns"])
            )

    def on_timer_fired(self, event: Event) -> None:
        """The Timer is done."""
        ex = self.execution(event)
        timer = ex.timers.get(int(event.payload["timer_index"])) if ex is not None else None
        if timer is not None:
            timer.done = True

    on_timer_skipped = on_timer_fired

    def on_wait_satisfied(self, event: Event) -> None:
        """Which conditions satisfied the wait."""
        super().on_wait_satisfied(event)
        ex = self.execution(event)
        if ex is not None:
            ex.satisfied_conditions = tuple(event.payload.get("conditions", ()))

    def on_step_wait_for_failed(self, event: Event) -> None:
        """Under PROCEED, Execute runs next with the WaitFor's error."""
        super().on_step_wait_for_failed(event)
        ex = self.execution(event)
        if ex is None:
            return
        ex.attempt_open = False
        if event.payload.get("policy") == "PROCEED":
            ex.recovery_error = (event.payload["error_type"], event.payload["error_message"])

    def on_step_execute_completed(self, event: Event) -> None:
        """The writes and deleted messages, then the execution is done."""
        _commit_writes(self.fold, event)
        super().on_step_execute_completed(event)
        ex = self.execution(event)
        if ex is not None:
            ex.attempt_open = False

    def on_step_execute_failed(self, event: Event) -> None:
        """The execution is done; a recovery execution it routes to gets its error."""
        super().on_step_execute_failed(event)
        ex = self.execution(event)
        if ex is None:
            return
        ex.attempt_open = False
        route = event.payload.get("recovery_execution_id")
        if route:
            error = (event.payload["error_type"], event.payload["error_message"])
            self.fold.failed_routes[route] = error

    def on_execution_canceled(self, event: Event) -> None:
        """The execution is canceled."""
        super().on_execution_canceled(event)
        ex = self.execution(event)
        if ex is not None:
            ex.attempt_open = False


def _commit_writes(fold: RunFold, event: Event) -> None:
    """A commit's Attribute writes and the messages it deleted."""
    for write in event.payload.get("writes", ()):
        _write(fold, write)
    _delete(fold, event.payload.get("deleted_messages", ()))


def _move(fold: RunFold, event: Event) -> None:
    """A consumed message leaves its queue for its consumer; a returned one goes back first."""
    payload = event.payload
    if event.kind == EventKind.MESSAGE_RETURNED:
        returned = fold.held.pop(payload["message_id"], None)
        if returned is not None:
            fold._returning.append(returned)
        return
    queue = fold.queue(payload["channel"])
    found = next((m for m in queue if m.message_id == payload["message_id"]), None)
    if found is not None:
        queue.remove(found)
        fold.held[found.message_id] = found


def _carry(fold: RunFold, previous: RunFold) -> None:
    """A continue-as-new run goes on with what the run before held (R13)."""
    fold.previous = previous
    fold.counters = dict(previous.counters)
    fold.completions = list(previous.completions)
    fold.graceful_requested = previous.graceful_requested
    fold.start_input = previous.start_input
    fold.retry_policy = previous.retry_policy
    fold.deadline_ns = previous.deadline_ns


def _started(fold: RunFold, event: Event) -> None:
    payload = event.payload
    if not fold.flow_type:
        fold.flow_type = payload["flow"]["flow_type"]
        fold.started_ns = event.time_ns
        fold.timeout_s = payload.get("timeout_s")
        fold.timeout_policy = payload.get("timeout_policy")
        if fold.previous is None:
            fold.start_input = payload.get("input")
            fold.retry_policy = payload.get("retry_policy")
            fold.start_delay_s = float(payload.get("start_delay_s") or 0.0)
            fold.start_execution_id = payload.get("start_execution_id")
            if fold.timeout_s:
                fold.deadline_ns = event.time_ns + int(fold.timeout_s * 1e9)
        _count(fold, fold.start_execution_id)
    for write in payload.get("initial_attributes", ()):
        _write(fold, write)


def _publish(fold: RunFold, item: Any, known: dict[str, StoredMessage]) -> None:
    fold.message_count += 1
    message = StoredMessage(item["message_id"], fold.message_count, item["channel"], item["value"])
    known[message.message_id] = message
    fold.queue(message.channel).append(message)


def _write(fold: RunFold, write: Any) -> None:
    if write.get("deleted") or write.get("value") is None:
        fold.attributes.pop(write["attribute"], None)
    else:
        fold.attributes[write["attribute"]] = write["value"]


def _delete(fold: RunFold, message_ids: Any) -> None:
    for message_id in message_ids:
        for queue in fold.queues.values():
            found = next((m for m in queue if m.message_id == message_id), None)
            if found is not None:
                queue.remove(found)
                break


def _flush_returned(fold: RunFold) -> None:
    """Reserved messages of one cancellation go back to the front, oldest first (R57)."""
    by_channel: dict[str, list[StoredMessage]] = {}
    for message in fold._returning:
        by_channel.setdefault(message.channel, []).append(message)
    for channel, messages in by_channel.items():
        messages.sort(key=lambda m: m.number)
        fold.queue(channel).extendleft(reversed(messages))
    fold._returning = []


def _carry_execution(ex: ExecutionFold, before: ExecutionFold) -> None:
    """A carried execution keeps its wait, timers, locals and start time (continue-as-new)."""
    ex.wait = before.wait
    ex.wait_registered_ns = before.wait_registered_ns
    ex.timers = {
        i: StoredTimer(t.condition_id, t.duration_s, t.fire_at_ns, t.done)
        for i, t in before.timers.items()
    }
    ex.locals = dict(before.locals)
    ex.satisfied_conditions = before.satisfied_conditions
    ex.first_started_ns = before.first_started_ns
    ex.wait_for_failed = before.wait_for_failed
    ex.recovery_error = ex.recovery_error or before.recovery_error


def _count(fold: RunFold, execution_id: str | None) -> None:
    """Execution numbers are never reused (R15): count every id the run gave out."""
    if not execution_id:
        return
    type_name, _, number = execution_id.rpartition("-")
    if number.isdigit():
        fold.counters[type_name] = max(fold.counters.get(type_name, 0), int(number))
