"""Converters for user-defined shapes: Enums, dataclasses, custom codecs, and dict keys."""

from __future__ import annotations

import base64
import binascii
import json
from enum import Enum, Flag
from typing import Any, cast

from dexviz.sdk._codec_base import (
    Codec,
    ConversionError,
    Value,
    WireKind,
    canonical_json,
    type_label,
)
from dexviz.sdk._codec_convert import Converter, ExactConverter
from dexviz.sdk._codec_ready import json_key, to_json_ready

_MAX_LISTED = 12


def _lookup_key(data: object) -> object:
    if data is None or isinstance(data, (str, int, float)):
        return (type(data), data)
    return ("json", json.dumps(data, sort_keys=True))


class EnumConverter(Converter):
    """An Enum: its member's value in JSON; loading returns the very same member."""

    __slots__ = ("cls", "_by_value", "_allowed")

    def __init__(self, cls: type[Enum]) -> None:
        """Create the converter for the Enum class ``cls``."""
        super().__init__(cls.__qualname__, immutable=True)
        self.cls = cls
        members = list(cls)
        self._by_value = {_lookup_key(to_json_ready(member.value)): member for member in members}
        listed = [to_json_ready(member.value) for member in members[:_MAX_LISTED]]
        self._allowed = repr(listed)[:-1] + (", ...]" if len(members) > _MAX_LISTED else "]")

    def _dump(self, value: Any) -> Any:
        return to_json_ready(self._copy(value).value)

    def _load(self, data: Any) -> Any:
        member = self._by_value.get(_lookup_key(data))
        if member is not None:
            return member
        if issubclass(self.cls, Flag) and type(data) is int:
            try:
                return self.cls(data)
            except ValueError:
                pass
        raise ConversionError(f"one of {self._allowed} for {self.name}", repr(data))

    def _copy(self, value: Any) -> Any:
        if type(value) is not self.cls:
            raise ConversionError(self.name, type_label(value))
        return value


class DataclassConverter(Converter):
    """A dataclass: a JSON object of its ``__init__`` fields, converted by their type hints.

    Loading ignores unknown keys and lets missing fields take their defaults. A frozen
    dataclass whose fields are all immutable is itself immutable: ``copy`` checks it and
    returns it.
    """

    __slots__ = ("cls", "fields", "_exact")

    def __init__(self, cls: type, name: str) -> None:
        """Create it; the resolver calls :meth:`set_fields` next (allowing recursive types)."""
        super().__init__(name)
        self.cls = cls
        self.fields: tuple[tuple[str, Converter, bool], ...] = ()
        self._exact: tuple[tuple[str, type | None, Converter], ...] = ()

    def set_fields(self, fields: tuple[tuple[str, Converter, bool], ...]) -> None:
        """Set the (name, converter, required) triples of the ``__init__`` fields."""
        self.fields = fields
        params: Any = getattr(self.cls, "__dataclass_params__", None)
        frozen = bool(params is not None and params.frozen)
        self.immutable = frozen and all(converter.immutable for _, converter, _ in fields)
        # For the hot copy path: fields whose check is one exact-type test.
        self._exact = tuple(
            (name, _exact_type(converter), converter) for name, converter, _ in fields
        )

    def _dump(self, value: Any) -> Any:
        self._check(value)
        return {
            name: self._field(value, name, converter.dump) for name, converter, _ in self.fields
        }

    def _load(self, data: Any) -> Any:
        if type(data) is not dict:
            raise ConversionError(f"{self.name} as a JSON object", type_label(data))
        arguments = {}
        for name, converter, required in self.fields:
            if name in data:
                try:
                    arguments[name] = converter.load(data[name])
                except ConversionError as error:
                    raise error.at(f".{name}") from None
            elif required:
                raise ConversionError(f"field {name!r} of {self.name}", "a JSON object without it")
        return self._construct(arguments)

    def _copy(self, value: Any) -> Any:
        self._check(value)
        if self.immutable:
            for name, exact, converter in self._exact:
                field_value = getattr(value, name)
                if exact is None or type(field_value) is not exact:
                    self._field(value, name, converter.copy)
            return value
        return self._construct(
            {name: self._field(value, name, converter.copy) for name, converter, _ in self.fields}
        )

    @staticmethod
    def _field(value: Any, name: str, convert: Any) -> Any:
        try:
            return convert(getattr(value, name))
        except ConversionError as error:
            raise error.at(f".{name}") from None

    def _check(self, value: Any) -> None:
        if type(value) is not self.cls:
            raise ConversionError(self.name, type_label(value))

    def _construct(self, arguments: dict[str, Any]) -> Any:
        try:
            return self.cls(**arguments)
        except (TypeError, ValueError) as error:
            raise ConversionError(
                f"arguments {self.name} accepts", f"{type(error).__name__}: {error}"
            ) from None


