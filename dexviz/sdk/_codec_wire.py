"""The concrete codecs: Dex's built-in STRING/BOOL/INT64/DOUBLE/BYTES, None, datetime, JsonCodec."""

from __future__ import annotations

import json
import math
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Union, get_args, get_origin

from dexviz.sdk._codec_base import NULL, Value, ValueT, WireKind, canonical_json, type_label

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def check_int64(value: int) -> None:
    """Raise OverflowError unless ``value`` fits a signed 64-bit integer."""
    if value < _INT64_MIN or value > _INT64_MAX:
        raise OverflowError(f"expected an int64, got {value}, which is out of range")


def check_finite(value: float) -> None:
    """Raise ValueError for NaN and infinities, which Dex cannot carry."""
    if not math.isfinite(value):
        raise ValueError(f"expected a finite float, got {value!r}")


def require_aware(value: datetime) -> datetime:
    """Return ``value`` if it carries a UTC offset; raise ValueError for a naive datetime."""
    if value.utcoffset() is None:
        raise ValueError(
            f"expected a timezone-aware datetime, got naive {value.isoformat()}; "
            "attach a tzinfo such as datetime.timezone.utc"
        )
    return value


@dataclass(frozen=True, slots=True)
class PrimitiveCodec(Generic[ValueT]):
    """A codec for one exact primitive type (subclasses such as bool-for-int are rejected).

    Attributes:
        type_name: The Python type's name.
        wire_kind: The wire kind it produces.
        expected_type: The exact Python type accepted.
        validator: An optional extra check (int64 range, finiteness).
    """

    type_name: str
    wire_kind: WireKind
    expected_type: type
    validator: Callable[[Any], None] | None = field(default=None, repr=False)

    def check(self, value: object) -> None:
        """Raise TypeError unless ``value`` is exactly the type, ValueError if out of range."""
        if type(value) is not self.expected_type:
            raise TypeError(f"expected {self.type_name}, got {type_label(value)}")
        if self.validator is not None:
            self.validator(value)

    def encode(self, value: ValueT) -> Value:
        """Encode ``value``; raise TypeError for another type, ValueError if out of range."""
        self.check(value)
        return Value(self.wire_kind, value)  # type: ignore[arg-type]

    def decode(self, value: Value) -> ValueT:
        """Decode ``value``; raise TypeError for another wire kind or payload type."""
        if value.kind is not self.wire_kind:
            raise TypeError(f"expected {self.type_name}, got wire kind {value.kind.value}")
        if type(value.data) is not self.expected_type:
            raise TypeError(f"expected {self.type_name} payload, got {type_label(value.data)}")
        if self.validator is not None:
            self.validator(value.data)
        data: ValueT = value.data  # type: ignore[assignment]
        return data


STRING: PrimitiveCodec[str] = PrimitiveCodec("str", WireKind.STRING, str)
"""The codec for ``str``."""
BOOL: PrimitiveCodec[bool] = PrimitiveCodec("bool", WireKind.BOOL, bool)
"""The codec for ``bool``."""
INT64: PrimitiveCodec[int] = PrimitiveCodec("int", WireKind.INT64, int, check_int64)
"""The codec for ``int`` (signed 64-bit range)."""
DOUBLE: PrimitiveCodec[float] = PrimitiveCodec("float", WireKind.DOUBLE, float, check_finite)
"""The codec for ``float`` (finite values only)."""
BYTES: PrimitiveCodec[bytes] = PrimitiveCodec("bytes", WireKind.BYTES, bytes)
"""The codec for ``bytes``."""


@dataclass(frozen=True, slots=True)
class NoneCodec:
    """The codec for ``type(None)``: only None, as JSON ``null``."""

    type_name: str = "None"
    wire_kind: WireKind = WireKind.JSON

    def encode(self, value: None) -> Value:
        """Encode None; raise TypeError for anything else."""
        if value is not None:
            raise TypeError(f"expected None, got {type_label(value)}")
        return NULL

    def decode(self, value: Value) -> None:
        """Decode JSON ``null``; raise TypeError for anything else."""
        if value != NULL:
            raise TypeError(f"expected JSON null, got wire kind {value.kind.value}")


