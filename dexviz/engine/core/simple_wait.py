"""SimpleWait: a Wait on one Channel condition, shared per shape and checked in O(1).

Most WaitFors return ``Wait.until(CHANNEL.for_one())`` or another single Channel condition.
The engine keeps the Wait for as long as the execution waits, and checks it on every message
the Channel gets, so for this shape it keeps one shared copy per distinct condition (a parked
Flow then holds a reference, not ~200 bytes of its own) with the queue name and the bounds
worked out once. Everything else about a Wait (its history description, its kind) is the
Wait's own: a SimpleWait is a Wait.
"""

from __future__ import annotations

from typing import Any

from dexviz.sdk.condition import ChannelCondition
from dexviz.sdk.wait import Wait, WaitKind

_ALL_OF = WaitKind.ALL_OF
_PLAIN_KINDS = (_ALL_OF, WaitKind.ANY_OF)
MAX_SHAPES = 4096
"""How many distinct shapes one engine shares; Waits beyond that are kept as they are."""


class SimpleWait(Wait):
    """A Wait of one Channel condition, with its queue name and bounds resolved."""

    __slots__ = ("key", "minimum", "maximum")

    key: str
    minimum: int
    maximum: int | None

    def __repr__(self) -> str:
        return repr(Wait(self.kind, self.conditions, self.combinations))

    def __reduce__(self) -> tuple[Any, ...]:
        # The resolved fields are slots of this subclass, which Wait's pickling leaves out.
        return (_rebuilt, (self.kind, self.conditions, self.combinations, self.key,
                           self.minimum, self.maximum))  # fmt: skip


class SimpleWaits:
    """One engine's shared SimpleWaits, by condition shape."""

    __slots__ = ("_shapes",)

    def __init__(self) -> None:
        self._shapes: dict[tuple[Any, ...], SimpleWait] = {}

    def shared(self, wait: Wait) -> SimpleWait | None:
        """The shared SimpleWait equivalent to ``wait``, or None when it is not that shape."""
        if type(wait) is SimpleWait:
            return wait
        conditions = wait.conditions
        if len(conditions) != 1 or wait.kind not in _PLAIN_KINDS:
            return None
        condition = conditions[0]
        if type(condition) is not ChannelCondition:
            return None
        channel = condition.channel
        # The channel's id is safe in the key: the shared Wait keeps the channel alive. The
        # kind goes in as a bool: hashing an Enum member is a Python-level call.
        shape = (wait.kind is _ALL_OF, id(channel), condition.instance, condition.at_least,
                 condition.at_most, condition.condition_id)  # fmt: skip
        found = self._shapes.get(shape)
        if found is None:
            if len(self._shapes) >= MAX_SHAPES:
                return None
            try:
                key = condition.physical_name
            except Exception:  # noqa: BLE001 - the general path reports a bad instance key
                return None
            found = self._shapes[shape] = _simple(wait, condition, key)
        return found


def _rebuilt(kind: Any, conditions: Any, combinations: Any, key: str, minimum: int,
             maximum: int | None) -> SimpleWait:  # fmt: skip
    """A SimpleWait from its fields (a snapshot's copy of one)."""
    simple = SimpleWait(kind, conditions, combinations)
    object.__setattr__(simple, "key", key)
    object.__setattr__(simple, "minimum", minimum)
    object.__setattr__(simple, "maximum", maximum)
    return simple


def _simple(wait: Wait, condition: ChannelCondition, key: str) -> SimpleWait:
    simple = SimpleWait(wait.kind, wait.conditions, wait.combinations)
    # Wait is frozen: its own fields are set the way its generated __init__ sets them.
    object.__setattr__(simple, "key", key)
    object.__setattr__(simple, "minimum", condition.minimum)
    object.__setattr__(simple, "maximum", condition.maximum)
    return simple
