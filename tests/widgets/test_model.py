"""The Debugger model without ipywidgets: cursor, state at the cursor, search, breakpoints."""

from __future__ import annotations

import random

import pytest

from dexviz.analysis import _state_fold
from dexviz.analysis.state import state_at
from dexviz.history import EventKind, History
from dexviz.widgets import Debugger
from tests.widgets.helpers import FINISHED, TOKEN, history, token_consumption


def test_next_and_prev_walk_the_history_and_report_its_ends():
    dbg = Debugger(history())
    assert dbg.index == 0 and not dbg.prev()
    assert dbg.next() and dbg.index == 1
    assert dbg.prev() and dbg.index == 0
    dbg.last()
    assert dbg.at_end and dbg.index == len(dbg) - 1
    assert dbg.next() is False and dbg.index == len(dbg) - 1


def test_seek_accepts_negative_indexes_and_names_the_length_when_out_of_range():
    dbg = Debugger(history())
    assert dbg.seek(-1).index == len(dbg) - 1
    assert dbg.seek(3).event.seq == 4
    with pytest.raises(IndexError, match=rf"event index {len(dbg)} is outside the history of "
                                         rf"{len(dbg)} events"):
        dbg.seek(len(dbg))


def test_at_the_token_consumption_the_state_shows_the_token_reserved_by_the_consumer():
    events = history()
    at = token_consumption(events)
    consumer = events[at].payload["consumer"]
    dbg = Debugger(events)
    state = dbg.seek(at)
    assert state.event.kind == EventKind.MESSAGE_CONSUMED
    assert state.holder_of(TOKEN) == (consumer,)
    assert state.channels[TOKEN] == ()
    (held,) = state.reserved[TOKEN]
    assert (held.value, held.execution_id) == ("contract", consumer)
    assert consumer in {a.execution_id for a in state.active_executions}
    before = dbg.seek(at - 1)
    assert [m.value for m in before.channels[TOKEN]] == ["contract"]
    assert before.holder_of(TOKEN) == ()


def test_the_state_at_every_cursor_position_matches_a_fold_from_scratch():
    events = history()
    dbg = Debugger(events)
    rng = random.Random(7)
    positions = list(range(len(events))) + list(range(len(events) - 1, -1, -1))
    positions += [rng.randrange(len(events)) for _ in range(40)]
    for position in positions:
        assert dbg.seek(position).view == state_at(events, position), position


def test_stepping_forward_folds_one_event_per_step_never_from_zero(monkeypatch):
    events = history()
    dbg = Debugger(events)
    applied = []
    original = _state_fold.MutableState.apply

    def counting(self, event):
        applied.append(event.seq)
        return original(self, event)

    monkeypatch.setattr(_state_fold.MutableState, "apply", counting)
    states = [dbg.state]
    while dbg.next():
        states.append(dbg.state)
    assert applied == [e.seq for e in events]
    assert [s.event.seq for s in states] == [e.seq for e in events]


def test_find_and_jump_by_kind_and_execution_both_ways():
    events = history()
    dbg = Debugger(events)
    assert dbg.jump(kind=EventKind.WAIT_SATISFIED)
    satisfied = dbg.index
    assert events[satisfied].kind == EventKind.WAIT_SATISFIED
    consumer = events[satisfied].execution_id
    assert dbg.jump(execution_id=consumer, kind="StepExecuteCompleted")
    assert dbg.event.execution_id == consumer
    assert dbg.jump(kind="WaitSatisfied", backward=True) and dbg.index == satisfied
    assert dbg.find(kind="FlowStartedOrContinued") is None
    assert dbg.jump(kind="FlowStartedOrContinued") is False
    assert "no FlowStartedOrContinued after here" in dbg.message


def test_continue_stops_at_breakpoints_and_run_to_takes_a_step_type_or_kind():
    dbg = Debugger(history())
    dbg.add_breakpoint("EditContract")
    dbg.add_breakpoint(EventKind.FLOW_CLOSED)
    assert dbg.continue_() and dbg.event.step_type == "EditContract"
    assert "stopped at breakpoint (EditContract, FlowClosed)" in dbg.message
    dbg.remove_breakpoint("EditContract")
    assert dbg.continue_() and dbg.event.kind == EventKind.FLOW_CLOSED
    dbg.clear_breakpoints()
    dbg.first()
    assert dbg.run_to("AttemptFailed") and dbg.event.kind == EventKind.ATTEMPT_FAILED
    dbg.last()
    assert dbg.run_to("SaveContractEdit") is False and dbg.at_end
    assert dbg.continue_() is False and "at the end" in dbg.message
    with pytest.raises(TypeError, match="until takes an EventKind"):
        dbg.add_breakpoint(42)  # type: ignore[arg-type]


