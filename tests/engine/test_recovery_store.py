"""Recovery from a SQLite file: Flow id reuse, unregistered Flows, live mode, group durability."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

import dexviz
from dexviz import (
    Channel,
    Context,
    EventKind,
    FlowStatus,
    IdReusePolicy,
    StartFlowOptions,
    Step,
    StepDecision,
    Timer,
    Wait,
    graceful_complete,
)
from dexviz.engine import RecoveryError
from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
from dexviz.sdk.errors import FlowAlreadyStartedError
from tests.engine.flows_a import AdHocFlow

GO = Channel("go", str)


class WaitForGo(Step[int]):
    """Waits for a ``go`` message or a one-hour timer, whichever comes first."""

    def wait_for(self, context: Context, n: int) -> Wait:
        return Wait.any_of(GO.for_one(), Timer.by_duration(timedelta(hours=1)))

    def execute(self, context: Context, n: int) -> StepDecision:
        messages = GO.results(context)
        return graceful_complete(messages[0] if messages else "timer")


def _waiting_flow() -> AdHocFlow:
    return AdHocFlow("Waiting", WaitForGo(), schema=[GO])


def _closed_edits(path: Path) -> None:
    flow = ContractEditFlow()
    engine = dexviz.Engine([flow], seed=4, store=dexviz.SQLiteStore(path, durability="normal"))
    engine.client().start_flow(flow, "edits", sample_edits(3))
    engine.run_until_idle()
    engine.close()


def _waiting(path: Path, mode: str = "simulation") -> None:
    flow = _waiting_flow()
    engine = dexviz.Engine([flow], store=dexviz.SQLiteStore(path, durability="normal"), mode=mode)
    engine.client().start_flow(flow, "w", 1)
    if mode == "simulation":
        engine.run(until=EventKind.STEP_WAIT_FOR_COMPLETED)
    engine.close()


def test_r140_a_stored_flow_id_follows_the_id_reuse_policy(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    _closed_edits(path)
    flow = ContractEditFlow()
    engine = dexviz.Engine([flow], seed=1, store=dexviz.SQLiteStore(path))
    assert engine.recovered.closed_runs == ("edits",)
    client = engine.client()
    never = StartFlowOptions(id_reuse_policy=IdReusePolicy.DISALLOW)
    with pytest.raises(FlowAlreadyStartedError, match="already started"):
        client.start_flow(flow, "edits", sample_edits(2), never)
    assert engine.result("edits").status is FlowStatus.COMPLETED  # no phantom run
    engine.client().start_flow(flow, "other", sample_edits(2))
    engine.run_until_idle()  # the engine is not stalled
    assert engine.result("other").status is FlowStatus.COMPLETED
    client.start_flow(flow, "edits", sample_edits(2))  # DEFAULT: allowed once it is closed
    engine.run_until_idle()
    history = engine.history("edits")
    assert len(history.run_ids) == 2
    assert [e.seq for e in history] == list(range(1, len(history) + 1))
    assert engine.result("edits").status is FlowStatus.COMPLETED


def test_a_stored_flow_whose_type_is_not_registered_is_named(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    _closed_edits(path)
    with pytest.raises(
        RecoveryError, match="'edits' .* 'ContractEditFlow', which is not registered"
    ):
        dexviz.Engine([_waiting_flow()], store=dexviz.SQLiteStore(path))


def test_r140_a_stored_running_flow_id_is_not_started_again(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    _waiting(path)
    flow = _waiting_flow()
    engine = dexviz.Engine([flow], store=dexviz.SQLiteStore(path))
    with pytest.raises(FlowAlreadyStartedError, match="already started"):
        engine.client().start_flow(flow, "w", 2)
    engine.client().publish("w", GO, "go")
    engine.run_until_idle()
    assert engine.result("w").outputs == ("go",)


def test_a_waiting_run_resumes_with_its_stored_timer(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    _waiting(path)
    engine = dexviz.Engine([_waiting_flow()], store=dexviz.SQLiteStore(path))
    assert engine.recovered.open_runs == ("w",)
    state = engine.flow_state("w")
    assert [(a.execution_id, a.phase) for a in state.active_executions] == [
        ("WaitForGo-1", "waiting")
    ]
    started = engine.history("w")[0].time_ns
    engine.run_until_idle()
    assert engine.result("w").outputs == ("timer",)
    fired = [e for e in engine.history("w") if e.kind == EventKind.TIMER_FIRED]
    assert fired[0].time_ns == started + 3600 * 10**9  # the stored due time, not a new hour


def test_a_run_stored_in_simulation_resumes_in_live_mode(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    _waiting(path)
    with dexviz.Engine([_waiting_flow()], store=dexviz.SQLiteStore(path), mode="live") as engine:
        client = engine.client()
        # Due times are absolute: the virtual deadline (January 2026) has passed on the wall clock.
        assert client.wait_for_flow("w", timeout=timedelta(seconds=10)).outputs == ("timer",)
        kinds = [e.kind for e in engine.history("w")]
    assert kinds.count(EventKind.RECOVERED) == 1


def test_a_live_run_resumes_in_a_new_live_engine(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    flow = _waiting_flow()
    with dexviz.Engine([flow], store=dexviz.SQLiteStore(path), mode="live") as first:
        first.client().start_flow(flow, "w", 1)
        for _ in range(500):  # the first engine stops once "w" waits
            if any(e.kind == EventKind.STEP_WAIT_FOR_COMPLETED for e in first.history("w")):
                break
            time.sleep(0.01)
    with dexviz.Engine([flow], store=dexviz.SQLiteStore(path), mode="live") as second:
        assert second.recovered.open_runs == ("w",)
        second.client().publish("w", GO, "again")
        result = second.client().wait_for_flow("w", timeout=timedelta(seconds=10))
    assert result.outputs == ("again",)


def test_group_durability_acknowledges_after_the_fsync(tmp_path: Path) -> None:
    store = dexviz.SQLiteStore(tmp_path / "g.db", durability="group")
    flow = _waiting_flow()
    with dexviz.Engine([flow], store=store, mode="live") as engine:
        client = engine.client()
        client.start_flow(flow, "w", 1)
        client.publish("w", GO, "x")
        assert client.wait_for_flow("w", timeout=timedelta(seconds=10)).outputs == ("x",)
        sync = store._sync
        assert sync is not None and sync.fsyncs >= 1
        assert sync.durable_commits == sync.commits  # everything acknowledged is on disk


_STEPPED_BACK = """
import sys, time
from datetime import timedelta

