"""The Condition base and the Timer and Channel conditions (they need no option module).

Channels build their conditions here; the SubFlow condition, which carries SubFlowOptions, lives
in :mod:`dexviz.sdk.condition`, so the option modules can name Channels without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any


@dataclass(frozen=True, eq=False, kw_only=True, slots=True)
class Condition:
    """Base of every condition; compared by identity, as Dex counts a shared condition once."""

    condition_id: str | None = None

    def __post_init__(self) -> None:
        if self.condition_id is not None and (
            not isinstance(self.condition_id, str) or not self.condition_id
        ):
            raise ValueError(f"condition_id must be a non-empty string, got {self.condition_id!r}")


@dataclass(frozen=True, eq=False, kw_only=True, slots=True)
class TimerCondition(Condition):
    """A durable timer that completes ``duration`` after its WaitFor commits."""

    duration: timedelta

    def __repr__(self) -> str:
        return f"Timer({self.duration!s}, condition_id={self.condition_id!r})"


@dataclass(frozen=True, eq=False, kw_only=True, slots=True)
class ChannelCondition(Condition):
    """Waits for messages of one Channel (or ChannelMap instance) within [at_least, at_most]."""

    channel: Any
    instance: str | None = None
    at_least: int | None = None
    at_most: int | None = None

    def __post_init__(self) -> None:
        at_least = self.at_least
        if (
            self.condition_id is None
            and type(at_least) is int
            and at_least == self.at_most
            and at_least >= 0
        ):
            return  # for_n(count): the checks below all pass (one condition per WaitFor call)
        Condition.__post_init__(self)  # not super(): slots=True makes a new class
        if self.at_least is None and self.at_most is None:
            raise ValueError(
                f"Channel {self.channel.name!r}: a condition needs at_least or at_most"
            )
        for label, bound in (("at_least", self.at_least), ("at_most", self.at_most)):
            if bound is not None and (not isinstance(bound, int) or bound < 0):
                raise ValueError(
                    f"Channel {self.channel.name!r}: {label} must be an int >= 0, got {bound!r}"
                )
        if self.at_least is not None and self.at_most is not None and self.at_most < self.at_least:
            raise ValueError(
                f"Channel {self.channel.name!r}: at_most ({self.at_most}) < "
                f"at_least ({self.at_least})"
            )

    @property
    def physical_name(self) -> str:
        """The queue this condition reads: the Channel name, or ``name/<instance>`` for a map."""
        return str(self.channel.physical_name(self.instance))

    @property
    def minimum(self) -> int:
        """How many messages must be queued before the condition is ready (R35)."""
        return self.at_least if self.at_least is not None else 0

    @property
    def maximum(self) -> int | None:
        """How many messages the condition consumes at most; None means all available (R35)."""
        if self.at_most is not None:
            return self.at_most
        return None

    def label(self) -> str:
        """Describe the condition the way Dex's graph does, e.g. ``contractEditToken.for 1``."""
        name = self.physical_name
        if self.at_least is not None and self.at_least == self.at_most:
            return f"{name}.for {self.at_least}"
        if self.at_most is None:
            return f"{name}.at least {self.at_least}"
        if self.at_least is None:
            return f"{name}.at most {self.at_most}"
        return f"{name}.for {self.at_least}..{self.at_most}"

    def __repr__(self) -> str:
        return f"ChannelCondition({self.label()!r}, condition_id={self.condition_id!r})"


_set = object.__setattr__


def channel_condition_for(channel: Any, count: int) -> ChannelCondition:
    """``ChannelCondition(channel=channel, at_least=count, at_most=count)``, for an int >= 0.

    What ``for_one`` and ``for_n`` build on every WaitFor call, without the dataclass
    constructor's keyword handling and checks (the caller checked ``count``).
    """
    condition = object.__new__(ChannelCondition)
    _set(condition, "condition_id", None)
    _set(condition, "channel", channel)
    _set(condition, "instance", None)
    _set(condition, "at_least", count)
    _set(condition, "at_most", count)
    return condition
