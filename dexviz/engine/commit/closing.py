"""Cancellation and closing: ending executions and closing a run (R92-R101, R143-R152).

A mixin of :class:`dexviz.engine.commit.decide.Decisions`, kept apart so each module owns one
concept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dexviz.engine.commit import heartbeats
from dexviz.engine.core.state import Execution, FlowRun, Message, Phase
from dexviz.history.kinds import EventKind
from dexviz.sdk.codec import to_json_ready
from dexviz.sdk.results import FlowErrorType, FlowStatus

if TYPE_CHECKING:
    from dexviz.engine.commit.waits import WaitManager
    from dexviz.engine.core.kernel import Kernel
    from dexviz.engine.core.ports import RunEnds


class Closing:
    """Ends executions (cancellation) and runs (close, with terminal coordination)."""

    _k: Kernel
    _waits: WaitManager
    _ends: RunEnds

    def finish(self, run: FlowRun, ex: Execution, phase: Phase) -> None:
        """End an execution (DONE or CANCELED): it no longer counts as active (R31, R100)."""
        if ex.active and ex.counted:
            run.active_count -= 1
        ex.phase = phase
        # A canceled handler still running learns of it from its next heartbeat (R107).
        if ex.heartbeat_timer is not None and not (
            phase is Phase.CANCELED and heartbeats.keeps_beating(ex)
        ):
            ex.heartbeat_timer.cancel()
        if ex.method_timeout is not None:
            ex.method_timeout.cancel()
        if ex.pending_unit is not None:
            ex.pending_unit.cancel()
            ex.pending_unit = None

    def select_victims(
        self, run: FlowRun, parent: str, types: set[str], siblings: set[str]
    ) -> list[Execution]:
        """One snapshot of the other active executions matching the selectors (R92, R93)."""
        if not types and not siblings:
            return []
        return [
            e
            for e in run.executions.values()
            if e.active
            and (e.step_type in types or (e.step_type in siblings and e.parent_key == parent))
        ]

    def cancel_all(
        self, run: FlowRun, victims: list[Execution], by: str
    ) -> dict[str, list[Message]]:
        """Cancel executions: no retries, routes or effects; reserved messages go back (R95)."""
        k = self._k
        held: dict[str, list[tuple[str, str]]] = {}
        for ex in victims:
            # Only heartbeats carry the request to a running handler (R96, R107).
            ex.cancel_requested = True
            self._waits.unregister(run, ex)
            held[ex.execution_id] = [(k, m.message_id) for k, ms in ex.reserved.items() for m in ms]
        returned = self._waits.return_reserved(run, victims)
        for ex in victims:
            phase = ex.phase
            self.finish(run, ex, Phase.CANCELED)
            k.forget_locks(run, ex)
            items = held[ex.execution_id]
            k.recorder.emit(
                run,
                EventKind.EXECUTION_CANCELED,
                ex,
                {"by": by, "phase": phase.value, "returned": [mid for _, mid in items]},
            )
            for key, message_id in items:
                k.recorder.emit(
                    run,
                    EventKind.MESSAGE_RETURNED,
                    ex,
                    {"channel": key, "message_id": message_id, "from": ex.execution_id},
                )
        return returned

    # -- closing --------------------------------------------------------------------------
    def check_graceful(self, run: FlowRun) -> None:
        """Complete once a graceful request is pending and no execution is active (R144)."""
        # run.is_open, inlined: checked after every commit of a Flow that asked to complete.
        if (
            run.graceful_requested
            and run.active_count == 0
            and run.status is FlowStatus.RUNNING
            and not run.closing
        ):
            self.close(run, FlowStatus.COMPLETED)

    def close(
        self,
        run: FlowRun,
        status: FlowStatus,
        error_type: FlowErrorType | None = None,
        message: str | None = None,
    ) -> None:
        """Close the run: cancel every active execution, then record FlowClosed (R147, R148).

        TERMINATE closes at once; any other close waits for admitted transactional RPCs.
        """
        if run.status is not FlowStatus.RUNNING:
            return
        if run.closing:
            if status is FlowStatus.TERMINATED and run.pending_close is not None:
                self.finalize(run, status)
            return
        k = self._k
        run.closing = True
        active = [e for e in run.executions.values() if e.active]
        include_pending = status in (FlowStatus.CANCELED, FlowStatus.TERMINATED)
        for ex in active:
            if include_pending and ex.phase in (Phase.WAIT_FOR, Phase.EXECUTE):
                kind = (
                    EventKind.STEP_WAIT_FOR_PENDING
                    if ex.phase is Phase.WAIT_FOR
                    else EventKind.STEP_EXECUTE_PENDING
                )
                k.recorder.emit(run, kind, ex, {"phase": "started" if ex.attempt else "scheduled"})
        if active:
            self.cancel_all(run, active, "flow_close")
        self._ends.cancel_flow_timers(run)
        if run.admitted_rpcs and status is not FlowStatus.TERMINATED:
            # Admitted locking or transactional RPCs finish before the close is recorded (R147).
            run.pending_close = (status, error_type, message)
            return
        self.finalize(run, status, error_type, message)

    def finalize(
        self,
        run: FlowRun,
        status: FlowStatus,
        error_type: FlowErrorType | None = None,
        message: str | None = None,
    ) -> None:
        """Record the terminal status of a closing run (FlowClosed)."""
        k = self._k
        run.pending_close = None
        run.status = status
        run.error_type = error_type
        run.error_message = message
        run.closed_ns = k.now()
        outputs = run.completions if status is FlowStatus.COMPLETED else []
        k.recorder.emit(
            run,
            EventKind.FLOW_CLOSED,
            None,
            {
                "status": status._name_,
                "outputs": [
                    {
                        "step_type": c.step_type,
                        "execution_id": c.step_execution_id,
                        "value": to_json_ready(c.value),
                    }
                    for c in outputs
                ],
                "error_type": error_type.name if error_type else None,
                "error_message": message,
                # Only a Step failure that failed the Flow has one (other histories unchanged).
                **({"failure": run.failure} if run.failure is not None else {}),
            },
        )
        self._ends.flow_closed(run)
