"""WaiterSet: the executions waiting on one Channel, with O(1) add, remove and random pick."""

from __future__ import annotations

from typing import Protocol, TypeVar


class Waiter(Protocol):
    """What a WaiterSet needs of an item: its execution id (an Execution, in the engine)."""

    @property
    def execution_id(self) -> str:
        """The id that names the waiter."""
        ...


W = TypeVar("W", bound=Waiter)


class WaiterSet(list[W]):
    """The executions waiting on one Channel: O(1) add, remove and random pick.

    Most Channels have a waiter or two (a parked Flow has one), so the id-to-position index is
    built only once the set grows past a few items; below that a scan is as fast and keeps an
    idle Flow small. The order of ``items`` is the same either way. The set is itself the list
    of its items (one object instead of a holder and its list: ~40 B less per parked Flow);
    only ``add`` and ``discard`` change it.
    """

    __slots__ = ("_positions",)

    _SMALL = 8

    def __init__(self) -> None:
        super().__init__()
        self._positions: dict[str, int] | None = None

    @property
    def items(self) -> list[W]:
        """The waiting executions, in pick order (the set itself)."""
        return self

    def _position(self, execution_id: str) -> int | None:
        if self._positions is not None:
            return self._positions.get(execution_id)
        for position, item in enumerate(self):
            if item.execution_id == execution_id:
                return position
        return None

    def add(self, ex: W) -> None:
        """Add ``ex`` (once)."""
        execution_id = ex.execution_id
        positions = self._positions
        if positions is None:
            # _position, inlined: a few items are scanned (a parked Flow waits here once).
            for item in self:
                if item.execution_id == execution_id:
                    return
            self.append(ex)
            if len(self) > self._SMALL:
                self._positions = {item.execution_id: i for i, item in enumerate(self)}
        elif execution_id not in positions:
            positions[execution_id] = len(self)
            self.append(ex)

    def discard(self, ex: W) -> None:
        """Remove ``ex`` if present, moving the last item into its slot."""
        position = self._position(ex.execution_id)
        if position is None:
            return
        positions = self._positions
        if positions is not None:
            del positions[ex.execution_id]
        last = self.pop()
        if position < len(self):
            self[position] = last
            if positions is not None:
                positions[last.execution_id] = position
