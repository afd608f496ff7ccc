"""Dex server histories built from the wire facts, for the tests of the Dex readers.

:class:`DexWebRun` writes one run's events as Dex Web's JSON gives them (enum numbers, int64
strings, raw Values, RFC 3339 times). :func:`contract_edit_run` is the seed's ContractEditFlow
with three reviewers as a Dex server records it; :func:`to_dexcli` rewrites Dex Web events in
dexcli's ``flow history --all`` shape.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from dexviz.history.dex_fields import (
    CLOSE_DECISION_TYPE,
    CONDITION_STATUS,
    FLOW_ERROR_TYPE,
    FLOW_STATUS,
    PENDING_PHASE,
    WAITING_CONDITION_TYPE,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
FLOW_ID = "contract-7"
RUN_ID = "0195a0c4-7d10-7c1e-9b1a-5f0c1b2d3e4f"
TOKEN, FINISHED = "contractEditToken", "contractEditFinished"


def dex_value(value: Any) -> dict[str, Any]:
    """A Python value as the Python SDK encodes it, in protojson (Dex Web's raw form)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if value is None:
        return {"nullValue": None}
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return {"objValue": {"encoding": "json",
                         "payload": base64.b64encode(text.encode()).decode()}}


def rfc3339(seconds: float) -> str:
    """T0 + ``seconds`` as Dex Web writes times (trailing zeros of the fraction dropped)."""
    moment = T0 + timedelta(seconds=seconds)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    fraction = f"{moment.microsecond:06d}".rstrip("0")
    return f"{text}.{fraction}Z" if fraction else f"{text}Z"


def edit(reviewer: int, **flags: Any) -> dict[str, Any]:
    """A ContractEdit as its JSON (sorted keys, the dataclass's field names)."""
    return {"reviewer": f"reviewer-{reviewer}", "should_fail_edit": False,
            "should_fail_handoff": False, "should_withdraw": False, "started_at_millis": 0,
            **flags}


def record(reviewer: int, outcome: str, started: int, finished: int) -> dict[str, Any]:
    """A ContractEditRecord as its JSON."""
    return {"finished_at_millis": finished, "outcome": outcome,
            "reviewer": f"reviewer-{reviewer}", "started_at_millis": started}


class DexWebRun:
    """Writes the events of one run, in Dex Web's JSON, with gapped increasing event ids."""

    def __init__(self, flow_id: str = FLOW_ID, run_id: str = RUN_ID, first_id: int = 1) -> None:
        self.flow_id, self.run_id = flow_id, run_id
        self.events: list[dict[str, Any]] = []
        self.times: list[float] = []
        self.first_id = first_id

    def add(self, kind: str, at: float, payload: dict[str, Any]) -> dict[str, Any]:
        """Append one event at T0 + ``at`` seconds."""
        event = {"eventId": 0, "eventTime": rfc3339(at), "type": kind, "payload": payload}
        self.events.append(event)
        self.times.append(at)
        self._renumber()
        return event

    def _renumber(self) -> None:
        """Events in commit (time) order, ids increasing with gaps, as the server sorts them."""
        order = sorted(range(len(self.events)), key=lambda n: (self.times[n], n))
        self.events = [self.events[n] for n in order]
        self.times = [self.times[n] for n in order]
        for number, event in enumerate(self.events):
            event["eventId"] = self.first_id + 3 * number

    def started(self, at: float, start_input: Any, *, continued: dict[str, Any] | None = None,
                ) -> None:
        """The run's FlowStartedOrContinued (a fresh start unless ``continued`` is given)."""
        payload: dict[str, Any] = {
            "flowExecutionId": {"flowId": self.flow_id, "runId": self.run_id},
            "flowType": "ContractEditFlow", "flowConfig": {"stepDurability": 1},
            "flowTimeout": "3600s", "flowTimeoutPolicy": 1,
        }
        if continued is None:
            payload["initialStart"] = {"startStepType": "StartContractEdits",
                                       "stepInput": dex_value(start_input)}
        else:
            payload["continuedStart"] = continued
        self.add("FlowStartedOrContinued", at, payload)

    @staticmethod
    def context(execution_id: str, parent: str, started: float, ended: float,
                attempt: int = 1) -> dict[str, Any]:
        """A StepMethodEventContext."""
        return {"stepExecutionId": execution_id, "fromStepExecutionId": parent,
                "stepType": execution_id.rsplit("-", 1)[0], "durability": 1,
                "finalAttempt": attempt, "startedTime": rfc3339(started),
                "duration": f"{ended - started:.6f}s"}

    def wait_for(self, execution_id: str, parent: str, started: float, ended: float,
                 step_input: Any, channel: str, count: int) -> None:
        """A StepWaitForCompleted waiting for ``count`` messages of ``channel``."""
        self.add("StepWaitForCompleted", ended, {
            "input": {"stepInput": dex_value(step_input)},
            "output": {"waitForCondition": {"waitingConditionType": 1, "channelConditions": [
                {"channelName": channel, "atLeast": count, "atMost": count}]}},
            "context": self.context(execution_id, parent, started, ended)})

    def execute(self, execution_id: str, parent: str, started: float, ended: float,
                step_input: Any, *, taken: Sequence[tuple[str, list[Any]]] = (),
                publish: Sequence[tuple[str, Any]] = (), next_steps: Sequence[tuple[str, Any]]
                = (), close: int | None = None, close_input: Any = None) -> None:
        """A StepExecuteCompleted with its decision and publications."""
        decision: dict[str, Any] = {}
        if next_steps:
            decision["nextSteps"] = [{"stepType": t, "stepInput": dex_value(v)}
                                     for t, v in next_steps]
        if close is not None:
            decision["closeDecision"] = {"closeDecisionType": close, **(
                {"closeInput": dex_value(close_input)} if close_input is not None else {})}
        output: dict[str, Any] = {"stepDecision": decision}
        if publish:
            output["publishToChannel"] = [{"channelName": c, "value": dex_value(v)}
                                          for c, v in publish]
        self.add("StepExecuteCompleted", ended, {
            "input": _input(step_input, taken), "output": output,
            "context": self.context(execution_id, parent, started, ended)})

    def execute_failed(self, execution_id: str, parent: str, started: float, ended: float,
                       step_input: Any, error: str, message: str, *, attempt: int,
                       taken: Sequence[tuple[str, list[Any]]] = ()) -> None:
        """A StepExecuteFailed after ``attempt`` attempts (retries folded)."""
        details = {"detail": message, "originalWorkerErrorType": error,
                   "originalWorkerErrorDetail": message, "originalWorkerErrorStatus": 2}
        context = self.context(execution_id, parent, started, ended, attempt)
        context["lastFailureInfo"] = {"backendError": "FLOW_ERROR_TYPE_WORKER_API_FAIL",
                                      "details": details, "attempt": attempt - 1}
        self.add("StepExecuteFailed", ended, {
            "input": _input(step_input, taken),
            "output": {"failure": {"backendError": "FLOW_ERROR_TYPE_WORKER_API_FAIL",
                                   "details": details, "attempt": attempt}},
            "context": context})

    def closed(self, at: float, status: int, **fields: Any) -> None:
        """The run's FlowClosed."""
        self.add("FlowClosed", at, {"flowStatus": status, **fields})

    def page(self, events: list[dict[str, Any]] | None = None, token: str = "") -> dict[str, Any]:
        """A Dex Web history page of ``events`` (all of them by default)."""
        events = self.events if events is None else events
        return {"events": events, "nextPageToken": token,
                "nextInternalEventId": (events[-1]["eventId"] + 1) if events else 0}


def _input(step_input: Any, taken: Sequence[tuple[str, list[Any]]]) -> dict[str, Any]:
    given: dict[str, Any] = {"stepInput": dex_value(step_input)}
    if taken:
        given["conditionResults"] = {"channelResults": [
            {"conditionStatus": 2, "channelName": c, "values": [dex_value(v) for v in values]}
            for c, values in taken]}
    return given


def contract_edit_run(*, broken: bool = False, extra_token: bool = False,
                      until: float | None = None) -> DexWebRun:
    """ContractEditFlow with three reviewers, as a Dex server records it.

    Reviewer 2 fails its handoff twice (the retries fold into one StepExecuteFailed) and is
    routed to ReleaseContractEditToken; reviewers 3 and 1 edit and save in turn. ``broken``
    hands the token back at EditContract's commit (as ``contract_edit_broken`` does), so
    reviewer 1 enters while reviewer 3 is still saving. ``extra_token`` has a client publish
    a second token at 2 s, so reviewer 1 holds one while reviewer 3 holds the other (the
    exclusive-section check must report the overlap). ``until`` stops after reviewer 3's
    save (for a continue-as-new cut).
    """
    run = DexWebRun()
    edits = [edit(1), edit(2, should_fail_handoff=True), edit(3)]
    run.started(0.0, edits)
    run.execute("StartContractEdits-1", "__start__", 0.02, 0.1, edits,
                publish=[(TOKEN, "contract")],
                next_steps=[*(("EnterContractEdit", e) for e in edits),
                            ("FinishContractEdits", 3)])
    run.wait_for("FinishContractEdits-1", "StartContractEdits-1", 0.15, 0.18, 3, FINISHED, 3)
    for number, at in ((1, 0.19), (2, 0.2), (3, 0.21)):
        run.wait_for(f"EnterContractEdit-{number}", "StartContractEdits-1", at - 0.04, at,
                     edits[number - 1], TOKEN, 1)
    ms = int(T0.timestamp() * 1000)
    run.execute_failed("EnterContractEdit-2", "StartContractEdits-1", 0.25, 1.3, edits[1],
                       "examples.contract_edit.ContractEditError", "contract handoff failed",
                       attempt=2, taken=[(TOKEN, ["contract"])])
    r2 = record(2, "failed", ms + 1400, ms + 1400)
    run.execute("ReleaseContractEditToken-1", "EnterContractEdit-2", 1.35, 1.4, edits[1],
                publish=[(FINISHED, r2), (TOKEN, "contract")], close=5)
    _edit_and_save(run, 3, 1, 1.45, edits[2], broken, ms)
    if until is not None:
        return run
    if extra_token:
        run.add("ChannelExternalPublish", 2.0, {"messages": [
            {"channelName": TOKEN, "value": dex_value("contract")}]})
    enter = 2.05 if extra_token else 3.7 if broken else 5.75
    _edit_and_save(run, 1, 2, enter, edits[0], broken, ms)
    finish(run, max(enter + 4.3, 5.75), ms, broken)
    return run


def _edit_and_save(run: DexWebRun, reviewer: int, n: int, at: float, given: dict[str, Any],
                   broken: bool, ms: int) -> None:
    """Enter, edit (2 s) and save (2 s) for one reviewer, from ``at`` seconds."""
    enter = f"EnterContractEdit-{reviewer}"
    run.execute(enter, "StartContractEdits-1", at, at + 0.05, given,
                taken=[(TOKEN, ["contract"])], next_steps=[("EditContract", given)])
    started = {**given, "started_at_millis": ms + int((at + 0.1) * 1000)}
    edit_end = at + 2.15
    run.execute(f"EditContract-{n}", enter, at + 0.1, edit_end, given,
                next_steps=[("SaveContractEdit", started)],
                publish=[(TOKEN, "contract")] if broken else ())
    done = record(reviewer, "saved", started["started_at_millis"], ms + int((at + 4.2) * 1000))
    token = [] if broken else [(TOKEN, "contract")]
    run.execute(f"SaveContractEdit-{n}", f"EditContract-{n}", edit_end + 0.05, at + 4.25,
                started, publish=[(FINISHED, done), *token], close=5)


def finish(run: DexWebRun, at: float, ms: int, broken: bool, *,
           parent: str = "StartContractEdits-1", earlier: Sequence[Any] = ()) -> None:
    """FinishContractEdits takes the three records (``earlier`` ones first) and completes."""
    del broken
    del ms
    records = [*earlier, *(_value_of(m) for e in run.events if e["type"] == "StepExecuteCompleted"
                           for m in e["payload"]["output"].get("publishToChannel", [])
                           if m["channelName"] == FINISHED)]
    run.execute("FinishContractEdits-1", parent, at, at + 0.05, 3, taken=[(FINISHED, records)],
                close=2, close_input=records)
    run.closed(at + 0.1, 2, results=[{
        "completedStepType": "FinishContractEdits",
        "completedStepExecutionId": "FinishContractEdits-1",
        "completedStepOutput": dex_value(records)}])


RUN_2 = "0195a0c5-0000-7000-8000-000000000002"


def continue_as_new_chain() -> list[dict[str, Any]]:
    """Two pages: the run above cut after reviewer 3's save, continued as new in run 2.

    Run 2 resumes EnterContractEdit-1 and FinishContractEdits-1 (both still waiting) with the
    token and two records pending; its event ids restart from 1.
    """
    first = contract_edit_run(until=5.7)
    first.closed(5.72, 7, continuedToRunId=RUN_2)
    carried = [_value_of(m) for e in first.events if e["type"] == "StepExecuteCompleted"
               for m in e["payload"]["output"].get("publishToChannel", [])
               if m["channelName"] == FINISHED]
    second = DexWebRun(run_id=RUN_2)
    wait = {"waitingConditionType": 1, "channelConditions": [
        {"channelName": TOKEN, "atLeast": 1, "atMost": 1}]}
    finished = {"waitingConditionType": 1, "channelConditions": [
        {"channelName": FINISHED, "atLeast": 3, "atMost": 3}]}
    second.started(5.73, None, continued={
        "previousRunId": RUN_ID,
        "stepsToResume": [
            {"stepExecutionId": "EnterContractEdit-1", "waitingCondition": wait,
             "step": {"stepType": "EnterContractEdit", "stepInput": dex_value(edit(1))}},
            {"stepExecutionId": "FinishContractEdits-1", "waitingCondition": finished,
             "step": {"stepType": "FinishContractEdits", "stepInput": dex_value(3)}}],
        "pendingChannelMessages": {
            TOKEN: {"messages": [{"channelName": TOKEN, "value": dex_value("contract")}]},
            FINISHED: {"messages": [{"channelName": FINISHED, "value": dex_value(r)}
                                    for r in carried]}}})
    ms = int(T0.timestamp() * 1000)
    _edit_and_save(second, 1, 2, 5.75, edit(1), False, ms)
    finish(second, 10.05, ms, False, earlier=carried)
    return [first.page(), second.page()]


def _value_of(message: Mapping[str, Any]) -> Any:
    obj = message["value"]["objValue"]
    return json.loads(base64.b64decode(obj["payload"]))


# ---------------------------------------------------------------------------- dexcli
_ENUMS = {
    "flowStatus": FLOW_STATUS, "errorType": FLOW_ERROR_TYPE,
    "waitingConditionType": WAITING_CONDITION_TYPE, "conditionStatus": CONDITION_STATUS,
    "closeDecisionType": CLOSE_DECISION_TYPE, "phase": PENDING_PHASE,
    "durability": ("STEP_DURABILITY_UNSPECIFIED", "STEP_DURABILITY_SYNC",
                   "STEP_DURABILITY_ASYNC"),
    "stepDurability": ("STEP_DURABILITY_UNSPECIFIED", "STEP_DURABILITY_SYNC",
                       "STEP_DURABILITY_ASYNC"),
    "flowTimeoutPolicy": ("FLOW_TIMEOUT_POLICY_UNSPECIFIED", "FLOW_TIMEOUT_POLICY_FAIL",
                          "FLOW_TIMEOUT_POLICY_CANCEL", "FLOW_TIMEOUT_POLICY_HANDLER"),
}
_VALUE_KEYS = {"stepInput", "value", "closeInput", "completedStepOutput", "input", "output"}


def _natural(node: Any, key: str | None = None) -> Any:
    if isinstance(node, list):
        if key == "values":
            return [_value(v) for v in node]
        return [_natural(v) for v in node]
    if not isinstance(node, Mapping):
        return _ENUMS[key][node] if key in _ENUMS and isinstance(node, int) else node
    if key in _VALUE_KEYS and len(node) == 1 and next(iter(node)).endswith("Value"):
        return _value(node)
    return {k: _natural(v, k) for k, v in node.items()}


def _value(raw: Mapping[str, Any]) -> Any:
    ((case, content),) = raw.items()
    if case == "objValue":
        return json.loads(base64.b64decode(content["payload"]))
    return int(content) if case == "intValue" else content


def to_dexcli(events: list[dict[str, Any]], flow_id: str = FLOW_ID,
              run_id: str = RUN_ID) -> dict[str, Any]:
    """Dex Web events as dexcli's ``flow history --all`` object (names, natural values)."""
    converted = []
    for event in events:
        out = {"eventId": str(event["eventId"]), "eventTime": event["eventTime"],
               "type": event["type"], "payload": _natural(event["payload"])}
        converted.append(out)
    return {"events": converted, "flowId": flow_id, "nextInternalEventId": "0",
            "nextPageToken": "", "runId": run_id}