real = time.time_ns
time.time_ns = lambda: real() - 3600 * 10**9  # this process's wall clock is an hour behind

import dexviz
from tests.engine.test_recovery_store import GO, _waiting_flow

store = dexviz.SQLiteStore(sys.argv[1])
with dexviz.Engine([_waiting_flow()], store=store, mode="live") as engine:
    engine.client().publish("w", GO, "later")
    print(engine.client().wait_for_flow("w", timeout=timedelta(seconds=20)).outputs)
"""


def test_live_time_never_goes_backwards_in_a_new_process_whose_clock_stepped_back(
    tmp_path: Path,
) -> None:
    path = tmp_path / "h.db"
    flow = _waiting_flow()
    with dexviz.Engine([flow], store=dexviz.SQLiteStore(path), mode="live") as first:
        first.client().start_flow(flow, "w", 1)
        for _ in range(500):  # the first engine stops once "w" waits
            if any(e.kind == EventKind.STEP_WAIT_FOR_COMPLETED for e in first.history("w")):
                break
            time.sleep(0.01)
    before = dexviz.SQLiteStore(path, readonly=True).history("w")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _STEPPED_BACK, str(path)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "('later',)"
    history = dexviz.SQLiteStore(path, readonly=True).history("w")
    stamps = [event.time_ns for event in history]
    assert stamps == sorted(stamps)
    assert history[len(before)].kind is EventKind.RECOVERED
    assert dexviz.History.from_jsonl(history.to_jsonl()) == history
