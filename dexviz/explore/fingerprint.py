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

import enum
import hashlib
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any

from dexviz.engine.attempt.fast import FastPath
from dexviz.engine.attempt.invoke import Invoker, QueuedStart
from dexviz.engine.commit.decide import Decisions
from dexviz.engine.commit.waits import WaitManager
from dexviz.engine.core.faults import FaultPlan
from dexviz.engine.core.scheduler import Scheduler
from dexviz.engine.core.state import Execution, FlowRun, Message, TimerState
from dexviz.engine.core.units import Unit
from dexviz.engine.flows.continue_as_new import ContinueAsNew
from dexviz.engine.flows.starts import Starts
from dexviz.engine.flows.subflows import SubFlows
from dexviz.engine.flows.time_travel import TimeTravel
from dexviz.engine.flows.timeouts import FlowTimeouts
from dexviz.engine.runtime import Runtime
from dexviz.explore.coroutines import (
    describe_context,
)
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
RUN_SKIPPED = frozenset(
    {"definition", "executions", "_queues", "_first_waiters", "_more_waiters", "message_count",
     "seq", "message_ids", "run_id", "started_ns", "active_count", "request_id"}
)  # fmt: skip


ADDRESS = " at 0x"
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
        return frozen_text(item)  # a frozen record: its repr is its value
    if callable(item):
        return unit(item)
    raise Opaque(type(item).__qualname__)


def _frozen_record(item: Any) -> bool:
    return _frozen_type(type(item))


def _frozen_type(kind: type) -> bool:
    """Whether ``kind`` is a frozen dataclass, asked once per type."""
    found = _RECORDS.get(kind)
    if found is None:
        # Looked up once per type: a missing attribute of an Enum class costs an exception.
        params = getattr(kind, "__dataclass_params__", None)
        if len(_RECORDS) >= 10_000:
            _RECORDS.clear()
        found = _RECORDS[kind] = params is not None and bool(params.frozen)
    return found


def unit(item: Any) -> Any:
    """What a ready or timed unit will do: its kind, for which execution, with what."""
    if isinstance(item, QueuedStart):
        return ("start", item.execution.execution_id, item.method)
    if isinstance(item, Unit):
        ex = item.execution
        owner = ex.execution_id if ex is not None else item.run.flow_id
        return (item.kind, owner, tuple(_cell(a) for a in item.arguments))
    raise Opaque(type(item).__qualname__)


def describe_messages(messages: Iterable[Message], rank: dict[int, int]) -> tuple[Any, ...]:
    """Messages by rank, Channel and value (a frozen record's repr made once)."""
    return tuple((rank[m.number], m.channel, frozen_text(m.value)) for m in messages)


def _plain(item: Any) -> Any:
    """A field's value, shown by its repr; a callable is never a value."""
    if callable(item) and not isinstance(item, type):
        raise Opaque(type(item).__qualname__)
    return item


EXECUTION_NAMES = tuple(
    n for n in Execution.__slots__ if n != "__dict__" and n not in _EXECUTION_SKIPPED
)
RUN_NAMES = tuple(n for n in FlowRun.__slots__ if n != "__dict__" and n not in RUN_SKIPPED)


class Fields:
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
        """The slots' values and the extra attributes of ``item``."""
        values = self.read(item)
        if self.options is None:
            slots = tuple(map(frozen_text, values))
        else:
            at = self.options
            slots = (*map(frozen_text, values[:at]), _options(values[at]),
                     *map(frozen_text, values[at + 1 :]))  # fmt: skip
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
_PLAIN_TYPES = frozenset((*_IMMUTABLE, tuple, list, dict, set))
"""Types that are never dataclasses: shown as they are, without looking further."""
_TEXTS: dict[int, tuple[Any, _Text]] = {}
_RECORDS: dict[type, bool] = {}
"""Whether each type met is a frozen dataclass (types are few and live for the process)."""
MAX_TEXTS = 200_000
"""Cached reprs kept (each holds its value, so ids are not reused while cached)."""


def _lasting(item: Any) -> bool:
    """Whether ``item``'s repr can never change.

    An immutable scalar, a member of an enum of such values, a tuple or frozenset of lasting
    items, or a record ``frozen_text`` keeps.
    """
    if isinstance(item, _IMMUTABLE):
        return True
    if isinstance(item, enum.Enum):
        return isinstance(item.value, _IMMUTABLE)
    if type(item) in (tuple, frozenset):
        return all(map(_lasting, item))
    return frozen_text(item) is not item


def frozen_text(value: Any) -> Any:
    """``value``, or its repr made once when it is a frozen dataclass of immutable fields.

    Inputs and messages are such records, shared by the states of an exploration (a snapshot
    copies only mutable parts); a record with a mutable field is shown afresh every time.
    """
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return value
    if not _frozen_type(kind):
        return value
    found = _TEXTS.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    fields = vars(value).values() if hasattr(value, "__dict__") else ()
    if not all(map(_lasting, fields)):
        return value
    if len(_TEXTS) >= MAX_TEXTS:
        _TEXTS.clear()
    text = _TEXTS[id(value)] = (value, _Text(repr(value)))
    return text[1]


