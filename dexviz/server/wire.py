"""A small protobuf (proto3) binary codec driven by :mod:`dexviz.server.schema`.

``decode`` turns a message's bytes into the JSON Dex Web gives (lowerCamelCase names, enums
as numbers, int64 as decimal strings, bytes as base64, Timestamps and Durations as strings), so
a page read over gRPC goes through the same reader as a JSON file. ``encode`` does the reverse
(requests, and the recorded pages a test server answers with). Unknown fields are skipped, as
protobuf does; ``decode`` lists their numbers when asked.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from dexviz.history.dex_values import duration_ns, int64, timestamp_ns
from dexviz.server.schema import HISTORY_PAYLOADS, MESSAGES

__all__ = ["WireError", "decode", "encode", "history_event", "put_varint", "raw_fields"]

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5
_NUMERIC = frozenset({"int64", "int32", "enum", "bool", "double", "float"})


class WireError(ValueError):
    """Bytes that are not a valid message of the expected type."""


# ---------------------------------------------------------------------------- decoding
def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise WireError("truncated or overlong varint")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        shift += 7
        if not byte & 0x80:
            return value, at


def raw_fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, raw value) for every field, in order."""
    found, at = [], 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        raw: Any
        if wire == _VARINT:
            raw, at = _varint(data, at)
        elif wire == _FIXED64:
            raw, at = data[at:at + 8], at + 8
        elif wire == _FIXED32:
            raw, at = data[at:at + 4], at + 4
        elif wire == _LENGTH:
            size, at = _varint(data, at)
            raw, at = data[at:at + size], at + size
        else:
            raise WireError(f"unsupported wire type {wire} (field {number})")
        if at > len(data):
            raise WireError(f"truncated field {number}")
        found.append((number, wire, raw))
    return found


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def _scalar(kind: str, wire: int, raw: Any) -> Any:
    if kind == "string":
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise WireError("a string field is not UTF-8") from None
    if kind == "bytes":
        return base64.b64encode(bytes(raw)).decode("ascii")
    if kind == "int64":
        return str(_signed(raw, 64))
    if kind in ("int32", "enum"):
        return _signed(raw & (1 << 64) - 1, 64)
    if kind == "bool":
        return bool(raw)
    if kind == "double" and wire == _FIXED64:
        return struct.unpack("<d", raw)[0]
    if kind == "float" and wire == _FIXED32:
        return struct.unpack("<f", raw)[0]
    raise WireError(f"a {kind} field has wire type {wire}")


def _time_text(fields: Mapping[str, Any], duration: bool) -> str:
    seconds, nanos = int(fields.get("seconds", "0")), int(fields.get("nanos", 0))
    fraction = f"{nanos:09d}"
    while fraction.endswith("000") and fraction:
        fraction = fraction[:-3]
    tail = f".{fraction}" if fraction else ""
    if duration:
        return f"{seconds}{tail}s"
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + tail + "Z"


def _packed(kind: str, raw: bytes) -> list[Any]:
    if kind in ("double", "float"):
        size, code = (8, "<d") if kind == "double" else (4, "<f")
        return [struct.unpack(code, raw[i:i + size])[0] for i in range(0, len(raw), size)]
    values, at = [], 0
    while at < len(raw):
        value, at = _varint(raw, at)
        values.append(_scalar(kind, _VARINT, value))
    return values


def decode(data: bytes, message: str, unknown: list[int] | None = None) -> dict[str, Any]:
    """Decode ``data`` as ``message`` into Dex Web's protojson conventions.

    Raises:
        WireError: the bytes are not a valid encoding.
    """
    schema = MESSAGES[message]
    out: dict[str, Any] = {}
    for number, wire, raw in raw_fields(data):
        field = schema.get(number)
        if field is None:
            if unknown is not None:
                unknown.append(number)
            continue
        _decode_field(out, message, field, wire, raw)
    return out


