"""current_time_millis: the running handler's engine clock, or the wall clock outside one."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextvars import ContextVar

handler_clock: ContextVar[Callable[[], int] | None] = ContextVar(
    "dexviz_handler_clock", default=None
)
"""Set by the engine while a handler runs: returns engine time in milliseconds."""


def current_time_millis() -> int:
    """Return the engine's time in ms inside a handler (virtual in simulation), else wall time."""
    clock = handler_clock.get()
    if clock is not None:
        return clock()
    return time.time_ns() // 1_000_000
