"""Fingerprints for pruning: everything that decides a schedule's future, or None.

Two schedules may share one exploration of the future only if that future is the same, so a
fingerprint describes, exactly, the Flow run (status, Attributes, each Channel's queue,
every execution with its id, phase, attempt, Wait, timers and held messages, the ``Type-N``
counters), the scheduler's ready units and live timers (each a record of what it will do: its
kind, for which execution), the virtual time, the injected failures left, the client
actions left and every check's monitor state. Ids stay in: two states that differ only by which
reviewer got ``EditContract-1`` are different states here (their futures name executions
differently, and so would their violations).

Left out, because they are names and not behaviour: message ids (drawn from the seeded source),
event sequence numbers, and the order of ready units and of waiters on a Channel (every order
is explored anyway). Values (inputs, Attributes, messages, Waits) are compared by ``repr``: a
value whose repr leaves out part of it could make two states look equal, so such types should
not be explored with pruning on.

When a part cannot be described soundly the state has no fingerprint (``None``) and is never
pruned: a coroutine handler that is suspended (its frame is not visible), an asyncio callback,
a repr that names an object by its address, more than one Flow run, a continue-as-new
waiting to happen, or a check whose monitor keeps no describable state (a plain callable
reads the whole history).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from dexviz.engine.continue_as_new import ContinueAsNew
from dexviz.engine.decide import Decisions
from dexviz.engine.fast import FastPath
from dexviz.engine.faults import FaultPlan
from dexviz.engine.invoke import Invoker, QueuedStart
from dexviz.engine.loop import LoopCallback
from dexviz.engine.runtime import Runtime
from dexviz.engine.scheduler import Scheduler
from dexviz.engine.starts import Starts
from dexviz.engine.state import Execution, FlowRun, Message, TimerState
from dexviz.engine.subflows import SubFlows
from dexviz.engine.time_travel import TimeTravel
from dexviz.engine.timeouts import FlowTimeouts
from dexviz.engine.units import Unit
from dexviz.engine.waits import WaitManager
from dexviz.explore.coroutines import (
    CoroutineOpaque,
    describe_callback,
    describe_context,
    describe_task,
)
from dexviz.explore.symmetry import Symmetry
from dexviz.sdk.context import Context
from dexviz.sdk.options import StepOptions


class Opaque(Exception):
    """Raised inside a description when a part of the state cannot be described soundly."""


# One per engine, named by their type in a closure: what they keep is either described
# elsewhere (timers are in the scheduler's heap, SubFlows make more runs), fixed for the
# exploration (timeout policies, start specs, caches), or refused (continue-as-new).
_SERVICES = (
    Runtime, Invoker, WaitManager, FastPath, Decisions, SubFlows, FlowTimeouts, Starts,
    TimeTravel, ContinueAsNew, Scheduler,
)  # fmt: skip
_SCALARS = (str, int, float, bool, bytes, type(None))
# Execution fields that are names, caches or handles described elsewhere.
_EXECUTION_SKIPPED = frozenset(
    {"step", "task", "pending_unit", "method_timeout", "heartbeat_timer", "_timers",
     "_reserved", "last_failure"}
)  # fmt: skip
# FlowRun fields that are names or history bookkeeping, not behaviour.
_RUN_SKIPPED = frozenset(
    {"definition", "executions", "_queues", "_first_waiters", "_more_waiters", "message_count",
     "seq", "message_ids", "run_id", "started_ns", "active_count", "request_id"}
)  # fmt: skip


_ADDRESS = " at 0x"
"""In a default repr: the object is named, not described, so the state has no fingerprint."""


def _cell(item: Any) -> Any:
    if isinstance(item, _SCALARS):
        return item
    if isinstance(item, Execution):
        return ("ex", item.execution_id)
    if isinstance(item, FlowRun):
        return ("run", item.flow_id)
    if isinstance(item, TimerState):
        return ("timer", item.index, item.condition_id, item.fire_at_ns, item.done)
    if isinstance(item, _SERVICES):
        return ("service", type(item).__name__)
    if isinstance(item, (tuple, list)):
        return tuple(_cell(i) for i in item)
    if isinstance(item, Context):
        return describe_context(item)
    if _frozen_record(item):
        return item  # a frozen record: its repr is its value
    if callable(item):
        return unit(item)
    raise Opaque(type(item).__qualname__)


def _frozen_record(item: Any) -> bool:
    params = getattr(type(item), "__dataclass_params__", None)
    return params is not None and bool(params.frozen)


def unit(item: Any) -> Any:
    """What a ready or timed unit will do: its kind, for which execution, with what."""
    if isinstance(item, QueuedStart):
        return ("start", item.execution.execution_id, item.method)
    if isinstance(item, Unit):
        ex = item.execution
        owner = ex.execution_id if ex is not None else item.run.flow_id
        return (item.kind, owner, tuple(_cell(a) for a in item.arguments))
    raise Opaque(type(item).__qualname__)


def _messages(messages: Iterable[Message], rank: dict[int, int]) -> tuple[Any, ...]:
    return tuple((rank[m.number], m.channel, m.value) for m in messages)


def _plain(item: Any) -> Any:
    """A field's value, shown by its repr; a callable is never a value."""
    if callable(item) and not isinstance(item, type):
        raise Opaque(type(item).__qualname__)
    return item


