"""Attribute locks (R71-R73, R119): Step methods wait for them, RPCs fail fast."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


@dataclass
class LockTable:
    """The locks held in one Flow run and the Step methods waiting for them."""

    held: dict[str, str] = field(default_factory=dict)
    waiting: list[tuple[tuple[str, ...], str, Callable[[], None]]] = field(default_factory=list)

    def try_acquire(self, keys: Iterable[str], owner: str) -> bool:
        """Take every key for ``owner``, or none of them."""
        wanted = tuple(keys)
        if any(self.held.get(k, owner) != owner for k in wanted):
            return False
        for key in wanted:
            self.held[key] = owner
        return True

    def acquire_or_wait(
        self, keys: tuple[str, ...], owner: str, resume: Callable[[], None]
    ) -> bool:
        """Take the keys now (True) or park ``resume`` until they are free (False)."""
        if self.try_acquire(keys, owner):
            return True
        self.waiting.append((keys, owner, resume))
        return False

    def release(self, owner: str) -> list[Callable[[], None]]:
        """Free ``owner``'s keys and return the parked starts that can now take theirs."""
        for key in [k for k, o in self.held.items() if o == owner]:
            del self.held[key]
        ready: list[Callable[[], None]] = []
        still: list[tuple[tuple[str, ...], str, Callable[[], None]]] = []
        for keys, waiter, resume in self.waiting:
            if self.try_acquire(keys, waiter):
                ready.append(resume)
            else:
                still.append((keys, waiter, resume))
        self.waiting = still
        return ready

    def forget(self, owner: str) -> list[Callable[[], None]]:
        """Drop a canceled owner: release its keys and stop waiting for it."""
        self.waiting = [w for w in self.waiting if w[1] != owner]
        return self.release(owner)
