"""The first pass over a Dex history: its runs, each execution's first event, the Flow's names.

Dex events carry no run id: an event belongs to the run whose ``FlowStartedOrContinued`` came
last. Within a run event ids strictly increase; they restart in the next run. A decision's
``nextSteps`` carry no execution id, so a child is matched to its creator's event through the
child's own first event: its ``fromStepExecutionId`` and Step type, first after the creator's
event. The Flow's spec (its Steps, Channels, Attributes and RPCs) is not in a Dex history; the
spec here lists the names the events use.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dexviz.history.dex_fields import Fields
from dexviz.history.dex_json import DexDocument, DexRawEvent
from dexviz.history.dex_loss import Losses
from dexviz.history.dex_values import DexValueError
from dexviz.history.jsonl import HistoryFormatError

__all__ = ["Child", "Plan", "at_event"]

_STEP_TYPES = frozenset({
    "StepWaitForCompleted", "StepWaitForFailed", "StepWaitForPending", "StepExecuteCompleted",
    "StepExecuteFailed", "StepExecutePending",
})  # fmt: skip


@dataclass(frozen=True)
class Child:
    """An execution as its first event names it."""

    execution_id: str
    step_type: str
    parent: str
    input: Any
    has_wait_for: bool
    first_index: int
    run_id: str


@dataclass
class _Names:
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    channels: dict[str, None] = field(default_factory=dict)
    attributes: dict[str, None] = field(default_factory=dict)
    rpcs: dict[str, None] = field(default_factory=dict)
    flow_type: str = ""
    start_step: str | None = None


def at_event(raw: DexRawEvent, error: DexValueError) -> HistoryFormatError:
    """A HistoryFormatError naming the event (index, page, id and type) and the bad field."""
    where = f"event {raw.index}" + (f" (page {raw.page})" if raw.page is not None else "")
    ident = f", eventId {raw.event_id}" if raw.event_id is not None else ""
    return HistoryFormatError(f"{where} ({raw.type}{ident}): {error}")


class Plan:
    """The runs of a Dex history and what the conversion looks up across them."""

    def __init__(self, document: DexDocument, losses: Losses) -> None:
        self.losses = losses
        self.runs: list[tuple[str, list[DexRawEvent]]] = []
        self.flow_id: str | None = document.flow_id
        self._children: dict[str, list[Child]] = {}
        self._first: dict[str, Child] = {}
        self._assigned: set[str] = set()
        self._executes: set[str] = set()
        self._last_type: dict[str, str] = {}
        self._run_of: dict[str, set[str]] = {}
        self._names = _Names()
        self._split(document)
        for run_id, events in self.runs:
            for raw in events:
                try:
                    self._scan(raw, run_id)
                except DexValueError as error:
                    raise at_event(raw, error) from None

    # ------------------------------------------------------------------ runs
    def _split(self, document: DexDocument) -> None:
        run_id = document.run_id
        previous: DexRawEvent | None = None
        for raw in document.events:
            if raw.type == "FlowStartedOrContinued" and raw.payload is not None:
                try:
                    execution = Fields(raw.payload, "payload", raw.natural).m("flowExecutionId")
                    run_id, flow_id = execution.s("runId"), execution.s("flowId")
                except DexValueError as error:
                    raise at_event(raw, error) from None
                self._check_flow(raw, flow_id)
                self.runs.append((run_id or f"run-{len(self.runs) + 1}", []))
                previous = None
            elif not self.runs:
                self.losses.add("incomplete", "the history does not start with the run's "
                                              "FlowStartedOrContinued: no Flow input or type")
                self.runs.append((run_id or "unknown-run", []))
            self._check_order(previous, raw)
            self.runs[-1][1].append(raw)
            previous = raw

    def _check_flow(self, raw: DexRawEvent, flow_id: str) -> None:
        if flow_id and self.flow_id and flow_id != self.flow_id:
            raise HistoryFormatError(f"event {raw.index} (FlowStartedOrContinued) starts a run "
                                     f"of Flow {flow_id!r}, not {self.flow_id!r}")
        self.flow_id = self.flow_id or flow_id or None

    @staticmethod
    def _check_order(previous: DexRawEvent | None, raw: DexRawEvent) -> None:
        if previous is None or previous.event_id is None or raw.event_id is None:
            return
        if raw.event_id <= previous.event_id:
            raise HistoryFormatError(
                f"event {raw.index} ({raw.type}): eventId {raw.event_id} does not follow "
                f"eventId {previous.event_id} of event {previous.index}; events of a run must "
                "be in increasing eventId order")

    # ------------------------------------------------------------------ first pass
    def _scan(self, raw: DexRawEvent, run_id: str) -> None:
        if raw.payload is None:
            return
        p = Fields(raw.payload, "payload", raw.natural)
        names = self._names
        if raw.type == "FlowStartedOrContinued":
            names.flow_type = names.flow_type or p.s("flowType")
            start = p.m("initialStart").s("startStepType")
            names.start_step = names.start_step or start or None
            for kv in p.m("initialStart").ms("initialAttributes") + p.m(
                    "continuedStart").ms("attributes"):
                names.attributes.setdefault(kv.s("key"))
        if raw.type in _STEP_TYPES:
            self._scan_step(raw, p, run_id)
        output = p.m("output") if raw.type in _STEP_TYPES else p
        for message in output.ms("publishToChannel") + p.ms("messages"):
            names.channels.setdefault(message.s("channelName"))
        for write in output.ms("upsertAttributes"):
            names.attributes.setdefault(write.s("key"))
        for condition in output.m("waitForCondition").ms("channelConditions"):
            names.channels.setdefault(condition.s("channelName"))
        if raw.type == "RpcExecutionCompleted":
            names.rpcs.setdefault(p.s("rpcName"))
            self._run_of.setdefault(f"__rpc/{p.s('rpcName')}", set()).add(run_id)

    def _scan_step(self, raw: DexRawEvent, p: Fields, run_id: str) -> None:
        context = p.m("context")
        execution_id = context.s("stepExecutionId")
        if not execution_id:
            raise DexValueError("payload.context.stepExecutionId is missing")
        step_type = context.s("stepType") or execution_id.rsplit("-", 1)[0]
        step = self._names.steps.setdefault(step_type, {
            "step_type": step_type, "has_wait_for": False, "description": "",
            "execute_failure_proceed_to": None})
        is_wait = raw.type.startswith("StepWaitFor")
        step["has_wait_for"] = step["has_wait_for"] or is_wait
        if not is_wait:
            self._executes.add(execution_id)
        self._run_of.setdefault(execution_id, set()).add(run_id)
        for result in p.m("input").m("conditionResults").ms("channelResults"):
            self._names.channels.setdefault(result.s("channelName"))
        known = execution_id in self._first
        self._last_type[execution_id] = raw.type
        if known:
            return
        parent = context.s("fromStepExecutionId")
        creator = self._names.steps.get(self._first[parent].step_type) if (
            parent in self._first) else None
        if creator is not None and self._last_type.get(parent) == "StepExecuteFailed":
            creator["execute_failure_proceed_to"] = step_type
        started = p.m("input")
        child = Child(execution_id, step_type, parent, started.value("stepInput"), is_wait,
                      raw.index, run_id)
        self._first[execution_id] = child
        self._children.setdefault(parent, []).append(child)

    # ------------------------------------------------------------------ lookups
    def children_of(self, parent: str, index: int) -> Iterator[Child]:
        """Unassigned children of ``parent`` whose first event follows event ``index``."""
        for child in self._children.get(parent, []):
            if child.first_index > index and child.execution_id not in self._assigned:
                self._assigned.add(child.execution_id)
                yield child

    def children_for(self, parent: str, index: int, types: list[str] | None) -> list[Child]:
        """The children made by ``parent``'s event ``index``.

        One per Step type in ``types`` (a decision's movements), or the one recovery child
        when ``types`` is None.
        """
        wanted = [None] if types is None else list(types)
        found: list[Child] = []
        for step_type in wanted:
            for child in self._children.get(parent, []):
                if (child.first_index > index and child.execution_id not in self._assigned
                        and step_type in (None, child.step_type)):
                    self._assigned.add(child.execution_id)
                    found.append(child)
                    break
        return found

    def child(self, execution_id: str) -> Child:
        """The execution as its first event names it."""
        return self._first[execution_id]

    def creator_in_run(self, child: Child, run_id: str) -> bool:
        """Whether ``child``'s creator has events in run ``run_id``."""
        if child.parent == "__start__":
            return True
        return run_id in self._run_of.get(child.parent, set())

    def has_execute(self, execution_id: str) -> bool:
        """Whether the execution has an Execute event (so a failed WaitFor proceeded)."""
        return execution_id in self._executes

    def start_execution(self, run_id: str) -> str | None:
        """The execution the run's start created, if the history names it."""
        for child in self._children.get("__start__", []):
            if child.run_id == run_id:
                return child.execution_id
        return None

    def spec(self) -> dict[str, Any]:
        """The Flow spec as far as the events name it (no docstrings, types or source)."""
        names = self._names
        return {
            "flow_type": names.flow_type, "start_step": names.start_step,
            "steps": [dict(s) for s in names.steps.values()],
            "channels": [{"name": n, "kind": "channel", "value_type": "unknown"}
                         for n in names.channels if n],
            "attributes": [{"name": n, "kind": "attribute", "value_type": "unknown"}
                           for n in names.attributes if n],
            "rpcs": [n for n in names.rpcs if n], "module": "", "qualname": "",
            "source_file": None, "from_dex_events": True,
        }