_EXECUTION_NAMES = tuple(
    n for n in Execution.__slots__ if n != "__dict__" and n not in _EXECUTION_SKIPPED
)
_RUN_NAMES = tuple(n for n in FlowRun.__slots__ if n != "__dict__" and n not in _RUN_SKIPPED)


class _Fields:
    """Reads an object's slots in one C call, and what it set beyond them.

    Dicts are shown in insertion order (not sorted): the engine and handlers may walk them in
    that order, so two orders are two states. A function or handle in a slot shows its
    address, which makes the state opaque.
    """

    def __init__(self, names: tuple[str, ...], skipped: frozenset[str]) -> None:
        self.read = attrgetter(*names)
        self.options = names.index("options") if "options" in names else None
        self.skipped = skipped

    def __call__(self, item: Any) -> tuple[Any, ...]:
        slots = tuple(map(frozen_text, self.read(item)))
        if self.options is not None:
            slots = (*slots[: self.options], _options(slots[self.options]),
                     *slots[self.options + 1 :])  # fmt: skip
        extras = [(k, _plain(v)) for k, v in vars(item).items() if k not in self.skipped]
        return (slots, tuple(extras))


class _Text:
    """A value's repr made once: shown as that text inside a larger repr."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


_IMMUTABLE = (str, int, float, bool, bytes, type(None))
_TEXTS: dict[int, tuple[Any, _Text]] = {}
MAX_TEXTS = 200_000
"""Cached reprs kept (each holds its value, so ids are not reused while cached)."""


def frozen_text(value: Any) -> Any:
    """``value``, or its repr made once when it is a frozen dataclass of immutable fields.

    Inputs and messages are such records, shared by the states of an exploration (a snapshot
    copies only mutable parts); a record with a mutable field is shown afresh every time.
    """
    params = getattr(type(value), "__dataclass_params__", None)
    if params is None or not params.frozen:
        return value
    found = _TEXTS.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    fields = vars(value).values() if hasattr(value, "__dict__") else ()
    if not all(isinstance(f, _IMMUTABLE) or frozen_text(f) is not f for f in fields):
        return value
    if len(_TEXTS) >= MAX_TEXTS:
        _TEXTS.clear()
    text = _TEXTS[id(value)] = (value, _Text(repr(value)))
    return text[1]


_OPTIONS: dict[int, tuple[StepOptions, str]] = {}


def _options(options: Any) -> Any:
    """StepOptions are frozen and shared by a Step's executions: their repr is made once."""
    if type(options) is not StepOptions:
        return options
    found = _OPTIONS.get(id(options))
    if found is None or found[0] is not options:
        # The options are kept, so their id is not reused while the entry lives.
        found = _OPTIONS[id(options)] = (options, repr(options))
    return found[1]


_EXECUTION_FIELDS = _Fields(_EXECUTION_NAMES, _EXECUTION_SKIPPED)
_RUN_FIELDS = _Fields(_RUN_NAMES, _RUN_SKIPPED)


def _running(ex: Execution) -> bool:
    task = ex.task
    return task is not None and not (callable(getattr(task, "done", None)) and task.done())


def _execution(ex: Execution, rank: dict[int, int]) -> tuple[Any, ...]:
    reserved = tuple((k, _messages(ms, rank)) for k, ms in ex.held_messages.items())
    timers = tuple(_cell(t) for t in ex.started_timers)
    handles = (ex.pending_unit is not None, ex.method_timeout is not None,
               ex.heartbeat_timer is not None)  # fmt: skip
    return (ex.step_type, _EXECUTION_FIELDS(ex), reserved, timers,
            handles, ex.last_failure)  # fmt: skip


