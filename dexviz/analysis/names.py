"""Names a user types (Step types, event kinds, Channels), checked with a "did you mean" hint.

A typo in a breakpoint, a ``jump`` filter or a token Channel would otherwise match nothing and
pass silently; these checks compare the name with what the Flow's definition or its history
knows and suggest the closest (``difflib``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from dexviz.history import EventKind, History

__all__ = [
    "EVENT_KINDS",
    "check_event_kind",
    "check_name",
    "did_you_mean",
    "spec_channels",
    "step_types",
]

EVENT_KINDS: tuple[str, ...] = tuple(kind.value for kind in EventKind)
"""Every event kind's name, as histories write it."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` for the closest known name, or an empty string."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=0.6)
    if not close:
        close = [k for k in sorted(set(known)) if k.lower() == name.lower()]
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_name(name: str, known: Iterable[str], what: str, owner: str) -> None:
    """Raise ValueError unless ``name`` is in ``known``; the message suggests and lists.

    Args:
        name: The name the user gave.
        known: The names that exist.
        what: What the name is (``"Step type"``, ``"Channel"``).
        owner: Whose names they are (``"Flow 'ContractEditFlow'"``).
    """
    names = sorted(set(known))
    if name in names:
        return
    listing = ", ".join(names) if names else "none"
    raise ValueError(f"{owner} has no {what} {name!r}{did_you_mean(name, names)}; "
                     f"its {what}s: {listing}")


def check_event_kind(kind: str) -> None:
    """Raise ValueError unless ``kind`` names an event kind (with a suggestion)."""
    if kind not in EVENT_KINDS:
        raise ValueError(f"no event kind {kind!r}{did_you_mean(kind, EVENT_KINDS)}; "
                         "the kinds are dexviz.EventKind's values")


def step_types(history: History) -> set[str]:
    """The Step types the history's Flow declares or that executed in it."""
    found = {str(s.get("step_type")) for s in _entries(history.flow_spec, "steps")}
    found |= {e.step_type for e in history if e.step_type}
    return found


def spec_channels(spec: Mapping[str, Any]) -> list[str] | None:
    """The Channel names the spec declares (ChannelMaps as ``name/…``); None if unrecorded."""
    if "channels" not in spec:
        return None
    return [str(c.get("name")) + ("/…" if c.get("kind") == "channel_map" else "")
            for c in _entries(spec, "channels")]


def _entries(spec: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = spec.get(key)
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []
