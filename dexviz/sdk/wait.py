"""Wait: what a WaitFor returns — no condition, all of, any of, or any combination of groups."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from dexviz.sdk.condition import ChannelCondition, Condition, SubFlowCondition, TimerCondition


class WaitKind(enum.Enum):
    """How a Wait combines its conditions."""

    SKIP_IMMEDIATELY = "skip_immediately"
    ALL_OF = "all_of"
    ANY_OF = "any_of"
    ANY_COMBINATION_OF = "any_combination_of"


@dataclass(frozen=True)
class ConditionCombination:
    """One AND-group of an ``any_combination_of`` Wait."""

    conditions: tuple[Condition, ...]

    @staticmethod
    def of(*conditions: Condition) -> ConditionCombination:
        """Group ``conditions``; the group is satisfied when all of them are."""
        if not conditions:
            raise ValueError("ConditionCombination.of needs at least one condition")
        for condition in conditions:
            _check_condition(condition)
        return ConditionCombination(tuple(conditions))


def _check_condition(condition: object) -> None:
    if not isinstance(condition, Condition):
        raise TypeError(
            f"a Wait takes conditions (Channel.for_one(), Timer.by_duration(...), "
            f"SubFlow.run(...)), got {type(condition).__name__}"
        )


@dataclass(frozen=True, slots=True)
class Wait:
    """The result of a WaitFor: the conditions an execution waits on before its Execute."""

    kind: WaitKind
    conditions: tuple[Condition, ...] = ()
    combinations: tuple[ConditionCombination, ...] = ()

    @staticmethod
    def skip_immediately() -> Wait:
        """Wait for nothing: Execute runs right after the WaitFor commits."""
        return Wait(WaitKind.SKIP_IMMEDIATELY)

    @staticmethod
    def until(condition: Condition) -> Wait:
        """Wait for one condition (the same as ``all_of(condition)``)."""
        if isinstance(condition, Condition):
            # all_of's checks, for one condition: it is a condition, and its id is unique.
            # Built as the frozen dataclass's __init__ would, without its call.
            wait = _new(Wait)
            _set(wait, "kind", WaitKind.ALL_OF)
            _set(wait, "conditions", (condition,))
            _set(wait, "combinations", ())
            return wait
        return Wait.all_of(condition)

    @staticmethod
    def all_of(*conditions: Condition) -> Wait:
        """Wait until every condition is ready."""
        return Wait._plain(WaitKind.ALL_OF, conditions, "all_of")

    @staticmethod
    def any_of(*conditions: Condition) -> Wait:
        """Wait until one condition is ready; only the winner consumes messages (R37)."""
        return Wait._plain(WaitKind.ANY_OF, conditions, "any_of")

    @staticmethod
    def any_combination_of(*combinations: ConditionCombination) -> Wait:
        """Wait until every condition of one group is ready; all conditions need unique ids."""
        if not combinations:
            raise ValueError("Wait.any_combination_of needs at least one ConditionCombination")
        flat: list[Condition] = []
        seen: set[int] = set()
        for combination in combinations:
            if not isinstance(combination, ConditionCombination):
                raise TypeError(
                    "Wait.any_combination_of takes ConditionCombination.of(...) groups, "
                    f"got {type(combination).__name__}"
                )
            for condition in combination.conditions:
                if id(condition) not in seen:
                    seen.add(id(condition))
                    flat.append(condition)
        missing = [repr(c) for c in flat if c.condition_id is None]
        if missing:
            raise ValueError(
                "Wait.any_combination_of needs a condition_id on every condition; missing on "
                + ", ".join(missing)
            )
        _check_unique_ids(flat)
        return Wait(WaitKind.ANY_COMBINATION_OF, tuple(flat), tuple(combinations))

    @staticmethod
    def _plain(kind: WaitKind, conditions: tuple[Condition, ...], name: str) -> Wait:
        if not conditions:
            raise ValueError(f"Wait.{name} needs at least one condition")
        for condition in conditions:
            _check_condition(condition)
        _check_unique_ids(conditions)
        return Wait(kind, tuple(conditions))

    @property
    def timers(self) -> tuple[TimerCondition, ...]:
        """The Timer conditions in declaration order (the order TimerId indexes use)."""
        return tuple(c for c in self.conditions if isinstance(c, TimerCondition))

    @property
    def channel_conditions(self) -> tuple[ChannelCondition, ...]:
        """The Channel conditions in declaration order."""
        return tuple(c for c in self.conditions if isinstance(c, ChannelCondition))

    @property
    def subflows(self) -> tuple[SubFlowCondition, ...]:
        """The SubFlow conditions in declaration order (the order result indexes use)."""
        return tuple(c for c in self.conditions if isinstance(c, SubFlowCondition))


_new = object.__new__
_set = object.__setattr__


def _check_unique_ids(conditions: tuple[Condition, ...] | list[Condition]) -> None:
    ids: dict[str, Condition] = {}
    for condition in conditions:
        cid = condition.condition_id
        if cid is None:
            continue
        other = ids.setdefault(cid, condition)
        if other is not condition:
            raise ValueError(f"two conditions of one Wait share the condition_id {cid!r}")
