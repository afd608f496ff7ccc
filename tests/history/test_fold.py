"""The history fold's dispatch (one handler per EventKind), its payload readers, and each handler
of the shared execution-phase fold."""

from __future__ import annotations

from typing import Any

import pytest

from dexviz.history import Event, EventKind
from dexviz.history.fold import (
    HANDLER_NAMES,
    HistoryFold,
    integer,
    items,
    mapping,
    split_runs,
    text,
)
from dexviz.history.phases import ExecutionPhase, PhaseFold

K = EventKind


def event(kind: EventKind | str, execution_id: str | None = "A-1", method: str | None = None,
          **payload: Any) -> Event:
    """One event of run ``r`` of Flow ``f`` (seq and time do not matter to the folds here)."""
    return Event(1, 0, kind, "f", "r", execution_id, "A", method, 1 if method else None, payload)


class Seen(HistoryFold):
    """Records the kinds it was given through two handlers."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_attempt_started(self, event: Event) -> None:
        """Remember the event's kind."""
        self.seen.append(str(event.kind))

    def on_flow_closed(self, event: Event) -> None:
        """Remember the event's kind."""
        self.seen.append(str(event.kind))


class SeenMore(Seen):
    """Inherits Seen's handlers and adds one."""

    def on_recovered(self, event: Event) -> None:
        """Remember the event's kind."""
        self.seen.append("recovered!")


def test_every_event_kind_has_a_no_op_handler_on_the_base() -> None:
    assert sorted(HANDLER_NAMES) == sorted(str(k) for k in EventKind)
    base = HistoryFold()
    for kind, name in HANDLER_NAMES.items():
        assert getattr(base, name)(event(kind)) is None, name
    assert HANDLER_NAMES[str(K.STEP_EXECUTION_CREATED)] == "on_step_execution_created"


def test_a_subclass_table_holds_only_its_handlers_in_event_kind_order() -> None:
    assert HistoryFold.handled_kinds() == ()
    assert Seen.handled_kinds() == (str(K.FLOW_CLOSED), str(K.ATTEMPT_STARTED))
    assert SeenMore.handled_kinds() == (
        str(K.FLOW_CLOSED), str(K.ATTEMPT_STARTED), str(K.RECOVERED),
    )


def test_apply_dispatches_by_kind_and_ignores_kinds_without_a_handler() -> None:
    fold = SeenMore()
    fold.apply_all([
        event(K.ATTEMPT_STARTED),
        event("AttemptStarted"),  # a kind read from a file as its plain name
        event(K.STEP_EXECUTION_CREATED),
        event("SomethingNewerDexRecords"),
        event(K.RECOVERED),
        event(K.FLOW_CLOSED, None),
    ])
    assert fold.seen == ["AttemptStarted", "AttemptStarted", "recovered!", "FlowClosed"]


def test_payload_readers_treat_a_member_of_the_wrong_type_as_absent() -> None:
    payload = {"s": "x", "n": 3, "b": True, "m": {"k": 1}, "l": [1], "none": None}
    assert (text(payload, "s"), text(payload, "n"), text(payload, "gone")) == ("x", None, None)
    assert (integer(payload, "n"), integer(payload, "b"), integer(payload, "s")) == (3, None, None)
    assert (mapping(payload, "m"), mapping(payload, "l")) == ({"k": 1}, {})
    assert (items(payload, "l"), items(payload, "m"), items(payload, "none")) == ([1], [], [])


def test_split_runs_cuts_a_history_where_the_run_changes() -> None:
    first, second, third = (event(K.ATTEMPT_STARTED)._replace(run_id=r) for r in "aab")
    assert split_runs([first, second, third]) == [[first, second], [third]]
    assert split_runs([]) == []


# -- the shared execution-phase fold ------------------------------------------------------------


class Phases(PhaseFold[ExecutionPhase]):
    """The phase fold with plain records."""

    def new_execution(self, event: Event) -> ExecutionPhase:
        """A plain record."""
        return ExecutionPhase(event.execution_id or "", event.step_type or "", None, "")


WAIT = {"kind": "ALL_OF", "conditions": [], "combinations": []}
CREATED = event(K.STEP_EXECUTION_CREATED)


@pytest.mark.parametrize(
    ("events", "phase", "reserved", "wait_for_failed"),
    [
        ([CREATED], "queued", [], False),
        ([CREATED, event(K.ATTEMPT_STARTED, method="wait_for")], "wait_for", [], False),
        ([CREATED, event(K.ATTEMPT_STARTED, method="execute")], "execute", [], False),
        ([CREATED, event(K.STEP_WAIT_FOR_COMPLETED, wait=WAIT)], "waiting", [], False),
        ([CREATED, event(K.WAIT_SATISFIED)], "satisfied", [], False),
        ([CREATED, event(K.MESSAGE_CONSUMED, message_id="m1"),
          event(K.MESSAGE_CONSUMED, message_id="m2")], "queued", ["m1", "m2"], False),
        ([CREATED, event(K.MESSAGE_CONSUMED, message_id="m1"),
          event(K.MESSAGE_CONSUMED, message_id="m2"),
          event(K.MESSAGE_RETURNED, message_id="m1")], "queued", ["m2"], False),
        ([CREATED, event(K.STEP_WAIT_FOR_FAILED, policy="PROCEED")], "satisfied", [], True),
        ([CREATED, event(K.STEP_WAIT_FOR_FAILED, policy="FAIL_FLOW")], "done", [], False),
        ([CREATED, event(K.MESSAGE_CONSUMED, message_id="m1"),
          event(K.STEP_EXECUTE_COMPLETED)], "done", [], False),
        ([CREATED, event(K.MESSAGE_CONSUMED, message_id="m1"),
          event(K.STEP_EXECUTE_FAILED)], "done", ["m1"], False),
        ([CREATED, event(K.MESSAGE_CONSUMED, message_id="m1"),
          event(K.EXECUTION_CANCELED)], "canceled", [], False),
        ([event(K.STEP_EXECUTION_CREATED, resumed_phase="waiting", wait=WAIT)],
         "waiting", [], False),
    ],
)
def test_each_phase_handler(
    events: list[Event], phase: str, reserved: list[str], wait_for_failed: bool
) -> None:
    fold = Phases()
    fold.apply_all(events)
    ex = fold.executions["A-1"]
    assert (ex.phase, ex.reserved, ex.wait_for_failed) == (phase, reserved, wait_for_failed)
    assert ex.active is (phase not in ("done", "canceled"))


def test_a_waiting_execution_keeps_the_wait_it_registered() -> None:
    fold = Phases()
    fold.apply_all([CREATED, event(K.STEP_WAIT_FOR_COMPLETED, wait=WAIT)])
    assert fold.executions["A-1"].wait == WAIT


def test_events_of_an_execution_never_created_change_nothing() -> None:
    fold = Phases()
    fold.apply_all([
        event(K.ATTEMPT_STARTED, "B-1", method="execute"),
        event(K.MESSAGE_CONSUMED, "B-1", message_id="m1"),
        event(K.EXECUTION_CANCELED, "B-1"),
        event(K.STEP_EXECUTION_CREATED, None),
    ])
    assert fold.executions == {}


def test_the_base_phase_fold_says_its_subclass_must_make_records() -> None:
    with pytest.raises(NotImplementedError):
        PhaseFold[ExecutionPhase]().apply(CREATED)
