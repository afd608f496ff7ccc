"""Which execution a unit of work belongs to, for units that commit no event.

A queued first attempt is a ``QueuedStart`` naming its execution; every other engine unit is a
record (:mod:`dexviz.engine.core.units`) naming its run and execution. Only asyncio units (a
handler's coroutine resuming after ``await asyncio.sleep``) are not: the virtual loop queues
them as :class:`~dexviz.engine.core.loop.LoopCallback` records of an ``asyncio.Handle`` whose
callback is a Task's step, or a future a Task waits on. The Task maps back to its execution.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from dexviz.engine.attempt.invoke import QueuedStart
from dexviz.engine.core.loop import LoopCallback
from dexviz.engine.core.units import Unit


def tasks_of(handle: asyncio.Handle) -> Iterator[asyncio.Task[Any]]:
    """The Tasks an asyncio callback resumes: its own Task's step, or the waiters of a future."""
    callback = getattr(handle, "_callback", None)
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        yield owner
    elif callback is not None and not inspect.isfunction(callback):
        # The C Task's step wrapper exposes its Task only as a reference it holds.
        yield from (r for r in gc.get_referents(callback) if isinstance(r, asyncio.Task))
    for argument in getattr(handle, "_args", None) or ():
        if isinstance(argument, asyncio.Task):
            yield argument
        elif isinstance(argument, asyncio.Future):
            for waiter, _ in getattr(argument, "_callbacks", None) or ():
                task = getattr(waiter, "__self__", None)
                if isinstance(task, asyncio.Task):
                    yield task


def owner_of(unit: Callable[[], None], tasks: Mapping[asyncio.Task[Any], str]) -> str | None:
    """The execution id ``unit`` acts for, or None when it cannot be told."""
    if isinstance(unit, QueuedStart):
        return unit.execution.execution_id
    if isinstance(unit, Unit):
        ex = unit.execution
        return ex.execution_id if ex is not None else None
    if isinstance(unit, LoopCallback):
        for task in tasks_of(unit.handle):
            found = tasks.get(task)
            if found is not None:
                return found
    return None