def _decode_field(out: dict[str, Any], message: str, field: tuple[str, str, str], wire: int,
                  raw: Any) -> None:
    name, kind, label = field
    if (label == "map" or kind in MESSAGES) and wire != _LENGTH:
        raise WireError(f"{message}.{name} is a message but has wire type {wire}")
    if label == "map":
        out.setdefault(name, {}).update([_map_entry(raw, kind)])
        return
    if label == "*" and wire == _LENGTH and kind in _NUMERIC:
        out.setdefault(name, []).extend(_packed(kind, raw))
        return
    value: Any
    if kind in MESSAGES:
        value = decode(raw, kind)
        if kind in ("Timestamp", "Duration"):
            value = _time_text(value, kind == "Duration")
    else:
        value = _scalar(kind, wire, raw)
    if label == "*":
        out.setdefault(name, []).append(value)
    else:
        out[name] = value


def _map_entry(raw: bytes, kind: str) -> tuple[str, Any]:
    key, value = "", {}
    for number, wire, item in raw_fields(raw):
        if number == 1:
            key = _scalar("string", wire, item)
        elif number == 2:
            value = decode(item, kind)
    return key, value


def history_event(data: bytes) -> dict[str, Any]:
    """A ``FlowHistoryEvent``'s bytes as a Dex Web event ``{eventId, eventTime, type, payload}``.

    A payload case this schema does not know keeps its field number in the type
    (``"Unknown(field 40)"``) with no payload, so the reader keeps it as an unknown event.
    """
    unknown: list[int] = []
    event = decode(data, "FlowHistoryEvent", unknown)
    found: dict[str, Any] = {"eventId": int(event.get("eventId", "0")),
                             "eventTime": event.get("eventTime")}
    if "runAttempt" in event:
        found["runAttempt"] = event["runAttempt"]
    for name, type_name in HISTORY_PAYLOADS.values():
        if name in event:
            found.update(type=type_name, payload=event[name])
            return found
    cases = [n for n in unknown if n >= 20]
    found.update(type=f"Unknown(field {cases[0]})" if cases else "Unspecified", payload=None)
    return found


# ---------------------------------------------------------------------------- encoding
def put_varint(value: int) -> bytes:
    """``value`` as a protobuf varint (negative numbers as 64-bit two's complement)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(number: int, wire: int) -> bytes:
    return put_varint(number << 3 | wire)


def _encode_one(number: int, kind: str, value: Any) -> bytes:
    if kind in ("Timestamp", "Duration"):
        ns = duration_ns(value, kind) if kind == "Duration" else timestamp_ns(value, kind)
        seconds, nanos = divmod(ns, 1_000_000_000)
        value = {"seconds": str(seconds), "nanos": nanos}
    if kind in MESSAGES:
        body = encode(value, kind)
        return _key(number, _LENGTH) + put_varint(len(body)) + body
    if kind in ("string", "bytes"):
        body = value.encode("utf-8") if kind == "string" else base64.b64decode(value)
        return _key(number, _LENGTH) + put_varint(len(body)) + body
    if kind == "double":
        return _key(number, _FIXED64) + struct.pack("<d", float(value))
    if kind == "float":
        return _key(number, _FIXED32) + struct.pack("<f", float(value))
    if kind == "bool":
        return _key(number, _VARINT) + put_varint(int(bool(value)))
    return _key(number, _VARINT) + put_varint(int64(value, kind) if value is not None else 0)


def encode(value: Mapping[str, Any], message: str) -> bytes:
    """Encode a protojson-shaped mapping as ``message`` (defaults left out, as proto3 does)."""
    out = bytearray()
    for number, (name, kind, label) in sorted(MESSAGES[message].items()):
        if name in value:
            out += _encode_field(number, kind, label, value[name], message)
    return bytes(out)


def _encode_field(number: int, kind: str, label: str, item: Any, message: str) -> bytes:
    if label == "map":
        out = bytearray()
        for key, entry in sorted(item.items()):
            body = _encode_one(1, "string", key) + _encode_one(2, kind, entry)
            out += _key(number, _LENGTH) + put_varint(len(body)) + body
        return bytes(out)
    if label == "*":
        return b"".join(_encode_one(number, kind, element) for element in item)
    if label == "?" or message == "Value":
        # Explicit presence (and a Value's oneof case) is sent even at its default.
        return _encode_one(number, kind, 0 if item is None else item)
    if kind in MESSAGES:
        return b"" if item is None else _encode_one(number, kind, item)
    return b"" if item in (None, "", 0, False, "0") else _encode_one(number, kind, item)
