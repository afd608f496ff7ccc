"""Converters: one declared type <-> JSON-ready data, with deep type checks and copies.

``dump`` checks a value against the declared type and returns JSON-ready data; ``load`` builds
the declared type back from JSON-ready data; ``copy`` is ``load(dump(value))`` without the
intermediate data. None passes every converter unchanged (Dex: null fits any type). Mismatches
raise :class:`ConversionError`, which records where inside the value they happened.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from dexviz.sdk._codec_base import ConversionError, NoCodecError, type_label

Lookup = Callable[[type], "Converter"]
"""Finds the converter for a runtime type (raises TypeError when there is none)."""


class Converter:
    """Base class: subclasses implement ``_dump``, ``_load`` and (when cheaper) ``_copy``.

    Attributes:
        name: The declared type's name, for error messages.
        immutable: True when every accepted value is deeply immutable, so that ``copy`` may
            return the value itself once it is checked.
    """

    __slots__ = ("name", "immutable")

    def __init__(self, name: str, *, immutable: bool = False) -> None:
        """Create a converter for the type called ``name`` (used in error messages)."""
        self.name = name
        self.immutable = immutable

    def dump(self, value: Any) -> Any:
        """Return ``value`` as JSON-ready data, checking it against the declared type."""
        return None if value is None else self._dump(value)

    def load(self, data: Any) -> Any:
        """Build a value of the declared type from JSON-ready data."""
        return None if data is None else self._load(data)

    def copy(self, value: Any) -> Any:
        """Return ``load(dump(value))``: a checked copy sharing no mutable part with ``value``."""
        return None if value is None else self._copy(value)

    def _dump(self, value: Any) -> Any:
        raise NotImplementedError

    def _load(self, data: Any) -> Any:
        raise NotImplementedError

    def _copy(self, value: Any) -> Any:
        return self._load(self._dump(value))

    def __repr__(self) -> str:
        """Show the converter kind and the type name."""
        return f"{type(self).__name__}({self.name})"


class ExactConverter(Converter):
    """An immutable scalar type accepted only exactly (``str``, ``bool``, ``int``)."""

    __slots__ = ("cls",)

    def __init__(self, cls: type) -> None:
        """Create the converter for ``cls``."""
        super().__init__(cls.__name__, immutable=True)
        self.cls = cls

    def _dump(self, value: Any) -> Any:
        if type(value) is not self.cls:
            raise ConversionError(self.name, type_label(value))
        return value

    def _load(self, data: Any) -> Any:
        return self._dump(data)

    _copy = _dump


class FloatConverter(Converter):
    """``float``: finite values only; loading also accepts a JSON integer (Go writes 1.0 as 1)."""

    __slots__ = ()

    def __init__(self) -> None:
        """Create the float converter."""
        super().__init__("float", immutable=True)

    def _dump(self, value: Any) -> Any:
        if type(value) is not float:
            raise ConversionError("float", type_label(value))
        if value != value or value in (float("inf"), float("-inf")):
            raise ConversionError("a finite float", repr(value))
        return value

    def _load(self, data: Any) -> Any:
        if type(data) is int:
            return float(data)
        return self._dump(data)

    _copy = _dump


class NoneConverter(Converter):
    """``type(None)``: only None."""

    __slots__ = ()

    def __init__(self) -> None:
        """Create the None converter."""
        super().__init__("None", immutable=True)

    def _dump(self, value: Any) -> Any:
        raise ConversionError("None", type_label(value))

    def _load(self, data: Any) -> Any:
        return self._dump(data)

    _copy = _dump


class BytesConverter(Converter):
    """``bytes``: base64 text in JSON."""

    __slots__ = ()

    def __init__(self) -> None:
        """Create the bytes converter."""
        super().__init__("bytes", immutable=True)

    def _dump(self, value: Any) -> Any:
        return base64.b64encode(self._copy(value)).decode("ascii")

    def _load(self, data: Any) -> Any:
        if type(data) is not str:
            raise ConversionError("bytes as base64 text", type_label(data))
        try:
            return base64.b64decode(data, validate=True)
        except binascii.Error:
            raise ConversionError("bytes as base64 text", "text that is not base64") from None

    def _copy(self, value: Any) -> Any:
        if type(value) is not bytes:
            raise ConversionError("bytes", type_label(value))
        return value


class DateTimeConverter(Converter):
    """Timezone-aware ``datetime``: ISO 8601 text in JSON; naive datetimes are rejected."""

    __slots__ = ()

    def __init__(self) -> None:
        """Create the datetime converter."""
        super().__init__("datetime", immutable=True)

    def _dump(self, value: Any) -> Any:
        return self._copy(value).isoformat()

    def _load(self, data: Any) -> Any:
        if type(data) is not str:
            raise ConversionError("datetime as ISO 8601 text", type_label(data))
        try:
            parsed = datetime.fromisoformat(data)
        except ValueError:
            raise ConversionError("datetime as ISO 8601 text", repr(data)) from None
        return self._copy(parsed)

    def _copy(self, value: Any) -> Any:
        if not isinstance(value, datetime):
            raise ConversionError("datetime", type_label(value))
        if value.utcoffset() is None:
            raise ConversionError("a timezone-aware datetime", "a naive datetime")
        return value if type(value) is datetime else datetime.fromisoformat(value.isoformat())


class SequenceConverter(Converter):
    """``list[T]``, ``tuple[T, ...]`` or ``Sequence[T]``: a JSON array of T."""

    __slots__ = ("item", "accepts", "build")

    def __init__(self, name: str, item: Converter, accepts: tuple[type, ...], build: type) -> None:
        """Create a converter accepting instances of ``accepts`` and loading as ``build``."""
        super().__init__(name, immutable=build is tuple and item.immutable)
        self.item = item
        self.accepts = accepts
        self.build = build

    def _check(self, value: Any) -> Any:
        if not isinstance(value, self.accepts):
            raise ConversionError(self.name, type_label(value))
        return value

    def _dump(self, value: Any) -> Any:
        return self._each(self.item.dump, self._check(value), list)

    def _load(self, data: Any) -> Any:
        if type(data) is not list:
            raise ConversionError(f"{self.name} as a JSON array", type_label(data))
        return self._each(self.item.load, data, self.build)

    def _copy(self, value: Any) -> Any:
        if self.immutable and type(value) is tuple:
            self._each(self.item.copy, value, list)
            return value
        return self._each(self.item.copy, self._check(value), self.build)

    @staticmethod
    def _each(convert: Callable[[Any], Any], items: Any, build: type) -> Any:
        try:
            return build([convert(item) for item in items])
        except ConversionError as error:
            raise _locate_item(error, convert, items) from None


def _locate_item(error: ConversionError, convert: Callable[[Any], Any], items: Any) -> Exception:
    # Only the error path pays for finding which element failed.
    for index, item in enumerate(items):
        try:
            convert(item)
        except ConversionError as inner:
            return inner.at(f"[{index}]")
    return error


class FixedTupleConverter(Converter):
    """``tuple[A, B, ...]`` with a fixed length: a JSON array of that length."""

    __slots__ = ("items",)

    def __init__(self, name: str, items: tuple[Converter, ...]) -> None:
        """Create the converter for a tuple whose element converters are ``items``."""
        super().__init__(name, immutable=all(item.immutable for item in items))
        self.items = items

    def _check(self, value: Any, accepts: type[tuple[Any, ...] | list[Any]], label: str) -> Any:
        if not isinstance(value, accepts):
            raise ConversionError(label, type_label(value))
        if len(value) != len(self.items):
            count = len(value)
            raise ConversionError(label, f"{count} element{'' if count == 1 else 's'}")
        return value

    def _dump(self, value: Any) -> Any:
        return self._each("dump", self._check(value, tuple, self.name), list)

    def _load(self, data: Any) -> Any:
        return self._each("load", self._check(data, list, f"{self.name} as a JSON array"), tuple)

    def _copy(self, value: Any) -> Any:
        copied = self._each("copy", self._check(value, tuple, self.name), tuple)
        return value if self.immutable and type(value) is tuple else copied

    def _each(self, method: str, items: Any, build: type) -> Any:
        converted = []
        for index, (converter, item) in enumerate(zip(self.items, items, strict=True)):
            try:
                converted.append(getattr(converter, method)(item))
            except ConversionError as error:
                raise error.at(f"[{index}]") from None
        return build(converted)


class DynamicConverter(Converter):
    """``Any``/``object``: the value's runtime type decides (dataclass, Enum, containers, ...).

    Loading cannot know the original type, so it returns (a copy of) the JSON data.
    """

    __slots__ = ("lookup", "keys")

    def __init__(self, lookup: Lookup, keys: Any) -> None:
        """Create it; ``lookup`` finds converters for runtime types, ``keys`` converts dict keys."""
        super().__init__("Any")
        self.lookup = lookup
        self.keys = keys

    def _dump(self, value: Any) -> Any:
        return self._by_type(value, "dump")

    def _load(self, data: Any) -> Any:
        if isinstance(data, list):
            return [self.load(item) for item in data]
        if isinstance(data, dict):
            return {key: self.load(item) for key, item in data.items()}
        return data

    def _copy(self, value: Any) -> Any:
        return self._by_type(value, "copy")

    def _by_type(self, value: Any, method: str) -> Any:
        cls = type(value)
        if cls is str or cls is int or cls is bool:
            return value
        if cls is list or cls is tuple:
            build = list if method == "dump" else cls
            return SequenceConverter._each(getattr(self, method), value, build)
        if cls is dict or isinstance(value, Mapping):
            return _convert_dict(self.keys, self, value, method)
        try:
            converter = self.lookup(cls)
        except TypeError:
            raise NoCodecError(type_label(value)) from None
        if isinstance(converter, DynamicConverter):
            # Only ``object`` itself resolves to Any again: recursing would never end.
            raise NoCodecError(type_label(value))
        return getattr(converter, method)(value)


class DictConverter(Converter):
    """``dict[K, V]`` or ``Mapping[K, V]``: a JSON object (keys become strings)."""

    __slots__ = ("keys", "values")

    def __init__(self, name: str, keys: Any, values: Converter) -> None:
        """Create it from a key converter (see ``_codec_keys``) and a value converter."""
        super().__init__(name)
        self.keys = keys
        self.values = values

    def _dump(self, value: Any) -> Any:
        return _convert_dict(self.keys, self.values, self._check(value), "dump")

    def _load(self, data: Any) -> Any:
        if type(data) is not dict:
            raise ConversionError(f"{self.name} as a JSON object", type_label(data))
        return _convert_dict(self.keys, self.values, data, "load")

    def _copy(self, value: Any) -> Any:
        return _convert_dict(self.keys, self.values, self._check(value), "copy")

    def _check(self, value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise ConversionError(self.name, type_label(value))
        return value


def _convert_dict(keys: Any, values: Converter, mapping: Any, method: str) -> dict[Any, Any]:
    convert_key = getattr(keys, method)
    convert_value = getattr(values, method)
    converted = {}
    for key, item in mapping.items():
        try:
            converted[convert_key(key)] = convert_value(item)
        except ConversionError as error:
            raise error.at(f"[{key!r}]") from None
    return converted
