"""state_at / StateFolder: queues, reservations, Attributes and phases at any event."""

from __future__ import annotations

import time

import pytest

from dexviz.analysis.state import StateFolder, state_at
from dexviz.history import EventKind
from tests.analysis.factory import (
    FINISHED,
    TOKEN,
    HistoryBuilder,
    cancel,
    canceled_holder_history,
    contract_edit_history,
)


def _index(history, predicate):
    return next(i for i, e in enumerate(history) if predicate(e))


def test_declared_channels_are_listed_empty_from_the_start():
    history = contract_edit_history()
    view = state_at(history, 0)
    assert dict(view.channels) == {TOKEN: (), FINISHED: ()}
    assert view.active == () and view.closed is None


def test_the_token_is_queued_then_reserved_then_gone_when_the_handoff_commits():
    history = contract_edit_history()
    consumed = _index(history, lambda e: e.kind == EventKind.MESSAGE_CONSUMED)
    before = state_at(history, consumed - 1)
    assert [m.message_id for m in before.channels[TOKEN]] == ["m-1"]
    held = state_at(history, consumed)
    assert held.channels[TOKEN] == () and held.holder_of(TOKEN) == ("EnterContractEdit-1",)
    committed = _index(history, lambda e: e.kind == EventKind.STEP_EXECUTE_COMPLETED
                       and e.execution_id == "EnterContractEdit-1")
    assert state_at(history, committed).reserved == {}


def test_r57_a_canceled_holder_puts_the_token_back_at_the_front():
    history = canceled_holder_history()
    returned = _index(history, lambda e: e.kind == EventKind.MESSAGE_RETURNED)
    view = state_at(history, returned)
    assert [m.message_id for m in view.channels[TOKEN]] == ["m-1"]
    assert view.phase_of("EnterContractEdit-1") is None  # canceled: no longer active


def test_r57_several_returned_messages_keep_their_order_ahead_of_later_ones():
    b = HistoryBuilder()
    b.start({"flow_type": "F", "start_step": "P", "channels": [
        {"name": "ch", "kind": "channel", "value_type": "int"}]}, None)
    for value in (1, 2):
        b.publish("P-1", "ch", value)
    b.create("W", None, "P-1", has_wait_for=True)
    b.wait_for("W-1", "ch", "ch.for 2", at_least=2)
    b.satisfy("W-1", [("ch", "m-1"), ("ch", "m-2")])
    b.publish("client", "ch", 3)
    cancel(b, "W-1", by="rpc:stop", phase="execute", returned=[("ch", "m-1"), ("ch", "m-2")])
    view = state_at(b.history(), -1)
    assert [(m.message_id, m.value) for m in view.channels["ch"]] == [
        ("m-1", 1), ("m-2", 2), ("m-3", 3)]


def test_attributes_follow_initial_values_writes_and_deletes():
    b = HistoryBuilder()
    b.emit(EventKind.FLOW_STARTED_OR_CONTINUED, flow={"flow_type": "F"}, input=None,
           initial_attributes=[{"attribute": "count", "value": 0}], continued=False)
    b.create("A", None, "__start__", has_wait_for=True)
    b.emit(EventKind.STEP_WAIT_FOR_COMPLETED, "A-1", method="wait_for", attempt=1, wait={},
           writes=[{"attribute": "count", "value": 1, "deleted": False},
                   {"attribute": "note", "value": "hi", "deleted": False}])
    b.emit(EventKind.RPC_EXECUTION_COMPLETED, method="rpc", rpc="reset",
           writes=[{"attribute": "note", "value": None, "deleted": True}])
    history = b.history()
    assert dict(state_at(history, 0).attributes) == {"count": 0}
    assert dict(state_at(history, 2).attributes) == {"count": 1, "note": "hi"}
    assert dict(state_at(history, 3).attributes) == {"count": 1}


def test_phases_queued_wait_for_waiting_execute_and_backoff():
    history = contract_edit_history()
    folder = StateFolder(history)
    seen: dict[str, list[str]] = {}
    for index in range(len(history)):
        for active in folder.state_at(index).active:
            phases = seen.setdefault(active.execution_id, [])
            if not phases or phases[-1] != active.phase:
                phases.append(active.phase)
    assert seen["EnterContractEdit-3"] == ["queued", "wait_for", "waiting", "queued", "execute"]
    assert seen["SaveContractEdit-3"] == ["queued", "execute", "backoff", "execute"]
    assert state_at(history, -1).closed == "COMPLETED"
    assert state_at(history, -1).completion_requested


def test_stepping_backwards_gives_the_same_views_as_a_fresh_fold():
    history = contract_edit_history()
    folder = StateFolder(history, checkpoint_every=16)
    forward = [folder.state_at(i) for i in range(len(history))]
    for index in reversed(range(len(history))):
        assert folder.state_at(index) == forward[index]
    assert folder.state_at(-1) == state_at(history, len(history) - 1)


def test_stepping_through_two_thousand_events_both_ways_is_cheap():
    history = contract_edit_history(count=125)
    assert len(history) > 2000
    folder = StateFolder(history)
    started = time.perf_counter()
    for index in range(len(history)):
        folder.state_at(index)
    for index in reversed(range(len(history))):
        folder.state_at(index)
    # A generous sanity bound (the benchmark suite measures the real cost).
    assert time.perf_counter() - started < 10.0


def test_an_index_outside_the_history_is_named():
    history = contract_edit_history(count=1)
    with pytest.raises(IndexError, match=f"event index {len(history)} is outside the history"):
        state_at(history, len(history))
    with pytest.raises(ValueError, match="checkpoint_every must be at least 1"):
        StateFolder(history, checkpoint_every=0)
