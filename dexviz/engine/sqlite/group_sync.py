"""GroupSync: the ``group`` durability mode's background fsync of SQLite's write-ahead log.

Each commit is written at ``synchronous=NORMAL`` (in the OS, not yet on the disk). A thread
fsyncs the WAL file once 2 ms have passed since the first unsynced commit, or at once when 64
commits are pending, and then marks every commit written before that fsync as durable. A caller
that must not see an acknowledgement before its commit is on disk calls :meth:`wait`.
"""

from __future__ import annotations

import os
import threading
import time

INTERVAL_S = 0.002
"""The longest a commit waits for its fsync."""
BATCH = 64
"""This many pending commits start an fsync at once."""


class GroupSync:
    """Counts commits, fsyncs the WAL in the background, and tells waiters what is durable."""

    def __init__(self, wal_path: str, interval_s: float = INTERVAL_S, batch: int = BATCH) -> None:
        self._wal_path = wal_path
        self._interval = interval_s
        self._batch = batch
        self._cond = threading.Condition()
        self._committed = 0
        self._durable = 0
        self._started = 0
        self._urgent = False
        self._fd: int | None = None
        self._stopped = False
        self.fsyncs = 0
        self._thread = threading.Thread(target=self._loop, name="dexviz-group-fsync", daemon=True)
        self._thread.start()

    @property
    def commits(self) -> int:
        """Commits counted so far."""
        return self._committed

    @property
    def durable_commits(self) -> int:
        """Commits known to be on disk."""
        return self._durable

    def committed(self) -> None:
        """Count one commit written to the WAL (wakes the thread for the first pending one)."""
        with self._cond:
            self._committed += 1
            pending = self._committed - self._started
            if pending == 1 or pending >= self._batch:
                self._cond.notify_all()

    def wait(self) -> None:
        """Block until every commit counted so far is on disk."""
        with self._cond:
            target = self._committed
            while self._durable < target and not self._stopped:
                self._urgent = True  # someone waits: fsync now rather than at the interval
                self._cond.notify_all()
                self._cond.wait(self._interval)

    def stop(self) -> None:
        """Fsync what is pending, then stop the thread."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self._thread.join()
        self._fsync()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _loop(self) -> None:
        cond = self._cond
        while True:
            with cond:
                cond.wait_for(lambda: self._stopped or self._committed > self._started)
                if self._stopped:
                    return
                # The first pending commit waits at most one interval for company.
                deadline = time.monotonic() + self._interval
                while (
                    self._committed - self._started < self._batch
                    and not self._stopped
                    and not self._urgent
                ):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    cond.wait(left)
                target = self._started = self._committed
                self._urgent = False
            self._fsync()
            with cond:
                self._durable = max(self._durable, target)
                cond.notify_all()

    def _fsync(self) -> None:
        if self._fd is None:
            try:
                self._fd = os.open(self._wal_path, os.O_RDONLY)
            except OSError:
                return
        fdatasync = getattr(os, "fdatasync", os.fsync)
        fdatasync(self._fd)
        self.fsyncs += 1
