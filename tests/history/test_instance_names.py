"""shown_name / condition_label: a map instance's key as given, decoded from its physical name."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dexviz.history.instance_names import condition_label, shown_name
from dexviz.sdk import AttributeMap, ChannelMap
from dexviz.sdk.channel import physical_name


def test_an_escaped_key_is_shown_as_given() -> None:
    assert shown_name("data-map/special%20%2F%20key") == "data-map/special / key"
    assert shown_name("inbox/a%20b%2Fc") == "inbox/a b/c"


def test_singletons_and_plain_keys_are_shown_unchanged() -> None:
    for name in ("contractEditToken", "orders/order-42", "m/a.b_c~d", ""):
        assert shown_name(name) == name


def test_only_the_first_slash_ends_the_map_name() -> None:
    # A physical name has one '/', the key's own are escaped; an unescaped later one stays.
    assert shown_name("m/a%2Fb/c") == "m/a/b/c"


@given(st.text(min_size=1))
def test_every_key_round_trips_through_its_physical_name(key: str) -> None:
    assert shown_name(AttributeMap("notes", str).physical_name(key)) == f"notes/{key}"
    assert shown_name(ChannelMap("inbox", str).physical_name(key)) == f"inbox/{key}"


def test_a_condition_label_names_its_channel_as_shown() -> None:
    physical = physical_name("inbox", "a b/c")
    condition = {"kind": "channel", "channel": physical, "label": f"{physical}.for 1..3"}
    assert condition_label(condition) == "inbox/a b/c.for 1..3"


def test_a_condition_without_a_label_or_channel_is_named_by_its_kind() -> None:
    assert condition_label({"kind": "timer"}) == "timer"
    assert condition_label({"kind": "subflow", "label": "child"}) == "child"
    assert condition_label({"channel": "x%20y", "label": "x%20y.for 1"}) == "x%20y.for 1"
