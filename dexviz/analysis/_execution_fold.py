"""The fold behind ``build_executions``: a HistoryFold of one run, one draft per execution."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from dexviz.analysis.execution_records import (
    Attempt,
    AttemptOutcome,
    Execution,
    ExecutionStatus,
    FlowClose,
    MessageRef,
    RunExecutions,
)
from dexviz.history import Event, EventKind
from dexviz.history.fold import HistoryFold, integer, items, mapping, text

_K = EventKind
_FAILED_KINDS = frozenset({str(_K.STEP_WAIT_FOR_FAILED), str(_K.STEP_EXECUTE_FAILED)})
_PENDING_KINDS = frozenset({str(_K.STEP_WAIT_FOR_PENDING), str(_K.STEP_EXECUTE_PENDING)})


@dataclass
class _Draft:
    execution_id: str
    step_type: str
    run_id: str
    parent: str | None = None
    reason: str | None = None
    input: Any = None
    has_wait_for: bool = False
    created_ns: int | None = None
    created_seq: int | None = None
    attempts: list[Attempt] = field(default_factory=list)
    last_method_kind: str | None = None
    running: Attempt | None = None
    wait_for_end_ns: int | None = None
    wait_start_ns: int | None = None
    wait_end_ns: int | None = None
    execute_end_ns: int | None = None
    finished_ns: int | None = None
    finished_seq: int | None = None
    wait: Mapping[str, Any] | None = None
    decision: Mapping[str, Any] | None = None
    next: list[str] = field(default_factory=list)
    consumed: list[MessageRef] = field(default_factory=list)
    published: list[MessageRef] = field(default_factory=list)
    satisfied_seq: int | None = None
    error_type: str | None = None
    error_message: str | None = None
    recovery: str | None = None
    canceled: Event | None = None

    def end_running(self, end_ns: int, outcome: AttemptOutcome) -> None:
        """Close the attempt in progress, if any, with ``outcome``."""
        if self.running is not None:
            self.attempts.append(replace(self.running, end_ns=end_ns, outcome=outcome))
            self.running = None

    def finish(self, event: Event) -> None:
        """Mark the execution finished (committed, failed terminally or canceled) at ``event``."""
        if self.finished_ns is None:
            self.finished_ns, self.finished_seq = event.time_ns, event.seq


class _Fold(HistoryFold):
    """Applies a run's events in order; ``result()`` freezes the drafts."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.drafts: dict[str, _Draft] = {}
        self.start: Event | None = None
        self.close: FlowClose | None = None
        self.last_ns = 0

    def apply(self, event: Event) -> None:
        """Fold one event into the drafts."""
        self.last_ns = event.time_ns
        super().apply(event)

    def on_flow_started_or_continued(self, event: Event) -> None:
        """The run's first start event holds its Flow spec and start time."""
        if self.start is None:
            self.start = event

    def _draft_for(self, event: Event) -> _Draft | None:
        if str(event.kind) == _K.MESSAGE_PUBLISHED:
            owner = text(event.payload, "publisher")
            return self.drafts.get(owner) if owner else None
        if event.execution_id is None:
            return None
        draft = self.drafts.get(event.execution_id)
        if draft is None:
            # An execution created in an earlier run (continue-as-new, a fork) still gets a record.
            draft = _Draft(event.execution_id, event.step_type or "", self.run_id)
            self.drafts[event.execution_id] = draft
        return draft

    def on_step_execution_created(self, event: Event) -> None:
        """Its parent, reason, input and creation; it is its parent's next."""
        draft = self._draft_for(event)
        if draft is None:
            return
        payload = event.payload
        draft.parent = text(payload, "from_execution_id")
        draft.reason = text(payload, "reason")
        draft.input = payload.get("input")
        draft.has_wait_for = bool(payload.get("has_wait_for"))
        draft.created_ns, draft.created_seq = event.time_ns, event.seq
        parent = self.drafts.get(draft.parent or "")
        if parent is not None and parent.execution_id != draft.execution_id:
            parent.next.append(draft.execution_id)

    def on_attempt_started(self, event: Event) -> None:
        """A new attempt runs (one still running was cut off)."""
        draft = self._draft_for(event)
        if draft is None:
            return
        draft.end_running(event.time_ns, AttemptOutcome.CANCELED)
        draft.running = Attempt(
            draft.execution_id, event.method or "", event.attempt or 1, event.time_ns, None,
            AttemptOutcome.RUNNING,
        )

    def on_attempt_failed(self, event: Event) -> None:
        """The attempt failed, with its error and retry."""
        draft = self._draft_for(event)
        if draft is None:
            return
        payload = event.payload
        running = draft.running or Attempt(
            draft.execution_id, event.method or "", event.attempt or 1, event.time_ns, None,
            AttemptOutcome.RUNNING,
        )
        draft.attempts.append(
            replace(
                running,
                end_ns=event.time_ns,
                outcome=AttemptOutcome.FAILED,
                error_type=text(payload, "error_type"),
                error_message=text(payload, "error_message"),
                reason=text(payload, "reason"),
                final=bool(payload.get("final")),
                retry_at_ns=integer(payload, "retry_at_ns"),
                retry_delay_ns=integer(payload, "retry_delay_ns"),
                stack_trace=text(payload, "stack_trace") or None,
            )
        )
        draft.running = None

    def on_step_wait_for_completed(self, event: Event) -> None:
        """The WaitFor attempt completed; the condition wait begins."""
        draft = self._draft_for(event)
        if draft is None:
            return
        draft.end_running(event.time_ns, AttemptOutcome.COMPLETED)
        draft.last_method_kind = str(event.kind)
        draft.has_wait_for = True
        draft.wait_for_end_ns = draft.wait_start_ns = event.time_ns
        draft.wait = mapping(event.payload, "wait")

    def on_step_wait_for_failed(self, event: Event) -> None:
        """The WaitFor failed for good (finished unless it proceeds)."""
        draft = self._draft_for(event)
        if draft is None:
            return
        draft.end_running(event.time_ns, AttemptOutcome.FAILED)
        draft.last_method_kind = str(event.kind)
        draft.has_wait_for = True
        draft.wait_for_end_ns = event.time_ns
        draft.error_type = text(event.payload, "error_type")
        draft.error_message = text(event.payload, "error_message")
        if text(event.payload, "policy") != "PROCEED":
            draft.finish(event)

    def on_wait_satisfied(self, event: Event) -> None:
        """The wait ended and took these messages."""
        draft = self._draft_for(event)
        if draft is None:
            return
        draft.wait_end_ns = event.time_ns
        draft.satisfied_seq = event.seq
        for message in items(event.payload, "messages"):
            if isinstance(message, Mapping):
                ref = MessageRef(str(message.get("channel")), str(message.get("message_id")))
                draft.consumed.append(ref)

    def on_step_execute_completed(self, event: Event) -> None:
        """The Execute committed its decision: finished."""
        draft = self._draft_for(event)
        if draft is None:
            return
        draft.end_running(event.time_ns, AttemptOutcome.COMPLETED)
        draft.last_method_kind = str(event.kind)
        draft.execute_end_ns = event.time_ns
        draft.decision = mapping(event.payload, "decision")
        draft.finish(event)

    def on_step_execute_failed(self, event: Event) -> None:
        """The Execute failed for good: finished, maybe routed."""
        draft = self._draft_for(event)
        if draft is None:
            return
        draft.end_running(event.time_ns, AttemptOutcome.FAILED)
        draft.last_method_kind = str(event.kind)
        draft.execute_end_ns = event.time_ns
        draft.error_type = text(event.payload, "error_type")
        draft.error_message = text(event.payload, "error_message")
        draft.recovery = text(event.payload, "recovery_execution_id")
        draft.finish(event)

    def on_step_wait_for_pending(self, event: Event) -> None:
        """The attempt was cut off by the end of the run."""
        draft = self._draft_for(event)
        if draft is None:
            return
        draft.end_running(event.time_ns, AttemptOutcome.PENDING)
        draft.last_method_kind = str(event.kind)

    def on_execution_canceled(self, event: Event) -> None:
        """Canceled: the attempt running ends, the execution finishes."""
        draft = self._draft_for(event)
        if draft is None:
            return
        if draft.canceled is None:
            draft.canceled = event
        draft.end_running(event.time_ns, AttemptOutcome.CANCELED)
        draft.finish(event)

    def on_message_published(self, event: Event) -> None:
        """A message its commit published."""
        draft = self._draft_for(event)
        if draft is None:
            return
        payload = event.payload
        ref = MessageRef(str(payload.get("channel")), str(payload.get("message_id")))
        draft.published.append(ref)

    def on_flow_closed(self, event: Event) -> None:
        """The run's close; attempts still running end as pending."""
        payload = event.payload
        outputs = tuple(o for o in items(payload, "outputs") if isinstance(o, Mapping))
        self.close = FlowClose(
            str(payload.get("status", "")), event.time_ns, event.seq, text(payload, "error_type"),
            text(payload, "error_message"), outputs,
        )
        for draft in self.drafts.values():
            draft.end_running(event.time_ns, AttemptOutcome.PENDING)

    on_step_execute_pending = on_step_wait_for_pending

    def result(self, events: tuple[Event, ...]) -> RunExecutions:
        """Freeze the drafts into a RunExecutions."""
        start_ns = self.start.time_ns if self.start else (events[0].time_ns if events else 0)
        end_ns = self.close.time_ns if self.close else self.last_ns
        spec = mapping(self.start.payload, "flow") if self.start else {}
        return RunExecutions(
            flow_id=events[0].flow_id if events else "",
            run_id=self.run_id,
            flow_type=str(spec.get("flow_type", "")),
            start_ns=start_ns,
            end_ns=end_ns,
            close=self.close,
            events=events,
            spec=spec,
            executions={key: _freeze(d, end_ns) for key, d in self.drafts.items()},
        )


