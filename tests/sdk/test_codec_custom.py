"""Codecs, continued: custom codecs, dynamic (Any/object) values, roundtrip copies, edge cases."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Flag
from typing import Annotated, Any, ForwardRef, Generic, Literal

import pytest

from dexviz.sdk.codec import BYTES, DOUBLE, INT64, CodecRegistry, JsonCodec, Value, WireKind
from dexviz.sdk.errors import ValueMappingError
from tests.sdk.codec_samples import (
    MONEY,
    MONEY_TEXT,
    WHEN,
    Color,
    Holder,
    Invoice,
    Item,
    Level,
    Money,
    Order,
    T,
    order,
)

# --------------------------------------------------------------------------- custom codecs


def test_custom_codecs_apply_inside_automatic_json() -> None:
    codecs = CodecRegistry({Money: MONEY})
    invoice = Invoice(Money(5), [Money(1), Money(2)])
    encoded = codecs.encode(Invoice, invoice, operation="e")
    assert json.loads(str(encoded.data)) == {
        "lines": [{"cents": 1}, {"cents": 2}],
        "total": {"cents": 5},
    }
    assert codecs.decode(Invoice, encoded, operation="d") == invoice
    copy = codecs.roundtrip(Invoice, invoice, operation="r")
    assert copy == invoice and copy.total is not invoice.total
    text = CodecRegistry(
        {Money: JsonCodec("Money", lambda d: Money(int(d)), lambda m: str(m.cents))}
    )
    assert text.dump(Invoice, invoice, operation="e") == {"total": "5", "lines": ["1", "2"]}


def test_custom_codec_failures_become_mapping_errors() -> None:
    def broken(value: object) -> object:
        raise KeyError("cents")

    codecs = CodecRegistry({Money: JsonCodec("Money", broken, broken)})
    with pytest.raises(ValueMappingError, match="'cents'"):
        codecs.encode(Money, Money(1), operation="e")
    with pytest.raises(ValueMappingError):
        codecs.roundtrip(Money, Money(1), operation="r")
    with pytest.raises(ValueMappingError, match=r"expected Money at \.total, got Money \(KeyError"):
        codecs.dump(Invoice, Invoice(Money(1), []), operation="e")


def test_custom_primitive_codec_inside_a_container() -> None:
    codecs = CodecRegistry({Money: MONEY_TEXT})
    assert codecs.dump(list[Money], ["a"], operation="e") == ["a"]
    assert codecs.from_json_ready(list[Money], ["a"], operation="d") == ["a"]
    with pytest.raises(
        ValueMappingError, match=r"expected Money \(string data\) at \[0\], got int"
    ):
        codecs.from_json_ready(list[Money], [1], operation="d")


# --------------------------------------------------------------------------- dynamic and roundtrip


def test_any_and_object_encode_by_runtime_type(codecs: CodecRegistry) -> None:
    for hint in (Any, object):
        encoded = codecs.encode(hint, Item("a", 1), operation="e")
        assert encoded == Value(WireKind.JSON, '{"color":"red","count":1,"sku":"a"}')
        assert codecs.decode(hint, encoded, operation="d") == {
            "color": "red",
            "count": 1,
            "sku": "a",
        }
        assert codecs.decode(hint, Value(WireKind.INT64, 3), operation="d") == 3
        assert codecs.roundtrip(hint, [Item("a", 1)], operation="r") == [Item("a", 1)]


def test_roundtrip_returns_immutable_values_themselves(codecs: CodecRegistry) -> None:
    item = Item("a", 1)
    assert codecs.roundtrip(Item, item, operation="r") is item
    for hint, value in (
        (str, "s"),
        (int, 5),
        (float, 1.5),
        (bool, False),
        (bytes, b"x"),
        (Color, Color.RED),
        (datetime, WHEN),
    ):
        assert codecs.roundtrip(hint, value, operation="r") is value
    nested = (1, ("a", Color.BLUE))
    assert codecs.roundtrip(tuple[int, tuple[str, Color]], nested, operation="r") is nested


def test_roundtrip_copies_everything_mutable(codecs: CodecRegistry) -> None:
    value = order()
    copy = codecs.roundtrip(Order, value, operation="r")
    assert copy == value and copy is not value
    assert copy.items is not value.items and copy.tags is not value.tags
    holder = Holder([1, 2])
    held = codecs.roundtrip(Holder, holder, operation="r")
    assert held == holder and held is not holder and held.items is not holder.items
    data = {"a": [1, {"b": 2}]}
    copied = codecs.roundtrip(Any, data, operation="r")
    assert copied == data and copied["a"] is not data["a"] and copied["a"][1] is not data["a"][1]


def test_roundtrip_checks_int64_range_and_finiteness(codecs: CodecRegistry) -> None:
    with pytest.raises(ValueMappingError, match="out of range"):
        codecs.roundtrip(int, 2**63, operation="r")
    with pytest.raises(ValueMappingError, match="finite"):
        codecs.roundtrip(float, float("nan"), operation="r")
    assert codecs.roundtrip(int, 2**63 - 1, operation="r") == 2**63 - 1


def test_unhashable_type_hints_are_resolved_without_the_cache(codecs: CodecRegistry) -> None:
    hint = Annotated[int, {"unhashable": []}]
    assert codecs.resolve(hint) is INT64
    assert codecs.roundtrip(hint, 3, operation="r") == 3


def test_registry_repr_and_codecs_view() -> None:
    codecs = CodecRegistry({Money: MONEY})
    assert repr(codecs) == "CodecRegistry(custom=['Money'])"
    assert dict(codecs.codecs) == {Money: MONEY}


# --------------------------------------------------------------------------- less common paths


class Perm(Flag):
    READ = 1
    WRITE = 2


@dataclass(frozen=True)
class Bag(Generic[T]):
    items: list[T]


def test_flag_combinations_and_generic_containers_of_type_variables(codecs: CodecRegistry) -> None:
    both = Perm.READ | Perm.WRITE
    assert codecs.decode(Perm, codecs.encode(Perm, both, operation="e"), operation="d") is both
    with pytest.raises(ValueMappingError, match="for Perm, got 8"):
        codecs.decode(Perm, Value(WireKind.JSON, "8"), operation="d")
    assert codecs.roundtrip(Bag[int], Bag([1, 2]), operation="r") == Bag([1, 2])
    with pytest.raises(ValueMappingError, match=r"expected int at \.items\[0\], got str"):
        codecs.roundtrip(Bag[int], Bag(["x"]), operation="r")


def test_fixed_tuple_elements_are_checked_with_their_position(codecs: CodecRegistry) -> None:
    with pytest.raises(ValueMappingError, match=r"expected str at \[1\], got int"):
        codecs.encode(tuple[int, str], (1, 2), operation="e")


def test_string_type_hints_are_explained(codecs: CodecRegistry) -> None:
    for hint in ("Order", ForwardRef("Order")):
        with pytest.raises(
            TypeError, match="the type hint 'Order' is still a string; .*get_type_hints"
        ):
            codecs.resolve(hint)


def test_none_and_datetime_codecs_reject_other_values(codecs: CodecRegistry) -> None:
    none = codecs.resolve(type(None))
    with pytest.raises(TypeError, match="expected None, got int"):
        none.encode(1)
    with pytest.raises(TypeError, match="expected JSON null, got wire kind int64"):
        none.decode(Value(WireKind.INT64, 1))
    when = codecs.resolve(datetime)
    with pytest.raises(TypeError, match="expected datetime, got str"):
        when.encode("2024-01-01")
    with pytest.raises(TypeError, match="expected datetime text, got wire kind json"):
        when.decode(Value(WireKind.JSON, '"2024"'))
    with pytest.raises(ValueMappingError, match="Invalid isoformat"):
        codecs.decode(datetime, Value(WireKind.STRING, "yesterday"), operation="d")


def test_custom_bytes_and_double_codecs_embed_in_json() -> None:
    raw = type(BYTES)("Raw", WireKind.BYTES, bytes)
    ratio = type(DOUBLE)("Ratio", WireKind.DOUBLE, float)
    codecs = CodecRegistry({Money: raw, Level: ratio})
    assert codecs.dump(list[Money], [b"\x01"], operation="e") == ["AQ=="]
    assert codecs.from_json_ready(list[Money], ["AQ=="]) == [b"\x01"]
    assert codecs.from_json_ready(list[Level], [2]) == [2.0]
    with pytest.raises(ValueMappingError, match=r"expected Raw \(bytes data\) at \[0\], got str"):
        codecs.from_json_ready(list[Money], ["%%"])


def test_a_custom_codec_may_raise_value_mapping_error_itself() -> None:
    def refuse(value: object) -> object:
        raise ValueMappingError("inner", "refused")

    codecs = CodecRegistry({Money: JsonCodec("Money", refuse, refuse)})
    with pytest.raises(ValueMappingError) as caught:
        codecs.encode(Money, Money(1), operation="outer")
    assert (caught.value.operation, caught.value.detail) == ("inner", "refused")


def test_json_codec_expected_type_with_sequences_and_unknown_hints() -> None:
    codec: JsonCodec[Any] = JsonCodec("s", list, expected_type=Sequence[int])
    assert codec.encode((1, 2)).data == "[1,2]"
    with pytest.raises(TypeError):
        codec.encode("12")
    loose: JsonCodec[Any] = JsonCodec("l", str, expected_type=Literal["a"])
    assert loose.encode("b").data == '"b"'  # hints it cannot check are not checked
