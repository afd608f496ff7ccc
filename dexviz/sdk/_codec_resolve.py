"""Turns type hints into converters (cached, thread-safe, recursive types allowed)."""

from __future__ import annotations

import dataclasses
import threading
import types
from collections.abc import Mapping, Sequence
from datetime import datetime
from enum import Enum
from typing import (
    Annotated,
    Any,
    ForwardRef,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from dexviz.sdk._codec_base import Codec
from dexviz.sdk._codec_convert import (
    BytesConverter,
    Converter,
    DateTimeConverter,
    DictConverter,
    DynamicConverter,
    ExactConverter,
    FixedTupleConverter,
    FloatConverter,
    NoneConverter,
    SequenceConverter,
)
from dexviz.sdk._codec_struct import (
    AnyKeys,
    CodecConverter,
    DataclassConverter,
    EnumConverter,
    EnumKeys,
    IntKeys,
    StrKeys,
)

_SCALARS: dict[object, Converter] = {
    str: ExactConverter(str),
    bool: ExactConverter(bool),
    int: ExactConverter(int),
    float: FloatConverter(),
    bytes: BytesConverter(),
    datetime: DateTimeConverter(),
    type(None): NoneConverter(),
    None: NoneConverter(),
}

_NO_CODEC = "register one in CodecRegistry(codecs={...})"


def hint_name(hint: object) -> str:
    """Return a short readable name for a type hint (``list[Order]``, ``int | None``)."""
    if hint is None or hint is type(None):
        return "None"
    if hint is Any:
        return "Any"
    if isinstance(hint, ForwardRef):
        return hint.__forward_arg__
    origin, args = get_origin(hint), get_args(hint)
    if origin is Union or origin is types.UnionType:
        return " | ".join(hint_name(arg) for arg in args)
    if origin is Annotated:
        return hint_name(args[0])
    if origin is not None and args:
        inner = ", ".join("..." if arg is Ellipsis else hint_name(arg) for arg in args)
        return f"{hint_name(origin)}[{inner}]"
    if isinstance(hint, type):
        return hint.__qualname__
    return str(getattr(hint, "__name__", hint))


def strip_hint(hint: object) -> object:
    """Remove what does not change the encoding: Annotated, NewType, and ``| None``."""
    while True:
        origin = get_origin(hint)
        if origin is Annotated:
            hint = get_args(hint)[0]
        elif hasattr(hint, "__supertype__"):
            hint = hint.__supertype__
        elif origin is Union or origin is types.UnionType:
            members = [arg for arg in get_args(hint) if arg is not type(None)]
            if len(members) != 1:
                return hint
            hint = members[0]
        else:
            return hint


def is_dynamic(hint: object) -> bool:
    """Tell whether a hint leaves the type open (``Any`` or ``object``)."""
    return hint is Any or hint is object


class ConverterResolver:
    """Finds (and caches) the converter for a type hint, honouring custom codecs first."""

    def __init__(self, codecs: Mapping[object, Codec[Any]]) -> None:
        """Create a resolver; ``codecs`` maps exact type hints to custom codecs."""
        self._codecs = dict(codecs)
        self._cache: dict[object, Converter] = {}
        self._pending: dict[object, Converter] = {}
        self._building = False
        self._lock = threading.RLock()
        self.dynamic = DynamicConverter(self.converter, AnyKeys())

    def custom_codec(self, hint: object) -> Codec[Any] | None:
        """Return the custom codec registered for exactly this hint, if any."""
        try:
            return self._codecs.get(hint)
        except TypeError:
            return None

    def converter(self, hint: object) -> Converter:
        """Return the converter for ``hint``.

        Raises:
            TypeError: If no converter can represent the hint.
        """
        try:
            found = self._cache.get(hint)
        except TypeError:
            found = None
        if found is not None:
            return found
        with self._lock:
            if self._building:
                return self._find(hint)
            self._building = True
            try:
                converter = self._find(hint)
                self._cache.update(self._pending)
                return converter
            finally:
                self._pending.clear()
                self._building = False

    def _find(self, hint: object) -> Converter:
        try:
            found = self._cache.get(hint) or self._pending.get(hint)
        except TypeError:
            return self._build(hint)
        if found is None:
            found = self._build(hint)
            self._pending[hint] = found
        return found

    def _build(self, hint: object) -> Converter:
        custom = self.custom_codec(hint)
        if custom is not None:
            return CodecConverter(custom)
        stripped = strip_hint(hint)
        if stripped is not hint:
            return self._find(stripped)
        scalar = _SCALARS.get(hint) if hashable(hint) else None
        if scalar is not None:
            return scalar
        if is_dynamic(hint):
            return self.dynamic
        if isinstance(hint, type) and issubclass(hint, Enum):
            return EnumConverter(hint)
        dataclass_type = hint if isinstance(hint, type) else get_origin(hint)
        if isinstance(dataclass_type, type) and dataclasses.is_dataclass(dataclass_type):
            return self._dataclass(hint, dataclass_type)
        return self._container(hint)

    def _container(self, hint: object) -> Converter:
        origin = get_origin(hint) or hint
        args = get_args(hint)
        name = hint_name(hint)
        if origin is list:
            return SequenceConverter(name, self._item(args), (list,), list)
        if origin is Sequence:
            return SequenceConverter(name, self._item(args), (list, tuple), tuple)
        if origin is tuple:
            # Dex reads tuple[T] as "a tuple of T" (any length); so does dexviz, for compatibility.
            if len(args) == 1 or (len(args) == 2 and args[1] is Ellipsis) or hint is tuple:
                return SequenceConverter(name, self._item(args), (tuple,), tuple)
            return FixedTupleConverter(name, tuple(self._find(arg) for arg in args))
        if origin is dict or origin is Mapping:
            keys = self._keys(args[0] if args else Any, name)
            return DictConverter(name, keys, self._item(args[1:]))
        if origin is Union or origin is types.UnionType:
            raise TypeError(
                f"no codec for the union {name}: only X | None is automatic; {_NO_CODEC}"
            )
        if isinstance(hint, (str, ForwardRef)):
            raise TypeError(
                f"the type hint {name!r} is still a string; resolve annotations with "
                "typing.get_type_hints() before asking for a codec"
            )
        raise TypeError(f"no codec for {name}; {_NO_CODEC}")

    def _item(self, args: tuple[object, ...]) -> Converter:
        return self._find(args[0]) if args else self.dynamic

    def _keys(self, hint: object, name: str) -> object:
        key_hint = strip_hint(hint)
        if key_hint is str:
            return StrKeys()
        if key_hint is int:
            return IntKeys()
        if is_dynamic(key_hint):
            return AnyKeys()
        if isinstance(key_hint, type) and issubclass(key_hint, Enum):
            converter = self._find(key_hint)
            assert isinstance(converter, EnumConverter)
            return EnumKeys(converter)
        raise TypeError(f"no codec for {name}: dict keys must be str, int or an Enum")

    def _dataclass(self, hint: object, cls: type) -> Converter:
        converter = DataclassConverter(cls, hint_name(hint))
        if hashable(hint):
            # Registered before its fields so that a recursive dataclass finds itself.
            self._pending[hint] = converter
        converter.set_fields(
            tuple(
                (field.name, self._field(cls, field.name, field_hint), _required(field))
                for field, field_hint in _field_hints(hint, cls)
            )
        )
        return converter

    def _field(self, cls: type, name: str, hint: object) -> Converter:
        try:
            return self._find(hint)
        except TypeError as error:
            raise TypeError(f"field {name!r} of {cls.__qualname__}: {error}") from None


def hashable(hint: object) -> bool:
    """Tell whether a type hint can be a cache key."""
    try:
        hash(hint)
    except TypeError:
        return False
    return True


def _required(field: dataclasses.Field[Any]) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


def _field_hints(hint: object, cls: type) -> list[tuple[dataclasses.Field[Any], object]]:
    try:
        hints = get_type_hints(cls)
    except Exception as error:  # noqa: BLE001 - NameError, or anything a bad annotation raises
        raise TypeError(
            f"cannot read the field types of {cls.__qualname__} ({type(error).__name__}: "
            f"{error}); define the types its annotations name at module level"
        ) from None
    parameters = getattr(cls, "__parameters__", ())
    bound = dict(zip(parameters, get_args(hint), strict=False))
    return [
        (field, _substitute(hints[field.name], bound))
        for field in dataclasses.fields(cls)
        if field.init
    ]


def _substitute(hint: object, bound: dict[Any, object]) -> object:
    """Replace type variables with their bound arguments (``Any`` when unbound)."""
    if isinstance(hint, TypeVar):
        return bound.get(hint, Any)
    parameters = getattr(hint, "__parameters__", ())
    if parameters and get_origin(hint) is not None:
        return hint[tuple(bound.get(parameter, Any) for parameter in parameters)]  # type: ignore[index]
    return hint