def _status(draft: _Draft) -> ExecutionStatus:
    last = draft.last_method_kind
    if draft.canceled is not None:
        return ExecutionStatus.CANCELED
    if last in _PENDING_KINDS:
        return ExecutionStatus.PENDING
    if last in _FAILED_KINDS:
        return ExecutionStatus.FAILED
    if last == _K.STEP_EXECUTE_COMPLETED:
        return ExecutionStatus.COMPLETED
    if draft.wait_end_ns is not None or (draft.running and draft.running.method == "execute"):
        return ExecutionStatus.ACTIVE
    if last == _K.STEP_WAIT_FOR_COMPLETED:
        return ExecutionStatus.WAITING
    if draft.running is not None or draft.attempts:
        return ExecutionStatus.ACTIVE
    return ExecutionStatus.PENDING


def _outcome(draft: _Draft) -> str | None:
    if draft.canceled is not None:
        return "CANCELED"
    if draft.decision is not None:
        return str(draft.decision.get("kind", "")) or None
    if draft.last_method_kind in _FAILED_KINDS:
        return "FAILED"
    if draft.last_method_kind in _PENDING_KINDS:
        return "PENDING"
    return None


def _method_window(
    attempts: tuple[Attempt, ...], method: str, end_ns: int | None
) -> tuple[int | None, int | None]:
    mine = [a for a in attempts if a.method == method]
    if not mine:
        return None, None
    last_end = mine[-1].end_ns
    return mine[0].start_ns, end_ns if end_ns is not None else last_end


