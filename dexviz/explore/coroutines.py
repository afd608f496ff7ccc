"""Describing a suspended coroutine handler, so that a state with one in flight can be merged.

An engine snapshot keeps a suspended handler as the trace that rebuilds it
(:mod:`dexviz.engine.coroutine_replay`), and a restored one is re-driven to the same frame; the
stateful search also needs to tell whether two states are the same. A suspended handler is
described by its chain of awaiting frames: each frame's code, the instruction it is suspended
at, and its local variables; the awaited future at the bottom (done or not); and its attempt's
context, by what it has staged so far. The Step object, the context and the loop are named by
their role, never by address. Asyncio callbacks queued on the scheduler are described by the
executions whose Tasks they resume. Whatever cannot be described this way (a local whose repr
names an address, an awaitable of another kind) makes the state opaque: it is then never merged.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from typing import Any

from dexviz.engine.core.loop import LoopCallback
from dexviz.engine.core.runners import DeferredCall
from dexviz.explore.owners import tasks_of
from dexviz.sdk.context import Context
from dexviz.sdk.step import Step

__all__ = ["describe_callback", "describe_context", "describe_task"]

MAX_FRAMES = 32
"""Awaiting frames followed down one Task: deeper chains are opaque."""


class CoroutineOpaque(Exception):
    """A part of a coroutine that cannot be described soundly."""


def describe_context(context: Context) -> tuple[Any, ...]:
    """An attempt's context: whether it was canceled and what it has staged so far."""
    staged: Any = None
    if not getattr(context, "stages_nothing", True):
        found: Any = getattr(context, "staged")  # noqa: B009 - an engine context's, not the SDK's
        staged = (
            found.publishes, dict(found.writes), list(found.deletes), dict(found.locals),
            dict(found.events),
        )  # fmt: skip
    return ("context", getattr(context, "canceled", None), staged)


def _local(value: Any) -> Any:
    if isinstance(value, Step):
        return ("step", type(value).__qualname__)
    if isinstance(value, Context):
        return describe_context(value)
    if isinstance(value, asyncio.AbstractEventLoop):
        return ("loop",)
    if isinstance(value, asyncio.Future):
        return ("future", value.done(), value.cancelled())
    if isinstance(value, asyncio.TimerHandle):
        return ("timer", value.when(), value.cancelled())
    if isinstance(value, asyncio.Handle):
        return ("handle", value.cancelled())
    if inspect.iscoroutine(value):
        # Described in full where it is awaited (the next frame of the chain).
        frame = value.cr_frame
        return ("coroutine", value.cr_code.co_qualname, inspect.getcoroutinestate(value),
                None if frame is None else frame.f_lasti)  # fmt: skip
    if callable(value) and not isinstance(value, type):
        raise CoroutineOpaque(type(value).__qualname__)
    return value


def describe_task(task: asyncio.Task[Any]) -> tuple[Any, ...]:
    """A suspended handler's frames, from the handler down to the future it awaits."""
    frames: list[Any] = []
    awaited: Any = task.get_coro()
    for _ in range(MAX_FRAMES):
        if isinstance(awaited, DeferredCall):
            if awaited.coroutine is None:
                # Not called yet: its Task's first step calls the handler with its input.
                frames.append(("deferred", awaited.__name__, awaited.started))
                return tuple(frames)
            awaited = awaited.coroutine
            continue
        if not inspect.iscoroutine(awaited):
            if awaited is not None:
                frames.append(("awaiting", type(awaited).__qualname__))
            return tuple(frames)
        frame = awaited.cr_frame
        state = inspect.getcoroutinestate(awaited)
        if frame is None:
            frames.append((awaited.cr_code.co_qualname, state))
            return tuple(frames)
        local = tuple((k, _local(v)) for k, v in frame.f_locals.items())
        frames.append((awaited.cr_code.co_qualname, state, frame.f_lasti, local))
        awaited = awaited.cr_await
    raise CoroutineOpaque("a chain of awaits deeper than MAX_FRAMES")


def describe_callback(
    callback: LoopCallback, owners: Mapping[asyncio.Task[Any], str]
) -> tuple[Any, ...]:
    """An asyncio callback: the executions whose Tasks it resumes, and whether it is live.

    A Task that has finished is given with its outcome: the callback delivers it.
    """
    handle = callback.handle
    found = []
    for task in tasks_of(handle):
        owner = owners.get(task)
        if owner is None:
            raise CoroutineOpaque("an asyncio callback of no handler")
        found.append((owner, _outcome(task)) if task.done() else (owner,))
    if not found:
        raise CoroutineOpaque("an asyncio callback of no handler")
    return ("async", tuple(sorted(found)), handle.cancelled())


def _outcome(task: asyncio.Task[Any]) -> Any:
    if task.cancelled():
        return ("cancelled",)
    error = task.exception()
    if error is not None:
        return ("raised", type(error).__qualname__, str(error))
    return ("returned", _local(task.result()))
