"""WriterLock: one writer per database file whatever its name; the lock file is never a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import dexviz
from dexviz.engine import StoreError


def test_a_symlink_to_an_open_database_is_refused_a_second_writer(tmp_path: Path) -> None:
    first = dexviz.SQLiteStore(tmp_path / "runs.db")
    (tmp_path / "alias.db").symlink_to(tmp_path / "runs.db")
    with pytest.raises(StoreError, match="already open for writing"):
        dexviz.SQLiteStore(tmp_path / "alias.db")
    first.close()
    dexviz.SQLiteStore(tmp_path / "alias.db").close()  # free again once the first writer closed


def test_a_hard_link_to_an_open_database_is_refused_a_second_writer(tmp_path: Path) -> None:
    first = dexviz.SQLiteStore(tmp_path / "runs.db")
    os.link(tmp_path / "runs.db", tmp_path / "other.db")
    with pytest.raises(StoreError, match="already open for writing"):
        dexviz.SQLiteStore(tmp_path / "other.db")
    first.close()


def test_a_lock_file_planted_as_a_symlink_is_never_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    (tmp_path / "runs.db.lock").symlink_to(victim)
    with pytest.raises(StoreError, match=r"runs\.db\.lock.*symbolic link"):
        dexviz.SQLiteStore(tmp_path / "runs.db")
    assert victim.read_text() == "keep me"


def test_a_dangling_lock_link_creates_no_file_elsewhere(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (tmp_path / "runs.db.lock").symlink_to(elsewhere)
    with pytest.raises(StoreError, match="symbolic link"):
        dexviz.SQLiteStore(tmp_path / "runs.db")
    assert not elsewhere.exists()


def test_a_lock_path_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "runs.db.lock").mkdir()
    with pytest.raises(StoreError, match=r"runs\.db\.lock"):
        dexviz.SQLiteStore(tmp_path / "runs.db")


@pytest.mark.parametrize("readonly", [False, True])
def test_a_fifo_or_directory_as_the_database_is_a_store_error(
    tmp_path: Path, readonly: bool
) -> None:
    os.mkfifo(tmp_path / "fifo.db")
    (tmp_path / "dir.db").mkdir()
    for name in ("fifo.db", "dir.db"):
        with pytest.raises(StoreError, match=rf"{name}.*regular file|{name}.*directory"):
            dexviz.SQLiteStore(tmp_path / name, readonly=readonly)
