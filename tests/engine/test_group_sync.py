"""GroupSync: the group durability mode's background fsync of the write-ahead log."""

from __future__ import annotations

import time
from pathlib import Path

from dexviz.engine.sqlite.group_sync import GroupSync


def _until(predicate: object, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.001)
    return False


def test_a_lone_commit_is_fsynced_without_anyone_waiting(tmp_path: Path) -> None:
    wal = tmp_path / "db-wal"
    wal.write_bytes(b"x")
    sync = GroupSync(str(wal))
    sync.committed()
    assert _until(lambda: sync.durable_commits == 1)  # the interval, not a 64-commit batch
    assert sync.fsyncs == 1
    sync.stop()


def test_many_commits_share_one_fsync_and_a_waiter_sees_them_on_disk(tmp_path: Path) -> None:
    wal = tmp_path / "db-wal"
    wal.write_bytes(b"x")
    sync = GroupSync(str(wal), interval_s=30.0)
    for _ in range(10):
        sync.committed()
    sync.wait()  # returns once an fsync covered all ten
    assert sync.durable_commits == sync.commits == 10
    assert sync.fsyncs <= 2
    for _ in range(64):
        sync.committed()  # a full batch does not wait for the interval
    assert _until(lambda: sync.durable_commits == 74, 20.0)
    sync.stop()
