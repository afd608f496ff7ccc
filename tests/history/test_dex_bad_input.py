"""from_dex refuses malformed Dex histories whole, naming the source and the event index."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import dexviz
from dexviz.history import HistoryFormatError
from tests.dex_support import contract_edit_run

Events = list[dict[str, Any]]


def _page_with(change: Callable[[Events], None]) -> dict[str, Any]:
    page = contract_edit_run().page()
    change(page["events"])
    return page


def test_truncated_file_names_file_line_and_event(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    text = json.dumps(contract_edit_run().page(), indent=1)
    path.write_text(text[: len(text) // 2], encoding="utf-8")
    with pytest.raises(HistoryFormatError) as caught:
        dexviz.from_dex(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: not JSON, cut off or broken at line ")
    assert ", in event " in message


def test_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(HistoryFormatError, match=r"bad\.json: not UTF-8 text"):
        dexviz.from_dex(path)


CASES = {
    "wrong field type": (
        lambda ev: ev[1]["payload"]["context"].__setitem__("finalAttempt", "two"),
        "event 1 (StepExecuteCompleted, eventId 4): payload.context.finalAttempt must be an "
        "integer (or its decimal string), not 'two'"),
    "value not base64": (
        lambda ev: ev[1]["payload"]["input"].__setitem__(
            "stepInput", {"objValue": {"encoding": "json", "payload": "!!!"}}),
        "event 1 (StepExecuteCompleted, eventId 4): payload.input.stepInput.objValue.payload "
        "is not base64: '!!!'"),
    "json value not json": (
        lambda ev: ev[1]["payload"]["input"].__setitem__(
            "stepInput", {"objValue": {"encoding": "json", "payload": "e25vcGU="}}),
        "event 1 (StepExecuteCompleted, eventId 4): payload.input.stepInput.objValue has "
        "encoding 'json' but its payload is not JSON text"),
    "payload not its type's": (
        lambda ev: ev[1].__setitem__("payload", [1]),
        "event 1: the payload of a StepExecuteCompleted event must be an object, not list"),
    "repeated field not a list": (
        lambda ev: ev[1]["payload"]["output"].__setitem__("publishToChannel", {"a": 1}),
        "event 1 (StepExecuteCompleted, eventId 4): payload.output.publishToChannel must be "
        "a list, not dict"),
    "value with two cases": (
        lambda ev: ev[1]["payload"]["input"].__setitem__(
            "stepInput", {"stringValue": "a", "intValue": "1"}),
        "event 1 (StepExecuteCompleted, eventId 4): payload.input.stepInput must be a Dex "
        "Value with one case"),
    "events out of order": (
        lambda ev: ev[2].__setitem__("eventId", 2),
        "event 2 (StepWaitForCompleted): eventId 2 does not follow eventId 4 of event 1; "
        "events of a run must be in increasing eventId order"),
    "bad time": (
        lambda ev: ev[2].__setitem__("eventTime", "yesterday"),
        "event 2: eventTime must be an RFC 3339 time such as '2026-01-02T03:04:05.12Z', not "
        "'yesterday'"),
    "missing execution id": (
        lambda ev: ev[5]["payload"]["context"].pop("stepExecutionId"),
        "event 5 (StepWaitForCompleted, eventId 16): payload.context.stepExecutionId is "
        "missing"),
    "type not a string": (
        lambda ev: ev[3].__setitem__("type", 7),
        "event 3: 'type' must be a non-empty string, not 7"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_events_name_the_event(case: str) -> None:
    change, expected = CASES[case]
    with pytest.raises(HistoryFormatError) as caught:
        dexviz.from_dex(_page_with(change))
    assert str(caught.value).startswith(f"<Dex history value>: {expected}")


def test_errors_in_a_list_of_pages_name_the_page(tmp_path: Path) -> None:
    events = contract_edit_run().events
    events[10]["payload"]["context"]["duration"] = 5
    path = tmp_path / "pages.json"
    path.write_text(json.dumps([{"events": events[:6]}, {"events": events[6:]}]))
    with pytest.raises(HistoryFormatError) as caught:
        dexviz.from_dex(path)
    assert str(caught.value).startswith(
        f"{path}: event 10 (page 1) (StepExecuteCompleted, eventId 31): "
        "payload.context.duration must be a duration such as '5.034600s', not 5")


@pytest.mark.parametrize("value", [{"foo": 1}, 42, None])
def test_values_that_are_no_dex_history(value: Any) -> None:
    with pytest.raises(HistoryFormatError, match="not a Dex history: expected a Dex Web page"):
        dexviz.from_dex(value)


def test_a_second_flow_in_the_same_input_is_refused() -> None:
    first, second = contract_edit_run().events, contract_edit_run().events
    second[0]["payload"]["flowExecutionId"] = {"flowId": "other", "runId": "r2"}
    for event in second:
        event["eventId"] += 1000
    with pytest.raises(HistoryFormatError) as caught:
        dexviz.from_dex(first + second)
    assert str(caught.value) == (
        f"<Dex history value>: event {len(first)} (FlowStartedOrContinued) starts a run of "
        "Flow 'other', not 'contract-7'")
