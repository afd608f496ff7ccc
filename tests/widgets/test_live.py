"""Live debugging of a simulation Engine: step, continue, breakpoints, faults, cancellation."""

from __future__ import annotations

import pytest

import dexviz
from dexviz.analysis.state import state_at
from dexviz.examples.contract_edit import ContractEditFlow
from dexviz.history import EventKind
from dexviz.sdk.codec import to_json_ready
from dexviz.widgets import Debugger
from tests.widgets.helpers import TOKEN, started_engine


def _engine_view(dbg: Debugger) -> tuple[dict[str, tuple], set[str]]:
    state = dbg.engine.flow_state(dbg.flow_id)
    channels = {name: tuple(to_json_ready(v) for v in values)
                for name, values in state.channels.items()}
    return channels, {a.execution_id for a in state.active_executions}


def test_step_runs_one_unit_and_the_state_follows_the_engine():
    engine = started_engine()
    dbg = Debugger(engine)
    assert dbg.mode == "live" and dbg.at_end and len(dbg) == 2
    while True:
        before = len(dbg)
        new = dbg.step()
        if not new:
            break
        assert len(dbg) == before + len(new) and dbg.at_end
        channels, active = _engine_view(dbg)
        state = dbg.state
        assert {a.execution_id for a in state.active_executions} == active
        assert {name: tuple(m.value for m in queue)
                for name, queue in state.channels.items()} == channels
    assert dbg.state.closed == "COMPLETED" and "idle" in dbg.message
    assert dbg.history == engine.history("flow-1")


def test_the_live_history_folds_incrementally_like_a_finished_one():
    dbg = Debugger(started_engine())
    dbg.continue_()
    events = dbg.history
    for position in (0, 10, len(events) // 2, len(events) - 1):
        assert dbg.seek(position).view == state_at(events, position)


def test_run_to_a_step_type_stops_at_its_first_event():
    dbg = Debugger(started_engine())
    assert dbg.run_to("EditContract")
    assert dbg.event.step_type == "EditContract" and dbg.event.kind == (
        EventKind.STEP_EXECUTION_CREATED)
    assert "stopped at EditContract" in dbg.message
    assert not dbg.engine.is_idle


def test_fail_next_fails_exactly_one_attempt_of_the_chosen_step():
    dbg = Debugger(started_engine())
    rule = dbg.fail_next("EditContract")
    assert "the next execute attempt of EditContract will fail" in dbg.message
    assert dbg.run_to(lambda e: e.kind == EventKind.ATTEMPT_FAILED
                      and e.payload["reason"] == "fault")
    failed = dbg.event
    assert failed.step_type == "EditContract"
    assert rule.fired and rule.failed == f"{failed.execution_id} execute attempt 1"
    dbg.continue_()
    assert dbg.state.closed == "COMPLETED"
    failures = [e for e in dbg.history if e.kind == EventKind.ATTEMPT_FAILED
                and e.payload["reason"] == "fault"]
    assert failures == [failed]


def test_cancel_returns_a_reserved_token_to_the_front_of_its_queue():
    dbg = Debugger(started_engine())
    assert dbg.run_to(EventKind.MESSAGE_CONSUMED)
    holder = dbg.event.payload["consumer"]
    assert dbg.state.holder_of(TOKEN) == (holder,)
    assert dbg.cancel(holder)
    assert dbg.event.kind == EventKind.EXECUTION_CANCELED and dbg.event.execution_id == holder
    dbg.last()
    assert dbg.state.holder_of(TOKEN) == () and len(dbg.state.channels[TOKEN]) == 1
    assert dbg.state.phase_of(holder) is None
    assert dbg.cancel(holder) is False and "is not active" in dbg.message


def test_breakpoints_already_recorded_are_found_before_the_engine_runs():
    dbg = Debugger(started_engine())
    dbg.continue_()
    dbg.first()
    dbg.add_breakpoint("SaveContractEdit")
    assert dbg.continue_() and dbg.event.step_type == "SaveContractEdit"


def test_events_committed_outside_the_debugger_arrive_with_sync():
    engine = started_engine()
    dbg = Debugger(engine)
    engine.step()
    assert dbg.sync() > 0 and len(dbg) == len(engine.history("flow-1"))
    assert dbg.sync() == 0


def test_an_engine_needs_a_started_flow_and_simulation_mode():
    engine = dexviz.Engine([ContractEditFlow()])
    with pytest.raises(ValueError, match=r"started: none; start one with"):
        Debugger(engine)
    started = started_engine()
    with pytest.raises(ValueError, match=r"choose the Flow to debug with flow_id= \(started: "
                                         r"flow-1"):
        Debugger(started, flow_id="flow-9")
    live = dexviz.Engine([ContractEditFlow()], mode="live")
    try:
        with pytest.raises(ValueError, match="this one is live"):
            Debugger(live)
    finally:
        live.close()


def test_a_simulation_run_is_replayed():
    run = dexviz.simulate(ContractEditFlow(), [], seed=1)
    dbg = Debugger(run)
    assert dbg.mode == "replay" and len(dbg) == len(run.history)


def test_the_live_widget_steps_fails_and_cancels_from_its_controls():
    pytest.importorskip("ipywidgets")
    dbg = Debugger(started_engine())
    view = dbg.view
    view.step.click()
    assert dbg.at_end and len(dbg) > 2 and view.slider.max == len(dbg) - 1
    view.fail_step.value = "EnterContractEdit"
    view.fail.click()
    view.breakpoint.value = "AttemptFailed"
    view.run_to.click()
    assert dbg.event.kind == EventKind.ATTEMPT_FAILED
    assert dbg.event.step_type == "EnterContractEdit"
    active = [value for value in view.cancel_execution.options]
    assert active and set(active) == {a.execution_id for a in dbg.state_at(-1).active_executions}
    view.cancel_execution.value = active[-1]
    view.cancel.click()
    assert f"canceled {active[-1]}" in view.message.value
    view.continue_.click()
    assert dbg.engine.is_idle and dbg.at_end


def test_a_failing_action_is_reported_in_the_message_panel():
    pytest.importorskip("ipywidgets")
    dbg = Debugger(started_engine())
    view = dbg.view
    view.fail_step.options = ["NoSuchStep", *view.fail_step.options]
    view.fail_step.value = "NoSuchStep"
    view.fail.click()  # a rule for an unknown Step is harmless; the engine never matches it
    assert "NoSuchStep will fail" in view.message.value
    replay = Debugger(dbg.history).view
    replay.step.click()
    assert "RuntimeError: this Debugger replays a History" in replay.message.value


def test_typed_names_are_checked_with_a_suggestion():
    live = Debugger(started_engine(), token_channel=TOKEN)
    with pytest.raises(ValueError, match="did you mean 'SaveContractEdit'"):
        live.add_breakpoint("SaveContractEdt")
    with pytest.raises(ValueError, match="did you mean 'SaveContractEdit'"):
        live.run_to("SaveContractEdt")
    with pytest.raises(ValueError, match="did you mean 'MessageConsumed'"):
        live.jump(kind="MessageConsumd")
    with pytest.raises(ValueError, match="did you mean 'contractEditToken'"):
        Debugger(started_engine(), token_channel="contractEditTokn")
    live.add_breakpoint("SaveContractEdit")  # a Step that has not run yet is still known
    assert live.breakpoints == ("SaveContractEdit",)


def test_the_status_line_is_cleared_when_the_cursor_moves():
    live = Debugger(started_engine())
    live.add_breakpoint("SaveContractEdit")
    assert live.continue_()
    assert live.message.startswith("stopped at breakpoint")
    live.prev()
    assert live.message == ""
