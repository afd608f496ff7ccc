"""The simulation scheduler: a virtual clock, the chooser's pick among ready work, a timer heap."""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from dexviz.engine.core.choice import Chooser, SeededChooser

Unit = Callable[[], None]

SIMULATION_EPOCH_NS = 1_767_225_600_000_000_000
"""2026-01-01T00:00:00Z: where virtual time starts, so clock readings look like real dates."""


@dataclass
class _Timer:
    """A timer of the heap, ordered by due time, then by when it was scheduled."""

    due_ns: int
    seq: int
    unit: Unit = field(compare=False)
    canceled: bool = field(default=False, compare=False)

    # The order ``dataclass(order=True)`` gives, written out: the heap compares timers several
    # times per push and pop, and the generated methods build two tuples per comparison.
    def __lt__(self, other: _Timer) -> bool:
        due, other_due = self.due_ns, other.due_ns
        return due < other_due or (due == other_due and self.seq < other.seq)

    def __le__(self, other: _Timer) -> bool:
        return not other < self

    def __gt__(self, other: _Timer) -> bool:
        return other < self

    def __ge__(self, other: _Timer) -> bool:
        return not self < other


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
    """Runs units one at a time: the chooser's pick among ready units, else the next timer.

    The engine never promises FIFO among ready work (Dex does not), so picking by seed explores
    other orders while the same seed replays the same one exactly. Timers due at the same
    instant become ready together, so the same pick orders them.
    """

    def __init__(
        self, seed: int, epoch_ns: int = SIMULATION_EPOCH_NS, chooser: Chooser | None = None
    ) -> None:
        self.now_ns = epoch_ns
        self.epoch_ns = epoch_ns
        self._rng = random.Random(seed)
        self.chooser: Chooser = chooser if chooser is not None else SeededChooser(self._rng)
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
        index = self.chooser.ready(ready) if len(ready) > 1 else 0
        unit = ready[index]
        ready[index] = ready[-1]
        ready.pop()
        return unit

    def runnable(self, until_ns: int | None = None) -> list[Unit]:
        """The units ``pop`` would choose among, in the order its chooser sees them.

        Like ``pop``, advances virtual time to the next timer when nothing is ready; the list is
        empty when there is no work (or the next timer lies beyond ``until_ns``).
        """
        self._release_due()
        if not self._ready:
            due = self.next_due_ns()
            if due is None or (until_ns is not None and due > until_ns):
                return []
            self.now_ns = due
            self._release_due()
        return list(self._ready)

    @property
    def ready_units(self) -> tuple[Unit, ...]:
        """The units ready now (in the order the chooser would see them)."""
        return tuple(self._ready)

    def timed_units(self) -> list[tuple[int, Unit]]:
        """The live timers' units with their due times, earliest first."""
        return [(t.due_ns, t.unit) for t in sorted(self._timers) if not t.canceled]

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
