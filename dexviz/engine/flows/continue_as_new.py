"""Continue-as-new: the same Flow id goes on as a new run that carries everything over (R13).

It is triggered by ``trigger_continue_as_new`` or when a run's history passes its
``FlowConfig.continue_as_new_threshold`` (dexviz applies the threshold only when a config sets
it, so runs without one keep their histories). It waits until no Step method is running, then
the run goes on under a new run id: the old run's history ends with ``FlowClosed`` status
CONTINUED_AS_NEW, and the new run's starts with ``FlowStartedOrContinued`` marked continued,
carrying the Attributes and pending messages, followed by one ``StepExecutionCreated`` (reason
``continue_as_new``) per active execution. Everything else — waiting conditions, fired timers,
locals, queued Steps and counters, collected outputs, skip requests, the Flow's deadline, the
SubFlows a waiting Step started — stays as it is, so the Flow's logic never notices.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from dexviz.engine.core.spec import continued_start_payload
from dexviz.engine.core.state import FlowRun, Phase
from dexviz.engine.core.uuids import uuid4_bits, uuid_text
from dexviz.engine.flows.timeouts import FlowTimeouts
from dexviz.history.kinds import EventKind
from dexviz.sdk.codec import to_json_ready
from dexviz.sdk.results import FlowStatus

if TYPE_CHECKING:
    from dexviz.engine.core.kernel import Kernel
    from dexviz.engine.core.ports import Committer

_RUNNING = (Phase.WAIT_FOR, Phase.EXECUTE)


class ContinueAsNew:
    """Requests, thresholds, and the switch of a Flow id to its next run."""

    def __init__(self, kernel: Kernel, timeouts: FlowTimeouts, committer: Committer) -> None:
        self._rt = kernel
        self._timeouts = timeouts
        self._committer = committer
        self._requested: set[str] = set()
        self._first_seq: dict[str, int] = {}

    @property
    def watching(self) -> bool:
        """Whether a commit may have to continue a run (a request or a threshold is pending)."""
        return bool(self._requested) or bool(self._first_seq)

    def request(self, run: FlowRun) -> None:
        """Continue ``run`` as new as soon as no Step method runs (R163)."""
        if run.is_open:
            self._requested.add(run.flow_id)
            self._try(run)

    def watch(self, run: FlowRun) -> None:
        """Count ``run``'s events against its config's threshold from now on."""
        threshold = getattr(run.config, "continue_as_new_threshold", None)
        if threshold:
            self._first_seq.setdefault(run.flow_id, run.seq)

    def committed(self, flow_ids: set[str]) -> None:
        """After a commit: continue the runs whose request or threshold is due."""
        for flow_id in flow_ids:
            run = self._rt.runs.get(flow_id)
            if run is None:
                continue
            if not run.is_open:
                self._requested.discard(flow_id)
                self._first_seq.pop(flow_id, None)
                continue
            threshold = getattr(run.config, "continue_as_new_threshold", None)
            first = self._first_seq.get(flow_id)
            if threshold and first is not None and run.seq - first >= threshold:
                self._requested.add(flow_id)
            if flow_id in self._requested:
                self._try(run)

    def _try(self, run: FlowRun) -> None:
        if any(e.active and e.phase in _RUNNING for e in run.executions.values()):
            return  # a running method finishes in this run first
        self._requested.discard(run.flow_id)
        self._switch(run)

    def _switch(self, run: FlowRun) -> None:
        rt = self._rt
        ended = copy.copy(run)
        ended.attributes = dict(run.attributes)
        ended.status = FlowStatus.CONTINUED_AS_NEW
        ended.closed_ns = rt.now()
        rt.previous_runs.setdefault(run.flow_id, []).append(ended)
        rt.recorder.emit(
            run,
            EventKind.FLOW_CLOSED,
            None,
            {"status": FlowStatus.CONTINUED_AS_NEW.name, "outputs": [], "error_type": None,
             "error_message": None},
        )
        previous = run.run_id
        run.run_id = uuid_text(uuid4_bits(rt.ids.getrandbits(128)))
        run.started_ns = rt.now()
        rt.rekey_run(previous, run.run_id)
        self._timeouts.rekey(previous, run.run_id)
        self._started(run, previous)
        for ex in run.executions.values():
            if ex.active:
                self._carried(run, ex)
        if run.flow_id in self._first_seq:
            self._first_seq[run.flow_id] = run.seq
        self._committer.commit()

    def _started(self, run: FlowRun, previous: str) -> None:
        rt = self._rt
        options = run.start_options
        timeout = options.timeout if options is not None else None
        payload = continued_start_payload(
            run,
            previous,
            mode="simulation" if rt.sim else "live",
            seed=rt.seed,
            timeout={
                "timeout_s": timeout.total_seconds() if timeout else None,
                "timeout_policy": self._timeouts.policy_name(run.run_id),
            },
            reason="continue_as_new",
        )
        rt.recorder.emit(run, EventKind.FLOW_STARTED_OR_CONTINUED, None, payload)

    def _carried(self, run: FlowRun, ex: Any) -> None:
        phase = "satisfied" if ex.phase is Phase.WAITING and ex.satisfied_conditions else (
            ex.phase.value
        )
        self._rt.recorder.emit(
            run,
            EventKind.STEP_EXECUTION_CREATED,
            ex,
            {
                "input": to_json_ready(ex.input),
                "from_execution_id": ex.from_execution_id,
                "reason": "continue_as_new",
                "has_wait_for": ex.step.has_wait_for,
                "resumed_phase": phase,
                "wait": None,
                "reserved": [m.message_id for ms in ex.reserved.values() for m in ms],
            },
            method="",
            attempt=0,
        )
