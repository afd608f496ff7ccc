"""``to_json_ready``: the lenient, deterministic JSON form of any value, for history payloads."""

from __future__ import annotations

import base64
import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from datetime import date, datetime, time
from enum import Enum

from dexviz.sdk._codec_base import has_memory_address, qualified_name

_Ready = Callable[[object], object]


def to_json_ready(value: object) -> object:
    """Return ``value`` as JSON-native data (dict, list, str, int, float, bool, None).

    Dataclasses become dicts in field order, Enums their value, tuples lists, datetimes ISO
    strings, bytes base64 strings, sets sorted lists, dict keys strings. Anything else becomes
    ``{"__type__": "module.QualifiedName", "str": str(value)}``, without ``"str"`` when that
    text shows a memory address. NaN and infinities become the strings ``"NaN"``,
    ``"Infinity"`` and ``"-Infinity"``. The result never shares a container with ``value``.

    Args:
        value: Any value.

    Returns:
        Data that ``json.dumps(..., allow_nan=False)`` accepts; equal inputs give equal output.

    Examples:
        >>> to_json_ready((1, b"hi", {2: None}))
        [1, 'aGk=', {'2': None}]
    """
    handler = _BY_TYPE.get(type(value))
    if handler is None:
        handler = _BY_TYPE[type(value)] = _handler_for(type(value))
    return handler(value)


def _identity(value: object) -> object:
    return value


def _ready_float(value: object) -> object:
    assert isinstance(value, float)
    if math.isfinite(value):
        return value
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def _ready_list(value: object) -> object:
    assert isinstance(value, (list, tuple))
    return [to_json_ready(item) for item in value]


def _ready_dict(value: object) -> object:
    assert isinstance(value, Mapping)
    return {json_key(key): to_json_ready(item) for key, item in value.items()}


def _ready_set(value: object) -> object:
    assert isinstance(value, (set, frozenset))
    items = [to_json_ready(item) for item in value]
    # Set iteration order depends on hashing; sort by canonical text to stay deterministic.
    return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))


def _ready_bytes(value: object) -> object:
    assert isinstance(value, (bytes, bytearray))
    return base64.b64encode(bytes(value)).decode("ascii")


def _ready_isoformat(value: object) -> object:
    assert isinstance(value, (date, time))
    return value.isoformat()


def _ready_enum(value: object) -> object:
    assert isinstance(value, Enum)
    return to_json_ready(value.value)


def _handler_for(cls: type) -> _Ready:
    # Computed once per class; classes are few, values many.
    if issubclass(cls, Enum):
        return _ready_enum
    if dataclasses.is_dataclass(cls):
        return _dataclass_ready(tuple(field.name for field in dataclasses.fields(cls)))
    for base, handler in _BY_BASE:
        if issubclass(cls, base):
            return handler
    return opaque_json


_PLAIN = frozenset({str, int, bool, type(None)})
"""Types that are JSON-ready as they are (``_identity`` in ``_BY_TYPE``)."""


def _dataclass_ready(names: tuple[str, ...]) -> _Ready:
    def ready(value: object) -> object:
        # Fields are mostly plain scalars: those are taken as they are, without a call each.
        data = {}
        for name in names:
            item = getattr(value, name)
            data[name] = item if type(item) in _PLAIN else to_json_ready(item)
        return data

    return ready


def opaque_json(value: object) -> dict[str, object]:
    """Return the stable stand-in for a value JSON cannot show: its type name and ``str()``.

    The ``"str"`` entry is left out when the text shows a memory address.
    """
    ready: dict[str, object] = {"__type__": qualified_name(type(value))}
    try:
        text = str(value)
    except Exception:  # noqa: BLE001 - a broken __str__ must not break history writing
        return ready
    if not has_memory_address(text):
        ready["str"] = text
    return ready


def json_key(key: object) -> str:
    """Return the JSON object key for a dict key, as ``json.dumps`` would spell it."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (bool, int, float, Enum)):
        ready = to_json_ready(key)
        return ready if isinstance(ready, str) else json.dumps(ready)
    text = str(key)
    return qualified_name(type(key)) if has_memory_address(text) else text


_BY_TYPE: dict[type, _Ready] = {
    str: _identity,
    int: _identity,
    bool: _identity,
    type(None): _identity,
    float: _ready_float,
    list: _ready_list,
    tuple: _ready_list,
    dict: _ready_dict,
    set: _ready_set,
    frozenset: _ready_set,
    bytes: _ready_bytes,
    bytearray: _ready_bytes,
    datetime: _ready_isoformat,
    date: _ready_isoformat,
    time: _ready_isoformat,
}


def _ready_str(value: object) -> object:
    assert isinstance(value, str)
    return str.__str__(value)


def _ready_int(value: object) -> object:
    assert isinstance(value, int)
    return bool(value) if isinstance(value, bool) else int.__index__(value)


def _ready_float_subclass(value: object) -> object:
    assert isinstance(value, float)
    return _ready_float(float.__float__(value))


_BY_BASE: tuple[tuple[type | tuple[type, ...], _Ready], ...] = (
    (str, _ready_str),
    (int, _ready_int),
    (float, _ready_float_subclass),
    (Mapping, _ready_dict),
    ((list, tuple), _ready_list),
    ((set, frozenset), _ready_set),
    ((bytes, bytearray), _ready_bytes),
    ((date, time), _ready_isoformat),
)
