"""Kernel: the state of one engine and the services below every collaborator.

The runs (and the earlier runs of reused Flow ids), the clock and scheduler, the recorder and
store, the fault plan, the seeded id source, the lock tables and remembered timer skips, and
the table of what each kind of unit does. The collaborators (waits, decisions, the invoker,
the fast path, starts, SubFlows, timeouts, ...) are functions of this state: each receives the
kernel and the lower collaborators it calls, never the runtime. :class:`~dexviz.engine.runtime.
Runtime` is a kernel that builds them, fills :attr:`Kernel.handlers` and installs the few
upward hooks (:mod:`dexviz.engine.core.ports`).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from dexviz.engine.core.choice import Chooser, SeededChooser
from dexviz.engine.core.faults import FaultPlan
from dexviz.engine.core.live import LiveScheduler
from dexviz.engine.core.locks import LockTable
from dexviz.engine.core.recorder import Recorder
from dexviz.engine.core.runners import LiveRunner, SimRunner
from dexviz.engine.core.scheduler import Scheduler, TimerHandle
from dexviz.engine.core.state import Execution, FlowRun, Phase
from dexviz.engine.core.store import MemoryStore, Store
from dexviz.engine.core.streams import StreamStore
from dexviz.engine.core.units import MethodStarter, QueuedStart, Unit
from dexviz.sdk.registry import Registry
from dexviz.sdk.results import FlowResult, FlowStatus

if TYPE_CHECKING:
    from dexviz.engine.core.loop import VirtualLoop

_VARIANT = 2 << 62


class Kernel:
    """One engine's state and the services every collaborator shares (see the module doc)."""

    starter: MethodStarter
    """What runs a queued first attempt (the fast path), installed once by the runtime."""

    def __init__(
        self,
        registry: Registry,
        *,
        seed: int,
        store: Store | None,
        faults: FaultPlan | None,
        epoch_ns: int,
        live: bool,
        chooser: Chooser | None,
        commit: Callable[[], None],
    ) -> None:
        self.registry = registry
        self.codecs = registry.codec_registry
        self.seed = seed
        self.live = live
        self.lock = threading.RLock()
        self.errors: list[BaseException] = []
        self.sim: Scheduler | None = None
        self.scheduler: Scheduler | LiveScheduler
        self.runner: SimRunner | LiveRunner
        self.chooser: Chooser
        self._start_clock(seed, epoch_ns, live, chooser, commit)
        self._loop: VirtualLoop | None = None
        self.store: Store = store if store is not None else MemoryStore()
        self.recorder = Recorder(self.store, self.scheduler)
        self.faults = faults if faults is not None else FaultPlan()
        self.faults.chooser = self.chooser
        self.handlers: dict[type[Unit], Callable[[Any], None]] = {}
        """What each kind of unit does (filled once by the runtime)."""
        self.runs: dict[str, FlowRun] = {}
        self.streams = StreamStore()
        self.previous_runs: dict[str, list[FlowRun]] = {}
        self._locks: dict[str, LockTable] = {}
        self._stale_skips: dict[str, list[tuple[str, Any]]] = {}
        self.ids = random.Random(f"dexviz-run-ids:{seed}")
        self._id_millis = -1
        self._id_prefix = ""

    def _start_clock(
        self,
        seed: int,
        epoch_ns: int,
        live: bool,
        chooser: Chooser | None,
        commit: Callable[[], None],
    ) -> None:
        """The scheduler, runner and chooser: virtual time in simulation, threads when live."""
        if live:
            self.scheduler = LiveScheduler(seed, self.lock, self.errors.append, commit)
            self.runner = LiveRunner(self.scheduler, self.clock_millis)
            self.chooser = chooser or SeededChooser(self.scheduler.rng)
        else:
            self.sim = self.scheduler = Scheduler(seed, epoch_ns, chooser)
            self.chooser = self.sim.chooser
            self.runner = SimRunner(lambda: self.loop, self.clock_millis)

    @property
    def loop(self) -> VirtualLoop:
        """The simulation's asyncio loop, created (and asyncio imported) for the first coroutine."""
        if self._loop is None:
            assert self.sim is not None, "a live engine runs coroutines on a real asyncio loop"
            from dexviz.engine.core.loop import VirtualLoop

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

    def call_at(self, due_ns: int, unit: Any) -> TimerHandle:
        """Schedule a unit at engine time ``due_ns``."""
        return self.scheduler.call_at(due_ns, unit)

    def start_method_soon(self, run: FlowRun, ex: Execution, method: str) -> None:
        """Queue the first attempt of ``method`` as ready work."""
        if ex._phase is not Phase.QUEUED:
            ex.phase = Phase.WAIT_FOR if method == "wait_for" else Phase.EXECUTE
        ex.method = method
        ex.attempt = 0
        self.scheduler.call_soon(QueuedStart.of(self.starter, run, ex, method))

    # -- locks and remembered skips -------------------------------------------------------
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

    def rekey_run(self, previous: str, run_id: str) -> None:
        """Move the lock table and remembered skips of a run that continued as ``run_id``."""
        if previous in self._locks:
            self._locks[run_id] = self._locks.pop(previous)
        if previous in self._stale_skips:
            self._stale_skips[run_id] = self._stale_skips.pop(previous)

    # -- reading --------------------------------------------------------------------------
    def all_runs(self) -> list[FlowRun]:
        """Every run this engine knows, earlier runs of reused Flow ids included."""
        earlier = [r for runs in self.previous_runs.values() for r in runs]
        return earlier + list(self.runs.values())

    def result(self, flow_id: str) -> FlowResult:
        """The FlowResult of the current run (RUNNING while open or about to be retried)."""
        run = self.runs[flow_id]
        if run.retry_pending:
            return FlowResult(FlowStatus.RUNNING, ())
        if run.status is FlowStatus.COMPLETED:
            return FlowResult(FlowStatus.COMPLETED, tuple(run.completions))
        return FlowResult(run.status, (), run.error_type, run.error_message, run.failure)
