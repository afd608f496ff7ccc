"""Step labels of the explorer's traces and state graph."""

from __future__ import annotations

from types import MappingProxyType

from dexviz.explore.labels import describe
from dexviz.history import Event, EventKind


def _message(kind: EventKind, channel: str) -> Event:
    payload = {"channel": channel, "message_id": "m-1", "publisher": "client"}
    return Event(1, 0, kind, "f", "r", "Files-1", "Files", None, None, MappingProxyType(payload))


def test_a_label_names_a_map_channel_with_its_key_as_given() -> None:
    published = _message(EventKind.MESSAGE_PUBLISHED, "inbox/a%20b%2Fc")
    taken = _message(EventKind.MESSAGE_CONSUMED, "inbox/a%20b%2Fc")
    assert describe([published, taken]) == "client publishes inbox/a b/c; Files-1 takes inbox/a b/c"
