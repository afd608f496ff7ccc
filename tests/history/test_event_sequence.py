"""EventSequence: what Engine.run returns reads like the list of its events and cannot change."""

from __future__ import annotations

import pytest

import dexviz
from dexviz.examples.contract_edit import ContractEdit, ContractEditFlow
from dexviz.history.event import Event
from dexviz.history.event_sequence import EventSequence


def _run() -> tuple[EventSequence, list[Event]]:
    flow = ContractEditFlow()
    engine = dexviz.Engine([flow], seed=3)
    engine.client().start_flow(flow, "p-1", [ContractEdit(f"r{i}") for i in range(2)])
    started = len(engine.history("p-1"))  # start_flow committed these before the run
    events = engine.run_until_idle()
    return events, list(engine.history("p-1"))[started:]


def test_run_returns_a_sequence_equal_to_the_list_of_its_events() -> None:
    events, history = _run()
    assert isinstance(events, EventSequence)
    assert events == history and history == events
    assert events == tuple(history)
    assert events != history[:-1]
    assert events != "not events"
    assert len(events) == len(history)


def test_it_indexes_slices_and_iterates_like_a_list() -> None:
    events, history = _run()
    assert events[0] == history[0] and events[-1] == history[-1]
    assert isinstance(events[1:3], EventSequence) and events[1:3] == history[1:3]
    assert list(events) == history and list(reversed(events)) == history[::-1]
    assert history[2] in events and events.index(history[2]) == 2
    assert events + [] == history and [] + events == history
    with pytest.raises(IndexError):
        events[len(history)]


def test_it_cannot_be_changed_or_hashed() -> None:
    events, _ = _run()
    with pytest.raises(TypeError):
        events[0] = events[1]  # type: ignore[index]
    with pytest.raises(AttributeError):
        events.append(events[0])  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        hash(events)


def test_its_repr_names_the_count_the_flows_and_the_ends() -> None:
    events, history = _run()
    assert repr(events) == (
        f"EventSequence({len(history)} events of 1 Flow: {history[0].kind} #{history[0].seq} "
        f"of 'p-1' … {history[-1].kind} #{history[-1].seq} of 'p-1')"
    )
    assert repr(EventSequence()) == "EventSequence([])"
