"""JSON-ready forms (history payloads): to_json_ready, from_json_ready, and property tests."""

from __future__ import annotations

import json
from collections import OrderedDict, namedtuple
from dataclasses import dataclass, field, make_dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone
from enum import Enum
from types import GenericAlias
from typing import Any, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dexviz.sdk.codec import CodecRegistry, from_json_ready, to_json_ready
from dexviz.sdk.errors import ValueMappingError

UTC = UTC


class Shape(Enum):
    SQUARE = "square"
    PAIR = (1, 2)


@dataclass(frozen=True)
class Point:
    x: float
    y: float


@dataclass
class Drawing:
    name: str
    shape: Shape
    points: tuple[Point, ...]
    at: datetime
    thumbnail: bytes = b""
    meta: dict[str, Any] = field(default_factory=dict)


class Opaque:
    pass


class Named:
    def __str__(self) -> str:
        return "named-thing"


class Broken:
    def __str__(self) -> str:
        raise RuntimeError("no text")


Pair = namedtuple("Pair", "a b")


def drawing() -> Drawing:
    when = datetime(2024, 2, 3, 4, 5, 6, 789, tzinfo=UTC)
    return Drawing("d", Shape.PAIR, (Point(0.5, 1.0),), when, b"\x01\x02", {"k": [1, None]})


def test_to_json_ready_follows_the_documented_rules() -> None:
    ready = to_json_ready(drawing())
    assert ready == {
        "name": "d",
        "shape": [1, 2],
        "points": [{"x": 0.5, "y": 1.0}],
        "at": "2024-02-03T04:05:06.000789+00:00",
        "thumbnail": "AQI=",
        "meta": {"k": [1, None]},
    }
    assert list(ready) == ["name", "shape", "points", "at", "thumbnail", "meta"]  # field order
    json.dumps(ready, allow_nan=False)


@pytest.mark.parametrize(
    ("value", "ready"),
    [
        (
            {1: "a", None: 1, False: 2, 1.5: 3, Shape.SQUARE: 4},
            {"1": "a", "null": 1, "false": 2, "1.5": 3, "square": 4},
        ),
        ({3, 1, 2}, [1, 2, 3]),
        (frozenset({"b", "a"}), ["a", "b"]),
        (float("nan"), "NaN"),
        ([float("inf"), float("-inf")], ["Infinity", "-Infinity"]),
        (date(2024, 1, 2), "2024-01-02"),
        (time(3, 4), "03:04:00"),
        (datetime(2024, 1, 1), "2024-01-01T00:00:00"),
        (bytearray(b"hi"), "aGk="),
        (OrderedDict(b=1, a=2), {"b": 1, "a": 2}),
        (Pair(1, 2), [1, 2]),
        (timedelta(seconds=5), {"__type__": "datetime.timedelta", "str": "0:00:05"}),
        (Named(), {"__type__": f"{__name__}.Named", "str": "named-thing"}),
        (Opaque(), {"__type__": f"{__name__}.Opaque"}),
        (Broken(), {"__type__": f"{__name__}.Broken"}),
        ({Opaque(): 1}, {f"{__name__}.Opaque": 1}),
    ],
)
def test_to_json_ready_special_cases(value: object, ready: object) -> None:
    assert to_json_ready(value) == ready
    json.dumps(to_json_ready(value), allow_nan=False)


def test_to_json_ready_is_deterministic_and_shares_no_container() -> None:
    value = {"list": [1, [2]], "set": {"x", "y", "z"}}
    first, second = to_json_ready(value), to_json_ready(value)
    assert json.dumps(first) == json.dumps(second)
    assert first["list"] is not value["list"] and first["list"][1] is not value["list"][1]  # type: ignore[index]


def test_from_json_ready_inverts_to_json_ready() -> None:
    value = drawing()
    back = from_json_ready(Drawing, to_json_ready(value))
    assert back == value and back.shape is Shape.PAIR and isinstance(back.points, tuple)
    assert from_json_ready(Optional[Point], None) is None  # noqa: UP045 - the typing spelling is what is tested
    assert from_json_ready(dict[Shape, int], {"square": 1}) == {Shape.SQUARE: 1}
    assert from_json_ready(list[Point], [{"x": 1, "y": 2}]) == [
        Point(1.0, 2.0)
    ]  # Go writes 1.0 as 1


def test_from_json_ready_reports_mismatches() -> None:
    with pytest.raises(ValueMappingError, match=r"expected float at \[0\]\.x, got str"):
        from_json_ready(list[Point], [{"x": "1", "y": 2}])
    with pytest.raises(ValueMappingError, match="expected float, got str") as caught:
        from_json_ready(float, "NaN")
    assert caught.value.operation == "decode"
    with pytest.raises(TypeError, match="register one"):
        from_json_ready(set[int], [1])


