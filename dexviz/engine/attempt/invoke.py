"""Invoker: runs one method attempt (sync or coroutine), then commits it or handles the failure."""

from __future__ import annotations

import inspect
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from dexviz.engine.commit import heartbeats
from dexviz.engine.commit.decide import Decisions
from dexviz.engine.commit.waits import WaitManager
from dexviz.engine.core.attempt_deadline import DEFAULT_RETRY, AttemptDeadline
from dexviz.engine.core.context import InvocationContext
from dexviz.engine.core.errors import method_where
from dexviz.engine.core.failure_info import StepMethodFailure
from dexviz.engine.core.state import Execution, FlowRun, Phase
from dexviz.engine.core.units import MethodTimedOut, ResumeAfterLock, RetryAttempt, Unit
from dexviz.engine.core.units import QueuedStart as QueuedStart  # the explorer imports it here
from dexviz.history.kinds import EventKind
from dexviz.sdk.errors import FlowDefinitionError, InvalidStepResultError, RetryAfterError
from dexviz.sdk.options import WaitForFailurePolicy
from dexviz.sdk.results import RecoveryErrorInfo
from dexviz.sdk.wait import Wait

if TYPE_CHECKING:
    from dexviz.engine.core.kernel import Kernel
    from dexviz.engine.core.ports import ContextHost

MAX_RETRY_AFTER_S = 366 * 24 * 3600
"""The longest delay a RetryAfterError may ask for: a year (a longer one is a mistake)."""