def _ranks(run: FlowRun) -> dict[int, int]:
    numbers = [m.number for q in run.queues_view.values() for m in q]
    numbers += [m.number for ex in run.executions.values() for ms in ex.held_messages.values()
                for m in ms]  # fmt: skip
    return {number: i for i, number in enumerate(sorted(set(numbers)))}


def _run(run: FlowRun) -> tuple[Any, ...]:
    rank = _ranks(run)
    queues = tuple((k, _messages(q, rank)) for k, q in run.queues_view.items() if q)
    waiters = tuple(sorted((k, tuple(sorted(w.execution_id for w in ws)))
                           for k, ws in run.waiters.items()))  # fmt: skip
    # In creation order: the engine walks executions in it (closing, victims) and lock queues
    # may depend on which goes first.
    executions = tuple((k, _execution(ex, rank)) for k, ex in run.executions.items())
    return (_RUN_FIELDS(run), queues, waiters, executions)


def _scheduler(sim: Scheduler) -> tuple[Any, ...]:
    ready = sorted(repr(unit(u)) for u in sim.ready_units)
    timers = sorted(repr((due, unit(u))) for due, u in sim.timed_units())
    return (sim.now_ns, tuple(ready), tuple(timers))


def _faults(plan: FaultPlan) -> int:
    if plan.failures or plan.cancellations or plan.hung or plan.crash_after is not None:
        raise Opaque("a fault plan with explicit rules")
    return plan.spent


def _one_run(rt: Runtime, coroutines: bool = False) -> FlowRun:
    sim = rt.sim
    if sim is None or len(rt.runs) != 1 or rt.previous_runs or rt.stale_skips:
        raise Opaque("not one simulated Flow run")
    if rt.continue_as_new.watching:
        # A pending request, or a threshold counted in events (which are names here).
        raise Opaque("continue-as-new pending")
    (run,) = rt.runs.values()
    if not coroutines and any(map(_running, run.executions.values())):
        raise Opaque("a coroutine handler is running")
    return run


def _runtime(rt: Runtime) -> tuple[Any, ...]:
    # Cheap refusals first: most states of a Flow with coroutine handlers have one running.
    run = _one_run(rt)
    sim = rt.sim
    assert sim is not None
    scheduler = _scheduler(sim)
    locks = tuple(sorted(
        (flow_id, tuple(sorted(table.held.items())),
         tuple((keys, owner, unit(resume)) for keys, owner, resume in table.waiting))
        for flow_id, table in rt.lock_tables.items()
    ))  # fmt: skip
    return (_run(run), scheduler, locks, _faults(rt.faults))


# The Type-N counters only choose the next execution's number: canonical names replace them.
_CANON_RUN_FIELDS = _Fields(
    tuple(n for n in _RUN_NAMES if n not in ("_first_type", "_first_count", "start_input")),
    _RUN_SKIPPED | {"_more_counts"},
)


@dataclass
class _Parts:
    """A state's description in pieces.

    Those whose order is behaviour, those whose is not, and each execution's lineage (id,
    parent id, Step type, input) in creation order.
    """

    ordered: list[str] = field(default_factory=list)
    unordered: list[str] = field(default_factory=list)
    lineage: list[tuple[str, str, str, str]] = field(default_factory=list)


def _canonical_parts(rt: Runtime, outside: Sequence[Any]) -> _Parts:
    run = _one_run(rt, coroutines=True)
    sim = rt.sim
    assert sim is not None
    rank = _ranks(run)
    parts = _Parts()
    parts.ordered.append(repr(_CANON_RUN_FIELDS(run)))
    parts.ordered.extend(repr((k, _messages(q, rank))) for k, q in run.queues_view.items() if q)
    parts.unordered.extend(f"w {k} {w.execution_id}" for k, ws in run.waiters.items() for w in ws)
    owners: dict[asyncio.Task[Any], str] = {}
    for ex in run.executions.values():
        parts.unordered.append(repr(_execution(ex, rank)))
        parts.lineage.append((ex.execution_id, ex.from_execution_id, ex.step_type, repr(ex.input)))
        if isinstance(ex.task, asyncio.Task):
            owners[ex.task] = ex.execution_id
        if _running(ex):
            parts.unordered.append(f"c {ex.execution_id} {_task(ex.task)!r}")
    parts.ordered.append(repr(sim.now_ns))
    parts.unordered.extend(f"r {_unit(u, owners)!r}" for u in sim.ready_units)
    parts.unordered.extend(f"t {(due, _unit(u, owners))!r}" for due, u in sim.timed_units())
    for flow_id, table in rt.lock_tables.items():
        parts.unordered.extend(f"l {flow_id} {item!r}" for item in table.held.items())
        waiting = tuple((keys, owner, unit(resume)) for keys, owner, resume in table.waiting)
        parts.ordered.append(f"q {flow_id} {waiting!r}")
    parts.ordered.append(repr((_faults(rt.faults), tuple(outside))))
    return parts


