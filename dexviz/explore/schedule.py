"""One schedule: a fresh simulation of the Flow, every open choice made by a policy.

The runner starts the Flow in a new Engine whose chooser asks a ``Policy``. Before each step it
lists the options — the ready units (named by the step at which each was first seen and its
position then, names that stay the same in every schedule sharing that prefix) and the client
actions left — lets the policy pick one, runs it, and records the step's footprint and canonical
state, then runs the checks. Waiter and fault choices inside a step go to the same policy.
"""

from __future__ import annotations

import asyncio
import pickle
import time
from collections.abc import Callable, Sequence, Set
from typing import Any

from dexviz.engine import engine_state
from dexviz.engine.core.choice import FaultPoint
from dexviz.engine.engine import Engine
from dexviz.engine.engine_state import SnapshotError
from dexviz.engine.runtime import Runtime
from dexviz.explore.canonical import LIVE, Keys, canonical_fingerprint
from dexviz.explore.canonical_text import pieces_of
from dexviz.explore.checks import (
    Monitor,
    Monitors,
    View,
    copied_monitors,
    copyable,
    monitor_state,
)
from dexviz.explore.fingerprint import Opaque, fingerprint
from dexviz.explore.fingerprint import unit as describe_unit
from dexviz.explore.footprint import ANY, Footprint, footprint_of
from dexviz.explore.labels import describe
from dexviz.explore.owners import owner_of
from dexviz.explore.schedule_records import (
    UNKEYED,
    ChoiceRecord,
    Found,
    Option,
    Policy,
    Resume,
    ScheduleResult,
    Setup,
    StepRecord,
)
from dexviz.explore.state_key import ExecutionDigests, StateKey, state_key
from dexviz.history.event import Event


class _Chooser:
    """The engine-side chooser: ready picks come from the runner, the rest from the policy."""

    def __init__(self) -> None:
        self.record: Callable[[str, tuple[Option, ...]], int | None] = _unset
        self.primed: int | None = None

    def ready(self, units: Sequence[Callable[[], None]]) -> int:
        if self.primed is not None:
            index, self.primed = self.primed, None
            return index
        # A unit run from inside another (a client call that drives the engine).
        return self.record("nested", tuple(range(len(units)))) or 0

    def waiter(self, waiters: Sequence[Any], unready: Set[str]) -> int:
        open_ = [p for p, ex in enumerate(waiters) if ex.execution_id not in unready]
        if len(open_) < 2:
            return open_[0] if open_ else 0
        choice = self.record("waiter", tuple(waiters[p].execution_id for p in open_))
        return open_[choice or 0]

    def fault(self, point: FaultPoint) -> bool:
        return self.record("fault", ("pass", f"fail {point}")) == 1


def _unset(kind: str, options: tuple[Option, ...]) -> int | None:
    raise RuntimeError(f"a {kind} choice outside a schedule")


class Bench:
    """An engine and its chooser that schedules resumed from snapshots share, one at a time.

    Each resumed schedule restores its snapshot into the engine, replacing whatever the last
    one left (restoring from the engine's own snapshots copies them, unpickling nothing).
    """

    def __init__(self, setup: Setup) -> None:
        self.chooser = _Chooser()
        self.engine = Engine(setup.registry, faults=setup.fault_plan(), chooser=self.chooser)