_OPTIONS: dict[int, tuple[StepOptions, _Text]] = {}


def _options(options: Any) -> Any:
    """StepOptions are frozen and shared by a Step's executions: shown as their repr's digest.

    Made once per options object. The digest is a short stand-in for a long text that every
    description of an execution would otherwise carry (and the canonical fingerprint rewrite
    and scan): equal options give equal digests in every process.
    """
    if type(options) is not StepOptions:
        return options
    found = _OPTIONS.get(id(options))
    if found is None or found[0] is not options:
        digest = hashlib.blake2b(repr(options).encode(), digest_size=12).hexdigest()
        # The options are kept, so their id is not reused while the entry lives.
        found = _OPTIONS[id(options)] = (options, _Text(f"StepOptions#{digest}"))
    return found[1]


_EXECUTION_FIELDS = Fields(EXECUTION_NAMES, _EXECUTION_SKIPPED)
_RUN_FIELDS = Fields(RUN_NAMES, RUN_SKIPPED)


def running(ex: Execution) -> bool:
    """Whether the execution's coroutine handler is in flight."""
    task = ex.task
    return task is not None and not (callable(getattr(task, "done", None)) and task.done())


def describe_execution(ex: Execution, rank: dict[int, int]) -> tuple[Any, ...]:
    """An execution as the state sees it: its fields, held messages, timers and handles."""
    reserved = tuple((k, describe_messages(ms, rank)) for k, ms in ex.held_messages.items())
    timers = tuple(_cell(t) for t in ex.started_timers)
    handles = (ex.pending_unit is not None, ex.method_timeout is not None,
               ex.heartbeat_timer is not None)  # fmt: skip
    return (ex.step_type, _EXECUTION_FIELDS(ex), reserved, timers,
            handles, ex.last_failure)  # fmt: skip


def message_ranks(run: FlowRun) -> dict[int, int]:
    """Each queued or held message's place in publication order (its number is a name)."""
    numbers = [m.number for q in run.queues_view.values() for m in q]
    numbers += [m.number for ex in run.executions.values() for ms in ex.held_messages.values()
                for m in ms]  # fmt: skip
    return {number: i for i, number in enumerate(sorted(set(numbers)))}


def _run(run: FlowRun) -> tuple[Any, ...]:
    rank = message_ranks(run)
    queues = tuple((k, describe_messages(q, rank)) for k, q in run.queues_view.items() if q)
    waiters = tuple(sorted((k, tuple(sorted(w.execution_id for w in ws)))
                           for k, ws in run.waiters.items()))  # fmt: skip
    # In creation order: the engine walks executions in it (closing, victims) and lock queues
    # may depend on which goes first.
    executions = tuple((k, describe_execution(ex, rank)) for k, ex in run.executions.items())
    return (_RUN_FIELDS(run), queues, waiters, executions)


def _scheduler(sim: Scheduler) -> tuple[Any, ...]:
    ready = sorted(repr(unit(u)) for u in sim.ready_units)
    timers = sorted(repr((due, unit(u))) for due, u in sim.timed_units())
    return (sim.now_ns, tuple(ready), tuple(timers))


def faults_left(plan: FaultPlan) -> int:
    """The failures the budget has spent (a plan with explicit rules is opaque)."""
    if plan.failures or plan.cancellations or plan.hung or plan.crash_after is not None:
        raise Opaque("a fault plan with explicit rules")
    return plan.spent


def one_run(rt: Runtime, coroutines: bool = False) -> FlowRun:
    """The one simulated Flow run; ``coroutines``: a running handler is described, not opaque."""
    sim = rt.sim
    if sim is None or len(rt.runs) != 1 or rt.previous_runs or rt.stale_skips:
        raise Opaque("not one simulated Flow run")
    if rt.continue_as_new.watching:
        # A pending request, or a threshold counted in events (which are names here).
        raise Opaque("continue-as-new pending")
    (run,) = rt.runs.values()
    if not coroutines and any(map(running, run.executions.values())):
        raise Opaque("a coroutine handler is running")
    return run


def _runtime(rt: Runtime) -> tuple[Any, ...]:
    # Cheap refusals first: most states of a Flow with coroutine handlers have one running.
    run = one_run(rt)
    sim = rt.sim
    assert sim is not None
    scheduler = _scheduler(sim)
    locks = tuple(sorted(
        (flow_id, tuple(sorted(table.held.items())),
         tuple((keys, owner, unit(resume)) for keys, owner, resume in table.waiting))
        for flow_id, table in rt.lock_tables.items()
    ))  # fmt: skip
    return (_run(run), scheduler, locks, faults_left(rt.faults))


def fingerprint(rt: Runtime, outside: Sequence[Any]) -> str | None:
    """The digest of the runtime's state and ``outside`` (actions left, monitor states).

    None when some part cannot be described soundly: such a state is never pruned.
    """
    try:
        text = repr((_runtime(rt), tuple(outside)))
    except Opaque:
        return None
    if ADDRESS in text:
        return None
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