def _task(task: Any) -> tuple[Any, ...]:
    if not isinstance(task, asyncio.Task):
        raise Opaque(type(task).__qualname__)
    try:
        return describe_task(task)
    except CoroutineOpaque as error:
        raise Opaque(str(error)) from error


def _unit(item: Any, owners: dict[asyncio.Task[Any], str]) -> Any:
    if isinstance(item, LoopCallback):
        try:
            return describe_callback(item, owners)
        except CoroutineOpaque as error:
            raise Opaque(str(error)) from error
    return unit(item)


def _names(lineage: list[tuple[str, str, str, str]], rename: dict[str, str]) -> dict[str, str]:
    """Each execution's canonical name, by lineage.

    Its parent's name, Step type and input (hashed), and its place among siblings of the same
    lineage, in creation order.
    """
    names: dict[str, str] = {}
    seen: dict[str, int] = {}
    for execution_id, parent, step_type, given in lineage:
        key = f"{names.get(parent, parent)}|{step_type}|{replace_all(given, rename)}"
        base = f"{step_type}@{hashlib.blake2b(key.encode(), digest_size=5).hexdigest()}"
        count = seen[base] = seen.get(base, -1) + 1
        names[execution_id] = f"{base}.{count}"
    return names


def replace_all(text: str, mapping: dict[str, str]) -> str:
    """``text`` with every key of ``mapping`` replaced, longest keys first.

    A shorter key inside a longer one (``Edit-1`` in ``Edit-12``) is never cut out of it: the
    longer one has been replaced by then, and no replacement holds a key.
    """
    for key in sorted(mapping, key=len, reverse=True):
        if key in text:
            text = text.replace(key, mapping[key])
    return text


@dataclass(frozen=True)
class Keys:
    """A state's digests under each reduction, to tell which one merged two states.

    ``canonical`` is the one the search keys on (numbering and declared symmetry);
    ``numbered`` leaves the symmetry out (it is ``canonical`` when none is declared);
    ``exact`` keeps the execution ids and the engine's order as well.
    """

    canonical: str
    numbered: str
    exact: str


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def canonical_fingerprint(
    rt: Runtime, outside: Sequence[Any], start_input: Any, symmetry: Symmetry | None = None
) -> Keys | None:
    """The digest of the state up to execution numbering (and ``symmetry``), or None.

    Executions are named by lineage (``_names``), not by ``Type-N``; the executions, waiters,
    ready units, timers and held locks are compared as sets, so the order in which executions
    were created is not part of the state; the start input (the same in every state) is one
    marker, so that a symmetry permuting its values leaves it alone. A suspended coroutine
    handler is described by its frames (``explore.coroutines``). None when a part cannot be
    described soundly.
    """
    try:
        parts = _canonical_parts(rt, outside)
    except Opaque:
        return None
    given = repr(start_input)
    joined = "\x00".join((*parts.ordered, *parts.unordered)).replace(given, "<input>")
    if _ADDRESS in joined:
        return None
    lineage = [(e, p, t, i.replace(given, "<input>")) for e, p, t, i in parts.lineage]
    cut = len(parts.ordered)

    def digest(rename: dict[str, str]) -> str:
        texts = replace_all(replace_all(joined, rename), _names(lineage, rename)).split("\x00")
        return _digest("\x00".join(texts[:cut]) + "\x01" + "\x00".join(sorted(texts[cut:])))

    numbered = digest({})
    canonical = numbered if symmetry is None else digest(symmetry.canonical(joined.split("\x00")))
    return Keys(canonical, numbered, _digest(joined))


def fingerprint(rt: Runtime, outside: Sequence[Any]) -> str | None:
    """The digest of the runtime's state and ``outside`` (actions left, monitor states).

    None when some part cannot be described soundly: such a state is never pruned.
    """
    try:
        text = repr((_runtime(rt), tuple(outside)))
    except Opaque:
        return None
    if _ADDRESS in text:
        return None
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
