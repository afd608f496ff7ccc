"""WriterLock: one writer per database file, whatever name the file is opened by.

Two OS file locks (``flock``) are held for as long as the writer lives:

- one on the database file itself, so that every name of the file (a symlink, a hard link, a
  relative path) meets the same lock: the lock belongs to the file, not to its name;
- one on the lock file ``<database>.lock`` beside it, which holds who the writer is (process
  id, program, since when) so that a second writer gets an error naming the holder.

The lock file is opened with ``O_NOFOLLOW`` and must be a regular file: a symlink planted at
its name never makes a writer overwrite (or create) the file it points to. The OS drops both
locks when the process dies, so a crashed writer never blocks the next one.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path

from dexviz.engine.sqlite.sqlite_schema import StoreError

try:  # pragma: no cover - depends on the platform
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock; one writer is not enforced there
    fcntl = None  # type: ignore[assignment]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_PARKED: dict[tuple[int, int], int] = {}
"""Unlocked descriptors of database files, by (device, inode), kept for the next writer.

Closing a descriptor of a database would drop every POSIX lock SQLite holds on it in this
process, so a released writer unlocks its descriptor and parks it here instead.
"""


class WriterLock:
    """The exclusive writer lock of one database file."""

    def __init__(self, database: str) -> None:
        self.path = Path(database + ".lock")
        self._fd: int | None = None
        self._db_fd: int | None = None
        self._key = (0, 0)
        fd = _open_lock_file(self.path)
        try:
            self._db_fd = self._lock_database(database, fd)
            _flock(fd, database)
            _write_holder(fd, self.path)
        except BaseException:
            os.close(fd)
            self.release()
            raise
        self._fd = fd

    def _lock_database(self, database: str, lock_fd: int) -> int:
        try:
            db_fd = os.open(database, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise StoreError(f"{database}: cannot open the database ({error.strerror})") from None
        info = os.fstat(db_fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(db_fd)
            raise StoreError(f"{database}: not a regular file; a database is a regular file")
        self._key = (info.st_dev, info.st_ino)
        parked = _PARKED.pop(self._key, None)
        if parked is not None:
            os.close(db_fd)  # the parked one stays: closing it could drop SQLite's locks
            db_fd = parked
        try:
            _flock(db_fd, database, lock_fd)
        except BaseException:
            _PARKED[self._key] = db_fd
            raise
        return db_fd

    def __del__(self) -> None:
        self.release()

    def release(self) -> None:
        """Give the lock up (closing the lock file and unlocking the database drop the flocks)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._db_fd is not None:
            if fcntl is not None:
                fcntl.flock(self._db_fd, fcntl.LOCK_UN)
            _PARKED[self._key] = self._db_fd
            self._db_fd = None


def _open_lock_file(path: Path) -> int:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o644)
    except OSError as error:
        if os.path.islink(path):
            raise StoreError(
                f"{path}: the writer lock file is a symbolic link; dexviz never writes through "
                "a link (remove it)"
            ) from None
        raise StoreError(f"{path}: cannot create the writer lock file ({error.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise StoreError(f"{path}: the writer lock file is not a regular file (remove it)")
    return fd


def _flock(fd: int, database: str, holder_fd: int | None = None) -> None:
    if fcntl is None:  # pragma: no cover - no flock on this platform
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = _read(fd if holder_fd is None else holder_fd)
        raise StoreError(
            f"{database} is already open for writing by {holder or 'another writer'}; "
            "one engine writes a database at a time (open it with readonly=True to read)"
        ) from None


def _write_holder(fd: int, path: Path) -> None:
    program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"process {os.getpid()} ({program}) since {since}".encode())
    except OSError as error:
        raise StoreError(f"{path}: cannot write the writer lock file ({error.strerror})") from None


def _read(fd: int) -> str:
    try:
        return os.pread(fd, 200, 0).decode(errors="replace").strip()
    except OSError:
        return ""
