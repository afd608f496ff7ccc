"""Runtime: wires one engine — its collaborators, the handler table, the commit cycle, close.

Everything a unit of work touches lives in the :class:`~dexviz.engine.core.kernel.Kernel` (state and
the services below every collaborator). The runtime is that kernel plus the collaborators,
built here in the order they depend on each other (commit → attempt → flows), the table of
what each kind of unit does, and the few upward hooks (:mod:`dexviz.engine.core.ports`) installed
once: a closed run, a commit. Its :meth:`Runtime.commit` runs the after-commit checks.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from dexviz.engine.attempt.fast import FastPath
from dexviz.engine.attempt.invoke import Invoker
from dexviz.engine.commit import heartbeats
from dexviz.engine.commit.decide import Decisions
from dexviz.engine.commit.waits import WaitManager
from dexviz.engine.core.choice import Chooser
from dexviz.engine.core.faults import FaultPlan
from dexviz.engine.core.kernel import Kernel
from dexviz.engine.core.live import LiveScheduler
from dexviz.engine.core.runners import LiveRunner
from dexviz.engine.core.scheduler import SIMULATION_EPOCH_NS
from dexviz.engine.core.state import FlowRun
from dexviz.engine.core.store import Store
from dexviz.engine.core.units import (
    DelayedStart,
    FlowRetry,
    FlowTimeout,
    HeartbeatDue,
    HeartbeatLost,
    MethodTimedOut,
    ResumeAfterLock,
    ResumeMethod,
    RetryAttempt,
    TimerFired,
)
from dexviz.engine.flows.continue_as_new import ContinueAsNew
from dexviz.engine.flows.starts import Starts
from dexviz.engine.flows.subflows import SubFlows
from dexviz.engine.flows.time_travel import TimeTravel
from dexviz.engine.flows.timeouts import FlowTimeouts
from dexviz.engine.sqlite.sqlite_schema import StoreError
from dexviz.history.event import Event
from dexviz.sdk.clock import handler_clock
from dexviz.sdk.flow_options import StartFlowOptions
from dexviz.sdk.registry import Registry

if TYPE_CHECKING:
    from concurrent.futures import Future


class Runtime(Kernel):
    """Owns every Flow run of one engine and runs units of work on the virtual clock."""

    def __init__(
        self,
        registry: Registry,
        *,
        seed: int = 0,
        store: Store | None = None,
        faults: FaultPlan | None = None,
        epoch_ns: int = SIMULATION_EPOCH_NS,
        live: bool = False,
        chooser: Chooser | None = None,
    ) -> None:
        super().__init__(
            registry,
            seed=seed,
            store=store,
            faults=faults,
            epoch_ns=epoch_ns,
            live=live,
            chooser=chooser,
            commit=self.commit,
        )
        self.closed = False
        self.crashed = False
        self.store_failed: StoreError | None = None
        self._watchers: list[tuple[Callable[[], bool], Future[None]]] = []
        # A store with deferred fsyncs ("group") must not let an acknowledgement out early.
        self.durable: Callable[[], None] | None = getattr(self.store, "wait_durable", None)
        self._wire()
        self.handlers.update(self._handler_table())
        self.after_commit: tuple[Callable[[list[Event]], None], ...] = (
            self._crash_fault,
            self._fault_cancellations,
            self._continue_runs,
            self._wake_watchers,
            self._acknowledge,
        )
        """What a commit that recorded events does next, in this order."""
        self.snapshot_names: dict[int, tuple[Any, ...]] | None = None
        """What a snapshot names instead of copying (see ``engine.snapshot``), once needed."""

    def _wire(self) -> None:
        """Build the collaborators bottom up (commit, attempt, flows) and install the hooks."""
        self.waits = WaitManager(self)
        self.decisions = Decisions(self, self.waits, self)
        self.invoker = Invoker(self, self, self.waits, self.decisions)
        self.fast = FastPath(self, self, self.invoker, self.decisions, self.waits)
        self.starter = self.fast
        self.timeouts = FlowTimeouts(self, self.decisions)
        self.continue_as_new = ContinueAsNew(self, self.timeouts, self)
        self.starts = Starts(self, self.decisions, self.timeouts, self.continue_as_new, self)
        self.subflows = SubFlows(self, self.decisions, self.waits, self.starts)
        self.waits.children = self.subflows
        self.time_travel = TimeTravel(
            self, self.decisions, self.waits, self.timeouts, self.starts, self
        )

    def _handler_table(self) -> dict[type, Callable[[Any], None]]:
        """What each kind of unit does: the one place that maps records to collaborators."""
        return {
            RetryAttempt: self.invoker.retry,
            ResumeAfterLock: self.invoker.retry,
            TimerFired: self.waits.fire_timer,
            MethodTimedOut: self.invoker.time_out,
            HeartbeatDue: partial(heartbeats.beat, self),
            HeartbeatLost: partial(heartbeats.lost, self, self.invoker),
            DelayedStart: self.starts.run_delayed_start,
            ResumeMethod: self.invoker.resume,
            FlowRetry: self.starts.run_retry,
            FlowTimeout: self.timeouts.run_timeout,
        }

    # -- units ----------------------------------------------------------------------------
    def run_unit(self, until_ns: int | None = None) -> list[Event] | None:
        """Run one simulation unit and commit it; None when there is nothing to run."""
        if self.sim is None:
            raise RuntimeError("stepping is for simulation; a live engine runs on its own thread")
        unit = self.sim.pop(until_ns)
        if unit is None:
            return None
        with self.lock:
            # A handler that drives the engine (a Client wait inside a Step) nests units.
            outer = self.recorder.produced
            produced: list[Event] = []
            self.recorder.produced = produced
            clock = handler_clock.set(self.clock_millis)
            try:
                unit()
                self.commit()
            finally:
                handler_clock.reset(clock)
                self.recorder.produced = outer
                if outer is not None:
                    outer.extend(produced)
            return produced

    def commit(self) -> None:
        """Commit buffered events, then run the after-commit checks if any may apply.

        A commit the store refuses is not applied: the engine's state already holds it, so
        every later call raises the store's error until the store is opened again, and every
        client already waiting for a commit fails with it at once. The checks
        (:attr:`after_commit`) are skipped at once when none has anything to do: that is
        every commit of a plain simulation, and ``Engine.run`` commits once per unit.
        """
        try:
            committed = self.recorder.commit()
        except StoreError as error:
            self.store_failed = error
            self._fail_watchers(error)
            raise
        if not committed:
            return
        faults, can = self.faults, self.continue_as_new
        if (
            faults.crash_after is not None
            or faults.cancellations
            # ContinueAsNew.watching, read without its property call: every unit commits.
            or can._requested
            or can._first_seq
            or self._watchers
            or self.durable is not None
        ):
            for check in self.after_commit:
                check(committed)

    def _crash_fault(self, committed: list[Event]) -> None:
        if self.faults.crash_after is not None:
            self.crashing()

    def _fault_cancellations(self, committed: list[Event]) -> None:
        if self.faults.cancellations:
            for event in committed:
                for flow_id, execution_id in self.faults.cancellations_for(event):
                    self.cancel_execution(flow_id, execution_id, "fault")

    def _continue_runs(self, committed: list[Event]) -> None:
        if self.continue_as_new.watching:
            self.continue_as_new.committed({event.flow_id for event in committed})

    def _wake_watchers(self, committed: list[Event]) -> None:
        if self._watchers:
            self._check_watchers()

    def _acknowledge(self, committed: list[Event]) -> None:
        if self.durable is not None and self.acknowledges_now():
            self.durable()

    def acknowledges_now(self) -> bool:
        """Whether a commit returns to a caller now: a client call, not a unit of the engine."""
        if isinstance(self.scheduler, LiveScheduler):
            return not self.scheduler.on_engine_thread()
        return self.recorder.produced is None

    def crashing(self) -> None:
        """Count a commit for a crash fault; at the planned one, crash.

        Crashing drops the store's writer lock (as the death of the process would) and raises
        EngineCrashed out of the engine.
        """
        try:
            self.faults.committed()
        except BaseException as crash:
            abandon = getattr(self.store, "abandon", None)
            if abandon is not None:
                abandon()
            self.abandon(crash)
            raise

    def abandon(self, crash: BaseException | None = None) -> None:
        """Give up a crashed simulation: later calls are rejected, no handler code runs again.

        Its coroutine handlers' Tasks are dropped where they are (as a killed process would
        drop them), without anything left to warn when they are collected. The store stays
        open for the engine that resumes it. A ``crash`` raised inside a handler's Task still
        leaves the engine (asyncio alone would keep it as the Task's error).
        """
        if self.sim is None or self.closed:
            return
        self.closed = self.crashed = True
        if self._loop is not None:
            self._loop.abandon(crash)

    def write_stream(self, flow_id: str, stream: Any, source: str, value: Any) -> Any:
        """Append to a Stream now, outside any commit, and wake readers (R180)."""
        with self.lock:
            message = self.streams.log(flow_id, stream).append(value, source, self.now())
            if self._watchers:
                self._check_watchers()
            return message

    def watch(self, ready: Callable[[], bool]) -> Future[None]:
        """A future completed after the first commit at which ``ready()`` holds (or now).

        It fails with the store's :class:`StoreError` once the store refused a commit.
        """
        from concurrent.futures import Future  # only waiting clients need futures

        future: Future[None] = Future()
        with self.lock:
            if self.store_failed is not None:  # it failed after the caller's own check
                future.set_exception(self.store_failed)
            elif ready():
                if self.durable is not None:
                    self.durable()
                future.set_result(None)
            else:
                self._watchers.append((ready, future))
        return future

    def _fail_watchers(self, error: StoreError) -> None:
        # Waiting clients would otherwise sit out their timeouts: no commit can come now.
        watchers, self._watchers = self._watchers, []
        for _, future in watchers:
            # False when the client cancelled it (its timeout passed); then it cannot cancel.
            if future.set_running_or_notify_cancel():
                future.set_exception(error)

    def _check_watchers(self) -> None:
        keep: list[tuple[Callable[[], bool], Future[None]]] = []
        for ready, future in self._watchers:
            if future.cancelled():
                continue
            if ready():
                if self.durable is not None:
                    self.durable()
                future.set_result(None)
            else:
                keep.append((ready, future))
        self._watchers = keep

    def close(self) -> None:
        """Stop the engine; later calls are rejected.

        A live engine stops its threads. A simulation cancels its coroutine handlers' pending
        Tasks (their results are not recorded) and closes its VirtualLoop.
        """
        if self.closed:
            return
        self.closed = True
        if isinstance(self.scheduler, LiveScheduler):
            heartbeats.last_beats(self, self.scheduler.pending())
            self.scheduler.stop()
        if isinstance(self.runner, LiveRunner):
            self.runner.close()
        elif self._loop is not None:
            self._loop.close()
        with self.lock:
            for _, future in self._watchers:
                future.cancel()
            self._watchers = []

    def cancel_execution(self, flow_id: str, execution_id: str, by: str) -> bool:
        """Cancel one active execution from outside (fault plan, debugger) as its own commit."""
        run = self.runs.get(flow_id)
        ex = run.executions.get(execution_id) if run else None
        if run is None or ex is None or not ex.active or not run.is_open:
            return False
        returned = self.decisions.cancel_all(run, [ex], by)
        self.waits.wake(run, set(returned))
        self.decisions.check_graceful(run)
        self.commit()
        return True

    # -- starting -----------------------------------------------------------------------
    def start_flow(
        self, flow: Any, flow_id: str, input: Any, options: StartFlowOptions | None
    ) -> str:
        """Create a run of a registered Flow and queue its start Step (R2, R3, R153)."""
        return self.starts.start_flow(flow, flow_id, input, options)

    # -- hooks of the lower layers (ports.RunEnds) ----------------------------------------
    def cancel_flow_timers(self, run: FlowRun) -> None:
        """Stop the Flow-timeout timer of a closing run (R139)."""
        self.timeouts.cancel(run)

    def flow_closed(self, run: FlowRun) -> None:
        """Retry a failed run under its Flow retry policy (R11), or tell waiting parents."""
        if self.starts.schedule_retry(run):
            return
        self.subflows.child_closed(run)
