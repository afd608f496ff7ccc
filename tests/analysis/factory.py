"""Test support: build realistic histories by hand, event by event, per docs/history-format.md.

``HistoryBuilder`` emits the engine's events in the documented order (a commit's Completed event,
then its MessagePublished events, then cancellations, then StepExecutionCreated for the next
Steps; a satisfied wait is WaitSatisfied followed by one MessageConsumed per message).
``contract_edit_history`` scripts a whole ContractEditFlow run with one token;
``overlapping_token_history`` scripts one where two tokens let two reviewers in at once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dexviz.history import Event, EventKind, History

EPOCH_NS = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z, the simulation epoch
SECOND = 10**9
TOKEN = "contractEditToken"
FINISHED = "contractEditFinished"

RELEASE = "ReleaseContractEditToken"
CONTRACT_EDIT_STEPS = (
    ("StartContractEdits", False, "Start one edit path per contract edit.", None),
    ("EnterContractEdit", True, "Takes the token and hands off.", RELEASE),
    ("EditContract", False, "The first Step that works on the contract.", RELEASE),
    ("SaveContractEdit", False, "The last Step of the section.", RELEASE),
    (RELEASE, False, "Report the failed edit and release the token.", None),
    ("FinishContractEdits", True, "Wait for every edit to report.", None),
)


def contract_edit_spec() -> dict[str, Any]:
    """The ``flow`` payload of ContractEditFlow's FlowStartedOrContinued event."""
    return {
        "flow_type": "ContractEditFlow",
        "start_step": "StartContractEdits",
        "steps": [
            {"step_type": name, "has_wait_for": wait, "description": doc,
             "execute_failure_proceed_to": recovery}
            for name, wait, doc, recovery in CONTRACT_EDIT_STEPS
        ],
        "channels": [
            {"name": TOKEN, "kind": "channel", "value_type": "str"},
            {"name": FINISHED, "kind": "channel", "value_type": "ContractEditRecord"},
        ],
        "attributes": [],
        "rpcs": [],
        "module": "dexviz.examples.contract_edit",
        "qualname": "ContractEditFlow",
        "source_file": None,
    }


