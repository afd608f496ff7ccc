"""SQLiteStore: each commit is one SQLite transaction; histories survive the process."""

from __future__ import annotations

from pathlib import Path

import pytest

import dexviz
from dexviz.engine import StoreError
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.history import Event, EventKind


def _run(store: dexviz.Store, seed: int = 4) -> dexviz.Engine:
    flow = ContractEditFlow()
    engine = dexviz.Engine([flow], seed=seed, store=store)
    engine.client().start_flow(flow, "edits", sample_edits(5))
    engine.run_until_idle()
    return engine


def test_sqlite_and_memory_stores_record_the_same_history(tmp_path: Path) -> None:
    on_disk = _run(dexviz.SQLiteStore(tmp_path / "h.db")).history("edits")
    in_memory = _run(dexviz.MemoryStore()).history("edits")
    assert on_disk.to_jsonl() == in_memory.to_jsonl()
    assert on_disk[-1].kind == EventKind.FLOW_CLOSED


def test_a_history_survives_reopening_the_database(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    store = dexviz.SQLiteStore(path, synchronous="NORMAL")
    original = _run(store).history("edits")
    store.close()
    reopened = dexviz.SQLiteStore(path)
    assert reopened.history("edits") == original
    assert reopened.flow_ids() == ("edits",)
    assert dexviz.exclusive_sections(reopened.history("edits"), "contractEditToken").ok


def test_a_commit_is_all_or_nothing(tmp_path: Path) -> None:
    store = dexviz.SQLiteStore(tmp_path / "h.db")

    def event(seq: int) -> Event:
        return Event(seq, 0, EventKind.ATTEMPT_STARTED, "f", "r", "A-1", "A", "execute", 1, {})

    store.commit("f", [event(1)])
    with pytest.raises(StoreError, match="seq 1 does not follow seq 2"):
        store.commit("f", [event(2), event(1)])  # seq 1 is taken: the whole commit is refused
    assert [e.seq for e in store.history("f")] == [1]
    assert store.commits == 1


def test_an_unknown_synchronous_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="synchronous must be one of"):
        dexviz.SQLiteStore(synchronous="SOMETIMES")


def test_a_live_engine_commits_to_sqlite_from_its_thread(tmp_path: Path) -> None:
    store = dexviz.SQLiteStore(tmp_path / "live.db", synchronous="NORMAL")
    from tests.engine.flows_a import AdHocFlow

    class Count(dexviz.Step[int]):
        def execute(self, context: dexviz.Context, n: int) -> dexviz.StepDecision:
            return dexviz.go_to(Count, n + 1) if n < 5 else dexviz.graceful_complete(n)

    flow = AdHocFlow("Counter", Count())
    with dexviz.Engine([flow], mode="live", store=store) as engine:
        client = engine.client()
        client.start_flow(flow, "c", 0)
        assert client.wait_for_flow("c").single_output(int) == 5
    assert dexviz.SQLiteStore(tmp_path / "live.db").history("c")[-1].kind == EventKind.FLOW_CLOSED
