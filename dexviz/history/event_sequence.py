"""EventSequence: the read-only sequence of events ``Engine.run`` and ``run_until_idle`` return.

A run of many units used to hand back a ``list[Event]`` callers could change. The sequence is
a read-only view instead: it keeps the engine's record of the run's events as it is, copies
nothing, and reads an ``Event`` from that record only when one is asked for (indexing,
iterating, slicing). Today the record holds the very ``Event`` objects the in-memory store
keeps; because callers can only read, a compact record that builds ``Event`` objects on access
can back the sequence later without any caller changing.
It compares equal to the list (or tuple, or other sequence of this kind) of the same events, in
the same order, so code and tests written against the list keep working. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from dexviz.history.event import Event


class EventSequence(Sequence[Event]):
    """The events one ``Engine.run`` committed, in commit order; read-only.

    ``len``, indexing (negative too), slicing (another ``EventSequence``), iteration, ``in``,
    ``index`` and ``count`` behave as on a list. ``==`` holds against a ``list``, a ``tuple`` or
    an ``EventSequence`` of equal events in the same order. ``list(seq)`` gives a list to modify.
    """

    __slots__ = ("_records",)
    __hash__ = None  # type: ignore[assignment]  # equal to a list, which is unhashable

    def __init__(self, records: Sequence[Event] = ()) -> None:
        # The engine's own record of the run; never mutated once the run returned.
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> EventSequence: ...

    def __getitem__(self, index: int | slice) -> Event | EventSequence:
        if isinstance(index, slice):
            return EventSequence(self._records[index])
        return self._records[index]

    def __iter__(self) -> Iterator[Event]:
        return iter(self._records)

    def __reversed__(self) -> Iterator[Event]:
        return reversed(self._records)  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, EventSequence):
            other = other._records
        if isinstance(other, (list, tuple)):
            records = self._records
            return len(records) == len(other) and list(records) == list(other)
        return NotImplemented

    def __add__(self, other: Sequence[Event]) -> list[Event]:
        """A new list of these events followed by ``other``'s (as list concatenation gives)."""
        return [*self._records, *other]

    def __radd__(self, other: Sequence[Event]) -> list[Event]:
        return [*other, *self._records]

    def __repr__(self) -> str:
        records = self._records
        if not records:
            return "EventSequence([])"
        first, last = records[0], records[-1]
        flows = len({e.flow_id for e in records})
        return (
            f"EventSequence({len(records)} events of {flows} Flow{'s' if flows != 1 else ''}: "
            f"{first.kind} #{first.seq} of {first.flow_id!r} … {last.kind} #{last.seq} of "
            f"{last.flow_id!r})"
        )