class Invoker:
    """Starts method attempts, and turns their outcome into a commit, a retry or an exit."""

    def __init__(
        self, kernel: Kernel, host: ContextHost, waits: WaitManager, decisions: Decisions
    ) -> None:
        self._rt = kernel
        self._host = host
        self._waits = waits
        self._decisions = decisions

    def where(self, run: FlowRun, ex: Execution, method: str) -> str:
        """Name the Flow, Step execution and method for messages."""
        return method_where(run, ex, method)

    def start_method_soon(self, run: FlowRun, ex: Execution, method: str) -> None:
        """Queue the first attempt of ``method`` as ready work (``Kernel.start_method_soon``)."""
        self._rt.start_method_soon(run, ex, method)

    def retry(self, unit: Unit) -> None:
        """A RetryAttempt or ResumeAfterLock unit: run the execution's next attempt."""
        self.attempt(unit[1], unit[2])

    def resume(self, unit: Unit) -> None:
        """A ResumeMethod unit: a recovered attempt takes its locks, then runs again."""
        run, ex, keys = unit[1], unit[2], unit[3]
        ex.pending_unit = None
        if not ex.active or not run.is_open:
            return
        if keys and not self._rt.lock_table(run).acquire_or_wait(
            keys, ex.execution_id, ResumeAfterLock.of(self._rt, run, ex)
        ):
            return
        self.attempt(run, ex)

    def time_out(self, unit: Unit) -> None:
        """A MethodTimedOut unit: see :meth:`timed_out`."""
        self.timed_out(unit[1], unit[2], unit[3], unit[4], unit[5])

    def start_general(self, run: FlowRun, ex: Execution, method: str) -> None:
        """Take the method's locks (waiting for them if held), then run attempt 1."""
        ex.phase = Phase.WAIT_FOR if method == "wait_for" else Phase.EXECUTE
        ex.method = method
        ex.attempt = 0
        ex.first_started_ns = self._rt.now()
        ex.method_snapshot = None
        locks = (
            ex.options.wait_for_lock_attributes
            if method == "wait_for"
            else ex.options.execute_lock_attributes
        )
        keys = tuple(lock.physical_name for lock in locks)
        if keys and not run_locks(self._rt, run).acquire_or_wait(
            keys,
            ex.execution_id,
            ResumeAfterLock.of(self._rt, run, ex),
        ):
            return
        self.attempt(run, ex)

    def attempt(self, run: FlowRun, ex: Execution) -> None:
        """Run the next attempt of the execution's current method."""
        rt = self._rt
        if not ex.active or not run.is_open:
            return
        ex.attempt += 1
        ex.attempt_token += 1
        ex.pending_unit = None
        method = ex.method
        rt.recorder.emit(run, EventKind.ATTEMPT_STARTED, ex)
        if ex.method_snapshot is None:
            # Every retry reads the first attempt's snapshot (R22).
            ex.method_snapshot = dict(run.attributes) if run.has_attributes else {}
        ctx = InvocationContext(
            run,
            ex,
            method,
            ex.attempt,
            ex.method_snapshot,
            rt.codecs,
            runtime=self._host,
            subflows=self._host.subflows,
        )
        ctx.is_async = (
            ex.step.wait_for_is_async if method == "wait_for" else ex.step.execute_is_async
        )
        # Only an attempt that starts after its method did (a lock wait, a backoff, a restart)
        # can find its retry window over: the usual first attempt skips the check.
        if ex.first_started_ns != rt.now() and self._stopped_late(run, ex, ctx):
            return
        injected = rt.faults.failure_for(ex.step_type, method, ex.attempt, ex.execution_id)
        if injected is not None:
            self.fail(run, ex, ctx, injected, "fault")
            return
        try:
            value = rt.codecs.roundtrip(
                ex.step.input_type, ex.input, operation=ctx._where + " input"
            )
        except Exception as error:  # noqa: BLE001 - an undecodable input fails the attempt
            self.fail(run, ex, ctx, error, "error")
            return
        self._launch(run, ex, ctx, value)

    def _launch(self, run: FlowRun, ex: Execution, ctx: InvocationContext, value: Any) -> None:
        """Call the handler (inline, or as a task whose timeout and heartbeat are armed)."""
        rt = self._rt
        method = ex.method
        handler = getattr(ex.step.step, method)
        is_async = ex.step.wait_for_is_async if method == "wait_for" else ex.step.execute_is_async
        token = ex.attempt_token

        def done(result: Any, error: BaseException | None, cancelled: bool) -> None:
            self.finished(run, ex, ctx, token, result, error, cancelled)

        runner = rt.runner
        ex.task = (runner.run_async if is_async else runner.run_sync)(handler, (ctx, value), done)
        if ex.task is not None and ex.active and token == ex.attempt_token:
            self._arm_timeout(run, ex, ctx, token)
            self._arm_heartbeat(run, ex, ctx, token)

    def _stopped_late(self, run: FlowRun, ex: Execution, ctx: InvocationContext) -> bool:
        """Fail the attempt at once if nothing is left of its retry window (R104); True if so.

        Its handler is not called, whether it is sync or async and in either mode: Dex's
        ``total_duration`` is the overall timeout of the method's activity, which a worker never
        receives once it has passed. Sync handlers in simulation, which run inline with no
        timeout armed, would otherwise run and succeed where the others fail. No injected fault
        can hit a handler that does not run, so this comes before the fault plan is asked.
        """
        deadline = AttemptDeadline.of(ex, self._rt.now())
        if not deadline.window_had_ended:
            return False
        error = TimeoutError(deadline.message(ctx._where, ex.attempt))
        self.fail(run, ex, ctx, error, "timeout")
        return True

    def _arm_heartbeat(
        self, run: FlowRun, ex: Execution, ctx: InvocationContext, token: int
    ) -> None:
        """The worker heartbeats for the running attempt; only a hung one times out (R107)."""
        del token  # heartbeats.arm reads the attempt's token itself
        heartbeats.arm(self._rt, run, ex, ctx)

    def _arm_timeout(self, run: FlowRun, ex: Execution, ctx: InvocationContext, token: int) -> None:
        rt = self._rt
        # total_duration is one deadline over every attempt: it also ends a running one (R104).
        deadline = AttemptDeadline.of(ex, rt.now())
        ex.method_timeout = rt.scheduler.call_at(
            rt.now() + deadline.limit_ns, MethodTimedOut.of(rt, run, ex, ctx, token, deadline)
        )

    def timed_out(
        self,
        run: FlowRun,
        ex: Execution,
        ctx: InvocationContext,
        token: int,
        deadline: AttemptDeadline,
    ) -> None:
        """End a running attempt that reached its deadline (a MethodTimedOut unit)."""
        if token != ex.attempt_token or not ex.active or ex.task is None or ex.task.done():
            return
        ctx.canceled = True
        ex.task.cancel()
        ex.task = None
        error = TimeoutError(deadline.message(ctx._where, ex.attempt))
        self.fail(run, ex, ctx, error, "timeout")

    def finished(
        self,
        run: FlowRun,
        ex: Execution,
        ctx: InvocationContext,
        token: int,
        result: Any,
        error: BaseException | None,
        cancelled: bool,
    ) -> None:
        """Handle a handler's outcome: commit it, retry, or take the failure exit."""
        # A result for a canceled execution, a timed-out attempt or a closed Flow is dropped (R152).
        if token != ex.attempt_token or not ex.active or ctx.canceled or not run.is_open:
            return
        disarm(ex)
        if cancelled:
            from asyncio import CancelledError  # only a coroutine handler can be cancelled

            self.fail(run, ex, ctx, CancelledError("the handler was cancelled"), "error")
        elif error is not None:
            self.fail(run, ex, ctx, error, "error")
        elif inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            invalid = InvalidStepResultError(
                run.flow_type,
                ex.step_type,
                "wait_for" if ex.method == "wait_for" else "execute",
                "returned an awaitable from a non-async handler; declare it with async def",
            )
            self.fail(run, ex, ctx, invalid, "invalid_result")
        else:
            self.succeed(run, ex, ctx, result)

    def succeed(self, run: FlowRun, ex: Execution, ctx: InvocationContext, result: Any) -> None:
        """Commit a successful attempt: a Wait for WaitFor, a checked decision for Execute."""
        rt = self._rt
        if ex.method == "wait_for":
            if not isinstance(result, Wait):
                detail = f"returned {type(result).__name__} instead of a Wait"
                self.fail(
                    run,
                    ex,
                    ctx,
                    InvalidStepResultError(run.flow_type, ex.step_type, "wait_for", detail),
                    "invalid_result",
                )
                return
            undeclared = [
                c.channel.name
                for c in result.channel_conditions
                if run.definition.channels.get(c.channel.name) != c.channel
            ]
            unregistered = [(c, why) for c in result.subflows if (why := _unregistered(rt, c.flow))]
            if unregistered:
                where = self.where(run, ex, "wait_for")
                condition, why = unregistered[0]
                error = FlowDefinitionError(
                    f"{where}: SubFlow.run names {condition.flow!r}, which is not registered "
                    f"with this engine: {why}"
                )
                self.fail(run, ex, ctx, error, "invalid_result")
                return
            if undeclared:
                error = FlowDefinitionError(
                    f"{self.where(run, ex, 'wait_for')}: Channel {undeclared[0]!r} is not declared "
                    "in the Flow's persistence schema"
                )
                self.fail(run, ex, ctx, error, "invalid_result")
                return
            self._waits.commit_wait_for(run, ex, ctx, result)
            return
        try:
            prepared = self._decisions.prepare(run, ex, result)
        except Exception as error:  # noqa: BLE001 - an invalid decision fails the attempt (R30, R91)
            self.fail(run, ex, ctx, error, "invalid_result")
            return
        self._decisions.commit_execute(run, ex, ctx, prepared)

    def fail(
        self, run: FlowRun, ex: Execution, ctx: InvocationContext, error: BaseException, reason: str
    ) -> None:
        """Record a failed attempt; retry after the backoff, or take the method's failure exit."""
        rt = self._rt
        # A definition error (unregistered Step, undeclared Channel) fails the same way on every
        # attempt: retrying it only delays the failure, so the attempt is final at once.
        permanent = isinstance(error, FlowDefinitionError) and not isinstance(
            error, InvalidStepResultError
        )
        if isinstance(error, RetryAfterError):
            error = _checked_retry_after(error, self.where(run, ex, ex.method))
            reason = "error" if isinstance(error, RetryAfterError) else "invalid_result"
        policy = (
            ex.options.wait_for_retry if ex.method == "wait_for" else ex.options.execute_retry
        ) or DEFAULT_RETRY
        delay = (
            timedelta(seconds=error.after_seconds)
            if isinstance(error, RetryAfterError)
            else policy.backoff(ex.attempt)
        )
        elapsed = timedelta(microseconds=(rt.now() - ex.first_started_ns) / 1000)
        retry = not permanent and policy.should_retry(ex.attempt, elapsed, delay)
        delay_ns = int(delay.total_seconds() * 1e9)
        failure = ex.last_failure = StepMethodFailure.of(error, ex.method, ex.attempt)
        rt.recorder.emit(
            run,
            EventKind.ATTEMPT_FAILED,
            ex,
            {
                "error_type": failure.error_type,
                "error_message": failure.detail,
                "stack_trace": failure.stack_trace,
                "reason": reason,
                "final": not retry,
                "retry_at_ns": rt.now() + delay_ns if retry else None,
                "retry_delay_ns": delay_ns if retry else None,
            },
        )
        if retry:
            ex.pending_unit = rt.scheduler.call_at(
                rt.now() + delay_ns, RetryAttempt.of(rt, run, ex)
            )
            return
        info = RecoveryErrorInfo(detail=failure.detail, error_type=failure.error_type)
        rt.release_locks(run, ex)
        if ex.method == "wait_for":
            self._wait_for_exhausted(run, ex, info)
        else:
            self._decisions.execute_exhausted(run, ex, info)

    def _wait_for_exhausted(self, run: FlowRun, ex: Execution, info: RecoveryErrorInfo) -> None:
        rt = self._rt
        proceed = ex.options.wait_for_failure is WaitForFailurePolicy.PROCEED
        rt.recorder.emit(
            run,
            EventKind.STEP_WAIT_FOR_FAILED,
            ex,
            {
                "error_type": info.error_type,
                "error_message": info.detail,
                "attempts": ex.attempt,
                "started_ns": ex.first_started_ns,
                "policy": "PROCEED" if proceed else "FAIL_FLOW",
            },
        )
        if proceed:
            # Execute runs as after an empty Wait, and can see the error (R44).
            ex.wait_for_failed = True
            ex.recovery_error = info
            self.start_method_soon(run, ex, "execute")
            return
        self._decisions.fail_flow_worker(run, ex, info)


