"""Test support: small file systems that fill up, read-only mounts, and a user who is not root.

Mounting needs root; each helper skips its test with the reason when it cannot mount.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def _mount(*arguments: str) -> None:
    done = subprocess.run(["mount", *arguments], capture_output=True, text=True, timeout=30)
    if done.returncode:
        pytest.skip(f"cannot mount a test file system: {done.stderr.strip()}")


@contextlib.contextmanager
def small_tmpfs(size: str = "2m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted for the test and unmounted after it (root only)."""
    if os.geteuid() != 0:
        pytest.skip("a full disk is simulated with a small tmpfs, which only root can mount")
    where = Path(tempfile.mkdtemp(prefix="dexviz-tmpfs-"))
    _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where))
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)
        where.rmdir()


@contextlib.contextmanager
def read_only(directory: Path) -> Iterator[Path]:
    """A read-only bind mount of ``directory`` for the test (root only)."""
    if os.geteuid() != 0:
        pytest.skip("a read-only file system is a read-only bind mount, which only root can make")
    where = Path(tempfile.mkdtemp(prefix="dexviz-ro-"))
    _mount("--bind", str(directory), str(where))
    try:
        _mount("-o", "remount,bind,ro", str(where))
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)
        where.rmdir()


def fill(directory: Path) -> Path:
    """Write a file into ``directory`` until its file system is full; return the file."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        with contextlib.suppress(OSError):
            while os.write(fd, b"\0" * 4096):
                pass
    finally:
        os.close(fd)
    return filler