@dataclass
class HistoryBuilder:
    """Emits events with increasing ``seq`` on a virtual clock (``now``, in ns)."""

    flow_id: str = "contract-edit"
    run_id: str = "run-1"
    now: int = EPOCH_NS
    events: list[Event] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    message_counter: int = 0
    types: dict[str, str] = field(default_factory=dict)

    # ---------------------------------------------------------------- plumbing
    def advance(self, seconds: float) -> None:
        self.now += int(seconds * SECOND)

    def emit(self, kind: EventKind | str, execution_id: str | None = None, *,
             method: str | None = None, attempt: int | None = None, **payload: Any) -> Event:
        event = Event(len(self.events) + 1, self.now, kind, self.flow_id, self.run_id,
                      execution_id, self.types.get(execution_id or ""), method, attempt, payload)
        self.events.append(event)
        return event

    def history(self) -> History:
        return History(self.events)

    # ---------------------------------------------------------------- flow
    def start(self, spec: dict[str, Any], flow_input: Any,
              start_step: str | None = None) -> str | None:
        self.emit(EventKind.FLOW_STARTED_OR_CONTINUED, flow=spec, input=flow_input,
                  start_execution_id=None, initial_attributes=[], timeout_s=None,
                  timeout_policy=None, mode="simulation", seed=0, continued=False)
        step = start_step or spec.get("start_step")
        if step is None:
            return None
        return self.create(step, flow_input, "__start__", reason="start")

    def create(self, step_type: str, value: Any, parent: str, *, reason: str = "decision",
               has_wait_for: bool = False) -> str:
        self.counters[step_type] += 1
        execution_id = f"{step_type}-{self.counters[step_type]}"
        self.types[execution_id] = step_type
        self.emit(EventKind.STEP_EXECUTION_CREATED, execution_id, input=value,
                  from_execution_id=parent, reason=reason, has_wait_for=has_wait_for)
        return execution_id

    def close(self, status: str = "COMPLETED", outputs: Sequence[dict[str, Any]] = (),
              error_type: str | None = None, error_message: str | None = None) -> None:
        self.emit(EventKind.FLOW_CLOSED, status=status, outputs=list(outputs),
                  error_type=error_type, error_message=error_message)

    # ---------------------------------------------------------------- methods
    def wait_for(self, execution_id: str, channel: str, label: str, *, at_least: int = 1) -> None:
        """Run one WaitFor attempt that waits on ``channel`` and commit it."""
        started = self.now
        self.emit(EventKind.ATTEMPT_STARTED, execution_id, method="wait_for", attempt=1)
        condition = {"index": 0, "kind": "channel", "channel": channel, "at_least": at_least,
                     "at_most": at_least, "label": label, "condition_id": None}
        wait = {"kind": "ALL_OF", "conditions": [condition], "combinations": []}
        self.emit(EventKind.STEP_WAIT_FOR_COMPLETED, execution_id, method="wait_for", attempt=1,
                  started_ns=started, attempts=1, wait=wait, writes=[], published=[], locals={},
                  events={})

    def satisfy(self, execution_id: str, messages: Sequence[tuple[str, str]]) -> None:
        """The execution's wait is satisfied, taking ``messages`` [(channel, message_id)]."""
        self.emit(EventKind.WAIT_SATISFIED, execution_id, conditions=[0], timers_fired=[],
                  messages=[{"channel": c, "message_id": m} for c, m in messages])
        for channel, message_id in messages:
            self.emit(EventKind.MESSAGE_CONSUMED, execution_id, channel=channel,
                      message_id=message_id, consumer=execution_id)

    def start_attempt(self, execution_id: str, method: str = "execute", attempt: int = 1) -> None:
        self.emit(EventKind.ATTEMPT_STARTED, execution_id, method=method, attempt=attempt)

    def fail_attempt(self, execution_id: str, method: str = "execute", attempt: int = 1, *,
                     message: str = "boom", retry_delay_s: float | None = None) -> None:
        delay = None if retry_delay_s is None else int(retry_delay_s * SECOND)
        self.emit(EventKind.ATTEMPT_FAILED, execution_id, method=method, attempt=attempt,
                  error_type="dexviz.examples.contract_edit.ContractEditError",
                  error_message=message, reason="error", final=delay is None,
                  retry_at_ns=None if delay is None else self.now + delay, retry_delay_ns=delay)

    def publish(self, publisher: str, channel: str, value: Any) -> str:
        self.message_counter += 1
        message_id = f"m-{self.message_counter}"
        self.emit(EventKind.MESSAGE_PUBLISHED, publisher if "-" in publisher else None,
                  channel=channel, message_id=message_id, value=value, publisher=publisher)
        return message_id

    def complete_execute(self, execution_id: str, kind: str, *, started: int, attempts: int = 1,
                         next_steps: Sequence[tuple[str, Any, bool]] = (),
                         publish: Sequence[tuple[str, Any]] = (), output: Any = None,
                         canceled: Sequence[tuple[str, str]] = ()) -> tuple[list[str], list[str]]:
        """Commit an Execute: Completed, MessagePublished, cancellations, then next Steps.

        Returns the published message ids and the created execution ids.
        """
        next_ids = [f"{t}-{self.counters[t] + 1 + sum(1 for n, _, _ in next_steps[:i] if n == t)}"
                    for i, (t, _, _) in enumerate(next_steps)]
        decision = {"kind": kind, "next": [
            {"step_type": t, "execution_id": nid, "input": v}
            for (t, v, _), nid in zip(next_steps, next_ids, strict=True)],
            "has_output": output is not None, "reason": None, "canceling_steps": [],
            "canceling_sibling_steps": [], "canceled": [c for c, _ in canceled]}
        if output is not None:
            decision["output"] = output
        published = [f"m-{self.message_counter + i + 1}" for i in range(len(publish))]
        self.emit(EventKind.STEP_EXECUTE_COMPLETED, execution_id, method="execute",
                  attempt=attempts, started_ns=started, attempts=attempts, decision=decision,
                  writes=[], published=published, events={})
        for channel, value in publish:
            self.publish(execution_id, channel, value)
        for target, phase in canceled:
            self.emit(EventKind.EXECUTION_CANCELED, target, by=execution_id, phase=phase,
                      returned=[])
        created = [self.create(t, v, execution_id, has_wait_for=w) for t, v, w in next_steps]
        assert created == next_ids, (created, next_ids)
        return published, created

    def fail_execute(self, execution_id: str, *, started: int, attempts: int,
                     recovery: str | None) -> str | None:
        recovery_id = None if recovery is None else f"{recovery}-{self.counters[recovery] + 1}"
        self.emit(EventKind.STEP_EXECUTE_FAILED, execution_id, method="execute", attempt=attempts,
                  error_type="dexviz.examples.contract_edit.ContractEditError",
                  error_message="contract edit failed", attempts=attempts, started_ns=started,
                  recovery_execution_id=recovery_id)
        if recovery is None:
            return None
        parent_input = next(e.payload.get("input") for e in self.events
                            if e.kind == EventKind.STEP_EXECUTION_CREATED
                            and e.execution_id == execution_id)
        created = self.create(recovery, parent_input, execution_id, reason="recovery")
        assert created == recovery_id
        return created


