"""StepSettings: what the fast path works out once per registered Step.

The bound handlers, whether each method can take the fast path (no locks; a coroutine
``execute`` as a Task, a ``wait_for`` only when synchronous), the input type
whose checked copy is the value itself, the first method, and the go_to targets of the Step's
Flow by class: everything :mod:`dexviz.engine.attempt.fast` would otherwise look up per transition.
"""

from __future__ import annotations

from typing import Any

from dexviz.engine.core.attempt_deadline import AttemptDeadline
from dexviz.engine.core.state import DEFAULT_OPTIONS
from dexviz.sdk.definitions import FlowDefinition, StepDefinition
from dexviz.sdk.options import StepOptions

INT64 = (-(2**63), 2**63 - 1)
"""The range of an int that the int codec copies as it is."""
SAME_COPY = frozenset({str, bool, int})
"""Types whose checked copy is the value itself (ints within int64; floats are checked)."""


class StepSettings:
    """What the fast path needs of one registered Step, worked out on its first execution."""

    __slots__ = ("step", "options", "execute", "wait_for", "fast_execute", "fast_wait_for",
                 "input_type", "step_type", "first_method", "has_wait_for",
                 "targets", "async_execute", "first_deadline")  # fmt: skip

    def __init__(self, step: StepDefinition) -> None:
        self.step = step
        self.options: StepOptions = step.options or DEFAULT_OPTIONS
        self.execute = step.step.execute
        self.wait_for = step.step.wait_for if step.has_wait_for else None
        self.input_type = step.input_type if step.input_type in SAME_COPY else None
        self.step_type = step.step_type
        self.has_wait_for = step.has_wait_for
        self.first_method = "wait_for" if step.has_wait_for else "execute"
        # The go_to targets of the Flow this Step belongs to (see FastPath._targets_of).
        self.targets: tuple[FlowDefinition, dict[Any, StepSettings]] | None = None
        options = self.options
        # Sync handlers in simulation run inline: no task, so no method timeout or heartbeat
        # window is armed; locks need the general path's queueing.
        self.fast_execute = not options.execute_lock_attributes
        # A coroutine execute still runs as a Task (fast_async); only its start and its
        # commit are the fast path's.
        self.async_execute = step.execute_is_async
        # The deadline of a coroutine execute's first attempt, which starts with its method:
        # the options alone decide it (set by fast_async at the first such attempt).
        self.first_deadline: AttemptDeadline | None = None
        self.fast_wait_for = (
            step.has_wait_for
            and not step.wait_for_is_async
            and not options.wait_for_lock_attributes
        )


def same_copy(value: Any, input_type: Any) -> bool:
    """Whether ``roundtrip(input_type, value)`` would return ``value`` itself, unchanged."""
    kind = type(value)
    if kind is not input_type:
        return False
    return kind is not int or INT64[0] <= value <= INT64[1]
