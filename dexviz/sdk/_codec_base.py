"""Wire types shared by the codec modules: WireKind, Value, the Codec protocol, mismatch errors."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, TypeVar

ValueT = TypeVar("ValueT")

_MEMORY_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")


class WireKind(Enum):
    """The representation an encoded :class:`Value` carries.

    Attributes:
        STRING: A text value.
        BOOL: A boolean.
        INT64: A signed 64-bit integer.
        DOUBLE: A finite float.
        BYTES: Raw bytes.
        JSON: Canonical JSON text.
    """

    STRING = "string"
    BOOL = "bool"
    INT64 = "int64"
    DOUBLE = "double"
    BYTES = "bytes"
    JSON = "json"


@dataclass(frozen=True, slots=True)
class Value:
    """One encoded value, as it would travel to a Dex server.

    Attributes:
        kind: How ``data`` is represented.
        data: The primitive, the bytes, or the JSON text.
    """

    kind: WireKind
    data: str | bool | int | float | bytes


NULL = Value(WireKind.JSON, "null")
"""The encoded form of None, for every codec."""


class Codec(Protocol[ValueT]):
    """Converts one Python type to and from :class:`Value`; must be deterministic.

    ``encode`` and ``decode`` raise TypeError or ValueError for values they cannot handle; the
    :class:`~dexviz.sdk.codec.CodecRegistry` turns those into ValueMappingError.
    """

    @property
    def type_name(self) -> str:
        """The name of the Python type, used in error messages."""
        ...

    @property
    def wire_kind(self) -> WireKind:
        """The one wire kind this codec produces and accepts."""
        ...

    def encode(self, value: ValueT) -> Value:
        """Encode one value."""
        ...

    def decode(self, value: Value) -> ValueT:
        """Decode one value."""
        ...


class ConversionError(TypeError):
    """A value does not fit the declared type; knows where inside the value it happened.

    Attributes:
        expected: The declared type (or shape) that was expected.
        got: The name of the offending value's type, or a description of the problem.
        path: Where in the value, such as ``.items[2].count`` (empty at the top).
    """

    def __init__(self, expected: str, got: str, path: str = "") -> None:
        """Create the error.

        Args:
            expected: What was expected.
            got: What was found.
            path: Where it was found.
        """
        super().__init__(expected, got, path)
        self.expected = expected
        self.got = got
        self.path = path

    def at(self, segment: str) -> ConversionError:
        """Return the same error located one level further out (``segment`` is prepended)."""
        return ConversionError(self.expected, self.got, segment + self.path)

    def __str__(self) -> str:
        """Name the expected type, the offending type, and the location."""
        where = f" at {self.path}" if self.path else ""
        return f"expected {self.expected}{where}, got {self.got}"


class NoCodecError(ConversionError):
    """A value under ``Any``/``object`` whose runtime type has no codec (such as ``object()``).

    Attributes:
        got: The qualified name of the value's type.
        path: Where in the value, such as ``[1]`` or ``.payload`` (empty at the top).
    """

    def __init__(self, got: str, path: str = "") -> None:
        """Create the error for a value of the type called ``got``, found at ``path``."""
        super().__init__("a value with a codec", got, path)

    def at(self, segment: str) -> NoCodecError:
        """Return the same error located one level further out (``segment`` is prepended)."""
        return NoCodecError(self.got, segment + self.path)

    def __str__(self) -> str:
        """Name the value's type, where it was found, and how to give it a codec."""
        where = f" at {self.path}" if self.path else ""
        return (
            f"no codec for a value of type {self.got}{where} (declared Any or object); register "
            "a codec for that type in CodecRegistry(codecs={...}) or declare a supported type"
        )


def type_label(value: object) -> str:
    """Return the name used for a value's type in error messages (``None`` for None)."""
    if value is None:
        return "None"
    return type(value).__qualname__


def qualified_name(cls: type) -> str:
    """Return ``module.QualifiedName`` for a class (just the name for builtins)."""
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def has_memory_address(text: str) -> bool:
    """Tell whether a string shows a memory address (``0x7f...``), so it is not deterministic."""
    return _MEMORY_ADDRESS.search(text) is not None


def canonical_json(data: object) -> str:
    """Dump JSON-ready data as canonical JSON: sorted keys, compact separators, no NaN.

    Raises:
        ValueError: If the data holds NaN or an infinity.
        TypeError: If the data is not JSON-ready.
    """
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