@dataclass(frozen=True, slots=True)
class DateTimeCodec:
    """The codec for timezone-aware ``datetime``: an ISO 8601 string."""

    type_name: str = "datetime"
    wire_kind: WireKind = WireKind.STRING

    def encode(self, value: datetime) -> Value:
        """Encode an aware datetime; raise TypeError/ValueError otherwise."""
        if not isinstance(value, datetime):
            raise TypeError(f"expected datetime, got {type_label(value)}")
        return Value(WireKind.STRING, require_aware(value).isoformat())

    def decode(self, value: Value) -> datetime:
        """Decode ISO 8601 text with a UTC offset."""
        if value.kind is not WireKind.STRING or not isinstance(value.data, str):
            raise TypeError(f"expected datetime text, got wire kind {value.kind.value}")
        return require_aware(datetime.fromisoformat(value.data))


NONE = NoneCodec()
"""The codec for ``type(None)``."""
DATETIME = DateTimeCodec()
"""The codec for timezone-aware ``datetime``."""


def _identity(value: Any) -> Any:
    return value


@dataclass(frozen=True, slots=True)
class JsonCodec(Generic[ValueT]):
    """A codec that stores a type as canonical JSON (sorted keys, compact, no NaN).

    Attributes:
        type_name: The type's name, used in error messages.
        decoder: Builds the value from parsed JSON data.
        encoder: Turns the value into JSON-ready data (identity by default).
        expected_type: When set, ``encode`` first checks the value against this type hint.
        wire_kind: Always ``WireKind.JSON``.

    Examples:
        >>> codec = JsonCodec("Point", lambda data: Point(**data), vars, Point)  # doctest: +SKIP
    """

    type_name: str
    decoder: Callable[[Any], ValueT] = field(repr=False)
    encoder: Callable[[ValueT], Any] = field(default=_identity, repr=False)
    expected_type: object | None = None
    wire_kind: WireKind = field(default=WireKind.JSON, init=False)

    def encode(self, value: ValueT) -> Value:
        """Encode ``value`` as canonical JSON text.

        Raises:
            TypeError: If the value does not match ``expected_type`` or is not JSON-ready.
            ValueError: If the data holds NaN or an infinity.
        """
        if self.expected_type is not None and not matches_type(value, self.expected_type):
            raise TypeError(f"expected {self.type_name}, got {type_label(value)}")
        return Value(WireKind.JSON, canonical_json(self.encoder(value)))

    def decode(self, value: Value) -> ValueT:
        """Parse JSON text and build the value with ``decoder``.

        Raises:
            TypeError: If ``value`` is not JSON.
            ValueError: If the text is malformed.
        """
        if value.kind is not WireKind.JSON or not isinstance(value.data, str):
            raise TypeError(f"expected {self.type_name} as JSON, got wire kind {value.kind.value}")
        return self.decoder(json.loads(value.data))


def matches_type(value: object, hint: object) -> bool:
    """Tell whether ``value`` fits ``hint``: exact types for classes, deep for containers.

    Understands classes, ``Any``/``object``, unions, ``list``/``tuple``/``dict``/``Mapping``/
    ``Sequence`` (parameterised or bare); for any other hint it answers True.
    """
    if hint is Any or hint is object:
        return True
    if hint is None or hint is type(None):
        return value is None
    if isinstance(hint, type):
        return type(value) is hint
    origin, args = get_origin(hint), get_args(hint)
    if origin is Union or origin is types.UnionType:
        return any(matches_type(value, arg) for arg in args)
    if origin is list:
        return isinstance(value, list) and _all_match(value, args[:1])
    if origin is tuple:
        return isinstance(value, tuple) and _tuple_matches(value, args)
    if origin in (dict, Mapping):
        return isinstance(value, Mapping) and all(
            _all_match((key,), args[:1]) and _all_match((item,), args[1:])
            for key, item in value.items()
        )
    if origin is Sequence:
        return isinstance(value, (list, tuple)) and _all_match(value, args[:1])
    return True


def _all_match(values: Sequence[object] | tuple[object, ...], args: tuple[object, ...]) -> bool:
    return not args or all(matches_type(item, args[0]) for item in values)


def _tuple_matches(value: tuple[object, ...], args: tuple[object, ...]) -> bool:
    if len(args) == 2 and args[1] is Ellipsis:
        return _all_match(value, args[:1])
    return len(value) == len(args) and all(map(matches_type, value, args))
