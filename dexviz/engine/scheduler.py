"""The simulation scheduler: a virtual clock, seeded choice among ready work, and a timer heap."""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field

Unit = Callable[[], None]

SIMULATION_EPOCH_NS = 1_767_225_600_000_000_000
"""2026-01-01T00:00:00Z: where virtual time starts, so clock readings look like real dates."""


@dataclass(order=True)
class _Timer:
    due_ns: int
    seq: int
    unit: Unit = field(compare=False)
    canceled: bool = field(default=False, compare=False)


class TimerHandle:
    """Lets the engine cancel a scheduled timer unit."""

    __slots__ = ("_timer",)

    def __init__(self, timer: _Timer) -> None:
        self._timer = timer

    def cancel(self) -> None:
        """Drop the unit; a canceled timer never runs."""
        self._timer.canceled = True

    @property
    def due_ns(self) -> int:
        """When the unit is due, in engine time."""
        return self._timer.due_ns


class Scheduler:
    """Runs units one at a time: a seeded random pick among ready units, else the next timer.

    The engine never promises FIFO among ready work (Dex does not), so picking by seed explores
    other orders while the same seed replays the same one exactly.
    """

    def __init__(self, seed: int, epoch_ns: int = SIMULATION_EPOCH_NS) -> None:
        self.now_ns = epoch_ns
        self.epoch_ns = epoch_ns
        self._rng = random.Random(seed)
        self._ready: list[Unit] = []
        self._timers: list[_Timer] = []
        self._timer_seq = 0

    @property
    def rng(self) -> random.Random:
        """The seeded random source for every choice the simulation makes."""
        return self._rng

    def call_soon(self, unit: Unit) -> None:
        """Make ``unit`` ready now."""
        self._ready.append(unit)

    def call_at(self, due_ns: int, unit: Unit) -> TimerHandle:
        """Run ``unit`` once engine time reaches ``due_ns``."""
        self._timer_seq += 1
        timer = _Timer(max(due_ns, self.now_ns), self._timer_seq, unit)
        heapq.heappush(self._timers, timer)
        return TimerHandle(timer)

    def has_work(self) -> bool:
        """Whether anything is ready or scheduled."""
        return bool(self._ready) or any(not t.canceled for t in self._timers)

    def next_due_ns(self) -> int | None:
        """Engine time of the earliest live timer, or None."""
        self._drop_canceled()
        return self._timers[0].due_ns if self._timers else None

    def pop(self, until_ns: int | None = None) -> Unit | None:
        """Take the next unit, advancing virtual time to the next timer when nothing is ready.

        Returns None when there is no work (or the next timer lies beyond ``until_ns``).
        """
        self._release_due()
        if not self._ready:
            due = self.next_due_ns()
            if due is None or (until_ns is not None and due > until_ns):
                return None
            self.now_ns = due
            self._release_due()
        ready = self._ready
        index = self._rng.randrange(len(ready)) if len(ready) > 1 else 0
        unit = ready[index]
        ready[index] = ready[-1]
        ready.pop()
        return unit

    def advance_to(self, time_ns: int) -> None:
        """Move virtual time forward to ``time_ns`` (never backward)."""
        self.now_ns = max(self.now_ns, time_ns)

    def _release_due(self) -> None:
        timers = self._timers
        while timers and timers[0].due_ns <= self.now_ns:
            timer = heapq.heappop(timers)
            if not timer.canceled:
                self._ready.append(timer.unit)

    def _drop_canceled(self) -> None:
        timers = self._timers
        while timers and timers[0].canceled:
            heapq.heappop(timers)
