"""Codecs (Dex's ``dex.codec``): how typed values are encoded, checked, copied and decoded.

``CodecRegistry.resolve`` matches Dex: custom codecs first, then the built-ins (``str``,
``bool``, ``int``, ``float``, ``bytes``, ``None``, ``datetime``), then automatic JSON for
dataclasses, Enums and typed containers. dexviz adds ``X | None``, fixed tuples, ``Any``/
``object`` and recursive dataclasses, plus the engine's helpers: ``encode``/``decode`` raising
ValueMappingError, ``roundtrip`` (a checked copy for a receiver), and the JSON-ready forms used in
histories (``to_json_ready`` / ``from_json_ready``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dexviz.sdk._codec_base import NULL, Codec, Value, WireKind, canonical_json
from dexviz.sdk._codec_convert import Converter, DynamicConverter
from dexviz.sdk._codec_ready import to_json_ready
from dexviz.sdk._codec_resolve import (
    ConverterResolver,
    hashable,
    hint_name,
    is_dynamic,
    strip_hint,
)
from dexviz.sdk._codec_struct import CodecConverter, EnumConverter
from dexviz.sdk._codec_wire import (
    BOOL,
    BYTES,
    DATETIME,
    DOUBLE,
    INT64,
    NONE,
    STRING,
    JsonCodec,
    PrimitiveCodec,
)
from dexviz.sdk.errors import ValueMappingError

__all__ = [
    "BOOL",
    "BYTES",
    "DOUBLE",
    "INT64",
    "STRING",
    "Codec",
    "CodecRegistry",
    "JsonCodec",
    "Value",
    "WireKind",
    "from_json_ready",
    "to_json_ready",
]

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

_BUILTINS: dict[object, Codec[Any]] = {
    str: STRING,
    bool: BOOL,
    int: INT64,
    float: DOUBLE,
    bytes: BYTES,
    type(None): NONE,
    None: NONE,
    datetime: DATETIME,
}


@dataclass(frozen=True, slots=True)
class DynamicCodec:
    """The codec for ``Any``/``object``: JSON chosen by the value's runtime type.

    Decoding cannot know the original type: it returns the JSON data (or the primitive carried
    by any other wire kind).

    Attributes:
        converter: The dynamic converter that checks and dumps values.
        type_name: Always ``"Any"``.
        wire_kind: Always ``WireKind.JSON`` when encoding.
    """

    converter: DynamicConverter
    type_name: str = "Any"
    wire_kind: WireKind = WireKind.JSON

    def encode(self, value: object) -> Value:
        """Encode ``value`` as canonical JSON, by its runtime type."""
        return Value(WireKind.JSON, canonical_json(self.converter.dump(value)))

    def decode(self, value: Value) -> object:
        """Decode a value of any wire kind into plain data."""
        if value.kind is WireKind.JSON:
            return json.loads(str(value.data))
        return value.data


@dataclass(frozen=True, slots=True)
class _Entry:
    codec: Codec[Any]
    converter: Converter
    check: Callable[[Any], None] | None
    copy: Callable[[Any], Any]
    same: type | None = None  # a value of exactly this type is returned as is by roundtrip


class CodecRegistry:
    """Resolves the codec for each declared type hint, and encodes/decodes/copies values.

    Resolution is cached per type hint, so the engine may call it on every publish.

    Examples:
        >>> registry = CodecRegistry({Money: money_codec})  # doctest: +SKIP
        >>> registry.resolve(Money) is money_codec  # doctest: +SKIP
        True
    """

    def __init__(self, codecs: Mapping[object, Codec[Any]] | None = None) -> None:
        """Create a registry.

        Args:
            codecs: Custom codecs keyed by the exact type hint they serve; copied.
        """
        self._codecs: dict[object, Codec[Any]] = dict(codecs or {})
        self._resolver = ConverterResolver(self._codecs)
        self._entries: dict[object, _Entry] = {}
        self.identity_types: frozenset[type] = frozenset(
            t for t in (str, bool, int) if t not in self._codecs
        )
        """Types whose exact values ``roundtrip`` returns as they are when declared as
        themselves (no custom codec replaces theirs; ints within int64): a caller may skip the
        call for them."""

    @property
    def codecs(self) -> Mapping[object, Codec[Any]]:
        """The custom codecs given at construction (a copy)."""
        return dict(self._codecs)

    def resolve(self, type_hint: object) -> Codec[Any]:
        """Return the codec for a type hint.

        Args:
            type_hint: A class or a type hint such as ``list[Order]`` or ``Order | None``.

        Returns:
            The custom codec registered for it, a built-in codec, or an automatic JSON codec.

        Raises:
            TypeError: If no codec can represent the hint ("register one in CodecRegistry").
        """
        return self._entry(type_hint).codec

    def encode(self, type_hint: object, value: object, *, operation: str) -> Value:
        """Encode ``value`` as the declared type; None encodes as JSON null for every type.

        Raises:
            TypeError: If the type hint itself has no codec.
            ValueMappingError: If the value does not fit the type (detail names both types).
        """
        entry = self._entry(type_hint)
        if value is None:
            return NULL
        try:
            return entry.codec.encode(value)
        except Exception as error:  # noqa: BLE001 - custom codecs may raise anything
            raise _mapping_error(operation, error, type_hint) from error

    def decode(self, type_hint: object, value: Value, *, operation: str) -> Any:
        """Decode ``value`` as the declared type; JSON null decodes to None for every type.

        Raises:
            TypeError: If the type hint itself has no codec.
            ValueMappingError: If the value cannot be decoded as that type.
        """
        entry = self._entry(type_hint)
        if value == NULL:
            return None
        try:
            return entry.codec.decode(value)
        except Exception as error:  # noqa: BLE001 - custom codecs may raise anything
            raise _mapping_error(operation, error, type_hint) from error

    def roundtrip(self, type_hint: object, value: object, *, operation: str) -> Any:
        """Return ``decode(encode(value))``: a type-checked copy sharing nothing mutable.

        Immutable values (``str``, ``int``, ``float``, ``bool``, None, ``bytes``, Enum members,
        aware datetimes, frozen dataclasses of immutable fields) come back as the same object
        after their check.

        Raises:
            TypeError: If the type hint itself has no codec.
            ValueMappingError: If the value does not fit the type.
        """
        if value is None:
            return None
        try:
            entry: _Entry | None = self._entries[type_hint]
        except (KeyError, TypeError):
            entry = None
        if entry is None:
            entry = self._entry(type_hint)
        same = entry.same
        if type(value) is same and (
            same is not int or _INT64_MIN <= value <= _INT64_MAX  # type: ignore[operator]
        ):
            return value
        try:
            if entry.check is not None:
                entry.check(value)
                return value
            return entry.copy(value)
        except Exception as error:  # noqa: BLE001 - custom codecs may raise anything
            raise _mapping_error(operation, error, type_hint) from error

    def dump(self, type_hint: object, value: object, *, operation: str) -> Any:
        """Return ``value`` as JSON-ready data, checked against the declared type.

        Custom codecs are honoured (their Value is embedded: JSON as data, bytes as base64).

        Raises:
            TypeError: If the type hint itself has no codec.
            ValueMappingError: If the value does not fit the type.
        """
        entry = self._entry(type_hint)
        try:
            if entry.check is not None and value is not None:
                entry.check(value)
            return entry.converter.dump(value)
        except Exception as error:  # noqa: BLE001 - custom codecs may raise anything
            raise _mapping_error(operation, error, type_hint) from error

    def from_json_ready(self, type_hint: object, data: object, *, operation: str = "decode") -> Any:
        """Build a value of the declared type from JSON-ready data (see :func:`to_json_ready`).

        Raises:
            TypeError: If the type hint itself has no codec.
            ValueMappingError: If the data does not describe a value of that type.
        """
        entry = self._entry(type_hint)
        try:
            value = entry.converter.load(data)
            if entry.check is not None and value is not None:
                entry.check(value)
            return value
        except Exception as error:  # noqa: BLE001 - custom codecs may raise anything
            raise _mapping_error(operation, error, type_hint) from error

    def _entry(self, type_hint: object) -> _Entry:
        try:
            return self._entries[type_hint]
        except KeyError:
            pass
        except TypeError:  # an unhashable hint: resolved every time
            return self._build_entry(type_hint)
        entry = self._build_entry(type_hint)
        self._entries[type_hint] = entry
        return entry

    def _build_entry(self, type_hint: object) -> _Entry:
        converter = self._resolver.converter(type_hint)
        if isinstance(converter, CodecConverter):
            codec = converter.codec
            return _Entry(codec, converter, None, lambda value: codec.decode(codec.encode(value)))
        stripped = strip_hint(type_hint)
        builtin = _BUILTINS.get(stripped) if hashable(stripped) else None
        if isinstance(builtin, PrimitiveCodec):
            same = builtin.expected_type if builtin is not DOUBLE else None
            return _Entry(builtin, converter, builtin.check, converter.copy, same)
        if builtin is not None:
            return _Entry(builtin, converter, None, converter.copy)
        if is_dynamic(stripped):
            assert isinstance(converter, DynamicConverter)
            return _Entry(DynamicCodec(converter), converter, None, converter.copy)
        codec = JsonCodec(hint_name(type_hint), converter.load, converter.dump)
        same = converter.cls if isinstance(converter, EnumConverter) else None
        return _Entry(codec, converter, None, converter.copy, same)

    def __repr__(self) -> str:
        """Name the types that have custom codecs."""
        return f"CodecRegistry(custom={sorted(hint_name(hint) for hint in self._codecs)})"


def _mapping_error(operation: str, error: Exception, type_hint: object) -> ValueMappingError:
    if isinstance(error, ValueMappingError):
        return error
    if isinstance(error, RecursionError):
        # A list that contains itself (or a very deep nesting) must not surface as a bare
        # "maximum recursion depth exceeded" with no hint of which value or type is involved.
        detail = (
            f"the value for {hint_name(type_hint)} is nested too deeply or contains itself "
            "(a cycle); only finite, acyclic values can be encoded"
        )
        return ValueMappingError(operation, detail)
    detail = str(error) or type(error).__name__
    return ValueMappingError(operation, detail)


_DEFAULT_REGISTRY = CodecRegistry()


def from_json_ready(type_hint: object, data: object) -> Any:
    """Build a value of the declared type from JSON-ready data, with the built-in codecs.

    The inverse of :func:`to_json_ready` for every type the automatic codecs support: a
    dataclass comes back from its dict, an Enum member from its value (the same member), a tuple
    from its list, a datetime from ISO text, bytes from base64 text.

    Args:
        type_hint: The declared type.
        data: JSON-ready data, such as an output loaded from a saved history.

    Returns:
        The decoded value (None for null data).

    Raises:
        TypeError: If the type hint has no codec.
        ValueMappingError: If the data does not describe a value of that type.

    Examples:
        >>> from_json_ready(tuple[int, bytes], [1, "aGk="])
        (1, b'hi')
    """
    return _DEFAULT_REGISTRY.from_json_ready(type_hint, data)
