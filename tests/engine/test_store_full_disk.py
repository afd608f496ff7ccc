"""A full disk loses no commit: the refused commit is not applied, reopening resumes it."""

from __future__ import annotations

import pytest

import dexviz
from dexviz.engine import StoreError
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.history import EventKind, History
from tests.engine.filesystems import fill, small_tmpfs


def test_a_commit_on_a_full_disk_is_refused_and_reopening_resumes_from_the_store() -> None:
    with small_tmpfs("16m") as disk:
        path = disk / "runs.db"
        flow = ContractEditFlow()
        store = dexviz.SQLiteStore(path)
        engine = dexviz.Engine([flow], seed=4, store=store)
        engine.client().start_flow(flow, "edits", sample_edits(10))
        for _ in range(5):
            engine.step()
        filler = fill(disk)
        with pytest.raises(StoreError, match="disk is full") as refused:
            engine.run_until_idle(max_units=100_000)
        assert str(path) in str(refused.value)
        assert "cannot rollback" not in str(refused.value)
        stored = [e.seq for e in store.history("edits")]
        # The engine refuses further work until the store is reopened, with the same error.
        for call in (engine.step, lambda: engine.client().start_flow(flow, "more", [])):
            with pytest.raises(StoreError, match="disk is full"):
                call()
        with pytest.raises(StoreError, match="disk is full"):
            store.commit("edits", [])
        filler.unlink()
        store.close()
        resumed = dexviz.Engine([flow], seed=4, store=dexviz.SQLiteStore(path))
        resumed.run_until_idle()
        history = resumed.history("edits")
        seqs = [e.seq for e in history]
        assert seqs == list(range(1, len(seqs) + 1))
        assert seqs[: len(stored)] == stored
        assert history[-1].kind is EventKind.FLOW_CLOSED
        assert History.from_jsonl(history.to_jsonl()) == history


def test_creating_a_database_on_a_full_disk_names_the_file() -> None:
    with small_tmpfs("1m") as disk:
        fill(disk)
        with pytest.raises(StoreError, match=r"runs\.db"):
            dexviz.SQLiteStore(disk / "runs.db")