def test_registry_dump_and_from_json_ready_are_inverse_for_top_level_scalars() -> None:
    codecs = CodecRegistry()
    assert codecs.dump(bytes, b"hi", operation="e") == "aGk="
    assert codecs.from_json_ready(bytes, "aGk=") == b"hi"
    with pytest.raises(ValueMappingError, match="out of range"):
        codecs.from_json_ready(int, 2**70)
    with pytest.raises(ValueMappingError, match="out of range"):
        codecs.dump(int, 2**70, operation="e")
    assert codecs.dump(int, None, operation="e") is None


# --------------------------------------------------------------------------- property tests

SCALARS: list[tuple[object, st.SearchStrategy[Any]]] = [
    (str, st.text(max_size=8)),
    (int, st.integers(min_value=-(2**63), max_value=2**63 - 1)),
    (float, st.floats(allow_nan=False, allow_infinity=False)),
    (bool, st.booleans()),
    (bytes, st.binary(max_size=8)),
    (Shape, st.sampled_from(Shape)),
    (
        datetime,
        st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))])),
    ),
]
_names = iter(range(10**9))
OPTIONAL: Any = Optional  # the typing spelling, subscripted with generated hints


def _containers(
    children: st.SearchStrategy[tuple[object, Any]],
) -> st.SearchStrategy[tuple[object, Any]]:
    def as_list(child: tuple[object, Any]) -> tuple[object, Any]:
        return GenericAlias(list, (child[0],)), st.lists(child[1], max_size=3)

    def as_tuple(child: tuple[object, Any]) -> tuple[object, Any]:
        hint = GenericAlias(tuple, (child[0], ...))
        return hint, st.lists(child[1], max_size=3).map(tuple)

    def as_dict(child: tuple[object, Any]) -> tuple[object, Any]:
        hint = GenericAlias(dict, (str, child[0]))
        return hint, st.dictionaries(st.text(max_size=4), child[1], max_size=3)

    def as_optional(child: tuple[object, Any]) -> tuple[object, Any]:
        return OPTIONAL[child[0]], st.none() | child[1]

    def as_dataclass(kids: list[tuple[object, Any]]) -> tuple[object, Any]:
        cls = make_dataclass(
            f"Gen{next(_names)}", [(f"f{i}", hint) for i, (hint, _) in enumerate(kids)]
        )
        return cls, st.builds(cls, *[strategy for _, strategy in kids])

    def as_fixed_tuple(kids: list[tuple[object, Any]]) -> tuple[object, Any]:
        hint = GenericAlias(tuple, tuple(hint for hint, _ in kids))
        return hint, st.tuples(*[strategy for _, strategy in kids])

    many = st.lists(children, min_size=1, max_size=3)
    return st.one_of(
        children.map(as_list),
        children.map(as_tuple),
        children.map(as_dict),
        children.map(as_optional),
        many.map(as_dataclass),
        many.map(as_fixed_tuple),
    )


SCHEMAS = st.recursive(st.sampled_from(SCALARS), _containers, max_leaves=6)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_generated_types_roundtrip_through_every_path(data: st.DataObject) -> None:
    hint, strategy = data.draw(SCHEMAS)
    value = data.draw(strategy)
    codecs = CodecRegistry()
    encoded = codecs.encode(hint, value, operation="encode")
    assert codecs.decode(hint, encoded, operation="decode") == value
    assert codecs.roundtrip(hint, value, operation="roundtrip") == value
    assert codecs.from_json_ready(hint, codecs.dump(hint, value, operation="dump")) == value
    assert from_json_ready(hint, to_json_ready(value)) == value
    assert codecs.encode(hint, value, operation="again") == encoded  # deterministic


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_roundtrip_never_shares_a_mutable_part(data: st.DataObject) -> None:
    hint, strategy = data.draw(SCHEMAS)
    value = data.draw(strategy)
    copy = CodecRegistry().roundtrip(hint, value, operation="roundtrip")
    assert not _shared_mutables(value, copy)


def _shared_mutables(left: object, right: object) -> bool:
    if isinstance(left, (list, dict)) or (
        hasattr(left, "__dataclass_fields__") and not _frozen(left)
    ):
        if left is right:
            return True
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return any(map(_shared_mutables, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return any(_shared_mutables(left[key], right[key]) for key in left)
    if hasattr(left, "__dataclass_fields__"):
        return any(
            _shared_mutables(getattr(left, name), getattr(right, name))
            for name in left.__dataclass_fields__
        )
    return False


def _frozen(value: object) -> bool:
    return bool(value.__dataclass_params__.frozen)  # type: ignore[attr-defined]


class Tag(str):
    def __str__(self) -> str:
        return "custom"


class Count(int):
    pass


class Ratio(float):
    pass


def test_subclasses_of_json_types_become_the_plain_types() -> None:
    ready = to_json_ready([Tag("t"), Count(3), Ratio(0.5), Ratio("inf"), True])
    assert ready == ["t", 3, 0.5, "Infinity", True]
    assert [type(item) for item in ready] == [str, int, float, str, bool]