def _wait_end(draft: _Draft, run_end_ns: int) -> int | None:
    """When the condition wait ended: satisfied, cut by a cancellation, or open to the end."""
    if draft.wait_start_ns is None or draft.wait_end_ns is not None:
        return draft.wait_end_ns
    if draft.canceled is not None:
        return draft.canceled.time_ns
    return run_end_ns if draft.finished_ns is None else None


def _freeze(draft: _Draft, run_end_ns: int) -> Execution:
    attempts = tuple(draft.attempts) + ((draft.running,) if draft.running else ())
    canceled = draft.canceled
    wait_for = _method_window(attempts, "wait_for", draft.wait_for_end_ns)
    execute = _method_window(attempts, "execute", draft.execute_end_ns)
    return Execution(
        execution_id=draft.execution_id,
        step_type=draft.step_type,
        run_id=draft.run_id,
        parent=draft.parent,
        reason=draft.reason,
        input=draft.input,
        has_wait_for=draft.has_wait_for,
        created_ns=draft.created_ns,
        created_seq=draft.created_seq,
        status=_status(draft),
        outcome=_outcome(draft),
        attempts=attempts,
        wait_for_start_ns=wait_for[0],
        wait_for_end_ns=wait_for[1],
        wait_start_ns=draft.wait_start_ns,
        wait_end_ns=_wait_end(draft, run_end_ns),
        execute_start_ns=execute[0],
        execute_end_ns=execute[1],
        finished_ns=draft.finished_ns,
        finished_seq=draft.finished_seq,
        wait=draft.wait,
        decision=draft.decision,
        next=tuple(draft.next),
        consumed=tuple(draft.consumed),
        published=tuple(draft.published),
        satisfied_seq=draft.satisfied_seq,
        error_type=draft.error_type,
        error_message=draft.error_message,
        recovery=draft.recovery,
        canceled_by=text(canceled.payload, "by") if canceled else None,
        canceled_phase=text(canceled.payload, "phase") if canceled else None,
        canceled_ns=canceled.time_ns if canceled else None,
    )


def fold_run(run_id: str, events: tuple[Event, ...]) -> RunExecutions:
    """Fold the events of run ``run_id`` into its execution records."""
    fold = _Fold(run_id)
    for event in events:
        fold.apply(event)
    return fold.result(events)
