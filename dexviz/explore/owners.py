"""Which execution a unit of work belongs to, for units that commit no event.

A queued first attempt is a ``QueuedStart`` naming its execution. Other units are closures:
engine units capture the Execution they act for; asyncio units (a handler's
coroutine resuming after ``await asyncio.sleep``) capture an ``asyncio.Handle`` whose callback
is a Task's step, or a future a Task waits on. The Task maps back to its execution.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from dexviz.engine.invoke import QueuedStart
from dexviz.engine.state import Execution


def _cells(function: Any) -> Iterator[Any]:
    for cell in getattr(function, "__closure__", None) or ():
        try:
            yield cell.cell_contents
        except ValueError:  # an empty cell
            continue


def _tasks(handle: asyncio.Handle) -> Iterator[asyncio.Task[Any]]:
    callback = getattr(handle, "_callback", None)
    owner = getattr(callback, "__self__", None)
    if isinstance(owner, asyncio.Task):
        yield owner
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
    for value in _cells(unit):
        if isinstance(value, Execution):
            return value.execution_id
        if isinstance(value, asyncio.Handle):
            for task in _tasks(value):
                found = tasks.get(task)
                if found is not None:
                    return found
    return None
