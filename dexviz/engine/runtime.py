"""Runtime: the simulation engine's core — Flow runs, the scheduler loop and the commit cycle."""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from dexviz.engine.decide import Decisions, Move
from dexviz.engine.errors import service_error
from dexviz.engine.faults import FaultPlan
from dexviz.engine.invoke import Invoker
from dexviz.engine.live import LiveScheduler
from dexviz.engine.locks import LockTable
from dexviz.engine.loop import VirtualLoop
from dexviz.engine.recorder import Recorder
from dexviz.engine.runners import LiveRunner, SimRunner
from dexviz.engine.scheduler import SIMULATION_EPOCH_NS, Scheduler, TimerHandle
from dexviz.engine.state import Execution, FlowRun
from dexviz.engine.store import MemoryStore, Store
from dexviz.engine.subflows import SubFlows
from dexviz.engine.timeouts import FlowTimeouts
from dexviz.engine.waits import WaitManager
from dexviz.history.event import Event
from dexviz.history.kinds import EventKind
from dexviz.sdk.codec import to_json_ready
from dexviz.sdk.condition import SubFlowCondition
from dexviz.sdk.definitions import FlowDefinition
from dexviz.sdk.errors import FlowAlreadyStartedError, FlowDefinitionError
from dexviz.sdk.flow_options import StartFlowOptions
from dexviz.sdk.registry import Registry
from dexviz.sdk.results import FlowResult, FlowStatus


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
    ) -> None:
        self.registry = registry
        self.codecs = registry.codec_registry
        self.seed = seed
        self.live = live
        self.lock = threading.RLock()
        self.errors: list[BaseException] = []
        self.closed = False
        self._watchers: list[tuple[Callable[[], bool], Future[None]]] = []
        self.sim: Scheduler | None = None
        self.scheduler: Scheduler | LiveScheduler
        self.runner: SimRunner | LiveRunner
        if live:
            self.scheduler = LiveScheduler(seed, self.lock, self.errors.append, self.commit)
            self.runner = LiveRunner(self.scheduler, self.clock_millis)
        else:
            self.sim = self.scheduler = Scheduler(seed, epoch_ns)
            self.loop = VirtualLoop(self.sim)
            self.runner = SimRunner(self.loop, self.clock_millis)
        self.store: Store = store if store is not None else MemoryStore()
        self.recorder = Recorder(self.store, self.now)
        self.faults = faults if faults is not None else FaultPlan()
        self.waits = WaitManager(self)
        self.invoker = Invoker(self)
        self.decisions = Decisions(self)
        self.subflows = SubFlows(self)
        self.timeouts = FlowTimeouts(self)
        self.runs: dict[str, FlowRun] = {}
        self.previous_runs: dict[str, list[FlowRun]] = {}
        self._locks: dict[str, LockTable] = {}
        self._stale_skips: dict[str, list[tuple[str, Any]]] = {}
        self._ids = random.Random(f"dexviz-run-ids:{seed}")
        self._specs: dict[str, dict[str, Any]] = {}

    # -- clock ----------------------------------------------------------------------------
    def now(self) -> int:
        """Engine time in ns since the epoch (virtual in simulation, wall clock when live)."""
        return self.scheduler.now_ns

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
            produced: list[Event] = []
            self.recorder.produced = produced
            try:
                unit()
                self.commit()
            finally:
                self.recorder.produced = None
            return produced

    def commit(self) -> None:
        """Commit buffered events, apply fault-plan cancellations, and wake client waiters."""
        committed = self.recorder.commit()
        if self.faults.cancellations:
            for event in committed:
                for flow_id, execution_id in self.faults.cancellations_for(event):
                    self.cancel_execution(flow_id, execution_id, "fault")
        if committed and self._watchers:
            self._check_watchers()

    def watch(self, ready: Callable[[], bool]) -> Future[None]:
        """A future completed after the first commit at which ``ready()`` holds (or now)."""
        future: Future[None] = Future()
        with self.lock:
            if ready():
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
                future.set_result(None)
            else:
                keep.append((ready, future))
        self._watchers = keep

    def all_runs(self) -> list[FlowRun]:
        """Every run this engine knows, earlier runs of reused Flow ids included."""
        earlier = [r for runs in self.previous_runs.values() for r in runs]
        return earlier + list(self.runs.values())

    def close(self) -> None:
        """Stop a live engine's threads (a simulation has none); later calls are rejected."""
        self.closed = True
        if isinstance(self.scheduler, LiveScheduler):
            self.scheduler.stop()
        if isinstance(self.runner, LiveRunner):
            self.runner.close()
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

    # -- starting -------------------------------------------------------------------------
    def start_flow(
        self, flow: Any, flow_id: str, input: Any, options: StartFlowOptions | None
    ) -> str:
        """Create a run of a registered Flow and queue its start Step (R2, R3, R153)."""
        definition = self.registry.definition(flow)
        options = options or StartFlowOptions()
        _check_flow_id(flow_id)
        existing = self.runs.get(flow_id)
        if existing is not None:
            return self._reuse(existing, definition, flow_id, input, options)
        return self._create_run(definition, flow_id, input, options)

    def _reuse(
        self,
        existing: FlowRun,
        definition: FlowDefinition,
        flow_id: str,
        input: Any,
        options: StartFlowOptions,
    ) -> str:
        request = options.request_id
        if (
            options.ignore_already_started
            and request is not None
            and request == getattr(existing, "request_id", None)
        ):
            return existing.run_id
        policy = options.id_reuse_policy.name
        running = existing.status is FlowStatus.RUNNING
        allowed = (
            (policy == "ALLOW_IF_NOT_RUNNING" and not running)
            or (policy == "ALLOW_IF_PREVIOUS_FAILED" and existing.status is FlowStatus.FAILED)
            or policy == "ALLOW_TERMINATE_IF_RUNNING"
        )
        if not allowed:
            raise service_error(
                FlowAlreadyStartedError,
                f"already started (run {existing.run_id})",
                flow_id=flow_id,
                operation="start_flow",
            )
        if running:
            self.decisions.close(existing, FlowStatus.TERMINATED)
            self.commit()
        self.previous_runs.setdefault(flow_id, []).append(existing)
        return self._create_run(definition, flow_id, input, options)

    def _create_run(
        self, definition: FlowDefinition, flow_id: str, input: Any, options: StartFlowOptions
    ) -> str:
        start = definition.start
        if start is None and input is not None:
            raise FlowDefinitionError(
                f"Flow {definition.flow_type!r} has no start Step; start it with input None"
            )
        value = None
        if start is not None:
            value = self.codecs.roundtrip(
                start.input_type, input, operation=f"Flow {definition.flow_type!r}: start input"
            )
        run_id = str(uuid.UUID(int=self._ids.getrandbits(128), version=4))
        run = FlowRun(flow_id, run_id, definition, self.now())
        run.request_id = options.request_id
        run.config = options.config_override
        self.runs[flow_id] = run
        initial = self._initial_attributes(run, options)
        execution = (
            self.decisions.new_execution(run, Move(start, value, None), "__start__")
            if start
            else None
        )
        self.recorder.emit(
            run,
            EventKind.FLOW_STARTED_OR_CONTINUED,
            None,
            {
                "flow": self._spec(definition),
                "input": to_json_ready(value),
                "start_execution_id": execution.execution_id if execution else None,
                "initial_attributes": initial,
                "continued": False,
                "mode": "simulation",
                "seed": self.seed,
                **self.timeouts.start(run, options),
            },
        )
        if execution is not None:
            self.decisions.announce(run, execution, "start")
        self.commit()
        return run_id

    def _initial_attributes(self, run: FlowRun, options: StartFlowOptions) -> list[dict[str, Any]]:
        written: list[dict[str, Any]] = []
        for attribute, instance, value in options.initial_attributes:
            if run.definition.attributes.get(attribute.name) != attribute:
                raise FlowDefinitionError(
                    f"Flow {run.flow_type!r}: initial Attribute {attribute.name!r} is not declared"
                )
            key = attribute.physical_name(instance)
            run.attributes[key] = self.codecs.roundtrip(
                attribute.value_type, value, operation=f"initial {key}"
            )
            written.append({"attribute": key, "value": to_json_ready(run.attributes[key])})
        return written

    def _spec(self, definition: FlowDefinition) -> dict[str, Any]:
        spec = self._specs.get(definition.flow_type)
        if spec is None:
            spec = self._specs[definition.flow_type] = flow_spec(definition)
        return spec

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
                resume()

    def forget_locks(self, run: FlowRun, ex: Execution) -> None:
        """Drop a canceled execution from the lock table."""
        table = self._locks.get(run.run_id)
        if table is not None:
            for resume in table.forget(ex.execution_id):
                resume()

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

    def subflow_done(self, run_id: str, ex: Execution, condition: SubFlowCondition) -> bool:
        """Whether the child Flow of a SubFlow condition has closed."""
        del run_id
        return self.subflows.is_done(ex, condition)

    def cancel_flow_timers(self, run: FlowRun) -> None:
        """Stop the Flow-timeout timer of a closing run (R139)."""
        self.timeouts.cancel(run)

    def flow_closed(self, run: FlowRun) -> None:
        """Tell parents waiting on this run as a SubFlow that it closed."""
        self.subflows.child_closed(run)

    def call_at(self, due_ns: int, unit: Any) -> TimerHandle:
        """Schedule a unit at engine time ``due_ns``."""
        return self.scheduler.call_at(due_ns, unit)

    # -- reading --------------------------------------------------------------------------
    def run_of(self, flow_id: str) -> FlowRun | None:
        """The current run of ``flow_id``."""
        return self.runs.get(flow_id)

    def result(self, flow_id: str) -> FlowResult:
        """The FlowResult of the current run (RUNNING while open)."""
        run = self.runs[flow_id]
        if run.status is FlowStatus.COMPLETED:
            return FlowResult(FlowStatus.COMPLETED, tuple(run.completions))
        return FlowResult(run.status, (), run.error_type, run.error_message)


