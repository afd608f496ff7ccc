"""Map a Dex server's events onto dexviz's History: Dex's own events plus the trace they state.

Each Dex event becomes its dexviz semantic event (docs/history-format.md) and, where the event
states it, the finer trace the views read: ``StepExecutionCreated`` (from the execution's
``fromStepExecutionId`` and its creator's event), ``AttemptStarted`` (at the first attempt's
``startedTime``), ``AttemptFailed`` for a failure, ``WaitSatisfied`` / ``MessageConsumed``
(from the Execute's condition results, at its ``startedTime``: the first moment known to follow
the wait) and ``MessagePublished``. What an event does not carry is recorded in
:class:`~dexviz.history.dex_loss.Losses`, never guessed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from dexviz.history.dex_emit import UNKNOWN_KIND, Emitter, RunState
from dexviz.history.dex_fields import (
    FLOW_TIMEOUT_POLICY,
    PENDING_PHASE,
    Fields,
    decision_kind,
    failure,
    flow_error_type,
    flow_status,
    kv_of,
    wait_of,
    writes_of,
)
from dexviz.history.dex_json import DexRawEvent
from dexviz.history.dex_loss import Losses
from dexviz.history.dex_runs import Child, Plan, at_event
from dexviz.history.dex_values import DexValueError
from dexviz.history.event import Event
from dexviz.history.kinds import EventKind

__all__ = ["UNKNOWN_KIND", "convert"]

_K = EventKind
_METHOD = {
    "StepWaitForCompleted": "wait_for", "StepWaitForFailed": "wait_for",
    "StepWaitForPending": "wait_for", "StepExecuteCompleted": "execute",
    "StepExecuteFailed": "execute", "StepExecutePending": "execute",
}  # fmt: skip


class Converter(Emitter):
    """Walks a Plan's runs in order and collects dexviz events."""

    def __init__(self, plan: Plan, losses: Losses) -> None:
        super().__init__(losses)
        self.plan = plan
        self.last_ns = 0

    # ------------------------------------------------------------------ walking
    def walk(self) -> None:
        """Convert every event of every run."""
        for run_id, events in self.plan.runs:
            self.run = RunState(run_id)
            for raw in events:
                try:
                    self.event(raw)
                except DexValueError as error:
                    raise at_event(raw, error) from None

    def event(self, raw: DexRawEvent) -> None:
        """Convert one event."""
        time_ns = raw.time_ns if raw.time_ns is not None else self.last_ns
        if raw.time_ns is None:
            self.losses.add("time", f"event {raw.index} ({raw.type}) has no eventTime; it is "
                                    "placed at the time of the event before it")
        self.last_ns = max(self.last_ns, time_ns)
        payload = Fields(raw.payload, "payload", raw.natural)
        handler = getattr(self, "_" + raw.type, None) if raw.payload is not None else None
        if handler is None or raw.type not in _HANDLED:
            self.losses.unknown(raw.type)
            self.emit(time_ns, UNKNOWN_KIND, {"dex_type": raw.type, "dex_event_id": raw.event_id,
                                              "payload": dict(raw.payload or {})})
            return
        handler(raw, time_ns, payload)

    # ------------------------------------------------------------------ the Flow
    def _FlowStartedOrContinued(self, raw: DexRawEvent, time_ns: int, p: Fields) -> None:
        self.run.start_ns = time_ns
        initial, continued = p.m("initialStart"), p.m("continuedStart")
        is_continued = p.has("continuedStart")
        attributes = (continued.ms("attributes") if is_continued
                      else initial.ms("initialAttributes"))
        payload: dict[str, Any] = {
            "flow": self.plan.spec(),
            "input": initial.value("stepInput"),
            "start_execution_id": self.plan.start_execution(self.run.run_id),
            "initial_attributes": [{"attribute": k, "value": v}
                                   for k, v in kv_of(attributes).items()],
            "timeout_s": (p.duration("flowTimeout") or 0) / 1e9 or None,
            "timeout_policy": p.enum("flowTimeoutPolicy", FLOW_TIMEOUT_POLICY).removeprefix(
                "FLOW_TIMEOUT_POLICY_") if p.has("flowTimeoutPolicy") else None,
            "mode": "live", "seed": None, "continued": is_continued,
            "dex_event_id": raw.event_id,
        }
        if is_continued:
            payload["previous_run_id"] = continued.s("previousRunId")
            payload["reason"] = "continue_as_new"
            payload["pending_messages"] = self._carried_messages(raw, continued)
        self.emit(time_ns, _K.FLOW_STARTED_OR_CONTINUED, payload)
        for child in self.plan.children_of("__start__", raw.index):
            self.create(child, time_ns, "start")
        if is_continued:
            self._resume(continued, time_ns)

    def _carried_messages(self, raw: DexRawEvent, continued: Fields) -> list[dict[str, Any]]:
        pending = continued.raw.get("pendingChannelMessages") or {}
        if not isinstance(pending, Mapping):
            pending = {}
        carried = []
        for channel, values in sorted(pending.items()):
            messages = Fields(values, f"payload.continuedStart.pendingChannelMessages.{channel}",
                              continued.natural).ms("messages")
            for number, message in enumerate(messages):
                message_id = self.message_id(message, raw, number)
                value = message.value("value")
                self.run.queues.setdefault(str(channel), deque()).append((message_id, value))
                carried.append({"channel": str(channel), "message_id": message_id,
                                "value": value})
        return carried

    def _resume(self, continued: Fields, time_ns: int) -> None:
        for resumed in continued.ms("stepsToResume"):
            execution_id = resumed.s("stepExecutionId")
            step = resumed.m("step")
            wait = wait_of(resumed.m("waitingCondition"))
            self.run.created[execution_id] = time_ns
            self.run.waited.add(execution_id)
            self.emit(time_ns, _K.STEP_EXECUTION_CREATED, {
                "input": step.value("stepInput"), "from_execution_id": None,
                "reason": "continue_as_new", "has_wait_for": True,
                "resumed_phase": "waiting", "wait": wait, "reserved": [],
            }, execution_id=execution_id, step_type=step.s("stepType"))

    def _FlowClosed(self, raw: DexRawEvent, time_ns: int, p: Fields) -> None:
        status = flow_status(p)
        outputs = [{"step_type": r.s("completedStepType"),
                    "execution_id": r.s("completedStepExecutionId"),
                    "value": r.value("completedStepOutput")} for r in p.ms("results")]
        error_type = flow_error_type(p)
        payload: dict[str, Any] = {
            "status": status, "outputs": outputs if status == "COMPLETED" else [],
            "error_type": error_type, "error_message": p.s("errorMessage") or None,
            "dex_event_id": raw.event_id,
        }
        if p.s("continuedToRunId"):
            payload["continued_to_run_id"] = p.s("continuedToRunId")
        self.emit(time_ns, _K.FLOW_CLOSED, payload)

    def _TimeTravelFork(self, raw: DexRawEvent, time_ns: int, p: Fields) -> None:
        self.emit(time_ns, _K.TIME_TRAVEL_FORK, {"previous_run_id": p.s("previousRunId"),
                                                 "dex_event_id": raw.event_id})

    # ------------------------------------------------------------------ executions
    def create(self, child: Child, time_ns: int, reason: str) -> None:
        """Emit the StepExecutionCreated of ``child`` (once per run)."""
        if child.execution_id in self.run.created:
            return
        self.run.created[child.execution_id] = time_ns
        self.emit(time_ns, _K.STEP_EXECUTION_CREATED, {
            "input": child.input, "from_execution_id": child.parent, "reason": reason,
            "has_wait_for": child.has_wait_for,
        }, execution_id=child.execution_id, step_type=child.step_type)

    def _ensure_created(self, raw: DexRawEvent, execution_id: str, started_ns: int) -> int:
        """Create an execution whose creator is not in this run; returns its creation time."""
        if execution_id not in self.run.created:
            child = self.plan.child(execution_id)
            creator_here = self.plan.creator_in_run(child, self.run.run_id)
            when = self.run.start_ns if not creator_here else started_ns
            if creator_here:
                self.losses.add("lineage", f"{execution_id}: its creator {child.parent!r} "
                                           "states no decision that made it")
            self.create(child, min(when, started_ns), "continue_as_new" if not creator_here
                        else "decision")
            del raw
        return self.run.created[execution_id]

    def _method_start(self, raw: DexRawEvent, time_ns: int, context: Fields,
                      method: str) -> tuple[str, str, int, int]:
        execution_id = context.s("stepExecutionId")
        if not execution_id:
            raise DexValueError("payload.context.stepExecutionId is missing")
        step_type = context.s("stepType") or execution_id.rsplit("-", 1)[0]
        started, duration = context.time("startedTime"), context.duration("duration")
        if started is None:
            started = time_ns - duration if duration is not None else time_ns
        created = self._ensure_created(raw, execution_id, started)
        attempts = context.i("finalAttempt") or 1
        if attempts > 1:
            self.losses.add("attempts", f"{execution_id} {method}: {attempts} attempts are "
                                        "folded into one event; only the first attempt's start "
                                        "and the last one's end are recorded")
        return execution_id, step_type, max(started, created), attempts

    def _step_event(self, raw: DexRawEvent, time_ns: int, p: Fields) -> None:
        method = _METHOD[raw.type]
        context = p.m("context")
        execution_id, step_type, started, attempts = self._method_start(
            raw, time_ns, context, method)
        who: dict[str, Any] = {"execution_id": execution_id, "step_type": step_type,
                               "method": method, "attempt": attempts}
        pending = raw.type.endswith("Pending")
        phase = p.enum("phase", PENDING_PHASE).removeprefix("PENDING_STEP_METHOD_PHASE_").lower()
        if method == "execute" and (execution_id in self.run.waited
                                    or p.m("input").has("conditionResults")):
            self._satisfied(execution_id, step_type, started, p.m("input"))
        if not pending or phase == "started":
            self.emit(started, _K.ATTEMPT_STARTED, {}, **who)
        payload: dict[str, Any] = {"started_ns": started, "attempts": attempts,
                                   "dex_event_id": raw.event_id}
        last = context.m("lastFailureInfo")
        if last.raw:
            payload["last_failure"] = failure(last)
        if pending:
            end = time_ns + (context.duration("duration") or 0)
            payload["phase"] = phase
            self.emit(max(end, time_ns), raw.type, payload, **who)
            return
        getattr(self, "_" + raw.type + "_payload")(raw, time_ns, p, payload, who)

    _StepWaitForPending = _StepExecutePending = _step_event
    _StepWaitForCompleted = _StepWaitForFailed = _step_event
    _StepExecuteCompleted = _StepExecuteFailed = _step_event

    def _StepWaitForCompleted_payload(self, raw: DexRawEvent, time_ns: int, p: Fields,
                                      payload: dict[str, Any], who: dict[str, Any]) -> None:
        output = p.m("output")
        self.run.waited.add(who["execution_id"])
        payload.update(wait=wait_of(output.m("waitForCondition")), writes=writes_of(output),
                       locals=kv_of(output.ms("upsertStepExecutionLocals")),
                       events=kv_of(output.ms("recordEvents")))
        published = self._publications(raw, output.ms("publishToChannel"))
        payload["published"] = [m["message_id"] for m in published]
        self.emit(time_ns, raw.type, payload, **who)
        self._published(time_ns, published, who["execution_id"], who)

    def _StepExecuteCompleted_payload(self, raw: DexRawEvent, time_ns: int, p: Fields,
                                      payload: dict[str, Any], who: dict[str, Any]) -> None:
        output = p.m("output")
        decision = output.m("stepDecision")
        kind = decision_kind(decision)
        movements = decision.ms("nextSteps")
        children = self.plan.children_for(who["execution_id"], raw.index,
                                          [m.s("stepType") for m in movements])
        close = decision.m("closeDecision")
        has_output = close.has("closeInput")
        payload["decision"] = {
            "kind": kind, "next": _next(movements, children),
            "has_output": has_output, "reason": "",
            "canceling_steps": decision.ss("cancelStepTypes"),
            "canceling_sibling_steps": decision.ss("cancelSiblingStepTypes"), "canceled": [],
            **({"output": close.value("closeInput")} if has_output else {}),
        }
        if decision.ss("cancelStepTypes") or decision.ss("cancelSiblingStepTypes"):
            self.losses.add("cancellations", f"{who['execution_id']}: which executions its "
                                             "cancellation reached is not recorded")
        published = self._publications(raw, output.ms("publishToChannel"))
        payload.update(writes=writes_of(output), published=[m["message_id"] for m in published],
                       events=kv_of(output.ms("recordEvents")))
        self.emit(time_ns, raw.type, payload, **who)
        self._published(time_ns, published, who["execution_id"], who)
        if kind == "GRACEFUL_COMPLETE":
            self.emit(time_ns, _K.COMPLETION_REQUESTED, {
                "has_output": has_output,
                **({"output": payload["decision"]["output"]} if has_output else {})}, **who)
        for child in children:
            self.create(child, time_ns, "decision")

    def _StepWaitForFailed_payload(self, raw: DexRawEvent, time_ns: int, p: Fields,
                                   payload: dict[str, Any], who: dict[str, Any]) -> None:
        error = failure(p.m("output").m("failure"))
        proceeds = self.plan.has_execute(who["execution_id"])
        payload.update(error_type=error["error_type"], error_message=error["error_message"],
                       policy="PROCEED" if proceeds else "FAIL_FLOW")
        self._failed(time_ns, error, who)
        self.emit(time_ns, raw.type, payload, **who)

    def _StepExecuteFailed_payload(self, raw: DexRawEvent, time_ns: int, p: Fields,
                                   payload: dict[str, Any], who: dict[str, Any]) -> None:
        error = failure(p.m("output").m("failure"))
        recovery = self.plan.children_for(who["execution_id"], raw.index, None)
        payload.update(error_type=error["error_type"], error_message=error["error_message"],
                       recovery_execution_id=recovery[0].execution_id if recovery else None)
        self._failed(time_ns, error, who)
        self.emit(time_ns, raw.type, payload, **who)
        for child in recovery:
            self.create(child, time_ns, "recovery")

    def _failed(self, time_ns: int, error: dict[str, Any], who: dict[str, Any]) -> None:
        self.emit(time_ns, _K.ATTEMPT_FAILED, {
            "error_type": error["error_type"], "error_message": error["error_message"],
            "stack_trace": error["stack_trace"], "reason": "error", "final": True,
            "retry_at_ns": None, "retry_delay_ns": None}, **who)

    # ------------------------------------------------------------------ client calls
    def _RpcExecutionCompleted(self, raw: DexRawEvent, time_ns: int, p: Fields) -> None:
        name = p.s("rpcName")
        decision = p.m("stepDecision")
        movements = decision.ms("nextSteps")
        children = self.plan.children_for(f"__rpc/{name}", raw.index,
                                          [m.s("stepType") for m in movements])
        published = self._publications(raw, p.ms("publishToChannel"))
        self.emit(time_ns, _K.RPC_EXECUTION_COMPLETED, {
            "rpc": name, "input": p.value("input"), "output": p.value("output"),
            "writes": writes_of(p), "published": [m["message_id"] for m in published],
            "next": _next(movements, children),
            "canceled": [], "is_set_attribute_api": p.b("isSetAttributeApi"),
            "dex_event_id": raw.event_id}, method="rpc")
        self._published(time_ns, published, f"rpc:{name}", {"method": "rpc"})
        for child in children:
            self.create(child, time_ns, "rpc")

    def _ChannelExternalPublish(self, raw: DexRawEvent, time_ns: int, p: Fields) -> None:
        messages = self._publications(raw, p.ms("messages"))
        self.emit(time_ns, _K.CHANNEL_EXTERNAL_PUBLISH, {"messages": messages,
                                                         "dex_event_id": raw.event_id})
        self._published(time_ns, messages, "client", {})


_HANDLED = frozenset({
    "FlowStartedOrContinued", "FlowClosed", "TimeTravelFork", "StepWaitForCompleted",
    "StepWaitForFailed", "StepWaitForPending", "StepExecuteCompleted", "StepExecuteFailed",
    "StepExecutePending", "RpcExecutionCompleted", "ChannelExternalPublish",
})  # fmt: skip


def _next(movements: list[Fields], children: list[Child]) -> list[dict[str, Any]]:
    """A decision's movements with the execution each became (None if none started)."""
    left = list(children)
    found = []
    for movement in movements:
        step_type = movement.s("stepType")
        child = next((c for c in left if c.step_type == step_type), None)
        if child is not None:
            left.remove(child)
        found.append({"step_type": step_type,
                      "execution_id": child.execution_id if child else None,
                      "input": movement.value("stepInput")})
    return found


def convert(plan: Plan, losses: Losses, flow_id: str) -> list[Event]:
    """Every event of ``plan`` as dexviz events (all or nothing: errors propagate)."""
    converter = Converter(plan, losses)
    converter.walk()
    return converter.events(flow_id)
