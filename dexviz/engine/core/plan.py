"""Wait evaluation: which candidate of a Wait is ready and which messages it takes (R32-R45)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dexviz.engine.core.state import Message
from dexviz.sdk.condition import ChannelCondition, Condition, SubFlowCondition, TimerCondition
from dexviz.sdk.wait import Wait, WaitKind


@dataclass(frozen=True, slots=True)
class Take:
    """How many messages one channel condition consumes from the front of its queue."""

    condition_index: int
    channel: str
    count: int


@dataclass(frozen=True, slots=True)
class Satisfaction:
    """A ready candidate: the condition indexes it completes and the messages it takes."""

    conditions: tuple[int, ...]
    takes: tuple[Take, ...]


_EMPTY: deque[Message] = deque()


def candidates(wait: Wait) -> list[tuple[int, ...]]:
    """The candidates in the order Dex tries them (R38, R39)."""
    index = {id(c): i for i, c in enumerate(wait.conditions)}
    if wait.kind is WaitKind.ALL_OF:
        return [tuple(range(len(wait.conditions)))]
    if wait.kind is WaitKind.ANY_OF:
        ordered = sorted(
            range(len(wait.conditions)), key=lambda i: (_kind_rank(wait.conditions[i]), i)
        )
        return [(i,) for i in ordered]
    if wait.kind is WaitKind.ANY_COMBINATION_OF:
        return [tuple(index[id(c)] for c in combo.conditions) for combo in wait.combinations]
    return [()]


def _kind_rank(condition: Condition) -> int:
    if isinstance(condition, TimerCondition):
        return 0
    if isinstance(condition, ChannelCondition):
        return 1
    return 2


def evaluate(
    wait: Wait,
    queues: Mapping[str, deque[Message]],
    done: Sequence[bool],
    order: list[tuple[int, ...]] | None = None,
) -> Satisfaction | None:
    """Return the first ready candidate, or None.

    Args:
        wait: the execution's Wait.
        queues: the Flow's queues by physical Channel name.
        done: per condition index, whether a Timer fired/was skipped or a SubFlow closed.
        order: precomputed ``candidates(wait)``.
    """
    for candidate in order if order is not None else candidates(wait):
        takes = _check(wait.conditions, candidate, queues, done)
        if takes is not None:
            return Satisfaction(candidate, takes)
    return None


def _check(
    conditions: tuple[Condition, ...],
    candidate: tuple[int, ...],
    queues: Mapping[str, deque[Message]],
    done: Sequence[bool],
) -> tuple[Take, ...] | None:
    by_channel: dict[str, list[int]] = {}
    for i in candidate:
        condition = conditions[i]
        if isinstance(condition, ChannelCondition):
            by_channel.setdefault(condition.physical_name, []).append(i)
        elif isinstance(condition, (TimerCondition, SubFlowCondition)) and not done[i]:
            return None
    takes: list[Take] = []
    for channel, members in by_channel.items():
        counts = _allocate(conditions, members, len(queues.get(channel, _EMPTY)))
        if counts is None:
            return None
        takes.extend(Take(i, channel, n) for i, n in zip(members, counts, strict=True))
    return tuple(takes)


def _allocate(
    conditions: tuple[Condition, ...], members: list[int], available: int
) -> list[int] | None:
    """Two passes over one channel's conditions: minimums first, then up to each maximum (R40)."""
    counts: list[int] = []
    for i in members:
        condition = conditions[i]
        assert isinstance(condition, ChannelCondition)
        counts.append(condition.minimum)
    left = available - sum(counts)
    if left < 0:
        return None
    for position, i in enumerate(members):
        condition = conditions[i]
        assert isinstance(condition, ChannelCondition)
        maximum = condition.maximum
        extra = left if maximum is None else min(left, maximum - counts[position])
        counts[position] += extra
        left -= extra
    return counts
