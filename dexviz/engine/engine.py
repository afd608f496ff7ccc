"""Engine: the public face of the in-process Dex engine in simulation mode."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from dexviz.engine.core.choice import Chooser
from dexviz.engine.core.faults import FaultPlan
from dexviz.engine.core.scheduler import SIMULATION_EPOCH_NS
from dexviz.engine.core.store import Store
from dexviz.engine.drive import drive
from dexviz.engine.recovery import Recovery, RecoveryReport
from dexviz.engine.runtime import Runtime
from dexviz.history.collector import collector_paused
from dexviz.history.event import Event
from dexviz.history.event_sequence import EventSequence
from dexviz.history.history import History
from dexviz.history.kinds import EventKind
from dexviz.sdk.errors import SimulationLimitError
from dexviz.sdk.flow import Flow
from dexviz.sdk.registry import Registry
from dexviz.sdk.results import FlowResult

if TYPE_CHECKING:
    from dexviz.engine.async_client import AsyncClient
    from dexviz.engine.client import Client
    from dexviz.engine.core.flow_state import FlowState
    from dexviz.engine.engine_state import EngineSnapshot

Breakpoint = EventKind | str | type | Callable[[Event], bool]

DEFAULT_MAX_UNITS = 5_000_000


def as_registry(flows_or_registry: Registry | Flow[Any] | Sequence[Flow[Any]]) -> Registry:
    """Accept a Registry, one Flow, or a list of Flows (async handlers allowed)."""
    if isinstance(flows_or_registry, Registry):
        return flows_or_registry
    if isinstance(flows_or_registry, Flow):
        return Registry([flows_or_registry], allow_async_handlers=True)
    return Registry(list(flows_or_registry), allow_async_handlers=True)


def breakpoint_predicate(
    until: Breakpoint, step_types: Collection[str] | None = None
) -> Callable[[Event], bool]:
    """Turn a breakpoint (event kind, Step type or class, or predicate) into a predicate.

    Args:
        until: The breakpoint.
        step_types: The Step types that exist; when given, a name that is neither an event
            kind nor one of them is a ValueError with a "did you mean" suggestion.
    """
    if isinstance(until, EventKind):
        return lambda e: e.kind == until
    if isinstance(until, type):
        name = until.__name__
        _check_step_type(name, step_types)
        return lambda e: e.step_type == name
    if isinstance(until, str):
        kinds = {k.value for k in EventKind}
        if until in kinds:
            return lambda e: str(e.kind) == until
        _check_step_type(until, step_types, kinds)
        return lambda e: e.step_type == until
    if callable(until):
        return until
    raise TypeError(
        f"until takes an EventKind, a Step type or class, or a predicate; got {until!r}"
    )


def _check_step_type(
    name: str, step_types: Collection[str] | None, kinds: Collection[str] = ()
) -> None:
    if step_types is None or name in step_types:
        return
    import difflib  # only to word a bad breakpoint's error

    close = difflib.get_close_matches(name, sorted({*step_types, *kinds}), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(
        f"breakpoint {name!r} is neither an event kind nor a Step type of the Flows"
        f"{hint}; Step types: {', '.join(sorted(step_types)) or 'none'}"
    )


class Engine:
    """An in-process Dex engine on a virtual clock: deterministic for a given seed and fault plan.

    Args:
        flows_or_registry: the Flows to run (a Registry, a Flow, or a list of Flows).
        seed: chooses among ready work and among waiters that could take the same message.
        store: where commits go (an in-memory store by default). A store that already holds
            runs (``SQLiteStore`` on an existing file) is recovered: every open run resumes
            where its last commit left it; ``recovered`` reports what was resumed.
        faults: a FaultPlan of failed attempts and cancellations to inject.
        epoch: where virtual time starts (default 2026-01-01T00:00:00Z).
        chooser: decides every open choice instead of the seed (see ``dexviz.engine.core.choice``).

    ``with Engine(...) as engine:`` closes the engine when the block ends (see ``close``).
    """

    def __init__(
        self,
        flows_or_registry: Registry | Flow[Any] | Sequence[Flow[Any]],
        *,
        seed: int = 0,
        store: Store | None = None,
        faults: FaultPlan | None = None,
        epoch: datetime | None = None,
        mode: str = "simulation",
        chooser: Chooser | None = None,
    ) -> None:
        if mode not in ("simulation", "live"):
            raise ValueError(f"mode must be 'simulation' or 'live', got {mode!r}")
        epoch_ns = SIMULATION_EPOCH_NS if epoch is None else int(epoch.timestamp() * 1e9)
        self.registry = as_registry(flows_or_registry)
        self.mode = mode
        self._rt = Runtime(
            self.registry,
            seed=seed,
            store=store,
            faults=faults,
            epoch_ns=epoch_ns,
            live=mode == "live",
            chooser=chooser,
        )
        with self._rt.lock:
            self.recovered: RecoveryReport = Recovery(self._rt).recover()

    def __enter__(self) -> Engine:
        """``with Engine(...) as engine:`` closes the engine when the block ends."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the engine, whether the block ended normally or raised."""
        self.close()

    def close(self) -> None:
        """Stop the engine and close its store; later calls are rejected.

        A live engine stops its threads. A simulation cancels the Tasks of coroutine handlers
        still running (nothing more is recorded) and closes its event loop. A SQLite store
        gives its file up for the next writer. An engine dropped without ``close`` leaves
        nothing that warns either; ``close`` is what makes the cancellation happen now.
        """
        self._rt.close()
        close = getattr(self._rt.store, "close", None)
        if close is not None:
            close()

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._rt.closed

    @property
    def errors(self) -> tuple[BaseException, ...]:
        """Internal errors a live engine's thread caught (empty when all is well)."""
        return tuple(self._rt.errors)

    def __repr__(self) -> str:
        flows = ", ".join(d.flow_type for d in self.registry.definitions)
        return (
            f"Engine([{flows}], mode={self.mode!r}, seed={self._rt.seed}, "
            f"flows_started={len(self._rt.runs)})"
        )

    @property
    def seed(self) -> int:
        """The simulation seed."""
        return self._rt.seed

    @property
    def faults(self) -> FaultPlan:
        """The fault plan; rules may be added between steps."""
        return self._rt.faults

    @property
    def time_ns(self) -> int:
        """Virtual engine time in ns since the Unix epoch."""
        return self._rt.now()

    @property
    def now(self) -> datetime:
        """Virtual engine time as a tz-aware UTC datetime."""
        return datetime.fromtimestamp(self._rt.now() / 1e9, tz=UTC)

    def client(self) -> Client:
        """A thread-safe Client of this engine (start_flow, publish, invoke_rpc, ...)."""
        from dexviz.engine.client import Client  # the client's operations load on first use

        self._check_open()
        return Client(self._rt)

    def async_client(self) -> AsyncClient:
        """An AsyncClient bound to the running event loop; live async handlers run on that loop."""
        self._check_open()
        from dexviz.engine.async_client import AsyncClient  # asyncio loads only when used

        return AsyncClient(self._rt)

    def _check_open(self) -> None:
        if self._rt.store_failed is not None:
            raise self._rt.store_failed
        if self._rt.crashed:
            raise RuntimeError(
                "this Engine crashed (a crash fault) and is abandoned; open its store with a "
                "new Engine to resume"
            )
        if self._rt.closed:
            raise RuntimeError("this Engine is closed; create a new one")

    def step(self) -> list[Event]:
        """Run one unit (a method attempt and its commit, a timer, a callback); return events."""
        self._check_open()
        produced = self._rt.run_unit()
        self._acknowledge()
        return [] if produced is None else produced

    def _acknowledge(self) -> None:
        """Before control returns to the caller, wait for the fsync of a ``group`` store."""
        if self._rt.durable is not None:
            self._rt.durable()

    def run(
        self, until: Breakpoint | None = None, *, max_units: int = DEFAULT_MAX_UNITS
    ) -> EventSequence:
        """Run until a unit produces an event matching ``until`` (or until idle); return events.

        Returns:
            The events the run committed, in commit order, as a read-only
            :class:`~dexviz.history.event_sequence.EventSequence`: it indexes, slices, iterates,
            has a ``len`` and compares equal to the ``list`` of the same ``Event`` objects;
            ``list(...)`` of it gives a list to modify.

        Raises:
            ValueError: ``until`` names neither an event kind nor a registered Step type (the
                message suggests the closest name).
        """
        self._check_open()
        predicate = breakpoint_predicate(until, self.step_types) if until is not None else None
        produced: list[Event] = []
        try:
            with collector_paused():
                if drive(self._rt, produced, max_units, predicate):
                    return EventSequence(produced)
            raise self._limit(max_units)
        finally:
            self._acknowledge()

    @property
    def step_types(self) -> frozenset[str]:
        """The Step types of every registered Flow (what a Step-type breakpoint can name)."""
        return frozenset(t for d in self.registry.definitions for t in d.steps)

    def run_until_idle(self, *, max_units: int = DEFAULT_MAX_UNITS) -> EventSequence:
        """Run until nothing more can happen without outside input; return events as ``run``."""
        return self.run(None, max_units=max_units)

    def _limit(self, max_units: int) -> SimulationLimitError:
        open_flows = [f for f, r in self._rt.runs.items() if r.is_open]
        return SimulationLimitError(
            f"simulation stopped after {max_units} units with Flows still running: "
            f"{', '.join(open_flows) or 'none'} (a timer loop never ends? pass max_units or "
            "use run(until=...))"
        )

    @property
    def is_idle(self) -> bool:
        """Whether no work is ready or scheduled."""
        return not self._rt.scheduler.has_work()

    def flow_ids(self) -> tuple[str, ...]:
        """The ids of every Flow this engine has started."""
        return tuple(self._rt.runs)

    def history(self, flow_id: str) -> History:
        """The committed history of ``flow_id``."""
        return self._rt.store.history(flow_id)

    def flow_state(self, flow_id: str) -> FlowState:
        """A snapshot of the current run of ``flow_id``."""
        run = self._rt.runs.get(flow_id)
        if run is None:
            raise KeyError(
                f"no Flow {flow_id!r} in this engine (started: {', '.join(self._rt.runs)})"
            )
        from dexviz.engine.core.flow_state import FlowState

        return FlowState.of(run)

    def result(self, flow_id: str) -> FlowResult:
        """The result of ``flow_id``'s current run (status RUNNING while it is open)."""
        if flow_id not in self._rt.runs:
            raise KeyError(f"no Flow {flow_id!r} in this engine")
        return self._rt.result(flow_id)

    @property
    def runtime(self) -> Runtime:
        """The simulation behind this engine, for in-process tools.

        ``dexviz.explore`` reads and drives its state unit by unit; applications use the
        client instead.
        """
        return self._rt

    def snapshot(self) -> EngineSnapshot:
        """An independent, picklable copy of the whole simulation at this point.

        Take it between units; a coroutine handler suspended in the VirtualLoop's timers is
        kept as its trace and re-driven on restore. ``restore`` puts this engine, or a new
        engine of the same Flows, back at that point, and the run then continues with the same
        history, byte for byte. Needs the in-memory store.

        Raises:
            SnapshotError: a live engine, a durable store, a coroutine handler that awaits
                something other than the loop's timers (or a timed-out one still unwinding),
                or a value in the state that cannot be pickled.
        """
        from dexviz.engine import engine_state  # pickle loads only for snapshots

        self._check_open()
        with self._rt.lock:
            return engine_state.take(self._rt)

    def restore(self, state: EngineSnapshot) -> None:
        """Put this engine back at ``state`` (a ``snapshot()`` of it or of the same Flows).

        Raises:
            SnapshotError: the snapshot is of other Flows, or this engine cannot hold it.
        """
        from dexviz.engine import engine_state

        self._check_open()
        with self._rt.lock:
            engine_state.restore(self._rt, state)

    def cancel_execution(self, flow_id: str, execution_id: str) -> bool:
        """Cancel one active execution now (as a fault would); False if it is not active."""
        return self._rt.cancel_execution(flow_id, execution_id, "fault")