# -------------------------------------------------------------------- scripted runs


def sample_edit(number: int) -> dict[str, Any]:
    """The JSON-ready input of reviewer ``number``, flagged as ``sample_edits`` does."""
    return {"reviewer": f"reviewer-{number}", "should_fail_handoff": number % 8 == 2,
            "should_fail_edit": number % 8 == 4, "should_withdraw": number % 8 == 6,
            "started_at_millis": 0}


def _record(b: HistoryBuilder, edit: dict[str, Any], outcome: str, started: int) -> dict[str, Any]:
    return {"reviewer": edit["reviewer"], "outcome": outcome, "started_at_millis": started // 10**6,
            "finished_at_millis": b.now // 10**6}


def _release(b: HistoryBuilder, release: str, edit: dict[str, Any]) -> tuple[str, str]:
    started = b.now
    b.start_attempt(release)
    published, _ = b.complete_execute(
        release, "DEAD_END", started=started,
        publish=[(FINISHED, _record(b, edit, "failed", b.now)), (TOKEN, "contract")])
    return published[1], published[0]


def _retry_twice(b: HistoryBuilder, execution_id: str, hold_s: float) -> None:
    b.advance(hold_s)
    b.fail_attempt(execution_id, retry_delay_s=1)
    b.advance(1)
    b.start_attempt(execution_id, attempt=2)
    b.advance(hold_s)
    b.fail_attempt(execution_id, attempt=2)


def hold_section(b: HistoryBuilder, enter: str, edit: dict[str, Any]) -> tuple[str, str]:
    """Script one reviewer's section after its wait took the token.

    Returns the token's new message id and the id of the reviewer's finished record.
    """
    started = b.now
    b.start_attempt(enter)
    if edit["should_fail_handoff"]:
        _retry_twice(b, enter, 0)
        release = b.fail_execute(enter, started=started, attempts=2,
                                 recovery="ReleaseContractEditToken")
        assert release is not None
        return _release(b, release, edit)
    _, (edit_id,) = b.complete_execute(enter, "NEXT", started=started,
                                       next_steps=[("EditContract", edit, False)])
    started = b.now
    b.start_attempt(edit_id)
    if edit["should_withdraw"]:
        published, _ = b.complete_execute(
            edit_id, "DEAD_END", started=started,
            publish=[(FINISHED, _record(b, edit, "withdrawn", started)), (TOKEN, "contract")])
        return published[1], published[0]
    b.advance(2)
    _, (save,) = b.complete_execute(edit_id, "NEXT", started=started,
                                    next_steps=[("SaveContractEdit", edit, False)])
    save_started = b.now
    b.start_attempt(save)
    if edit["should_fail_edit"]:
        _retry_twice(b, save, 2)
        release = b.fail_execute(save, started=save_started, attempts=2,
                                 recovery="ReleaseContractEditToken")
        assert release is not None
        return _release(b, release, edit)
    b.advance(2)
    published, _ = b.complete_execute(
        save, "DEAD_END", started=save_started,
        publish=[(FINISHED, _record(b, edit, "saved", started)), (TOKEN, "contract")])
    return published[1], published[0]


def _begin(b: HistoryBuilder, count: int, tokens: int) -> tuple[list[str], str, list[str]]:
    edits = [sample_edit(n) for n in range(1, count + 1)]
    start = b.start(contract_edit_spec(), edits)
    assert start is not None
    b.start_attempt(start)
    published, created = b.complete_execute(
        start, "NEXT", started=b.now,
        next_steps=[("EnterContractEdit", e, True) for e in edits]
        + [("FinishContractEdits", count, True)],
        publish=[(TOKEN, "contract")] * tokens)
    enters, finish = created[:-1], created[-1]
    for enter in enters:
        b.wait_for(enter, TOKEN, "contractEditToken.for 1")
    b.wait_for(finish, FINISHED, "contractEditFinished.for edit_count", at_least=count)
    return enters, finish, published


def _finish(b: HistoryBuilder, finish: str, finished: list[str]) -> None:
    b.satisfy(finish, [(FINISHED, m) for m in finished])
    started = b.now
    b.start_attempt(finish)
    output = [{"message_id": m} for m in finished]
    b.complete_execute(finish, "GRACEFUL_COMPLETE", started=started, output=output)
    b.emit(EventKind.COMPLETION_REQUESTED, finish, has_output=True, output=output)
    b.close("COMPLETED", [{"step_type": "FinishContractEdits", "execution_id": finish,
                           "value": output}])


def contract_edit_history(count: int = 8, order: Sequence[int] | None = None) -> History:
    """A whole ContractEditFlow run with one token: reviewers enter in ``order`` (1-based).

    Reviewer 2 fails its handoff twice (recovery releases), 4 fails its save twice (recovery
    releases), 6 withdraws; every section holds the token from its consume to its release.
    """
    b = HistoryBuilder()
    enters, finish, (token,) = _begin(b, count, tokens=1)
    finished: list[str] = []
    for number in order or range(1, count + 1):
        b.satisfy(enters[number - 1], [(TOKEN, token)])
        token, record = hold_section(b, enters[number - 1], sample_edit(number))
        finished.append(record)
    _finish(b, finish, finished)
    return b.history()


def overlapping_token_history() -> History:
    """Three reviewers and, wrongly, two tokens: EnterContractEdit-1 and -2 hold at once.

    Both take a token at t=0 and edit side by side until both saves release at t=4; reviewer 3
    then takes a token and edits alone (t=4..8). Exactly one overlapping pair.
    """
    b = HistoryBuilder(flow_id="contract-edit-two-tokens")
    edits = {1: sample_edit(1), 3: sample_edit(3), 5: sample_edit(5)}
    enters, finish, tokens = _begin(b, 3, tokens=2)
    b.satisfy(enters[0], [(TOKEN, tokens[0])])
    b.satisfy(enters[1], [(TOKEN, tokens[1])])
    edit_ids, saves = [], []
    for enter, number in zip(enters[:2], (1, 3), strict=True):
        b.start_attempt(enter)
        _, (edit_id,) = b.complete_execute(enter, "NEXT", started=b.now,
                                           next_steps=[("EditContract", edits[number], False)])
        b.start_attempt(edit_id)
        edit_ids.append(edit_id)
    b.advance(2)
    for edit_id, number in zip(edit_ids, (1, 3), strict=True):
        _, (save,) = b.complete_execute(edit_id, "NEXT", started=b.now - 2 * SECOND,
                                        next_steps=[("SaveContractEdit", edits[number], False)])
        b.start_attempt(save)
        saves.append(save)
    b.advance(2)
    finished, released = [], []
    for save, number in zip(saves, (1, 3), strict=True):
        published, _ = b.complete_execute(
            save, "DEAD_END", started=b.now - 2 * SECOND,
            publish=[(FINISHED, _record(b, edits[number], "saved", b.now - 4 * SECOND)),
                     (TOKEN, "contract")])
        finished.append(published[0])
        released.append(published[1])
    b.satisfy(enters[2], [(TOKEN, released[0])])
    _, record = hold_section(b, enters[2], edits[5])
    _finish(b, finish, [*finished, record])
    return b.history()


def cancel(b: HistoryBuilder, execution_id: str, *, by: str, phase: str,
           returned: Sequence[tuple[str, str]] = ()) -> None:
    """Emit an ExecutionCanceled and the MessageReturned events of its reserved messages."""
    b.emit(EventKind.EXECUTION_CANCELED, execution_id, by=by, phase=phase,
           returned=[m for _, m in returned])
    for channel, message_id in returned:
        b.emit(EventKind.MESSAGE_RETURNED, execution_id, channel=channel,
               message_id=message_id, **{"from": execution_id})


def canceled_holder_history() -> History:
    """A holder canceled mid-Execute gives the token back at the front (R57, R170).

    Start publishes the token and creates Enter-1, Enter-2 and a Canceller. Enter-1 takes the
    token and runs a 3 s Execute; at t=1 the Canceller's decision cancels Enter-1, which returns
    the token; Enter-2 then takes it and saves at t=1..5. The Flow is force-completed at t=5
    while Late-1 is still waiting.
    """
    b = HistoryBuilder(flow_id="canceled-holder")
    start = b.start(contract_edit_spec(), [sample_edit(1), sample_edit(3)])
    assert start is not None
    b.start_attempt(start)
    (token,), (enter1, enter2, canceller, late) = b.complete_execute(
        start, "NEXT", started=b.now, publish=[(TOKEN, "contract")],
        next_steps=[("EnterContractEdit", sample_edit(1), True),
                    ("EnterContractEdit", sample_edit(3), True),
                    ("Canceller", None, False), ("Late", None, True)])
    for enter in (enter1, enter2):
        b.wait_for(enter, TOKEN, "contractEditToken.for 1")
    b.wait_for(late, FINISHED, "contractEditFinished.for 1")
    b.satisfy(enter1, [(TOKEN, token)])
    b.start_attempt(enter1)
    b.start_attempt(canceller)
    b.advance(1)
    b.complete_execute(canceller, "DEAD_END", started=b.now - SECOND)
    cancel(b, enter1, by=canceller, phase="execute", returned=[(TOKEN, token)])
    b.satisfy(enter2, [(TOKEN, token)])
    b.start_attempt(enter2)
    b.advance(4)
    published, _ = b.complete_execute(enter2, "FORCE_COMPLETE", started=b.now - 4 * SECOND,
                                      publish=[(TOKEN, "contract")], output="done",
                                      canceled=[(late, "waiting")])
    b.close("COMPLETED", [{"step_type": "EnterContractEdit", "execution_id": enter2,
                           "value": "done"}])
    return b.history()


def early_release_history() -> History:
    """Two reviewers, one token, and a section that hands the token back too early.

    EditContract-1 publishes the token at t=2 while its SaveContractEdit-1 still works until
    t=4 (the broken variant's bug); EnterContractEdit-2 takes the token at t=2. The holdings do
    not overlap (0..2 and 2..), but the sections the explorer measures do, from t=2 to t=4.
    """
    b = HistoryBuilder(flow_id="contract-edit-early-release")
    edits = {1: sample_edit(1), 2: sample_edit(2)}
    enters, finish, (token,) = _begin(b, 2, tokens=1)
    b.satisfy(enters[0], [(TOKEN, token)])
    b.start_attempt(enters[0])
    _, (edit_id,) = b.complete_execute(enters[0], "NEXT", started=b.now,
                                       next_steps=[("EditContract", edits[1], False)])
    started = b.now
    b.start_attempt(edit_id)
    b.advance(2)
    (released,), (save,) = b.complete_execute(
        edit_id, "NEXT", started=started, publish=[(TOKEN, "contract")],
        next_steps=[("SaveContractEdit", edits[1], False)])
    b.satisfy(enters[1], [(TOKEN, released)])
    save_started = b.now
    b.start_attempt(save)
    b.advance(2)
    (first,), _ = b.complete_execute(save, "DEAD_END", started=save_started,
                                     publish=[(FINISHED, _record(b, edits[1], "saved", started))])
    _, second = hold_section(b, enters[1], edits[2])
    _finish(b, finish, [first, second])
    return b.history()
