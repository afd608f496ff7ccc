"""Liveness states: a simulation's state up to execution numbering and a shift in virtual time.

A liveness search needs a *finite* state graph for a Flow that runs forever, so two states
whose futures differ only by names and by when they happen are one state here:

- executions are named by what they are, not by their ``Type-N`` number: each active
  execution gets a name made from its own description (Step type, phase, method, attempt,
  input, Wait, held messages, timers, the kinds of its queued and timed units), with a counter
  among identical ones; its parent is named the same way when it is active, by its Step type
  when it is not (siblings keep sharing one parent name). Closed executions, the ``Type-N``
  counters, message ids, event sequence numbers and the Step outputs completed so far are
  records of the past, not of the future, and are left out;
- every time is relative to the virtual clock: timer deadlines, when an attempt or a Wait
  started. A Flow handing a token back and forth on a timer forever comes back to the same
  state after every round.

Values (inputs, Attributes, messages, Waits) are compared by ``repr``, as in
``explore.fingerprint``. A handler that reads its own execution number or the absolute clock
and branches on it could make two states here differ in their futures; a counterexample is
therefore always replayed concretely (``explore.lasso``). A client action that names an
execution by id (``Action.skip_timer``) makes the driver keep the ids (``explore.state_driver``).
A state that cannot be described (a coroutine handler suspended, a unit that is not an engine
record, more than one Flow run) has no key and is never merged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dexviz.engine.attempt.invoke import QueuedStart
from dexviz.engine.core.faults import FaultPlan
from dexviz.engine.core.state import Execution, FlowRun, Message, TimerState
from dexviz.engine.core.units import Unit
from dexviz.engine.runtime import Runtime

__all__ = ["Naming", "Undescribable", "live_key", "naming", "option_of"]

_SCALARS = (str, int, float, bool, bytes, type(None))
_ADDRESS = " at 0x"


class Undescribable(Exception):
    """A part of the state cannot be described soundly: the state gets no key."""


Naming = Mapping[str, str]
"""Execution id -> its name in the liveness state (active ones by content, others by type)."""


def _step_type(execution_id: str) -> str:
    return execution_id.rpartition("-")[0] or execution_id


def _plain(value: Any) -> str:
    if callable(value) and not isinstance(value, type):
        raise Undescribable(type(value).__qualname__)
    return repr(value)


def _messages(messages: Iterable[Message], rank: Mapping[int, int]) -> tuple[Any, ...]:
    return tuple((rank[m.number], m.channel, _plain(m.value)) for m in messages)


def _ranks(run: FlowRun, active: list[Execution]) -> dict[int, int]:
    numbers = {m.number for q in run.queues_view.values() for m in q}
    numbers.update(m.number for ex in active for ms in ex.held_messages.values() for m in ms)
    return {number: i for i, number in enumerate(sorted(numbers))}


def _relative(time_ns: int, now_ns: int) -> int:
    return time_ns - now_ns if time_ns else 0


def _timer(timer: TimerState, now_ns: int) -> tuple[Any, ...]:
    due = _relative(timer.fire_at_ns, now_ns)
    return ("timer", timer.index, timer.condition_id, timer.duration_s, due, timer.done)


# Execution attributes set only on some executions (see ``Execution``): how each is described.
_EXTRA_SKIPPED = frozenset({"_timers", "_subflow_ids", "method_timeout", "heartbeat_timer",
                            "last_beat_ns"})  # fmt: skip


def _local(ex: Execution, rank: Mapping[int, int], now_ns: int, kinds: tuple[Any, ...]) -> Any:
    """The execution as it is, without any execution id."""
    if ex.task is not None and not (callable(getattr(ex.task, "done", None)) and ex.task.done()):
        raise Undescribable("a coroutine handler is running")
    if ex.waits_on_subflows:
        raise Undescribable("a SubFlow Wait")
    extras = tuple(sorted(
        (k, _plain(v)) for k, v in vars(ex).items() if k not in _EXTRA_SKIPPED
    ))  # fmt: skip
    held = tuple((k, _messages(ms, rank)) for k, ms in ex.held_messages.items())
    return (
        ex.step_type, ex.phase.value, ex.method, ex.attempt, ex.attempt_token, _plain(ex.input),
        _plain(ex.options), _plain(ex.wait), _relative(ex.first_started_ns, now_ns),
        _relative(ex.wait_registered_ns, now_ns), ex.satisfied_conditions, held,
        _plain(ex.consumed_values_read), _plain(ex.method_snapshot),
        tuple(_timer(t, now_ns) for t in ex.started_timers),
        (ex.pending_unit is not None, ex.method_timeout is not None,
         ex.heartbeat_timer is not None, _relative(ex.last_beat_ns, now_ns)),
        extras, kinds,
    )  # fmt: skip


def _unit_kinds(rt: Runtime, now_ns: int) -> dict[str, list[Any]]:
    """For each execution, the kinds of its ready and timed units (relative due times)."""
    sim = rt.sim
    assert sim is not None
    kinds: dict[str, list[Any]] = {}
    timed: list[tuple[int | None, Any]] = [(None, u) for u in sim.ready_units]
    for due, item in timed + list(sim.timed_units()):
        ex: Execution | None
        if isinstance(item, QueuedStart):
            ex, kind = item.execution, item.method
        elif isinstance(item, Unit):
            ex, kind = item.execution, item.kind
        else:
            continue
        if ex is not None:
            kinds.setdefault(ex.execution_id, []).append(
                (kind, None if due is None else due - now_ns)
            )
    return kinds


def naming(rt: Runtime) -> Naming:
    """Each execution's name in the liveness state of ``rt``'s single Flow run."""
    return _describe_executions(rt)[0]


def _describe_executions(rt: Runtime) -> tuple[dict[str, str], list[Any]]:
    (run,) = rt.runs.values()
    sim = rt.sim
    assert sim is not None
    now = sim.now_ns
    active = [ex for ex in run.executions.values() if ex.active]
    rank = _ranks(run, active)
    kinds = _unit_kinds(rt, now)
    locals_ = {
        ex.execution_id: repr(_local(ex, rank, now, tuple(sorted(map(repr, kinds.get(
            ex.execution_id, ())))))) for ex in active
    }  # fmt: skip
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    # Identical executions are told apart by a counter; their ids only break the tie.
    for execution_id in sorted(locals_, key=lambda k: (locals_[k], _number(k))):
        digest = hashlib.blake2b(locals_[execution_id].encode(), digest_size=4).hexdigest()
        count = counts[digest] = counts.get(digest, 0) + 1
        names[execution_id] = f"{_step_type(execution_id)}#{digest}.{count}"
    parents: dict[str, str] = {}
    described = []
    for execution_id in sorted(names, key=names.__getitem__):
        ex = run.executions[execution_id]
        refs = tuple(_parent(p, names, parents) for p in (ex.parent_key, ex.from_execution_id))
        described.append((names[execution_id], locals_[execution_id], refs))
    for execution_id in run.executions:
        names.setdefault(execution_id, f"~{_step_type(execution_id)}")
    return names, described


def _number(execution_id: str) -> int:
    tail = execution_id.rpartition("-")[2]
    return int(tail) if tail.isdigit() else 0


def _parent(key: str, names: Mapping[str, str], parents: dict[str, str]) -> str:
    """An active parent by its name; an inactive one by Step type and first-seen order."""
    if not key or key.startswith("__"):
        return key
    if key in names:
        return names[key]
    found = parents.get(key)
    if found is None:
        found = parents[key] = f"~{_step_type(key)}.{len(parents)}"
    return found


def _cell(item: Any, names: Naming, now_ns: int) -> Any:
    if isinstance(item, str):
        return names.get(item, item)
    if isinstance(item, _SCALARS):
        return item
    if isinstance(item, Execution):
        return ("ex", names.get(item.execution_id, "?"))
    if isinstance(item, TimerState):
        return _timer(item, now_ns)
    if isinstance(item, (tuple, list)):
        return tuple(_cell(i, names, now_ns) for i in item)
    raise Undescribable(type(item).__qualname__)


def option_of(item: Any, names: Naming, now_ns: int) -> tuple[Any, ...]:
    """What a ready or timed unit will do, its execution named as the liveness state names it.

    Two states' units with equal options do the same thing to equally named executions: the
    fairness analysis (``explore.liveness``) follows a unit across states by this value.
    """
    if isinstance(item, QueuedStart):
        return ("start", names.get(item.execution.execution_id, "?"), item.method)
    if isinstance(item, Unit):
        ex = item.execution
        owner = names.get(ex.execution_id, "?") if ex is not None else "run"
        return (item.kind, owner, _cell(item.arguments, names, now_ns))
    raise Undescribable(type(item).__qualname__)


def _run(run: FlowRun, active: list[Execution], names: Naming, now_ns: int) -> tuple[Any, ...]:
    rank = _ranks(run, active)
    queues = tuple(sorted((k, _messages(q, rank)) for k, q in run.queues_view.items() if q))
    waiters = tuple(sorted(
        (k, tuple(sorted(names.get(w.execution_id, "?") for w in ws)))
        for k, ws in run.waiters.items() if ws
    ))  # fmt: skip
    attributes = tuple(sorted((str(k), _plain(v)) for k, v in run.attributes.items()))
    flags = (run.status.name, run.closing, run.graceful_requested, str(run.error_type),
             run.error_message, run.failure, run.attempt, run.retry_pending, run.admitted_rpcs,
             _plain(run.pending_close), _plain(run.config), _plain(run.start_input),
             run.closed_ns is not None)  # fmt: skip
    return (flags, attributes, queues, waiters)


def _faults(plan: FaultPlan) -> int:
    if plan.failures or plan.cancellations or plan.hung or plan.crash_after is not None:
        raise Undescribable("a fault plan with explicit rules")
    return plan.spent


def _state(rt: Runtime) -> tuple[Any, ...]:
    sim = rt.sim
    if sim is None or len(rt.runs) != 1 or rt.previous_runs or rt.stale_skips:
        raise Undescribable("not one simulated Flow run")
    if rt.continue_as_new.watching:
        raise Undescribable("continue-as-new pending")
    (run,) = rt.runs.values()
    now = sim.now_ns
    names, executions = _describe_executions(rt)
    active = [ex for ex in run.executions.values() if ex.active]
    ready = tuple(sorted(repr(option_of(u, names, now)) for u in sim.ready_units))
    timed = tuple(sorted(repr((due - now, option_of(u, names, now)))
                         for due, u in sim.timed_units()))  # fmt: skip
    locks = tuple(sorted(
        (tuple(sorted((k, names.get(o, o)) for k, o in table.held.items())),
         tuple((keys, names.get(o, o), repr(option_of(r, names, now)))
               for keys, o, r in table.waiting))
        for table in rt.lock_tables.values()
    ))  # fmt: skip
    return (_run(run, active, names, now), tuple(executions), ready, timed, locks,
            _faults(rt.faults))  # fmt: skip


def live_key(rt: Runtime, outside: tuple[Any, ...] = ()) -> str | None:
    """The digest of ``rt``'s liveness state and ``outside`` (e.g. client actions left).

    None when a part cannot be described soundly: such a state is never merged with another.
    """
    try:
        text = repr((_state(rt), outside))
    except Undescribable:
        return None
    if _ADDRESS in text:
        return None
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def described(rt: Runtime, items: Iterable[Any]) -> list[tuple[Any, ...] | None]:
    """``option_of`` each unit in ``rt``'s current naming; None for a unit it cannot describe."""
    sim = rt.sim
    assert sim is not None
    try:
        names = naming(rt)
    except Undescribable:
        return [None for _ in items]
    return [_safe(option_of, item, names, sim.now_ns) for item in items]


def _safe(describe: Callable[..., tuple[Any, ...]], *args: Any) -> tuple[Any, ...] | None:
    try:
        return describe(*args)
    except Undescribable:
        return None
