"""Codecs (§2.15): built-ins, JsonCodec, CodecRegistry resolution, encode/decode/roundtrip."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import (
    Annotated,
    Any,
    NewType,
    Optional,
    Union,
)

import pytest

from dexviz.sdk.codec import (
    BOOL,
    BYTES,
    DOUBLE,
    INT64,
    STRING,
    CodecRegistry,
    JsonCodec,
    Value,
    WireKind,
)
from dexviz.sdk.errors import ValueMappingError
from tests.sdk.codec_samples import (
    MONEY,
    MONEY_TEXT,
    WHEN,
    Blob,
    Box,
    Color,
    Holder,
    Item,
    Level,
    Money,
    Order,
    Tree,
    Unsupported,
    order,
)

NULL = Value(WireKind.JSON, "null")
OrderId = NewType("OrderId", str)


# --------------------------------------------------------------------------- built-in codecs


@pytest.mark.parametrize(
    ("codec", "value", "kind"),
    [
        (STRING, "hi", WireKind.STRING),
        (BOOL, True, WireKind.BOOL),
        (INT64, -(2**63), WireKind.INT64),
        (DOUBLE, 1.5, WireKind.DOUBLE),
        (BYTES, b"\x00\xff", WireKind.BYTES),
    ],
)
def test_builtin_codecs_roundtrip(codec: Any, value: object, kind: WireKind) -> None:
    encoded = codec.encode(value)
    assert encoded == Value(kind, value) and codec.wire_kind is kind  # type: ignore[arg-type]
    assert codec.decode(encoded) == value


@pytest.mark.parametrize(
    ("codec", "value", "message"),
    [
        (DOUBLE, 1, "expected float, got int"),
        (INT64, True, "expected int, got bool"),
        (STRING, b"x", "expected str, got bytes"),
        (BYTES, bytearray(b"x"), "expected bytes, got bytearray"),
        (INT64, 2**63, "out of range"),
        (DOUBLE, float("nan"), "expected a finite float, got nan"),
        (DOUBLE, float("-inf"), "expected a finite float, got -inf"),
        (BOOL, 1, "expected bool, got int"),
    ],
)
def test_builtin_codecs_check_exact_types(codec: Any, value: object, message: str) -> None:
    with pytest.raises((TypeError, ValueError, OverflowError), match=re.escape(message)):
        codec.encode(value)


def test_builtin_codecs_reject_other_wire_kinds_and_payloads() -> None:
    with pytest.raises(TypeError, match="expected int, got wire kind string"):
        INT64.decode(Value(WireKind.STRING, "1"))
    with pytest.raises(TypeError, match="expected int payload, got bool"):
        INT64.decode(Value(WireKind.INT64, True))
    with pytest.raises(OverflowError):
        INT64.decode(Value(WireKind.INT64, 2**64))


def test_json_codec_writes_canonical_json_and_checks_the_expected_type() -> None:
    encoded = MONEY.encode(Money(250))
    assert encoded == Value(WireKind.JSON, '{"cents":250}')
    assert MONEY.decode(encoded) == Money(250)
    plain: JsonCodec[Any] = JsonCodec("Point", lambda data: data)
    assert plain.encode({"b": [1, 2], "a": None}).data == '{"a":null,"b":[1,2]}'
    with pytest.raises(ValueError):
        plain.encode({"x": float("nan")})
    with pytest.raises(TypeError, match="expected Money, got int"):
        MONEY.encode(250)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected Money as JSON, got wire kind string"):
        MONEY.decode(Value(WireKind.STRING, "{}"))
    assert "0x" not in repr(plain) and plain.wire_kind is WireKind.JSON


def test_json_codec_expected_type_understands_containers_and_unions() -> None:
    codec: JsonCodec[Any] = JsonCodec("x", lambda d: d, expected_type=dict[str, list[int | None]])
    codec.encode({"a": [1, None]})
    with pytest.raises(TypeError):
        codec.encode({"a": [1, "2"]})
    pairs: JsonCodec[Any] = JsonCodec("p", tuple, list, expected_type=tuple[int, ...])
    assert pairs.decode(pairs.encode((1, 2))) == (1, 2)
    with pytest.raises(TypeError):
        pairs.encode([1, 2])


# --------------------------------------------------------------------------- resolution


def test_resolve_returns_builtins_custom_codecs_first_and_caches(codecs: CodecRegistry) -> None:
    assert codecs.resolve(str) is STRING and codecs.resolve(int) is INT64
    assert codecs.resolve(Optional[int]) is INT64 and codecs.resolve(float | None) is DOUBLE  # noqa: UP045 - the typing spelling is what is tested
    assert codecs.resolve(list[Item]) is codecs.resolve(list[Item])
    custom = CodecRegistry({int: MONEY_TEXT, Money: MONEY})
    assert custom.resolve(int) is MONEY_TEXT and custom.resolve(Money) is MONEY
    assert custom.resolve(Money | None) is MONEY
    assert codecs.resolve(Annotated[int, "meta"]) is INT64 and codecs.resolve(OrderId) is STRING


def test_resolve_is_thread_safe_for_recursive_types() -> None:
    codecs = CodecRegistry()
    results: list[object] = []
    threads = [
        threading.Thread(target=lambda: results.append(codecs.resolve(Tree))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 8 and all(result is results[0] for result in results)


@pytest.mark.parametrize(
    ("hint", "message"),
    [
        (set[int], "no codec for set[int]; register one in CodecRegistry"),
        (Union[int, str], "no codec for the union int | str"),  # noqa: UP007 - the typing spelling is what is tested
        (dict[tuple[int, int], str], "dict keys must be str, int or an Enum"),
        (Unsupported, "field 'values' of Unsupported: no codec for set[int]"),
        (Money, "no codec for Money; register one in CodecRegistry"),
    ],
)
def test_resolve_rejects_what_it_cannot_encode(
    codecs: CodecRegistry, hint: object, message: str
) -> None:
    with pytest.raises(TypeError, match=re.escape(message)):
        codecs.resolve(hint)
    with pytest.raises(TypeError, match="register one|dict keys"):
        codecs.encode(hint, object(), operation="publish")


def test_resolve_explains_unresolvable_annotations(codecs: CodecRegistry) -> None:
    @dataclass
    class Local:
        inner: LocalInner  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(TypeError, match="cannot read the field types of .*Local .*module level"):
        codecs.resolve(Local)


# --------------------------------------------------------------------------- automatic JSON


def test_dataclasses_roundtrip_through_json(codecs: CodecRegistry) -> None:
    value = order()
    encoded = codecs.encode(Order, value, operation="encode")
    assert encoded.kind is WireKind.JSON
    data = json.loads(str(encoded.data))
    assert list(data) == sorted(data)  # canonical: sorted keys
    assert data["items"][1] == {"color": "blue", "count": 1, "sku": "b"}
    assert data["placed_at"] == "2024-05-01T12:30:00+00:00"
    decoded = codecs.decode(Order, encoded, operation="decode")
    assert decoded == value and decoded is not value
    assert decoded.items[1].color is Color.BLUE and isinstance(decoded.pair, tuple)


def test_enums_decode_to_the_same_member(codecs: CodecRegistry) -> None:
    for member in Color:
        assert (
            codecs.decode(Color, codecs.encode(Color, member, operation="e"), operation="d")
            is member
        )
    assert codecs.encode(Level, Level.HIGH, operation="e") == Value(WireKind.JSON, "2")
    with pytest.raises(
        ValueMappingError, match=r"expected one of \['red', 'blue'\] for Color, got 'green'"
    ):
        codecs.decode(Color, Value(WireKind.JSON, '"green"'), operation="d")
    with pytest.raises(ValueMappingError, match="for Level, got True"):
        codecs.decode(Level, Value(WireKind.JSON, "true"), operation="d")


@pytest.mark.parametrize(
    ("hint", "value"),
    [
        (tuple[int, ...], (1, 2, 3)),
        (tuple[int, str, Color], (1, "a", Color.RED)),
        (tuple[()], ()),
        (list[tuple[str, int]], [("a", 1)]),
        (dict[int, list[Item]], {3: [Item("a", 1)]}),
        (dict[Color, int], {Color.BLUE: 2}),
        (Mapping[str, datetime], {"at": WHEN}),
        (Sequence[int], (1, 2)),
        (Tree, Tree("root", [Tree("leaf")])),
        (Box[Item], Box(Item("a", 1))),
        (Box, Box({"any": [1]})),
        (Blob, Blob(b"\x00\x01", Level.LOW)),
        (list, [1, "two", None]),
        (dict, {"a": [1]}),
        (tuple, (1, "x")),
        (datetime, datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=-5)))),
        (type(None), None),
        (Optional[Item], Item("a", 1)),  # noqa: UP045 - the typing spelling is what is tested
        (OrderId, OrderId("o-7")),
    ],
)
def test_supported_types_roundtrip(codecs: CodecRegistry, hint: object, value: object) -> None:
    encoded = codecs.encode(hint, value, operation="encode")
    decoded = codecs.decode(hint, encoded, operation="decode")
    assert decoded == value and type(decoded) is type(value)
    assert codecs.roundtrip(hint, value, operation="copy") == value


def test_a_one_argument_tuple_means_any_length_as_in_dex(codecs: CodecRegistry) -> None:
    assert codecs.roundtrip(tuple[int], (1, 2, 3), operation="r") == (1, 2, 3)
    with pytest.raises(ValueMappingError, match=r"expected int at \[1\], got str"):
        codecs.roundtrip(tuple[int], (1, "2"), operation="r")


def test_sequence_hint_decodes_as_a_tuple(codecs: CodecRegistry) -> None:
    encoded = codecs.encode(Sequence[int], [1, 2], operation="e")
    assert codecs.decode(Sequence[int], encoded, operation="d") == (1, 2)


def test_none_is_accepted_for_any_type_and_null_decodes_to_none() -> None:
    codecs = CodecRegistry({Money: MONEY})
    for hint in (int, str, Order, list[Item], Money, Color, Any, datetime, bytes):
        assert codecs.encode(hint, None, operation="e") == NULL
        assert codecs.decode(hint, NULL, operation="d") is None
        assert codecs.roundtrip(hint, None, operation="r") is None
    assert codecs.roundtrip(Order, Order("o", [], WHEN, note=None), operation="r").note is None


def test_naive_datetimes_are_rejected(codecs: CodecRegistry) -> None:
    naive = datetime(2024, 1, 1)
    with pytest.raises(ValueMappingError, match="expected a timezone-aware datetime"):
        codecs.encode(datetime, naive, operation="publish")
    with pytest.raises(
        ValueMappingError, match=r"timezone-aware datetime at \.placed_at, got a naive"
    ):
        codecs.roundtrip(Order, Order("o", [], naive), operation="publish")
    with pytest.raises(ValueMappingError, match="timezone-aware"):
        codecs.decode(datetime, Value(WireKind.STRING, "2024-01-01T00:00:00"), operation="d")


@pytest.mark.parametrize(
    ("hint", "value", "detail"),
    [
        (int, "7", "expected int, got str"),
        (float, 1, "expected float, got int"),
        (Item, {"sku": "a"}, "expected Item, got dict"),
        (Order, Order("o", [Item("a", "2")], WHEN), "expected int at .items[0].count, got str"),  # type: ignore[arg-type]
        (list[int], (1, 2), "expected list[int], got tuple"),
        (tuple[int, ...], [1], "expected tuple[int, ...], got list"),
        (tuple[int, str], (1,), "expected tuple[int, str], got 1 element"),
        (dict[str, int], {"a": 1, "b": "x"}, "expected int at ['b'], got str"),
        (dict[int, int], {"1": 1}, "expected an int dict key at ['1'], got str"),
        (Color, "red", "expected Color, got str"),
        (bytes, "x", "expected bytes, got str"),
        (Holder, Holder([1, True]), "expected int at .items[1], got bool"),
        (
            Any,
            {1, 2},
            "no codec for a value of type set (declared Any or object); register a codec for "
            "that type in CodecRegistry(codecs={...}) or declare a supported type",
        ),
        (Any, {(1, 2): 3}, "expected a str, int or Enum dict key at [(1, 2)], got tuple"),
        (Any, [float("inf")], "expected a finite float at [0], got inf"),
    ],
)
def test_mismatches_name_expected_and_offending_types(
    codecs: CodecRegistry, hint: object, value: object, detail: str
) -> None:
    for call in (codecs.encode, codecs.roundtrip, codecs.dump):
        with pytest.raises(ValueMappingError) as caught:
            call(hint, value, operation="publish to Channel 'c'")
        assert caught.value.detail == detail
        assert caught.value.operation == "publish to Channel 'c'"
        assert str(caught.value) == f"publish to Channel 'c' failed: {detail}"


@pytest.mark.parametrize(
    ("hint", "payload", "detail"),
    [
        (Item, '{"sku":"a"}', "expected field 'count' of Item, got a JSON object without it"),
        (Item, "[1]", "expected Item as a JSON object, got list"),
        (
            Item,
            '{"sku":"a","count":1,"color":"pink"}',
            "expected one of ['red', 'blue'] for Color at .color, got 'pink'",
        ),
        (list[int], '{"a":1}', "expected list[int] as a JSON array, got dict"),
        (
            Blob,
            '{"data":"%%%","level":1}',
            "expected bytes as base64 text at .data, got text that is not base64",
        ),
        (
            Order,
            '{"order_id":"o","items":[],"placed_at":"yesterday"}',
            "expected datetime as ISO 8601 text at .placed_at, got 'yesterday'",
        ),
        (dict[int, str], '{"x":"y"}', "expected an int dict key (decimal text) at ['x'], got 'x'"),
        (tuple[int, int], "[1,2,3]", "expected tuple[int, int] as a JSON array, got 3 elements"),
        (
            Tree,
            '{"label":"a","children":[{"label":1}]}',
            "expected str at .children[0].label, got int",
        ),
    ],
)
def test_decode_errors_say_what_is_wrong_and_where(
    codecs: CodecRegistry, hint: object, payload: str, detail: str
) -> None:
    with pytest.raises(ValueMappingError) as caught:
        codecs.decode(hint, Value(WireKind.JSON, payload), operation="decode")
    assert caught.value.detail == detail


def test_decode_rejects_malformed_json_and_wrong_wire_kinds(codecs: CodecRegistry) -> None:
    with pytest.raises(ValueMappingError, match="decode failed: Expecting property name"):
        codecs.decode(Item, Value(WireKind.JSON, "{nope"), operation="decode")
    with pytest.raises(ValueMappingError, match="got wire kind json"):
        codecs.decode(int, Value(WireKind.JSON, "1"), operation="decode")


def test_dataclass_loading_ignores_unknown_keys_and_uses_defaults(codecs: CodecRegistry) -> None:
    payload = Value(WireKind.JSON, '{"sku":"a","count":1,"retired":true}')
    assert codecs.decode(Item, payload, operation="d") == Item("a", 1, Color.RED)


def test_dataclass_constructor_errors_become_mapping_errors(codecs: CodecRegistry) -> None:
    @dataclass
    class Positive:
        amount: int

        def __post_init__(self) -> None:
            if self.amount <= 0:
                raise ValueError("amount must be positive")

    with pytest.raises(ValueMappingError, match="got ValueError: amount must be positive"):
        codecs.decode(Positive, Value(WireKind.JSON, '{"amount":-1}'), operation="d")