class _Run:
    """The state of one schedule while it runs."""

    def __init__(self, setup: Setup, policy: Policy, bench: Bench | None = None) -> None:
        self.setup = setup
        self.policy = policy
        self.result = ScheduleResult()
        self.shared = bench is not None
        if bench is None:
            bench = Bench(setup)
        self.chooser = bench.chooser
        self.chooser.record = self._record
        self.engine = bench.engine
        self.rt: Runtime = self.engine.runtime
        self.names: dict[int, Option] = {}
        self.units: dict[Option, Callable[[], None]] = {}
        # A policy that prunes revisited states asks for fingerprints (see explore.visits).
        self.revisit: Callable[[StepRecord, Callable[[Option], str | None]], bool] | None = (
            getattr(policy, "revisit", None) if getattr(policy, "prunes", False) else None
        )
        # A policy may ask for fingerprints at some steps only (the stateful search's last).
        self.wants: Callable[[int], bool] | None = getattr(policy, "wants_fingerprint", None)
        # The stateful search names executions by lineage (``canonical_fingerprint``).
        self.canonical: bool = getattr(policy, "canonical", False)
        self.keys: Keys | None = None
        # A policy may want the canonical state after some steps only (not on a replay's way).
        self.keyed: Callable[[int], bool] | None = getattr(policy, "wants_state", None)
        # The stateful search skips the snapshot of a successor it has seen already.
        self.known: Callable[[str], bool] | None = getattr(policy, "known", None)
        # A policy that never reads a step's footprint (the stateful search) is given the
        # one that commutes with nothing, unmeasured.
        self.footprints: bool = getattr(policy, "footprints", True)
        self.tasks: dict[asyncio.Task[Any], str] = {}
        self.digests = ExecutionDigests()
        # The executions of the snapshot this schedule resumed from (``canonical.LiveTexts``).
        self.sources: dict[str, Any] | None = None
        self.keep: list[object] = []
        self.left = [a.count for a in setup.actions]
        # Made by ``start``; a resumed schedule takes the snapshot's.
        self.monitors: list[tuple[str, Monitor]] = []

    def _record(self, kind: str, options: tuple[Option, ...]) -> int | None:
        index = self.policy.choose(kind, options)
        if index is None:
            if kind != "ready":
                raise RuntimeError(f"a policy must pick a {kind} option")
            return None
        self.result.choices.append(ChoiceRecord(kind, index, len(options), options[index]))
        return index

    def start(self) -> None:
        setup = self.setup
        self.monitors = [(c.name, c.monitor()) for c in setup.checks]
        self.engine.client().start_flow(setup.flow, setup.flow_id, setup.input)
        self.result.initial = self._state()
        self._check(tuple(self.engine.history(setup.flow_id)), -1)

    def resume(self, point: Resume) -> None:
        """Start from ``point`` (a state an earlier schedule reached) instead of the start."""
        self.engine.restore(point.snapshot)
        self.left = list(point.left)
        kept = point.monitors
        # Copies of the kept copies: those stay as they were, for the next resume.
        if isinstance(kept, bytes):
            self.monitors = pickle.loads(kept)
        else:
            copies = copied_monitors(kept)
            assert copies is not None  # kept copies have copied() themselves
            self.monitors = list(copies)
        self.sources = point.snapshot.held_executions(self.setup.flow_id)
        if point.digests is not None:
            self.digests = ExecutionDigests(point.digests)
        self.result.initial = self._state() if point.state is None else point.state

    def seen_before(self) -> bool:
        """Whether the last step reached a state the policy says was reached before."""
        key = self.result.steps[-1].fingerprint if self.result.steps else None
        return key is not None and self.known is not None and self.known(key)

    def capture(self, depth: int, last: bool = False) -> Resume | None:
        """This state as a ``Resume``, or None; ``last``: the schedule runs no further step.

        None while the engine cannot snapshot it (a coroutine handler the engine cannot
        re-drive: one awaiting a foreign future, or a timed-out one still unwinding) or a
        monitor cannot be pickled: such a state is reached by replaying choices instead.
        """
        if self.result.found is not None:
            return None
        try:
            if self.shared and last:
                # The bench's engine is restored before it runs again: hand its state over.
                with self.rt.lock:
                    snapshot = engine_state.take_over(self.rt)
            else:
                snapshot = self.engine.snapshot()
            # The executions just described are the snapshot's now: keep their texts.
            LIVE.keep(snapshot.held_executions(self.setup.flow_id))
            monitors = self._kept_monitors(last)
        except (SnapshotError, pickle.PicklingError, TypeError, AttributeError):
            return None
        steps = self.result.steps
        state = steps[-1].state if steps else self.result.initial
        return Resume(snapshot, tuple(self.left), monitors, depth,
                      None if state == UNKEYED else state, self.digests.saved())  # fmt: skip

    def _kept_monitors(self, last: bool) -> bytes | Monitors:
        """The monitors as a snapshot keeps them: copies (or the very ones), else pickled."""
        if not copyable(self.monitors):
            return pickle.dumps(self.monitors)
        if last:
            # Only ``at_end`` reads them from here on, and a copyable monitor's never writes.
            return tuple(self.monitors)
        copies = copied_monitors(self.monitors)
        assert copies is not None  # copyable
        return copies

    def _state(self) -> StateKey:
        sim = self.rt.sim
        assert sim is not None
        due = sim.next_due_ns()
        pending = (-1 if due is None else due - sim.epoch_ns,)
        runs = self.rt.runs
        digests = self.digests if len(runs) == 1 else None
        return state_key(runs.values(), sim.now_ns, sim.epoch_ns, pending, digests)

    def _check(self, events: Sequence[Event], step: int) -> bool:
        if not events:
            return False
        view = View(self.engine, self.setup.flow_id)
        for name, monitor in self.monitors:
            message = monitor.after_commit(events, view)
            if message is not None:
                self.result.found = Found(name, message, step)
                return True
        return False

    def options(self, step: int) -> tuple[list[Callable[[], None]], list[Option]]:
        sim = self.rt.sim
        assert sim is not None
        actions: list[Option] = [("a", k) for k, left in enumerate(self.left) if left > 0]
        units = sim.runnable(sim.now_ns)
        if not units and actions and sim.next_due_ns() is not None:
            # Idle until a timer: a client call may land now, or time moves on first.
            idle = self._record("idle", ("advance", *actions))
            if idle:
                return [], [actions[idle - 1]]
        if not units:
            units = sim.runnable()
        names = self.names
        options: list[Option] = []
        for position, unit in enumerate(units):
            name = names.get(id(unit))
            if name is None:
                name = names[id(unit)] = ("u", step, position)
                self.keep.append(unit)
                self.units[name] = unit
            options.append(name)
        return units, options + actions

    def step(self, step: int) -> bool:
        """Run one step; False when the schedule is over."""
        units, options = self.options(step)
        if not options:
            return False
        choice = self._record("ready", tuple(options)) if len(options) > 1 else 0
        # The ready choice's own index: waiter and fault choices made while the step runs
        # come after it, and the races of this step must backtrack here, not there.
        node = len(self.result.choices) - 1 if len(options) > 1 else -1
        if choice is None:
            self.result.outcome = "blocked"
            return False
        sim = self.rt.sim
        assert sim is not None
        now = sim.now_ns
        if choice < len(units):
            events, label, footprint = self._run_unit(units, choice)
            first_seen = int(options[choice][1])  # type: ignore[index]
        else:
            events, label = self._run_action(int(options[choice][1]))  # type: ignore[index]
            footprint, first_seen = Footprint.everything(), -1
        if self.footprints:
            self._note_tasks()
        run = self.rt.runs.get(self.setup.flow_id)
        if run is not None and events:
            self.digests.touch(run, {e.execution_id for e in events if e.execution_id})
        violated = self._check(events, step)
        state = self._state() if self.keyed is None or self.keyed(step) else UNKEYED
        key = (
            None
            if violated or self.revisit is None or (self.wants is not None and not self.wants(step))
            else self._fingerprint()
        )
        record = StepRecord(step, options[choice], node, first_seen, now, footprint, state,
                            label, events, key, None if key is None else self.keys)  # fmt: skip
        self.result.steps.append(record)
        self.policy.stepped(record)
        if violated:
            return False
        if self.revisit is not None and self.revisit(record, self._describe):
            self.result.outcome = "pruned"
            return False
        return True

    def _fingerprint(self) -> str | None:
        monitors = [monitor_state(m) for _, m in self.monitors]
        if any(m is None for m in monitors):
            return None
        outside = (tuple(self.left), tuple(monitors))
        if self.canonical:
            setup = self.setup
            keys = self.keys = canonical_fingerprint(
                self.rt, outside, setup.input, setup.symmetry, self.sources, pieces_of(setup)
            )
            return None if keys is None else keys.canonical
        return fingerprint(self.rt, outside)

    def _describe(self, option: Option) -> str | None:
        """A sleeping option as the state sees it: the unit's description, "?" if unknown."""
        if isinstance(option, tuple) and option[0] == "a":
            return repr(option)
        found = self.units.get(option)
        sim = self.rt.sim
        if found is None or sim is None or not any(u is found for u in sim.ready_units):
            return None  # ran already: it cannot be offered again
        try:
            return repr(describe_unit(found))
        except Opaque:
            return "?"

    def _run_unit(
        self, units: list[Callable[[], None]], choice: int
    ) -> tuple[tuple[Event, ...], str, Footprint]:
        # Asked before the unit runs: running it clears the future that names its Task.
        owner = owner_of(units[choice], self.tasks) if self.footprints else None
        self.chooser.primed = choice
        events = tuple(self.rt.run_unit() or ())
        self.chooser.primed = None
        if self.setup.dependent_always or not self.footprints:
            footprint = Footprint.everything()
        elif events:
            footprint = footprint_of(events, self._wait_channels)
        else:
            footprint = Footprint.reading(f"exec:{owner}" if owner else ANY)
        return events, describe(events), footprint

    def _run_action(self, index: int) -> tuple[tuple[Event, ...], str]:
        self.left[index] -= 1
        return self.setup.actions[index].run_recorded(self.engine, self.setup.flow_id)

    def _note_tasks(self) -> None:
        run = self.rt.runs.get(self.setup.flow_id)
        if run is not None:
            for ex in run.executions.values():
                if isinstance(ex.task, asyncio.Task):
                    self.tasks[ex.task] = ex.execution_id

    def _wait_channels(self, execution_id: str) -> list[str]:
        run = self.rt.runs.get(self.setup.flow_id)
        ex = run.executions.get(execution_id) if run is not None else None
        if ex is None or ex.wait is None:
            return []
        return [c.physical_name for c in ex.wait.channel_conditions]

    def finish(self, terminal: bool) -> None:
        if self.result.found is not None:
            self.result.outcome = "violation"
            return
        view = View(self.engine, self.setup.flow_id)
        for name, monitor in self.monitors:
            message = monitor.at_end(view, terminal)
            if message is not None:
                self.result.found = Found(name, message, len(self.result.steps) - 1)
                self.result.outcome = "violation"
                return


