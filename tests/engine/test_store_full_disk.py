"""A full disk loses no commit: the refused commit is not applied, reopening resumes it."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import timedelta

import pytest

import dexviz
from dexviz import Context, Step, StepDecision, Timer, Wait, graceful_complete
from dexviz.engine import MemoryStore, StoreError
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.history import Event, EventKind, History
from tests.engine.filesystems import fill, small_tmpfs
from tests.engine.flows_a import AdHocFlow


class ShortWait(Step[int]):
    """Waits a second, so the engine's own thread makes the next commit."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.all_of(Timer.by_duration(timedelta(seconds=1)))

    def execute(self, context: Context, n: int) -> StepDecision:
        return graceful_complete(n)


BLOCKED_S = 30.0
"""How long a blocked client would wait: the failure must reach it well before."""


class RefusingStore(MemoryStore):
    """Refuses every commit from commit number ``refuse_from`` on, as a full disk would."""

    def __init__(self) -> None:
        super().__init__()
        self.refuse_from: int | None = None
        self.failed: StoreError | None = None
        self.failed_at: float | None = None

    def commit(self, flow_id: str, events: Sequence[Event]) -> None:
        """Commit, or raise StoreError once the commit count reaches ``refuse_from``."""
        if self.failed is None and self.refuse_from is not None:
            if self.commits + 1 >= self.refuse_from:
                self.failed = StoreError("memory://runs: the disk is full; nothing was written")
                self.failed_at = time.monotonic()
        if self.failed is not None:
            raise self.failed
        super().commit(flow_id, events)


WAITS: dict[str, Callable[[dexviz.Client, str, timedelta], object]] = {
    "wait_for_flow": lambda client, flow_id, timeout: client.wait_for_flow(flow_id, timeout),
    "wait_for_step_completion": lambda client, flow_id, timeout: (
        # An execution the Flow never creates: the call waits for the Flow to close.
        client.wait_for_step_completion(flow_id, "Never-1", timeout)
    ),
}
"""Client waits that block until a commit, by name."""


def blocked_wait(
    client: dexviz.Client, flow_id: str, wait: str = "wait_for_flow"
) -> tuple[Future[object], float]:
    """A client wait blocked on another thread, and when it started (monotonic)."""
    pool = ThreadPoolExecutor(1)
    started = time.monotonic()
    future = pool.submit(WAITS[wait], client, flow_id, timedelta(seconds=BLOCKED_S))
    pool.shutdown(wait=False)
    return future, started


def wait_until_waiting(history: Callable[[], History], deadline: float) -> None:
    """Poll until the ShortWait Step recorded its wait (its timer then fires a second later)."""
    while EventKind.STEP_WAIT_FOR_COMPLETED not in [e.kind for e in history()]:
        assert time.monotonic() < deadline, "the Step never waited"
        time.sleep(0.005)


@pytest.mark.parametrize("wait", sorted(WAITS))
def test_a_refused_live_commit_fails_a_client_already_blocked_in_a_wait(wait: str) -> None:
    flow = AdHocFlow("ShortWait", ShortWait())
    store = RefusingStore()
    with dexviz.Engine([flow], store=store, mode="live") as engine:
        client = engine.client()
        client.start_flow(flow, "w", 1)
        wait_until_waiting(lambda: store.history("w"), time.monotonic() + 10)
        store.refuse_from = store.commits + 1  # the timer's commit, on the engine's thread
        waiting, started = blocked_wait(client, "w", wait)
        error = waiting.exception(timeout=BLOCKED_S / 3)
        assert isinstance(error, StoreError) and error is store.failed
        assert store.failed_at is not None and store.failed_at - started > 0.3  # it was blocked
        assert time.monotonic() - store.failed_at < BLOCKED_S / 6  # at once, not at its timeout
        with pytest.raises(StoreError) as later:  # a wait that starts now fails the same way
            client.wait_for_flow("w", timeout=timedelta(seconds=BLOCKED_S))
        assert later.value is store.failed


def test_a_refused_simulated_commit_fails_the_waiting_client_with_the_same_error() -> None:
    flow = AdHocFlow("ShortWait", ShortWait())
    store = RefusingStore()
    engine = dexviz.Engine([flow], store=store)
    client = engine.client()
    client.start_flow(flow, "w", 1)
    store.refuse_from = store.commits + 1
    with pytest.raises(StoreError) as refused:
        client.wait_for_flow("w", timeout=timedelta(seconds=BLOCKED_S))
    assert refused.value is store.failed
    for call in (engine.step, lambda: client.wait_for_flow("w")):
        with pytest.raises(StoreError) as later:
            call()
        assert later.value is store.failed


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


def test_a_live_commit_on_a_full_disk_is_refused_and_reopening_resumes_from_the_store() -> None:
    with small_tmpfs("16m") as disk:
        path = disk / "runs.db"
        flow = AdHocFlow("ShortWait", ShortWait())
        store = dexviz.SQLiteStore(path)
        engine = dexviz.Engine([flow], store=store, mode="live")
        client = engine.client()
        client.start_flow(flow, "w", 1)
        deadline = time.monotonic() + 10
        wait_until_waiting(lambda: store.history("w"), deadline)
        waiting, _ = blocked_wait(client, "w")
        filler = fill(disk)
        stored = store.history("w")
        blocked = waiting.exception(timeout=BLOCKED_S / 3)  # at once, not at its timeout
        assert isinstance(blocked, StoreError) and blocked is store.failed
        while store.failed is None:  # the timer fires on the engine's thread, which commits
            assert time.monotonic() < deadline, "no commit was refused"
            time.sleep(0.01)
        assert "disk is full" in str(store.failed) and str(path) in str(store.failed)
        assert store.history("w") == stored  # nothing of the refused commit was written
        for call in (
            lambda: client.start_flow(flow, "more", 2),
            lambda: client.wait_for_flow("w", timeout=timedelta(seconds=1)),
        ):
            with pytest.raises(StoreError, match="disk is full") as later:
                call()
            assert later.value is store.failed
        filler.unlink()
        engine.close()
        with dexviz.Engine([flow], store=dexviz.SQLiteStore(path), mode="live") as resumed:
            assert resumed.recovered.open_runs == ("w",)
            result = resumed.client().wait_for_flow("w", timeout=timedelta(seconds=10))
            history = resumed.history("w")
        assert result.outputs == (1,)
        assert history[: len(stored)] == stored
        assert [e.seq for e in history] == list(range(1, len(history) + 1))
        assert History.from_jsonl(history.to_jsonl()) == history
