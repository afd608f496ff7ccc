"""Read the JSON shapes a Dex user has at hand into one flat list of Dex events.

The shapes: a Dex Web history page ``{"events", "nextPageToken", "nextInternalEventId"}``, a
list of such pages, a list of Dex Web events ``{eventId, eventTime, type, payload}``, dexcli's
``flow history --all`` object (or its list of ``{type, payload}`` events, or ``flow inspect
--all-history``'s ``{"history": ...}``), each as a file path or an already-parsed value.
Malformed input raises :class:`HistoryFormatError` naming the source and the event index.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dexviz.history.dex_values import DexValueError, int64, timestamp_ns
from dexviz.history.jsonl import HistoryFormatError

__all__ = ["DEX_TYPES", "DexDocument", "DexRawEvent", "looks_like_dex", "read_dex"]

DEX_TYPES = (
    "FlowStartedOrContinued", "FlowClosed", "StepWaitForCompleted", "StepWaitForFailed",
    "StepExecuteCompleted", "StepExecuteFailed", "RpcExecutionCompleted",
    "ChannelExternalPublish", "StepWaitForPending", "StepExecutePending", "TimeTravelFork",
)  # fmt: skip
"""The event types dexviz maps (payload cases 20-30 of ``FlowHistoryEvent``)."""

_PAGE_KEYS = frozenset({"events", "nextPageToken", "nextInternalEventId"})
_CLI_KEYS = frozenset({"flowId", "runId", "warnings"})
_EVENT_KEYS = frozenset({"eventId", "eventTime", "type", "payload", "runAttempt", "flowId",
                         "runId"})


@dataclass(frozen=True)
class DexRawEvent:
    """One Dex event as read, before it is mapped onto dexviz's History.

    Attributes:
        index: 0-based position among all events read (what error messages name).
        page: 0-based page it came from, when the input was pages.
        event_id: the backend event id (None when the input left it out).
        time_ns: ``eventTime`` in ns (None when the input has none).
        type: the type name (``StepExecuteCompleted``, or whatever a newer Dex sent).
        payload: the payload message as protojson (None for an unknown type without one).
        natural: True when Values are dexcli's natural JSON, False for raw protojson Values.
    """

    index: int
    page: int | None
    event_id: int | None
    time_ns: int | None
    type: str
    payload: Mapping[str, Any] | None
    natural: bool


@dataclass(frozen=True)
class DexDocument:
    """Everything read from one source: its events and what the source itself said."""

    source: str
    events: tuple[DexRawEvent, ...]
    flow_id: str | None
    run_id: str | None
    warnings: tuple[str, ...]
    complete: bool


def looks_like_dex(value: Any) -> bool:
    """Whether a parsed JSON value has the shape of a Dex history (page, pages, events)."""
    if isinstance(value, Mapping):
        if isinstance(value.get("history"), Mapping):
            return looks_like_dex(value["history"])
        events = value.get("events")
        if isinstance(events, list):
            first = events[0] if events else None
            return bool(set(value) & (_PAGE_KEYS | _CLI_KEYS) - {"events"}) or (
                isinstance(first, Mapping) and _is_event(first))
        return _is_event(value)
    if isinstance(value, list):
        return bool(value) and isinstance(value[0], Mapping) and looks_like_dex(value[0])
    return False


def _is_event(value: Mapping[str, Any]) -> bool:
    return "type" in value and "payload" in value and isinstance(value.get("type"), str)


def read_dex(source: Any, *, name: str | None = None) -> DexDocument:
    """Read ``source`` (a path or a parsed value) into a DexDocument; nothing half-loads.

    ``name`` is what error messages call the source (default: the path, or a generic name).

    Raises:
        HistoryFormatError: the input is not valid JSON or not one of the Dex shapes; the
            message names the source and, for a bad event, its index.
        OSError: a path that cannot be read.
    """
    given, value = _parse(source)
    name = name or given
    try:
        return _Reader(name).document(value)
    except HistoryFormatError as error:
        raise HistoryFormatError(f"{name}: {error}") from None


def _parse(source: Any) -> tuple[str, Any]:
    if isinstance(source, (str, Path)):
        path = Path(source)
        data = path.read_bytes()
        try:
            return str(path), json.loads(data.decode("utf-8"))
        except UnicodeDecodeError as error:
            raise HistoryFormatError(f"{path}: not UTF-8 text ({error})") from None
        except json.JSONDecodeError as error:
            near = error.doc[:error.pos].count('"type"') - 1
            where = f", in event {near}" if near >= 0 else ""
            raise HistoryFormatError(f"{path}: not JSON, cut off or broken at line {error.lineno} "
                                     f"column {error.colno}{where} ({error.msg})") from None
    return "<Dex history value>", source


class _Reader:
    """Walks one parsed value; keeps the event count so errors name a global index."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.events: list[DexRawEvent] = []
        self.flow_id: str | None = None
        self.run_id: str | None = None
        self.warnings: list[str] = []
        self.complete = True

    def document(self, value: Any) -> DexDocument:
        if isinstance(value, Mapping) and isinstance(value.get("history"), Mapping):
            value = value["history"]
        if isinstance(value, Mapping) and "events" in value:
            self._page(value, None)
        elif isinstance(value, list) and value and all(
                isinstance(v, Mapping) and "events" in v for v in value):
            for number, page in enumerate(value):
                self._page(page, number)
            self.complete = not value[-1].get("nextPageToken")
        elif isinstance(value, list):
            self._events(value, None)
        else:
            raise HistoryFormatError(
                "not a Dex history: expected a Dex Web page {events, nextPageToken, ...}, a "
                "list of pages, a list of events {eventId, eventTime, type, payload}, or "
                f"dexcli's flow history --all output; got {type(value).__name__}")
        return DexDocument(self.name, tuple(self.events), self.flow_id, self.run_id,
                           tuple(self.warnings), self.complete)

    def _page(self, page: Any, number: int | None) -> None:
        where = "the page" if number is None else f"page {number}"
        if not isinstance(page, Mapping) or not isinstance(page.get("events"), list):
            raise HistoryFormatError(f"{where} has no 'events' list")
        token = page.get("nextPageToken", "")
        if not isinstance(token, str):
            raise HistoryFormatError(f"{where}: nextPageToken must be a string, not {token!r}")
        self.complete = not token
        for key in ("flowId", "runId"):
            if key in page and not isinstance(page[key], str):
                raise HistoryFormatError(f"{where}: {key} must be a string")
        self.flow_id = page.get("flowId", self.flow_id)
        self.run_id = page.get("runId", self.run_id)
        warnings = page.get("warnings", [])
        if isinstance(warnings, list):
            self.warnings.extend(str(w) for w in warnings)
        self._events(page["events"], number)

    def _events(self, events: Sequence[Any], page: int | None) -> None:
        for raw in events:
            index = len(self.events)
            try:
                self.events.append(_event(raw, index, page))
            except DexValueError as error:
                where = f"event {index}" + (f" (page {page})" if page is not None else "")
                raise HistoryFormatError(f"{where}: {error}") from None