def disarm(ex: Execution) -> None:
    """Cancel an attempt's method timeout and heartbeat timer and forget its Task: it ended."""
    if ex.method_timeout is not None:
        ex.method_timeout.cancel()
        ex.method_timeout = None
    if ex.heartbeat_timer is not None:
        ex.heartbeat_timer.cancel()
        ex.heartbeat_timer = None
    ex.task = None


def _checked_retry_after(error: RetryAfterError, where: str) -> BaseException:
    """The error itself when well formed, else a FlowDefinitionError saying what is wrong.

    A RetryAfterError built by hand (not with ``retry_after``) may carry anything; a malformed
    one fails the attempt under the method's retry policy instead of escaping the engine.
    """
    seconds = getattr(error, "after_seconds", None)
    cause = getattr(error, "cause", None)
    problem = None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        problem = f"after_seconds must be a number of seconds, got {type(seconds).__name__}"
    elif not (0 < seconds <= MAX_RETRY_AFTER_S):
        problem = f"after_seconds must be in (0, {MAX_RETRY_AFTER_S}], got {seconds!r}"
    elif not isinstance(cause, BaseException):
        problem = f"cause must be an exception, got {type(cause).__name__}"
    if problem is None:
        return error
    return FlowDefinitionError(
        f"{where} raised a malformed RetryAfterError: {problem} (build it with retry_after())"
    )


def run_locks(kernel: Kernel, run: FlowRun) -> Any:
    """The lock table of ``run``."""
    return kernel.lock_table(run)


def _unregistered(rt: Kernel, flow: Any) -> str:
    """Why ``flow`` is not registered (the registry's own hint), or "" when it is."""
    try:
        rt.registry.definition(flow)
    except FlowDefinitionError as error:
        return str(error)
    return ""