def test_listeners_hear_every_move_until_they_unobserve():
    dbg = Debugger(history())
    seen = []
    listener = lambda model: seen.append(model.index)  # noqa: E731
    dbg.observe(listener)
    dbg.next()
    dbg.seek(5)
    dbg.prev()
    dbg.unobserve(listener)
    dbg.next()
    assert seen == [1, 5, 4]


def test_lineage_marks_at_the_token_consumption_select_and_hold_the_consumer():
    events = history()
    at = token_consumption(events)
    consumer = events[at].payload["consumer"]
    dbg = Debugger(events, collapse_at=None)  # every execution its own node
    dbg.seek(at)
    classes = {k: set(v.split()) for k, v in dbg.graph_classes("lineage").items()}
    assert {"dx-selected", "dx-holder", "dx-active"} <= classes[f"exec:{consumer}"]
    assert dbg.highlighted() == (f"exec:{consumer}",)
    assert "dx-future" in classes["exec:EditContract-1"]
    assert "dx-future" in classes["exec:__end__"]
    assert "dx-done" in classes["exec:StartContractEdits-1"]
    dbg.last()
    assert dbg.highlighted() == ("exec:__end__",)
    assert not any("dx-future" in c for c in dbg.graph_classes().values())


def test_definition_marks_follow_the_selected_step_and_the_held_channel():
    events = history()
    dbg = Debugger(events, graph="definition")
    dbg.seek(token_consumption(events))
    classes = dbg.graph_classes()
    assert dbg.highlighted() == ("step:EnterContractEdit",)
    assert "dx-holder" in classes["step:EnterContractEdit"]
    assert classes[f"channel:{TOKEN}"] == "dx-held"
    assert f"channel:{FINISHED}" not in classes


def test_collapsing_groups_siblings_and_marks_the_group_of_the_selected_execution():
    events = history()
    at = token_consumption(events)
    dbg = Debugger(events, collapse_at=3)
    dbg.seek(at)
    assert dbg.highlighted() == ("exec:group:EnterContractEdit-1",)


@pytest.mark.parametrize(
    ("source", "error", "match"),
    [
        (History(), ValueError, "cannot debug an empty history"),
        (42, TypeError, "Debugger takes a History, a history file, a SimulationRun or an Engine"),
        ("no-such-history.jsonl", FileNotFoundError, "no-such-history.jsonl"),
    ],
)
def test_bad_sources_are_rejected_with_a_clear_error(source, error, match):
    with pytest.raises(error, match=match):
        Debugger(source)


def test_bad_graph_and_collapse_options_are_rejected():
    with pytest.raises(ValueError, match=r"graph must be one of \['lineage', 'definition'\]"):
        Debugger(history(), graph="timeline")
    with pytest.raises(ValueError, match="collapse_at must be 'auto', None or an int"):
        Debugger(history(), collapse_at="sometimes")


def test_engine_actions_on_a_replay_explain_what_they_need():
    dbg = Debugger(history())
    for action in (dbg.step, lambda: dbg.fail_next("EditContract"), lambda: dbg.cancel("x")):
        with pytest.raises(RuntimeError, match=r"this Debugger replays a History"):
            action()
    assert dbg.sync() == 0 and dbg.mode == "replay" and dbg.engine is None


def test_repr_is_stable_and_names_the_cursor():
    dbg = Debugger(history())
    dbg.seek(3)
    assert repr(dbg) == ("Debugger(flow_id='flow-1', mode='replay', "
                         f"event=4/{len(dbg)}, at='#4 StepExecuteCompleted StartContractEdits-1 "
                         "(execute #1)')")


def test_the_token_holder_stays_visible_inside_the_section() -> None:
    """Past the handoff, the token is no longer reserved, but the section still holds it."""
    from dexviz import simulate
    from dexviz.examples.contract_edit import ContractEditFlow, sample_edits
    from dexviz.widgets import Debugger

    run = simulate(ContractEditFlow(), sample_edits(3), seed=1)
    debugger = Debugger(run.history, token_channel="contractEditToken")
    debugger.jump(kind="AttemptStarted", step_type="SaveContractEdit")
    holder = debugger.event.execution_id
    assert debugger.state.holder_of("contractEditToken") == ()
    assert debugger.section_holders() == {holder: "contractEditToken (in section)"}
    assert "contractEditToken (in section)" in debugger.snapshot()
    assert Debugger(run.history).section_holders() == {}
