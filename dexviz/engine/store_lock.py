"""WriterLock: one writer per database file, held with an OS file lock beside the database.

The lock file ``<database>.lock`` is locked with ``flock`` for as long as the writer lives,
and holds who the writer is (process id, program, since when) so that a second writer (in this
process or another) gets an error naming the holder. The OS drops the lock when the process
dies, so a crashed writer never blocks the next one.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from dexviz.engine.sqlite_schema import StoreError

try:  # pragma: no cover - depends on the platform
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock; one writer is not enforced there
    fcntl = None  # type: ignore[assignment]


class WriterLock:
    """The exclusive writer lock of one database file."""

    def __init__(self, database: str) -> None:
        self.path = Path(database + ".lock")
        self._fd: int | None = None
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = _read(fd)
                os.close(fd)
                raise StoreError(
                    f"{database} is already open for writing by {holder or 'another writer'}; "
                    "one engine writes a database at a time (open it with readonly=True to read)"
                ) from None
        os.ftruncate(fd, 0)
        program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        os.write(fd, f"process {os.getpid()} ({program}) since {since}".encode())
        self._fd = fd

    def __del__(self) -> None:
        self.release()

    def release(self) -> None:
        """Give the lock up (closing the file drops the flock)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _read(fd: int) -> str:
    try:
        return os.pread(fd, 200, 0).decode(errors="replace").strip()
    except OSError:
        return ""