def run_schedule(
    setup: Setup,
    policy: Policy,
    *,
    keep_engine: bool = False,
    resume: Resume | None = None,
    capture: int | None = None,
    bench: Bench | None = None,
) -> ScheduleResult:
    """Run one schedule to its end, a violation, the depth bound, or a sleep-set block.

    ``resume`` starts it at a state reached before (its steps are then numbered from that
    state's depth and ``steps`` holds only those run here); ``capture`` snapshots the state
    after that step into ``result.captured``; a resumed schedule runs on ``bench``'s engine
    when one is given (and leaves it open), on a new one otherwise.
    """
    shared = bench is not None and resume is not None
    run = _Run(setup, policy, bench if shared else None)
    step = 0
    if resume is None:
        run.start()
    else:
        run.resume(resume)
        step = resume.depth
    result = run.result
    if result.found is None:
        while step < setup.max_depth:
            if not run.step(step):
                break
            if step == capture and not run.seen_before():
                result.captured = run.capture(step + 1, last=step + 1 >= setup.max_depth)
            step += 1
        else:
            result.outcome = "depth"
    terminal = result.found is None and result.outcome == "terminal"
    run.finish(terminal)
    if keep_engine:
        result.engine = run.engine
    elif not shared:
        # Cancels the handler Tasks the schedule left pending (a kept engine, once dropped,
        # lets its loop close them).
        run.engine.close()
    return result


def clock() -> float:
    """Wall-clock seconds for time budgets."""
    return time.perf_counter()
