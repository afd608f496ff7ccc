"""LiveScheduler: runs the engine's units on a background thread against the wall clock."""

from __future__ import annotations

import heapq
import random
import threading
import time
from collections import deque
from collections.abc import Callable

from dexviz.engine.core.scheduler import TimerHandle, Unit, _Timer

THREAD_PREFIX = "dexviz-"
"""Every thread dexviz starts is named with this prefix (tests check none outlives close())."""


class LiveScheduler:
    """Ready units run in arrival order on one engine thread; timers fire at wall-clock times.

    Every unit runs while holding ``lock``, the runtime's lock, so client threads that take the
    same lock see the state between commits only.
    """

    def __init__(
        self,
        seed: int,
        lock: threading.RLock,
        on_error: Callable[[BaseException], None],
        after: Callable[[], None],
    ) -> None:
        self._rng = random.Random(seed)
        self._lock = lock
        self._wake = threading.Condition(threading.Lock())
        self._ready: deque[Unit] = deque()
        self._timers: list[_Timer] = []
        self._seq = 0
        self._stopping = False
        self._on_error = on_error
        self._after = after
        # Engine time is the wall clock at start plus a monotonic clock: a wall clock stepped
        # back (NTP, a VM resumed) never makes a history's time go backwards.
        self._wall0_ns = time.time_ns()
        self._monotonic0_ns = time.monotonic_ns()
        self._thread = threading.Thread(
            target=self._loop, name=f"{THREAD_PREFIX}engine", daemon=True
        )
        self._thread.start()

    @property
    def now_ns(self) -> int:
        """Engine time in ns since the epoch: wall time at start, then a monotonic clock."""
        return self._wall0_ns + time.monotonic_ns() - self._monotonic0_ns

    def advance_to(self, time_ns: int) -> None:
        """Engine time is never less than ``time_ns`` from now on (a store's last event time).

        A store reopened after the wall clock stepped back (by a new process too) continues
        its histories at or after their last stamp, never before it.
        """
        with self._wake:
            self._wall0_ns += max(0, time_ns - self.now_ns)
            self._wake.notify()  # timers may be due sooner now

    @property
    def rng(self) -> random.Random:
        """Seeded choices (which waiter gets a message) stay reproducible in live mode too."""
        return self._rng

    def call_soon(self, unit: Unit) -> None:
        """Queue a unit; callable from any thread."""
        with self._wake:
            self._ready.append(unit)
            self._wake.notify()

    def call_at(self, due_ns: int, unit: Unit) -> TimerHandle:
        """Run a unit at wall-clock time ``due_ns``; callable from any thread."""
        with self._wake:
            self._seq += 1
            timer = _Timer(due_ns, self._seq, unit)
            heapq.heappush(self._timers, timer)
            self._wake.notify()
        return TimerHandle(timer)

    def has_work(self) -> bool:
        """Whether anything is ready or scheduled."""
        with self._wake:
            return bool(self._ready) or any(not t.canceled for t in self._timers)

    def pending(self) -> list[Unit]:
        """The units of the timers that have not run and are not canceled, soonest first."""
        with self._wake:
            return [t.unit for t in sorted(self._timers) if not t.canceled]

    def _next(self) -> Unit | None:
        with self._wake:
            while not self._stopping:
                now = self.now_ns
                while self._timers and (self._timers[0].canceled or self._timers[0].due_ns <= now):
                    timer = heapq.heappop(self._timers)
                    if not timer.canceled:
                        self._ready.append(timer.unit)
                if self._ready:
                    return self._ready.popleft()
                wait = (self._timers[0].due_ns - now) / 1e9 if self._timers else None
                self._wake.wait(wait)
        return None

    def _loop(self) -> None:
        while True:
            unit = self._next()
            if unit is None:
                return
            with self._lock:
                try:
                    unit()
                    self._after()
                except BaseException as error:  # noqa: BLE001 - report, keep the engine alive
                    self._on_error(error)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the engine thread and wait for it."""
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def on_engine_thread(self) -> bool:
        """Whether the caller is the engine's own thread (running a unit)."""
        return threading.current_thread() is self._thread

    @property
    def alive(self) -> bool:
        """Whether the engine thread still runs."""
        return self._thread.is_alive()
