"""Read-only media and permissions: an intact database is read; an unreadable one is named."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import dexviz
from dexviz.engine import StoreError
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from tests.engine.filesystems import read_only


def _checkpointed(folder: Path) -> tuple[Path, dexviz.History]:
    flow = ContractEditFlow()
    path = folder / "runs.db"
    store = dexviz.SQLiteStore(path)
    engine = dexviz.Engine([flow], seed=4, store=store)
    engine.client().start_flow(flow, "edits", sample_edits(2))
    engine.run_until_idle()
    history = engine.history("edits")
    engine.close()
    store.close()
    store._db.close()  # the last connection checkpoints the write-ahead log into the file
    return path, history


def test_an_intact_database_on_a_read_only_file_system_is_read(tmp_path: Path) -> None:
    _, expected = _checkpointed(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.db", "runs.db.lock"]
    with read_only(tmp_path) as media:
        store = dexviz.SQLiteStore(media / "runs.db", readonly=True)
        assert store.history("edits") == expected


def test_a_database_the_user_may_not_read_is_permission_denied() -> None:
    folder = Path(tempfile.mkdtemp(prefix="dexviz-perm-"))  # 0755 parents: only the file denies
    folder.chmod(0o755)
    path, _ = _checkpointed(folder)
    path.chmod(0o000)
    if os.geteuid() != 0:
        with pytest.raises(StoreError, match=r"runs\.db: Permission denied"):
            dexviz.SQLiteStore(path, readonly=True)
        return
    # root reads anything: drop to nobody in a child process to meet the denial.
    script = (
        "import contextlib, io, os, sys\n"
        "import dexviz\n"
        "from dexviz.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['history', sys.argv[1], '--flow', 'edits'])  # as root: imports all it needs\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "try:\n"
        "    dexviz.SQLiteStore(sys.argv[1], readonly=True)\n"
        "except dexviz.engine.StoreError as error:\n"
        "    print(error)\n"
        "sys.exit(main(['history', sys.argv[1], '--flow', 'edits']))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(root)}, cwd="/",
    )  # fmt: skip
    assert f"{path}: Permission denied" in done.stdout, done.stderr
    assert f"{path}: Permission denied" in done.stderr
    assert done.returncode == 1
    shutil.rmtree(folder)
