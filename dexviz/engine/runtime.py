"""Runtime: the simulation engine's core — Flow runs, the scheduler loop and the commit cycle."""

from __future__ import annotations

import gc
import random
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dexviz.engine import heartbeats
from dexviz.engine.choice import Chooser, SeededChooser
from dexviz.engine.continue_as_new import ContinueAsNew
from dexviz.engine.decide import Decisions
from dexviz.engine.fast import FastPath
from dexviz.engine.faults import FaultPlan
from dexviz.engine.invoke import Invoker
from dexviz.engine.live import LiveScheduler
from dexviz.engine.locks import LockTable
from dexviz.engine.recorder import Recorder
from dexviz.engine.runners import LiveRunner, SimRunner
from dexviz.engine.scheduler import SIMULATION_EPOCH_NS, Scheduler, TimerHandle
from dexviz.engine.sqlite_schema import StoreError
from dexviz.engine.starts import Starts
from dexviz.engine.state import Execution, FlowRun
from dexviz.engine.store import MemoryStore, Store
from dexviz.engine.streams import StreamStore
from dexviz.engine.subflows import SubFlows
from dexviz.engine.time_travel import TimeTravel
from dexviz.engine.timeouts import FlowTimeouts
from dexviz.engine.waits import WaitManager
from dexviz.history.event import Event
from dexviz.sdk.clock import handler_clock
from dexviz.sdk.flow_options import StartFlowOptions
from dexviz.sdk.registry import Registry
from dexviz.sdk.results import FlowResult, FlowStatus

if TYPE_CHECKING:
    from concurrent.futures import Future

    from dexviz.engine.loop import VirtualLoop


_VARIANT = 2 << 62


