"""The protobuf codec: Dex Web JSON round-trips through bytes; unknown payload cases are kept."""

from __future__ import annotations

import pytest

import dexviz
from dexviz.server.schema import HISTORY_PAYLOADS
from dexviz.server.wire import WireError, decode, encode, history_event, put_varint
from tests.dex_support import continue_as_new_chain, contract_edit_run

_KEY = {type_name: key for key, type_name in HISTORY_PAYLOADS.values()}


def _message(event: dict[str, object]) -> dict[str, object]:
    return {"eventId": str(event["eventId"]), "eventTime": event["eventTime"],
            _KEY[str(event["type"])]: event["payload"]}


@pytest.mark.parametrize("events", [
    contract_edit_run(extra_token=True).events,
    [e for page in continue_as_new_chain() for e in page["events"]],
])
def test_every_event_round_trips(events: list[dict[str, object]]) -> None:
    """Through bytes and back, the events load into the same History (times and durations are
    spelled with 0, 3, 6 or 9 fractional digits, as protojson writes them)."""
    again = [history_event(encode(_message(event), "FlowHistoryEvent")) for event in events]
    assert [e["type"] for e in again] == [e["type"] for e in events]
    assert dexviz.from_dex(again).events == dexviz.from_dex(events).events


def test_an_unknown_payload_case_is_an_unknown_type() -> None:
    known = encode({"eventId": "7", "eventTime": "2026-03-02T09:00:01Z"}, "FlowHistoryEvent")
    body = encode({"channelName": "x"}, "ChannelMessage")
    data = known + put_varint(40 << 3 | 2) + put_varint(len(body)) + body
    assert history_event(data) == {"eventId": 7, "eventTime": "2026-03-02T09:00:01Z",
                                   "type": "Unknown(field 40)", "payload": None}


def test_times_durations_and_negative_numbers() -> None:
    context = {"startedTime": "2026-03-02T09:00:00.123456789Z", "duration": "0.5s",
               "finalAttempt": 3}
    assert decode(encode(context, "StepMethodEventContext"), "StepMethodEventContext") == {
        "startedTime": "2026-03-02T09:00:00.123456789Z", "duration": "0.500s",
        "finalAttempt": 3}
    assert decode(encode({"intValue": "-5"}, "Value"), "Value") == {"intValue": "-5"}
    assert decode(encode({"atLeast": 0}, "ChannelCondition"), "ChannelCondition") == {
        "atLeast": 0}


def test_truncated_bytes_are_refused() -> None:
    data = encode({"channelName": "contractEditToken"}, "ChannelMessage")
    with pytest.raises(WireError, match="truncated field 1"):
        decode(data[:-3], "ChannelMessage")
