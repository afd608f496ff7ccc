"""Time travel: a new run of the same Flow id, forked from a point in the old run's history.

The state at the fork is folded from the old run's events (Attributes, queues, reserved
messages, executions); executions active there resume, and unless ``skip_writes_reapply`` the
old run's later RPC writes and client publications are applied again (R164).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from dexviz.engine.commit.decide import Decisions
from dexviz.engine.commit.waits import WaitManager
from dexviz.engine.core.errors import service_error
from dexviz.engine.core.fork import FoldedExecution, fold_execution, fork_index
from dexviz.engine.core.spec import continued_start_payload
from dexviz.engine.core.state import Execution, FlowRun, Message
from dexviz.engine.flows.starts import Starts
from dexviz.engine.flows.timeouts import FlowTimeouts
from dexviz.history.event import Event
from dexviz.history.instance_names import decoded_key
from dexviz.history.kinds import EventKind
from dexviz.sdk.channel import Channel
from dexviz.sdk.condition import ChannelCondition, Condition, TimerCondition
from dexviz.sdk.errors import FlowNotFoundError
from dexviz.sdk.flow_options import TimeTravelOptions, TimeTravelType
from dexviz.sdk.options import StepOptions
from dexviz.sdk.results import FlowStatus, StepCompletion
from dexviz.sdk.wait import ConditionCombination, Wait, WaitKind

if TYPE_CHECKING:
    from dexviz.engine.core.kernel import Kernel
    from dexviz.engine.core.ports import Committer

_CHANGES = (EventKind.RPC_EXECUTION_COMPLETED, EventKind.CHANNEL_EXTERNAL_PUBLISH)
_WRITERS = (
    EventKind.STEP_WAIT_FOR_COMPLETED,
    EventKind.STEP_EXECUTE_COMPLETED,
    EventKind.RPC_EXECUTION_COMPLETED,
)


class TimeTravel:
    """Builds the forked run and resumes it."""

    def __init__(
        self,
        kernel: Kernel,
        decisions: Decisions,
        waits: WaitManager,
        timeouts: FlowTimeouts,
        starts: Starts,
        committer: Committer,
    ) -> None:
        self._rt = kernel
        self._decisions = decisions
        self._waits = waits
        self._timeouts = timeouts
        self._starts = starts
        self._committer = committer

    def travel(self, flow_id: str, options: TimeTravelOptions) -> str:
        """Fork a new run of ``flow_id`` and return its run id."""
        rt = self._rt
        old = rt.runs.get(flow_id)
        if old is None:
            raise service_error(
                FlowNotFoundError, "Flow not found", flow_id=flow_id, operation="time_travel"
            )
        history = rt.store.history(flow_id)
        # BEGINNING means the first Step of the first run (R164); other points are in this run.
        source = history.run_ids[0] if options.type is TimeTravelType.BEGINNING else old.run_id
        events = [e for e in history if e.run_id == source]
        cut = fork_index(events, options)
        if old.status is FlowStatus.RUNNING:
            self._decisions.close(old, FlowStatus.TERMINATED)
        rt.previous_runs.setdefault(flow_id, []).append(old)
        run = self._starts.new_run(old.definition, flow_id)
        run.start_options, run.start_input = old.start_options, old.start_input
        rt.runs[flow_id] = run
        executions = self._fold(run, events[:cut], history)
        later = (
            [] if options.skip_writes_reapply else [e for e in events[cut:] if e.kind in _CHANGES]
        )
        rt.recorder.emit(
            run,
            EventKind.TIME_TRAVEL_FORK,
            None,
            {
                "previous_run_id": old.run_id,
                "type": options.type.name,
                "fork_seq": events[cut].seq,
                "step_execution_id": options.step_execution_id,
                "reason": options.reason,
                "reapplied": [e.seq for e in later],
            },
        )
        self._reapply(run, events, later)
        self._continued(run, old.run_id)
        for folded in executions:
            self._resume(run, folded, events[cut].time_ns)
        self._committer.commit()
        return run.run_id

    def _continued(self, run: FlowRun, previous_run_id: str) -> None:
        """Record the state the new run starts from, so a later fork of it can fold it."""
        rt = self._rt
        payload = continued_start_payload(
            run,
            previous_run_id,
            mode="simulation" if rt.sim else "live",
            seed=rt.seed,
            timeout=self._timeout(run),
        )
        rt.recorder.emit(run, EventKind.FLOW_STARTED_OR_CONTINUED, None, payload)

    def _timeout(self, run: FlowRun) -> dict[str, Any]:
        """The reset run keeps the Flow's timeout, counted again from the reset (R164)."""
        if run.start_options is None:
            return {"timeout_s": None, "timeout_policy": None}
        return self._timeouts.start(run, run.start_options)

    # -- folding the old run ----------------------------------------------------------------
    def _fold(
        self, run: FlowRun, events: list[Event], history: Iterable[Event]
    ) -> list[FoldedExecution]:
        executions: dict[str, FoldedExecution] = {}
        reserved: dict[str, Message] = {}
        for event in events:
            self._fold_state(run, event, reserved)
            fold_execution(executions, event)
        for folded in executions.values():
            type_name, _, number = folded.execution_id.rpartition("-")
            run.raise_counter(type_name, int(number))
        active = [f for f in executions.values() if f.phase not in ("done", "canceled")]
        missing = {m for f in active for m in f.reserved if m not in reserved}
        if missing:
            self._fold_carried(run, history, missing, reserved)
        for folded in active:
            folded.reserved = [m for m in folded.reserved if m in reserved]
        self._reserved = reserved
        return active

    def _fold_state(self, run: FlowRun, event: Event, reserved: dict[str, Message]) -> None:
        payload = event.payload
        kind = event.kind
        if kind == EventKind.FLOW_STARTED_OR_CONTINUED:
            for write in payload.get("initial_attributes", ()):
                self._write(run, write["attribute"], write["value"], False)
            for message in payload.get("pending_messages", ()):
                self._fold_publish(run, message)
        elif kind in _WRITERS:
            for write in payload.get("writes", ()):
                self._write(run, write["attribute"], write["value"], write.get("deleted", False))
        elif kind == EventKind.MESSAGE_PUBLISHED:
            self._fold_publish(run, payload)
        elif kind in (EventKind.MESSAGE_CONSUMED, EventKind.MESSAGE_RETURNED):
            self._fold_move(run, event, reserved)
        elif kind == EventKind.COMPLETION_REQUESTED:
            run.graceful_requested = True
            if payload.get("has_output") and payload.get("output") is not None:
                completion = StepCompletion(
                    event.step_type or "", event.execution_id or "", payload["output"]
                )
                run.completions.append(completion)

    def _fold_carried(
        self,
        run: FlowRun,
        history: Iterable[Event],
        missing: set[str],
        reserved: dict[str, Message],
    ) -> None:
        """Messages an execution resumed by an earlier fork still holds, from their publication.

        A run that is itself a fork starts with those messages already reserved: its events
        name them (``reserved`` of the resumed execution) but were never given their bodies, so
        forking it again takes them from where the Flow's history first published them.
        """
        for event in history:
            if event.kind == EventKind.MESSAGE_PUBLISHED:
                published: Iterable[Any] = (event.payload,)
            elif event.kind == EventKind.FLOW_STARTED_OR_CONTINUED:
                published = event.payload.get("pending_messages", ())
            else:
                continue
            for payload in published:
                if payload["message_id"] in missing and payload["message_id"] not in reserved:
                    run.message_count += 1
                    value = self._decode(run, payload["channel"], payload["value"])
                    reserved[payload["message_id"]] = Message(
                        payload["message_id"], run.message_count, payload["channel"], value
                    )

    @staticmethod
    def _fold_move(run: FlowRun, event: Event, reserved: dict[str, Message]) -> None:
        """A consumed message leaves its queue for the consumer; a returned one goes back first."""
        payload = event.payload
        queue = run.queue(payload["channel"])
        if event.kind == EventKind.MESSAGE_RETURNED:
            returned = reserved.pop(payload["message_id"], None)
            if returned is not None:
                queue.appendleft(returned)
            return
        found = next((m for m in queue if m.message_id == payload["message_id"]), None)
        if found is not None:
            queue.remove(found)
            reserved[found.message_id] = found

    def _fold_publish(self, run: FlowRun, payload: Any) -> None:
        run.message_count += 1
        number = run.message_count
        value = self._decode(run, payload["channel"], payload["value"])
        run.queue(payload["channel"]).append(
            Message(payload["message_id"], number, payload["channel"], value)
        )

    def _write(self, run: FlowRun, key: str, value: Any, deleted: bool) -> None:
        if deleted or value is None:
            run.attributes.pop(key, None)
            return
        definition = run.definition.attributes.get(key.split("/", 1)[0])
        value_type = definition.value_type if definition is not None else Any
        run.attributes[key] = self._rt.codecs.from_json_ready(value_type, value)

    # -- the new run ----------------------------------------------------------------------
    def _reapply(self, run: FlowRun, old: list[Event], later: list[Event]) -> None:
        values = {
            e.payload["message_id"]: e.payload for e in old if e.kind == EventKind.MESSAGE_PUBLISHED
        }
        for event in later:
            for write in event.payload.get("writes", ()):
                self._write(run, write["attribute"], write["value"], write.get("deleted", False))
            ids = event.payload.get("published") or [
                m["message_id"] for m in event.payload.get("messages", ())
            ]
            messages = [values[i] for i in ids if i in values]
            for item in messages:
                message = run.next_message(
                    item["channel"], self._decode(run, item["channel"], item["value"])
                )
                run.queue(item["channel"]).append(message)
                self._rt.recorder.emit(
                    run,
                    EventKind.MESSAGE_PUBLISHED,
                    None,
                    {
                        "channel": message.channel,
                        "message_id": message.message_id,
                        "value": item["value"],
                        "publisher": "time_travel",
                    },
                )

    def _decode(self, run: FlowRun, channel: str, data: Any) -> Any:
        definition = run.definition.channels.get(channel.split("/", 1)[0])
        value_type = definition.value_type if definition is not None else Any
        return self._rt.codecs.from_json_ready(value_type, data)

    def _resume(self, run: FlowRun, folded: FoldedExecution, fork_ns: int) -> None:
        rt = self._rt
        step = run.definition.steps.get(folded.step_type)
        if step is None:
            return
        value = rt.codecs.from_json_ready(step.input_type, folded.input)
        ex = Execution(
            folded.execution_id,
            step,
            value,
            folded.from_execution_id,
            step.options or StepOptions(),
        )
        run.executions[ex.execution_id] = ex
        run.active_count += 1
        ex.wait_for_failed = folded.wait_for_failed
        rt.recorder.emit(
            run,
            EventKind.STEP_EXECUTION_CREATED,
            ex,
            {
                "input": folded.input,
                "from_execution_id": folded.from_execution_id,
                "reason": "time_travel",
                "has_wait_for": step.has_wait_for,
                "resumed_phase": folded.phase,
                "wait": folded.wait,
                "reserved": folded.reserved,
            },
            method="",
            attempt=0,
        )
        if folded.phase == "satisfied" or (folded.phase == "execute" and folded.reserved):
            for message_id in folded.reserved:
                message = self._reserved.get(message_id)
                if message is not None:
                    ex.reserved.setdefault(message.channel, []).append(message)
                    ex.consumed_values.setdefault(message.channel, []).append(message.value)
            rt.start_method_soon(run, ex, "execute")
        elif (
            folded.phase == "waiting"
            and folded.wait is not None
            and (wait := self._rebuild(run, folded, fork_ns))
        ):
            self._waits.begin_waiting(run, ex, wait)
        else:
            rt.start_method_soon(run, ex, "wait_for" if step.has_wait_for else "execute")

    def _rebuild(self, run: FlowRun, folded: FoldedExecution, fork_ns: int) -> Wait | None:
        """The Wait of a waiting execution from its description; None if it had a SubFlow."""
        assert folded.wait is not None
        conditions: list[Condition] = []
        for item in folded.wait.get("conditions", ()):
            if item["kind"] == "channel":
                name, _, instance = item["channel"].partition("/")
                channel = run.definition.channels[name]
                conditions.append(
                    ChannelCondition(
                        channel=channel,
                        instance=decoded_key(instance)
                        if instance and not isinstance(channel, Channel)
                        else None,
                        at_least=item["at_least"],
                        at_most=item["at_most"],
                        condition_id=item["condition_id"],
                    )
                )
            elif item["kind"] == "timer":
                fire_at = folded.timers.get(item["timer_index"], fork_ns)
                left = max(0, (fire_at - fork_ns + 999_999_999) // 1_000_000_000)
                conditions.append(
                    TimerCondition(
                        duration=timedelta(seconds=left), condition_id=item["condition_id"]
                    )
                )
            else:
                return None
        kind = WaitKind[folded.wait.get("kind", "SKIP_IMMEDIATELY")]
        groups = tuple(
            ConditionCombination(tuple(conditions[i] for i in g))
            for g in folded.wait.get("combinations", ())
        )
        return Wait(kind, tuple(conditions), groups)