def _event(raw: Any, index: int, page: int | None) -> DexRawEvent:
    if not isinstance(raw, Mapping):
        raise DexValueError(f"an event must be an object, not {type(raw).__name__}")
    kind = raw.get("type")
    if not isinstance(kind, str) or not kind:
        raise DexValueError(f"'type' must be a non-empty string, not {kind!r}")
    raw_id = raw.get("eventId")
    natural = isinstance(raw_id, str) or raw_id is None
    event_id = None if raw_id is None else int64(raw_id, "eventId")
    raw_time = raw.get("eventTime")
    time_ns = None if raw_time is None else timestamp_ns(raw_time, "eventTime")
    payload = raw.get("payload")
    if kind == "Unspecified":
        kind, payload = _recover(raw)
    if payload is not None and not isinstance(payload, Mapping):
        raise DexValueError(f"the payload of a {kind} event must be an object, not "
                            f"{type(payload).__name__}")
    if payload is None and kind in DEX_TYPES:
        payload = {}
    return DexRawEvent(index, page, event_id, time_ns, kind, payload, natural)


def _recover(raw: Mapping[str, Any]) -> tuple[str, Any]:
    """Dexcli's ``Unspecified`` event: the payload case's own key is left in the event."""
    for key, value in raw.items():
        if key not in _EVENT_KEYS and isinstance(value, Mapping):
            return key[:1].upper() + key[1:], value
    return "Unspecified", None
