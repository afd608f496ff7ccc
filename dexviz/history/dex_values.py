"""Scalars of Dex's JSON histories: Values, timestamps, durations, int64 strings and enums.

Dex Web writes protojson with enum numbers and raw Values (``{"intValue": "42"}``); dexcli
writes enum names and natural Values (``42``). Every reader here accepts both spellings and
raises :class:`DexValueError` with a short reason when a field is not of its type; the caller
adds the file and the event index.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = [
    "BLOB_REFERENCE",
    "STORED_VALUE_UNAVAILABLE",
    "DexValueError",
    "duration_ns",
    "enum_name",
    "int64",
    "is_unavailable",
    "timestamp_ns",
    "value_of",
]

BLOB_REFERENCE = "__dexBlobReference"
"""Key of a Value kept in Dex's blob store: only its id travels in the history."""

STORED_VALUE_UNAVAILABLE = "__dexStoredValueUnavailable"
"""Key that marks a Value whose content the history does not hold."""

_VALUE_CASES = frozenset(
    {"stringValue", "intValue", "doubleValue", "boolValue", "nullValue", "objValue",
     "internalBlobIdForStringValue", "internalBlobIdForObjValue"}
)
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?([Zz]|[+-]\d\d:\d\d)\Z"
)
_DURATION = re.compile(r"(-?)(\d+)(?:\.(\d{1,9}))?s\Z")


class DexValueError(ValueError):
    """A field of a Dex event is not of its type (the message says which and why)."""


def int64(raw: Any, what: str) -> int:
    """A protojson int64 (a decimal string, or a JSON number as dexcli's natural values are)."""
    if isinstance(raw, bool):
        raise DexValueError(f"{what} must be an integer, not {raw!r}")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and re.fullmatch(r"-?\d{1,19}", raw):
        return int(raw)
    raise DexValueError(f"{what} must be an integer (or its decimal string), not {raw!r}")


def timestamp_ns(raw: Any, what: str) -> int:
    """An RFC 3339 timestamp (up to 9 fractional digits) as ns since the Unix epoch."""
    match = _TIMESTAMP.match(raw) if isinstance(raw, str) else None
    if match is None:
        raise DexValueError(f"{what} must be an RFC 3339 time such as "
                            f"'2026-01-02T03:04:05.12Z', not {raw!r}")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    try:
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute),
                          int(second), tzinfo=UTC)
    except ValueError as error:
        raise DexValueError(f"{what} is not a valid time ({raw!r}: {error})") from None
    offset = 0
    if zone not in ("Z", "z"):
        sign = -1 if zone[0] == "-" else 1
        offset = sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    seconds = int(moment.timestamp()) - offset
    return seconds * 1_000_000_000 + int((fraction or "").ljust(9, "0") or 0)


def duration_ns(raw: Any, what: str) -> int:
    """A protojson Duration (``"5.0346s"``) in ns."""
    match = _DURATION.match(raw) if isinstance(raw, str) else None
    if match is None:
        raise DexValueError(f"{what} must be a duration such as '5.034600s', not {raw!r}")
    sign, whole, fraction = match.groups()
    value = int(whole) * 1_000_000_000 + int((fraction or "").ljust(9, "0"))
    return -value if sign else value


def enum_name(raw: Any, names: tuple[str, ...], what: str) -> str:
    """An enum value given as its number (Dex Web) or its name (dexcli), as its name.

    ``names`` lists the enum's names by number. A number beyond the list (a newer server's
    value) is kept as ``"<ENUM_PREFIX>_<number>"`` rather than refused.
    """
    if isinstance(raw, bool):
        raise DexValueError(f"{what} must be an enum number or name, not {raw!r}")
    if isinstance(raw, int):
        if 0 <= raw < len(names):
            return names[raw]
        return f"{names[0].rsplit('_', 1)[0]}_{raw}"
    if isinstance(raw, str) and raw in names:
        return raw
    raise DexValueError(f"{what} must be one of {', '.join(names)} (or its number), not {raw!r}")


def is_unavailable(value: Any) -> bool:
    """Whether ``value`` is a Value whose content the history does not hold (a blob)."""
    return isinstance(value, Mapping) and (BLOB_REFERENCE in value
                                           or STORED_VALUE_UNAVAILABLE in value)


def value_of(raw: Any, natural: bool, what: str) -> Any:
    """A Dex Value as a JSON-ready Python value.

    ``natural`` values (dexcli) are already decoded; raw ones (Dex Web, gRPC) are decoded here:
    scalars to themselves, ``objValue`` JSON to its parsed content, other encodings kept as
    ``{"encoding", "payload"}``. A blob-backed value stays a mapping with
    :data:`STORED_VALUE_UNAVAILABLE` set, so views show it as unavailable.
    """
    if isinstance(raw, Mapping) and (BLOB_REFERENCE in raw or STORED_VALUE_UNAVAILABLE in raw):
        return _unavailable(raw, what)
    if natural:
        return raw
    if raw is None or (isinstance(raw, Mapping) and not raw):
        return None  # an unset Value (no case): protojson leaves it out or writes {}
    if not isinstance(raw, Mapping) or len(raw) != 1 or next(iter(raw)) not in _VALUE_CASES:
        raise DexValueError(f"{what} must be a Dex Value with one case "
                            f"(stringValue, intValue, objValue, ...), not {_short(raw)}")
    ((case, content),) = raw.items()
    return _case(case, content, what)


def _case(case: str, content: Any, what: str) -> Any:
    if case == "stringValue" and isinstance(content, str):
        return content
    if case == "intValue":
        return int64(content, f"{what}.intValue")
    if case == "doubleValue" and isinstance(content, (int, float, str)) and not isinstance(
            content, bool):
        return float(content)
    if case == "boolValue" and isinstance(content, bool):
        return content
    if case == "nullValue" and content in (None, 0, "NULL_VALUE"):
        return None
    if case == "objValue" and isinstance(content, Mapping):
        return _object(content, what)
    if case.startswith("internalBlobId") and isinstance(content, str):
        kind = "string" if case.endswith("StringValue") else "object"
        return {STORED_VALUE_UNAVAILABLE: True, BLOB_REFERENCE: {"id": content, "kind": kind}}
    raise DexValueError(f"{what}.{case} has the wrong type: {_short(content)}")


def _object(content: Mapping[str, Any], what: str) -> Any:
    encoding, payload = content.get("encoding", ""), content.get("payload", "")
    if not isinstance(encoding, str) or not isinstance(payload, str):
        raise DexValueError(f"{what}.objValue needs a string encoding and a base64 payload")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise DexValueError(f"{what}.objValue.payload is not base64: {payload[:40]!r}") from None
    if encoding != "json":
        return {"encoding": encoding, "payload": payload}
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise DexValueError(f"{what}.objValue has encoding 'json' but its payload is not "
                            f"JSON text ({error})") from None


def _unavailable(raw: Mapping[str, Any], what: str) -> dict[str, Any]:
    reference = raw.get(BLOB_REFERENCE)
    if reference is not None and not isinstance(reference, Mapping):
        raise DexValueError(f"{what}.{BLOB_REFERENCE} must be an object with id and kind")
    marked: dict[str, Any] = {STORED_VALUE_UNAVAILABLE: True}
    if reference is not None:
        marked[BLOB_REFERENCE] = {"id": str(reference.get("id", "")),
                                  "kind": str(reference.get("kind", ""))}
    return marked


def _short(raw: Any) -> str:
    text = json.dumps(raw, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