def find_timer(ex: Execution, timer_id: Any) -> Any:
    """The TimerState of ``ex`` selected by a TimerId, or None."""
    if timer_id.condition_id is not None:
        return next((t for t in ex.timers if t.condition_id == timer_id.condition_id), None)
    index = timer_id.condition_index
    return ex.timers[index] if index is not None and index < len(ex.timers) else None


def flow_spec(definition: FlowDefinition) -> dict[str, Any]:
    """The Flow's description recorded at start (docs/history-format.md)."""
    import inspect

    cls = type(definition.flow)
    try:
        source = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        source = None
    return {
        "flow_type": definition.flow_type,
        "start_step": definition.start.step_type if definition.start else None,
        "steps": [
            {
                "step_type": s.step_type,
                "has_wait_for": s.has_wait_for,
                "description": ((type(s.step).__doc__ or "").strip().splitlines() or [""])[0],
                "execute_failure_proceed_to": _route(definition, s),
            }
            for s in definition.steps.values()
        ],
        "channels": [
            {
                "name": c.name,
                "kind": "channel_map" if type(c).__name__ == "ChannelMap" else "channel",
                "value_type": _type_label(c.value_type),
            }
            for c in definition.channels.values()
        ],
        "attributes": [
            {
                "name": a.name,
                "kind": "attribute_map" if type(a).__name__ == "AttributeMap" else "attribute",
                "value_type": _type_label(a.value_type),
            }
            for a in definition.attributes.values()
        ],
        "rpcs": sorted(definition.rpcs),
        "module": cls.__module__,
        "qualname": cls.__qualname__,
        "source_file": source,
    }


def _route(definition: FlowDefinition, step: Any) -> str | None:
    target = step.options.execute_failure_proceed_to if step.options else None
    return definition.resolve_step(target).step_type if target is not None else None


def _type_label(value_type: Any) -> str:
    if isinstance(value_type, type):
        return value_type.__name__
    return str(value_type).replace("typing.", "")


def _check_flow_id(flow_id: str) -> None:
    if not isinstance(flow_id, str) or not flow_id:
        raise ValueError(f"a Flow id must be a non-empty string, got {flow_id!r}")
    bad = [c for c in "/$:" if c in flow_id and not flow_id.startswith("SubFlow:")]
    if bad:
        raise ValueError(f"Flow id {flow_id!r} must not contain {' or '.join(bad)} (R9)")