def _exact_type(converter: Converter) -> type | None:
    if isinstance(converter, ExactConverter):
        return converter.cls
    if isinstance(converter, EnumConverter):
        return converter.cls
    return None


class CodecConverter(Converter):
    """A type with a registered custom :class:`Codec`; its Value is embedded in JSON data."""

    __slots__ = ("codec",)

    def __init__(self, codec: Codec[Any]) -> None:
        """Create the converter that delegates to ``codec``."""
        super().__init__(codec.type_name)
        self.codec = codec

    def _dump(self, value: Any) -> Any:
        encoded = self._call(self.codec.encode, value, type_label(value))
        if encoded.kind is WireKind.JSON:
            return json.loads(str(encoded.data))
        if encoded.kind is WireKind.BYTES:
            return base64.b64encode(bytes(encoded.data)).decode("ascii")
        return encoded.data

    def _load(self, data: Any) -> Any:
        return self._call(self.codec.decode, self._value(data), type_label(data))

    def _copy(self, value: Any) -> Any:
        encoded = self._call(self.codec.encode, value, type_label(value))
        return self._call(self.codec.decode, encoded, type_label(value))

    def _value(self, data: Any) -> Value:
        kind = self.codec.wire_kind
        if kind is WireKind.JSON:
            return Value(kind, canonical_json(data))
        if kind is WireKind.BYTES and isinstance(data, str):
            try:
                return Value(kind, base64.b64decode(data, validate=True))
            except binascii.Error:
                pass
        elif kind is WireKind.DOUBLE and type(data) is int:
            return Value(kind, float(data))
        elif type(data) is _WIRE_TYPES[kind]:
            return Value(kind, cast(str | bool | int | float | bytes, data))
        raise ConversionError(f"{self.name} ({kind.value} data)", type_label(data))

    def _call(self, method: Any, argument: Any, label: str) -> Any:
        try:
            return method(argument)
        except Exception as error:  # noqa: BLE001 - a custom codec may raise anything
            raise ConversionError(self.name, f"{label} ({type(error).__name__}: {error})") from None


_WIRE_TYPES: dict[WireKind, type] = {
    WireKind.STRING: str,
    WireKind.BOOL: bool,
    WireKind.INT64: int,
    WireKind.DOUBLE: float,
    WireKind.BYTES: bytes,
}


class StrKeys:
    """Dict keys declared ``str``."""

    name = "str"

    def dump(self, key: Any) -> str:
        """Check and return a key."""
        if type(key) is not str:
            raise ConversionError("a str dict key", type_label(key))
        return key

    load = dump
    copy = dump


class IntKeys:
    """Dict keys declared ``int``: decimal strings in JSON."""

    name = "int"

    def dump(self, key: Any) -> str:
        """Return the JSON key for an int key."""
        return str(self.copy(key))

    def load(self, key: Any) -> int:
        """Parse a JSON key back into an int."""
        try:
            return int(key)
        except (TypeError, ValueError):
            raise ConversionError("an int dict key (decimal text)", repr(key)) from None

    def copy(self, key: Any) -> int:
        """Check and return a key."""
        if type(key) is not int:
            raise ConversionError("an int dict key", type_label(key))
        return key


class EnumKeys:
    """Dict keys declared as an Enum: the member value's JSON spelling."""

    def __init__(self, converter: EnumConverter) -> None:
        """Create the key converter for the Enum behind ``converter``."""
        self.converter = converter
        self.name = converter.name
        self._by_key = {json_key(member): member for member in converter.cls}

    def dump(self, key: Any) -> str:
        """Return the JSON key for a member."""
        return json_key(self.converter.copy(key))

    def load(self, key: Any) -> Enum:
        """Find the member a JSON key names."""
        member = self._by_key.get(key)
        if member is None:
            raise ConversionError(f"a {self.name} dict key", repr(key))
        return member

    def copy(self, key: Any) -> Any:
        """Check and return a key."""
        return self.converter.copy(key)


class AnyKeys:
    """Dict keys of undeclared type: str, int or Enum keys; JSON keys load as str."""

    name = "Any"

    def dump(self, key: Any) -> str:
        """Return the JSON key."""
        return json_key(self.copy(key))

    def load(self, key: Any) -> Any:
        """Return the JSON key unchanged."""
        return key

    def copy(self, key: Any) -> Any:
        """Check and return a key."""
        if type(key) is str or type(key) is int or isinstance(key, Enum):
            return key
        raise ConversionError("a str, int or Enum dict key", type_label(key))
