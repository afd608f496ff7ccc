r"""Hostile text made safe to show: what a history's strings become on the replay page.

A history may hold any string ``History.load`` accepts, and the page shows each several times
(panels, tooltips, the failure list, the timeline). Before anything is drawn, every string of
every event is rewritten once:

- a lone surrogate (valid in JSON, not encodable in UTF-8) becomes U+FFFD;
- a bidirectional override, embedding or isolate control (``invoice\u202egpj.exe`` would show
  as ``invoiceexe.jpg``) and a directional mark are shown escaped, as ``<U+202E>``;
- a text longer than :data:`TEXT_LIMIT` characters is cut, saying how much was left out, so
  the page stays within a small multiple of the history.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dexviz.history import Event, History

__all__ = ["TEXT_LIMIT", "safe_history", "safe_text"]

TEXT_LIMIT = 2000
"""The longest text shown whole (an error message, a stack trace, a value); longer is cut."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def safe_text(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` with lone surrogates as U+FFFD, bidi controls escaped, cut at ``limit``."""
    if len(text) > limit:
        text = f"{text[:limit]}… ({len(text) - limit:,} more characters)"
    text = _SURROGATE.sub("\ufffd", text)
    return _BIDI.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def _safe(value: Any) -> Any:
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, Mapping):
        return {_safe(key): _safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_safe(item) for item in value]
    return value


def _needs(value: Any) -> bool:
    if isinstance(value, str):
        return (len(value) > TEXT_LIMIT or _SURROGATE.search(value) is not None
                or _BIDI.search(value) is not None)
    if isinstance(value, Mapping):
        return any(_needs(key) or _needs(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(_needs(item) for item in value)
    return False


_FIELDS = ("flow_id", "run_id", "execution_id", "step_type", "method")


def _safe_event(event: Event) -> Event:
    fields: dict[str, Any] = {name: safe_text(getattr(event, name)) for name in _FIELDS
              if isinstance(getattr(event, name), str) and _needs(getattr(event, name))}
    if _needs(event.payload):
        fields["payload"] = _safe(event.payload)
    return event._replace(**fields) if fields else event


def safe_history(history: History) -> History:
    """``history`` with every string made safe to show (itself when none needs it)."""
    events = [_safe_event(event) for event in history]
    if all(new is old for new, old in zip(events, history, strict=True)):
        return history
    return History(events)