@contextmanager
def relaxed_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while the engine drives units, then resume it.

    A run allocates many small objects that all survive (events, executions, payloads), and the
    collector would scan each of them twice on its way to the oldest generation without ever
    finding garbage: that was a quarter of a long run's time. Reference counting still frees
    everything the engine drops; the rare reference cycles made during a run (a stored
    exception, say) are collected once the collector resumes.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Runtime:
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
        self.registry = registry
        self.codecs = registry.codec_registry
        self.seed = seed
        self.live = live
        self.lock = threading.RLock()
        self.errors: list[BaseException] = []
        self.closed = False
        self.crashed = False
        self.store_failed: StoreError | None = None
        self._watchers: list[tuple[Callable[[], bool], Future[None]]] = []
        self.sim: Scheduler | None = None
        self.scheduler: Scheduler | LiveScheduler
        self.runner: SimRunner | LiveRunner
        if live:
            self.scheduler = LiveScheduler(seed, self.lock, self.errors.append, self.commit)
            self.runner = LiveRunner(self.scheduler, self.clock_millis)
            self.chooser: Chooser = chooser or SeededChooser(self.scheduler.rng)
        else:
            self.sim = self.scheduler = Scheduler(seed, epoch_ns, chooser)
            self.chooser = self.sim.chooser
            self.runner = SimRunner(lambda: self.loop, self.clock_millis)
        self._loop: VirtualLoop | None = None
        self.store: Store = store if store is not None else MemoryStore()
        self.recorder = Recorder(self.store, self.scheduler)
        # A store with deferred fsyncs ("group") must not let an acknowledgement out early.
        self.durable: Callable[[], None] | None = getattr(self.store, "wait_durable", None)
        self.faults = faults if faults is not None else FaultPlan()
        self.faults.chooser = self.chooser
        self.waits = WaitManager(self)
        self.invoker = Invoker(self)
        self.fast = FastPath(self)
        self.decisions = Decisions(self)
        self.subflows = SubFlows(self)
        self.timeouts = FlowTimeouts(self)
        self.starts = Starts(self)
        self.time_travel = TimeTravel(self)
        self.continue_as_new = ContinueAsNew(self)
        self.runs: dict[str, FlowRun] = {}
        self.streams = StreamStore()
        self.previous_runs: dict[str, list[FlowRun]] = {}
        self._locks: dict[str, LockTable] = {}
        self._stale_skips: dict[str, list[tuple[str, Any]]] = {}
        self.ids = random.Random(f"dexviz-run-ids:{seed}")
        self._id_millis = -1
        self._id_prefix = ""
        self.snapshot_names: dict[int, tuple[Any, ...]] | None = None
        """What a snapshot names instead of copying (see ``engine.snapshot``), once needed."""

    @property
    def loop(self) -> VirtualLoop:
        """The simulation's asyncio loop, created (and asyncio imported) for the first coroutine."""
        if self._loop is None:
            assert self.sim is not None, "a live engine runs coroutines on a real asyncio loop"
            from dexviz.engine.loop import VirtualLoop

            self._loop = VirtualLoop(self.sim)
        return self._loop

    # -- clock ----------------------------------------------------------------------------
    def now(self) -> int:
        """Engine time in ns since the epoch (virtual in simulation, wall clock when live)."""
        return self.scheduler.now_ns

    def message_id(self) -> str:
        """A new message id: a UUIDv7 from engine time and the seeded source (R61).

        ``uuid_text((millis << 80) | 7 << 76 | r12 << 64 | 2 << 62 | r62)``, written out: the
        time part is formatted once per millisecond (most messages of a simulation share it).
        """
        millis = self.scheduler.now_ns // 1_000_000
        if millis != self._id_millis:
            text = f"{millis & 0xFFFFFFFFFFFF:012x}"
            self._id_millis, self._id_prefix = millis, f"{text[:8]}-{text[8:]}-7"
        bits = self.ids.getrandbits
        # The random 76 bits, formatted with one spec: 3 hex digits of r12, then 0x8000 | r62.
        text = f"{bits(12) << 64 | _VARIANT | bits(62):019x}"
        return f"{self._id_prefix}{text[:3]}-{text[3:7]}-{text[7:]}"

    def clock_millis(self) -> int:
        """Engine time in ms (what ``current_time_millis()`` returns inside handlers)."""
        return self.scheduler.now_ns // 1_000_000

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
        """Commit buffered events, apply fault-plan cancellations, and wake client waiters.

        A commit the store refuses is not applied: the engine's state already holds it, so
        every later call raises the store's error until the store is opened again.
        """
        try:
            committed = self.recorder.commit()
        except StoreError as error:
            self.store_failed = error
            raise
        if committed and self.faults.crash_after is not None:
            self.crashing()
        if self.faults.cancellations:
            for event in committed:
                for flow_id, execution_id in self.faults.cancellations_for(event):
                    self.cancel_execution(flow_id, execution_id, "fault")
        if committed and self.continue_as_new.watching:
            self.continue_as_new.committed({event.flow_id for event in committed})
        if committed and self._watchers:
            self._check_watchers()
        if committed and self.durable is not None and self.acknowledges_now():
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
        """A future completed after the first commit at which ``ready()`` holds (or now)."""
        from concurrent.futures import Future  # only waiting clients need futures

        future: Future[None] = Future()
        with self.lock:
            if ready():
                if self.durable is not None:
                    self.durable()
                future.set_result(None)
            else:
                self._watchers.append((ready, future))
        return future

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

    def all_runs(self) -> list[FlowRun]:
        """Every run this engine knows, earlier runs of reused Flow ids included."""
        earlier = [r for runs in self.previous_runs.values() for r in runs]
        return earlier + list(self.runs.values())

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

    # -- locks, timers, subflows ----------------------------------------------------------
    def lock_table(self, run: FlowRun) -> LockTable:
        """The lock table of ``run``."""
        table = self._locks.get(run.run_id)
        if table is None:
            table = self._locks[run.run_id] = LockTable()
        return table

    def release_locks(self, run: FlowRun, ex: Execution) -> None:
        """Release ``ex``'s locks at the end of its method and start parked methods."""
        table = self._locks.get(run.run_id)
        if table is not None:
            for resume in table.release(ex.execution_id):
                self.scheduler.call_soon(resume)

    def forget_locks(self, run: FlowRun, ex: Execution) -> None:
        """Drop a canceled execution from the lock table."""
        table = self._locks.get(run.run_id)
        if table is not None:
            for resume in table.forget(ex.execution_id):
                self.scheduler.call_soon(resume)

    @property
    def lock_tables(self) -> Mapping[str, LockTable]:
        """The lock table of each run that took a lock, by run id (read-only)."""
        return MappingProxyType(self._locks)

    @property
    def stale_skips(self) -> Mapping[str, list[tuple[str, Any]]]:
        """Remembered skips of timers that do not exist yet, by run id (read-only)."""
        return MappingProxyType(self._stale_skips)

    def add_stale_skip(self, run: FlowRun, execution_id: str, timer_id: Any) -> None:
        """Remember a skip for a timer that does not exist yet (R128)."""
        self._stale_skips.setdefault(run.run_id, []).append((execution_id, timer_id))

    def apply_stale_skips(self, run: FlowRun, ex: Execution) -> None:
        """Apply remembered skips aimed at ``ex`` now that its timers exist."""
        skips = self._stale_skips.get(run.run_id)
        if not skips:
            return
        keep: list[tuple[str, Any]] = []
        for execution_id, timer_id in skips:
            timer = find_timer(ex, timer_id) if execution_id == ex.execution_id else None
            if timer is None:
                keep.append((execution_id, timer_id))
            else:
                self.waits.complete_timer(run, ex, timer, True)
        self._stale_skips[run.run_id] = keep

    def rekey_run(self, previous: str, run_id: str) -> None:
        """Move what is kept per run id to a run that continued as new under ``run_id``."""
        if previous in self._locks:
            self._locks[run_id] = self._locks.pop(previous)
        if previous in self._stale_skips:
            self._stale_skips[run_id] = self._stale_skips.pop(previous)
        self.timeouts.rekey(previous, run_id)

    def cancel_flow_timers(self, run: FlowRun) -> None:
        """Stop the Flow-timeout timer of a closing run (R139)."""
        self.timeouts.cancel(run)

    def flow_closed(self, run: FlowRun) -> None:
        """Retry a failed run under its Flow retry policy (R11), or tell waiting parents."""
        if self.starts.schedule_retry(run):
            return
        self.subflows.child_closed(run)

    def call_at(self, due_ns: int, unit: Any) -> TimerHandle:
        """Schedule a unit at engine time ``due_ns``."""
        return self.scheduler.call_at(due_ns, unit)

    # -- reading --------------------------------------------------------------------------
    def result(self, flow_id: str) -> FlowResult:
        """The FlowResult of the current run (RUNNING while open or about to be retried)."""
        run = self.runs[flow_id]
        if run.retry_pending:
            return FlowResult(FlowStatus.RUNNING, ())
        if run.status is FlowStatus.COMPLETED:
            return FlowResult(FlowStatus.COMPLETED, tuple(run.completions))
        return FlowResult(run.status, (), run.error_type, run.error_message, run.failure)


def find_timer(ex: Execution, timer_id: Any) -> Any:
    """The TimerState of ``ex`` selected by a TimerId, or None."""
    if timer_id.condition_id is not None:
        return next((t for t in ex.timers if t.condition_id == timer_id.condition_id), None)
    index = timer_id.condition_index
    return ex.timers[index] if index is not None and index < len(ex.timers) else None
