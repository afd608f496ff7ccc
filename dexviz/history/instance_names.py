"""Map instance names as a user wrote them: ``map-name/key`` with the key decoded from its escape.

A history records the *physical* name of an AttributeMap or ChannelMap instance, where the key
is percent-encoded (R49): key ``special / key`` of ``data-map`` is stored as
``data-map/special%20%2F%20key``. Every view shows the key as given instead,
``data-map/special / key``. A Definition name never contains ``/``, so the first ``/`` of a
physical name always ends the map name, and a singleton's name comes back unchanged. The raw
payloads a view prints are the record itself and keep the physical name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["condition_label", "decoded_key", "shown_name"]


def shown_name(physical: str) -> str:
    """The name a view shows for a physical Attribute or Channel name (the key unescaped).

    Examples:
        >>> shown_name("data-map/special%20%2F%20key")
        'data-map/special / key'
        >>> shown_name("contractEditToken")
        'contractEditToken'
    """
    name, slash, key = physical.partition("/")
    if not slash or "%" not in key:
        return physical
    return f"{name}/{decoded_key(key)}"


def decoded_key(escaped: str) -> str:
    """A map instance's key as given, from the escaped form a physical name stores it in.

    The inverse of the escape ``sdk.channel`` applies when it names an instance; the engine
    (recovery, time travel, a context listing a map's keys) and every view decode with it.

    Examples:
        >>> decoded_key("special%20%2F%20key")
        'special / key'
    """
    if "%" not in escaped:
        return escaped
    from urllib.parse import unquote  # only escaped keys pay for the import

    return unquote(escaped)


def condition_label(condition: Mapping[str, Any]) -> str:
    """A recorded wait condition's label (``<physical name>.for 1``), its Channel as shown.

    A condition without a label is named by its kind.

    Examples:
        >>> condition_label({"channel": "inbox/a%20b%2Fc", "label": "inbox/a%20b%2Fc.for 1"})
        'inbox/a b/c.for 1'
        >>> condition_label({"kind": "timer"})
        'timer'
    """
    label = str(condition.get("label") or condition.get("kind"))
    physical = condition.get("channel")
    if isinstance(physical, str) and physical and label.startswith(physical):
        return shown_name(physical) + label[len(physical) :]
    return label
