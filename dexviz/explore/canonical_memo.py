"""A state's description kept for its successors, and the exact tests that allow reusing it.

The stateful search restores a snapshot and runs one step, so a successor differs from the
state it was restored from by what that one step changed. The fingerprint of that state kept
its pieces (``canonical_text``) together with the objects each piece describes (a
``StateRecord``); a successor reuses a piece when the object it describes shows exactly the same
(``same``, ``unchanged``) and describes only the rest afresh.

A restored copy is a different object graph than the one described: the copy shares every
immutable value with the snapshot and copies containers and live engine objects. So "shows the
same" is tested part by part on the copy against the snapshot's object (which no engine writes
to again): the very same value, or a container of the same type holding, in the same order,
values that show the same. Equal but distinct values count as the same only for ``str``,
``int`` and ``bytes`` (whose equal values have equal reprs; ``1 == True`` and ``0.0 == -0.0``
do not).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from operator import attrgetter, is_
from typing import Any

from dexviz.engine.attempt.invoke import QueuedStart
from dexviz.engine.core.locks import LockTable
from dexviz.engine.core.scheduler import TimerHandle
from dexviz.engine.core.state import Execution, FlowRun, TimerState
from dexviz.engine.core.streams import StreamLog
from dexviz.engine.core.units import Unit
from dexviz.engine.core.waiters import WaiterSet
from dexviz.explore.fingerprint import EXECUTION_NAMES

__all__ = ["StateMemo", "StateRecord", "frozen", "same", "same_fields", "shows_as", "unchanged"]

_EQUAL_IS_SAME = frozenset({str, int, bytes})
"""Types whose equal values have equal reprs."""
_SEQUENCES = frozenset({list, tuple})


def same(a: Any, b: Any) -> bool:
    """Whether ``a`` is shown by the same text as ``b`` (see the module docstring)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind in _EQUAL_IS_SAME:
        return bool(a == b)
    if kind in _SEQUENCES:
        return len(a) == len(b) and all(map(same, a, b))
    if kind is dict:
        return (
            len(a) == len(b) and all(map(same, a, b)) and all(map(same, a.values(), b.values()))
        )
    if kind is deque:
        return a.maxlen == b.maxlen and len(a) == len(b) and all(map(same, a, b))
    return False


_CHANGING = object()
"""Stands for a mutable engine object in a frozen value: it never shows as anything."""
_MUTABLE = (set, Execution, FlowRun, TimerState, WaiterSet, Unit, QueuedStart, LockTable,
            TimerHandle, StreamLog)  # fmt: skip
"""The engine's mutable types (``engine.state_copy`` copies them); all else is immutable."""


def frozen(value: Any) -> Any:
    """``value`` as it shows now: containers copied as tuples of their parts, values shared.

    Taken when a piece is made from a live object that may change later: ``shows_as``
    between the live object's parts and this tells whether they still show what the piece
    shows. A mutable engine object is ``_CHANGING``; any other value is immutable.
    """
    kind = type(value)
    if kind in _SEQUENCES or kind is deque:
        return (kind, getattr(value, "maxlen", None), tuple(map(frozen, value)))
    if kind is dict:
        return (dict, tuple(map(frozen, value)), tuple(map(frozen, value.values())))
    if isinstance(value, _MUTABLE):
        return _CHANGING
    return value


def shows_as(value: Any, kept: Any) -> bool:
    """Whether ``value`` shows the same as the value ``kept`` was frozen from (``frozen``)."""
    if value is kept:
        return True
    kind = type(value)
    if kind in _SEQUENCES or kind is deque:
        return (
            type(kept) is tuple
            and len(kept) == 3
            and kept[0] is kind
            and kept[1] == getattr(value, "maxlen", None)
            and len(kept[2]) == len(value)
            and all(map(shows_as, value, kept[2]))
        )
    if kind is dict:
        return (
            type(kept) is tuple
            and len(kept) == 3
            and kept[0] is dict
            and len(kept[1]) == len(value)
            and all(map(shows_as, value, kept[1]))
            and all(map(shows_as, value.values(), kept[2]))
        )
    if kind in _EQUAL_IS_SAME:
        return type(kept) is kind and bool(value == kept)
    return False


def same_fields(mine: tuple[Any, ...], theirs: tuple[Any, ...]) -> bool:
    """Whether each of ``mine`` shows the same as its counterpart (identity first, in C)."""
    return all(map(is_, mine, theirs)) or all(map(same, mine, theirs))


def same_extras(mine: Mapping[str, Any], theirs: Mapping[str, Any]) -> bool:
    """Whether two objects' ``__dict__`` attributes show the same, in the same order."""
    if not mine and not theirs:
        return True
    return list(mine) == list(theirs) and all(map(same, mine.values(), theirs.values()))


_SHOWN = attrgetter(*EXECUTION_NAMES)
_HANDLES = frozenset({"method_timeout", "heartbeat_timer"})
"""Shown only as there or not (``describe_execution``): a copy holds a copy of the handle."""


def unchanged(ex: Execution, source: Execution) -> bool:
    """Whether ``describe_execution`` shows ``ex`` exactly as it shows ``source``.

    Compared part by part as the description reads them: the shown slots and extra fields by
    ``same``, the handles by whether they are there, the timers by what is shown of them.
    Its Task and Step are not shown (the Step is fixed by the execution id).
    """
    try:
        if not same_fields(_SHOWN(ex), _SHOWN(source)):
            return False
        if (ex.pending_unit is None) != (source.pending_unit is None):
            return False
        mine, theirs = ex.__dict__, source.__dict__
        if not mine and not theirs:
            return True
        return list(mine) == list(theirs) and all(
            value is theirs[name] or _same_extra(name, value, theirs[name])
            for name, value in mine.items()
        )
    except Exception:  # noqa: BLE001 - a value that cannot be compared: describe it afresh
        return False


def _same_extra(name: str, value: Any, other: Any) -> bool:
    if name in _HANDLES:
        return (value is None) == (other is None)
    if name == "_timers":
        return list(map(_timer, value or ())) == list(map(_timer, other or ()))
    return same(value, other)


def _timer(timer: Any) -> tuple[Any, ...]:
    # As ``fingerprint._cell`` shows a timer: ints, a str or None, and a bool.
    return (type(timer.done), timer.index, timer.condition_id, timer.fire_at_ns, timer.done)


Entry = tuple[Execution, Any, tuple[str, str, str, str]]
"""An execution, its description's piece and its lineage line."""


class StateRecord:
    """One state's description, with what each piece describes.

    ``run``: the run's own fields as they were described (``frozen``) and their piece;
    ``queues``: each queue's messages and piece (under the message ranks ``rank``);
    ``executions``: each live execution's id to the object the snapshot holds (the very one
    described, or a copy that shows the same), its piece and lineage line.
    """

    __slots__ = ("held", "rank", "run", "queues", "executions")

    def __init__(self, rank: dict[int, int]) -> None:
        self.held: Mapping[str, Execution] | None = None
        self.rank = rank
        self.run: tuple[Any, Any] | None = None
        self.queues: dict[str, tuple[tuple[Any, ...], Any]] = {}
        self.executions: dict[str, Entry] = {}


class StateMemo:
    """The kept descriptions of one exploration's states (one per ``canonical_text.Pieces``).

    ``settled``: settled executions without held messages, by identity (the engine never
    writes one again and a snapshot shares it). ``records``: the description of each state a
    snapshot was taken of, by the identity of the snapshot's executions (``held``).
    """

    def __init__(self, limit: int = 200_000, states: int = 20_000) -> None:
        self.settled: dict[int, Entry] = {}
        self.records: dict[int, StateRecord] = {}
        self.pending: StateRecord | None = None
        """The state described last, until a snapshot of it is kept (``keep``)."""
        self.limit = limit
        self.states = states

    def parent(self, held: Mapping[str, Execution] | None) -> StateRecord | None:
        """The record of the state whose snapshot holds ``held``, if one was kept."""
        if held is None:
            return None
        found = self.records.get(id(held))
        return found if found is not None and found.held is held else None

    def keep_settled(self, entry: Entry) -> None:
        """Keep a settled execution's piece and line (each entry holds its execution)."""
        settled = self.settled
        if len(settled) >= self.limit:
            settled.clear()
        settled[id(entry[0])] = entry

    def keep(self, held: Mapping[str, Execution]) -> None:
        """Keep the state described last for its successors: ``held`` is its snapshot's.

        Called right after the description, when the snapshot is taken: the snapshot holds
        the very executions described (handed over) or copies of them; of copies, only those
        that show the same as the ones described are kept.
        """
        record, self.pending = self.pending, None
        if record is None:
            return
        executions = record.executions
        if any(held.get(k) is not entry[0] for k, entry in executions.items()):
            # Copies: kept only where they show what was described.
            record.executions = {}
            for execution_id, (ex, piece, line) in executions.items():
                copy = held.get(execution_id)
                if copy is ex or (copy is not None and unchanged(copy, ex)):
                    record.executions[execution_id] = (copy, piece, line)
        record.held = held  # held alive by the record: its id is not reused while kept
        records = self.records
        if len(records) >= self.states:
            records.clear()
        records[id(held)] = record
