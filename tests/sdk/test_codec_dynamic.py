"""Codecs for ``Any``/``object`` (§2.15): values whose runtime type has no codec, and cycles.

A value declared ``Any`` is encoded by its runtime type. When that type has no codec (an
``object()``, a set, a plain class), every operation names the type, where it sits inside the
value and the operation; it never ends in "maximum recursion depth exceeded".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from dexviz.sdk.codec import CodecRegistry, JsonCodec
from dexviz.sdk.errors import ValueMappingError
from tests.sdk.codec_samples import WHEN, Box, Color, Item, Money

OPERATIONS = ("roundtrip", "encode", "dump")
_ADVICE = (
    "(declared Any or object); register a codec for that type in CodecRegistry(codecs={...}) "
    "or declare a supported type"
)


class Plain:
    """A class with no codec."""


@dataclass
class AnyField:
    payload: Any


@dataclass
class ObjectField:
    payload: object


@dataclass
class Link:
    label: str
    next: Link | None = None


def _call(operation: str, hint: object, value: object) -> object:
    method = getattr(CodecRegistry(), operation)
    return method(hint, value, operation=f"{operation} to Channel 'c'")


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize(
    ("hint", "value", "where"),
    [
        (Any, object(), "object"),
        (object, object(), "object"),
        (Any, Plain(), "Plain"),
        (Any, [1, object()], "object at [1]"),
        (Any, (1, "a", object()), "object at [2]"),
        (Any, {"a": {"b": object()}}, "object at ['a']['b']"),
        (list[Any], [object()], "object at [0]"),
        (dict[str, object], {"k": Plain()}, "Plain at ['k']"),
        (AnyField, AnyField(object()), "object at .payload"),
        (ObjectField, ObjectField([object()]), "object at .payload[0]"),
        (Any, AnyField(object()), "object at .payload"),
        (Box[Any], Box({"x": object()}), "object at .content['x']"),
    ],
)
def test_a_value_of_a_type_without_codec_names_the_type_the_place_and_the_operation(
    operation: str, hint: object, value: object, where: str
) -> None:
    with pytest.raises(ValueMappingError) as caught:
        _call(operation, hint, value)
    assert caught.value.operation == f"{operation} to Channel 'c'"
    assert caught.value.detail == f"no codec for a value of type {where} {_ADVICE}"
    assert str(caught.value).startswith(f"{operation} to Channel 'c' failed: no codec for")
    assert "recursion" not in str(caught.value)


def test_a_registered_codec_makes_the_same_type_encodable_under_any() -> None:
    plain = JsonCodec("Plain", lambda data: Plain(), lambda value: {"plain": True}, Plain)
    codecs = CodecRegistry({Plain: plain})
    value = Plain()
    assert codecs.dump(Any, [value], operation="dump") == [{"plain": True}]
    assert isinstance(codecs.roundtrip(Any, value, operation="copy"), Plain)
    with pytest.raises(ValueMappingError, match="no codec for a value of type object at \\[1\\]"):
        codecs.roundtrip(Any, [value, object()], operation="copy")


def _self_list() -> list[object]:
    looped: list[object] = [1]
    looped.append(looped)
    return looped


def _self_dict() -> dict[str, object]:
    looped: dict[str, object] = {}
    looped["self"] = looped
    return looped


def _self_link() -> Link:
    link = Link("a")
    link.next = link
    return link


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize(
    ("hint", "value", "name"),
    [
        (Any, _self_list(), "Any"),
        (list[Any], _self_list(), "list[Any]"),
        (dict[str, Any], _self_dict(), "dict[str, Any]"),
        (Link, _self_link(), "Link"),
        (Any, _self_link(), "Any"),
    ],
)
def test_a_value_that_contains_itself_is_named_as_a_cycle(
    operation: str, hint: object, value: object, name: str
) -> None:
    with pytest.raises(ValueMappingError) as caught:
        _call(operation, hint, value)
    assert caught.value.detail == (
        f"the value for {name} is nested too deeply or contains itself (a cycle); "
        "only finite, acyclic values can be encoded"
    )


@dataclass
class HoldsMoney:
    money: Money


@dataclass
class HoldsSet:
    tags: set[str]


@pytest.mark.parametrize(
    ("hint", "message"),
    [
        (HoldsMoney, "field 'money' of HoldsMoney: no codec for Money; register one"),
        (HoldsSet, "field 'tags' of HoldsSet: no codec for set[str]; register one"),
    ],
)
def test_a_dataclass_field_of_an_unsupported_type_names_the_field_for_every_operation(
    hint: object, message: str
) -> None:
    for operation in OPERATIONS:
        with pytest.raises(TypeError, match=message.replace("[", "\\[").replace("]", "\\]")):
            _call(operation, hint, object())


@pytest.mark.parametrize(
    "value",
    [
        1,
        "text",
        True,
        1.5,
        b"\x00",
        WHEN,
        Color.BLUE,
        Item("a", 1),
        [1, "a", None, [2.5]],
        (1, (2, "b")),
        {"a": [1, {"b": None}]},
        AnyField({"nested": [Item("b", 2)]}),
    ],
    ids=repr,
)
def test_supported_values_under_any_still_roundtrip_unchanged(value: object) -> None:
    codecs = CodecRegistry()
    copied = codecs.roundtrip(Any, value, operation="copy")
    assert copied == value and type(copied) is type(value)
    assert codecs.roundtrip(object, value, operation="copy") == value
